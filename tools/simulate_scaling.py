"""Project a solve onto more workers: replay its task log (`strategy solve --log FILE`) with list scheduling.

Usage: python tools/simulate_scaling.py LOG [--workers 1,2,4,...] [--phase NAME] [--dispatch SECONDS]

Each logged task took the time it took and could start only once the task that released it had
finished (its `after`): cut-offs and cancellations stay as they happened. With P workers, ready tasks
start in the order the driver submitted them, each on the worker that frees first; the tasks the driver
ran itself (quick refutations: their worker is the driver's process, named in the run id) run one at a time
on the driver, whatever P. Each task sent out also holds the driver for --dispatch seconds (default
DISPATCH: the driver's CPU time per task, measured on a Dask cluster with the fine plan on Mastermind 4x7), so
a driver feeds at most 1/dispatch tasks a second. The projected speed-up is the one-worker time (no dispatch)
over the P-worker time; what limits it is printed too (the longest chain of dependent tasks, the longest task,
the driver's own work).
"""

from __future__ import annotations

import heapq
import sys
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from strategy.cli.options import Parser  # noqa: E402

DISPATCH = 0.003  # seconds of the driver's time per task sent out (2.8 to 3.5 ms measured)


def load(path: str, phase: str | None, every_run: bool = False) -> list[dict]:
    """The logged tasks (of one objective phase if given), of the last run unless every_run."""
    rows = []
    for line in Path(path).read_text().splitlines():
        if line.strip():
            row = orjson.loads(line)
            if phase is None or row.get("phase") == phase:
                rows.append(row)
    if not rows:
        raise SystemExit(f"no tasks in {path!r}" + (f" for phase {phase!r}" if phase else ""))
    runs = {row["run"] for row in rows}
    if len(runs) > 1 and not every_run:  # a resumed solve: replay the last run only (the earlier ones did other work)
        last = rows[-1]["run"]
        rows = [row for row in rows if row["run"] == last]
    tasks: dict[tuple, dict] = {}  # a batch of probes is one task, logged as a line per probe: one row, their time
    for row in rows:
        key = (row["run"], row["task"])
        if key in tasks:
            tasks[key] = {**tasks[key], "seconds": tasks[key]["seconds"] + row["seconds"]}
        else:
            tasks[key] = row
    return sorted(tasks.values(), key=lambda r: r["task"])


def in_driver(row: dict) -> bool:
    """Whether the driver ran this task itself (run ids are PID-START, workers end with their pid)."""
    return str(row.get("worker", "")).rsplit(":", 1)[-1] == str(row["run"]).split("-", 1)[0]


def started(run: str) -> int:
    """When a run began (Unix seconds, from its id PID-START): runs of one log in the order they ran."""
    return int(run.rsplit("-", 1)[1])


def makespan(rows: list[dict], workers: int, dispatch: float = 0.0) -> float:
    """List scheduling in submission order: each task starts when its releaser is done and a worker is free
    (the driver's own tasks when the driver is free); a task sent out also holds the driver for `dispatch`
    seconds first (sending it, handling its result), so that one driver feeds only so many workers."""
    finish: dict[int, float] = {}
    free = [0.0] * workers
    heapq.heapify(free)
    driver_free = 0.0
    for row in rows:
        ready = finish.get(row["after"], 0.0) if row.get("after") is not None else 0.0
        if in_driver(row):
            driver_free = finish[row["task"]] = max(ready, driver_free) + row["seconds"]
            continue
        start = max(ready, heapq.heappop(free), driver_free)
        driver_free = start + dispatch
        end = start + dispatch + row["seconds"]
        finish[row["task"]] = end
        heapq.heappush(free, end)
    return max(finish.values())


def critical_path(rows: list[dict]) -> float:
    finish: dict[int, float] = {}
    for row in rows:
        finish[row["task"]] = finish.get(row.get("after"), 0.0) + row["seconds"]
    return max(finish.values())


def main() -> None:
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument("log", help="a task log written by strategy solve --log")
    parser.add_argument("--workers", default="1,2,4,8,16,32,64,128", help="worker counts to project (comma-separated)")
    parser.add_argument("--phase", help="only the tasks of this objective phase (e.g. total)")
    parser.add_argument(
        "--dispatch", type=float, default=DISPATCH, help=f"the driver's seconds per task sent out (default {DISPATCH})"
    )
    args = parser.parse_args()
    if args.dispatch < 0:
        parser.error("--dispatch must be a number of seconds, 0 or more")
    rows = load(args.log, args.phase)
    counts = [int(w) for w in args.workers.split(",")]
    work = sum(r["seconds"] for r in rows)
    one = makespan(rows, 1)
    driver = [r for r in rows if in_driver(r)]
    print(
        f"{len(rows)} tasks, {work:.1f} s of work; longest task {max(r['seconds'] for r in rows):.2f} s, "
        f"longest chain of dependent tasks {critical_path(rows):.2f} s (no speed-up beyond {work / critical_path(rows):.1f}x)"
    )
    if driver:
        own = sum(r["seconds"] for r in driver)
        print(
            f"{len(driver)} tasks ({own:.1f} s) ran in the driver itself, one at a time "
            f"(no speed-up beyond {work / own:.1f}x)"
        )
    sent = len(rows) - len(driver)
    print(
        f"{sent} tasks sent out, {sent * args.dispatch:.1f} s of the driver's time at {1000 * args.dispatch:.1f} ms each "
        f"(no speed-up beyond {work / max(sent * args.dispatch, 1e-9):.1f}x)"
    )
    print(f"{'workers':>8} {'time':>9} {'speed-up':>9}")
    for p in counts:
        t = makespan(rows, p, args.dispatch)
        print(f"{p:>8} {t:>8.2f}s {one / t:>8.1f}x")


if __name__ == "__main__":
    sys.exit(main())
