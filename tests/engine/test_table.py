from __future__ import annotations

import numpy as np
import pytest

from strategy.engine.table import game_table
from strategy.rules import GameError, feedback, parse_game


@pytest.mark.parametrize(
    "spec", ["bulls:3x6", "bulls:3x5:nz", "mastermind:3x4", "mastermind:2x2", "mastermind:4x4", "bulls:2x9"]
)
def test_table_equals_rules_everywhere(spec):
    gt = game_table(parse_game(spec))
    codes = gt.game.codes()
    for p, probe in enumerate(codes):
        for s, secret in enumerate(codes):
            assert gt.answers[gt.table[p, s]] == feedback(secret, probe)


def test_table_large_game_sampled_and_symmetric(bulls4):
    rng = np.random.default_rng(1)
    codes = bulls4.game.codes()
    for p, s in rng.integers(0, bulls4.size, size=(2000, 2)):
        assert bulls4.answers[bulls4.table[p, s]] == feedback(codes[s], codes[p])
    assert (bulls4.table == bulls4.table.T).all()
    assert bulls4.table.dtype == np.uint8 and bulls4.table.nbytes == 5040 * 5040
    assert (np.diag(bulls4.table) == bulls4.win).all() and (bulls4.table == bulls4.win).sum() == 5040


def test_index_and_strings(mm46):
    assert mm46.index((1, 1, 2, 2)) == 1 * 216 + 1 * 36 + 2 * 6 + 2
    assert mm46.code_str(mm46.index((1, 1, 2, 2))) == "1122"
    assert mm46.answer_str(mm46.win) == "4,0"


def test_too_large_game_is_refused():
    with pytest.raises(GameError, match="feedback table would need"):
        game_table(parse_game("bulls:6x10"))
