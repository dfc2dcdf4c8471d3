"""Every code of a game as arrays, filtered by the compiled kernels of `engine.candidates`: live play's
candidate sets (`LiveCandidates`), and every code listed only when needed (`Everything`).

Loading this module loads numba: live play does it while its first question waits for an answer.
"""
from __future__ import annotations

import functools
import threading

import numpy as np

from ..engine import candidates as kernels
from ..rules import Answer, Code, Game
from .candidates import Candidates

FIRST_PARTS = 32  # the parts of every code by the first answers given, kept for the next game (`new`)
_FIRST: dict = {}


# -- candidate sets -----------------------------------------------------------------------------------


class LiveCandidates(Candidates):
    """Candidates filtered by the compiled kernels (games of millions of codes)."""

    def answer_keys(self, probe: Code) -> np.ndarray:
        return kernels.answer_keys(self.cols, self.counts, np.asarray(probe, dtype=np.uint8), _probe_counts(self.game, probe),
                     self.game.distinct, self.game.length + 1)

    def narrow(self, probe: Code, answer: Answer) -> "LiveCandidates":
        keys = self.answer_keys(probe)
        return LiveCandidates(self.game, *kernels.select(self.index, self.cols, self.counts, keys,
                                                  np.int16(self.key_of(self.game, answer))))

    def take(self, which: np.ndarray) -> "LiveCandidates":
        return LiveCandidates(self.game, self.index[which], np.ascontiguousarray(self.cols[:, which]),
                              np.ascontiguousarray(self.counts[:, which]))


def _probe_counts(game: Game, probe: Code) -> np.ndarray:
    out = np.zeros(game.symbols, dtype=np.uint8)
    for x in probe:
        out[x] += 1
    return out


_BUILDING = threading.Lock()


def every(game: Game) -> LiveCandidates:
    """Every code of the game (built once per process, for the last game asked)."""
    with _BUILDING:  # the first question's thread may be building it
        return _every(game)


@functools.lru_cache(maxsize=1)
def _every(game: Game) -> LiveCandidates:
    return LiveCandidates(game, *kernels.enumerate_codes(*_shape(game), np.empty(0, dtype=np.uint8),
                                             np.zeros(game.symbols, dtype=np.uint8), 1, 0))


def _shape(game: Game) -> tuple:
    return game.length, game.symbols, game.distinct, 0 if game.leading_zero else 1, game.count()


class Everything:
    """Every code of a game, listed only when needed: the first answer enumerates just its candidates (for
    bulls 10 of 10, a third of the codes at most), so the first reply builds no array of every code."""

    def __init__(self, game: Game):
        self.game = game

    def __len__(self) -> int:
        return self.game.count()

    def __contains__(self, code: object) -> bool:
        return isinstance(code, tuple) and self.game.is_code(code)

    def narrow(self, probe: Code, answer: Answer) -> LiveCandidates:
        key = (self.game, probe, answer)
        if key not in _FIRST:
            if len(_FIRST) >= FIRST_PARTS:
                _FIRST.clear()
            _FIRST[key] = LiveCandidates(self.game, *kernels.enumerate_codes(
                *_shape(self.game), np.asarray(probe, dtype=np.uint8), _probe_counts(self.game, probe),
                self.game.length + 1, Candidates.key_of(self.game, answer)))
        return _FIRST[key]

    def listed(self) -> LiveCandidates:
        return every(self.game)

    def __iter__(self):
        return iter(self.listed())

    def __getitem__(self, i: int) -> Code:
        return self.listed()[i]

    def __getattr__(self, name: str):
        return getattr(self.listed(), name)  # answer_keys, common_answer, index, cols, ...


def warm() -> None:
    """Load the kernels of a first answer and of the greedy rule from numba's cache (compiling them once
    after an install) on a tiny game: what the first reply would otherwise wait for."""
    from ..engine import greedy
    from ..rules import parse_game

    game = parse_game("bulls:2x3")
    part = Everything(game).narrow((0, 1), (0, 1))
    part.narrow((1, 0), (0, 1))
    layout = greedy.code_layout(np.ascontiguousarray(part.cols.T), game.symbols)
    width = game.length + 1
    lut = np.full(width * width, 255, dtype=np.uint8)
    for i, (h, b) in enumerate(game.answers()):
        lut[h * width + h + b] = i
    cand = np.arange(len(part), dtype=np.int32)
    greedy.best_probe_serial(*layout, lut, width, cand, cand, len(game.answers()), len(game.answers()) - 1, 1,
                             np.zeros(len(part) + 1))
