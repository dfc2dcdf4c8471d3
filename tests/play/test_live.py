"""Live play: candidates as arrays, the chooser checked against exact values, reproducibility, limits."""

from __future__ import annotations

import json
import os
import random

import numpy as np
import pytest

from strategy.engine.table import game_table
from strategy.play.candidates import Candidates, codes_at, every
from strategy.play.live import EXACT_MAX, LiveWalker, first_classes, play_out
from strategy.play.walker import Walker
from strategy.protocol import Player
from strategy.rules import MAX_CODES, MAX_LIVE_CODES, Game, GameError, feedback, parse_game
from strategy.search.solve import solve_game
from strategy.tree.verify import measure

from ..conftest import ROOT, TREES, run_cli
from .test_protocol import close

SMALL = ["bulls:3x5", "bulls:3x5:nz", "bulls:4x6:nz", "mastermind:3x4", "mastermind:2x5", "bulls:2x3:nz"]


@pytest.mark.parametrize("spec", SMALL + ["bulls:1x1", "mastermind:1x3"])
def test_codes_in_the_games_order_with_ranks(spec):
    game = parse_game(spec)
    codes = game.codes()
    live = every(game)
    assert list(live) == codes and live.index.tolist() == list(range(len(codes)))
    assert all(live.counts[:, i].tolist() == [c.count(x) for x in range(game.symbols)] for i, c in enumerate(codes))
    assert all(game.rank(c) == i and game.code_at(i) == c for i, c in enumerate(codes))
    assert list(codes_at(game, np.arange(game.count())[::-1])) == codes[::-1]  # any ranks, no listing
    zeros = (0,) * game.length
    assert game.rank(zeros) == (codes.index(zeros) if zeros in codes else -1)


@pytest.mark.parametrize("spec", ["bulls:5x8", "bulls:5x8:nz", "bulls:6x8", "mastermind:5x6", "mastermind:6x5"])
def test_games_listed_by_blocks_give_every_code_in_order_with_its_counts(spec):
    game = parse_game(spec)
    live = every(game)
    codes = game.codes()
    assert live.cols.T.tolist() == [list(c) for c in codes]
    assert live.counts.T.tolist() == [[c.count(x) for x in range(game.symbols)] for c in codes]
    assert live.cols.flags.c_contiguous and live.counts.flags.c_contiguous


def test_big_games_enumerate_in_order_without_tuples():
    game = parse_game("bulls:8x9:nz", MAX_LIVE_CODES)  # 322560 codes
    live = every(game)
    assert len(live) == game.count()
    assert [live[i] for i in range(0, len(live), 9973)] == [game.code_at(i) for i in range(0, game.count(), 9973)]
    keys = live.cols.T.astype(np.int64) @ (9 ** np.arange(7, -1, -1))
    assert bool((np.diff(keys) > 0).all())


@pytest.mark.parametrize("spec", SMALL)
def test_answers_are_the_rules_on_every_pair(spec):
    game = parse_game(spec)
    cands = every(game)
    codes = game.codes()
    for probe in codes:
        keys = cands.answer_keys(probe).tolist()
        assert keys == [Candidates.key_of(game, feedback(s, probe)) for s in codes]
    probe, answer = codes[-1], feedback(codes[0], codes[-1])
    assert list(cands.narrow(probe, answer)) == [s for s in codes if feedback(s, probe) == answer]


def test_a_random_secret_is_the_rank_of_the_same_draw():
    """`code_at(randrange(count))` draws what `choice(codes())` drew: seeded secrets stay the same."""
    game = parse_game("bulls:4x10:nz")
    for seed in range(20):
        assert random.Random(seed).choice(game.codes()) == game.code_at(random.Random(seed).randrange(game.count()))


def total_played(spec: str, seed: int = 0) -> tuple[int, int]:
    game = parse_game(spec)
    walker = LiveWalker(game, seed=seed)
    depths = [len(play_out(walker, secret)) for secret in game.codes()]
    return sum(depths), max(depths)


@pytest.mark.parametrize("spec,optimum", [("bulls:3x6", 436), ("bulls:2x10", 451)])
def test_live_play_reaches_the_published_optimum(spec, optimum):
    """Every first question is equivalent in bulls; below it every part is searched exactly."""
    total, _ = total_played(spec)
    assert total == optimum


