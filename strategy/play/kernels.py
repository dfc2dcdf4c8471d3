"""Compiled kernels of live play: every code of a game, answers and filtering over millions of codes.

The same arithmetic as `candidates.Candidates.answer_keys` (NumPy), compiled so that bulls 10 of 10
(3,628,800 codes) or Mastermind up to 10^7 codes filter in milliseconds without temporaries; and the
two kernels of the exact step (`live.LiveChooser`): the probes' signatures over a small candidate set,
and the answer table of a small universe of codes.
"""
from __future__ import annotations

import functools
import threading

import numba
import numpy as np

from ..rules import Answer, Code, Game
from .candidates import Candidates


@numba.njit(cache=True)
def _enumerate(n, k, distinct, first, count):
    """Every code in lexicographic order, as columns (n, count) and symbol counts (k, count): an odometer
    (Mastermind) or the next partial permutation (bulls) per code, from `first` at position 0 (1: no
    leading zero). The order of `Game.codes()`, without a Python tuple."""
    cols = np.empty((n, count), dtype=np.uint8)
    counts = np.zeros((k, count), dtype=np.uint8)
    code = np.zeros(n, dtype=np.int64)
    used = np.zeros(k, dtype=np.int64)
    # the lowest code
    for j in range(n):
        x = first if j == 0 else 0
        if distinct:
            while used[x]:
                x += 1
        code[j] = x
        used[x] += 1
    for i in range(count):
        for j in range(n):
            cols[j, i] = code[j]
            counts[code[j], i] += 1
        # the next code: the last position that can take a larger symbol, then the lowest fill
        j = n - 1
        while j >= 0:
            used[code[j]] -= 1
            x = code[j] + 1
            if distinct:
                while x < k and used[x]:
                    x += 1
            if x < k:
                code[j] = x
                used[x] += 1
                for t in range(j + 1, n):
                    y = 0
                    if distinct:
                        while used[y]:
                            y += 1
                    code[t] = y
                    used[y] += 1
                break
            j -= 1
    return cols, counts


@numba.njit(cache=True)
def _symbol_counts(cols, k):
    """(symbols, n) uint8: occurrences of each symbol in each code."""
    L, n = cols.shape
    counts = np.zeros((k, n), dtype=np.uint8)
    for j in range(L):
        row = cols[j]
        for i in range(n):
            counts[row[i], i] += 1
    return counts


@numba.njit(cache=True)
def _keys(cols, counts, probe, pcount, distinct, width):
    """hits * width + common symbols of `probe` against every code (see Candidates.answer_keys)."""
    L, n = cols.shape
    out = np.zeros(n, dtype=np.int16)
    for j in range(L):
        x = probe[j]
        row = cols[j]
        for i in range(n):
            out[i] += (row[i] == x) * width
    for x in range(pcount.shape[0]):
        m = pcount[x]
        if m == 0:
            continue
        row = counts[x]
        if distinct:
            for i in range(n):
                out[i] += row[i]
        else:
            for i in range(n):
                out[i] += min(row[i], m)
    return out


@numba.njit(cache=True)
def _select(index, cols, counts, keys, key):
    """The codes whose key is `key`: their index, columns and counts, compacted."""
    n = keys.shape[0]
    where = np.empty(n, dtype=np.int64)
    m = 0
    for i in range(n):
        where[m] = i
        m += keys[i] == key
    L, k = cols.shape[0], counts.shape[0]
    out_index = np.empty(m, dtype=index.dtype)
    out_cols = np.empty((L, m), dtype=np.uint8)
    out_counts = np.empty((k, m), dtype=np.uint8)
    for t in range(m):
        out_index[t] = index[where[t]]
    for j in range(L):
        row = cols[j]
        out = out_cols[j]
        for t in range(m):
            out[t] = row[where[t]]
    for x in range(k):
        row = counts[x]
        out = out_counts[x]
        for t in range(m):
            out[t] = row[where[t]]
    return out_index, out_cols, out_counts


@numba.njit(cache=True)
def signatures(cols, counts, secrets, scounts, distinct, width):
    """A 64-bit hash of each code's answers from every secret (codes with equal answers split the secrets
    alike): one pass over the codes, the secrets' layout (secrets: (L, m), scounts: (k, m)) in cache."""
    L, n = cols.shape
    m = secrets.shape[1]
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        h = np.uint64(0x9E3779B97F4A7C15)
        for s in range(m):
            hits = 0
            for j in range(L):
                hits += cols[j, i] == secrets[j, s]
            common = 0
            for x in range(counts.shape[0]):
                a = counts[x, i]
                if a:
                    b = scounts[x, s]
                    common += min(a, b)
            h ^= np.uint64(hits * width + common + 1)
            h *= np.uint64(0xBF58476D1CE4E5B9)
            h ^= h >> np.uint64(31)
        out[i] = h
    return out


@numba.njit(cache=True)
def class_table(cols, counts, lut, width, distinct):
    """The answer class of every pair of the given codes (probe row, secret column)."""
    L, n = cols.shape
    table = np.empty((n, n), dtype=np.uint8)
    for p in range(n):
        for s in range(n):
            hits = 0
            for j in range(L):
                hits += cols[j, p] == cols[j, s]
            common = 0
            for x in range(counts.shape[0]):
                a = counts[x, p]
                if a:
                    common += min(a, counts[x, s])
            table[p, s] = lut[hits * width + common]
    return table


FIRST_PARTS = 32  # the parts of every code by the first answers given, kept for the next game (`new`)
_FIRST: dict = {}


# -- candidate sets -----------------------------------------------------------------------------------


class LiveCandidates(Candidates):
    """Candidates filtered by the compiled kernels (games of millions of codes)."""

    def answer_keys(self, probe: Code) -> np.ndarray:
        return _keys(self.cols, self.counts, np.asarray(probe, dtype=np.uint8), _probe_counts(self.game, probe),
                     self.game.distinct, self.game.length + 1)

    def narrow(self, probe: Code, answer: Answer) -> "LiveCandidates":
        whole = len(self) == self.game.count()
        if whole and (self.game, probe, answer) in _FIRST:  # games in one process mostly ask the same first question
            return _FIRST[self.game, probe, answer]
        keys = self.answer_keys(probe)
        out = LiveCandidates(self.game, *_select(self.index, self.cols, self.counts, keys,
                                                 np.int16(self.key_of(self.game, answer))))
        if whole:
            if len(_FIRST) >= FIRST_PARTS:
                _FIRST.clear()
            _FIRST[self.game, probe, answer] = out
        return out

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
    cols, counts = _enumerate(game.length, game.symbols, game.distinct, 0 if game.leading_zero else 1, game.count())
    dtype = np.int32 if cols.shape[1] < 2**31 else np.int64
    return LiveCandidates(game, np.arange(cols.shape[1], dtype=dtype), cols, counts)
