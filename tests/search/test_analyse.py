"""Exact values of every question at a position (`strategy analyse`), against the solve, a brute force and the tree."""

from __future__ import annotations

import functools
import json
import random
import time

import numpy as np
import pytest

from strategy.engine.symmetry import canonical_probes, position_perms
from strategy.engine.table import game_table
from strategy.rules import feedback, parse_game
from strategy.search.analyse import (
    Analyser,
    PositionError,
    class_representatives,
    parse_history,
    position_from_history,
    position_from_secrets,
)

from ..conftest import TREES, run_cli, solve


@functools.lru_cache(maxsize=None)
def table(spec: str):
    return game_table(parse_game(spec))


def brute_values(spec: str, S: tuple[int, ...]) -> dict[int, int]:
    """Every question's value at the set S (code indices) by plain recursion over every code of the game, with no
    bound and no symmetry: the least total of further questions, this one included; None for a question that
    learns nothing (it would only repeat the set)."""
    gt = table(spec)
    codes = [tuple(int(x) for x in c) for c in gt.codes]
    win = (gt.game.length, 0)

    @functools.lru_cache(maxsize=None)
    def best(s: frozenset) -> int:
        return min(v for v in (question(s, p) for p in range(len(codes))) if v is not None)

    def question(s: frozenset, p: int) -> int | None:
        parts: dict = {}
        for x in s:
            parts.setdefault(feedback(codes[x], codes[p]), []).append(x)
        if len(parts) == 1 and win not in parts:
            return None
        return len(s) + sum(best(frozenset(part)) for a, part in parts.items() if a != win)

    s = frozenset(S)
    return {p: question(s, p) for p in range(len(codes))}


def random_history(gt, rng: random.Random, questions: int) -> list[tuple[str, str]]:
    """Random questions answered by a random secret (so the answers never contradict)."""
    game = gt.game
    secret = gt.codes[rng.randrange(gt.size)].tolist()
    out = []
    for _ in range(questions):
        q = gt.codes[rng.randrange(gt.size)].tolist()
        a = feedback(secret, q)
        if a == game.win:
            break
        out.append((game.format_code(q), game.format_answer(a)))
    return out


@pytest.mark.parametrize("spec", ["bulls:3x6", "mastermind:3x4", "mastermind:4x4"])
def test_first_question_table_holds_the_solved_optimum(spec):
    gt = table(spec)
    analysis = Analyser(gt).analyse(position_from_history(gt, []))
    optimum = solve(gt, "total").proven["total"]
    assert analysis.complete and analysis.best is not None
    assert analysis.best.lower == (optimum,) == analysis.rows[0].upper
    assert sum(r.class_size for r in analysis.rows) == gt.size  # the classes cover every code once
    assert [r.lower for r in analysis.rows] == sorted(r.lower for r in analysis.rows)
    worst = Analyser(gt, "worst").analyse(position_from_history(gt, []))
    proven = solve(gt, "worst").proven
    assert worst.best is not None and worst.best.lower == (proven["worst"], proven["total"])


@pytest.mark.parametrize(
    "spec,seed", [("bulls:3x5", 1), ("bulls:3x5", 2), ("mastermind:3x3", 3), ("mastermind:2x4", 4)]
)
def test_every_value_matches_a_brute_force(spec, seed):
    """Every question of a random position, valued with the history's symmetries, against plain recursion over
    every code (no symmetry, no bound): the classes hold equal values, and the idle questions cost one more per
    secret than the best."""
    gt = table(spec)
    rng = random.Random(seed)
    for _ in range(3):
        pos = position_from_history(gt, random_history(gt, rng, rng.randint(0, 2)))
        if pos.n > 24:
            continue
        brute = brute_values(spec, tuple(pos.S.tolist()))
        best = min(v for v in brute.values() if v is not None)
        reps = class_representatives(pos)
        analysis = Analyser(gt).analyse(pos)
        assert analysis.complete and analysis.best.lower == (best,)
        for row in analysis.rows:
            members = np.flatnonzero(reps == row.probe)
            assert len(members) == row.class_size
            for p in members:
                assert (brute[p] if brute[p] is not None else best + pos.n) == row.lower[0], (pos.history_text(), p)