def test_live_play_of_a_small_game_is_the_proven_optimum_from_the_root():
    spec = "mastermind:3x4"  # 64 codes: searched from the first question
    assert parse_game(spec).count() <= EXACT_MAX
    proven = solve_game(game_table(parse_game(spec)), "total", progress=False).proven["total"]
    assert total_played(spec)[0] == proven


@pytest.mark.slow
def test_live_play_finds_every_secret_of_a_game_played_greedily():
    """bulls 3 of 10: parts too large for the exact search after the first question (greedy there)."""
    total, worst = total_played("bulls:3x10")
    assert total / 720 < 5.3 and worst <= 7  # the optimum is 3657 (5.08); a greedy tree 5.2


def test_the_tree_is_followed_while_on_it():
    walker = Walker.load(TREES / "bulls-3x10-total.json")
    live = LiveWalker(walker.game, tree=walker)
    depths = [len(play_out(live, s)) for s in walker.game.codes()[::7]]
    tree_depths = measure(walker.game, walker.root)[1]
    assert depths == [tree_depths[walker.game.format_code(s)] for s in walker.game.codes()[::7]]
    assert live.chooser.last == "tree"


def test_a_seed_makes_a_game_reproducible():
    game = parse_game("bulls:7x10", MAX_LIVE_CODES)
    secret = game.code_at(123_457)
    first = [q for q, _ in play_out(LiveWalker(game, seed=5), secret)]
    again = [q for q, _ in play_out(LiveWalker(game, seed=5), secret)]
    assert first == again and first[-1] == game.format_code(secret)


def test_first_questions_are_one_per_class():
    assert first_classes(parse_game("bulls:10x10", MAX_LIVE_CODES)) == [tuple(range(10))]
    assert first_classes(parse_game("bulls:4x10:nz")) == [(1, 0, 2, 3), (1, 2, 3, 4)]
    assert first_classes(parse_game("mastermind:4x6")) == [
        (0, 0, 0, 0),
        (0, 0, 0, 1),
        (0, 0, 1, 1),
        (0, 0, 1, 2),
        (0, 1, 2, 3),
    ]


def test_limits_each_mode_its_own():
    assert parse_game("bulls:10x10", MAX_LIVE_CODES).count() == 3_628_800
    with pytest.raises(GameError, match="up to 1,000,000 codes .play without a tree: up to 10,000,000"):
        parse_game("bulls:10x10")
    with pytest.raises(GameError, match="up to 1,000,000 codes .play without a tree: up to 10,000,000"):
        Game("bulls", 10, 36)
    with pytest.raises(GameError, match="1,000,000"):
        Game("bulls", 10, 10).codes()  # no list of millions of tuples, ever
    assert MAX_CODES < MAX_LIVE_CODES


# -- the command line (play --game G without a tree) ---------------------------------------------------

ENV = dict(os.environ, PYTHONPATH=str(ROOT))
TEN = "bulls:10x10"


def test_ten_of_ten_auto_through_the_protocol():
    """Offence on bulls 10 of 10 with the secret given: every question live, every event in the schema."""
    player = Player.start("--game", TEN, "--secret", "9876543210", env=ENV)
    assert player.ready.mode == "auto" and player.ready.objective == "live" and player.ready.secrets == 3_628_800
    solved = player.next("solved")
    assert solved.code == "9876543210" and solved.questions <= 14
    assert close(player) == 0
    questions = [e for e in player.log if e.kind == "question"]
    assert questions[0].by == "first" and {q.by for q in questions[1:]} <= {"greedy", "exact", "last"}


