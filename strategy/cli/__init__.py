"""The `strategy` command line: compute, prove, store and play optimal strategies for Bulls and Cows
and Mastermind.

One module per family of commands, each command's parser beside its handler: build (build, improve), solve
(solve, bound), analyse, inspect (verify, stats, compare, race), export (table, html, export, graph) and play; what they
share is in options. Engine modules are imported inside the commands that need them, so that tree-only
commands (verify, stats, play) start without NumPy or numba. Every failure ends in one line on standard
error and a non-zero exit status; SIGTERM and SIGHUP stop the work like Ctrl-C, removing temporary files and
worker processes (see `strategy.interrupts`).
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import traceback
from typing import Sequence

from .. import __version__
from ..files import FileError, quote
from ..interrupts import Interrupted, Terminated, signals_unwrapped, terminate_on_signals
from ..rules import GameError
from ..tree.format import TreeError
from . import analyse, build, export, inspect, play, solve
from .options import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE, CommandError, Parser, log

FAMILIES = (build, solve, analyse, play, inspect, export)


def make_parser() -> argparse.ArgumentParser:
    """The whole command line: every family adds its commands."""
    parser = Parser(prog="strategy", description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("--version", action="version", version=f"strategy {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    for family in FAMILIES:
        family.add_commands(sub)
    return parser


def _skip_blas_probe() -> None:
    """numba's first compiled call imports SciPy's BLAS, if SciPy is installed, only to know whether
    np.dot may be compiled (0.3 s); no compiled code here uses it, so this process declares it absent."""
    if "scipy" not in sys.modules:
        sys.modules.setdefault("scipy.linalg.cython_blas", None)


def main(argv: Sequence[str] | None = None) -> int:
    _skip_blas_probe()
    terminate_on_signals()
    try:
        parser = make_parser()
        if not (sys.argv[1:] if argv is None else argv):  # the command alone: what it can do
            parser.print_help()
            return 0
        args = parser.parse_args(argv)
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
        log(f"strategy: error: {e}")
        return EXIT_USAGE
    if isinstance(e, KeyboardInterrupt):
        log("strategy: interrupted")
        return EXIT_INTERRUPTED
    if isinstance(e, Terminated):
        log(f"strategy: terminated by {signal.Signals(e.signum).name}")
        return 128 + e.signum
    if isinstance(e, BrokenPipeError):  # a reader such as `head` left: stop quietly, silencing the final flush too
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    if isinstance(e, MemoryError):
        log("strategy: error: out of memory")
        return EXIT_USAGE
    if isinstance(e, OSError):
        name = f" {quote(e.filename)}" if e.filename else ""
        log(f"strategy: error:{name} {e.strerror or e}")
        return EXIT_USAGE
    if not isinstance(e, Exception):
        raise e
    if os.environ.get("STRATEGY_DEBUG"):  # a bug: still one line, the traceback on request
        traceback.print_exception(e)
    log(f"strategy: internal error: {type(e).__name__}: {str(e)[:200]} (STRATEGY_DEBUG=1 shows the traceback)")
    return EXIT_INTERNAL


def run() -> None:
    """The `strategy` command: main(), then a quick exit. Everything main opens (files, stores, worker
    processes, clusters) is closed before it returns, so the interpreter's teardown, which spends about
    0.2 s freeing numba's and LLVM's objects, is skipped (argparse's own exits still go through SystemExit)."""
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        pass
    os._exit(code)


if __name__ == "__main__":
    run()
