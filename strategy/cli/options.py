"""What every command shares: exit statuses, limits of the options, argparse types with one-line errors,
output helpers, and the shared options. The tools under tools/ take their option helpers from here."""

from __future__ import annotations

import argparse
import os
import sys
import threading
from contextlib import contextmanager
from typing import Callable, Iterator, NoReturn

import orjson

from ..files import printable, quote, valid_text
from ..interrupts import Terminated
from ..protocol import EXIT_INTERRUPTED
from ..rules import MAX_TABLE_CODES

EXIT_IMPOSSIBLE = 1  # solve: no tree meets the depth bound
EXIT_FALSE_TREE = 1  # verify: the tree does not solve its game as its file claims
EXIT_USAGE = 2
EXIT_INTERNAL = 70
MAX_JOBS = os.cpu_count() or 1
MAX_DEPTH_OPTION = 999  # the engine's depth bounds (1000 means none)
MAX_SEED = 2**63 - 1
MAX_GAMES = 10_000_000
MAX_LOOKAHEAD = 12  # levels of lookahead of `bound` (each costs far more than the one before)
MAX_PILOT = 10_000  # probes a pilot tries at a node besides the rule's own
PILOT_ABOVE = 100  # the smallest node a pilot looks ahead at by default


def signal_status(e: KeyboardInterrupt | Terminated) -> int:
    """The exit status of a command a signal stopped: 128 + the signal's number (Ctrl-C: 130)."""
    return EXIT_INTERRUPTED if isinstance(e, KeyboardInterrupt) else 128 + e.signum


class CommandError(Exception):
    """A failure to report as one line with exit status 2."""


class UsageError(SystemExit):
    """A command line argparse refused, already told on standard error; `message` is that line's text."""

    def __init__(self, message: str):
        super().__init__(EXIT_USAGE)
        self.message = message


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (`strategy: error: ...`, exit 2); the tools under tools/ use it too, and their
    errors begin with the tool's name."""

    def error(self, message: str) -> NoReturn:
        line = f"{printable(message.splitlines()[0] if message else '')} (see {self.prog} --help)"
        print(f"{self.prog.split()[0]}: error: {line}", file=sys.stderr)
        raise UsageError(line)


