"""Benchmark `strategy analyse` and the hint: every second question of bulls 4 of 10 valued exactly, and how long a
hint takes at random positions of the classic games.

Usage: python tools/bench_analyse.py [--hints N] [--write]

Second questions: for each answer to the first question 0123 of bulls:4x10 but the win, every inequivalent second
question valued exactly (`search.analyse`, no budget), in this process, one after the other with one analyser (its
transposition table serves the later positions), compiled before the clock starts. Hints: N random positions of each
classic game (a random secret; each question the tree's, or one time in two off its path a random code), the hint
as `strategy play` gives it (`play.advice`, its one-second budget, the tree's own continuation as the alternative),
the engine loaded before the clock starts (a session loads it while the person types); the longest and the median,
and how often the hint was proven best. --write saves both tables in tools/results/ (the README includes them).
"""

from __future__ import annotations

import random
import statistics
import sys
import time

from benchlib import write_table

from strategy.cli.options import Parser, int_in

HINT_GAMES = ("bulls-3x10-total", "mastermind-4x6-total", "bulls-4x10-total")  # shipped trees, by name


def second_questions() -> tuple[list[list[str]], str]:
    from strategy.engine.table import game_table
    from strategy.rules import parse_game
    from strategy.search.analyse import Analyser, position_from_history

    gt = game_table(parse_game("bulls:4x10"))
    game = gt.game
    analyser = Analyser(gt)
    rows, total, positions = [], 0.0, 0
    first = gt.index(game.read_code("0123"))
    answers = sorted({int(c) for c in gt.table[first]} - {gt.win}, key=lambda c: gt.answers[c], reverse=True)
    for c in answers:
        pos = position_from_history(gt, [("0123", gt.answer_str(c))])
        start = time.perf_counter()
        analysis = analyser.analyse(pos, lines=False)
        seconds = time.perf_counter() - start
        if not analysis.complete:
            raise SystemExit(f"0123:{gt.answer_str(c)}: the analysis is not complete")
        total += seconds
        positions += 1
        best = analysis.best
        row = [
            gt.answer_str(c),
            str(pos.n),
            str(analysis.classes),
            f"{best.code} ({best.lower[0]})",
            f"{analysis.rows[-1].code} ({analysis.rows[-1].lower[0]})",
            f"{seconds:.2f} s",
        ]
        print(" | ".join(row), flush=True)
        rows.append(row)
    sentence = (
        f"{positions} positions, {sum(int(r[2]) for r in rows)} questions valued exactly in {total:.1f} s: "
        f"{total / positions:.2f} s a position."
    )
    print(sentence)
    return rows, sentence


def random_positions(walker, rng: random.Random, count: int):
    """Histories of 0 to 3 questions answered by a random secret, each the tree's or (one time in two) a random code."""
    from strategy.rules import feedback

    game = walker.game
    codes = game.codes()
    for _ in range(count):
        secret, history = rng.choice(codes), []
        for _ in range(rng.randint(0, 3)):
            q = (
                walker.tree_option(history, walker.narrow(history))[0]
                if rng.random() < 0.5
                else game.format_code(rng.choice(codes))
            )
            a = game.format_answer(feedback(secret, game.read_code(q)))
            if a == game.format_answer(game.win):
                break
            history.append((q, a))
        yield history


def hints(count: int) -> list[list[str]]:
    from strategy.play.advice import Advisor
    from strategy.play.walker import Walker

    rows = []
    from strategy.tree import shipped

    for name in HINT_GAMES:
        walker = Walker.load(shipped.path_of(name))
        advisor = Advisor(walker.game)
        start = time.perf_counter()
        advisor.analyser()
        load = time.perf_counter() - start
        times, proven = [], 0
        for history in random_positions(walker, random.Random(1), count):
            cands = walker.narrow(history)
            start = time.perf_counter()
            hint = advisor.hint(history, lambda: walker.tree_option(history, cands))
            times.append(time.perf_counter() - start)
            proven += hint["proven_best"]
        row = [
            walker.game.spec,
            str(count),
            f"{max(times):.2f} s",
            f"{statistics.median(times):.3f} s",
            f"{proven} of {count}",
            f"{load:.2f} s",
        ]
        print(" | ".join(row), flush=True)
        rows.append(row)
    return rows


def main() -> int:
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--hints",
        type=int_in(0, 10_000, "--hints"),
        default=100,
        metavar="N",
        help="random positions per game for the hint's time (default 100; 0: none)",
    )
    parser.add_argument("--write", action="store_true", help="save the tables in tools/results/")
    args = parser.parse_args()
    from strategy.warmup import warm_up

    warm_up("analyse")
    hint_rows = hints(args.hints) if args.hints else []
    rows, sentence = second_questions()
    if args.write:
        write_table(
            "analyse",
            "Every second question of bulls 4 of 10 valued exactly (tools/bench_analyse.py)",
            ["answer to 0123", "secrets", "questions", "best (total)", "worst (total)", "time"],
            rows,
            f"One process, one analyser for every position, compiled before the clock starts: {sentence} "
            "Totals count further questions from the second one, the last included.",
        )
    if args.write and hint_rows:
        write_table(
            "analyse-hint",
            "The hint at random positions of the classic games (tools/bench_analyse.py)",
            ["game", "positions", "longest", "median", "proven best", "engine load"],
            hint_rows,
            "As `strategy play` gives it: exact when the search finishes within its one-second budget, else "
            "the least proven upper bound of the engine's best candidate and the tree's own continuation, "
            "with bounds; the engine (NumPy, numba, the feedback table) loaded before the clock starts, as a "
            "session loads it while the person types. Random positions: a random secret, 0 to 3 questions, "
            "each the tree's or, one time in two, a random code.",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
