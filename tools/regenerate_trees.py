"""Regenerate every tree shipped in trees/ with the exact engine (the one script that does it).

Usage: python tools/regenerate_trees.py [NAME ...] [--frontier] [--jobs N]

Each tree is solved in a fresh `strategy solve` process, verified by it before writing, and written
through a temporary file (gzipped when over 1 MB). With --frontier the open games of the frontier table
are solved too, each with a store in stores/ (outside git) so that an interrupted run resumes where it
stopped: run the same command again. Progress and the proven lines are printed as each tree finishes.
"""
from __future__ import annotations

import argparse
import gzip
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from strategy.io.files import write_atomic  # noqa: E402

STORES = ROOT / "stores"

CORE = {
    "bulls-3x10-total": ["--game", "bulls:3x10"],
    "bulls-4x10-total": ["--game", "bulls:4x10"],
    "bulls-4x10-worst-then-fewest": ["--game", "bulls:4x10", "--objective", "worst-then-fewest"],
    "bulls-4x10-nz-total": ["--game", "bulls:4x10:nz"],
    "mastermind-4x6-total": ["--game", "mastermind:4x6"],
    "mastermind-4x6-total-within-5": ["--game", "mastermind:4x6", "--max-depth", "5"],
}
FRONTIER_GAMES = ["mastermind:4x8", "mastermind:5x5", "mastermind:4x9", "bulls:5x8", "bulls:5x9", "mastermind:5x6",
                  "bulls:4x10:nz", "mastermind:5x7"]
FRONTIER_OBJECTIVES = {
    "total": [],
    "worst": ["--objective", "worst"],  # the minimum worst case, then the minimum total within it
    "worst-then-fewest": ["--objective", "worst-then-fewest"],
    "consistent-total": ["--consistent-only"],
}


def frontier() -> dict[str, list[str]]:
    out = {}
    for game in FRONTIER_GAMES:
        stem = game.replace(":", "-")
        for name, extra in FRONTIER_OBJECTIVES.items():
            key = f"{stem}-{name}"
            if key in CORE or (game == "bulls:4x10:nz" and name == "total"):
                continue
            out[key] = ["--game", game, *extra, "--store", str(STORES / f"{stem}.db")]
    return out


def solve(name: str, args: list[str], jobs: list[str]) -> None:
    STORES.mkdir(exist_ok=True)
    out = ROOT / "trees" / f"{name}.json"
    start = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "strategy", "solve", *args, *jobs, "--quiet", "-o", str(out)],
                       capture_output=True, text=True, cwd=ROOT)
    if r.returncode:
        raise SystemExit(f"{name}: {r.stderr.strip()}")
    if out.stat().st_size > 1 << 20:  # large trees ship gzipped (every command reads them)
        write_atomic(out.with_suffix(".json.gz"), gzip.compress(out.read_bytes(), compresslevel=9, mtime=0))
        out.unlink()
    print(f"{name}: {time.perf_counter() - start:.1f} s", flush=True)
    for line in r.stderr.strip().splitlines():
        if line.startswith(("proved", "verified", "search")):
            print(f"  {line}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="trees to rebuild (default: all of the chosen set)")
    parser.add_argument("--frontier", action="store_true", help="the open games too (long: hours on 2 cores)")
    parser.add_argument("--jobs", help="worker processes for each solve (default: the solver's choice)")
    args = parser.parse_args()
    table = dict(CORE, **(frontier() if args.frontier else {}))
    unknown = [n for n in args.names if n not in table]
    if unknown:
        raise SystemExit(f"unknown tree {unknown[0]!r}; choose from {', '.join(table)}")
    jobs = ["--jobs", args.jobs] if args.jobs else []
    for name in args.names or table:
        solve(name, table[name], jobs)


if __name__ == "__main__":
    main()