def command(
    sub,
    name: str,
    summary: str,
    description: str,
    func: Callable[[argparse.Namespace], int],
    epilog: str | None = None,
    compiled: bool = False,
) -> argparse.ArgumentParser:
    """Add a command to the parser's subcommands, run by `func`; `compiled`: it runs the engine's compiled kernels
    (checked before it starts: `require_compiled_code`)."""
    p = sub.add_parser(
        name, help=summary, description=description, epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.set_defaults(func=func, compiled=compiled)
    return p


def require_compiled_code() -> None:
    """Refuse to start the engine with numba's compiler turned off (NUMBA_DISABLE_JIT): its kernels rely on
    fixed-width integers and compiled intrinsics, and run as plain Python they fail or take days."""
    value = os.environ.get("NUMBA_DISABLE_JIT", "").strip()
    try:
        disabled = bool(int(value)) if value else False
    except ValueError:
        disabled = True  # numba itself refuses to start with such a value
    if disabled:
        raise CommandError(f"NUMBA_DISABLE_JIT={value[:20]!r}: the engine runs only as compiled code (unset it)")


def tree_argument(text: str) -> str:
    """An argparse type: the file a TREE argument stands for (a file, a shipped tree's name, or a game naming one)."""
    from ..tree.shipped import UnknownTree, find

    try:
        return find(text)
    except UnknownTree as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def trust_argument(text: str) -> str:
    """An argparse type: a file --trust names, a shipped tree's name or a game naming one resolved as a TREE argument
    is (a store, or a file that does not exist, is left as written for the command to match against its files)."""
    from ..tree.shipped import UnknownTree, find

    try:
        return find(text)
    except UnknownTree:
        return text


def trusted_files(args: argparse.Namespace, given: list[str | None], options: str) -> set[str]:
    """The files named by --trust, resolved: each must be one of the files `given` with the command's `options`."""
    files = {os.path.realpath(p) for p in given if p is not None}
    trusted = set()
    for path in args.trust:
        where = os.path.realpath(path)
        if where not in files:
            raise CommandError(f"--trust {quote(path)}: name a file given with {options}")
        trusted.add(where)
    return trusted


def int_in(lo: int, hi: int, what: str) -> Callable[[str], int]:
    """An argparse type: an integer in [lo, hi], with a one-line message otherwise."""

    def parse(text: str) -> int:
        t = text.strip()
        body = t[1:] if t[:1] in "+-" else t
        if not (body.isascii() and body.isdigit()) or len(body) > 20 or not lo <= int(t) <= hi:
            raise argparse.ArgumentTypeError(f"{what} must be an integer from {lo} to {hi}, got {text[:30]!r}")
        return int(t)

    parse.__name__ = what
    return parse


def probability(text: str) -> float:
    try:
        q = float(text[:30])
    except ValueError:
        raise argparse.ArgumentTypeError(f"the noise must be a number in [0, 1), got {text[:30]!r}") from None
    if not 0.0 <= q < 1.0:
        raise argparse.ArgumentTypeError(f"the noise must be in [0, 1), got {text[:30]!r}")
    return q


def positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above 0, with a one-line message otherwise."""
    try:
        t = float(text) if text.isascii() and "_" not in text else float("nan")  # as typed: 1e-9, 0.5, 30
    except ValueError:
        t = float("nan")
    if not 0.0 < t < float("inf"):
        raise argparse.ArgumentTypeError(f"--budget must be a positive number of seconds, got {text[:30]!r}")
    return t


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@contextmanager
def compiling(what: str, show: bool) -> Iterator[None]:
    """numba compiles in silence (a minute or more on a slow machine): say so, and on a terminal count the
    seconds until the body returns."""
    if not show:
        yield
        return
    if not sys.stderr.isatty():
        log(f"compiling {what} (once after install)")
        yield
        return
    from tqdm import tqdm

    bar = tqdm(desc=f"compiling {what} (once after install)", bar_format="{desc}: {elapsed}", file=sys.stderr)
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(1.0):
            bar.refresh()

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        yield
    finally:
        stop.set()
        ticker.join()
        bar.close()


def warmed_up(part: str, show: bool, strategy: str = "entropy") -> None:
    """Compile what a command's `part` calls (see `strategy.warmup`) unless numba's cache holds it, counting the
    seconds on a terminal. The compiler runs in a process of its own, and numba's cache then holds the kernels for
    this one: a Ctrl-C or SIGTERM stops it at once and cleanly (inside LLVM, a KeyboardInterrupt breaks the compile
    and prints a traceback), and under a memory limit (ulimit -v or -d) LLVM's abort (exit 134, no word of why)
    ends the child, not this process."""
    from ..warmup import PARTS, ready

    if not ready(part, strategy):
        with compiling(PARTS[part], show):
            _warm_up_apart(part, strategy)


def _memory_limit() -> int | None:
    """The address-space or data limit of this process in bytes (the lower), None when there is none."""
    import resource

    limits = [resource.getrlimit(r)[0] for r in (resource.RLIMIT_AS, resource.RLIMIT_DATA)]
    finite = [limit for limit in limits if limit != resource.RLIM_INFINITY]
    return min(finite) if finite else None


def _warm_up_apart(part: str, strategy: str) -> None:
    """`warm_up` in a child process (killed with this one's interruption): one line if it fails."""
    import subprocess

    from ..warmup import PARTS, child_env

    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from strategy.cli import skip_blas_probe; "
            "skip_blas_probe(); from strategy.warmup import warm_up; warm_up(sys.argv[1], sys.argv[2])",
            part,
            strategy,
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=child_env(),
    )
    if done.returncode != 0:
        limit = _memory_limit()
        if limit is not None:
            raise CommandError(
                f"compiling {PARTS[part]} failed under the memory limit of {limit >> 20} MB (ulimit -v "
                f"{limit >> 10}): the compiler needs more; raise the limit, or run once without it "
                f"(what it compiles is kept)"
            )
        said = done.stderr.decode(errors="replace").strip().splitlines()
        raise CommandError(
            f"compiling {PARTS[part]} failed (exit {done.returncode}): {printable(said[-1]) if said else 'no word why'}"
        )


def _json_escape(c: str) -> str:
    """A character as JSON's \\u escape (a surrogate pair beyond the first plane)."""
    code = ord(c)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _unicode(obj: object) -> object:
    """`obj` with every string as `valid_text` (a file name given on the command line may not be UTF-8)."""
    if isinstance(obj, str):
        return valid_text(obj)
    if isinstance(obj, dict):
        return {_unicode(k): _unicode(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_unicode(v) for v in obj]
    return obj


def print_json(obj: object) -> None:
    """A JSON report on standard output. JSON escapes only the C0 controls in strings: the other characters a
    terminal may act on (DEL, the C1 controls such as CSI, bidirectional overrides) are written as \\u escapes
    too, which every JSON reader reads back as the same string."""
    text = orjson.dumps(_unicode(obj), option=orjson.OPT_INDENT_2).decode()
    if not text.isascii() or "\x7f" in text:
        text = "".join(c if c.isprintable() or c == "\n" else _json_escape(c) for c in text)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def load_checked(path: str):
    """A tree file, loaded and verified over every secret (so nothing is made from a false tree)."""
    from ..tree import format as tree
    from ..tree.verify import verify

    doc = tree.load(path)
    return doc, verify(doc)


def tree_output(args: argparse.Namespace) -> None:
    """Refuse, before any work, to pour a tree onto a terminal (as gzip refuses): without -o the tree goes to
    standard output only when that is a pipe or a file."""
    if args.output in (None, "-") and sys.stdout.isatty():
        raise CommandError(
            "the tree would be written to the terminal: give -o FILE (or send standard output to a file or a pipe)"
        )


def needs_output_for_json(args: argparse.Namespace) -> None:
    if args.json and args.output in (None, "-"):
        raise CommandError("--json prints the report on standard output, so the tree needs -o FILE")


def check_writable(name: str | None, what: str) -> None:
    """Refuse, before any work, a store or log (files written as the work goes) that is a folder or has none, has no
    name, or (a store) is not a regular file: SQLite would write a database to a terminal or a pipe."""
    if name == "":
        raise CommandError(f"the {what} needs a file name")
    if name and os.path.isdir(name):
        raise CommandError(f"the {what} {quote(name)} is a directory")
    if what == "store" and name and os.path.exists(name) and not os.path.isfile(name):
        raise CommandError(f"the {what} {quote(name)} is not a regular file")
    if name and not os.path.isdir(os.path.dirname(os.path.abspath(name))):
        raise CommandError(f"the folder of the {what} {quote(name)} does not exist")


GAME_HELP = (
    "the game: bulls:4x10 (4 distinct symbols of 10), bulls:4x10:nz (no leading 0), "
    "mastermind:4x6 (4 pegs, 6 colours); up to 1,000,000 codes"
)
TREE_HELP = (
    "a tree file (JSON, or gzipped JSON; - reads standard input), a shipped tree's name (strategy trees "
    "lists them), or a game that names one (bulls:4x10, bulls:4x10/worst)"
)
OUTPUT_HELP = "the tree file to write (default: standard output)"


def add_game(p: argparse.ArgumentParser, required: bool = True) -> None:
    p.add_argument("--game", required=required, metavar="SPEC", help=GAME_HELP)


def add_endgame_options(p: argparse.ArgumentParser, what: str, required: bool = False) -> None:
    """--exact-below N and its --budget, for build and improve."""
    p.add_argument(
        "--exact-below",
        type=int_in(3, MAX_TABLE_CODES, "--exact-below"),
        metavar="N",
        required=required,
        help=f"{what} (the exact engine; games up to {MAX_TABLE_CODES:,} codes)",
    )
    p.add_argument(
        "--budget",
        type=positive_seconds,
        metavar="SECONDS",
        help="stop the exact searches after this long (the subtrees not solved by then stay as they were)",
    )
    p.add_argument(
        "--store",
        metavar="FILE",
        help="SQLite store (as strategy solve's) of the endgames finished: a "
        "rerun after a budget or a Ctrl-C takes them from it and searches only the others (what another "
        "installation wrote, or anyone altered, is searched again unless --trust names the store)",
    )
    p.add_argument(
        "--trust",
        metavar="FILE",
        action="append",
        default=[],
        help="believe the endgames that the --store FILE holds from another installation (or altered), "
        "unchecked: the record then says it relies on FILE, with its SHA-256",
    )
