"""Benchmark the greedy builders: whole `strategy build` processes, side by side with the C++ solver mmstrat.

Usage: python tools/bench_heuristics.py [--peer PATH] [--large] [--huge] [--stretch] [--endgames] [--pilot] [--write]

bulls 4 of 10 for every heuristic; --large adds bulls 5 of 10 and Mastermind 5x8 (every heuristic, with
the peer); --huge builds bulls 6 of 10 and Mastermind 6x6 (expected size and entropy) and verifies them;
--stretch builds Mastermind 6x8 and 6x9 (531441 codes) with entropy and verifies them (many minutes);
--endgames builds entropy trees with exact endgames (--exact-below N) on Mastermind 4x8 and 5x8 and bulls 5 of
10 (minutes, and the game's feedback table in memory: 1 GB for Mastermind 5x8); --pilot builds entropy trees
with the pilot (`--pilot 10`) on Mastermind 4x6 and bulls 4 of 10, with --large on bulls 5 of 10 and Mastermind
5x8 too, and with --endgames on the games above with the same exact endgames, so that what the pilot gains
shows beside the plain rule's rows (minutes for the large games).
--write saves the table in tools/results/, keeping the saved rows this run did not measure.
Totals must agree with the peer's (the tie-break is the same: may be the secret, then the lowest code).
Averages published by mikemag's CUDA Mastermind (all probes) are shown beside ours where they exist.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import orjson
from benchlib import (
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

HEURISTICS = ("expected-size", "entropy", "minimax", "most-parts")
BASE = [("bulls:4x10", s) for s in HEURISTICS]
LARGE = [(g, s) for g in ("bulls:5x10", "mastermind:5x8") for s in HEURISTICS]
HUGE = [(g, s) for g in ("mastermind:6x6", "bulls:6x10") for s in ("expected-size", "entropy")]
STRETCH = [("mastermind:6x8", "entropy"), ("mastermind:6x9", "entropy")]
ENDGAMES = [("mastermind:4x8", "entropy", 200), ("bulls:5x10", "entropy", 300), ("mastermind:5x8", "entropy", 300)]
PILOT_WIDTH = 10
PILOTS = [("mastermind:4x6", "entropy"), ("bulls:4x10", "entropy")]
LARGE_PILOTS = [("bulls:5x10", "entropy"), ("mastermind:5x8", "entropy")]
VERIFIED = HUGE + STRETCH
PUBLISHED = {  # mikemag's CUDA Mastermind, 2023-24 (average, worst case); ties break differently there
    ("mastermind:5x8", "entropy"): "5.4854, worst 7",
    ("mastermind:5x8", "expected-size"): "5.4997",
    ("mastermind:5x8", "most-parts"): "5.5491, worst 8",
    ("mastermind:5x8", "minimax"): "5.6084, worst 7",
    ("mastermind:6x9", "entropy"): "6.2847, worst 9",
}


def main() -> None:
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument("--peer", metavar="PATH", help="the mmstrat binary")
    parser.add_argument("--large", action="store_true", help="also bulls 5 of 10 and Mastermind 5x8")
    parser.add_argument("--huge", action="store_true", help="also bulls 6 of 10 and Mastermind 6x6, verified")
    parser.add_argument("--stretch", action="store_true", help="also Mastermind 6x8 and 6x9 entropy, verified")
    parser.add_argument("--endgames", action="store_true", help="also entropy with exact endgames (minutes)")
    parser.add_argument("--pilot", action="store_true", help="also entropy with the pilot (with --endgames: minutes)")
    parser.add_argument("--write", action="store_true", help="save the table in tools/results/heuristics.md")
    args = parser.parse_args()
    check_peer(args.peer)
    cases = [
        (game, heuristic, None, None)
        for game, heuristic in BASE
        + (LARGE if args.large else [])
        + (HUGE if args.huge else [])
        + (STRETCH if args.stretch else [])
    ]
    cases += [(*case, None) for case in ENDGAMES] if args.endgames else []
    if args.pilot:
        cases += [
            (game, heuristic, None, PILOT_WIDTH) for game, heuristic in PILOTS + (LARGE_PILOTS if args.large else [])
        ]
        cases += [(*case, PILOT_WIDTH) for case in ENDGAMES] if args.endgames else []
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "t.json"
        measure(strategy("build", "--game", "bulls:3x6", "--strategy", "minimax", "--quiet", "-o", str(out)))
        floor = startup()
        print(floor)
        print(f"{'game':16} {'heuristic':14} {'ours':>8} {'MB':>5} {'mmstrat':>8} {'MB':>4} {'ratio':>6}  total  worst")
        for spec, heuristic, below, pilot in cases:
            options = (["--exact-below", str(below)] if below else []) + (["--pilot", str(pilot)] if pilot else [])
            run = measure(
                strategy("build", "--game", spec, "--strategy", heuristic, *options, "--quiet", "-o", str(out))
            )
            if run.status:
                raise SystemExit(f"strategy build {spec} failed: {run.stderr}")
            stats = orjson.loads(out.read_bytes())["stats"]
            peer_s = peer_mb = ratio = ""
            if args.peer and (spec, heuristic) not in VERIFIED and not below and not pilot:
                peer = measure([args.peer, "-r", peer_rules(spec), "-s", PEER_STRATEGY[heuristic], "-S", "-q"])
                theirs = peer_total(peer.stdout)
                if theirs != stats["total"]:
                    print(f"  note: mmstrat's total is {theirs} (tie-breaks differ)")
                peer_s, peer_mb, ratio = (
                    f"{peer.seconds:.2f} s",
                    f"{peer.peak_mb:.0f}",
                    f"{run.seconds / peer.seconds:.2f}x",
                )
            verified = ""
            if (spec, heuristic) in VERIFIED:
                check = measure(strategy("verify", str(out)))
                verified = (
                    f"verified in {check.seconds:.1f} s, {check.peak_mb:.0f} MB" if check.status == 0 else "FAILED"
                )
            if pilot:
                heuristic = f"{heuristic} pilot {pilot}"
            if below:
                heuristic = f"{heuristic}, exact below {below}"
            print(
                f"{spec:16} {heuristic:14} {run.seconds:7.2f}s {run.peak_mb:5.0f} {peer_s:>8} {peer_mb:>4} {ratio:>6}"
                f"  {stats['total']}  {stats['worst']}  {verified}"
            )
            rows.append(
                [
                    spec,
                    heuristic,
                    str(stats["total"]),
                    f"{stats['total'] / stats['secrets']:.4f}",
                    str(stats["worst"]),
                    f"{run.seconds:.2f} s",
                    f"{run.peak_mb:.0f} MB",
                    peer_s,
                    f"{peer_mb} MB" if peer_mb else "",
                    ratio or verified,
                    PUBLISHED.get((spec, heuristic), ""),
                ]
            )
    if args.write:
        rows, kept = merged_rows("heuristics", rows, 2)
        path = write_table(
            "heuristics",
            "Greedy trees, whole processes (tools/bench_heuristics.py)",
            [
                "game",
                "heuristic",
                "total",
                "average",
                "worst",
                "strategy build",
                "memory",
                "mmstrat",
                "memory",
                "ratio / check",
                "published average",
            ],
            rows,
            floor + kept,
        )
        print(f"written {path}")


if __name__ == "__main__":
    sys.exit(main())
