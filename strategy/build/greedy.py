"""Greedy tree builders: one scoring rule applied at every node, for games too large to solve exactly.

The compiled builder (`engine.greedy`) computes answers on the fly, so memory is O(codes + tree):
no N×N table. It runs in slices so that long builds show progress and stop at Ctrl-C.
Ties break deterministically: a probe that may be the secret first, then the lowest code.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..engine import greedy
from ..engine.symmetry import position_perms
from ..engine.table import GameCodes, GameTable, game_codes
from ..rules import Game, GameError

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


def build_checked(*args, **kwargs):
    """`build_arrays` (the same arguments) as nested dicts, with the tree's stats measured by playing every
    candidate through it: (tree, Stats)."""
    built = build_arrays(*args, **kwargs)
    return built.tree(), built.stats()


@dataclass(frozen=True)
class Built:
    """A greedy tree as the builder leaves it: node arrays over the candidates, made into nested dicts only when
    wanted (a pilot's losing rollouts never are)."""

    gc: GameCodes
    state: dict
    candidates: np.ndarray

    @property
    def first(self) -> int:
        """The code asked first."""
        return int(self.state["node_probe"][0])

    def tree(self) -> dict:
        return _as_tree(self.gc, self.state)

    def stats(self):
        return _check(self.gc, self.state, self.candidates)


def build_arrays(
    game: Game | GameTable | GameCodes,
    strategy: str,
    consistent_only: bool = False,
    first: int | None = None,
    seed: int = 0,
    progress: bool = True,
    candidates: np.ndarray | None = None,
    history: tuple[int, ...] = (),
    threads: int | None = None,
) -> Built:
    """The complete tree of `strategy` over every secret of the game (or over `candidates`, the codes left after
    the questions `history`), as the builder's node arrays.

    With several threads (one per core unless given), the subtrees under the first question are built
    at once, largest first; a smaller build scans its big nodes with threads instead. The tree is the
    same whatever the number of threads."""
    if strategy not in STRATEGIES:
        raise GameError(f"unknown strategy {strategy!r} (choose from {', '.join(STRATEGIES)})")
    gc = game_codes(game if isinstance(game, Game) else game.game)
    cand = np.arange(gc.size, dtype=np.int32) if candidates is None else np.asarray(candidates, dtype=np.int32)
    steps = Steps(gc, strategy, consistent_only, seed, len(cand))
    state = greedy.new_state(cand, len(gc.answers))
    history0 = np.array(history, dtype=np.int64)
    threads = threads or os.cpu_count() or 1
    executor = ThreadPoolExecutor(threads) if threads > 1 else None
    stop = threading.Event()
    from tqdm import tqdm

    bar = tqdm(total=len(cand), unit="secret", delay=1.0, disable=not progress, desc=strategy, leave=False)
    try:
        scan = steps.scanner(executor, threads) if executor else None
        if executor and strategy != "random-consistent" and len(cand) >= PARALLEL_TREE:
            steps.grow(state, history0, first, scan, max_nodes=1)
            state = _subtrees_in_threads(steps, state, history0, executor, stop, bar)
        else:
            steps.grow(state, history0, first, scan, progress=lambda: bar.update(int(state["counters"][2]) - bar.n))
    except BaseException:
        stop.set()  # threads still building stop at the end of their slice; not waited for, in case a Ctrl-C
        if executor:  # left a lock held that one of them needs
            executor.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        bar.close()
    if executor:
        executor.shutdown()
    return Built(gc, state, cand)


PARALLEL_TREE = 1000  # candidates from which the subtrees under the first question go to threads


def klogk_table(n: int) -> np.ndarray:
    """k log k for k = 0..n (0 for k < 2): what entropy scores a part of k secrets by."""
    out = np.zeros(n + 1)
    m = np.arange(2, n + 1)
    out[2:] = m * np.log(m)
    return out


class Steps:
    """`greedy.build_steps` with one build's fixed arguments, run in slices of about 50 ms, so that
    progress shows and an interruption (or another thread's failure) is honoured between slices."""

    def __init__(self, gc: GameCodes, strategy: str, consistent_only: bool, seed: int, n: int):
        g = gc.game
        self.name = strategy
        self.rule = rule = greedy.RULES[strategy]
        self.packed_args = (g.distinct, g.length, rule)
        use_packed = greedy.packs(g.length, g.symbols, g.distinct)
        self.packed = greedy.packed_layout(gc.codes if use_packed else gc.codes[:0], g.symbols, g.distinct)
        klogk = klogk_table(n)
        self.head = (
            gc.codes,
            gc.masks,
            position_perms(g.length, not g.leading_zero),
            g.symbols,
            not g.leading_zero,
            gc.lut,
            gc.width,
            len(gc.answers),
            gc.win,
            rule,
            consistent_only,
        )
        self.tail = (greedy.code_layout(gc.codes, g.symbols), self.packed, use_packed, g.distinct, klogk)
        self.rand = np.random.default_rng(seed).integers(0, 2**31 - 1, size=2 * n + 2, dtype=np.int64)

    def scanner(self, executor: ThreadPoolExecutor, threads: int):
        """Scan one big node's probes in `threads` ranges at once (the kernel frees the GIL)."""

        def scan(cand: np.ndarray, pool: np.ndarray) -> int:
            ranges = np.array_split(pool, threads)
            results = list(
                executor.map(lambda probes: greedy.scan_packed(self.packed, cand, probes, *self.packed_args), ranges)
            )
            return greedy.merge(results, self.rule)

        return scan

    def grow(
        self,
        state: dict,
        history0: np.ndarray,
        first: int | None = None,
        scan=None,
        max_nodes: int | None = None,
        progress=None,
        stop: threading.Event | None = None,
    ) -> None:
        """Build the tree of `state` until it is done, or has `max_nodes` nodes, or `stop` is set."""
        counters = state["counters"]
        budget = 64
        while counters[0] > 0 and not (stop and stop.is_set()):
            if max_nodes is not None and counters[1] >= max_nodes:
                break
            start = time.perf_counter()
            status, cand_big, pool = greedy.build_steps(
                *self.head,
                -1 if first is None else first,
                history0,
                greedy.PARALLEL_WORK if scan else 0,
                *self.tail,
                state["seen"],
                state["perm"],
                state["node_probe"],
                state["node_parent"],
                state["node_answer"],
                state["node_depth"],
                state["st_lo"],
                state["st_hi"],
                state["st_parent"],
                state["st_answer"],
                counters,
                state["tmp"],
                state["starts"],
                budget if max_nodes is None else min(budget, max_nodes - int(counters[1])),
                self.rand,
                state["pending"],
            )
            if status == 1:
                raise GameError(f"{self.name}: a question does not split its candidates")
            if status == 2:  # a big node: scanned by threads, its probe passed back
                state["pending"][0] = scan(cand_big, pool)
            if progress:
                progress()
            budget = min(budget * 2, 1 << 20) if time.perf_counter() - start < 0.05 else max(16, budget // 2)


def _subtrees_in_threads(
    steps: Steps, state: dict, history0: np.ndarray, executor: ThreadPoolExecutor, stop: threading.Event, bar
) -> dict:
    """Build every subtree under the root of `state` (the root alone is built) in the executor's threads,
    largest first, and join them under the root in answer order."""
    n_classes = len(state["seen"])
    subs = [greedy.subtree_state(state, e, n_classes) for e in range(int(state["counters"][0]))]
    state["counters"][0] = 0
    below = np.append(history0, state["node_probe"][0])
    by_size = sorted(subs, key=lambda sub: int(sub["st_hi"][0] - sub["st_lo"][0]), reverse=True)
    # each thread reports in its own slot, and this thread only sleeps and reads them: never through the futures'
    # locks (see strategy.interrupts)
    outcome: list = [None] * len(by_size)

    def grow(i: int) -> None:
        try:
            steps.grow(by_size[i], below, stop=stop)
            outcome[i] = True
        except BaseException as e:  # raised again in the calling thread
            outcome[i] = e

    for i in range(len(by_size)):
        executor.submit(grow, i)
    while True:  # an interruption or a thread's failure leaves through the caller, which sets `stop`
        time.sleep(0.01)
        for r in outcome:
            if isinstance(r, BaseException):
                raise r
        if all(r is True for r in outcome):
            break
        bar.update(int(state["counters"][2]) + sum(int(sub["counters"][2]) for sub in subs) - bar.n)
    return _joined(state, sorted(subs, key=lambda sub: int(sub["node_answer"][0])))


def _joined(root: dict, subs: list[dict]) -> dict:
    """One tree's node arrays: the root of `root`, then each subtree's nodes (depth first), renumbered."""
    probe, parent, answer = [root["node_probe"][:1]], [np.array([-1], dtype=np.int32)], [root["node_answer"][:1]]
    done = int(root["counters"][2])
    offset = 1
    for sub in subs:
        n = int(sub["counters"][1])
        up = sub["node_parent"][:n]
        probe.append(sub["node_probe"][:n])
        parent.append(np.where(up < 0, 0, up + offset).astype(np.int32))
        answer.append(sub["node_answer"][:n])
        done += int(sub["counters"][2])
        offset += n
    return {
        "node_probe": np.concatenate(probe),
        "node_parent": np.concatenate(parent),
        "node_answer": np.concatenate(answer),
        "counters": np.array([0, offset, done], dtype=np.int64),
    }


def _check(gc: GameCodes, state: dict, cand: np.ndarray):
    """Stats of the built tree from playing every candidate through it (the rules' feedback, compiled)."""
    from ..tree.verify import Stats, VerifyError

    width = gc.width
    class_of = np.full(width * width, 255, dtype=np.uint8)
    for i, (h, b) in enumerate(gc.answers):
        class_of[h * width + b] = i
    nodes = int(state["counters"][1])
    depth = greedy.walk_every_secret(
        gc.codes,
        cand,
        state["node_probe"],
        state["node_parent"],
        state["node_answer"],
        nodes,
        class_of,
        width,
        len(gc.answers),
        gc.win,
    )
    if (depth < 0).any():
        lost = gc.code_str(int(cand[int(np.argmax(depth < 0))]))
        raise VerifyError(f"the built tree does not solve secret {lost}")
    counts = np.bincount(depth)
    return Stats(int(len(depth)), int(depth.sum()), int(depth.max()), [int(x) for x in counts])


def _as_tree(gc: GameCodes, state: dict) -> dict:
    """Nested dicts from the node arrays (nodes come in depth-first order, children in answer order)."""
    nodes = int(state["counters"][1])
    probes = state["node_probe"][:nodes]
    asked = np.unique(probes)
    text = dict(zip(asked.tolist(), gc.code_strs(asked)))
    labels = [gc.answer_str(c) for c in range(len(gc.answers))]
    made: list[dict] = []
    for p, up, a in zip(probes.tolist(), state["node_parent"][:nodes].tolist(), state["node_answer"][:nodes].tolist()):
        node = {"guess": text[p]}
        made.append(node)
        if up >= 0:
            above = made[up]
            if "next" in above:
                above["next"][labels[a]] = node
            else:
                above["next"] = {labels[a]: node}
    return made[0]


def build_subtree(
    game, candidates: np.ndarray, history, strategy: str = "expected-size", consistent_only: bool = False
) -> dict:
    """A greedy tree for the secrets `candidates` left after the questions `history`, built in this thread alone:
    an interrupted solve builds its best tree with it, and a signal that came while numba compiled or loaded a
    kernel may have left numba's and LLVM's locks held by this thread, where another thread would wait forever."""
    return build_arrays(
        game, strategy, consistent_only, progress=False, candidates=candidates, history=tuple(history), threads=1
    ).tree()
