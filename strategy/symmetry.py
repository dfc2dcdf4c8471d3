"""Probe equivalence: one probe per class under the symmetries that fix every earlier question.

The symmetries of both games are position permutations times symbol permutations
(with no leading zero: position 0 and symbol 0 stay put). A symmetry that maps each
earlier question to itself maps the candidate set to itself, so equivalent probes
give subtrees of equal cost and only the lowest code of each class is searched.
For a position permutation the symbol map is forced on the symbols already asked;
symbols never asked are interchangeable and are relabelled in order of appearance, and so
are asked symbols that no remaining candidate contains.
"""
from __future__ import annotations

import itertools
import math

import numba
import numpy as np

MAX_PERMUTED_LENGTH = 7  # beyond this, only the never-asked symbols are used (n! grows too fast)


def position_perms(length: int, fix_first: bool) -> np.ndarray:
    """All position permutations a game allows, as rows of an int64 array (identity first)."""
    if length > MAX_PERMUTED_LENGTH:
        return np.arange(length, dtype=np.int64).reshape(1, length)
    rows = [p for p in itertools.permutations(range(length)) if not fix_first or p[0] == 0]
    return np.array(rows, dtype=np.int64).reshape(len(rows), length)


@numba.njit(cache=True)
def stabiliser(codes: np.ndarray, history: np.ndarray, perms: np.ndarray, k: int, fix_zero: bool):
    """Symmetries fixing every code in `history`: (position perms, symbol maps on asked symbols, asked mask).

    sym_maps[e, x] is where element e sends asked symbol x (-1 for symbols never asked).
    """
    n_perm, n = perms.shape
    asked = np.zeros(k, dtype=np.bool_)
    if fix_zero:
        asked[0] = True
    for t in range(history.shape[0]):
        for i in range(n):
            asked[codes[history[t], i]] = True
    keep_p = np.empty((n_perm, n), dtype=np.int64)
    keep_s = np.empty((n_perm, k), dtype=np.int64)
    count = 0
    tau = np.empty(k, dtype=np.int64)
    inv = np.empty(k, dtype=np.int64)
    for e in range(n_perm):
        pi = perms[e]
        tau[:] = -1
        inv[:] = -1
        ok = True
        if fix_zero:
            tau[0] = 0
            inv[0] = 0
        for t in range(history.shape[0]):
            q = codes[history[t]]
            for i in range(n):
                a = q[i]
                b = q[pi[i]]
                if tau[a] == -1 and inv[b] == -1:
                    tau[a] = b
                    inv[b] = a
                elif tau[a] != b or inv[b] != a:
                    ok = False
                    break
            if not ok:
                break
        if ok:
            keep_p[count] = pi
            keep_s[count] = tau
            count += 1
    return keep_p[:count], keep_s[:count], asked


@numba.njit(cache=True)
def _is_canonical(code, pis, taus, asked, free, dead, dead_list, img, relabel) -> bool:
    """True when no symmetry maps `code` to a lexicographically smaller code."""
    n = code.shape[0]
    for e in range(pis.shape[0]):
        pi = pis[e]
        tau = taus[e]
        for i in range(n):
            img[pi[i]] = code[i]
        relabel[:] = -1
        next_free = 0
        next_dead = 0
        for j in range(n):
            x = img[j]
            if asked[x]:
                y = tau[x]
                if dead[y]:
                    if relabel[y] == -1:
                        relabel[y] = dead_list[next_dead]
                        next_dead += 1
                    y = relabel[y]
                img[j] = y
            else:
                if relabel[x] == -1:
                    relabel[x] = free[next_free]
                    next_free += 1
                img[j] = relabel[x]
        for j in range(n):
            if img[j] < code[j]:
                return False
            if img[j] > code[j]:
                break
    return True


@numba.njit(cache=True)
def canonical_probes(codes, probes, history, perms, k, fix_zero, cand) -> np.ndarray:
    """The probes (a sorted index array) that are the lowest code of their class after `history`.

    Besides the symmetries fixing the history, symbols that were asked but appear in no
    candidate of `cand` ("dead") are interchangeable: they score nothing against any candidate.
    """
    pis, taus, asked = stabiliser(codes, history, perms, k, fix_zero)
    n = codes.shape[1]
    present = np.zeros(k, dtype=np.bool_)
    for i in range(cand.shape[0]):
        for j in range(n):
            present[codes[cand[i], j]] = True
    free = np.empty(k, dtype=np.int64)
    dead = np.zeros(k, dtype=np.bool_)
    dead_list = np.empty(k, dtype=np.int64)
    n_free = 0
    n_dead = 0
    for x in range(k):
        if not asked[x]:
            free[n_free] = x
            n_free += 1
        elif not present[x] and not (fix_zero and x == 0):
            dead[x] = True
            dead_list[n_dead] = x
            n_dead += 1
    if pis.shape[0] == 1 and n_free < 2 and n_dead < 2:
        return probes.copy()
    img = np.empty(n, dtype=np.int64)
    relabel = np.empty(k, dtype=np.int64)
    out = np.empty(probes.shape[0], dtype=probes.dtype)
    m = 0
    for i in range(probes.shape[0]):
        if _is_canonical(codes[probes[i]], pis, taus, asked, free, dead, dead_list, img, relabel):
            out[m] = probes[i]
            m += 1
    return out[:m]


def group_order(length: int, symbols: int, fix_zero: bool) -> int:
    """Size of the whole symmetry group, for reports."""
    if fix_zero:
        return math.factorial(length - 1) * math.factorial(symbols - 1)
    return math.factorial(length) * math.factorial(symbols)
