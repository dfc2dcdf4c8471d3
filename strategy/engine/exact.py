"""The exact search kernel, compiled with numba: min-cost decision trees by branch and bound.

value(S, d) is the least cost of a tree that finds every secret of the candidate set S when d
questions have already been asked. A secret found at question r costs cost[r]: a non-decreasing
vector, INF beyond a depth bound. cost[r] = r is the total number of questions; 0 up to L and INF
beyond is feasibility within L; 0 before L and 1 at L counts the secrets needing all L questions;
issue-specific vectors (a race against a fixed tree, "found within k") fit the same recurrence:

    value(S, d) = min over probes g of cost[d+1]·[g in S] + sum over non-winning answers f of value(S_f, d+1)

Bounds: a tree whose probes split a set into at most b non-winning parts finds at most
b^(j-1) secrets at its j-th level, so filling levels greedily (`level_fill`) bounds every part;
b measured on a set stays valid for its subsets. Parts of one or two secrets are solved exactly
by that formula. Before any recursion every part of a probe is bounded by `bound_set`: the
transposition table, then a scan of the part's own candidates (a question that cannot be the
secret finds nobody at its first level), which often proves the part's value outright.

Scanning probes is most of the work, so it has three kernels, chosen by the size of the set:
up to 15 secrets, 4-bit counters packed in one 64-bit word per probe, accumulated over every code
of the game (a contiguous, vectorised loop) and evaluated in closed form (while parts are small the
bound of a part of k secrets is alpha·k + beta); up to 255 secrets, byte counters over every code;
larger sets, counters for the canonical probes only (one per symmetry class,
`symmetry.canonical_probes`), which near the root are few. After a scan over every code, only the
probes whose bound is below the cut-off are reduced to their symmetry classes.

Probes are tried by increasing bound (then sum of squared part sizes, then code), popped from a heap
since most nodes stop after a few; a probe's large parts get narrow-window tests (searched with their
bound + a share of what the probe lacks as the cut-off, `window_step`) before the parts are searched
largest first with the cut-off left by the others' bounds. A node is settled by its scan alone when a
probe whose parts are all exact (one or two secrets) has the least bound of all probes, or meets the
node's known lower bound. A small set first measures the branching its probes really reach (`max_parts`:
often far below its parent's), which alone often lifts its bound above the cut-off; over every code it
counts only the codes of the symbol-content classes that could make more parts (`parts_by_content`). At a
node of at most 256 secrets the parts of a tried probe are bit sets, bounded from the node's answer masks
(`bound_part`, a popcount per candidate, answer and word) rather than by a scan of each part. Results
(exact values, or lower bounds from a cut-off search) go to a fixed-size transposition table keyed
by a 128-bit hash of (S, d). The driver can stop a running search through `control`.
"""

from __future__ import annotations

from typing import cast

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from .symmetry import canonical_probes, dead_symbols, stabiliser
from .table import split

# an np.int64 at run time (a constant of the kernels); Python code compares and adds it as the integer it is
INF = cast(int, np.int64(1 << 40))
# flags and zeros passed to kernels as NumPy scalars, not literals: numba compiles a callee once per literal value it
# is called with (three specialisations of the largest kernels on a first run), once per type otherwise
YES, NO, ZERO, ONE = np.bool_(True), np.bool_(False), np.int64(0), np.int64(1)

# params vector; SHIFT: cost[r] = r with no depth bound, so value(S, d) = value(S, 0) + d·|S| and the
# transposition table keeps values relative to depth 0 (a set reached at two depths is solved once)
P_CLASSES, P_WIN, P_SYMBOLS, P_FIX_ZERO, P_CONSISTENT, P_SHIFT = range(6)
# counters vector
C_NODES, C_TT_HITS, C_SHORTCUTS, C_PROBES, C_PAIRS = range(5)
N_COUNTERS = 5
# control vector, written by the driver while a search runs: STOP set means return at once (no result);
# BETA is a cut-off the driver may lower while a task runs (read by the task's top-level call only)
K_STOP, K_BETA = 0, 1

EXACT = np.int64(1 << 32)
SIZE_SHIFT = 33
PACKED_MAX = 15  # sets up to this size use 4-bit counters
BYTES_MAX = 255  # up to this size, byte counters over every code
TABLE_DEPTHS = 24  # level-fill bounds are tabulated for nodes up to this depth (deeper ones compute them)


@numba.njit(cache=True)
def fill_levels(m, b, d, cost, first):
    """Least conceivable cost of m secrets at a node with d questions asked and branching b.

    `first` = 1: the next question may find one secret; 0: it cannot (a probe outside the set).
    INF when the secrets cannot fit before the depth bound.
    """
    if m == 0:
        return 0
    total = 0
    left = m
    width = 1
    r = d + 1
    if first == 0:
        width = b
        r = d + 2
    while left > 0:
        if r >= cost.shape[0] or cost[r] >= INF or width == 0:
            return INF
        take = width if width < left else left
        total += take * cost[r]
        left -= take
        width = width * b if width * b < m else m
        r += 1
    return total


def make_scratch(n_codes: int, n_classes: int) -> tuple:
    """Work arrays shared by the scans of one search (each scan is done before the next begins):
    packed words lo/hi, byte lanes E0/O0/E1/O1, byte counters, and per-code bounds and exact flags."""
    word = np.zeros(n_codes, dtype=np.uint64)
    two = n_codes if 16 < n_classes <= 32 else 0
    counts = np.zeros((n_codes if n_classes > 32 else 0, n_classes), dtype=np.uint8)
    return (
        word,
        np.zeros(n_codes, dtype=np.uint64),
        np.zeros(n_codes, dtype=np.uint64),
        np.zeros(n_codes, dtype=np.uint64),
        np.zeros(two, dtype=np.uint64),
        np.zeros(two, dtype=np.uint64),
        counts,
        np.zeros(n_codes, dtype=np.int64),
        np.zeros(n_codes, dtype=np.bool_),
    )


@numba.njit(cache=True)
def make_bounds(cost, b_max, d_max, k_max):
    """The level-fill bounds of the objective, tabulated: (cost, first may hit [b, d, k], first misses [b, d, k]).

    Every node bounds its set and every part of every probe it tries, so these are looked up, not recomputed.
    """
    hit = np.empty((b_max + 1, d_max + 1, k_max + 1), dtype=np.int64)
    miss = np.empty((b_max + 1, d_max + 1, k_max + 1), dtype=np.int64)
    for b in range(b_max + 1):
        for d in range(d_max + 1):
            for k in range(k_max + 1):
                hit[b, d, k] = fill_levels(k, b, d, cost, ONE)
                miss[b, d, k] = fill_levels(k, b, d, cost, ZERO)
    return cost, hit, miss


@numba.njit(cache=True)
def lfill(bounds, m, b, d, first):
    """fill_levels from the tables when they cover (m, b, d)."""
    cost, hit, miss = bounds
    if m < hit.shape[2] and d < hit.shape[1] and b < hit.shape[0]:
        return hit[b, d, m] if first else miss[b, d, m]
    return fill_levels(m, b, d, cost, first)


@numba.njit(cache=True)
def level_fill(m, b, d, bounds):
    """Least conceivable cost of m secrets at a node with d questions asked (INF if they cannot fit)."""
    return lfill(bounds, m, b, d, ONE)


@numba.njit(cache=True)
def trivial(n, d, bounds):
    """Exact value of one or two secrets (the first is asked first)."""
    cost = bounds[0]
    if n == 1:
        return cost[d + 1] if d + 1 < cost.shape[0] else INF
    if d + 2 >= cost.shape[0] or cost[d + 2] >= INF:
        return INF
    return cost[d + 1] + cost[d + 2]


@numba.njit(cache=True)
def part_bounds(n, b, d, bounds):
    """part_bound[k] = level_fill(k, b, d + 1): the bound of a part of k secrets, k = 0..n."""
    cost, hit, miss = bounds
    if n < hit.shape[2] and d + 1 < hit.shape[1] and b < hit.shape[0]:
        return hit[b, d + 1, : n + 1]
    out = np.empty(n + 1, dtype=np.int64)
    for k in range(n + 1):
        out[k] = fill_levels(k, b, d + 1, cost, ONE)
    return out


# -- scan kernels -----------------------------------------------------------------------------------


@numba.njit(cache=True)
def count_packed(table, S, probes, every, acc):
    """4-bit counters of the answer classes of S, one 64-bit word per probe (n <= 15, <= 16 classes).

    `every`: for every code of the game, a contiguous loop the compiler vectorises; else for `probes`.
    """
    if every:
        N = table.shape[0]
        acc[:N] = 0
        one = np.uint64(1)
        four = np.uint64(4)
        n = S.shape[0]
        i = 0
        while i + 4 <= n:  # four rows per load and store of the counters: 1.5x faster than one
            r0, r1, r2, r3 = table[S[i]], table[S[i + 1]], table[S[i + 2]], table[S[i + 3]]
            for p in range(N):
                acc[p] += (
                    (one << (four * np.uint64(r0[p])))
                    + (one << (four * np.uint64(r1[p])))
                    + (one << (four * np.uint64(r2[p])))
                    + (one << (four * np.uint64(r3[p])))
                )
            i += 4
        for i in range(i, n):
            row = table[S[i]]
            for p in range(N):
                acc[p] += one << (four * np.uint64(row[p]))
        return N
    P = probes.shape[0]
    acc[:P] = 0
    for i in range(S.shape[0]):
        row = table[S[i]]
        for j in range(P):
            acc[j] += np.uint64(1) << np.uint64(4 * row[probes[j]])
    return P


