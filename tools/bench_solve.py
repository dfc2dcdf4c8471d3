"""Benchmark the exact engine: whole `strategy solve` processes, side by side with the C++ solver mmstrat.

Usage: python tools/bench_solve.py [--peer PATH] [--large] [--dask] [--write]

Each row solves one game from scratch in a fresh process (compiled code cached) and, with --peer, runs
mmstrat (one core) on the same game; both totals must agree. Ratios are ours over mmstrat's time.
--large adds bulls 4 of 10 (one and two processes) and the 4 of 10 game with no leading zero; --dask adds
bulls 4 of 10 on a running 2-worker Dask LocalCluster (127.0.0.1; its start-up not counted);
--write saves the table in tools/results/ for the README, keeping the saved rows this run did not measure.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import orjson
from benchlib import (
    LOCAL_CLUSTER,
    PEER_STRATEGY,
    check_peer,
    measure,
    merged_rows,
    peer_rules,
    peer_total,
    startup,
    strategy,
    write_table,
)

from strategy.cli.options import Parser

SMALL = [
    ("bulls:3x10", []),
    ("mastermind:4x6", []),
    ("bulls:4x9", []),
    ("mastermind:4x7", []),
    ("mastermind:4x6", ["--consistent-only"]),
    ("bulls:4x10", ["--consistent-only"]),
]
LARGE = [("bulls:4x10", []), ("bulls:4x10", ["--jobs", "2"]), ("bulls:4x10:nz", ["--jobs", "2"])]


def ours(spec: str, extra: list[str], tmp: Path):
    out = tmp / "t.json"
    jobs = [] if "--jobs" in extra or "--scheduler" in extra else ["--jobs", "1"]
    run = measure(strategy("solve", "--game", spec, *extra, *jobs, "--quiet", "-o", str(out)))
    if run.status:
        raise SystemExit(f"strategy solve {spec} failed: {run.stderr}")
    doc = orjson.loads(out.read_bytes())
    return run, doc["stats"]["total"], doc["generator"]["run"]["seconds"]


def run_cases(cases: list[tuple[str, list[str]]], peer_path: str | None, rows: list[list[str]]) -> None:
    """Each case as a whole process, with mmstrat on the same game when it has it; rows for the table."""
    with tempfile.TemporaryDirectory() as tmp:
        measure(strategy("solve", "--game", "bulls:3x6", "--quiet", "-o", str(Path(tmp) / "warm.json")))
        print(f"{'game':22} {'ours':>9} {'search':>7} {'MB':>6} {'mmstrat':>9} {'MB':>6} {'ratio':>6}  total")
        for spec, extra in cases:
            run, total, search = ours(spec, extra, Path(tmp))
            label = spec + ("" if not extra else " " + " ".join(extra).replace("--", ""))
            if "--scheduler" in extra:
                label = f"{spec} Dask LocalCluster, 2 workers"
            peer_s = peer_mb = ratio = ""
            rules = peer_rules(spec)
            if peer_path and rules and not {"--consistent-only", "--scheduler"} & set(extra):  # -po is a looser rule
                peer = measure([peer_path, "-r", rules, "-s", PEER_STRATEGY["optimal"], "-S", "-q"])
                if peer_total(peer.stdout) != total:
                    raise SystemExit(f"{spec}: mmstrat says {peer_total(peer.stdout)}, we prove {total}")
                peer_s, peer_mb, ratio = (
                    f"{peer.seconds:.2f} s",
                    f"{peer.peak_mb:.0f}",
                    f"{run.seconds / peer.seconds:.2f}x",
                )
            print(
                f"{label:22} {run.seconds:8.2f}s {search:6.2f}s {run.peak_mb:6.0f} {peer_s:>9} {peer_mb:>6} {ratio:>6}  {total}"
            )
            rows.append(
                [
                    label,
                    str(total),
                    f"{run.seconds:.2f} s",
                    f"{search:.2f} s",
                    f"{run.peak_mb:.0f} MB",
                    peer_s,
                    f"{peer_mb} MB" if peer_mb else "",
                    ratio,
                ]
            )


def main() -> None:
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument("--peer", metavar="PATH", help="the mmstrat binary (tools: ../shared/tools/build-mmstrat.sh)")
    parser.add_argument("--large", action="store_true", help="also bulls 4 of 10 and 4 of 10 with no leading zero")
    parser.add_argument("--dask", action="store_true", help="also bulls 4 of 10 on a 2-worker Dask LocalCluster")
    parser.add_argument("--write", action="store_true", help="save the table in tools/results/solve.md")
    args = parser.parse_args()
    check_peer(args.peer)
    cases = SMALL + (LARGE if args.large else [])
    rows = []
    run_cases(cases, args.peer, rows)
    if args.dask:  # imported only now: a larger parent would inflate the peak memory its children report
        from distributed import LocalCluster

        with LocalCluster(n_workers=2, **LOCAL_CLUSTER) as cluster:
            run_cases([("bulls:4x10", ["--scheduler", cluster.scheduler_address])], None, rows)
    if args.write:
        rows, kept = merged_rows("solve", rows, 1)
        path = write_table(
            "solve",
            "Exact search, whole processes (tools/bench_solve.py)",
            [
                "game",
                "minimum total",
                "strategy solve",
                "of which search",
                "memory",
                "mmstrat (1 core)",
                "memory",
                "ratio",
            ],
            rows,
            f"Ours on one process unless jobs is given; the numba cache warm. {startup()} "
            '"Of which search": the solve\'s own time (generator.run.seconds: search and tree '
            "extraction). mmstrat has no "
            "leading-zero rule, and its consistent-only option (-po) is a looser rule. On Dask the memory is the "
            "driver's; the cluster was started before the run." + kept,
        )
        print(f"written {path}")


if __name__ == "__main__":
    sys.exit(main())
