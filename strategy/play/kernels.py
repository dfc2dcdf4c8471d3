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
def _enumerate(n, k, distinct, first, count, probe, pcount, width, key):
    """Every code in lexicographic order, as ranks, columns (n, m) and symbol counts (k, m): an odometer
    (Mastermind) or the next partial permutation (bulls) per code, from `first` at position 0 (1: no
    leading zero). The order of `Game.codes()`, without a Python tuple. With a `probe` (else empty), only
    the codes whose answer key to it is `key`: the first answer's candidates, with no list of every code."""
    filtering = probe.shape[0] > 0
    index = np.empty(count, dtype=np.int32)
    cols = np.empty((n, count), dtype=np.uint8)
    counts = np.zeros((k, count), dtype=np.uint8)
    m = 0
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
        keep = True
        if filtering:
            hits = 0
            common = 0
            for j in range(n):
                hits += code[j] == probe[j]
            for x in range(k):
                if pcount[x] and used[x]:
                    common += min(pcount[x], used[x])
            keep = hits * width + common == key
        if keep:
            index[m] = i
            for j in range(n):
                cols[j, m] = code[j]
                counts[code[j], m] += 1
            m += 1
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
    return index[:m].copy(), cols[:, :m].copy(), counts[:, :m].copy()


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
        keys = self.answer_keys(probe)
        return LiveCandidates(self.game, *_select(self.index, self.cols, self.counts, keys,
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
    return LiveCandidates(game, *_enumerate(*_shape(game), np.empty(0, dtype=np.uint8),
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
            _FIRST[key] = LiveCandidates(self.game, *_enumerate(
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