@numba.njit(cache=True)
def _three_levels(pb, n, t):
    """(c1, c2, c3, ok): ok when the bound of every part of k <= n secrets is
    c1 + c2·(k - 1) + (c3 - c2)·max(0, k - t), which holds while parts fit in three levels."""
    c1 = pb[1]
    c2 = pb[2] - pb[1] if n >= 2 else 0
    c3 = pb[t + 1] - pb[t] if n > t else c2
    ok = pb[n] < INF
    for k in range(1, n + 1):
        if pb[k] != c1 + c2 * (k - 1) + (c3 - c2) * max(0, k - t):
            ok = False
    return c1, c2, c3, ok


@numba.njit(cache=True)
def _word(a, wsh):
    """(w, x, parts, small) of a packed word: secrets in the winning class, the word without them, the
    number of non-empty other classes, and whether every class holds at most two secrets."""
    m1 = np.uint64(0x1111111111111111)
    w = np.int64((a >> wsh) & np.uint64(15))
    x = a & ~(np.uint64(15) << wsh)
    nz = (x | (x >> np.uint64(1)) | (x >> np.uint64(2)) | (x >> np.uint64(3))) & m1
    big = ((x >> np.uint64(2)) | (x >> np.uint64(3)) | (x & (x >> np.uint64(1)))) & m1
    return w, x, np.int64((nz * m1) >> np.uint64(60)), big == 0


@numba.njit(cache=True)
def evaluate_packed(acc, P, n, d, b, bounds, win, lb, ex):
    """Bounds of the first P probes from their packed counters; returns the largest number of parts.

    While every part fits in three levels a probe's bound is w·hit + c1·parts + c2·(n - w - parts)
    + (c3 - c2)·excess (see evaluate_lanes): branch-free loops over the words, which the compiler
    vectorises (the excess only when some part can reach the third level). Otherwise each part's
    bound is looked up.
    """
    pb = part_bounds(n, b, d, bounds)
    hit = bounds[0][d + 1]
    wsh = np.uint64(4 * win)
    m4 = np.uint64(0x0F0F0F0F0F0F0F0F)
    t = b + 1
    c1, c2, c3, shaped = _three_levels(pb, n, t)
    b_here = 0
    if shaped and (n <= t or c3 == c2):
        for p in range(P):
            w, x, parts, small = _word(acc[p], wsh)
            b_here = max(b_here, parts)
            ex[p] = small
            total = w * hit + c1 * parts + c2 * (n - w - parts)
            lb[p] = INF if (parts == 1 and w == 0) or total >= INF else total
    elif shaped:
        for p in range(P):
            w, x, parts, small = _word(acc[p], wsh)
            b_here = max(b_here, parts)
            ex[p] = small
            total = (
                w * hit
                + c1 * parts
                + c2 * (n - w - parts)
                + (c3 - c2) * (_excess(x & m4, t) + _excess((x >> np.uint64(4)) & m4, t))
            )
            lb[p] = INF if (parts == 1 and w == 0) or total >= INF else total
    else:
        for p in range(P):
            w, x, parts, small = _word(acc[p], wsh)
            b_here = max(b_here, parts)
            ex[p] = small
            total = w * hit
            while x:
                total += pb[np.int64(x & np.uint64(15))]
                x >>= np.uint64(4)
            lb[p] = INF if (parts == 1 and w == 0) or total >= INF else total
    return b_here


@numba.njit(cache=True, inline="always")
def _nibble(c):
    """Class c's 4-bit counter increment in the low word (classes 0-15) or the high word (16-31)."""
    one = np.uint64(1) << ((np.uint64(4) * c) & np.uint64(63))
    return (one, np.uint64(0)) if c < 16 else (np.uint64(0), one)


@numba.njit(cache=True)
def count_lanes(table, S, probes, every, lo, hi, E0, O0, E1, O1):
    """Byte counters of the answer classes of S per probe (n <= 255, <= 32 classes), in lanes.

    S is counted in chunks of 15 with 4-bit counters (classes 0-15 in `lo`, 16-31 in `hi`), each
    chunk widened into bytes: even classes into E, odd into O. Every loop runs over contiguous
    arrays; with `every` over every code, else over `probes`.
    """
    P = table.shape[0] if every else probes.shape[0]
    n = S.shape[0]
    m4 = np.uint64(0x0F0F0F0F0F0F0F0F)
    two = E1.shape[0] > 0
    E0[:P] = 0
    O0[:P] = 0
    if two:
        E1[:P] = 0
        O1[:P] = 0
    for start in range(0, n, PACKED_MAX):
        stop = min(n, start + PACKED_MAX)
        if two:
            lo[:P] = 0
            hi[:P] = 0
            i = start
            if every:
                while i + 4 <= stop:  # four rows per load and store of the counters: 1.2x faster than one
                    r0, r1, r2, r3 = table[S[i]], table[S[i + 1]], table[S[i + 2]], table[S[i + 3]]
                    for p in range(P):
                        l0, h0 = _nibble(np.uint64(r0[p]))
                        l1, h1 = _nibble(np.uint64(r1[p]))
                        l2, h2 = _nibble(np.uint64(r2[p]))
                        l3, h3 = _nibble(np.uint64(r3[p]))
                        lo[p] += l0 + l1 + l2 + l3
                        hi[p] += h0 + h1 + h2 + h3
                    i += 4
            for i in range(i, stop):
                row = table[S[i]]
                for p in range(P):
                    l0, h0 = _nibble(np.uint64(row[p] if every else row[probes[p]]))
                    lo[p] += l0
                    hi[p] += h0
        else:
            count_packed(table, S[start:stop], probes, every, lo)
        for p in range(P):
            a = lo[p]
            E0[p] += a & m4
            O0[p] += (a >> np.uint64(4)) & m4
        if two:
            for p in range(P):
                a = hi[p]
                E1[p] += a & m4
                O1[p] += (a >> np.uint64(4)) & m4
    return P


@numba.njit(cache=True)
def _nonzero_lanes(x):
    """1 in the low bit of each byte lane of x that is not zero (SWAR)."""
    H = np.uint64(0x8080808080808080)
    L7 = np.uint64(0x7F7F7F7F7F7F7F7F)
    return ((((x & L7) + L7) | x) & H) >> np.uint64(7)


@numba.njit(cache=True)
def _lanes_above(x, t):
    """Nonzero when some byte lane of x exceeds t (t < 127)."""
    H = np.uint64(0x8080808080808080)
    L7 = np.uint64(0x7F7F7F7F7F7F7F7F)
    return (((x & L7) + np.uint64(0x7F - t) * np.uint64(0x0101010101010101)) | x) & H


@numba.njit(cache=True)
def _excess(x, t):
    """Sum over the byte lanes of x of max(0, lane - t): a saturating subtraction, then a byte sum."""
    H = np.uint64(0x8080808080808080)
    L = np.uint64(0x0101010101010101)
    dd = (x | H) - np.uint64(t) * L
    m = ((dd & H) >> np.uint64(7)) * np.uint64(255)
    return np.int64((((dd ^ H) & m) * L) >> np.uint64(56))


@numba.njit(cache=True)
def _two_words(e, o, clear0, clear1, wsh):
    """(w, x0, x1, parts, small) of a probe's two lane words (at most 16 answers): secrets in the winning
    class, the words without them, the number of non-empty other classes, every class at most two."""
    x0 = e & clear0
    x1 = o & clear1
    w = np.int64((((e & ~clear0) | (o & ~clear1)) >> wsh) & np.uint64(255))
    parts = np.int64(((_nonzero_lanes(x0) + _nonzero_lanes(x1)) * np.uint64(0x0101010101010101)) >> np.uint64(56))
    return w, x0, x1, parts, (_lanes_above(x0, 2) | _lanes_above(x1, 2)) == 0


