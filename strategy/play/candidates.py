"""The secrets still possible, as NumPy arrays: every code of a game, and filtering by an answer.

A set of candidates keeps, for each of its codes, the symbol at each position (`cols`, one row per
position) and how many times each symbol occurs (`counts`, one row per symbol), both uint8 and
contiguous, so that the answer of one probe to every candidate is a few vector operations: hits are
equal symbols in equal places, and the common symbols are the sum over the probe's symbols x of
min(candidate's count of x, probe's count of x), which is `rules.feedback`'s multiset rule (the
tests compare the two on every pair of small games). Filtering bulls 10 of 10 (3,628,800 codes) by
one answer takes milliseconds and no table: memory is O(codes).

A candidate's index is its rank in `Game.codes()` (lexicographic), and every code is enumerated here in
that order without building Python tuples (`every_columns`). NumPy only, no numba: the tree player loads this
module at its first answer, live play while its first question waits.
"""

from __future__ import annotations

import functools
import itertools
import threading
from dataclasses import dataclass

import numpy as np

from ..rules import ALPHABET, Answer, Code, Game

SMALL = 5040  # codes up to this many are enumerated by itertools; more as prefix x suffix blocks


@functools.lru_cache(maxsize=8)
def _codes(name: str, n: int, k: int) -> np.ndarray:
    """Codes of n symbols of k (leading zero allowed) in lexicographic order, as prefix x suffix blocks:
    each prefix followed by every suffix in order. With distinct symbols a suffix is a code of ranks, drawn
    from the symbols its prefix leaves, in increasing order (so the blocks stay in lexicographic order)."""
    distinct = name == "bulls"
    count = 1
    for i in range(n):
        count *= (k - i) if distinct else k
    if count <= SMALL or n == 1:
        it = itertools.permutations(range(k), n) if distinct else itertools.product(range(k), repeat=n)
        return np.array(list(it), dtype=np.uint8).reshape(count, n)
    head = n // 2
    prefix = _codes(name, head, k)
    out = np.empty((len(prefix), count // len(prefix), n), dtype=np.uint8)
    out[:, :, :head] = prefix[:, None, :]
    if not distinct:
        out[:, :, head:] = _codes(name, n - head, k)[None, :, :]
        return out.reshape(count, n)
    ranks = _codes(name, n - head, k - head)  # (B, n - head): ranks among the k - head free symbols
    used = np.zeros((len(prefix), k), dtype=bool)
    used[np.arange(len(prefix))[:, None], prefix] = True
    free = np.nonzero(~used)[1].astype(np.uint8).reshape(len(prefix), k - head)  # free symbols, increasing
    out[:, :, head:] = free[:, ranks]  # (A, B, n - head)
    return out.reshape(count, n)


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
        """The candidates that give `answer` to `probe` (the parts of every code by a first answer are kept
        for the next game of the process)."""
        whole = len(self) == self.game.count()
        key = (self.game, tuple(probe), tuple(answer))
        if whole and key in _FIRST:
            return _FIRST[key]
        out = self.take(np.flatnonzero(self.answer_keys(probe) == self.key_of(self.game, answer)))
        if whole:
            if len(_FIRST) >= FIRST_PARTS:
                _FIRST.clear()
            _FIRST[key] = out
        return out

    def take(self, which: np.ndarray) -> "Candidates":
        """A subset by boolean mask or by positions."""
        return Candidates(
            self.game,
            self.index[which],
            np.ascontiguousarray(self.cols[:, which]),
            np.ascontiguousarray(self.counts[:, which]),
        )

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


FIRST_PARTS = 32  # parts of every code by the first answers given, kept for the next game (`new`)
_FIRST: dict = {}
_BUILDING = threading.Lock()


def every(game: Game) -> Candidates:
    """Every code of the game as a candidate set (built once per process, for the last game asked)."""
    with _BUILDING:  # the first question's thread may be building it
        return _every(game)


@functools.lru_cache(maxsize=1)
def _every(game: Game) -> Candidates:
    cols, counts = every_columns(game.name, game.length, game.symbols)
    if not game.leading_zero:  # the codes that start with 0 come first: drop that block
        start = int(np.searchsorted(cols[0], 1))
        cols, counts = np.ascontiguousarray(cols[:, start:]), np.ascontiguousarray(counts[:, start:])
    size = cols.shape[1]
    dtype = np.int32 if size < 2**31 else np.int64
    return Candidates(game, np.arange(size, dtype=dtype), cols, counts)


def every_columns(name: str, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The columns (n, N) and the symbol counts (k, N) of every code of n symbols of k (leading zero allowed), in
    lexicographic order, written row by row from the prefix x suffix blocks of `_codes`: a code is a prefix
    (one of A) followed by a suffix (one of B), so each row is a repeat, a tile or a gather of A x B bytes, and a
    symbol's count is the prefix's plus the suffix's (for distinct symbols, whether the suffix's ranks among the
    symbols the prefix leaves hold that symbol's rank). About n + k passes over N bytes: bulls 10 of 10 in a tenth
    of a second, where a transpose and n x k comparisons took half a second."""
    distinct = name == "bulls"
    count = 1
    for i in range(n):
        count *= (k - i) if distinct else k
    if count <= SMALL or n == 1:
        codes = _codes(name, n, k)
        cols = np.ascontiguousarray(codes.T)
        counts = np.zeros((k, count), dtype=np.uint8)
        for x in range(k):
            row = counts[x]
            for j in range(n):
                np.add(row, cols[j] == x, out=row, casting="unsafe")
        return cols, counts
    head = n // 2
    prefix = _codes(name, head, k)  # (A, head)
    a = len(prefix)
    cols = np.empty((n, a, count // a), dtype=np.uint8)
    counts = np.empty((k, a, count // a), dtype=np.uint8)
    prefix_counts = np.zeros((k, a), dtype=np.uint8)
    for j in range(head):
        cols[j] = prefix[:, j][:, None]
        np.add.at(prefix_counts, (prefix[:, j], np.arange(a)), 1)
    if not distinct:
        suffix = _codes(name, n - head, k)  # (B, n - head)
        suffix_counts = np.zeros((k, len(suffix)), dtype=np.uint8)
        for j in range(n - head):
            np.add.at(suffix_counts, (suffix[:, j], np.arange(len(suffix))), 1)
            cols[head + j] = suffix[:, j][None, :]
        for x in range(k):
            np.add(prefix_counts[x][:, None], suffix_counts[x][None, :], out=counts[x])
        return cols.reshape(n, count), counts.reshape(k, count)
    ranks = _codes(name, n - head, k - head)  # (B, n - head): ranks among the k - head free symbols
    used = np.zeros((a, k), dtype=bool)
    used[np.arange(a)[:, None], prefix] = True
    free = np.nonzero(~used)[1].astype(np.uint8).reshape(a, k - head)  # free symbols, increasing
    for j in range(n - head):
        cols[head + j] = free[:, ranks[:, j]]  # (A, B)
    # held[r, b]: whether suffix b holds the free symbol of rank r; the last row (a symbol of the prefix) holds none
    held = np.zeros((k - head + 1, len(ranks)), dtype=np.uint8)
    for j in range(n - head):
        held[ranks[:, j], np.arange(len(ranks))] = 1
    rank_of = np.full((a, k), k - head, dtype=np.intp)  # each symbol's rank among the prefix's free symbols
    rank_of[np.arange(a)[:, None], free] = np.arange(k - head)[None, :]
    for x in range(k):
        np.add(prefix_counts[x][:, None], held[rank_of[:, x]], out=counts[x])
    return cols.reshape(n, count), counts.reshape(k, count)


class Everything:
    """Every code of a game, listed only when needed (live play's position before any answer: a race keeps
    one for what the person knows from its start, and `in` needs no list)."""

    def __init__(self, game: Game):
        self.game = game

    def __len__(self) -> int:
        return self.game.count()

    def __contains__(self, code: object) -> bool:
        return isinstance(code, tuple) and self.game.is_code(code)

    def narrow(self, probe: Code, answer: Answer) -> Candidates:
        return every(self.game).narrow(probe, answer)

    def __iter__(self):
        return iter(every(self.game))

    def __getitem__(self, i: int) -> Code:
        return every(self.game)[i]

    def __getattr__(self, name: str):
        return getattr(every(self.game), name)  # answer_keys, common_answer, index, cols, ...
