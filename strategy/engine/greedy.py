"""Greedy tree building, compiled: one scoring rule applied at every node, with answers computed on the fly.

No N×N table: a code is laid out as its symbol per position (`sym`), how many times that symbol
already occurred earlier in the code (`occ`), and its symbol counts (`cnt`). Against a secret s,
probe p scores hits = #{j: p_j = s_j} and common = #{j: occ_j(p) < cnt_s(p_j)}, which is the multiset
rule of `rules.feedback` (the tests check every pair of small games against it); a row of answers for
one secret and many probes is a contiguous, vectorised loop. Memory is O(codes + tree).

The tree is built here too, depth first, as arrays: candidate sets are ranges of one permutation of
the codes, split in place by answer. At each node: one code left; else a candidate that splits the
others into singletons (optimal under every rule, and the tie-break prefers it); else every probe of
the node's symmetry classes is scored over the candidates, parallel over probes when the node is big.
Ties go to a code that may be the secret, then the lowest code (class minima keep that exact).
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ..rules import feedback
from .symmetry import canonical_probes

feedback_rule = numba.njit(cache=True)(feedback)

RULES = {"expected-size": 0, "entropy": 1, "minimax": 2, "most-parts": 3, "random-consistent": 4}
SYMMETRY_MIN_SET = 2  # symmetry classes at every node: fewer probes to score (class minima keep the tie-break)
PARALLEL_WORK = 300_000  # probe x candidate pairs from which a node is scanned by several threads


@intrinsic
def popcount(typingctx, x):
    """Set bits of a uint64 (LLVM's ctpop: one instruction, or a vector sequence in vectorised loops)."""
    if x != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64)])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.ctpop.i64")
        return builder.call(fn, [args[0]])

    return types.uint64(types.uint64), codegen


H8 = np.uint64(0x8080808080808080)
L7 = np.uint64(0x7F7F7F7F7F7F7F7F)
ONES = np.uint64(0x0101010101010101)


@numba.njit(cache=True)
def packed_layout(codes, k, distinct):
    """Every code in 64-bit words: symbols one per byte; and its symbol set (distinct symbols) or its
    colour counts one per byte (colours 0-7 and 8-15). Needs length <= 8 and, with repetition, k <= 16."""
    N, L = codes.shape
    word = np.zeros(N, dtype=np.uint64)
    mask = np.zeros(N, dtype=np.uint64)
    cnt0 = np.zeros(N, dtype=np.uint64)
    cnt1 = np.zeros(N, dtype=np.uint64)
    for p in range(N):
        for j in range(L):
            x = np.uint64(codes[p, j])
            word[p] |= x << np.uint64(8 * j)
            mask[p] |= np.uint64(1) << x
            if x < 8:
                cnt0[p] += np.uint64(1) << (np.uint64(8) * x)
            else:
                cnt1[p] += np.uint64(1) << (np.uint64(8) * (x - np.uint64(8)))
    return word, mask, cnt0, cnt1


def packs(length: int, symbols: int, distinct: bool) -> bool:
    """True when a game fits the packed answer kernel."""
    return length <= 8 and (symbols <= 64 if distinct else symbols <= 16)


@numba.njit(cache=True)
def _min_sum(a, b):
    """Sum over the byte lanes of min(a, b) (lanes below 128)."""
    d = (a | H8) - b
    ge = ((d & H8) >> np.uint64(7)) * np.uint64(255)  # a >= b in that lane
    sat = (d ^ H8) & ge  # max(0, a - b)
    return ((a - sat) * ONES) >> np.uint64(56)


@numba.njit(cache=True)
def code_layout(codes, k):
    """(sym[j, p], occ[j, p], cnt[p, x]) for codes (N, length): the on-the-fly answer tables."""
    N, L = codes.shape
    sym = np.empty((L, N), dtype=np.uint8)
    occ = np.empty((L, N), dtype=np.uint8)
    cnt = np.zeros((N, k), dtype=np.uint8)
    for p in range(N):
        for j in range(L):
            x = codes[p, j]
            sym[j, p] = x
            occ[j, p] = cnt[p, x]
            cnt[p, x] += 1
    return sym, occ, cnt