@numba.njit(cache=True)
def evaluate_lanes(E0, O0, E1, O1, P, n, d, b, bounds, n_classes, win, lb, ex):
    """Bounds of the first P probes from their byte lanes; returns the largest number of parts.

    A part of k secrets is bounded by c1 + c2·(k - 1) + (c3 - c2)·max(0, k - b - 1) while k fits in
    three levels (k <= 1 + b + b²), so a probe's bound is w·hit + c1·parts + c2·(n - w - parts)
    + (c3 - c2)·excess, with parts and excess counted by SWAR on eight lanes at a time.
    """
    pb = part_bounds(n, b, d, bounds)
    hit = bounds[0][d + 1]
    two = E1.shape[0] > 0
    word = (win % 2) + (0 if win < 16 else 2)
    wsh = np.uint64(8 * ((win % 16) // 2))
    wclear = ~(np.uint64(255) << wsh)
    t = b + 1
    t3 = b + 1 + b * b
    c1 = pb[1]
    c2 = pb[2] - pb[1] if n >= 2 else 0
    c3 = pb[t + 1] - pb[t] if n > t else 0
    top = min(n, t3)
    shape_ok = pb[top] < INF and pb[top] == c1 + c2 * (top - 1) + (c3 - c2) * max(0, top - t)
    check3 = n > t3
    if (check3 and t3 >= 127) or n >= 128:
        shape_ok = False  # t3 past a lane's range, or a lane of 128 or more, past the guard bit of _excess
    dc = c3 - c2 if n > t else 0
    zero = np.uint64(0)
    b_here = 0
    if not two and shape_ok:
        # at most 16 answers and parts within three levels: two words and loops without branches, which
        # the compiler vectorises; when a part can pass three levels (n > t3) its probe is marked, and its
        # parts are summed one by one afterwards
        clear0 = wclear if word == 0 else ~zero
        clear1 = wclear if word == 1 else ~zero
        marked = False
        if not check3:
            for p in range(P):
                w, x0, x1, parts, small = _two_words(E0[p], O0[p], clear0, clear1, wsh)
                b_here = max(b_here, parts)
                ex[p] = small
                total = w * hit + c1 * parts + c2 * (n - w - parts) + dc * (_excess(x0, t) + _excess(x1, t))
                lb[p] = INF if (parts == 1 and w == 0) or total >= INF else total
        else:
            for p in range(P):
                w, x0, x1, parts, small = _two_words(E0[p], O0[p], clear0, clear1, wsh)
                b_here = max(b_here, parts)
                ex[p] = small
                total = w * hit + c1 * parts + c2 * (n - w - parts) + dc * (_excess(x0, t) + _excess(x1, t))
                over = (_lanes_above(x0, t3) | _lanes_above(x1, t3)) != 0
                marked |= over
                lb[p] = -1 if over else (INF if (parts == 1 and w == 0) or total >= INF else total)
        if marked:
            for p in range(P):
                if lb[p] < 0:
                    w, x0, x1, parts, small = _two_words(E0[p], O0[p], clear0, clear1, wsh)
                    total = w * hit
                    for x in (x0, x1):
                        while x:
                            total += pb[np.int64(x & np.uint64(255))]
                            x >>= np.uint64(8)
                    lb[p] = INF if total >= INF else total  # a part beyond three levels: not all in one part
        return b_here
    if two and shape_ok and not check3:
        # up to 32 answers, every part within three levels: four words, no branches (vectorised)
        sel = np.uint64(255) << wsh
        s0 = sel if word == 0 else zero
        s1 = sel if word == 1 else zero
        s2 = sel if word == 2 else zero
        s3 = sel if word == 3 else zero
        for p in range(P):
            x0 = E0[p] & ~s0
            x1 = O0[p] & ~s1
            x2 = E1[p] & ~s2
            x3 = O1[p] & ~s3
            w = np.int64((((E0[p] & s0) | (O0[p] & s1) | (E1[p] & s2) | (O1[p] & s3)) >> wsh) & np.uint64(255))
            nz = _nonzero_lanes(x0) + _nonzero_lanes(x1) + _nonzero_lanes(x2) + _nonzero_lanes(x3)
            parts = np.int64((nz * np.uint64(0x0101010101010101)) >> np.uint64(56))
            b_here = max(b_here, parts)
            ex[p] = (_lanes_above(x0, 2) | _lanes_above(x1, 2) | _lanes_above(x2, 2) | _lanes_above(x3, 2)) == 0
            total = (
                w * hit
                + c1 * parts
                + c2 * (n - w - parts)
                + dc * (_excess(x0, t) + _excess(x1, t) + _excess(x2, t) + _excess(x3, t))
            )
            lb[p] = INF if (parts == 1 and w == 0) or total >= INF else total
        return b_here
    for p in range(P):
        x0 = E0[p]
        x1 = O0[p]
        x2 = E1[p] if two else zero
        x3 = O1[p] if two else zero
        if word == 0:
            w = np.int64((x0 >> wsh) & np.uint64(255))
            x0 &= wclear
        elif word == 1:
            w = np.int64((x1 >> wsh) & np.uint64(255))
            x1 &= wclear
        elif word == 2:
            w = np.int64((x2 >> wsh) & np.uint64(255))
            x2 &= wclear
        else:
            w = np.int64((x3 >> wsh) & np.uint64(255))
            x3 &= wclear
        nz = _nonzero_lanes(x0) + _nonzero_lanes(x1) + _nonzero_lanes(x2) + _nonzero_lanes(x3)
        parts = np.int64((nz * np.uint64(0x0101010101010101)) >> np.uint64(56))
        if parts > b_here:
            b_here = parts
        ex[p] = (_lanes_above(x0, 2) | _lanes_above(x1, 2) | _lanes_above(x2, 2) | _lanes_above(x3, 2)) == 0
        over = (
            check3 and (_lanes_above(x0, t3) | _lanes_above(x1, t3) | _lanes_above(x2, t3) | _lanes_above(x3, t3)) != 0
        )
        if shape_ok and not over:
            total = w * hit + c1 * parts + c2 * (n - w - parts)
            if n > t:
                total += (c3 - c2) * (_excess(x0, t) + _excess(x1, t) + _excess(x2, t) + _excess(x3, t))
        else:
            total = w * hit
            for x in (x0, x1, x2, x3):
                while x:
                    total += pb[np.int64(x & np.uint64(255))]
                    x >>= np.uint64(8)
        lb[p] = INF if (parts == 1 and w == 0) or total >= INF else total
    return b_here


@numba.njit(cache=True)
def count_bytes(table, S, probes, every, counts):
    """Byte counters per probe and class (games with more than 32 answers); `every` as in count_packed."""
    if every:
        N = table.shape[0]
        counts[:N] = 0
        for i in range(S.shape[0]):
            row = table[S[i]]
            for p in range(N):
                counts[p, row[p]] += 1
        return N
    P = probes.shape[0]
    counts[:P] = 0
    for i in range(S.shape[0]):
        row = table[S[i]]
        for j in range(P):
            counts[j, row[probes[j]]] += 1
    return P


@numba.njit(cache=True)
def evaluate_bytes(counts, P, n, d, b, bounds, n_classes, win, lb, ex):
    """Bounds of the first P probes from their byte counters; returns the largest number of parts."""
    pb = part_bounds(n, b, d, bounds)
    hit = bounds[0][d + 1]
    b_here = 0
    for p in range(P):
        total = 0
        parts = 0
        big = False
        for c in range(n_classes):
            k = np.int64(counts[p, c])
            if k == 0:
                continue
            if c == win:
                total += hit
                continue
            parts += 1
            total += pb[k]
            if k > 2:
                big = True
        if parts > b_here:
            b_here = parts
        ex[p] = not big
        lb[p] = INF if (parts == 1 and counts[p, win] == 0) or total >= INF else total
    return b_here


@numba.njit(cache=True)
def fast_bounds(table, S, probes, every, d, b, bounds, n_classes, win, scratch):
    """Bounds of every code (`every`) or of `probes` on a set of at most 255 secrets, into scratch.lb/ex.

    Returns the largest number of parts. Up to 15 secrets and 16 answers: one packed word per probe;
    up to 32 answers: byte lanes; more answers: a byte per class.
    """
    lo, hi, E0, O0, E1, O1, counts, lb, ex = scratch
    n = S.shape[0]
    if n <= PACKED_MAX and n_classes <= 16:
        P = count_packed(table, S, probes, every, lo)
        return evaluate_packed(lo, P, n, d, b, bounds, win, lb, ex)
    if n_classes <= 32:
        P = count_lanes(table, S, probes, every, lo, hi, E0, O0, E1, O1)
        return evaluate_lanes(E0, O0, E1, O1, P, n, d, b, bounds, n_classes, win, lb, ex)
    P = count_bytes(table, S, probes, every, counts)
    return evaluate_bytes(counts, P, n, d, b, bounds, n_classes, win, lb, ex)


@numba.njit(cache=True)
def answer_sets(table, S, probes, every, n_classes, acc):
    """One bit per answer that each code (`every`) or each of `probes` gives some secret of S (games of at
    most 64 answers), into acc; returns (the number of probes, whether acc holds them as 32-bit words).
    Read them with `answer_bits`.

    Over every code of a game of at most 32 answers, the bits are 32-bit words and eight secrets' rows are
    ORed per load and store of a word: measured on bulls 5 of 9 sets of 5 to 40 secrets, 2.3x faster than
    one row at a time in 64-bit words."""
    n = S.shape[0]
    if every and n_classes <= 32:
        P = table.shape[0]
        a32 = acc.view(np.uint32)
        a32[:P] = 0
        o = np.uint32(1)
        i = 0
        while i + 8 <= n:
            r0, r1, r2, r3 = table[S[i]], table[S[i + 1]], table[S[i + 2]], table[S[i + 3]]
            r4, r5, r6, r7 = table[S[i + 4]], table[S[i + 5]], table[S[i + 6]], table[S[i + 7]]
            for p in range(P):
                a32[p] |= (
                    (o << np.uint32(r0[p]))
                    | (o << np.uint32(r1[p]))
                    | (o << np.uint32(r2[p]))
                    | (o << np.uint32(r3[p]))
                    | (o << np.uint32(r4[p]))
                    | (o << np.uint32(r5[p]))
                    | (o << np.uint32(r6[p]))
                    | (o << np.uint32(r7[p]))
                )
            i += 8
        for i in range(i, n):
            row = table[S[i]]
            for p in range(P):
                a32[p] |= o << np.uint32(row[p])
        return P, True
    one = np.uint64(1)
    P = table.shape[0] if every else probes.shape[0]
    acc[:P] = 0
    for i in range(n):
        row = table[S[i]]
        if every:
            for p in range(P):
                acc[p] |= one << np.uint64(row[p])
        else:
            for p in range(P):
                acc[p] |= one << np.uint64(row[probes[p]])
    return P, False


@numba.njit(cache=True, inline="always")
def answer_bits(acc, a32, p, narrow):
    """Probe p's answer bits as `answer_sets` left them in acc (narrow: in 32-bit words, a32 = acc's view)."""
    return np.uint64(a32[p]) if narrow else acc[p]


@numba.njit(cache=True)
def max_parts(table, S, probes, every, win, n_classes, acc):
    """The largest number of non-winning parts that any code (`every`) or any of `probes` splits S into,
    for games of at most 64 answers: the answers of each probe as bits (`answer_sets`), counted."""
    P, narrow = answer_sets(table, S, probes, every, n_classes, acc)
    keep = ~(np.uint64(1) << np.uint64(win))
    a32 = acc.view(np.uint32)
    most = 0
    for p in range(P):
        most = max(most, popcount(answer_bits(acc, a32, p, narrow) & keep))
    return most


# Codes with the same symbols (a symbol multiset, in any order) have the same number m of symbols in common
# with any secret, so their answers to it differ only in hits (0..m): over such a content class, the secrets
# of S with m common symbols fall into at most min(their number, the non-winning answers with m common)
# parts. Summed over m, that bounds the parts of every code of the class at once; `parts_by_content` visits
# the classes by decreasing bound and counts a class's codes (hits as a popcount of position-symbol bits)
# only while its bound exceeds the most parts found: the same value as max_parts. On the bulls 5 of 9 sets
# of 3 to 40 secrets about 10 of its 126 classes (1200 of 15120 codes) are counted; measured on the frontier's
# refutations (tools/bench_refutation.py): 0.76x the time (--set 16 12 1), 0.85x (the default set), 0.78x
# (fewest at 7, --set 15 3 0), with the same nodes; whole solves of the classic games about even.


def make_content(table: np.ndarray, codes: np.ndarray, symbols: int, answers: list) -> tuple:
    """The content classes of a game's codes, for `parts_by_content`: (position-symbol bits of each code, its
    class, common symbols of two classes (hits + blows of their answer in the table), class starts, the codes'
    bits in class order, the non-winning answers with m common symbols, m = 0..length). Empty when a code's
    position-symbol bits, or an answer as bit 8·hits + common, do not fit 64 bits (then max_parts counts every
    code)."""
    n, length = codes.shape
    if length * symbols > 64 or 9 * length >= 64:
        e = np.zeros(0, dtype=np.uint64)
        return (
            e,
            np.zeros(0, dtype=np.int64),
            np.zeros((0, 0), dtype=np.uint8),
            np.zeros(1, dtype=np.int64),
            e,
            np.zeros(0, dtype=np.int64),
        )
    held = np.zeros((n, symbols), dtype=np.int64)  # copies of each symbol in each code
    bits = np.zeros(n, dtype=np.uint64)
    for j in range(length):
        held[np.arange(n), codes[:, j]] += 1
        bits |= np.uint64(1) << (np.uint64(j * symbols) + codes[:, j].astype(np.uint64))
    kinds, cls = np.unique(held, axis=0, return_inverse=True)
    cls = cls.reshape(-1).astype(np.int64)
    order = np.argsort(cls, kind="stable")
    starts = np.searchsorted(cls[order], np.arange(len(kinds) + 1)).astype(np.int64)
    first = order[starts[:-1]]  # a code of each class
    common = np.array([h + b for h, b in answers], dtype=np.uint8)[table[np.ix_(first, first)]]
    room = np.zeros(length + 1, dtype=np.int64)
    for h, b in answers:
        if h < length:
            room[h + b] += 1
    return bits, cls, common, starts, bits[order].copy(), room


@numba.njit(cache=True)
def parts_by_content(S, content):
    """max_parts over every code of the game, by content classes (see make_content), for S of fewer than
    256 secrets."""
    bits, cls, common, starts, by_class, room = content
    n = S.shape[0]
    K = starts.shape[0] - 1
    kind = np.empty(n, dtype=np.int64)
    for i in range(n):
        kind[i] = cls[S[i]]
    # per class, the secrets of S by their common symbols m: 8-bit counters in one word (S has < 256 secrets)
    per_m = np.zeros(K, dtype=np.uint64)
    one = np.uint64(1)
    for i in range(n):
        col = common[kind[i]]  # symmetric: the column of the secret's class
        for c in range(K):
            per_m[c] += one << (np.uint64(col[c]) << np.uint64(3))
    bound = np.empty(K, dtype=np.int64)
    top = 0
    widest = 0
    for c in range(K):
        w = per_m[c]
        u = 0
        for m in range(room.shape[0]):
            u += min(np.int64((w >> np.uint64(8 * m)) & np.uint64(255)), room[m])
        bound[c] = u
        top = max(top, u)
        widest = max(widest, starts[c + 1] - starts[c])
    # the classes by decreasing bound: a counting sort (bounds are below the number of answers)
    at = np.zeros(top + 2, dtype=np.int64)
    for c in range(K):
        at[bound[c]] += 1
    total = 0
    for u in range(top, -1, -1):
        k = at[u]
        at[u] = total
        total += k
    order = np.empty(K, dtype=np.int64)
    for c in range(K):
        order[at[bound[c]]] = c
        at[bound[c]] += 1
    length = room.shape[0] - 1
    keep = ~(one << np.uint64(9 * length))  # the answer word's bit of the winning answer (all hits)
    words = np.empty(widest, dtype=np.uint64)
    most = 0
    for j in range(K):
        c = order[j]
        if bound[c] <= most:
            break
        lo = starts[c]
        P = starts[c + 1] - lo
        words[:P] = 0
        row = common[c]
        for i in range(n):
            s = bits[S[i]]
            m = np.uint64(row[kind[i]])
            for q in range(P):
                words[q] |= one << ((np.uint64(popcount(by_class[lo + q] & s)) << np.uint64(3)) + m)
        for q in range(P):
            most = max(most, popcount(words[q] & keep))
    return most


@numba.njit(cache=True)
def _below(vals, t, pool):
    """The codes whose value is below t, in increasing order, into pool; returns their number."""
    kept = 0
    for p in range(vals.shape[0]):
        if vals[p] < t:
            pool[kept] = p
            kept += 1
    return kept


@numba.njit(cache=True)
def _convex(pb):
    """Whether the part bounds grow by non-decreasing steps wherever they are finite (a balanced split of
    secrets into parts then costs the least; the level fill of costs that never decrease with depth is)."""
    for k in range(2, pb.shape[0]):
        if pb[k] >= INF:
            break
        if pb[k] - pb[k - 1] < pb[k - 1] - pb[k - 2]:
            return False
    return True


@numba.njit(cache=True)
def sift(table, S, d, b, bounds, n_classes, win, beta, scratch, pool):
    """probe_bounds' scan of every code, counting only the codes that may matter: those whose bound on S
    may be below beta, and those that may hold the least bound at or above it (the fail-soft result).

    A code giving w winning and k other answers (one bit each, `answer_sets`: a quarter of a count) costs
    at least a balanced split of n - w secrets into k parts, the level fill of a part being convex in its
    size. Returns (the number of codes counted, in pool in increasing order, their bounds and flags in
    scratch as fast_bounds leaves them; -1 when they are too many to gather, or the part bounds are not
    convex; the most parts any code makes; a lower bound of the bounds of the codes not counted)."""
    n = S.shape[0]
    pb = part_bounds(n, b, d, bounds)
    if not _convex(pb):
        return -1, 0, INF
    acc = scratch[0]
    N, narrow = answer_sets(table, S, pool, YES, n_classes, acc)
    hit = bounds[0][d + 1]
    bal = np.empty((2, n_classes + 1), dtype=np.int64)  # [w, k]: the bound of a code by its answers alone
    for w in range(2):
        m = n - w
        bal[w, 0] = w * hit if m == 0 else INF
        for k in range(1, n_classes + 1):
            q = m // k
            r = m - q * k
            bal[w, k] = w * hit + r * pb[min(q + 1, n)] + (k - r) * pb[q] if k <= m else INF
    bal[0, 1] = INF  # all of S in one part: no progress
    wbit = np.uint64(1) << np.uint64(win)
    a32 = acc.view(np.uint32)
    vals = np.empty(N, dtype=np.int64)
    most = 0
    for p in range(N):
        x = answer_bits(acc, a32, p, narrow)
        k = popcount(x & ~wbit)
        most = max(most, k)
        vals[p] = bal[1 if x & wbit else 0, k]
    # count the codes below beta; then, while some code left out may reach the least bound counted at or
    # above beta, those too (the fail-soft bound, and a stop probe there, stay the full scan's)
    t = beta
    lb = scratch[7]
    while True:
        kept = _below(vals, t, pool)
        if kept * SIFT_GATHER >= N:
            return -1, most, INF
        fast_bounds(table, S, pool[:kept], NO, d, b, bounds, n_classes, win, scratch)
        least_fail = INF
        for i in range(kept):
            if beta <= lb[i] < least_fail:
                least_fail = lb[i]
        rest = INF
        for p in range(N):
            if t <= vals[p] < rest:
                rest = vals[p]
        if rest > least_fail or rest >= INF:
            return kept, most, rest
        t = (least_fail if least_fail < INF else rest) + 1


@numba.njit(cache=True)
def scan(table, S, probes, d, b, bounds, n_classes, win, lb, sumsq, ex):
    """Bounds of the given probes on S (counters per probe); returns the largest number of parts.

    A probe that leaves all of S in one part gets INF (it makes no progress).
    """
    n = S.shape[0]
    P = probes.shape[0]
    counts = np.zeros(n_classes, dtype=np.int64)
    pb = part_bounds(n, b, d, bounds)
    hit = bounds[0][d + 1]
    b_here = 0
    for pi in range(P):
        row = table[probes[pi]]  # the table is symmetric: a probe's row holds its answers to every secret
        counts[:] = 0
        for i in range(n):
            counts[row[S[i]]] += 1
        total = 0
        sq = 0
        parts = 0
        big = False
        useless = False
        for c in range(n_classes):
            k = counts[c]
            if k == 0:
                continue
            sq += k * k
            if c == win:
                total += hit
                continue
            parts += 1
            if k == n:
                useless = True
            if k > 2:
                big = True
            total += pb[k]
        if parts > b_here:
            b_here = parts
        lb[pi] = INF if useless or total >= INF else total
        sumsq[pi] = sq
        ex[pi] = not big
    return b_here


@numba.njit(cache=True)
def squares_from_counters(scratch, probes, n, n_classes):
    """Sum of squared part sizes of each probe (orders probes of equal bound), read from the counters
    that `fast_bounds` left in scratch for every code."""
    lo, hi, E0, O0, E1, O1, counts = scratch[:7]
    out = np.empty(probes.shape[0], dtype=np.int64)
    for pi in range(probes.shape[0]):
        p = probes[pi]
        sq = 0
        if n <= PACKED_MAX and n_classes <= 16:
            a = lo[p]
            while a:
                k = np.int64(a & np.uint64(15))
                sq += k * k
                a >>= np.uint64(4)
        elif n_classes <= 32:
            for a in (
                E0[p],
                O0[p],
                E1[p] if E1.shape[0] > 0 else np.uint64(0),
                O1[p] if O1.shape[0] > 0 else np.uint64(0),
            ):
                while a:
                    k = np.int64(a & np.uint64(255))
                    sq += k * k
                    a >>= np.uint64(8)
        else:
            for c in range(n_classes):
                k = np.int64(counts[p, c])
                sq += k * k
        out[pi] = sq
    return out


# -- the transposition table -------------------------------------------------------------------------


@numba.njit(cache=True)
def _keys(S, d, zs, params):
    """The 128-bit key of (S, d) and the offset between stored and true values (see P_SHIFT)."""
    k1, k2, off = _key_base(d, S.shape[0], zs, params)
    for i in range(S.shape[0]):
        k1 ^= zs[0, S[i]]
        k2 ^= zs[1, S[i]]
    return k1, k2, off


@numba.njit(cache=True)
def _key_base(d, n, zs, params):
    """The key of an empty set at depth d, and the offset of a set of n secrets there: each secret's
    two words are XORed in by the caller (_keys from an array, bound_part from a bit set)."""
    shift = params[P_SHIFT] != 0
    dk = 0 if shift else d
    return zs[2, dk], zs[3, dk], (d * n if shift else 0)


@numba.njit(cache=True)
def tt_find(tt, k1, k2):
    mask = tt.shape[0] - 1
    i = k1 & mask
    for slot in (i, i ^ 1):
        if tt[slot, 3] != 0 and tt[slot, 0] == k1 and tt[slot, 1] == k2:
            return slot
    return -1


@numba.njit(cache=True)
def tt_bound(tt, counters, k1, k2, off, lb0):
    """What the table knows of a set (keys k1, k2; `off` as in _keys): (value, probe) when it is exact, else
    (lb0 or the stored lower bound if higher, -1); (INF, -1) when that bound is INF."""
    slot = tt_find(tt, k1, k2)
    if slot >= 0:
        counters[C_TT_HITS] += 1
        info = tt[slot, 3]
        if info & EXACT:
            return tt[slot, 2] + off, np.int64(info & 0xFFFFFFFF)
        if tt[slot, 2] + off > lb0:
            lb0 = tt[slot, 2] + off
    return (INF if lb0 >= INF else lb0), np.int64(-1)


@numba.njit(cache=True)
def tt_store(tt, k1, k2, value, probe, is_exact, n):
    """Keep the result; on a full bucket evict the entry of the smaller set (cheaper to redo)."""
    mask = tt.shape[0] - 1
    i = k1 & mask
    j = i ^ 1
    info = (n << SIZE_SHIFT) | (EXACT if is_exact else 0) | (probe & 0xFFFFFFFF)
    if tt[i, 3] != 0 and tt[i, 0] == k1 and tt[i, 1] == k2:
        target = i
    elif tt[j, 3] != 0 and tt[j, 0] == k1 and tt[j, 1] == k2:
        target = j
    else:
        if tt[i, 3] == 0:
            target = i
        elif tt[j, 3] == 0:
            target = j
        elif (tt[i, 3] >> SIZE_SHIFT) <= (tt[j, 3] >> SIZE_SHIFT):
            target = i
        else:
            target = j
        if tt[target, 3] != 0 and (tt[target, 3] >> SIZE_SHIFT) > n and n < 8:
            return  # never evict a big set for a tiny one
    tt[target, 0] = k1
    tt[target, 1] = k2
    tt[target, 2] = value
    tt[target, 3] = info


# -- probes of a node ---------------------------------------------------------------------------------


CLASS_SLOTS = 16  # a search meets only a handful of asked sets with symmetries (at most 6 in the classic games)


def make_class_cache(n_codes: int) -> tuple:
    """The probe-class cache of node_probes: a direct-mapped table of (key, length, probes) in arrays.

    Plain arrays rather than a numba typed Dict, whose creation compiles its methods in every process
    (about 0.4 s, more than a small game's whole search)."""
    return (
        np.zeros((CLASS_SLOTS, 2), dtype=np.int64),
        np.full(CLASS_SLOTS, -1, dtype=np.int64),
        np.empty((CLASS_SLOTS, n_codes), dtype=np.int32),
    )


@numba.njit(cache=True)
def node_probes(codes, masks, perms, all_probes, params, zs, classes, S, history, answers):
    """One probe per symmetry class at a node.

    Classes under the symmetries of the asked codes and their answers are cached per set of asked codes
    and pairs of them with equal answers (`classes`, see make_class_cache); the node's own reduction (dead
    symbols of S) can only merge them further, so it filters that list.
    """
    k = params[P_SYMBOLS]
    fix_zero = params[P_FIX_ZERO] != 0
    if params[P_CONSISTENT]:
        return canonical_probes(codes, masks, S, history, answers, perms, k, fix_zero, S)
    pis, _, asked = stabiliser(codes, history, answers, perms, k, fix_zero)
    if pis.shape[0] == 1:
        return canonical_probes(codes, masks, all_probes, history, answers, perms, k, fix_zero, S)
    k1 = np.int64(0x5EED)
    k2 = np.int64(0x0DD)
    for i in range(history.shape[0]):
        k1 ^= zs[0, history[i]]
        k2 ^= zs[1, history[i]]
        for j in range(i):
            if answers[i] == answers[j]:
                lo, hi = min(history[i], history[j]), max(history[i], history[j])
                k1 ^= zs[2, lo] ^ zs[3, hi]
                k2 ^= zs[3, lo] ^ zs[2, hi]
    keys, lengths, pools = classes
    slot = (k1 ^ (k2 >> 17)) & (keys.shape[0] - 1)
    if lengths[slot] >= 0 and keys[slot, 0] == k1 and keys[slot, 1] == k2:
        pool = pools[slot, : lengths[slot]]
    else:
        pool = canonical_probes(codes, masks, all_probes, history, answers, perms, k, fix_zero, all_probes)
        keys[slot, 0], keys[slot, 1], lengths[slot] = k1, k2, pool.shape[0]
        pools[slot, : pool.shape[0]] = pool
    if dead_symbols(asked, masks, S, k, fix_zero)[1] < 2:
        return pool
    return canonical_probes(codes, masks, pool, history, answers, perms, k, fix_zero, S)


@numba.njit(cache=True)
def history_answers(table, history, S):
    """The answer every secret of S gave to each earlier question (they all gave the same)."""
    answers = np.empty(history.shape[0], dtype=np.int64)
    for t in range(history.shape[0]):
        answers[t] = table[history[t], S[0]]
    return answers


@numba.njit(cache=True)
def first_optimal(lb, ex, P, stop_at, floor):
    """The first of P probes proven optimal by the scan alone, or -1 (always with stop_at < 0).

    A probe whose parts are all exact has its bound as its value; it is optimal when that value is the
    least bound of every probe (the scan covers them all; `floor` bounds the probes left out of it), or the
    set's known lower bound `stop_at` if higher."""
    if stop_at < 0:
        return -1
    least = floor
    for i in range(P):
        if lb[i] < least:
            least = lb[i]
    target = max(least, stop_at)
    if target >= INF:
        return -1  # nothing feasible: left to the caller's cut-off
    for i in range(P):
        if lb[i] == target and ex[i]:
            return i
    return -1


@numba.njit(cache=True)
def bounded_then_reduced(
    table,
    codes,
    masks,
    perms,
    all_probes,
    params,
    counters,
    S,
    pool,
    every,
    d,
    b,
    bounds,
    history,
    beta,
    stop_at,
    scratch,
    b_all,
    floor,
    counted,
):
    """probe_bounds for a small set: the byte-counter kernel bounds every probe of `pool` (every code of the
    game, or the candidates S themselves when probes must be consistent), and only those below the cut-off
    are reduced to their symmetry classes. A class's lowest code comes first in the pool, so the stop probe
    and the representatives are the ones a reduction before the scan would give. With `counted`, the pool
    is what `sift` kept and bounded already: b_all is the most parts over every code, floor a lower bound
    of the bounds of the codes left out (INF when none is)."""
    n = S.shape[0]
    n_classes = params[P_CLASSES]
    lb_all = scratch[7]
    ex_all = scratch[8]
    P0 = pool.shape[0]
    counters[C_PAIRS] += n * P0
    if counted:  # a sifted pool: counted already; the most parts over every code is b_all
        b_here = b_all
    else:
        b_here = fast_bounds(table, S, pool, every, d, b, bounds, n_classes, params[P_WIN], scratch)
    stop = first_optimal(lb_all, ex_all, P0, stop_at, floor)
    if stop >= 0:
        return (
            np.empty(0, dtype=all_probes.dtype),
            np.empty(0, dtype=np.int64),
            np.empty(0, dtype=np.int64),
            np.empty(0, dtype=np.bool_),
            b_here,
            np.int64(pool[stop]),
            lb_all[stop],
        )
    fail_lb = floor
    cand = np.empty(P0, dtype=all_probes.dtype)
    alive = 0
    for i in range(P0):
        v = lb_all[i]
        if v < beta:
            cand[alive] = pool[i]
            alive += 1
        elif v < fail_lb:
            fail_lb = v
    where = np.empty(0 if every else codes.shape[0], dtype=np.int64)  # code -> its place in the pool
    if not every:
        for i in range(P0):
            where[pool[i]] = i
    probes = canonical_probes(
        codes,
        masks,
        cand[:alive],
        history,
        history_answers(table, history, S),
        perms,
        params[P_SYMBOLS],
        params[P_FIX_ZERO] != 0,
        S,
    )
    P = probes.shape[0]
    at = np.empty(P, dtype=np.int64)
    lb = np.empty(P, dtype=np.int64)
    ex = np.empty(P, dtype=np.bool_)
    for i in range(P):
        at[i] = probes[i] if every else where[probes[i]]
        lb[i] = lb_all[at[i]]
        ex[i] = ex_all[at[i]]
    return probes, lb, squares_from_counters(scratch, at, n, n_classes), ex, b_here, np.int64(-1), fail_lb


@numba.njit(cache=True, nogil=True)
def probe_bounds(
    table,
    codes,
    masks,
    perms,
    all_probes,
    params,
    zs,
    classes,
    counters,
    S,
    d,
    b,
    bounds,
    history,
    beta,
    stop_at,
    scratch,
):
    """Bounds of the probes worth trying at a node.

    Returns (probes, their bounds, sums of squares, exact flags, b_here, stop, fail_lb): `probes`
    are canonical and have a bound below `beta`; `stop` >= 0 is a probe that is proven optimal (see
    first_optimal; `stop_at` < 0: never), in which case nothing else is returned and `fail_lb` is its
    value; otherwise `fail_lb` is the least bound among the probes left out (INF if none).
    """
    n = S.shape[0]
    n_classes = params[P_CLASSES]
    if n <= BYTES_MAX:
        if params[P_CONSISTENT] == 0:
            if SIFT_MIN <= n and beta < INF and 16 < n_classes <= 64:
                pool = np.empty(all_probes.shape[0], dtype=all_probes.dtype)
                kept, most, floor = sift(table, S, d, b, bounds, n_classes, params[P_WIN], beta, scratch, pool)
                if kept >= 0:
                    return bounded_then_reduced(
                        table,
                        codes,
                        masks,
                        perms,
                        all_probes,
                        params,
                        counters,
                        S,
                        pool[:kept],
                        NO,
                        d,
                        b,
                        bounds,
                        history,
                        beta,
                        stop_at,
                        scratch,
                        most,
                        floor,
                        YES,
                    )
            return bounded_then_reduced(
                table,
                codes,
                masks,
                perms,
                all_probes,
                params,
                counters,
                S,
                all_probes,
                YES,
                d,
                b,
                bounds,
                history,
                beta,
                stop_at,
                scratch,
                ZERO,
                INF,
                NO,
            )
        return bounded_then_reduced(
            table,
            codes,
            masks,
            perms,
            all_probes,
            params,
            counters,
            S,
            S,
            NO,
            d,
            b,
            bounds,
            history,
            beta,
            stop_at,
            scratch,
            ZERO,
            INF,
            NO,
        )
    win = params[P_WIN]
    empty = np.empty(0, dtype=all_probes.dtype)
    e64 = np.empty(0, dtype=np.int64)
    eb = np.empty(0, dtype=np.bool_)
    probes = node_probes(
        codes, masks, perms, all_probes, params, zs, classes, S, history, history_answers(table, history, S)
    )
    P = probes.shape[0]
    counters[C_PAIRS] += n * P
    lb = np.empty(P, dtype=np.int64)
    sq = np.empty(P, dtype=np.int64)
    ex = np.empty(P, dtype=np.bool_)
    b_here = scan(table, S, probes, d, b, bounds, n_classes, win, lb, sq, ex)
    stop = first_optimal(lb, ex, P, stop_at, INF)
    if stop >= 0:
        return empty, e64, e64, eb, b_here, probes[stop], lb[stop]
    fail_lb = INF
    alive = 0
    for pi in range(P):
        if lb[pi] < beta:
            alive += 1
        elif lb[pi] < fail_lb:
            fail_lb = lb[pi]
    keep = np.empty(alive, dtype=np.int64)
    alive = 0
    for pi in range(P):
        if lb[pi] < beta:
            keep[alive] = pi
            alive += 1
    return probes[keep], lb[keep], sq[keep], ex[keep], b_here, -1, fail_lb


# -- parts of small sets as bit sets ------------------------------------------------------------------
# A node of at most 256 secrets tries many probes and bounds each part before any recursion (`bound_set`);
# as bit sets over the node's secrets, a part and the answers of its candidates are up to four words, so a
# candidate's split of a part is a few popcounts per answer instead of a table lookup per pair. Measured on
# the frontier's refutations (tools/bench_refutation.py --set 16 12 1): up to 256 secrets 0.86x the time of
# up to 64; up to 128, 0.96x; up to 512, 0.90x.
BITS_MAX = 256

# Narrow-window tests before deep solves (see solve): the passes, and the least part size tested. Measured
# with a step of 1 (bulls 4 of 9, Mastermind 4x7 and 4x8, bulls 4 of 10): 3 to 12 passes alike, hundreds far
# slower (bulls 4 of 10: 10x); on the refutations that fill the frontier (tools/bench_refutation.py: bulls 5
# of 9, depth 2), 12 passes take 2.9x less time than 3 (28% of the nodes), 20 passes 3.2x; parts from 3 to 8
# secrets up alike, from 16 up slower. With `window_step`, 6 to 20 passes search the same nodes there.
NULL_WINDOW_PASSES = 12
NULL_WINDOW_MIN = 8

# Sets up to this size measure their own branching (`max_parts`) before their scan. Of the sets that a scan
# alone would prove above the cut-off, nearly all are proven by that branching's level fill; measured (bulls 5
# of 9 refutations): 8x fewer nodes, 0.59x the time; whole solves of the classic games about even. Above 40
# secrets few sets are proven that way and the count costs half a scan.
BRANCHING_CHECK_MAX = 40

# Sets of SIFT_MIN to BYTES_MAX secrets, in games of 17 to 64 answers, count only the codes `sift` cannot
# bound away, when those are under 1/SIFT_GATHER of the codes (gathered rows cost more per code than the
# contiguous count of every code). Measured on the bulls 5 of 9 refutations: about 80 codes of 15120 counted
# per set, 0.66x the time; from 8 secrets alike. Games of at most 16 answers count in one word per code,
# cheaply enough that sifting lost 5% (bulls 4 of 10, Mastermind 4x8).
SIFT_MIN = 16
SIFT_GATHER = 4


@numba.njit(cache=True)
def window_step(gap, sizes, order, exact, big):
    """How far a pass raises each tested part's cut-off: the probe's missing cost shared evenly among its
    large parts still inexact, at least 1. Measured against a step of 1: bulls 5 of 9 refutations 0.66x the
    pairs counted; whole solves of bulls 4 of 10 0.44x, Mastermind 4x8 0.67x, 5x5 0.55x the time (a step
    sized by each part, or half the even share, did no better; twice it, worse)."""
    k = 0
    for ci in range(big):
        c = order[ci]
        if sizes[c] < NULL_WINDOW_MIN:
            break
        if not exact[c]:
            k += 1
    return gap // k if k > 0 and gap > k else 1


@intrinsic
def popcount(typingctx, x):
    """Set bits of a uint64 (LLVM's ctpop: one instruction where the CPU has it)."""

    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.IntType(64), [ir.IntType(64)]), "llvm.ctpop.i64"
        )
        return builder.call(fn, args)

    return types.int64(types.uint64), codegen


