"""Probe equivalence: the symmetries kept after earlier questions map the candidate set onto itself."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from strategy.engine.symmetry import canonical_probes, position_perms, reorderings, stabiliser
from strategy.engine.table import game_table
from strategy.rules import parse_game


@settings(max_examples=200, deadline=None)
@given(answers=st.lists(st.integers(0, 2), max_size=6), limit=st.integers(1, 30))
def test_reorderings_are_the_answer_preserving_permutations(answers, limit):
    a = np.array(answers, dtype=np.int64)
    rows = [tuple(r) for r in reorderings(a, len(a), limit)]
    every = [p for p in itertools.permutations(range(len(a))) if all(a[p[t]] == a[t] for t in range(len(a)))]
    assert rows == every[:limit]  # lexicographic, so the identity first
    assert [tuple(r) for r in reorderings(np.zeros(0, np.int64), len(a), limit)] == [tuple(range(len(a)))]


def _image(gt, pi, tau, asked, code: int) -> int | None:
    """The code a symmetry (position perm pi, symbol map tau on asked symbols) sends `code` to, or None when
    the code uses a symbol the map leaves free (those are relabelled separately)."""
    digits = gt.codes[code]
    out = [0] * len(digits)
    for i, x in enumerate(digits):
        if not asked[x]:
            return None
        out[pi[i]] = tau[x]
    return gt.index(tuple(int(v) for v in out))


@settings(max_examples=60, deadline=None)
@given(
    spec=st.sampled_from(["bulls:4x6", "mastermind:3x4", "bulls:3x5:nz"]),
    seed=st.integers(0, 2**32 - 1),
    depth=st.integers(1, 3),
)
def test_the_stabiliser_maps_the_candidates_onto_themselves(spec, seed, depth):
    """Every element sends each question to a question with the same answer, so every candidate (written
    with asked symbols only) to a candidate."""
    gt = game_table(parse_game(spec))
    g = gt.game
    rng = np.random.default_rng(seed)
    secret = int(rng.integers(gt.size))
    history = rng.choice(gt.size, depth, replace=False).astype(np.int64)
    answers = gt.table[history, secret].astype(np.int64)
    cand = {int(c) for c in np.flatnonzero(np.all(gt.table[history] == answers[:, None], axis=0))}
    pis, taus, asked = stabiliser(
        gt.codes, history, answers, position_perms(g.length, not g.leading_zero), g.symbols, not g.leading_zero
    )
    assert list(pis[0]) == list(range(g.length))
    for pi, tau in zip(pis, taus):
        images = sorted(_image(gt, pi, tau, asked, int(q)) for q in history)
        assert images == sorted(int(q) for q in history)
        for q in history:
            assert answers[list(history).index(_image(gt, pi, tau, asked, int(q)))] == answers[list(history).index(q)]
        for c in cand:
            image = _image(gt, pi, tau, asked, c)
            assert image is None or image in cand


def test_questions_with_equal_answers_may_be_swapped():
    """After 0123 and 1032 (a position swap of it) with the same answer, a probe and its image under the
    swap of the two questions are one class; with different answers they are two."""
    gt = game_table(parse_game("bulls:4x10"))
    perms = position_perms(4, False)
    history = np.array([gt.index((0, 1, 2, 3)), gt.index((1, 0, 3, 2))], dtype=np.int64)
    probes = np.arange(gt.size, dtype=np.int32)

    def kept(a: tuple[int, int]) -> set[str]:
        answers = np.array(a, dtype=np.int64)
        cand = np.flatnonzero(np.all(gt.table[history] == answers[:, None], axis=0)).astype(np.int32)
        return {
            gt.code_str(int(p))
            for p in canonical_probes(gt.codes, gt.masks, probes, history, answers, perms, 10, False, cand)
        }

    same = gt.answers.index((0, 4))
    other = gt.answers.index((2, 2))
    assert len(kept((same, same))) < len(kept((same, other)))
    assert len(kept((same, same))) < len(
        canonical_probes(gt.codes, gt.masks, probes, history, np.zeros(0, np.int64), perms, 10, False, probes)
    )
