"""Benchmark the first run: the README's main job on an empty numba cache, in fresh processes.

Usage: python tools/bench_first_run.py [--peer CHECKOUT] [--runs N] [--write]

The main job is `strategy solve --game bulls:4x10 -o bulls4.json && strategy table bulls4.json`, run in a new
folder with NUMBA_CACHE_DIR pointing at an empty one: what a user waits for right after an install that did not
run the tests (the test command compiles into the same cache, and the main job then takes seconds). Each figure
is the wall time and the CPU time of both processes together. --peer runs the same job with another checkout of
the project (say a `git worktree add /tmp/old COMMIT`), alternating with this one, so that both are measured in
one run on the same machine; --write keeps the table in tools/results/cold-start.md.
"""

from __future__ import annotations

import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchlib import ROOT, write_table

from strategy.cli.options import Parser

JOB = [["solve", "--game", "bulls:4x10", "-o", "bulls4.json"], ["table", "bulls4.json"]]


def first_run(checkout: Path) -> tuple[float, float]:
    """The main job with `checkout`'s code on an empty cache: (wall seconds, CPU seconds of its processes)."""
    import subprocess

    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, PYTHONPATH=str(checkout), NUMBA_CACHE_DIR=os.path.join(folder, "cache"))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        for args in JOB:
            done = subprocess.run(
                [sys.executable, "-m", "strategy", *args], cwd=folder, env=env, capture_output=True, text=True
            )
            if done.returncode:
                raise SystemExit(f"strategy {' '.join(args)} failed with {checkout}: {done.stderr.strip()[-300:]}")
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def revision(checkout: Path) -> str:
    """The commit a checkout holds, for the table (not its path on this machine)."""
    import subprocess

    done = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or checkout.name


def main() -> None:
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument("--peer", metavar="CHECKOUT", help="another checkout of the project, run alternately")
    parser.add_argument("--runs", type=int, default=1, help="runs of each (default 1: each run compiles everything)")
    parser.add_argument("--write", action="store_true", help="save the table in tools/results/cold-start.md")
    args = parser.parse_args()
    sides = {
        "this checkout": ROOT,
        **({f"commit {revision(Path(args.peer))}": Path(args.peer).resolve()} if args.peer else {}),
    }
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
    for _ in range(args.runs):
        for name, checkout in sides.items():
            figures[name].append(first_run(checkout))
            wall, cpu = figures[name][-1]
            print(f"{name}: {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
    load = os.getloadavg()[1]
    rows = [
        [
            name,
            f"{statistics.median(w for w, _ in runs):.1f} s",
            f"{statistics.median(c for _, c in runs):.1f} s",
            str(len(runs)),
        ]
        for name, runs in figures.items()
    ]
    if args.peer:
        ours, theirs = (statistics.median(w for w, _ in runs) for runs in figures.values())
        print(f"ratio (this checkout / peer): {ours / theirs:.2f}x wall")
    if args.write:
        write_table(
            "cold-start",
            "The first run: the README's main job on an empty numba cache (tools/bench_first_run.py)",
            ["code", "wall time (median)", "CPU time of its processes (median)", "runs"],
            rows,
            f"`strategy solve --game bulls:4x10 -o bulls4.json && strategy table bulls4.json` in a new folder "
            f"with an empty NUMBA_CACHE_DIR, on {os.cpu_count()} cores with a 5-minute load average of "
            f"{load:.1f} as the run ended (other work on the machine stretches the wall time, not the CPU time).",
        )


if __name__ == "__main__":
    main()