@intrinsic
def lowest_bit(typingctx, x):
    """Index of the lowest set bit of a non-zero uint64 (LLVM's cttz)."""

    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.IntType(64), [ir.IntType(64), ir.IntType(1)]), "llvm.cttz.i64"
        )
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 1)])

    return types.int64(types.uint64), codegen


@numba.njit(cache=True)
def words_for(n):
    """64-bit words of a bit set over n secrets."""
    return (n + 63) >> 6


@numba.njit(cache=True)
def answer_masks(table, S, n_classes):
    """A[i, a] = the secrets of S (as bits of their positions, in words_for(n) words) that answer a to S[i]."""
    n = S.shape[0]
    A = np.zeros((n, n_classes, words_for(n)), dtype=np.uint64)
    for i in range(n):
        row = table[S[i]]
        for j in range(n):
            A[i, row[S[j]], j >> 6] |= np.uint64(1) << np.uint64(j & 63)
    return A


@numba.njit(cache=True)
def part_masks(table, S, probe, masks):
    """masks[a] = the secrets of S (bits of their positions) that answer a to `probe`.

    Read from the secrets' rows (the table is symmetric), which the node's scan has just brought into
    the cache, rather than from the probe's row, where each secret would be a cache miss."""
    masks[:] = 0
    for j in range(S.shape[0]):
        masks[table[S[j], probe], j >> 6] |= np.uint64(1) << np.uint64(j & 63)


