"""Find the strongest fixed race strategy: best responses from the minimum-total tree until one cannot be beaten.

Usage: python tools/race_strongest.py [GAME ...] [--write]     (default: bulls:3x10 bulls:4x10)

T0 is the shipped minimum-total tree; T(k+1) = strategy solve --objective win --against T(k) (rule tie).
When the best response to T(k) scores at most 1/2, no fixed tree beats T(k) with a score above 1/2: T(k)
is the strongest fixed strategy (Tanaka 1996 for 4 of 10). A depth distribution seen before is a cycle,
reported as such. The chain is written to build/race/; the tree of the chain whose lowest score against
the others is highest is shipped as strategy/trees/race-GAME-strongest.json (the fixed point when there is one).
The win rates of each tree against the others, under both rules, are printed (and saved with --write).
"""

from __future__ import annotations

import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from benchlib import write_table  # noqa: E402

from strategy.cli.options import Parser  # noqa: E402
from strategy.files import write_atomic  # noqa: E402
from strategy.tree.race import outcome  # noqa: E402
from strategy.tree.shipped import write_manifest  # noqa: E402

MAX_STEPS = 8


def stem(game: str) -> str:
    return game.replace(":", "-")


def depths(path: Path) -> list[int]:
    return orjson.loads(path.read_bytes())["stats"]["depth_counts"]


def best_response(game: str, against: Path, out: Path) -> tuple[Fraction, float]:
    start = time.perf_counter()
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "strategy",
            "solve",
            "--game",
            game,
            "--objective",
            "win",
            "--against",
            str(against),
            "--quiet",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if r.returncode:
        raise SystemExit(f"{game}: best response to {against.name} failed: {r.stderr.strip()}")
    score = Fraction(orjson.loads(out.read_bytes())["generator"]["proven"]["score"])
    return score, time.perf_counter() - start


def chain(game: str) -> tuple[list[Path], str]:
    """The sequence of trees and how it ended."""
    trees = [ROOT / "strategy" / "trees" / f"{stem(game)}-total.json"]
    seen = [depths(trees[0])]
    for k in range(1, MAX_STEPS + 1):
        out = ROOT / "build" / "race" / f"race-{stem(game)}-response-{k}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        score, took = best_response(game, trees[-1], out)
        print(f"{game}: best response {k} to {trees[-1].name} scores {score} = {float(score):.6f} ({took:.1f} s)")
        if score <= Fraction(1, 2):
            out.unlink()
            return trees, f"{trees[-1].name} cannot be beaten (its best response scores {float(score):.6f})"
        d = depths(out)
        if d in seen:
            return trees + [out], f"cycle: response {k} repeats the depth counts of {trees[seen.index(d)].name}"
        trees.append(out)
        seen.append(d)
    return trees, f"no fixed point within {MAX_STEPS} steps"


def main() -> None:
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument("games", nargs="*", default=["bulls:3x10", "bulls:4x10"], metavar="GAME")
    parser.add_argument("--write", action="store_true", help="save the win-rate tables in tools/results/")
    args = parser.parse_args()
    for game in args.games:
        trees, verdict = chain(game)
        print(f"{game}: {verdict}")
        strongest = max(
            trees,
            key=lambda a: (
                min((outcome(depths(a), depths(b), "tie").score for b in trees if b != a), default=Fraction(1, 2)),
                trees.index(a),
            ),
        )
        shipped = ROOT / "strategy" / "trees" / f"race-{stem(game)}-strongest.json"
        write_atomic(shipped, strongest.read_bytes())
        write_manifest(shipped.parent)  # the player trusts a shipped tree only with its digest there
        print(f"{game}: {strongest.name} shipped as {shipped.relative_to(ROOT)}")
        rows = []
        for a in trees:
            for b in trees:
                if a == b:
                    continue
                tie = outcome(depths(a), depths(b), "tie")
                first = outcome(depths(a), depths(b), "first")
                second = outcome(depths(b), depths(a), "first")
                rows.append(
                    [
                        a.name,
                        b.name,
                        f"{float(tie.a_wins):.4f} / {float(tie.draw):.4f} / {float(tie.b_wins):.4f}",
                        f"{float(tie.score):.4f}",
                        f"{float(first.a_wins):.4f}",
                        f"{float(second.b_wins):.4f}",
                    ]
                )
                print(f"  {a.name:40} vs {b.name:40} tie score {float(tie.score):.4f}")
        if args.write:
            write_table(
                f"race-{stem(game)}",
                f"Race strategies for {game} (tools/race_strongest.py)",
                [
                    "tree A",
                    "tree B",
                    "rule tie: A wins / draw / B wins",
                    "A's score (tie)",
                    "rule first: A wins asking first",
                    "A wins asking second",
                ],
                rows,
                f"{verdict}. Scores: win 1, draw 1/2, exact over every pair of secrets.",
            )


if __name__ == "__main__":
    sys.exit(main())
