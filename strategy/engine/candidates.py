"""Compiled kernels of live play's exact step (`play.live.LiveChooser._search`): the signature of every code's
answers over a small candidate set (to keep one probe per partition of it), and the answer table of the small
universe of codes the exact engine then searches.

The arithmetic of `play.candidates.Candidates.answer_keys`: hits are equal symbols in equal places, the common
symbols the sum over symbols of the smaller count (`rules.feedback`'s multiset rule).
"""

from __future__ import annotations

import numba
import numpy as np


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
