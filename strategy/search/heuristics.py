"""Greedy tree builders: one scoring rule applied at every node, for games too large to solve exactly.

The scoring loop over all probes runs compiled (numba) on the feedback table.
Ties break deterministically: a probe that may be the secret first, then the lowest code.
"""
from __future__ import annotations

import numba
import numpy as np
from tqdm import tqdm

from ..feedback_table import GameTable, split
from ..rules import GameError
from ..symmetry import canonical_probes, position_perms

SYMMETRY_MIN_SET = 16  # smaller sets: scanning every probe costs less than finding the classes
STRATEGIES = ("expected-size", "entropy", "minimax", "most-parts", "random-consistent")
_SCORED = {"expected-size": 0, "entropy": 1, "minimax": 2, "most-parts": 3}


@numba.njit(cache=True)
def _perfect_candidate(table: np.ndarray, cand: np.ndarray, counts: np.ndarray) -> int:
    """The lowest candidate that splits `cand` into singletons, or -1.

    Such a probe is optimal under every scoring rule and wins the tie-break,
    so most small sets need no scan over all probes.
    """
    for ci in range(cand.shape[0]):
        row = table[cand[ci]]
        ok = True
        for i in range(cand.shape[0]):
            c = row[cand[i]]
            counts[c] += 1
            if counts[c] > 1:
                ok = False
        for i in range(cand.shape[0]):
            counts[row[cand[i]]] = 0
        if ok:
            return cand[ci]
    return -1


@numba.njit(cache=True)
def _scan(table, cand, probes, lo, hi, n_classes, win, rule, klogk_step):
    """Best (probe, score, consistent) among probes[lo:hi]; earlier probes win exact ties."""
    counts = np.zeros(n_classes, dtype=np.int64)
    n = cand.shape[0]
    best = -1
    best_score = np.inf
    best_cons = False
    for pi in range(lo, hi):
        p = probes[pi]
        row = table[p]
        score = 0.0
        for i in range(n):
            c = row[cand[i]]
            k = counts[c] + 1
            counts[c] = k
            if rule == 0:
                score += 2 * k - 1
            elif rule == 1:
                score += klogk_step[k]
            elif rule == 2:
                if k > score:
                    score = k
            elif k == 1:
                score -= 1.0
        cons = counts[win] > 0
        for i in range(n):
            counts[row[cand[i]]] = 0
        if _better(rule, score, cons, best_score, best_cons):
            best, best_score, best_cons = p, score, cons
    return best, best_score, best_cons


@numba.njit(cache=True)
def _better(rule, score, cons, best_score, best_cons):
    if rule == 1:  # float scores: equal within rounding is a tie
        return score < best_score - 1e-9 or (abs(score - best_score) <= 1e-9 and cons and not best_cons)
    return score < best_score or (score == best_score and cons and not best_cons)


PARALLEL_WORK = 200_000  # probe x candidate pairs below which one thread is faster


@numba.njit(cache=True, parallel=True)
def best_probe(table: np.ndarray, cand: np.ndarray, probes: np.ndarray, n_classes: int, win: int, rule: int, threads: int) -> int:
    """Index of the probe with the lowest score on the candidate set `cand`.

    Rules: 0 sum of squared part sizes, 1 sum of c*log(c) (maximum entropy),
    2 largest part (minimax), 3 minus the number of parts (most parts).
    Scores are updated per candidate, so a probe costs two passes over `cand`;
    large scans are split into chunks, one per thread, merged in probe order.
    """
    counts = np.zeros(n_classes, dtype=np.int64)
    perfect = _perfect_candidate(table, cand, counts)
    if perfect >= 0:
        return perfect
    n = cand.shape[0]
    klogk_step = np.zeros(n + 1)
    for k in range(2, n + 1):
        klogk_step[k] = k * np.log(k) - (k - 1) * np.log(k - 1)
    m = probes.shape[0]
    chunks = threads if m * n >= PARALLEL_WORK else 1
    bests = np.empty(chunks, dtype=np.int64)
    scores = np.empty(chunks)
    conses = np.empty(chunks, dtype=np.bool_)
    for c in numba.prange(chunks):
        bests[c], scores[c], conses[c] = _scan(
            table, cand, probes, c * m // chunks, (c + 1) * m // chunks, n_classes, win, rule, klogk_step
        )
    best, best_score, best_cons = bests[0], scores[0], conses[0]
    for c in range(1, chunks):
        if bests[c] >= 0 and _better(rule, scores[c], conses[c], best_score, best_cons):
            best, best_score, best_cons = bests[c], scores[c], conses[c]
    return best


def build(
    gt: GameTable,
    strategy: str,
    consistent_only: bool = False,
    first: int | None = None,
    seed: int = 0,
    progress: bool = True,
    candidates: np.ndarray | None = None,
    history: tuple[int, ...] = (),
) -> dict:
    """The complete tree of `strategy` over every secret of the game (or over `candidates`, the codes
    left after the questions `history`), as nested dicts."""
    if strategy not in STRATEGIES:
        raise GameError(f"unknown strategy {strategy!r} (choose from {', '.join(STRATEGIES)})")
    rng = np.random.default_rng(seed)
    game = gt.game
    perms = position_perms(game.length, not game.leading_zero)
    all_probes = np.arange(gt.size, dtype=np.int32)
    n_classes, win = len(gt.answers), gt.win
    threads = numba.get_num_threads()
    root: dict = {}
    start = all_probes if candidates is None else np.asarray(candidates, dtype=np.int32)
    stack: list[tuple[dict, np.ndarray, tuple[int, ...]]] = [(root, start, tuple(int(h) for h in history))]
    bar = tqdm(total=len(start), unit="secret", delay=1.0, disable=not progress, desc=strategy)
    while stack:
        node, cand, history = stack.pop()
        if len(cand) == 1:
            probe = int(cand[0])
        elif node is root and first is not None:
            probe = first
        elif strategy == "random-consistent":
            probe = int(cand[rng.integers(len(cand))])
        else:
            probes = cand if consistent_only else all_probes
            if len(cand) >= SYMMETRY_MIN_SET:
                # The lowest code of each class keeps the lowest-code tie-break exact.
                hist = np.array(history, dtype=np.int64)
                probes = canonical_probes(gt.codes, gt.masks, probes, hist, perms, game.symbols, not game.leading_zero, cand)
            probe = int(best_probe(gt.table, cand, probes, n_classes, win, _SCORED[strategy], threads))
        node["guess"] = gt.code_str(probe)
        children = {}
        members, starts = split(gt.table, cand, probe, n_classes)
        for cls in range(n_classes):
            part = members[starts[cls]:starts[cls + 1]]
            if len(part) == 0:
                continue
            if cls == win:
                bar.update(1)
                continue
            if len(part) == len(cand):
                raise GameError(f"probe {node['guess']} does not split its {len(cand)} candidates")
            child: dict = {}
            children[gt.answer_str(cls)] = child
            stack.append((child, part, history + (probe,)))
        if children:
            node["next"] = children
    bar.close()
    return root


def build_subtree(gt: GameTable, candidates: np.ndarray, history, strategy: str = "expected-size",
                  consistent_only: bool = False) -> dict:
    """A greedy tree for the secrets `candidates` left after the questions `history` (no progress bar)."""
    return build(gt, strategy, consistent_only, progress=False, candidates=candidates, history=tuple(history))
