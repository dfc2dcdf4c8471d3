"""Probe equivalence: one probe per class under the symmetries that keep the earlier questions and answers.

The symmetries of both games are position permutations times symbol permutations
(with no leading zero: position 0 and symbol 0 stay put). A symmetry that maps each
earlier question to itself, or to another earlier question that got the same answer,
maps the candidate set to itself, so equivalent probes give subtrees of equal cost and
only the lowest code of each class is searched.
For a position permutation the symbol map is forced on the symbols already asked;
symbols never asked are interchangeable and are relabelled in order of appearance, and so
are the symbols that no remaining candidate contains ("dead": they score nothing against any
candidate, asked or not).
"""

from __future__ import annotations

import itertools

import numba
import numpy as np

MAX_PERMUTED_LENGTH = 7  # beyond this, only the never-asked symbols are used (n! grows too fast)


def position_perms(length: int, fix_first: bool) -> np.ndarray:
    """All position permutations a game allows, as rows of an int64 array (identity first)."""
    if length > MAX_PERMUTED_LENGTH:
        return np.arange(length, dtype=np.int64).reshape(1, length)
    rows = [p for p in itertools.permutations(range(length)) if not fix_first or p[0] == 0]
    return np.array(rows, dtype=np.int64).reshape(len(rows), length)


MAX_REORDERINGS = 24  # answer-preserving reorderings of the questions tried per position permutation


@numba.njit(cache=True)
def reorderings(answers: np.ndarray, h: int, limit: int) -> np.ndarray:
    """Permutations rho of h questions with answers[rho[t]] == answers[t] (rows, identity first, at most
    `limit` of them, in lexicographic order): a symmetry may send a question to another one that got the
    same answer. An empty `answers` means the answers are not known: the identity only."""
    repeated = False
    if answers.shape[0] == h:
        for t in range(h):
            for u in range(t):
                repeated |= answers[t] == answers[u]
    out = np.empty((limit if repeated else 1, h), dtype=np.int64)
    for t in range(h):
        out[0, t] = t
    if not repeated:  # the identity alone (this is most nodes: no cost beyond it)
        return out
    count = 0
    rho = np.full(h, -1, dtype=np.int64)
    used = np.zeros(h, dtype=np.bool_)
    t = 0  # backtracking over the positions: rho[t] is the next candidate to try there
    while t >= 0 and count < limit:
        if rho[t] >= 0:
            used[rho[t]] = False
        j = rho[t] + 1
        while j < h and (used[j] or answers[j] != answers[t]):
            j += 1
        if j == h:
            rho[t] = -1
            t -= 1
            continue
        rho[t] = j
        used[j] = True
        if t == h - 1:
            out[count] = rho
            count += 1
        else:
            t += 1
    return out[:count]


@numba.njit(cache=True)
def stabiliser(codes: np.ndarray, history: np.ndarray, answers: np.ndarray, perms: np.ndarray, k: int, fix_zero: bool):
    """Symmetries mapping the questions `history` with their `answers` onto themselves, so the candidate set
    onto itself: (position perms, symbol maps on asked symbols, asked mask).

    Each question goes to itself or to another question with the same answer (see reorderings). Row e of
    the symbol maps says where element e sends each asked symbol (-1 for symbols never asked); element 0 is
    the identity.
    """
    n_perm, n = perms.shape
    asked = np.zeros(k, dtype=np.bool_)
    if fix_zero:
        asked[0] = True
    for t in range(history.shape[0]):
        for i in range(n):
            asked[codes[history[t], i]] = True
    rhos = reorderings(answers, history.shape[0], MAX_REORDERINGS)
    keep_p = np.empty((n_perm * rhos.shape[0], n), dtype=np.int64)
    keep_s = np.empty((n_perm * rhos.shape[0], k), dtype=np.int64)
    count = 0
    tau = np.empty(k, dtype=np.int64)
    inv = np.empty(k, dtype=np.int64)
    for e in range(n_perm):
        pi = perms[e]
        for r in range(rhos.shape[0]):
            tau[:] = -1
            inv[:] = -1
            ok = True
            if fix_zero:
                tau[0] = 0
                inv[0] = 0
            for t in range(history.shape[0]):
                q = codes[history[t]]
                image = codes[history[rhos[r, t]]]
                for i in range(n):
                    a = q[i]
                    b = image[pi[i]]
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


def symbol_masks(codes: np.ndarray) -> np.ndarray:
    """Bit set of the symbols of every code (bit x for symbol x)."""
    masks = np.zeros(codes.shape[0], dtype=np.int64)
    for j in range(codes.shape[1]):
        masks |= np.left_shift(np.int64(1), codes[:, j].astype(np.int64))
    return masks


@numba.njit(cache=True)
def _relabel_order_ok(code, group, next_of, first) -> bool:
    """True when the symbols of `group` in `code` are its smallest ones, in order of first appearance."""
    expect = first
    for j in range(code.shape[0]):
        x = code[j]
        if not group[x]:
            continue
        if x == expect:
            expect = next_of[x]
        elif x > expect:
            return False
        # x < expect: seen before (a repeat in Mastermind)
    return True