def test_ten_of_ten_offence_defence_and_race_by_hand_through_the_protocol():
    game = parse_game(TEN, MAX_LIVE_CODES)
    secret = game.code_at(2_000_000)
    player = Player.start("--game", TEN, "--seed", "3", env=ENV)  # offence: this test answers
    events = player.until_await()
    for _ in range(3):
        code = [e for e in events if e.kind == "question"][-1].code
        events = player.answer(*feedback(secret, game.read_code(code)))
    answers = [e for e in player.log if e.kind == "answer"]
    assert len(answers) == 3 and answers[-1].candidates < 200_000
    assert player.undo()[0].kind == "undone"
    assert close(player) == 4
    player = Player.start("--defence", "--game", TEN, "--secret", "0123456789", env=ENV)
    player.until_await()
    reply = player.ask("1023456789")
    assert [(e.hits, e.blows) for e in reply if e.kind == "answer_to_your_question"] == [(8, 2)]
    assert player.ask("0123456789")[0].kind == "answer_to_your_question"
    assert close(player) == 0
    player = Player.start("--race", "--game", TEN, "--secret", "0123456789", "--seed", "1", env=ENV)
    player.until_await()
    events = player.ask("9876543210")  # my question; then the player asks and waits for my answer
    asked = [e for e in events if e.kind == "question"]
    assert asked and asked[0].by == "first"
    events = player.answer(*feedback((1, 0, 2, 3, 4, 5, 6, 7, 8, 9), game.read_code(asked[0].code)))
    assert [e for e in events if e.kind == "race"][0].my_questions == 1
    assert close(player) == 4


def test_ten_of_ten_by_hand_in_text():
    r = run_cli("play", "--game", TEN, "--seed", "2", input="2,8\n")
    assert r.returncode == 4, r.stderr
    assert "(remaining 3628800) Is your number 0123456789?" in r.stdout
    assert "(remaining 667485) Is your number" in r.stdout  # 2 hits: C(10, 2) x 14833 derangements of 8


@pytest.mark.slow
def test_a_sample_where_all_cannot_go():
    r = run_cli("play", "--game", "bulls:8x10", "--all", "--sample", "20", "--seed", "4", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["secrets"] == 20 and report["sampled"] and report["seed"] == 4
    low, high = report["interval95"]
    assert low < report["average"] < high and report["worst"] <= 14
    again = run_cli("play", "--game", "bulls:8x10", "--all", "--sample", "20", "--seed", "4", "--json")
    assert again.stdout == r.stdout  # seeded
    text = run_cli("play", "--game", "bulls:8x10", "--all", "--sample", "5")
    assert "95% interval" in text.stdout and text.returncode == 0
    one = run_cli("play", "--game", "bulls:8x10", "--all")
    assert one.returncode == 2 and "--sample N" in one.stderr and len(one.stderr.strip().splitlines()) == 1


def test_every_secret_of_a_small_game_live():
    r = run_cli("play", "--game", "bulls:3x6", "--all", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["total"] == 436 and not report["sampled"]


@pytest.mark.parametrize(
    "args,expect",
    [
        (["play", "--game", "bulls:10x36"], "up to 10,000,000"),
        (["play", "--defence", "--game", "mastermind:9x9"], "up to 10,000,000"),
        (["play", "--game", "mastermind:8x8", "--all", "--sample", "3"], "up to 10,000,000"),
        (["play", "bulls-4x10-total", "--game", "bulls:10x10"], "up to 1,000,000 codes"),
        (["build", "--game", "bulls:10x10", "--strategy", "entropy"], "up to 1,000,000 codes"),
        (["play", "--game", "bulls:10x10", "--noise", "0.1"], "codes"),
    ],
)
def test_games_beyond_a_mode_are_refused_in_one_line(args, expect):
    r = run_cli(*args, timeout=60)
    assert r.returncode == 2 and expect in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_candidate_that_tells_every_candidate_apart_is_asked_without_a_search():
    """Such a candidate is optimal (2n - 1 questions in all, the least any question can give): the lowest one is
    asked; where there is none, the search still runs."""
    from strategy.play.live import LiveChooser, _perfect_candidate

    game = parse_game("bulls:4x10")
    first, second, third = (0, 1, 2, 3), (4, 5, 6, 7), (0, 4, 8, 9)
    seen = {True: 0, False: 0}
    for answer2, part2 in every(game).narrow(first, (0, 1)).parts(second).items():
        for answer3, part in part2.parts(third).items():
            if not 3 <= len(part) <= EXACT_MAX:
                continue
            found = _perfect_candidate(part)
            apart = [i for i in range(len(part)) if len(set(part.answer_keys(part[i]).tolist())) == len(part)]
            assert found == (part[apart[0]] if apart else None)
            seen[found is not None] += 1
            if found is not None and seen[True] <= 3:
                chooser = LiveChooser(game)
                history = [(first, (0, 1)), (second, answer2), (third, answer3)]
                assert chooser.choose(history, part) == found and chooser.last == "exact"
    assert seen[True] >= 1 and seen[False] >= 1
