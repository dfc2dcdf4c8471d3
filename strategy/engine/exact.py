"""The exact search kernel, compiled with numba: min-cost decision trees by branch and bound.

value(S, L) is the least cost of a tree that finds every secret of the candidate set S
within L questions (L = NO_CAP for no bound). A secret found at question r costs
W1*r, plus M when r == L. (W1, M) = (1, 0) is the total number of questions;
(0, 0) is feasibility (0 or INF); (0, 1) counts the secrets needing all L questions.

    value(S, L) = W1*|S| + min over probes g of sum over non-winning answers f of value(S_f, L-1)

Bounds: a tree whose probes split a set into at most b non-winning parts finds at most
b^(r-1) secrets at question r, so filling levels greedily (`level_fill`) bounds every part;
b measured on a set stays valid for its subsets. Parts of one or two secrets are solved
by that formula exactly. Before any recursion every part of a probe is bounded by
`bound_set`: the transposition table, then a scan of the part's own candidates (a question
that cannot be the secret finds nobody at its first level), which often proves the part's
value outright. Probes are tried by increasing bound, parts largest first with the cut-off
left by the others' bounds; a scan stops at the first probe whose exact value meets the
node's lower bound. Results (exact values, or lower bounds from a cut-off search) go to a
fixed-size transposition table keyed by a 128-bit hash of (S, L). Only one probe per
symmetry class (`symmetry.canonical_probes`) is searched.
"""
from __future__ import annotations

import numba
import numpy as np

from ..feedback_table import split
from ..symmetry import canonical_probes, dead_symbols, stabiliser

INF = np.int64(1 << 40)
NO_CAP = 1000  # "no depth bound": the child of NO_CAP is NO_CAP

# params vector
P_W1, P_M, P_CLASSES, P_WIN, P_SYMBOLS, P_FIX_ZERO, P_CONSISTENT = range(7)
# counters vector
C_NODES, C_TT_HITS, C_SHORTCUTS, C_PROBES = range(4)
# control vector, written by the driver while a search runs: STOP set means return at once (no result)
K_STOP = 0

EXACT = np.int64(1 << 32)
SIZE_SHIFT = 33


@numba.njit(cache=True)
def level_fill(m: int, b: int, L: int, w1: int, M: int) -> int:
    """Least conceivable cost of m secrets under branching b and depth bound L (INF if they cannot fit)."""
    return _fill_levels(m, b, L, w1, M, 1)


@numba.njit(cache=True)
def level_fill_after_miss(m: int, b: int, L: int, w1: int, M: int) -> int:
    """The same bound when the first question cannot be the secret: nobody is found at question 1."""
    return _fill_levels(m, b, L, w1, M, 0)


@numba.njit(cache=True)
def _fill_levels(m, b, L, w1, M, first):
    if m == 0:
        return 0
    cost = 0
    left = m
    cap = first
    r = 1
    if first == 0:
        if L < 2:
            return INF
        cap = b
        r = 2
    while left > 0:
        if r > L:
            return INF
        take = cap if cap < left else left
        c = w1 * r
        if r == L:
            c += M
        cost += take * c
        left -= take
        if cap <= left:
            cap *= b
        r += 1
    return cost


@numba.njit(cache=True)
def child_cap(L: int) -> int:
    return L if L >= NO_CAP else L - 1


@numba.njit(cache=True)
def scan(table, S, probes, L, b, params, lb, sumsq, exact, stop_at):
    """Bound every probe on S into lb/sumsq/exact; return (largest number of non-winning parts, -1).

    A probe that leaves all of S in one part gets INF (it makes no progress). A probe whose
    parts are all exact and whose value is `stop_at` (a proven lower bound) is optimal: the
    scan stops there and returns its position instead of -1.
    """
    n = S.shape[0]
    w1 = params[P_W1]
    M = params[P_M]
    win = params[P_WIN]
    n_classes = params[P_CLASSES]
    P = probes.shape[0]
    # Count parts secret by secret: table rows are contiguous over probes (the table is symmetric),
    # which streams memory instead of gathering one byte per cache line.
    counts = np.zeros((P, n_classes), dtype=np.int32)
    for i in range(n):
        row = table[S[i]]
        for pi in range(P):
            counts[pi, row[probes[pi]]] += 1
    cl = child_cap(L)
    part_bound = np.empty(n + 1, dtype=np.int64)
    for m in range(n + 1):
        part_bound[m] = level_fill(m, b, cl, w1, M)
    b_here = 0
    for pi in range(P):
        total = w1 * n
        sq = 0
        parts = 0
        is_exact = True
        useless = False
        for c in range(n_classes):
            k = counts[pi, c]
            if k == 0:
                continue
            sq += k * k
            if c == win:
                continue
            parts += 1
            if k == n:
                useless = True
            if k > 2:
                is_exact = False
            total += part_bound[k]
        if parts > b_here:
            b_here = parts
        if useless or total >= INF:
            total = INF
        lb[pi] = total
        sumsq[pi] = sq
        exact[pi] = is_exact
        if is_exact and total == stop_at:
            return b_here, pi
    return b_here, -1


