"""Compiled kernels of live play: every code of a game, answers and filtering over millions of codes.

The same arithmetic as `play.candidates.Candidates.answer_keys` (NumPy): hits are equal symbols in equal
places, the common symbols the sum over symbols of the smaller count (`rules.feedback`'s multiset rule),
compiled so that bulls 10 of 10 (3,628,800 codes) or Mastermind up to 10^7 codes filter in milliseconds
without temporaries; and the two kernels of live play's exact step: the probes' signatures over a small
candidate set, and the answer table of a small universe of codes. `play.space` is their Python face.
"""
from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def enumerate_codes(n, k, distinct, first, count, probe, pcount, width, key):
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
def answer_keys(cols, counts, probe, pcount, distinct, width):
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
def select(index, cols, counts, keys, key):
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