@numba.njit(cache=True)
def answer_of(sym, occ, cnt, lut, width, s, p):
    """The answer class of probe p against secret s."""
    h = 0
    c = 0
    for j in range(sym.shape[0]):
        x = sym[j, p]
        h += x == sym[j, s]
        c += occ[j, p] < cnt[s, x]
    return lut[h * width + c]


@numba.njit(cache=True)
def _compact(sym, occ, probes):
    """The layout of `probes` only, contiguous: what the scans read for every candidate."""
    L = sym.shape[0]
    P = probes.shape[0]
    psym = np.empty((L, P), dtype=np.uint8)
    pocc = np.empty((L, P), dtype=np.uint8)
    for j in range(L):
        for i in range(P):
            psym[j, i] = sym[j, probes[i]]
            pocc[j, i] = occ[j, probes[i]]
    return psym, pocc


@numba.njit(cache=True)
def _count(psym, pocc, sym, cnt, lut, width, cand, lo, hi, counts, n_classes):
    """Histogram of answers of every compact probe over the candidates (counts[P, C], 16- or 32-bit)."""
    L = psym.shape[0]
    P = psym.shape[1]
    counts[lo:hi, :] = 0
    cls = np.empty(P, dtype=np.uint8)
    hits = np.empty(P, dtype=np.uint8)
    common = np.empty(P, dtype=np.uint8)
    for ci in range(cand.shape[0]):
        s = cand[ci]
        hits[lo:hi] = 0
        common[lo:hi] = 0
        for j in range(L):
            sj = sym[j, s]
            row_s = cnt[s]
            for i in range(lo, hi):
                x = psym[j, i]
                hits[i] += x == sj
                common[i] += pocc[j, i] < row_s[x]
        for i in range(lo, hi):
            cls[i] = lut[hits[i] * width + common[i]]
        for i in range(lo, hi):
            counts[i, cls[i]] += 1


@numba.njit(cache=True)
def score_tables(n, rule):
    """Per count 0..n: the rule's contribution of a part (k², k log k, k for the max, -1 per part)."""
    f = np.zeros(n + 1)
    for kk in range(1, n + 1):
        if rule == 0:
            f[kk] = kk * kk
        elif rule == 1:
            f[kk] = kk * np.log(kk) if kk > 1 else 0.0
        elif rule == 2:
            f[kk] = kk
        else:
            f[kk] = -1.0
    return f


@numba.njit(cache=True)
def _slot(pw, pm, pc0, pc1, sw, sm, sc0, sc1, distinct, length):
    """The answer of a packed probe to a packed secret as slot c(c+1)/2 + h (c common, h hits): arithmetic,
    no table, so the loop over probes vectorises. Scores only need the counts, not the class names."""
    x = pw ^ sw
    h = np.uint64(length) - popcount((((x & L7) + L7) | x) & H8)
    if distinct:
        c = popcount(pm & sm)
    else:
        c = _min_sum(pc0, sc0) + _min_sum(pc1, sc1)
    return (c * (c + np.uint64(1)) >> np.uint64(1)) + h


@numba.njit(cache=True)
def _count_packed(cw, cm, cc0, cc1, cand, packed, distinct, length, lo, hi, lanes, acc):
    """Lane counts of the compact probes lo..hi over the candidates, counted 15 at a time in 4-bit
    counters, then widened: into byte lanes (lanes has 4 rows: slots of the same parity, 0-15 then 16-31)
    when there are at most 255 candidates, else into 16-bit lanes (8 rows: slot = 4 * lane + row % 4,
    rows 4-7 for slots 16-31)."""
    word, mask, cnt0, cnt1 = packed
    m4 = np.uint64(0x0F0F0F0F0F0F0F0F)
    m16 = np.uint64(0x000F000F000F000F)
    wide = lanes.shape[0] == 8
    for w in range(lanes.shape[0]):
        lanes[w, lo:hi] = 0
    n = cand.shape[0]
    for start in range(0, n, 15):
        stop = min(n, start + 15)
        acc[0, lo:hi] = 0
        acc[1, lo:hi] = 0
        for ci in range(start, stop):
            s = cand[ci]
            sw, sm, sc0, sc1 = word[s], mask[s], cnt0[s], cnt1[s]
            for i in range(lo, hi):
                c = _slot(cw[i], cm[i], cc0[i], cc1[i], sw, sm, sc0, sc1, distinct, length)
                one = np.uint64(1) << ((np.uint64(4) * c) & np.uint64(63))
                acc[0, i] += one if c < 16 else np.uint64(0)
                acc[1, i] += one if c >= 16 else np.uint64(0)
        if wide:
            for half in range(2):
                for r in range(4):
                    sh = np.uint64(4 * r)
                    for i in range(lo, hi):
                        lanes[4 * half + r, i] += (acc[half, i] >> sh) & m16
        else:
            for i in range(lo, hi):
                a = acc[0, i]
                lanes[0, i] += a & m4
                lanes[1, i] += (a >> np.uint64(4)) & m4
                a = acc[1, i]
                lanes[2, i] += a & m4
                lanes[3, i] += (a >> np.uint64(4)) & m4