@numba.njit(cache=True)
def bits_in(mask):
    """Set bits of a bit set of several words."""
    k = 0
    for w in range(mask.shape[0]):
        k += popcount(mask[w])
    return k


@numba.njit(cache=True)
def members(S, mask):
    """The secrets of S whose positions are the bits of `mask`, in the order of S."""
    out = np.empty(bits_in(mask), dtype=S.dtype)
    k = 0
    for w in range(mask.shape[0]):
        x = mask[w]
        while x:
            out[k] = S[(w << 6) + lowest_bit(x)]
            x &= x - np.uint64(1)
            k += 1
    return out


@numba.njit(cache=True)
def bound_part(params, bounds, zs, tt, counters, S, A, mask, d, b):
    """`bound_set` of the part of S given by `mask` (more than two secrets), from the answer masks A of S.

    The same value and probe as bound_set of the part's members: the transposition table, then each
    candidate's split of the part (one popcount per answer and word), then the shortcut for a candidate whose
    parts are all exact and meet the bound."""
    n = bits_in(mask)
    W = mask.shape[0]
    k1, k2, off = _key_base(d, n, zs, params)
    for w in range(W):
        x = mask[w]
        while x:
            i = (w << 6) + lowest_bit(x)
            k1 ^= zs[0, S[i]]
            k2 ^= zs[1, S[i]]
            x &= x - np.uint64(1)
    lb0, probe = tt_bound(tt, counters, k1, k2, off, level_fill(n, b, d, bounds))
    if probe >= 0 or lb0 >= INF:
        return lb0, probe
    counters[C_PAIRS] += n * n
    pb = part_bounds(n, b, d, bounds)
    hit = bounds[0][d + 1]
    win = params[P_WIN]
    n_classes = params[P_CLASSES]
    node_lb = INF if params[P_CONSISTENT] else lfill(bounds, n, b, d, ZERO)
    best = INF + 1  # above every bound: an infeasible set (all INF) has its exact value INF too, as in bound_set
    best_i = -1  # the first candidate whose parts are all exact and whose bound is the least of those
    at_lb0 = -1  # the first candidate whose parts are all exact and whose bound is lb0
    done = False
    for w0 in range(W):
        x = mask[w0]
        while x:
            i = (w0 << 6) + lowest_bit(x)
            x &= x - np.uint64(1)
            total = hit
            small = True
            for a in range(n_classes):
                if a != win:
                    k = 0
                    for w in range(W):
                        k += popcount(mask[w] & A[i, a, w])
                    total += pb[k]
                    small &= k <= 2
            if total > INF:
                total = INF
            if total < node_lb:
                node_lb = total
            if small and total < best:
                best = total
                best_i = i
            if small and total == lb0:
                at_lb0 = i  # optimal: no candidate can do better than the known bound (so node_lb <= lb0 below)
                done = True
                break
        if done:
            break
    if node_lb <= lb0:
        node_lb = lb0
        best_i = at_lb0
        best = lb0
    if best_i >= 0 and best == node_lb:
        counters[C_SHORTCUTS] += 1
        tt_store(tt, k1, k2, node_lb - off, np.int64(S[best_i]), YES, n)
        return node_lb, S[best_i]
    return node_lb, -1


