"""Benchmark: wall time of whole `strategy build` processes (compiled code cached), as a user runs them.

Usage: python tools/bench_heuristics.py [--large]
Bars from the issue: any heuristic tree for bulls 4x10 within 2 s; bulls 5x10 expected-size within 120 s.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = [("bulls:4x10", s, 2.0) for s in ("expected-size", "entropy", "minimax", "most-parts", "random-consistent")]
RUNS += [("bulls:4x10:nz", "expected-size", 2.0), ("mastermind:4x6", "expected-size", 2.0)]
LARGE = [("bulls:5x10", "expected-size", 120.0), ("mastermind:5x8", "expected-size", 120.0)]


def timed_build(spec: str, strategy: str, out: Path) -> tuple[float, str]:
    start = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "strategy", "build", "--game", spec, "--strategy", strategy, "-o", str(out)],
        capture_output=True, text=True,
    )
    elapsed = time.perf_counter() - start
    if r.returncode:
        raise SystemExit(r.stderr)
    return elapsed, r.stderr.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--large", action="store_true", help="also bulls 5x10 and Mastermind 5x8")
    args = parser.parse_args()
    runs = RUNS + (LARGE if args.large else [])
    with tempfile.TemporaryDirectory() as tmp:
        timed_build("bulls:3x6", "expected-size", Path(tmp) / "warm.json")  # fill the numba cache
        print(f"{'game':16} {'strategy':18} {'seconds':>8} {'bar':>6}  result")
        for spec, strategy, bar in runs:
            seconds, line = timed_build(spec, strategy, Path(tmp) / "t.json")
            verdict = "ok" if seconds <= bar else "SLOW"
            print(f"{spec:16} {strategy:18} {seconds:8.2f} {bar:6.0f}  {verdict}  {line.split(': ', 1)[1]}")


if __name__ == "__main__":
    main()
