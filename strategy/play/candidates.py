"""The secrets still possible, as NumPy arrays: every code of a game, and filtering by an answer.

A set of candidates keeps, for each of its codes, the symbol at each position (`cols`, one row per
position) and how many times each symbol occurs (`counts`, one row per symbol), both uint8 and
contiguous, so that the answer of one probe to every candidate is a few vector operations: hits are
equal symbols in equal places, and the common symbols are the sum over the probe's symbols x of
min(candidate's count of x, probe's count of x), which is `rules.feedback`'s multiset rule (the
tests compare the two on every pair of small games). Filtering bulls 10 of 10 (3,628,800 codes) by
one answer takes milliseconds and no table: memory is O(codes).

A candidate's index is its rank in `Game.codes()` (lexicographic). NumPy only: the tree player loads this
module at its first answer and lists the codes from `Game.codes()` (games of at most 1,000,000 codes);
live play enumerates millions of codes with its compiled kernels (`kernels.every`).
"""
from __future__ import annotations

import functools
import threading
from dataclasses import dataclass

import numpy as np

from ..rules import ALPHABET, Answer, Code, Game


@dataclass(frozen=True, eq=False)
class Candidates:
    """Codes of one game still possible: their indices (ranks) and their columns and symbol counts."""

    game: Game
    index: np.ndarray  # int32 or int64 ranks, increasing
    cols: np.ndarray  # (length, n) uint8: the symbol at each position
    counts: np.ndarray  # (symbols, n) uint8: occurrences of each symbol

    def __len__(self) -> int:
        return int(self.index.shape[0])

    # -- answers ----------------------------------------------------------------------------------
    def answer_keys(self, probe: Code) -> np.ndarray:
        """hits * (length + 1) + common symbols, of `probe` against every candidate (int16)."""
        width = self.game.length + 1
        hits = np.zeros(len(self), dtype=np.int16)
        for j, x in enumerate(probe):
            hits += self.cols[j] == x
        common = np.zeros(len(self), dtype=np.int16)
        mine: dict[int, int] = {}
        for x in probe:
            mine[x] = mine.get(x, 0) + 1
        for x, m in mine.items():
            row = self.counts[x]
            common += row if self.game.distinct else np.minimum(row, m)
        return hits * width + common

    @staticmethod
    def key_of(game: Game, answer: Answer) -> int:
        """The answer key of (hits, blows): see `answer_keys`."""
        return answer[0] * (game.length + 1) + answer[0] + answer[1]

    def answer_of(self, probe: Code, i: int) -> Answer:
        """The answer candidate number i gives to `probe`."""
        return _answer_from_key(self.game, int(self.answer_keys(probe)[i]))

    def narrow(self, probe: Code, answer: Answer) -> "Candidates":
        """The candidates that give `answer` to `probe`."""
        return self.take(self.answer_keys(probe) == self.key_of(self.game, answer))

    def take(self, which: np.ndarray) -> "Candidates":
        """A subset by boolean mask or by positions."""
        return Candidates(self.game, self.index[which], np.ascontiguousarray(self.cols[:, which]),
                          np.ascontiguousarray(self.counts[:, which]))

    def parts(self, probe: Code) -> dict[Answer, "Candidates"]:
        """The candidates split by their answer to `probe`, in answer order."""
        keys = self.answer_keys(probe)
        out = {}
        for key in np.unique(keys).tolist():
            out[_answer_from_key(self.game, key)] = self.take(keys == key)
        return out

    def common_answer(self, probe: Code) -> Answer | None:
        """The answer every candidate gives to `probe`, or None when they differ (or there are none)."""
        if not len(self):
            return None
        keys = self.answer_keys(probe)
        first = int(keys[0])
        if not bool((keys == first).all()):
            return None
        return _answer_from_key(self.game, first)

    # -- codes ------------------------------------------------------------------------------------
    def position(self, code: Code) -> int:
        """Where `code` is among the candidates, or -1."""
        if len(code) != self.game.length:
            return -1
        rank = self.game.rank(code)
        if rank < 0:
            return -1
        i = int(np.searchsorted(self.index, rank))
        return i if i < len(self) and int(self.index[i]) == rank else -1

    def __contains__(self, code: object) -> bool:
        return isinstance(code, tuple) and self.position(code) >= 0

    def __getitem__(self, i: int) -> Code:
        """Candidate number i as a tuple."""
        return tuple(int(x) for x in self.cols[:, i])

    def __iter__(self):
        """The candidates as tuples (for small sets: a race's model, a conflict's explanation)."""
        return (tuple(row) for row in self.cols.T.tolist())

    def text(self, i: int) -> str:
        return "".join(ALPHABET[int(x)] for x in self.cols[:, i])

    def texts(self) -> list[str]:
        chars = np.frombuffer(ALPHABET.encode("ascii"), dtype=np.uint8)[self.cols.T]
        width = self.game.length
        return [row.decode("ascii") for row in np.ascontiguousarray(chars).view(f"S{width}").ravel()]


def codes_at(game: Game, ranks: np.ndarray) -> Candidates:
    """The codes of the given ranks (`Game.code_at`, vectorised): a sample of a game of millions of codes
    without listing them."""
    n, k = game.length, game.symbols
    r = np.asarray(ranks, dtype=np.int64).copy()
    m = r.shape[0]
    cols = np.empty((n, m), dtype=np.uint8)
    if not game.distinct:
        for j in range(n - 1, -1, -1):
            cols[j] = r % k
            r //= k
    else:
        if not game.leading_zero:
            r += _falling(k - 1, n - 1)  # the codes that start with 0 come first in the full order
        free = np.ones((m, k), dtype=bool)
        for j in range(n):
            block = _falling(k - j - 1, n - j - 1)
            i = r // block
            r %= block
            x = np.argmax(np.cumsum(free, axis=1) > i[:, None], axis=1)  # the i-th free symbol of each row
            cols[j] = x
            free[np.arange(m), x] = False
    counts = np.zeros((k, m), dtype=np.uint8)
    for j in range(n):
        np.add.at(counts, (cols[j], np.arange(m)), 1)
    return Candidates(game, np.asarray(ranks, dtype=np.int64), cols, counts)


def _falling(a: int, b: int) -> int:
    out = 1
    for i in range(b):
        out *= a - i
    return out


def _answer_from_key(game: Game, key: int) -> Answer:
    hits, common = divmod(key, game.length + 1)
    return hits, common - hits


_BUILDING = threading.Lock()


def every(game: Game) -> Candidates:
    """Every code of the game as a candidate set (built once per process for the last two games)."""
    with _BUILDING:  # the first question's thread may be building it
        return _every(game)


@functools.lru_cache(maxsize=2)
def _every(game: Game) -> Candidates:
    codes = np.array(game.codes(), dtype=np.uint8).reshape(game.count(), game.length)
    cols = np.ascontiguousarray(codes.T)
    counts = np.zeros((game.symbols, codes.shape[0]), dtype=np.uint8)
    for x in range(game.symbols):
        row = counts[x]
        for j in range(game.length):
            np.add(row, cols[j] == x, out=row, casting="unsafe")
    dtype = np.int32 if codes.shape[0] < 2**31 else np.int64
    return Candidates(game, np.arange(codes.shape[0], dtype=dtype), cols, counts)