@pytest.mark.parametrize("spec,seed", [("bulls:3x5", 5), ("mastermind:3x3", 6)])
def test_a_set_given_as_such_keeps_no_symmetry(spec, seed):
    """Secrets drawn at random are no history's candidates: the analysis must value them without the game's
    symmetries (a brute force over every code agrees, question by question)."""
    gt = table(spec)
    rng = random.Random(seed)
    for size in (3, 5, 8):
        S = sorted(rng.sample(range(gt.size), size))
        pos = position_from_secrets(gt, [gt.code_str(i) for i in S])
        brute = brute_values(spec, tuple(S))
        best = min(v for v in brute.values() if v is not None)
        analysis = Analyser(gt).analyse(pos)
        assert analysis.best.lower == (best,)
        reps = class_representatives(pos)
        for row in analysis.rows:
            for p in np.flatnonzero(reps == row.probe):
                assert (brute[p] if brute[p] is not None else best + pos.n) == row.lower[0]


def test_classes_are_the_engines_canonical_questions(mm46):
    pos = position_from_history(mm46, parse_history("0012:0,1 1334:1,1"))
    reps = class_representatives(pos)
    game = mm46.game
    answers = mm46.table[pos.probes, pos.S[0]].astype(np.int64)
    canonical = canonical_probes(
        mm46.codes,
        mm46.masks,
        np.arange(mm46.size, dtype=np.int32),
        pos.probes,
        answers,
        position_perms(game.length, False),
        game.symbols,
        False,
        pos.S,
    )
    assert sorted(set(reps.tolist())) == sorted(canonical.tolist())
    assert all(reps[r] == r for r in canonical)


def subtree_at(tree: dict, history: list[tuple[str, str]]) -> dict:
    node = tree
    for q, a in history:
        assert node["guess"] == q
        node = node["next"][a]
    return node


def test_random_positions_of_the_optimal_tree(mm46):
    """Along the shipped optimal tree, the best question's value is the optimal subtree's total there."""
    from strategy.play.walker import Walker
    from strategy.tree.verify import measure

    walker = Walker.load(TREES / "mastermind-4x6-total.json")
    rng = random.Random(7)
    analyser = Analyser(mm46)
    for _ in range(6):
        secret = mm46.codes[rng.randrange(mm46.size)].tolist()
        history = []
        for _ in range(rng.randint(1, 2)):
            q = walker.next_guess(history)
            a = mm46.game.format_answer(feedback(secret, mm46.game.read_code(q)))
            if a == "4,0":
                break
            history.append((q, a))
        pos = position_from_history(mm46, history)
        node = subtree_at(walker.root, history)
        stats, _ = measure(mm46.game, node, [tuple(c) for c in mm46.codes[pos.S].tolist()])
        analysis = analyser.analyse(pos, top=1)
        assert analysis.best is not None and analysis.best.lower == (stats.total,), history


def test_grade_a_move(mm46):
    pos = position_from_history(mm46, [])
    grade = Analyser(mm46).grade(pos, "1234")
    assert grade.exact and grade.row.lower == (5673,) and grade.row.canonical == "0123"
    assert grade.best.best.code == "0012" and grade.cost() == ((48,), (48,))
    assert Analyser(mm46).grade(pos, "4455").cost() == ((77,), (77,))  # equivalent to 0011
    best = Analyser(mm46).grade(pos, "0012")
    assert best.cost() == ((0,), (0,)) and best.row.canonical is None