@numba.njit(cache=True)
def _compact_packed(packed, probes):
    word, mask, cnt0, cnt1 = packed
    P = probes.shape[0]
    cw = np.empty(P, dtype=np.uint64)
    cm = np.empty(P, dtype=np.uint64)
    cc0 = np.empty(P, dtype=np.uint64)
    cc1 = np.empty(P, dtype=np.uint64)
    for i in range(P):
        p = probes[i]
        cw[i], cm[i], cc0[i], cc1[i] = word[p], mask[p], cnt0[p], cnt1[p]
    return cw, cm, cc0, cc1


@numba.njit(cache=True)
def _lane(s, wide):
    """(row, shift) of slot s in the lanes (see _count_packed)."""
    if wide:
        return 4 * (s // 16) + (s % 16) % 4, np.uint64(16 * ((s % 16) // 4))
    return (s % 2) + (0 if s < 16 else 2), np.uint64(8 * ((s % 16) // 2))


@numba.njit(cache=True)
def _best_packed(lanes, probes, lo, hi, length, rule, f):
    """The best probe of probes[lo:hi] from its lanes (ties: may be the secret, then the earlier).

    Scores are summed slot by slot over all probes (contiguous loops the compiler vectorises)."""
    wide = lanes.shape[0] == 8
    lane_mask = np.uint64(0xFFFF) if wide else np.uint64(255)
    slots = length * (length + 1) // 2 + length + 1
    score = np.zeros(hi - lo)
    for s in range(slots):
        row, sh = _lane(s, wide)
        for i in range(lo, hi):
            k = np.int64((lanes[row, i] >> sh) & lane_mask)
            if rule == 0:
                score[i - lo] += k * k
            elif rule == 1:
                score[i - lo] += f[k]
            elif rule == 2:
                score[i - lo] = max(score[i - lo], k)
            else:
                score[i - lo] -= k > 0
    row, sh = _lane(slots - 1, wide)  # the last slot is all hits: the probe may be the secret
    best, best_score, best_cons = -1, np.inf, False
    for i in range(lo, hi):
        cons = ((lanes[row, i] >> sh) & lane_mask) > 0
        if _better(rule, score[i - lo], cons, best_score, best_cons):
            best, best_score, best_cons = probes[i], score[i - lo], cons
    return best, best_score, best_cons


@numba.njit(cache=True, nogil=True)
def scan_packed(packed, cand, probes, distinct, length, rule):
    """(best probe, its score, may it be the secret) among `probes` on the candidates, answers computed
    on the fly from the packed layout. The GIL is released: threads may scan parts of a probe list."""
    P = probes.shape[0]
    cw, cm, cc0, cc1 = _compact_packed(packed, probes)
    lanes = np.empty((4 if cand.shape[0] <= 255 else 8, P), dtype=np.uint64)
    acc = np.empty((2, P), dtype=np.uint64)
    _count_packed(cw, cm, cc0, cc1, cand, packed, distinct, length, 0, P, lanes, acc)
    return _best_packed(lanes, probes, 0, P, length, rule, score_tables(cand.shape[0], rule))


def merge(results: list, rule: int) -> int:
    """The best of per-range scan results, taken in probe order (ties keep the earlier range)."""
    best, best_score, best_cons = results[0]
    for probe, score, cons in results[1:]:
        if probe >= 0 and _better(rule, score, cons, best_score, best_cons):
            best, best_score, best_cons = probe, score, cons
    return int(best)


@numba.njit(cache=True)
def _better(rule, score, cons, best_score, best_cons):
    if rule == 1:  # float scores: equal within rounding is a tie
        return score < best_score - 1e-9 or (abs(score - best_score) <= 1e-9 and cons and not best_cons)
    return score < best_score or (score == best_score and cons and not best_cons)


@numba.njit(cache=True)
def _score(counts, i, n_classes, win, rule, klogk):
    score = 0.0
    for c in range(n_classes):
        k = counts[i, c]
        if k == 0:
            continue
        if rule == 0:
            score += k * k
        elif rule == 1:
            score += klogk[k]
        elif rule == 2:
            if k > score:
                score = k
        else:
            score -= 1.0
    return score, counts[i, win] > 0


@numba.njit(cache=True)
def _best_in(counts, probes, lo, hi, n_classes, win, rule, klogk):
    best, best_score, best_cons = -1, np.inf, False
    for i in range(lo, hi):
        score, cons = _score(counts, i, n_classes, win, rule, klogk)
        if _better(rule, score, cons, best_score, best_cons):
            best, best_score, best_cons = probes[i], score, cons
    return best, best_score, best_cons


@numba.njit(cache=True)
def best_probe_serial(sym, occ, cnt, lut, width, cand, probes, n_classes, win, rule, klogk):
    """The best of `probes` on the candidates, answers counted per (probe, class): 16-bit counters, or
    32-bit ones when a part could hold more than 65535 secrets (the root of Mastermind 6x8 and up)."""
    psym, pocc = _compact(sym, occ, probes)
    P = probes.shape[0]
    if cand.shape[0] <= 65535:
        narrow = np.empty((P, n_classes), dtype=np.uint16)
        _count(psym, pocc, sym, cnt, lut, width, cand, 0, P, narrow, n_classes)
        return _best_in(narrow, probes, 0, P, n_classes, win, rule, klogk)[0]
    wide = np.empty((P, n_classes), dtype=np.uint32)
    _count(psym, pocc, sym, cnt, lut, width, cand, 0, P, wide, n_classes)
    return _best_in(wide, probes, 0, P, n_classes, win, rule, klogk)[0]


@numba.njit(cache=True)
def perfect_candidate(sym, occ, cnt, lut, width, cand, n_classes, seen):
    """The lowest candidate that splits the candidates into singletons, or -1 (seen: n_classes zeros)."""
    n = cand.shape[0]
    best = -1
    if n > n_classes:
        return -1  # more candidates than answers: no probe separates them all
    for ci in range(n):
        p = cand[ci]
        if best >= 0 and p > best:
            continue
        ok = True
        for i in range(n):
            c = answer_of(sym, occ, cnt, lut, width, cand[i], p)
            if seen[c]:
                ok = False
            seen[c] = True
        for c in range(n_classes):
            seen[c] = False
        if ok:
            best = p
    return best


@numba.njit(cache=True)
def split_range(sym, occ, cnt, lut, width, perm, lo, hi, probe, n_classes, tmp, starts):
    """Reorder perm[lo:hi] by the answer to `probe`; starts[c] .. starts[c+1] is class c (offsets from lo)."""
    starts[:] = 0
    for i in range(lo, hi):
        tmp[i] = answer_of(sym, occ, cnt, lut, width, perm[i], probe)
        starts[tmp[i] + 1] += 1
    for c in range(n_classes):
        starts[c + 1] += starts[c]
    fill = starts[:n_classes].copy()
    out = np.empty(hi - lo, dtype=perm.dtype)
    for i in range(lo, hi):
        c = tmp[i]
        out[fill[c]] = perm[i]
        fill[c] += 1
    perm[lo:hi] = out


@numba.njit(cache=True)
def walk_every_secret(codes, secrets, node_probe, node_parent, node_answer, nodes, class_of, width, n_classes, win):
    """Play each secret through the tree arrays with the rules' own feedback function: its depth, or -1
    when the tree has no branch for it (or asks more than 255 questions)."""
    # children of each node by answer, as a dense table (nodes x classes)
    child = np.full((nodes, n_classes), -1, dtype=np.int32)
    for i in range(1, nodes):
        child[node_parent[i], node_answer[i]] = i
    depth = np.empty(secrets.shape[0], dtype=np.int64)
    for si in range(secrets.shape[0]):
        s = secrets[si]
        node = 0
        d = 1
        while True:
            h, b = feedback_rule(codes[s], codes[node_probe[node]])
            c = class_of[h * width + b]
            if c == win:
                depth[si] = d
                break
            node = child[node, c] if c < n_classes else -1
            d += 1
            if node < 0 or d > 255:
                depth[si] = -1
                break
    return depth


def new_state(candidates: np.ndarray, n_classes: int) -> dict:
    """The arrays of a build in progress: candidate permutation, tree nodes and the work stack."""
    perm = np.asarray(candidates, dtype=np.int32).copy()
    return _state(perm, np.empty(len(perm), dtype=np.int64), 0, len(perm), -1, n_classes)


def subtree_state(state: dict, entry: int, n_classes: int) -> dict:
    """The state that builds the subtree of stack entry `entry` of `state` on its own: it shares the
    candidate permutation and scratch row (subtrees own disjoint ranges of both) and has its own nodes
    and stack, so that threads may build sibling subtrees at once. Its root has parent -1."""
    return _state(
        state["perm"],
        state["tmp"],
        int(state["st_lo"][entry]),
        int(state["st_hi"][entry]),
        int(state["st_answer"][entry]),
        n_classes,
    )


def _state(perm: np.ndarray, tmp: np.ndarray, lo: int, hi: int, answer: int, n_classes: int) -> dict:
    """A build of the candidates perm[lo:hi] (reached by `answer`; -1 at the top), its stack holding them."""
    cap = 2 * (hi - lo) + 2
    return {
        "perm": perm,
        "tmp": tmp,
        "node_probe": np.empty(cap, dtype=np.int32),
        "node_parent": np.empty(cap, dtype=np.int32),
        "node_answer": np.empty(cap, dtype=np.int16),
        "node_depth": np.empty(cap, dtype=np.int32),
        "st_lo": np.full(cap, lo, dtype=np.int64),
        "st_hi": np.full(cap, hi, dtype=np.int64),
        "st_parent": np.full(cap, -1, dtype=np.int64),
        "st_answer": np.full(cap, answer, dtype=np.int64),
        "counters": np.array([1, 0, 0], dtype=np.int64),  # stack top, nodes, secrets finished
        "starts": np.empty(n_classes + 1, dtype=np.int64),
        "seen": np.zeros(n_classes, dtype=np.bool_),
        "pending": np.full(1, -1, dtype=np.int64),
    }


@numba.njit(cache=True)
def node_pool(codes, masks, perms, k, fix_zero, layout, lut, width, consistent, cand, history):
    """The probes scored at a node reached by the questions `history`: its candidates (consistent) or every
    code, one per symmetry class (the class minimum, so the tie-break to the lowest code is kept)."""
    pool = cand if consistent else np.arange(codes.shape[0], dtype=np.int32)
    if cand.shape[0] < SYMMETRY_MIN_SET:
        return pool
    sym, occ, cnt = layout
    answers = np.empty(history.shape[0], dtype=np.int64)  # every candidate got these: ask the first one
    for t in range(history.shape[0]):
        answers[t] = answer_of(sym, occ, cnt, lut, width, cand[0], history[t])
    return canonical_probes(codes, masks, pool, history, answers, perms, k, fix_zero, cand)


@numba.njit(cache=True)
def probe_scores(layout, lut, width, cand, probes, n_classes, win, rule, klogk):
    """The rule's score of each probe on the candidates (lower is better), whether it may be the secret, and
    whether it splits them (a probe giving every candidate the same answer, other than a win, does not):
    what a pilot ranks its probes by."""
    sym, occ, cnt = layout
    psym, pocc = _compact(sym, occ, probes)
    P = probes.shape[0]
    counts = np.empty((P, n_classes), dtype=np.uint32)
    _count(psym, pocc, sym, cnt, lut, width, cand, 0, P, counts, n_classes)
    score = np.empty(P)
    cons = np.empty(P, dtype=np.bool_)
    splits = np.empty(P, dtype=np.bool_)
    for i in range(P):
        score[i], cons[i] = _score(counts, i, n_classes, win, rule, klogk)
        splits[i] = counts[i].max() < cand.shape[0]
    return score, cons, splits


@numba.njit(cache=True, nogil=True)
def build_steps(
    codes,
    masks,
    perms,
    k,
    fix_zero,
    lut,
    width,
    n_classes,
    win,
    rule,
    consistent,
    first,
    history0,
    big_work,
    layout,
    packed,
    use_packed,
    distinct,
    klogk,
    seen,
    perm,
    node_probe,
    node_parent,
    node_answer,
    node_depth,
    st_lo,
    st_hi,
    st_parent,
    st_answer,
    counters,
    tmp,
    starts,
    budget,
    rand,
    pending,
):
    """Build up to `budget` nodes of the greedy tree (state in the arrays; counters = top, nodes, done).

    Returns (status, candidates, probes): status 0 when the budget is spent or the tree is done; 1 when a
    probe fails to split its candidates; 2 when a node's scan is at least `big_work` pairs: it is left on
    the stack, and the caller scans it with threads and passes the probe back in pending[0]."""
    empty = np.empty(0, dtype=np.int32)
    sym, occ, cnt = layout
    top, nodes = counters[0], counters[1]
    depth0 = history0.shape[0]
    made = 0
    while top > 0 and made < budget:
        top -= 1
        chosen = pending[0]
        pending[0] = -1
        lo, hi, parent, answer = st_lo[top], st_hi[top], st_parent[top], st_answer[top]
        n = hi - lo
        cand = perm[lo:hi].copy()
        node = nodes
        nodes += 1
        made += 1
        node_parent[node] = parent
        node_answer[node] = answer
        depth = depth0 if parent < 0 else node_depth[parent] + 1
        node_depth[node] = depth
        if n == 1:
            probe = cand[0]
        elif parent < 0 and first >= 0:
            probe = first
        elif rule == 4:
            probe = cand[rand[node] % n]
        elif chosen >= 0:
            probe = chosen
        else:
            probe = perfect_candidate(sym, occ, cnt, lut, width, cand, n_classes, seen)
            if probe < 0:
                history = np.empty(depth, dtype=np.int64)
                history[:depth0] = history0
                walk = parent
                for t in range(depth - 1, depth0 - 1, -1):
                    history[t] = node_probe[walk]
                    walk = node_parent[walk]
                pool = node_pool(codes, masks, perms, k, fix_zero, layout, lut, width, consistent, cand, history)
                length = codes.shape[1]
                if use_packed and n <= 65535 and length * (length + 1) // 2 + length < 32:
                    if big_work > 0 and pool.shape[0] * n >= big_work:
                        top += 1  # leave the node on the stack: the caller scans it and passes the probe back
                        nodes -= 1
                        counters[0], counters[1] = top, nodes
                        return 2, cand, pool
                    probe = scan_packed(packed, cand, pool, distinct, length, rule)[0]
                else:
                    probe = best_probe_serial(sym, occ, cnt, lut, width, cand, pool, n_classes, win, rule, klogk)
        node_probe[node] = probe
        split_range(sym, occ, cnt, lut, width, perm, lo, hi, probe, n_classes, tmp, starts)
        if starts[win + 1] > starts[win]:
            counters[2] += 1  # a secret found here
        for c in range(n_classes - 1, -1, -1):  # pushed in reverse: children come out in answer order
            a, b = lo + starts[c], lo + starts[c + 1]
            if b == a or c == win:
                continue
            if b - a == n:
                counters[0], counters[1] = top, nodes
                return 1, empty, empty
            st_lo[top], st_hi[top], st_parent[top], st_answer[top] = a, b, node, c
            top += 1
    counters[0], counters[1] = top, nodes
    return 0, empty, empty
