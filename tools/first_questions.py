"""First-question tables: every inequivalent first question of each solved game, with its exact value.

Usage: python tools/first_questions.py [--budget SECONDS] [--game SPEC ...] [--write]

For every game with a shipped least-total tree (strategy/trees/*-total, any probe) of at most 10,000 codes, or the
--game ones (of any size): `strategy analyse` at the empty history (search.analyse), one process, each game within --budget
seconds. A first question whose search does not finish keeps proven bounds: the lower one raised by two levels of
lookahead over its parts (search.lookahead, sets of up to 200 secrets searched exactly), the upper one the cheaper of
a greedy tree asking it first and, for the shipped tree's first question, that tree (its cost as the game prices it).
The shipped tree's first question is marked; its value must equal the tree's total (tests/tools check it). --write
saves the table in tools/results/first-questions.md (the README includes it), keeping the games this run did not
compute.
"""

from __future__ import annotations

import sys
import threading
import time

from benchlib import merged_rows, write_table

from strategy.cli.options import Parser, positive_seconds

MAX_CODES = 10_000
LOOKAHEAD_LEVELS = 2
LOOKAHEAD_EXACT_BELOW = 200
LOOKAHEAD_SHARE = 0.25  # of the budget, after the analysis, for the lookahead bounds of the questions left open


def solved_games(limit: int | None = MAX_CODES) -> list[tuple[str, str]]:
    """(game spec, shipped tree's name) of every shipped least-total tree (any probe) of at most `limit` codes,
    smallest game first."""
    from strategy.tree import format as tree_io
    from strategy.tree import shipped

    out = []
    for name in shipped.names():
        if not name.endswith("-total") or name.endswith("-consistent-total"):
            continue
        doc = tree_io.load(shipped.path_of(name))
        if (
            doc.objective == "total"
            and not doc.generator.get("consistent_only")
            and (limit is None or doc.game.count() <= limit)
        ):
            out.append((doc.game.count(), doc.game.spec, name))
    return [(spec, name) for _, spec, name in sorted(out)]


def lookahead_lower(gt, pos, probe: int, seconds: float) -> int | None:
    """A proven lower bound of the first question's total: the question, plus each part's lookahead bound (None
    if the time runs out first)."""
    import numpy as np

    from strategy.engine.table import split
    from strategy.interrupts import Stopped
    from strategy.search import objectives
    from strategy.search.lookahead import Lookahead

    look = Lookahead(gt, objectives.total(), exact_below=LOOKAHEAD_EXACT_BELOW)
    timer = threading.Timer(seconds, look.request_stop)
    timer.start()
    try:
        members, starts = split(gt.table, pos.S, probe, len(gt.answers))
        b = look.engine.branching(pos.S)
        history = np.array([probe], dtype=np.int64)
        total = 1 if starts[gt.win + 1] > starts[gt.win] else 0
        for c in range(len(gt.answers)):
            if c != gt.win and starts[c + 1] > starts[c]:
                total += look.bound(members[starts[c] : starts[c + 1]], 1, b, history, LOOKAHEAD_LEVELS)
        return total
    except Stopped:
        return None
    finally:
        timer.cancel()


