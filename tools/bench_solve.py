"""Benchmark the exact engine: wall time of whole `strategy solve` processes, against the issue's bars.

Usage: python tools/bench_solve.py [--large]
Bars: bulls 3x10 and MM(4,6) min total within 3 s each (compiled code cached); with --large,
bulls 4x10 min total within 150 s on 2 cores, the time the best public C++ solver needs on one
core here (reported as a ratio), and the other published optima as reference runs.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SMALL = [("bulls:3x10", [], 3.0), ("mastermind:4x6", [], 3.0), ("bulls:3x7", [], 3.0)]
LARGE = [
    ("bulls:4x10", [], 150.0),
    ("bulls:4x9", [], None),
    ("bulls:4x10:nz", [], None),
    ("mastermind:4x6", ["--objective", "worst"], None),
    ("mastermind:4x7", [], None),
]
CPP_SECONDS_4X10 = 150.0  # best public C++ solver, one core of this machine (issue 3)


def run(spec: str, extra: list[str], out: Path) -> tuple[float, list[str]]:
    start = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "strategy", "solve", "--game", spec, *extra, "--quiet", "-o", str(out)],
                       capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if r.returncode not in (0, 1):
        raise SystemExit(r.stderr)
    return elapsed, [l for l in r.stderr.splitlines() if l.startswith(("proved", "impossible"))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--large", action="store_true", help="also bulls 4x10, 4x9, 4x10:nz and Mastermind 4x7")
    args = parser.parse_args()
    runs = SMALL + (LARGE if args.large else [])
    with tempfile.TemporaryDirectory() as tmp:
        run("bulls:3x6", [], Path(tmp) / "warm.json")  # fill the numba cache
        print(f"{'game':16} {'options':24} {'seconds':>8} {'bar':>6}  result")
        for spec, extra, bar in runs:
            seconds, proof = run(spec, extra, Path(tmp) / "t.json")
            verdict = "" if bar is None else ("ok" if seconds <= bar else "SLOW")
            print(f"{spec:16} {' '.join(extra):24} {seconds:8.2f} {bar or '':>6}  {verdict:4}  {'; '.join(proof)}")
            if spec == "bulls:4x10" and not extra:
                print(f"{'':16} {'':24} ratio to the C++ solver's {CPP_SECONDS_4X10:.0f} s: {seconds / CPP_SECONDS_4X10:.2f}")


if __name__ == "__main__":
    main()
