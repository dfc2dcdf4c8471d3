from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from strategy.rules import Game, GameError, feedback, parse_game


def codes_of(game: Game):
    return st.sampled_from(game.codes())


BULLS4 = parse_game("bulls:4x10")
MM46 = parse_game("mastermind:4x6")


def test_seed_examples():
    # seed 000: secret 765, call 746 -> 1 EAT (7) and 1 BITE (6)
    assert feedback((7, 6, 5), (7, 4, 6)) == (1, 1)
    # seed 001: secret 4271, question 1234 -> 1 hit (2) and 2 blows (4 and 1)
    assert feedback((4, 2, 7, 1), (1, 2, 3, 4)) == (1, 2)


@pytest.mark.parametrize(
    "secret,probe,answer",
    [
        ("0123", "0123", (4, 0)),
        ("0123", "3210", (0, 4)),
        ("0123", "4567", (0, 0)),
        ("0123", "1032", (0, 4)),
        ("0123", "0132", (2, 2)),
        ("1122", "1212", (2, 2)),  # mastermind: repeats count as a multiset
        ("1122", "2211", (0, 4)),
        ("0001", "1110", (0, 2)),
        ("0000", "0111", (1, 0)),
        ("1234", "1111", (1, 0)),
        ("3332", "2333", (2, 2)),
    ],
)
def test_hand_worked(secret, probe, answer):
    assert feedback(tuple(map(int, secret)), tuple(map(int, probe))) == answer


@given(codes_of(BULLS4), codes_of(BULLS4))
def test_bulls_hits_plus_blows_at_most_n_and_symmetric(s, p):
    h, b = feedback(s, p)
    assert 0 <= h and 0 <= b and h + b <= 4
    assert h + b == len(set(s) & set(p))
    assert feedback(p, s) == (h, b)


@given(codes_of(MM46), codes_of(MM46))
def test_mastermind_rule(s, p):
    h, b = feedback(s, p)
    assert h == sum(x == y for x, y in zip(s, p))
    assert h + b == sum(min(s.count(c), p.count(c)) for c in range(6))
    assert feedback(p, s) == (h, b)


@pytest.mark.parametrize(
    "spec",
    [
        "bulls:3x6",
        "bulls:2x3",
        "bulls:3x3",
        "bulls:3x4:nz",
        "bulls:2x2:nz",
        "bulls:3x7:nz",
        "mastermind:2x2",
        "mastermind:3x2",
        "mastermind:3x3",
        "mastermind:2x5",
        "mastermind:4x3",
        "mastermind:1x1",
    ],
)
def test_answer_list_is_exactly_what_occurs(spec):
    game = parse_game(spec)
    codes = game.codes()
    assert game.answers() == sorted({feedback(s, p) for s in codes for p in codes})
    assert game.answers()[-1] == game.win


def test_codes_order_and_count():
    assert len(BULLS4.codes()) == BULLS4.count() == 5040
    assert BULLS4.codes()[0] == (0, 1, 2, 3) and BULLS4.codes() == sorted(BULLS4.codes())
    nz = parse_game("bulls:4x10:nz")
    assert nz.count() == len(nz.codes()) == 4536 and all(c[0] != 0 for c in nz.codes())
    assert parse_game("mastermind:4x6").count() == 1296
    assert parse_game("bulls:5x10").count() == 30240


def test_spec_round_trip():
    for spec in ["bulls:4x10", "bulls:4x10:nz", "mastermind:4x6", "bulls:3x36"]:
        assert parse_game(spec).spec == spec
        assert Game.from_json(parse_game(spec).to_json()) == parse_game(spec)


@pytest.mark.parametrize(
    "spec,message",
    [
        ("chess:4x10", "unknown game spec"),
        ("bulls:4", "bad size"),
        ("bulls:5x4", "n <= k"),
        ("bulls:4x37", "1..36"),
        ("mastermind:4x6:nz", "only for bulls"),
        ("bulls:4x10:zz", "unknown option"),
    ],
)
def test_bad_specs(spec, message):
    with pytest.raises(GameError, match=message):
        parse_game(spec)


def test_parse_code():
    assert BULLS4.parse_code("0123") == (0, 1, 2, 3)
    assert parse_game("bulls:3x16").parse_code("AbF") == (10, 11, 15)
    with pytest.raises(GameError, match="repeats a symbol"):
        BULLS4.parse_code("0012")
    with pytest.raises(GameError, match="must have 4 symbols"):
        BULLS4.parse_code("012")
    with pytest.raises(GameError, match="outside the symbols"):
        MM46.parse_code("0126")
    with pytest.raises(GameError, match="starts with 0"):
        parse_game("bulls:4x10:nz").parse_code("0123")
    assert MM46.parse_code("1122") == (1, 1, 2, 2)


@pytest.mark.parametrize("text", ["1,2", "1 2", "12", "1H2B", "1h 2b", "1A2B", " 1 , 2 "])
def test_parse_answer_forms(text):
    assert BULLS4.parse_answer(text) == (1, 2)


def test_parse_answer_all_hits_and_impossible():
    assert BULLS4.parse_answer("4") == (4, 0)
    with pytest.raises(GameError, match="impossible"):
        BULLS4.parse_answer("3,1")
    with pytest.raises(GameError, match="hits \\+ blows > 4"):
        BULLS4.parse_answer("3,2")
    with pytest.raises(GameError, match="cannot read"):
        BULLS4.parse_answer("x")
    # 3 of 5 shares at least one symbol: 0,0 never happens
    with pytest.raises(GameError, match="no secret gives it"):
        parse_game("bulls:3x5").parse_answer("0,0")


@pytest.mark.parametrize("spec", ["bulls:4x10", "bulls:3x12:nz", "mastermind:3x4", "bulls:2x36"])
def test_code_strings_are_the_formatted_codes(spec):
    game = parse_game(spec)
    assert game.code_strings() == {game.format_code(c) for c in game.codes()}
