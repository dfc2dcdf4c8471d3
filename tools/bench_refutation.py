"""Benchmark the engine on the work that fills the frontier: refuting the questions of a large set two questions deep.

Usage: python tools/bench_refutation.py [--against DIR] [--passes N [N ...]] [--every K] [--set I J K --beta B]
       [--objective total|fewest-at-L]

Rebuilds, in the driver's canonical order, a set of the bulls 5 of 9 solve (tools/regenerate_trees.py solve --frontier):
the part of the first question's 17th answer (0,2: 3120 secrets, parts taken smallest first), its question at
position 3 and that question's largest part (696 secrets, depth 2); then runs, as a worker does, the probe task
of every K-th of that set's questions at the cut-off the solve gave them (4105, which refutes every one). With
--passes, each count of null-window passes (a compiled constant) runs in a copy of the package, in a process of
its own, compiled before the clock starts; ratios are to the first count. With --against, the strategy package
of DIR (an older checkout, say) runs first and the ratios are to it. With --set and --beta, another set of the same
solve (the path a task row of its log names: part, question position, part) at the cut-off its tasks ran with.
With --objective fewest-at-L, the tasks minimise the secrets that need L questions (the last stage of the
worst-then-fewest solve) instead of the total.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
if "--worker" in sys.argv:  # the package on PYTHONPATH (a copy, or another checkout, which may predate Parser)
    Parser = argparse.ArgumentParser
else:
    sys.path.insert(0, str(ROOT))
    from strategy.cli.options import Parser

PATH = (16, 3, 0)  # part of the first question (smallest first), question position, part (largest first)
BETA = 4105


def costs_named(name: str):
    """The objective a benchmark's tasks minimise: "total" or "fewest-at-L"."""
    from strategy.search import objectives

    if name == "total":
        return objectives.total()
    depth = name.removeprefix("fewest-at-")
    if depth == name or not depth.isdigit() or int(depth) < 1:
        raise ValueError(f"unknown objective {name!r} (total or fewest-at-L)")
    return objectives.at_last_level(int(depth))


def rebuild(every: int, path: tuple[int, int, int], beta: int, objective: str = "total") -> dict:
    """The sample's tasks run in this process's engine: times and the engine's counters."""
    import time

    import numpy as np

    from strategy.engine import exact
    from strategy.engine.searcher import Engine, Spec
    from strategy.engine.table import game_table, split
    from strategy.rules import parse_game
    from strategy.search.driver import Driver
    from strategy.search.worker import Task, run_on

    gt = game_table(parse_game("bulls:5x9"))
    engine = Engine(gt, Spec(gt.game, costs_named(objective), False, 22))
    driver = Driver(engine, engine.spec, None)  # only its canonical probe list is used

    def probe_list(S, d, history, b):
        """The set's questions in the canonical order, and the branching it passes to its parts."""
        probes, _, _, b_here, _ = driver.probe_list(S, d, history, b, exact.INF)
        return probes, b_here

    def parts(S, probe, smallest_first):
        members, starts = split(gt.table, S, probe, len(gt.answers))
        sizes = [
            (starts[c + 1] - starts[c], c) for c in range(len(gt.answers)) if c != gt.win and starts[c + 1] > starts[c]
        ]
        sizes.sort(key=lambda x: (x[0] if smallest_first else -x[0], x[1]))
        return [members[starts[c] : starts[c + 1]].copy() for _, c in sizes]

    S = np.arange(gt.size, dtype=np.int32)
    probes, b = probe_list(S, 0, np.zeros(0, dtype=np.int64), engine.root_branching)
    first = int(probes[0])

    def pick(items, i, what):
        if i >= len(items):
            raise SystemExit(f"--set: there are only {len(items)} {what}")
        return items[i]

    X = pick(parts(S, first, smallest_first=True), path[0], "parts of the first question")
    probes, b = probe_list(X, 1, np.array([first], dtype=np.int64), b)
    question = int(pick(probes, path[1], "questions of that part"))
    Y = pick(parts(X, question, smallest_first=False), path[2], "parts of that question")
    history = np.array([first, question], dtype=np.int64)
    probes, _ = probe_list(Y, 2, history, b)
    sample = [int(p) for p in probes[::every]]
    run_on(engine, Task("warm", Y, 2, history, b, 1, probe=sample[0]), None, threaded=False)  # compiles
    engine.tt[:] = 0
    before = engine.counters.copy()
    refuted = 0
    start = time.perf_counter()
    for p in sample:
        r = run_on(engine, Task(f"{p}", Y, 2, history, b, beta, probe=p), None, threaded=False)
        refuted += not r.exact and r.value >= beta
    seconds = time.perf_counter() - start
    counters = (engine.counters - before).tolist()
    return {
        "set": len(Y),
        "questions": len(probes),
        "tasks": len(sample),
        "refuted": refuted,
        "seconds": seconds,
        "nodes": counters[exact.C_NODES],
        "pairs": counters[exact.C_PAIRS],
    }