# -- the search ---------------------------------------------------------------------------------------


@numba.njit(cache=True)
def bound_set(table, params, bounds, zs, tt, counters, scratch, S, d, b):
    """Cheap bound of S: (value, probe) when it is exact, else (lower bound, -1).

    Uses the transposition table, level filling and a scan of the candidates only: a
    non-candidate costs at least the level filling that finds nobody at the first question,
    and a candidate whose parts are all solved exactly and which meets the resulting bound is optimal.
    """
    n = S.shape[0]
    if n <= 2:
        return trivial(n, d, bounds), S[0]
    k1, k2, off = _keys(S, d, zs, params)
    lb0, probe = tt_bound(tt, counters, k1, k2, off, level_fill(n, b, d, bounds))
    if probe >= 0 or lb0 >= INF:
        return lb0, probe
    counters[C_PAIRS] += n * n
    if n <= BYTES_MAX:
        fast_bounds(table, S, S, NO, d, b, bounds, params[P_CLASSES], params[P_WIN], scratch)
        lb = scratch[7]
        ex = scratch[8]
    else:
        lb = np.empty(n, dtype=np.int64)
        sq = np.empty(n, dtype=np.int64)
        ex = np.empty(n, dtype=np.bool_)
        scan(table, S, S, d, b, bounds, params[P_CLASSES], params[P_WIN], lb, sq, ex)
    node_lb = INF if params[P_CONSISTENT] else lfill(bounds, n, b, d, ZERO)
    for i in range(n):
        if lb[i] < node_lb:
            node_lb = lb[i]
    if node_lb < lb0:
        node_lb = lb0
    for i in range(n):
        if ex[i] and lb[i] == node_lb:
            counters[C_SHORTCUTS] += 1
            tt_store(tt, k1, k2, node_lb - off, np.int64(S[i]), YES, n)
            return node_lb, S[i]
    return node_lb, -1