def test_a_budget_gives_bounds_around_the_values(bulls4):
    """Stopped by a budget, a question keeps proven bounds: the exact values (from a run with no budget on the
    same smaller position) lie between them."""
    pos = position_from_history(bulls4, parse_history("0123:2,0"))
    exact = {r.code: r.lower for r in Analyser(bulls4).analyse(pos, lines=False).rows}
    bounded = Analyser(bulls4).analyse(pos, deadline=time.perf_counter() + 0.02, lines=False)
    assert any(not row.exact for row in bounded.rows) and not bounded.complete
    for row in bounded.rows:
        assert row.lower <= exact[row.code]
        assert row.upper is None or exact[row.code] <= row.upper
    assert bounded.best_lower <= min(exact.values())
    exact = {r.code: r.lower for r in Analyser(bulls4, "worst").analyse(pos, lines=False).rows}
    bounded = Analyser(bulls4, "worst").analyse(pos, deadline=time.perf_counter() + 0.02, lines=False)
    assert any(not row.exact for row in bounded.rows)
    for row in bounded.rows:  # each part of a bound holds by itself (see Analyser._question_value)
        assert row.lower[0] <= exact[row.code][0] and row.lower[1] <= exact[row.code][1]
        assert row.upper is None or exact[row.code][0] <= row.upper[0]


@pytest.mark.parametrize(
    "history,message",
    [
        ("0123:0,0 0123:1,0", "no secret gives every answer so far (questions 1 to 2 contradict each other)"),
        ("01234:0,0", "code '01234' must have 4 symbols"),
        ("0023:0,0", "code '0023' repeats a symbol"),
        ("0123:3,1", "answer 3,1 is impossible in bulls:4x10"),
        ("0123:4,0 4567:0,0", "question 1 (0123) was answered all hits: the game ended there"),
        ("0123:4,0", "the game is over: 0123 was answered all hits"),
        ("0123", "write CODE:ANSWER"),
    ],
)
def test_bad_histories_get_one_line(history, message):
    r = run_cli("analyse", "--game", "bulls:4x10", "--history", history)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and message in r.stderr and "Traceback" not in r.stderr


def test_an_answer_no_secret_gives_to_that_question(mm46):
    with pytest.raises(PositionError, match="no secret answers 0000 with 1,1"):
        position_from_history(mm46, [("0000", "1,1")])


@pytest.mark.slow
def test_cli_table_move_and_json(tmp_path):
    r = run_cli("analyse", "--game", "mastermind:4x6", "--top", "2")
    assert r.returncode == 0, r.stderr
    assert "0012" in r.stdout and "5625" in r.stdout and "4.3403" in r.stdout and "0000" not in r.stdout
    r = run_cli("analyse", "--game", "mastermind:4x6", "--move", "1122", "--json")
    doc = json.loads(r.stdout)
    assert doc["question"]["total"] == 5702 and doc["question"]["equivalent_to"] == "0011"
    assert doc["best"]["code"] == "0012" and doc["cost"] == {
        "exact": True,
        "lower": {"total": 77},
        "upper": {"total": 77},
    }
    secrets = tmp_path / "secrets.txt"
    secrets.write_text("# three secrets\n0123\n\n3210\n0112\n")
    r = run_cli("analyse", "--game", "mastermind:4x6", "--secrets", str(secrets), "--json")
    doc = json.loads(r.stdout)
    assert doc["secrets"] == 3 and doc["symmetric"] is False and doc["questions"][0]["total"] == 5
    secrets.write_text("0123\n0123\n")
    r = run_cli("analyse", "--game", "mastermind:4x6", "--secrets", str(secrets))
    assert r.returncode == 2 and "line 2: 0123 is on line 1 already" in r.stderr


def test_a_question_that_learns_nothing_costs_one_more_per_secret():
    """0123 again after 0123:0,1 splits nothing (the engine's scan keeps it on some sets): the same set one question
    later, its value plus one question per secret."""
    gt = table("bulls:4x7")
    pos = position_from_history(gt, [("0123", "0,1")])
    analysis = Analyser(gt).analyse(pos, lines=False)
    again = next(r for r in analysis.rows if r.code == "0123")
    assert again.exact and again.lower == (analysis.best.lower[0] + pos.n,) and again.parts == [("0,1", pos.n)]