@numba.njit(cache=True)
def _image_not_smaller(code, pi, tau, asked, free, dead, dead_list, img, relabel) -> bool:
    """True unless this symmetry, followed by relabelling, maps `code` to a smaller code."""
    n = code.shape[0]
    for i in range(n):
        img[pi[i]] = code[i]
    relabel[:] = -1
    next_free = 0
    next_dead = 0
    for j in range(n):
        x = img[j]
        y = tau[x] if asked[x] else x  # never-asked symbols: the relabelling decides
        if dead[y]:
            if relabel[y] == -1:
                relabel[y] = dead_list[next_dead]
                next_dead += 1
            img[j] = relabel[y]
        elif asked[x]:
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
            return True
    return True


@numba.njit(cache=True)
def _group_table(member, k):
    """next_of[x]: the next symbol of the group after x (k if none); also the first and the bit set."""
    next_of = np.empty(k, dtype=np.int64)
    last = k
    bits = np.int64(0)
    for x in range(k - 1, -1, -1):
        next_of[x] = last
        if member[x]:
            last = x
            bits |= np.int64(1) << x
    return next_of, last, bits


@numba.njit(cache=True)
def _lowest_bits(bits, k):
    """lowest[c] = the c smallest members of the bit set `bits`."""
    lowest = np.zeros(k + 1, dtype=np.int64)
    acc = np.int64(0)
    c = 0
    for x in range(k):
        if (bits >> x) & 1:
            acc |= np.int64(1) << x
            c += 1
            lowest[c] = acc
    return lowest


@numba.njit(cache=True)
def dead_symbols(asked, masks, cand, k, fix_zero):
    """Symbols that no code of `cand` contains (symbol 0 stays put without leading zeros): (mask, count).

    A probe's answers from `cand` do not change when one dead symbol replaces another, so they are
    interchangeable; never-asked symbols are dead only all together (the candidates are the codes
    consistent with questions that never mention them).
    """
    present = np.int64(0)
    for i in range(cand.shape[0]):
        present |= masks[cand[i]]
    dead = np.zeros(k, dtype=np.bool_)
    count = 0
    for x in range(k):
        if not (present >> x) & 1 and not (fix_zero and x == 0):
            dead[x] = True
            count += 1
    return dead, count


@numba.njit(cache=True)
def _popcount(bits) -> int:
    count = 0
    while bits:
        bits &= bits - 1
        count += 1
    return count


@numba.njit(cache=True)
def canonical_probes(codes, masks, probes, history, answers, perms, k, fix_zero, cand) -> np.ndarray:
    """The probes (a sorted index array) that are the lowest code of their class after `history` (with
    `answers`, the candidates' answer to each question, or empty: see stabiliser).

    Besides the symmetries fixing the history, symbols that were asked but appear in no
    candidate of `cand` ("dead") are interchangeable: they score nothing against any candidate.
    The relabelling test runs first on symbol bit sets, then in position order; the other
    symmetries are tried only on the probes that pass it.
    """
    if probes.shape[0] == 0:  # a node whose every probe is above the cut-off: no symmetry to compute
        return probes.copy()
    pis, taus, asked = stabiliser(codes, history, answers, perms, k, fix_zero)
    n = codes.shape[1]
    dead, n_dead = dead_symbols(asked, masks, cand, k, fix_zero)
    dead_list = np.flatnonzero(dead)
    is_free = ~asked & ~dead
    free = np.flatnonzero(is_free)
    n_free = free.shape[0]
    if pis.shape[0] == 1 and n_free < 2 and n_dead < 2:
        return probes.copy()
    free_next, free_first, free_bits = _group_table(is_free, k)
    dead_next, dead_first, dead_bits = _group_table(dead, k)
    low_free = _lowest_bits(free_bits, k)
    low_dead = _lowest_bits(dead_bits, k)
    img = np.empty(n, dtype=np.int64)
    relabel = np.empty(k, dtype=np.int64)
    out = np.empty(probes.shape[0], dtype=probes.dtype)
    m = 0
    for i in range(probes.shape[0]):
        p = probes[i]
        mf = masks[p] & free_bits
        md = masks[p] & dead_bits
        # the symbols of each group must be its smallest ones
        if mf != low_free[_popcount(mf)] or md != low_dead[_popcount(md)]:
            continue
        code = codes[p]
        if n_free > 1 and not _relabel_order_ok(code, is_free, free_next, free_first):
            continue
        if n_dead > 1 and not _relabel_order_ok(code, dead, dead_next, dead_first):
            continue
        ok = True
        for e in range(1, pis.shape[0]):  # element 0 is the identity, just tested
            if not _image_not_smaller(code, pis[e], taus[e], asked, free, dead, dead_list, img, relabel):
                ok = False
                break
        if ok:
            out[m] = p
            m += 1
    return out[:m]