@numba.njit(cache=True)
def _bits(x):
    """Bits needed to hold the non-negative integer x."""
    b = 0
    while x > 0:
        b += 1
        x >>= 1
    return b


@numba.njit(cache=True)
def probe_queue(lb, sq):
    """The probes in the order (bound, sum of squares, position), the search order and the canonical
    tie-break, as a binary min-heap of distinct packed keys in an array: nodes usually stop after a few
    probes, so a full sort would be wasted. Returns (heap, mask): pop a key with heap_pop, its position
    is key & mask. When the keys would not fit 63 bits, the keys are ranks from two stable sorts."""
    P = lb.shape[0]
    ib = _bits(P - 1) if P > 1 else 1
    sb = _bits(sq.max()) if P > 0 else 0
    heap = np.empty(P, dtype=np.int64)
    if P > 0 and ib + sb + _bits(lb.max()) > 63:
        by_sq = np.argsort(sq, kind="mergesort")
        order = by_sq[np.argsort(lb[by_sq], kind="mergesort")]
        for i in range(P):
            heap[i] = (np.int64(i) << ib) | order[i]  # sorted, hence already a heap
    else:
        for i in range(P):
            heap[i] = (lb[i] << (sb + ib)) | (sq[i] << ib) | i
        for i in range(P // 2 - 1, -1, -1):
            _sift_down(heap, i, P)
    return heap, (np.int64(1) << ib) - 1


@numba.njit(cache=True)
def _sift_down(heap, i, n):
    """Restore the heap property below position i of heap[:n]."""
    x = heap[i]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and heap[c + 1] < heap[c]:
            c += 1
        if heap[c] >= x:
            break
        heap[i] = heap[c]
        i = c
    heap[i] = x


@numba.njit(cache=True)
def heap_pop(heap, n):
    """The least key of heap[:n] (n > 0), taken out: heap[:n - 1] is the heap left."""
    top = heap[0]
    if n > 1:
        heap[0] = heap[n - 1]
        _sift_down(heap, 0, n - 1)
    return top


@numba.njit(cache=True)
def largest_first(sizes, order):
    """order[:k] = the classes of more than two secrets (the only ones searched), by decreasing size, ties
    by class (a stable insertion sort: there are few); returns k."""
    k = 0
    for c in range(sizes.shape[0]):
        m = sizes[c]
        if m <= 2:
            continue
        j = k
        while j > 0 and sizes[order[j - 1]] < m:
            order[j] = order[j - 1]
            j -= 1
        order[j] = c
        k += 1
    return k


@numba.njit(cache=True, nogil=True)
def solve(
    table,
    codes,
    masks,
    perms,
    all_probes,
    params,
    bounds,
    zs,
    tt,
    counters,
    classes,
    scratch,
    content,
    S,
    d,
    beta,
    history,
    b_parent,
    hint,
    only_probe,
    control,
    live,
    probe_bounds_fn,
):
    """(value, probe) of S at depth d if value < beta; otherwise (lower bound >= beta, -1).

    `probe_bounds_fn` is `probe_bounds` as a first-class function (see `searcher.ProbeBoundsFn`): called through
    its address, so that this kernel compiles without it, and the two compile at once in two processes.

    `hint` >= 0 is a lower bound the caller already got from `bound_set` (which was not exact).
    `only_probe` >= 0 evaluates that first question alone (nothing is stored for S then).
    When control[K_STOP] is set the search returns at once without storing anything; its result
    is then meaningless. With `live` (a task's top-level call) the cut-off also follows
    control[K_BETA], which the driver lowers when other tasks improve its bound. The GIL is
    released, so a driver thread can write `control` while this runs.
    """
    if control[K_STOP] != 0:
        return INF, -1
    n = S.shape[0]
    if only_probe >= 0:
        lb0 = level_fill(n, b_parent, d, bounds)
    elif hint < 0:
        lb0, probe = bound_set(table, params, bounds, zs, tt, counters, scratch, S, d, b_parent)
        if probe >= 0:
            return lb0, probe
    else:
        lb0 = hint
    k1, k2, off = _keys(S, d, zs, params)
    if lb0 >= beta:
        if only_probe < 0:
            tt_store(tt, k1, k2, lb0 - off, ZERO, NO, n)
        return lb0, -1
    n_classes = params[P_CLASSES]
    if only_probe < 0 and 2 < n <= BRANCHING_CHECK_MAX and n_classes <= 64:
        # the branching this set really allows, measured before its scan: b_parent is often far above it,
        # and with it the set's own bound (`bound_set`) often reaches the cut-off, which the scan would prove
        if params[P_CONSISTENT] == 0 and content[0].shape[0] > 0:
            b_true = parts_by_content(S, content)
        else:
            b_true = max_parts(
                table,
                S,
                S if params[P_CONSISTENT] else all_probes,
                params[P_CONSISTENT] == 0,
                params[P_WIN],
                n_classes,
                scratch[0],
            )
        if b_true < b_parent:
            b_parent = b_true
            v, probe = bound_set(table, params, bounds, zs, tt, counters, scratch, S, d, b_parent)
            if probe >= 0:
                return v, probe
            if v > lb0:
                lb0 = v
            if lb0 >= beta:
                tt_store(tt, k1, k2, lb0 - off, ZERO, NO, n)
                return lb0, -1
    counters[C_NODES] += 1
    if only_probe >= 0:
        probes = np.full(1, only_probe, dtype=all_probes.dtype)
        lb = np.empty(1, dtype=np.int64)
        sq = np.empty(1, dtype=np.int64)
        ex = np.empty(1, dtype=np.bool_)
        scan(table, S, probes, d, b_parent, bounds, n_classes, params[P_WIN], lb, sq, ex)
        b_here = b_parent  # one probe's parts say nothing about the branching of other probes
        fail_lb = INF
        if lb[0] >= beta:
            return lb[0], -1
    else:
        probes, lb, sq, ex, b_here, stop, fail_lb = probe_bounds_fn(
            table,
            codes,
            masks,
            perms,
            all_probes,
            params,
            zs,
            classes,
            counters,
            S,
            d,
            b_parent,
            bounds,
            history,
            beta,
            lb0,
            scratch,
        )
        if stop >= 0:  # proven optimal by the scan; fail_lb is then its value
            tt_store(tt, k1, k2, fail_lb - off, np.int64(stop), YES, n)
            return fail_lb, stop
    queue, mask = probe_queue(lb, sq)

    # a typed -1: a literal argument would make numba compile a second overload of this recursive
    # function, and cached overloads that call each other crash when loaded (numba issue 6713)
    no_probe = np.int64(-1)
    no_live = np.int64(0)
    child_history = np.empty(history.shape[0] + 1, dtype=history.dtype)
    child_history[:-1] = history
    best = beta
    best_probe = -1
    win = params[P_WIN]
    part_lb = np.empty(n_classes, dtype=np.int64)
    part_exact = np.empty(n_classes, dtype=np.bool_)
    sizes = np.empty(n_classes, dtype=np.int64)
    part_order = np.empty(n_classes, dtype=np.int64)
    pb_here = part_bounds(n, b_here, d, bounds)  # the level fill of a part of k secrets, looked up per part
    hit = bounds[0][d + 1]
    bits = n <= BITS_MAX  # parts as bit sets (see bound_part); else as runs of `split`
    A = np.empty((0, n_classes, 1), dtype=np.uint64)
    part_bits = np.empty((n_classes, words_for(n) if bits else 1), dtype=np.uint64)
    part = S[:0]
    starts = np.empty(0, dtype=np.int64)
    left = queue.shape[0]
    while left > 0:
        if live and control[K_BETA] < best:  # the driver lowered the cut-off
            if best_probe >= 0 and best < fail_lb:
                fail_lb = best  # a proven value, now above the cut-off: still a lower bound of S
            best = control[K_BETA]
            best_probe = -1
        pi = heap_pop(queue, left) & mask
        left -= 1
        bound = lb[pi]
        if bound >= best:
            if bound < fail_lb:
                fail_lb = bound
            break
        probe = probes[pi]
        if ex[pi]:
            best = bound
            best_probe = probe
            break  # later probes have bounds >= this exact value
        counters[C_PROBES] += 1
        if bits:
            if A.shape[0] == 0:
                A = answer_masks(table, S, n_classes)
            part_masks(table, S, probe, part_bits)
        else:
            part, starts = split(table, S, np.int64(probe), n_classes)
        # the level fills of the parts (with this node's branching, at least the scan's bound), improved
        # part by part, largest first, with each part's own bound (often exact) until the probe is refuted
        total = 0
        for c in range(n_classes):
            m = bits_in(part_bits[c]) if bits else starts[c + 1] - starts[c]
            if c == win:
                total += hit if m > 0 else 0
                m = 0
            sizes[c] = m
            part_lb[c] = pb_here[m]
            part_exact[c] = m <= 2
            total += part_lb[c]
        big = largest_first(sizes, part_order)
        for ci in range(big):
            c = part_order[ci]
            if total >= best:
                break
            if bits:
                v, q = bound_part(params, bounds, zs, tt, counters, S, A, part_bits[c], d + 1, b_here)
            else:
                v, q = bound_set(
                    table, params, bounds, zs, tt, counters, scratch, part[starts[c] : starts[c + 1]], d + 1, b_here
                )
            total += v - part_lb[c]
            part_lb[c] = v
            part_exact[c] = q >= 0
        child_history[-1] = probe
        # then passes of narrow-window tests (each large part searched with its bound + step as the cut-off, the
        # step sharing what the probe still lacks: cheap, and often enough to refute it), then the deep solves
        # with the cut-offs those leave
        for rnd in range(NULL_WINDOW_PASSES + 1):
            deep = rnd == NULL_WINDOW_PASSES
            step = window_step(best - total, sizes, part_order, part_exact, big)
            for ci in range(big):
                c = part_order[ci]
                if total >= best or (not deep and sizes[c] < NULL_WINDOW_MIN):
                    break
                if part_exact[c]:
                    continue
                cut = best - total + part_lb[c] if deep else part_lb[c] + step
                v, q = solve(
                    table,
                    codes,
                    masks,
                    perms,
                    all_probes,
                    params,
                    bounds,
                    zs,
                    tt,
                    counters,
                    classes,
                    scratch,
                    content,
                    members(S, part_bits[c]) if bits else part[starts[c] : starts[c + 1]],
                    d + 1,
                    cut,
                    child_history,
                    b_here,
                    part_lb[c],
                    no_probe,
                    control,
                    no_live,
                    probe_bounds_fn,
                )
                if control[K_STOP] != 0:
                    return INF, -1
                total += v - part_lb[c]
                part_lb[c] = v
                part_exact[c] = q >= 0
                if live and control[K_BETA] < best:
                    if best_probe >= 0 and best < fail_lb:
                        fail_lb = best
                    best = control[K_BETA]
                    best_probe = -1
            if total >= best:
                break
        if total < best:
            best = total
            best_probe = probe
        elif total < fail_lb:
            fail_lb = total
    if fail_lb < lb0:
        fail_lb = lb0
    if only_probe >= 0:
        return (best, best_probe) if best_probe >= 0 else (fail_lb, -1)
    if best_probe >= 0:
        tt_store(tt, k1, k2, best - off, np.int64(best_probe), YES, n)
        return best, best_probe
    tt_store(tt, k1, k2, fail_lb - off, ZERO, NO, n)
    return fail_lb, -1


# -- half a level of lookahead --------------------------------------------------------------------------


@numba.njit(cache=True, nogil=True)
def half_level(table, params, bounds, zs, tt, counters, scratch, S, d, b, probes, lb, beta):
    """A lower bound of value(S, d) half a level below the probe scan: the least over `probes` (every class of
    the node; their scan bounds `lb`) of the winning cost plus each part's `bound_set` (the transposition table,
    then a scan of the part's own candidates, above its level fill with branching b), probes taken by increasing
    scan bound until that bound reaches the least so far or `beta` (fail-soft: a result of at least beta)."""
    n_classes = params[P_CLASSES]
    win = params[P_WIN]
    hit = bounds[0][d + 1]
    order = np.argsort(lb, kind="mergesort")
    best = INF
    sizes = np.empty(n_classes, dtype=np.int64)
    part_order = np.empty(n_classes, dtype=np.int64)
    for j in range(order.shape[0]):
        i = order[j]
        if lb[i] >= min(best, beta):
            best = min(best, lb[i])
            break
        members, starts = split(table, S, np.int64(probes[i]), n_classes)
        total = 0
        for c in range(n_classes):
            k = starts[c + 1] - starts[c]
            sizes[c] = 0 if c == win else k
            if k > 0:
                total += hit if c == win else level_fill(k, b, d + 1, bounds)
        cut = min(best, beta)
        big = largest_first(sizes, part_order)
        for ci in range(big):
            if total >= cut:
                break
            c = part_order[ci]
            fill = level_fill(sizes[c], b, d + 1, bounds)
            v, _ = bound_set(
                table, params, bounds, zs, tt, counters, scratch, members[starts[c] : starts[c + 1]], d + 1, b
            )
            if v > fill:
                total += v - fill
        if total >= INF:
            total = INF
        if lb[i] > total:
            total = lb[i]
        if total < best:
            best = total
    return best
