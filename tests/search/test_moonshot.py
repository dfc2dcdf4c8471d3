"""The moonshots' engine changes: the lookahead's narrow windows and cheap part bounds change its speed, never
its bound (tools/bench_moonshot.py measures the speed)."""

from __future__ import annotations

import pytest

from strategy.engine.table import game_table
from strategy.rules import parse_game
from strategy.search import lookahead, objectives
from strategy.search.lookahead import lookahead_bound

OBJECTIVES = {
    "total": (objectives.total(), False),
    "within-6": (objectives.total(6), False),
    "fewest-at-6": (objectives.at_last_level(6), False),
    "consistent": (objectives.total(), True),
}


@pytest.mark.parametrize("spec", ["bulls:4x6", "mastermind:4x4", "mastermind:3x5"])
@pytest.mark.parametrize("objective", list(OBJECTIVES))
def test_windows_leave_the_bound_as_it_was(spec, objective, monkeypatch):
    """With no narrow windows (every part bounded at once with the whole cut-off left, as before them), with one,
    and with the default passes, on one thread and on two: the same bound at every level and exact-below N."""
    costs, consistent = OBJECTIVES[objective]
    gt = game_table(parse_game(spec))
    for levels, below in ((2, 0), (3, 0), (2, 20), (3, 40)):
        seen = set()
        for passes in (0, 1, lookahead.WINDOW_PASSES):
            monkeypatch.setattr(lookahead, "WINDOW_PASSES", passes)
            for threads in (1, 2):
                seen.add(lookahead_bound(gt, costs, levels, consistent, exact_below=below, threads=threads))
        assert len(seen) == 1, (levels, below, seen)


def test_the_prebound_raises_a_probe_to_what_the_engine_proves_cheaply():
    """A probe's parts start from the engine's cheap bound (`bound_set`) when it is above their level fill, and a
    part it proves exact leaves the list: the sum is a lower bound of the probe, at least the level fills' sum."""
    import numpy as np

    from strategy.engine import exact
    from strategy.engine.table import split

    gt = game_table(parse_game("bulls:4x6"))
    look = lookahead.Lookahead(gt, objectives.total())
    S = np.arange(gt.size, dtype=np.int32)
    probes, _, b = look.probes(S, 0, len(gt.answers) - 1, np.zeros(0, dtype=np.int64))
    members, starts = split(gt.table, S, int(probes[0]), len(gt.answers))
    parts = [
        (members[starts[c] : starts[c + 1]], int(exact.level_fill(starts[c + 1] - starts[c], b, 1, look.engine.bounds)))
        for c in range(len(gt.answers))
        if c != gt.win and starts[c + 1] - starts[c] > 2
    ]
    fills = sum(fill for _, fill in parts)
    raised, value = look.prebound(parts, 1, b, fills, int(exact.INF))
    assert value > fills
    assert len(raised) <= len(parts)
    assert all(v >= int(exact.level_fill(len(p), b, 1, look.engine.bounds)) for p, v in raised)


@pytest.mark.parametrize("spec", ["bulls:3x5", "mastermind:3x4", "mastermind:4x4", "bulls:4x6"])
@pytest.mark.parametrize("objective", ["total", "within", "fewest", "consistent", "too-shallow"])
def test_half_a_level_more_never_lowers_the_bound_nor_passes_the_optimum(spec, objective):
    """The half level (each probe's parts at the engine's cheap bound below the last level) is admissible: at
    least the bound of its levels, never above the search's optimum, with sets searched exactly too."""
    from strategy.engine.exact import INF

    from .test_lookahead import optima

    costs, consistent, value = optima(spec)[objective]
    gt = game_table(parse_game(spec))
    for levels in (1, 2, 3):
        plain = lookahead_bound(gt, costs, levels, consistent)
        half = lookahead_bound(gt, costs, levels, consistent, half=True)
        assert plain <= half <= (INF if value is None else value)
        assert lookahead_bound(gt, costs, levels, consistent, exact_below=12, half=True) <= (
            INF if value is None else value
        )
