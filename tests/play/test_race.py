"""The race: exact outcomes of fixed trees, best responses and "most within k" trees, checked by brute force;
the adaptive player does not throw away a race it can win."""

from __future__ import annotations

import functools
import itertools
from fractions import Fraction

import pytest

from strategy.build.greedy import build
from strategy.engine.table import game_table
from strategy.play.race import AdaptiveRacer, SeedNumeronAI
from strategy.play.walker import Walker
from strategy.rules import feedback, parse_game
from strategy.search.objectives import win_costs
from strategy.tree.format import TreeDoc
from strategy.tree.race import outcome
from strategy.tree.verify import measure

from ..conftest import TREES, import_tool, run_cli, solve


def tree_of(spec: str, how: str) -> dict:
    gt = game_table(parse_game(spec))
    if how == "optimal":
        return solve(gt, "total", progress=False).tree
    return build(gt, how, progress=False)


def questions_to_find(walker: Walker, secret) -> list[str]:
    """The questions a tree asks, answered truthfully by `secret`, until it is found (walked question by question)."""
    game, history = walker.game, []
    while not history or history[-1][1] != game.format_answer(game.win):
        guess = walker.next_guess(history)
        history.append((guess, game.format_answer(feedback(secret, game.read_code(guess)))))
        assert len(history) <= 20
    return [q for q, _ in history]


def play_race(game, asks_a: list[str], asks_b: list[str], sa, sb, rule: str) -> str:
    """One race, question by question: A's questions hunt B's secret sb, B's hunt sa; A asks first."""
    for r in range(40):
        found = []
        for side, (asks, target) in enumerate(((asks_a, sb), (asks_b, sa))):
            found.append(feedback(target, game.read_code(asks[r])) == game.win)
            if rule == "first" and found[side]:
                return "a" if side == 0 else "b"
        if rule == "tie" and any(found):
            return "draw" if all(found) else ("a" if found[0] else "b")
    raise AssertionError("no one won")


@pytest.mark.parametrize("rule", ["tie", "first"])
def test_race_arithmetic_matches_playing_every_pair(rule):
    game = parse_game("bulls:3x6")
    a, b = tree_of("bulls:3x6", "optimal"), tree_of("bulls:3x6", "minimax")
    codes = game.codes()
    walkers = Walker(TreeDoc(game, a)), Walker(TreeDoc(game, b))
    asks = [{s: questions_to_find(w, s) for s in codes} for w in walkers]
    counts = {"a": 0, "draw": 0, "b": 0}
    for sa, sb in itertools.product(codes, codes):
        counts[play_race(game, asks[0][sb], asks[1][sa], sa, sb, rule)] += 1
    n = len(codes) ** 2
    exact = outcome(measure(game, a)[0].depth_counts, measure(game, b)[0].depth_counts, rule)
    assert (exact.a_wins, exact.draw, exact.b_wins) == (
        Fraction(counts["a"], n),
        Fraction(counts["draw"], n),
        Fraction(counts["b"], n),
    )


def brute_force_cost(spec: str, cost: list[int]) -> int:
    """Least total cost (cost[r] per secret found at question r, last value repeated) over all trees, any probe."""
    game = parse_game(spec)
    codes = game.codes()
    answer = [[feedback(s, p) for s in codes] for p in codes]

    def c(r: int) -> int:
        return cost[r] if r < len(cost) else cost[-1]

    @functools.lru_cache(maxsize=None)
    def value(S: tuple, d: int) -> int:
        if len(S) == 1:
            return c(d + 1)
        best = None
        for p in range(len(codes)):
            parts: dict = {}
            hit = 0
            for s in S:
                if answer[p][s] == game.win:
                    hit = c(d + 1)
                else:
                    parts.setdefault(answer[p][s], []).append(s)
            if any(len(v) == len(S) for v in parts.values()):
                continue
            total = hit + sum(value(tuple(v), d + 1) for v in parts.values())
            best = total if best is None else min(best, total)
        return best

    return value(tuple(range(len(codes))), 0)


@pytest.mark.parametrize("spec", ["bulls:2x5", "bulls:3x4", "mastermind:2x3"])
@pytest.mark.parametrize("rule,seat", [("tie", "first"), ("first", "first"), ("first", "second")])
def test_best_response_is_optimal_by_brute_force(spec, rule, seat):
    gt = game_table(parse_game(spec))
    b = build(gt, "minimax", progress=False)
    depths_b = measure(gt.game, b)[0].depth_counts
    report = solve(gt, "win", against=depths_b, rule=rule, seat=seat if rule == "first" else None, progress=False)
    assert report.proven["cost"] == brute_force_cost(spec, win_costs(depths_b, rule, seat))
    got = outcome(measure(gt.game, report.tree)[0].depth_counts, depths_b, rule if seat == "first" else "first")
    if rule == "tie":
        assert got.score == Fraction(report.proven["score"])