@numba.njit(cache=True)
def _keys(S, L, zs):
    k1 = zs[2, L]
    k2 = zs[3, L]
    for i in range(S.shape[0]):
        k1 ^= zs[0, S[i]]
        k2 ^= zs[1, S[i]]
    return k1, k2


@numba.njit(cache=True)
def tt_find(tt, k1, k2):
    mask = tt.shape[0] - 1
    i = k1 & mask
    for slot in (i, i ^ 1):
        if tt[slot, 3] != 0 and tt[slot, 0] == k1 and tt[slot, 1] == k2:
            return slot
    return -1


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


@numba.njit(cache=True)
def trivial(n, L, w1, M):
    """Exact value of one or two secrets (the first is asked first)."""
    if n == 1:
        return w1 + (M if L == 1 else 0)
    if L < 2:
        return INF
    return 3 * w1 + (M if L == 2 else 0)


@numba.njit(cache=True)
def node_probes(codes, masks, perms, all_probes, params, zs, classes, S, history):
    """One probe per symmetry class at a node.

    Classes under the symmetries of the asked codes are cached per set of asked codes; the
    node's own reduction (dead symbols of S) can only merge them further, so it filters that list.
    """
    k = params[P_SYMBOLS]
    fix_zero = params[P_FIX_ZERO] != 0
    if params[P_CONSISTENT]:
        return canonical_probes(codes, masks, S, history, perms, k, fix_zero, S)
    pis, _, asked = stabiliser(codes, history, perms, k, fix_zero)
    if pis.shape[0] == 1:
        return canonical_probes(codes, masks, all_probes, history, perms, k, fix_zero, S)
    k1 = np.int64(0x5EED)
    k2 = np.int64(0x0DD)
    for i in range(history.shape[0]):
        k1 ^= zs[0, history[i]]
        k2 ^= zs[1, history[i]]
    key = (k1, k2)
    if key in classes:
        pool = classes[key]
    else:
        pool = canonical_probes(codes, masks, all_probes, history, perms, k, fix_zero, all_probes)
        classes[key] = pool
    if dead_symbols(asked, masks, S, k, fix_zero)[1] < 2:
        return pool
    return canonical_probes(codes, masks, pool, history, perms, k, fix_zero, S)


@numba.njit(cache=True)
def bound_set(table, params, zs, tt, counters, S, L, b):
    """Cheap bound of S: (value, probe) when it is exact, else (lower bound, -1).

    Uses the transposition table, level filling and a scan of the candidates only: a
    non-candidate costs at least level_fill_after_miss, and a candidate whose parts are all
    solved exactly and which meets the resulting bound is optimal.
    """
    n = S.shape[0]
    w1 = params[P_W1]
    M = params[P_M]
    if n <= 2:
        return trivial(n, L, w1, M), S[0]
    lb0 = level_fill(n, b, L, w1, M)
    k1, k2 = _keys(S, L, zs)
    slot = tt_find(tt, k1, k2)
    if slot >= 0:
        counters[C_TT_HITS] += 1
        info = tt[slot, 3]
        if info & EXACT:
            return tt[slot, 2], info & 0xFFFFFFFF
        if tt[slot, 2] > lb0:
            lb0 = tt[slot, 2]
    if lb0 >= INF:
        return INF, -1
    lb = np.empty(n, dtype=np.int64)
    sq = np.empty(n, dtype=np.int64)
    ex = np.empty(n, dtype=np.bool_)
    _, stop = scan(table, S, S, L, b, params, lb, sq, ex, lb0)
    if stop >= 0:
        counters[C_SHORTCUTS] += 1
        tt_store(tt, k1, k2, lb0, S[stop], True, n)
        return lb0, S[stop]
    node_lb = INF if params[P_CONSISTENT] else level_fill_after_miss(n, b, L, w1, M)
    for i in range(n):
        if lb[i] < node_lb:
            node_lb = lb[i]
    if node_lb < lb0:
        node_lb = lb0
    for i in range(n):
        if ex[i] and lb[i] == node_lb:
            counters[C_SHORTCUTS] += 1
            tt_store(tt, k1, k2, node_lb, S[i], True, n)
            return node_lb, S[i]
    return node_lb, -1


