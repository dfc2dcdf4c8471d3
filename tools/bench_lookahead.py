"""Benchmark `strategy bound` on one thread and on one per core: the same bound, and the time each takes.

Usage: python tools/bench_lookahead.py [--quick] [--write]

Each case runs in this process, compiled before the clock starts, on one thread and then on every core; the
ratio is the second time over the first (both in one run, so a loaded machine weighs on both). --quick runs the
cases of a few seconds only; --write saves the table in tools/results/ (the README includes it).
"""

from __future__ import annotations

import os
import sys
import time

from benchlib import merged_rows, write_table

from strategy.cli.options import Parser

# (game, levels, sets searched exactly below N secrets), quick ones first
CASES = [
    ("mastermind:4x6", 4, 0),
    ("bulls:5x8", 3, 0),
    ("mastermind:4x7", 3, 200),
    ("bulls:4x10", 3, 400),
    ("bulls:5x10", 3, 150),
]
QUICK = 4


def timed(spec: str, levels: int, below: int, threads: int) -> tuple[int, float]:
    from strategy.engine.table import game_table
    from strategy.rules import parse_game
    from strategy.search import objectives
    from strategy.search.lookahead import lookahead_bound

    gt = game_table(parse_game(spec))
    start = time.perf_counter()
    value = lookahead_bound(gt, objectives.total(), levels, exact_below=below, threads=threads)
    return value, time.perf_counter() - start


def main() -> None:
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="the cases of a few seconds only")
    parser.add_argument("--write", action="store_true", help="save the table in tools/results/")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    if cores < 2:
        raise SystemExit("bench_lookahead.py: one core only: nothing to compare")
    timed("bulls:3x8", 2, 10, cores)  # compiles (or loads) every kernel of the bound, on threads too
    rows = []
    for spec, levels, below in CASES[:QUICK] if args.quick else CASES:
        one, alone = timed(spec, levels, below, 1)
        every, shared = timed(spec, levels, below, cores)
        if one != every:
            raise SystemExit(f"{spec}: {one} on one thread, {every} on {cores}")
        row = [
            spec,
            str(levels),
            str(below or "-"),
            str(one),
            f"{alone:.2f} s",
            f"{shared:.2f} s",
            f"{shared / alone:.2f}",
        ]
        print(" | ".join(row), flush=True)
        rows.append(row)
    if args.write:
        rows, note = merged_rows("lookahead", rows, 3)
        write_table(
            "lookahead",
            f"Lower bounds by lookahead on one thread and on {cores} (tools/bench_lookahead.py)",
            ["game", "levels", "exact below", "least total at least", "1 thread", f"{cores} threads", "ratio"],
            rows,
            "The least total's bound of `strategy bound` in one process, compiled before the clock starts; "
            f"the ratio is the time on {cores} threads over the time on one (the parts of the first "
            "questions are shared out; the bound is the same)." + note,
        )


if __name__ == "__main__":
    sys.exit(main())