@pytest.mark.slow
@pytest.mark.parametrize("spec,k", [("bulls:3x5", 3), ("bulls:2x6", 3), ("mastermind:2x3", 2), ("bulls:2x6", 4)])
def test_within_k_by_brute_force(spec, k):
    gt = game_table(parse_game(spec))
    report = solve(gt, "within", max_depth=k, progress=False)
    missed = brute_force_cost(spec, [0] * (k + 1) + [1])
    assert report.proven["missed"] == missed
    stats = measure(gt.game, report.tree)[0]
    assert sum(stats.depth_counts[: k + 1]) == gt.size - missed
    worst = solve(gt, "worst", progress=False).proven["worst"]
    if k >= worst:
        assert report.proven["found"] == gt.size


def verify_depths(doc: TreeDoc) -> list[int]:
    """Depth counts walked over every secret (not the file's own figures)."""
    return measure(doc.game, doc.root)[0].depth_counts


@pytest.mark.slow
@pytest.mark.parametrize("stem", ["bulls-3x10", "bulls-4x10"])
def test_the_shipped_strongest_tree_cannot_be_beaten(stem):
    """No fixed tree scores above 1/2 against it (its best response scores exactly 1/2: Tanaka's "strongest"
    for 4 of 10), and it beats the minimum-total tree it was the best response to."""
    from strategy.tree.format import load

    strongest = load(TREES / f"race-{stem}-strongest.json")
    depths = verify_depths(strongest)
    report = solve(game_table(strongest.game), "win", against=depths, rule="tie", progress=False)
    assert Fraction(report.proven["score"]) == Fraction(1, 2)
    total = verify_depths(load(TREES / f"{stem}-total.json"))
    assert strongest.generator["proven"]["against_depth_counts"] == total
    assert outcome(depths, total, "tie").score > Fraction(1, 2)


def test_the_adaptive_player_takes_a_certain_win_and_gambles_when_behind():
    walker = Walker.load(TREES / "bulls-3x10-total.json")
    game = walker.game
    racer = AdaptiveRacer(walker)
    history = [("012", "0,0"), ("345", "2,0"), ("367", "1,0")]
    cands = walker.narrow(history)
    assert len(cands) > 1
    # the person found my secret this round: only a candidate can still draw
    q = racer.choose(history, cands, [("987", "3,0")], [game.read_code("987")], they_won=True)
    assert game.read_code(q) in cands
    # one candidate left and the person far behind: ask it, a certain win
    one = [cands[0]]
    history_one = history + [(game.format_code(cands[1]), game.format_answer(feedback(cands[0], cands[1])))]
    q = racer.choose(history_one, walker.narrow(history_one), [], game.codes(), they_won=False)
    assert q == game.format_code(one[0])


@pytest.mark.slow
def test_race_command_and_best_response_cli(tmp_path):
    out = tmp_path / "br.json"
    r = run_cli(
        "solve",
        "--game",
        "bulls:3x6",
        "--objective",
        "win",
        "--against",
        str(TREES / "bulls-3x10-total.json"),
        "--quiet",
        "-o",
        str(out),
    )
    assert r.returncode == 2 and "tree is for bulls:3x10, not bulls:3x6" in r.stderr
    tree = tmp_path / "mm.json"
    assert run_cli("build", "--game", "bulls:3x6", "--strategy", "minimax", "--quiet", "-o", str(tree)).returncode == 0
    r = run_cli("solve", "--game", "bulls:3x6", "--objective", "win", "--against", str(tree), "--quiet", "-o", str(out))
    assert r.returncode == 0 and "proved: the best response scores" in r.stderr, r.stderr
    score = r.stderr.split("scores ")[1].split(" =")[0]
    r = run_cli("race", str(out), str(tree), "--json")
    import json

    assert json.loads(r.stdout)["a_score"]["fraction"] == score
    r = run_cli("solve", "--game", "bulls:3x6", "--objective", "within", "--quiet", "-o", str(out))
    assert r.returncode == 2 and "needs --max-depth" in r.stderr


@pytest.mark.parametrize("spec", ["bulls:3x6", "mastermind:3x4", "bulls:3x6:nz"])
def test_league_seed_player_chooses_what_the_seed_ai_chooses(spec):
    """The league's seed player (answer table, scores of the second question read through a relabelling of
    the symbols) picks exactly the code of the seed AI's plain loop, after every first question and answer."""
    league = import_tool("race_league")
    game = parse_game(spec)
    fast = league.SeedPlayer(game)
    plain = SeedNumeronAI(game)
    codes = game.codes()
    for first in codes[:: max(1, len(codes) // 12)]:
        parts: dict = {}
        for c in codes:
            parts.setdefault(feedback(c, first), []).append(c)
        for answer, cands in parts.items():
            if len(cands) < 3:
                continue
            fast.history = [(game.format_code(first), game.format_answer(answer))]
            chosen = codes[fast.best(cands)]
            assert chosen == plain.choose(1, cands, False), (first, answer)
            later = [c for c in cands if feedback(c, chosen) == feedback(cands[-1], chosen)]
            if len(later) >= 3:  # a third question: scored directly
                fast.history = fast.history + [(game.format_code(chosen), "")]
                assert codes[fast.best(later)] == plain.choose(2, later, False)