def first_questions(spec: str, tree_name: str, budget: float) -> tuple[list[list[str]], str]:
    """The table's rows for one game, and a sentence for its note."""
    from strategy.engine.table import game_table
    from strategy.rules import parse_game
    from strategy.search.analyse import Analyser, class_representatives, position_from_history
    from strategy.tree import shipped
    from strategy.tree.verify import verify_file

    gt = game_table(parse_game(spec))
    doc, stats = verify_file(shipped.path_of(tree_name))
    pos = position_from_history(gt, [])
    start = time.perf_counter()
    analysis = Analyser(gt).analyse(pos, deadline=start + budget * (1 - LOOKAHEAD_SHARE), lines=False)
    tree_class = int(class_representatives(pos)[gt.index(gt.game.read_code(doc.root["guess"]))])
    open_rows = [r for r in analysis.rows if not r.exact]
    for row in open_rows:
        left = start + budget - time.perf_counter()
        if left > 0:
            bound = lookahead_lower(gt, pos, row.probe, left / max(1, len(open_rows)))
            if bound is not None and bound > row.lower[0]:
                row.lower = (bound,)
        if row.probe == tree_class and (row.upper is None or stats.total < row.upper[0]):
            row.upper = (stats.total,)  # the shipped tree, as the game prices it
    seconds = time.perf_counter() - start
    rows = [r for r in analysis.rows]
    rows.sort(key=lambda r: (r.lower, r.upper is None, r.upper or (), r.probe))
    least = min(r.lower for r in rows)
    proven_best = rows[0].upper is not None and all(rows[0].upper <= r.lower for r in rows[1:])
    out = []
    for row in rows:
        lo, hi = row.lower[0], None if row.upper is None else row.upper[0]
        exact = hi == lo
        value = f"{lo}" if exact else f"[{lo}, {'?' if hi is None else hi}]"
        average = f"{lo / pos.n:.4f}" if exact else f"[{lo / pos.n:.4f}, {'?' if hi is None else f'{hi / pos.n:.4f}'}]"
        above = f"+{lo - rows[0].lower[0]}" if exact and proven_best and rows[0].upper == rows[0].lower else ""
        sizes = [k for _, k in row.parts]
        note = f"`{tree_name}` asks it" if row.probe == tree_class else ""
        out.append(
            [
                spec,
                row.code,
                str(row.class_size),
                "yes" if row.may_be_secret else "no",
                value,
                average,
                above,
                f"{len(sizes)}, largest {sizes[0]}",
                note,
            ]
        )
    exact_rows = sum(1 for r in rows if r.exact)
    sentence = (
        f"{spec}: {exact_rows} of {len(rows)} exact in {seconds:.0f} s"
        + ("" if exact_rows == len(rows) else f" (budget {budget:g} s; the others bounded)")
        + (f"; least lower bound {least[0]}" if not proven_best else "")
    )
    return out, sentence


def main() -> int:
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--budget",
        type=positive_seconds,
        default=1800.0,
        metavar="SECONDS",
        help="the longest a game's table may take (default 1800)",
    )
    parser.add_argument(
        "--game",
        action="append",
        default=[],
        metavar="SPEC",
        help="only this game, of any size (repeatable; its shipped least-total tree is used)",
    )
    parser.add_argument("--write", action="store_true", help="save the table in tools/results/")
    args = parser.parse_args()
    games = solved_games()
    if args.game:
        games = solved_games(None)
        unknown = [g for g in args.game if g not in dict(games)]
        if unknown:
            raise SystemExit(f"first_questions.py: no shipped least-total tree for {', '.join(unknown)}")
        games = [g for g in games if g[0] in args.game]
    from strategy.warmup import warm_up

    warm_up("analyse")
    rows, notes = [], []
    for spec, tree_name in games:
        got, sentence = first_questions(spec, tree_name, args.budget)
        for row in got:
            print(" | ".join(row), flush=True)
        print(sentence, flush=True)
        rows += got
        notes.append(sentence)
    if args.write:
        rows, kept = merged_rows("first-questions", rows, 2)
        write_table(
            "first-questions",
            "Every first question of the solved games (tools/first_questions.py)",
            [
                "game",
                "first question",
                "class",
                "may be the secret",
                "total",
                "average",
                "vs best",
                "parts",
                "shipped tree",
            ],
            rows,
            "Value: the least total number of questions over every secret of a tree that asks this question "
            "first (the average per secret); the least one is the game's optimum. Class: the first questions "
            "equivalent to it under the game's symmetries. [lower, upper]: proven bounds where the search "
            "did not finish within the budget (the lower by search and lookahead, the upper a complete tree's "
            "cost). One process on this project's machine: "
            + "; ".join(notes)
            + "."
            + kept
            + " Koyama and Lai (1993) proved 5625 the optimum of Mastermind 4x6, first question 1123 (0012 "
            "here: colours are relabelled), and 5626 within five questions; their values for the other first "
            "questions were not in the sources available to us (the partition sizes of the five first "
            "questions, published by Serkan Gür, match ours: tests/tools/test_first_questions.py).",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
