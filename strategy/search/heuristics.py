"""Greedy tree builders: one scoring rule applied at every node, for games too large to solve exactly.

The compiled builder (`engine.greedy`) computes answers on the fly, so memory is O(codes + tree):
no N×N table. It runs in slices so that long builds show progress and stop at Ctrl-C.
Ties break deterministically: a probe that may be the secret first, then the lowest code.
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..engine import greedy
from ..feedback_table import GameCodes, GameTable, game_codes
from ..rules import Game, GameError
from ..symmetry import position_perms

STRATEGIES = ("expected-size", "entropy", "minimax", "most-parts", "random-consistent")


def build(
    game: Game | GameTable | GameCodes,
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
    return build_checked(game, strategy, consistent_only, first, seed, progress, candidates, history)[0]


def build_checked(
    game: Game | GameTable | GameCodes,
    strategy: str,
    consistent_only: bool = False,
    first: int | None = None,
    seed: int = 0,
    progress: bool = True,
    candidates: np.ndarray | None = None,
    history: tuple[int, ...] = (),
):
    """`build`, with the tree's stats measured by playing every candidate through it: (tree, Stats)."""
    if strategy not in STRATEGIES:
        raise GameError(f"unknown strategy {strategy!r} (choose from {', '.join(STRATEGIES)})")
    gc = game_codes(game if isinstance(game, Game) else game.game)
    g = gc.game
    cand = np.arange(gc.size, dtype=np.int32) if candidates is None else np.asarray(candidates, dtype=np.int32)
    n_classes = len(gc.answers)
    state = greedy.new_state(cand, n_classes)
    perms = position_perms(g.length, not g.leading_zero)
    layout = greedy.code_layout(gc.codes, g.symbols)
    use_packed = greedy.packs(g.length, g.symbols, g.distinct)
    packed = greedy.packed_layout(gc.codes if use_packed else gc.codes[:0], g.symbols, g.distinct)
    klogk = np.zeros(len(cand) + 1)
    m = np.arange(2, len(cand) + 1)
    klogk[2:] = m * np.log(m)
    rand = np.random.default_rng(seed).integers(0, 2**31 - 1, size=len(state["node_probe"]), dtype=np.int64)
    seen = np.zeros(n_classes, dtype=np.bool_)
    history0 = np.array(history, dtype=np.int64)
    threads = os.cpu_count() or 1
    pending = np.full(1, -1, dtype=np.int64)
    pool_executor = ThreadPoolExecutor(threads) if threads > 1 else None
    from tqdm import tqdm

    bar = tqdm(total=len(cand), unit="secret", delay=1.0, disable=not progress, desc=strategy, leave=False)
    budget = 64
    try:
        while state["counters"][0] > 0:
            start = time.perf_counter()
            status, cand_big, pool = greedy.build_steps(
                gc.codes, gc.masks, perms, g.symbols, not g.leading_zero, gc.lut, gc.width, n_classes, gc.win,
                greedy.RULES[strategy], consistent_only, -1 if first is None else first, history0,
                greedy.PARALLEL_WORK if pool_executor else 0, layout, packed, use_packed, g.distinct, klogk, seen,
                state["perm"], state["node_probe"], state["node_parent"], state["node_answer"], state["node_depth"],
                state["st_lo"], state["st_hi"], state["st_parent"], state["st_answer"], state["counters"],
                state["tmp"], state["starts"], budget, rand, pending)
            if status == 1:
                raise GameError(f"{strategy}: a question does not split its candidates")
            if status == 2:  # a big node: its probes are scanned in ranges by threads (the kernel frees the GIL)
                ranges = np.array_split(pool, threads)
                results = list(pool_executor.map(
                    lambda probes: greedy.scan_packed(packed, cand_big, probes, g.distinct, g.length,
                                                      greedy.RULES[strategy]), ranges))
                pending[0] = greedy.merge(results, greedy.RULES[strategy])
            bar.update(int(state["counters"][2]) - bar.n)
            budget = min(budget * 2, 1 << 20) if time.perf_counter() - start < 0.05 else max(16, budget // 2)
    finally:
        bar.close()
        if pool_executor:
            pool_executor.shutdown()
    return _as_tree(gc, state), _check(gc, state, cand)


def _check(gc: GameCodes, state: dict, cand: np.ndarray):
    """Stats of the built tree from playing every candidate through it (the rules' feedback, compiled)."""
    from ..io.verify import Stats, VerifyError

    width = gc.width
    class_of = np.full(width * width, 255, dtype=np.uint8)
    for i, (h, b) in enumerate(gc.answers):
        class_of[h * width + b] = i
    nodes = int(state["counters"][1])
    depth = greedy.walk_every_secret(gc.codes, cand, state["node_probe"], state["node_parent"], state["node_answer"],
                                     nodes, class_of, width, len(gc.answers), gc.win)
    if (depth < 0).any():
        lost = gc.code_str(int(cand[int(np.argmax(depth < 0))]))
        raise VerifyError(f"the built tree does not solve secret {lost}")
    counts = np.bincount(depth)
    return Stats(int(len(depth)), int(depth.sum()), int(depth.max()), [int(x) for x in counts])


def _as_tree(gc: GameCodes, state: dict) -> dict:
    """Nested dicts from the node arrays (nodes come in depth-first order, children in answer order)."""
    nodes = int(state["counters"][1])
    probe, parent, answer = state["node_probe"][:nodes], state["node_parent"][:nodes], state["node_answer"][:nodes]
    code_str = [None] * gc.size
    made: list[dict] = []
    for i in range(nodes):
        p = int(probe[i])
        if code_str[p] is None:
            code_str[p] = gc.code_str(p)
        node = {"guess": code_str[p]}
        made.append(node)
        up = int(parent[i])
        if up >= 0:
            made[up].setdefault("next", {})[gc.answer_str(int(answer[i]))] = node
    return made[0]


def build_subtree(game, candidates: np.ndarray, history, strategy: str = "expected-size",
                  consistent_only: bool = False) -> dict:
    """A greedy tree for the secrets `candidates` left after the questions `history` (no progress bar)."""
    return build(game, strategy, consistent_only, progress=False, candidates=candidates, history=tuple(history))
