"""Benchmark: time from process start to the first question for the shipped 4x10 tree.

Usage: python tools/bench_player.py [TREE]
The bar is 0.1 s; the median of 15 runs is reported.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from strategy.cli.options import Parser  # noqa: E402


def first_question_seconds(tree: str) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "strategy", "play", tree],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    buf = ""
    while "Is your number" not in buf:
        ch = proc.stdout.read(1)
        if not ch:
            raise SystemExit("the player ended before asking")
        buf += ch
    elapsed = time.perf_counter() - start
    proc.stdin.write("q\n")
    proc.stdin.close()
    proc.wait()
    return elapsed


def main() -> None:
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "tree", nargs="?", default=str(ROOT / "strategy" / "trees" / "bulls-4x10-total.json"), help="tree file"
    )
    tree = parser.parse_args().tree
    times = [first_question_seconds(tree) for _ in range(15)]
    median = statistics.median(times)
    print(
        f"first question after {median * 1000:.0f} ms (median of 15, min {min(times) * 1000:.0f} ms); "
        f"bar 100 ms: {'ok' if median <= 0.1 else 'SLOW'}"
    )


if __name__ == "__main__":
    main()
