"""Advice in play: the walker's question off its tree's path comes from the engine, and hints and grades in the
terminal (the protocol's are in test_protocol)."""

from __future__ import annotations

import random

import pytest

from strategy.engine.table import game_table
from strategy.play.advice import advisor_for
from strategy.play.walker import Walker
from strategy.rules import feedback
from strategy.search.analyse import Analyser, position_from_history

from ..conftest import TREES, run_cli


def test_two_secrets_off_the_tree_ask_one_of_them():
    """After questions the tree does not ask, with 2 secrets left, the tree's 1456 needs 2.00 questions on average;
    asking one of them needs 1.50 (the walker used to keep asking 1456)."""
    walker = Walker.load(TREES / "bulls-4x10-total.json")
    history = [("0123", "0,1"), ("4567", "3,0"), ("0132", "1,0")]
    assert walker.candidates(history) == ["4537", "4562"]
    assert walker.tree_option(history, walker.narrow(history)) == ("1456", 4)  # the tree's own: 2 + 2
    assert walker.next_guess(history) == "4537"
    gt = game_table(walker.game)
    grade = Analyser(gt).grade(position_from_history(gt, history), "1456")
    assert grade.exact and grade.best.best.lower == (3,) and grade.row.lower == (4,)


def off_tree_positions(walker: Walker, rng: random.Random, count: int, largest: int):
    """Random histories that leave the tree's path (a random question somewhere), answered by a random secret,
    with 3 to `largest` secrets left."""
    game = walker.game
    codes = game.codes()
    found = 0
    while found < count:
        secret = rng.choice(codes)
        history, off = [], False
        for _ in range(4):
            q = walker.next_guess(history) if rng.random() < 0.5 else game.format_code(rng.choice(codes))
            a = feedback(secret, game.read_code(q))
            if a == game.win:
                break
            off |= q != walker.node(history)[0]["guess"]
            history.append((q, game.format_answer(a)))
            cands = walker.narrow(history)
            if off and 3 <= len(cands) <= largest:
                found += 1
                yield history, cands
                break


OFF_TREE_CASES = [("bulls-3x10-total.json", 11), ("mastermind-4x6-total.json", 12)]


def off_tree_grades(tree: str, seed: int, seconds: float, monkeypatch):
    """The walker's questions at random positions off its tree's path, its off-tree search given `seconds`: each
    with the walker, the position and the engine's exact grade of the question (with no budget)."""
    walker = Walker.load(TREES / tree)
    monkeypatch.setattr(advisor_for(walker.game), "seconds", seconds)
    gt = game_table(walker.game)
    analyser = Analyser(gt)
    for history, cands in off_tree_positions(walker, random.Random(seed), 6, 60):
        question = walker.next_guess(history, cands)
        yield walker, history, cands, question, analyser.grade(position_from_history(gt, history), question)


@pytest.mark.parametrize("tree,seed", OFF_TREE_CASES)
def test_off_tree_advice_is_the_engines_best(tree, seed, monkeypatch):
    """On random positions off the tree's path, the walker's question is a best one: its exact value (the engine's,
    with no budget) is the position's optimum. The walker's search gets time enough to finish on a loaded machine
    (with the default second, a busy CI runner fell back to the tree's question: the next test's case)."""
    for _, history, _, question, grade in off_tree_grades(tree, seed, 600.0, monkeypatch):
        assert grade.exact and grade.cost() == ((0,), (0,)), (history, question)


@pytest.mark.parametrize("tree,seed", OFF_TREE_CASES)
def test_off_tree_advice_without_time_is_never_worse_than_the_tree(tree, seed, monkeypatch):
    """With no time to search, the walker's question off the path is whichever of the engine's candidate and the
    tree's continuation has the least proven total: its exact value never exceeds the tree's play from there."""
    for walker, history, cands, question, grade in off_tree_grades(tree, seed, 0.0, monkeypatch):
        option = walker.tree_option(history, cands)
        assert option is not None
        assert grade.exact and grade.row.lower[0] <= option[1], (history, question, option)


def test_defence_grades_every_question_and_gives_hints():
    """Every question graded, and advice on request; --budget gives the engine time enough to finish on a loaded
    machine (the default second is a player's, not a test runner's)."""
    r = run_cli(
        "play",
        "--defence",
        "--game",
        "bulls:3x10",
        "--secret",
        "459",
        "--budget",
        "60",
        input="012\n345\nhint\ngrade 678\n467\nanalyse 2\n459\n",
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "012 is a best question" in out and "345 is a best question" in out
    assert "hint: ask 467 (it cannot be the secret): the best question, 109 questions in total (average 3.0278)" in out
    assert "678 costs 13 questions more in total than the best (0.3611 per secret)" in out
    assert "467 is a best question" in out and "proven best: " in out


def test_a_budget_too_short_to_prove_says_so():
    """With --budget far too short to search, the hint is a candidate with proven bounds, and says within what time
    it is not proven best (the budget given, not the default)."""
    r = run_cli("play", "mastermind:4x6", "--budget", "0.001", input="1,0\nhint\nq\n")
    assert "not proven best within 0.001 s" in r.stdout, (r.stdout, r.stderr)


@pytest.mark.parametrize(
    "args,says",
    [
        (["--budget", "0"], "--budget must be a positive number of seconds, got '0'"),
        (["--budget", "nan"], "--budget must be a positive number of seconds, got 'nan'"),
        (["--all", "--budget", "5"], "--budget does not apply to --all"),
        (["--noise", "0.1", "--budget", "5"], "--budget does not apply to noisy-answer mode"),
        (["--budget", "1" + "0" * 400], "--budget must be a positive number of seconds"),
        (["--budget", "1_0"], "--budget must be a positive number of seconds, got '1_0'"),
    ],
)
def test_a_bad_budget_is_one_line(args, says):
    r = run_cli("play", "bulls:3x10", *args)
    assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) <= 2, r.stderr


@pytest.mark.parametrize(
    "args,says",
    [
        (["bulls:10x10"], "--budget does not apply to bulls:10x10: advice needs the answer table"),
        (["bulls:3x10", "--secret", "012"], "--budget does not apply to a game that plays itself"),
    ],
)
def test_a_budget_where_no_advice_can_be_asked_is_refused(args, says):
    """A budget that nothing would use is refused, as other options that do not apply are (it was ignored)."""
    r = run_cli("play", *args, "--budget", "2")
    assert r.returncode == 2 and says in r.stderr, r.stderr
    assert run_cli("play", "bulls:3x10", "--secret", "012", "--budget", "2", "--protocol").returncode == 0


def test_a_budget_is_read_whole():
    """A budget is read as typed, however long (it was cut to 30 characters: this one was read as 1 s)."""
    r = run_cli("play", "mastermind:4x6", "--budget=1.00000000000000000000000000000e-9", input="1,0\nhint\nq\n")
    assert "not proven best within 1e-09 s" in r.stdout, (r.stdout, r.stderr)