@numba.njit(cache=True, nogil=True)
def solve(table, codes, masks, perms, all_probes, params, zs, tt, counters, classes, S, L, beta, history, b_parent,
          hint, only_probe, control):
    """(value, probe) of S within L questions if value < beta; otherwise (lower bound >= beta, -1).

    `hint` >= 0 is a lower bound the caller already got from `bound_set` (which was not exact).
    `only_probe` >= 0 evaluates that first question alone (nothing is stored for S then).
    When control[K_STOP] is set the search returns at once without storing anything; its result
    is then meaningless. The GIL is released, so a driver thread can set it while this runs.
    """
    if control[K_STOP] != 0:
        return INF, -1
    n = S.shape[0]
    w1 = params[P_W1]
    M = params[P_M]
    if only_probe >= 0:
        lb0 = level_fill(n, b_parent, L, w1, M)
    elif hint < 0:
        lb0, probe = bound_set(table, params, zs, tt, counters, S, L, b_parent)
        if probe >= 0:
            return lb0, probe
    else:
        lb0 = hint
    k1, k2 = _keys(S, L, zs)
    if lb0 >= beta:
        if only_probe < 0:
            tt_store(tt, k1, k2, lb0, 0, False, n)
        return lb0, -1
    cl = child_cap(L)
    n_classes = params[P_CLASSES]

    counters[C_NODES] += 1
    if only_probe >= 0:
        probes = np.full(1, only_probe, dtype=all_probes.dtype)
    else:
        probes = node_probes(codes, masks, perms, all_probes, params, zs, classes, S, history)
    P = probes.shape[0]
    lb = np.empty(P, dtype=np.int64)
    sq = np.empty(P, dtype=np.int64)
    ex = np.empty(P, dtype=np.bool_)
    b_here, stop = scan(table, S, probes, L, b_parent, params, lb, sq, ex, -1 if only_probe >= 0 else lb0)
    if only_probe >= 0:
        b_here = b_parent  # one probe's parts say nothing about the branching of other probes
    if stop >= 0:
        tt_store(tt, k1, k2, lb0, probes[stop], True, n)
        return lb0, probes[stop]
    # only probes whose bound is below the cut-off can matter: sort those by bound, then sum of squares
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
    by_sq = keep[np.argsort(sq[keep], kind="mergesort")]
    order = by_sq[np.argsort(lb[by_sq], kind="mergesort")]

    # a typed -1: a literal argument would make numba compile a second overload of this recursive
    # function, and cached overloads that call each other crash when loaded (numba issue 6713)
    no_probe = np.int64(-1)
    child_history = np.empty(history.shape[0] + 1, dtype=history.dtype)
    child_history[:-1] = history
    best = beta
    best_probe = -1
    win = params[P_WIN]
    part_lb = np.empty(n_classes, dtype=np.int64)
    part_exact = np.empty(n_classes, dtype=np.bool_)
    sizes = np.empty(n_classes, dtype=np.int64)
    for oi in range(order.shape[0]):
        pi = order[oi]
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
        members, starts = split(table, S, probe, n_classes)
        # bound every part cheaply (parts may turn out exact), then solve the rest largest first
        total = w1 * n
        for c in range(n_classes):
            m = starts[c + 1] - starts[c] if c != win else 0
            sizes[c] = m
            if m == 0:
                part_lb[c] = 0
                part_exact[c] = True
                continue
            v, q = bound_set(table, params, zs, tt, counters, members[starts[c]:starts[c + 1]], cl, b_here)
            part_lb[c] = v
            part_exact[c] = q >= 0
            total += v
        if total < best:
            part_order = np.argsort(-sizes, kind="mergesort")
            child_history[-1] = probe
            for ci in range(n_classes):
                c = part_order[ci]
                if sizes[c] <= 2:
                    break
                if part_exact[c]:
                    continue
                v, _ = solve(
                    table, codes, masks, perms, all_probes, params, zs, tt, counters, classes,
                    members[starts[c]:starts[c + 1]], cl, best - total + part_lb[c], child_history, b_here, part_lb[c],
                    no_probe, control,
                )
                if control[K_STOP] != 0:
                    return INF, -1
                total += v - part_lb[c]
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
        tt_store(tt, k1, k2, best, best_probe, True, n)
        return best, best_probe
    tt_store(tt, k1, k2, fail_lb, 0, False, n)
    return fail_lb, -1
