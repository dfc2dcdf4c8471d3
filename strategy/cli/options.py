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

from ..files import quote
from ..rules import MAX_TABLE_CODES

EXIT_IMPOSSIBLE = 1  # solve: no tree meets the depth bound
EXIT_USAGE = 2
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130
MAX_JOBS = os.cpu_count() or 1
MAX_DEPTH_OPTION = 999  # the engine's depth bounds (1000 means none)
MAX_SEED = 2**63 - 1
MAX_GAMES = 10_000_000
MAX_LOOKAHEAD = 12  # levels of lookahead of `bound` (each costs far more than the one before)
MAX_PILOT = 10_000  # probes a pilot tries at a node besides the rule's own
PILOT_ABOVE = 100  # the smallest node a pilot looks ahead at by default


class CommandError(Exception):
    """A failure to report as one line with exit status 2."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (`strategy: error: ...`, exit 2); the tools under tools/ use it too, and their
    errors begin with the tool's name."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog.split()[0]}: error: {message.splitlines()[0]} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def command(sub, name: str, summary: str, description: str, func: Callable[[argparse.Namespace], int],
            epilog: str | None = None) -> argparse.ArgumentParser:
    """Add a command to the parser's subcommands, run by `func`."""
    p = sub.add_parser(name, help=summary, description=description, epilog=epilog,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(func=func)
    return p


def tree_argument(text: str) -> str:
    """An argparse type: the file a TREE argument stands for (a file, a shipped tree's name, or a game naming one)."""
    from ..tree.shipped import UnknownTree, find

    try:
        return find(text)
    except UnknownTree as e:
        raise argparse.ArgumentTypeError(str(e)) from None


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
        t = float(text[:30])
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
    seconds on a terminal."""
    from ..warmup import PARTS, ready, warm_up

    if not ready(part, strategy):
        with compiling(PARTS[part], show):
            warm_up(part, strategy)


def print_json(obj: object) -> None:
    sys.stdout.write(orjson.dumps(obj, option=orjson.OPT_INDENT_2).decode() + "\n")
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
        raise CommandError("the tree would be written to the terminal: give -o FILE (or send standard output to a "
                           "file or a pipe)")


def needs_output_for_json(args: argparse.Namespace) -> None:
    if args.json and args.output in (None, "-"):
        raise CommandError("--json prints the report on standard output, so the tree needs -o FILE")


def check_writable(name: str | None, what: str) -> None:
    """Refuse, before any work, a store or log (files written as the work goes) that is a folder or has none."""
    if name and os.path.isdir(name):
        raise CommandError(f"the {what} {quote(name)} is a directory")
    if name and not os.path.isdir(os.path.dirname(os.path.abspath(name))):
        raise CommandError(f"the folder of the {what} {quote(name)} does not exist")
GAME_HELP = ("the game: bulls:4x10 (4 distinct symbols of 10), bulls:4x10:nz (no leading 0), "
             "mastermind:4x6 (4 pegs, 6 colours); up to 1,000,000 codes")
TREE_HELP = ("a tree file (JSON, or gzipped JSON; - reads standard input), a shipped tree's name (strategy trees "
             "lists them), or a game that names one (bulls:4x10, bulls:4x10/worst)")
OUTPUT_HELP = "the tree file to write (default: standard output)"


def add_game(p: argparse.ArgumentParser, required: bool = True) -> None:
    p.add_argument("--game", required=required, metavar="SPEC", help=GAME_HELP)


def add_endgame_options(p: argparse.ArgumentParser, what: str, required: bool = False) -> None:
    """--exact-below N and its --budget, for build and improve."""
    p.add_argument("--exact-below", type=int_in(3, MAX_TABLE_CODES, "--exact-below"), metavar="N", required=required,
                   help=f"{what} (the exact engine; games up to {MAX_TABLE_CODES:,} codes)")
    p.add_argument("--budget", type=positive_seconds, metavar="SECONDS",
                   help="stop the exact searches after this long (the subtrees not solved by then stay as they were)")
    p.add_argument("--store", metavar="FILE", help="SQLite store (as strategy solve's) of the endgames finished: a "
                   "rerun after a budget or a Ctrl-C takes them from it and searches only the others")
