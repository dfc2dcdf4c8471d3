"""Regenerate every tree shipped in trees/ with the exact engine (the one script that does it).

Usage: python tools/regenerate_trees.py [NAME ...]    (default: all; names as in TREES)
Each tree is solved in a fresh `strategy solve` process, verified by it before writing,
and written through a temporary file. Expect a few minutes in all on 2 cores.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREES = {
    "bulls-3x10-total": ["--game", "bulls:3x10", "--objective", "total"],
    "bulls-4x10-total": ["--game", "bulls:4x10", "--objective", "total"],
    "bulls-4x10-worst-then-fewest": ["--game", "bulls:4x10", "--objective", "worst-then-fewest"],
    "bulls-4x10-nz-total": ["--game", "bulls:4x10:nz", "--objective", "total"],
    "mastermind-4x6-total": ["--game", "mastermind:4x6", "--objective", "total"],
    "mastermind-4x6-total-within-5": ["--game", "mastermind:4x6", "--objective", "total", "--max-depth", "5"],
}


def main(names: list[str]) -> None:
    unknown = [n for n in names if n not in TREES]
    if unknown:
        raise SystemExit(f"unknown tree {unknown[0]!r}; choose from {', '.join(TREES)}")
    for name in names or TREES:
        out = ROOT / "trees" / f"{name}.json"
        start = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "strategy", "solve", *TREES[name], "--quiet", "-o", str(out)],
                           capture_output=True, text=True)
        if r.returncode:
            raise SystemExit(f"{name}: {r.stderr.strip()}")
        print(f"{name}: {time.perf_counter() - start:.1f} s")
        for line in r.stderr.strip().splitlines():
            print(f"  {line}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"trees to rebuild (default: all): {', '.join(TREES)}")
    main(parser.parse_args().names)