def package_with(passes: int, into: Path) -> Path:
    """A copy of the package whose engine makes this many null-window passes."""
    shutil.copytree(ROOT / "strategy", into / "strategy", ignore=shutil.ignore_patterns("__pycache__"))
    kernel = into / "strategy" / "engine" / "exact.py"
    source, n = re.subn(r"^NULL_WINDOW_PASSES = \d+", f"NULL_WINDOW_PASSES = {passes}", kernel.read_text(), flags=re.M)
    if n != 1:
        raise SystemExit("NULL_WINDOW_PASSES not found in strategy/engine/exact.py")
    kernel.write_text(source)
    return into


def run_in(path: Path, every: int, at: tuple[int, int, int], beta: int, objective: str) -> dict:
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--worker",
            "--every",
            str(every),
            "--set",
            *map(str, at),
            "--beta",
            str(beta),
            "--objective",
            objective,
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(path)),
        cwd=tempfile.gettempdir(),
    )
    if out.returncode:
        raise SystemExit(f"benchmark process failed: {out.stderr.strip().splitlines()[-1:]}")
    return orjson.loads(out.stdout)


def main() -> None:
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--passes",
        type=int,
        nargs="+",
        metavar="N",
        help="null-window pass counts to compare (default: the engine as it is)",
    )
    parser.add_argument(
        "--against",
        type=Path,
        metavar="DIR",
        help="a directory holding another strategy package (an older checkout) to time first",
    )
    parser.add_argument("--every", type=int, default=25, metavar="K", help="time every K-th question (default 25)")
    parser.add_argument(
        "--set",
        type=int,
        nargs=3,
        default=PATH,
        metavar=("I", "J", "K"),
        help="the set: part I "
        "of the first question (smallest first), its question at position J, that question's part K "
        "(largest first); default %(default)s",
    )
    parser.add_argument("--beta", type=int, default=BETA, help="the cut-off of its tasks (default %(default)s)")
    parser.add_argument(
        "--objective",
        default="total",
        help="what the tasks minimise: total (default) or fewest-at-L, the secrets that need L questions",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.every < 1:
        parser.error("--every must be at least 1")
    if min(args.set) < 0 or args.beta < 1:
        parser.error("--set takes three positions of 0 or more and --beta a positive total")
    try:
        costs_named(args.objective)
    except ValueError as e:
        parser.error(f"--objective: {e}")
    if args.passes and min(args.passes) < 0:
        parser.error("--passes must be 0 or more")
    if args.against and not (args.against / "strategy" / "engine" / "exact.py").is_file():
        parser.error(f"--against: no strategy package in {args.against}")
    if args.worker:
        print(orjson.dumps(rebuild(args.every, tuple(args.set), args.beta, args.objective)).decode())
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        runs = [("against", args.against.resolve())] if args.against else []
        runs += [(f"{n} passes", package_with(n, Path(tmp) / f"p{n}")) for n in args.passes or []]
        if not args.passes:
            runs.append(("as is", ROOT))
        for label, path in runs:
            r = run_in(path, args.every, tuple(args.set), args.beta, args.objective)
            ratio = f"{r['seconds'] / rows[0][1]['seconds']:.2f}x" if rows else "1.00x"
            rows.append((label, r))
            print(
                f"{label:10} {r['tasks']} of {r['questions']} questions of a set of {r['set']}, {r['refuted']} refuted: "
                f"{r['seconds']:7.2f} s {ratio:>6}  nodes {r['nodes']}  pairs {r['pairs'] / 1e9:.1f}e9",
                flush=True,
            )


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("interrupted")
