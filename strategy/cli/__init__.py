"""The `strategy` command line: compute, prove, store and play optimal strategies for Bulls and Cows
and Mastermind.

One module per family of commands, each command's parser beside its handler: build (build, improve), solve
(solve, bound), analyse, inspect (verify, stats, compare, race), export (table, html, export, graph) and play; what they
share is in options. Engine modules are imported inside the commands that need them, so that tree-only
commands (verify, stats, play) start without NumPy or numba. Every failure ends in one line on standard
error and a non-zero exit status (text from a file in it escaped); SIGTERM and SIGHUP stop the work like
Ctrl-C, removing temporary files and worker processes (see `strategy.interrupts`). A command does not start with
a standard stream closed or open the wrong way (`>&-`, `<&-`, `2>&-`): its output, its progress or its one line
would go nowhere, or into a file it opened.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import signal
import sys
import traceback
from typing import Sequence

from .. import __version__
from ..files import FileError, printable, quote
from ..interrupts import Interrupted, Terminated, signals_unwrapped, terminate_on_signals
from ..rules import GameError
from ..tree.format import TreeError
from . import play
from .options import (
    EXIT_INTERNAL,
    EXIT_USAGE,
    CommandError,
    Parser,
    UsageError,
    log,
    require_compiled_code,
    signal_status,
)

FAMILIES = ("build", "solve", "analyse", "play", "inspect", "export")  # modules of this package, in --help's order


def make_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line: every family adds its commands. For `play` alone (`command`), only play's: a player
    answers its first question before the other families' modules would have been read."""
    import importlib

    parser = Parser(prog="strategy", description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("--version", action="version", version=f"strategy {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    for name in ("play",) if command == "play" else FAMILIES:
        importlib.import_module(f".{name}", __name__).add_commands(sub)
    return parser


def skip_blas_probe() -> None:
    """numba's first compiled call imports SciPy's BLAS, if SciPy is installed, only to know whether
    np.dot may be compiled (0.3 s; under a memory limit OpenBLAS's start can spin for minutes); no compiled code
    here uses it, so this process (and a compiler started apart, see `options.warmed_up`) declares it absent."""
    if "scipy" not in sys.modules:
        sys.modules.setdefault("scipy.linalg.cython_blas", None)  # type: ignore[arg-type]  # None: "no such module"


STREAMS = ((0, "standard input", os.O_RDONLY), (1, "standard output", os.O_WRONLY), (2, "standard error", os.O_WRONLY))


def unusable_streams() -> list[int]:
    """The standard streams that are closed or open the wrong way (`>&-`, `1</dev/null`). A closed one is given
    /dev/null, so that no file opened later takes its number: with standard error closed, a tree written through
    the next file opened would receive the progress lines meant for it."""
    bad = []
    for fd, _, mode in STREAMS:
        try:
            access = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE
        except OSError:
            access = None
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
        if access not in (mode, os.O_RDWR):
            bad.append(fd)
    return bad


def main(argv: Sequence[str] | None = None) -> int:
    bad = unusable_streams()
    if bad:
        if 2 not in bad:  # else the exit status alone can say it
            names = " and ".join(name for fd, name, _ in STREAMS if fd in bad)
            os.write(
                2,
                f"strategy: error: {names} {'is' if len(bad) == 1 else 'are'} closed or open the wrong way: "
                f"give {'it' if len(bad) == 1 else 'each'} a file, or /dev/null\n".encode(),
            )
        return EXIT_USAGE
    skip_blas_probe()
    terminate_on_signals()
    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        parser = make_parser(argv[0] if argv else None)
        if not argv:  # the command alone: what it can do
            parser.print_help()
            return 0
        try:
            args = parser.parse_args(argv)
        except UsageError as e:  # a program asked for the protocol: it hears why too
            if play.protocol_requested(argv):
                play.failed_to_start(e.message)
            raise
        if args.compiled:
            require_compiled_code()
        with signals_unwrapped():
            return args.func(args)
    except Interrupted as e:  # a command that reported the partial result leaves its interruption to be told here
        return _exit_status(e.__cause__ or KeyboardInterrupt())
    except BaseException as e:
        return _exit_status(e)


def _exit_status(e: BaseException) -> int:
    """Tell how a command ended in one line; the exit status."""
    if isinstance(e, SystemExit):
        raise e
    if isinstance(e, (GameError, TreeError, FileError, CommandError)):
        _tell(f"strategy: error: {e}")
        return EXIT_USAGE
    if isinstance(e, KeyboardInterrupt):
        _tell("strategy: interrupted")
        return signal_status(e)
    if isinstance(e, Terminated):
        _tell(f"strategy: terminated by {signal.Signals(e.signum).name}")
        return signal_status(e)
    if isinstance(e, BrokenPipeError):  # a reader such as `head` left: stop quietly, silencing the final flush too
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    if isinstance(e, MemoryError):
        _tell("strategy: error: out of memory")
        return EXIT_USAGE
    if isinstance(e, OSError):
        name = f" {quote(e.filename)}" if e.filename else ""
        _tell(f"strategy: error:{name} {e.strerror or e}")
        return EXIT_USAGE
    if not isinstance(e, Exception):
        raise e
    if os.environ.get("STRATEGY_DEBUG"):  # a bug: still one line, the traceback on request
        traceback.print_exception(e)
    _tell(f"strategy: internal error: {type(e).__name__}: {str(e)[:200]} (STRATEGY_DEBUG=1 shows the traceback)")
    return EXIT_INTERNAL


def _tell(line: str) -> None:
    """The one line that says how a command ended, escaped (a message may quote a file's text); a standard error
    that cannot take it any more (its reader left) leaves the exit status to say it."""
    try:
        log(printable(line))
    except (OSError, ValueError):
        pass


def run() -> None:
    """The `strategy` command: main(), then a quick exit. Everything main opens (files, stores, worker
    processes, clusters) is closed before it returns, so the interpreter's teardown, which spends about
    0.2 s freeing numba's and LLVM's objects, is skipped (argparse's own exits still go through SystemExit)."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except BrokenPipeError:
            pass
        except (KeyboardInterrupt, Terminated):  # another signal while the output drains: the first one's status
            break
        except OSError as e:  # what was left to print did not fit (a full disk)
            _tell(
                f"strategy: error: cannot write {'the output' if stream is sys.stdout else 'messages'}: "
                f"{e.strerror or e}"
            )
            code = code or EXIT_USAGE
    os._exit(code)


if __name__ == "__main__":
    run()
