"""Exact endgames for heuristic trees: every largest subtree over at most N secrets is replaced by a
subtree that the exact engine proves optimal, for the least total or the fewest secrets at the last depth
(the heuristic one stays where it is already optimal).

Greedy rules lose most of their questions near the leaves, where sets are small and the exact search is
cheap: on Mastermind 5x8 the entropy tree's total drops by about 0.5% with N = 300 in a few minutes, below
every published greedy tree, while the whole game stays far out of exact reach. With a store, each endgame
finished is kept (its optimal subtree, or the proof that the tree's own is optimal), so a run stopped by its
budget or a Ctrl-C is taken up by the next without searching those again.
"""

from __future__ import annotations

import enum
import os
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Final, cast

import numpy as np

from ..engine.searcher import Costs, Engine, Spec
from ..engine.table import GameTable, split
from ..interrupts import Completions, Stopped
from ..tree.format import tree_node
from .known import cost_array, stored_result, tree_cost
from .objectives import at_last_level, total
from .solve import tt_bits_for
from .store import Store, set_key


class _Unfinished(enum.Enum):
    UNFINISHED = "unfinished"


UNFINISHED: Final = _Unfinished.UNFINISHED  # an endgame the budget stopped or skipped (a sentinel, compared by `is`)


@dataclass
class Endgame:
    """One largest subtree of at most N secrets: where it hangs and what the heuristic tree asks there."""

    path: tuple[str, ...]  # the answers from the root down to it
    S: np.ndarray
    depth: int  # questions asked before it
    history: np.ndarray
    subtree: dict
    cost: int = 0  # its cost in the heuristic tree (for the total: every secret's questions from the root)


def endgames(gt: GameTable, root: dict, below: int, costs: Costs) -> list[Endgame]:
    """The largest subtrees over at most `below` secrets (and at least two), each with its secrets, depth,
    questions so far and heuristic cost."""
    out: list[Endgame] = []

    def walk(node: dict, S: np.ndarray, d: int, history: list[int], path: tuple[str, ...]) -> None:
        if len(S) <= 1:
            return
        if len(S) <= below:
            out.append(Endgame(path, S, d, np.array(history, dtype=np.int64), node, tree_cost(gt, node, costs, S, d)))
            return
        probe = gt.probe_of(node)
        members, starts = split(gt.table, S, probe, len(gt.answers))
        for c in range(len(gt.answers)):
            if c != gt.win and starts[c + 1] > starts[c]:
                answer = gt.answer_str(c)
                walk(
                    node["next"][answer], members[starts[c] : starts[c + 1]], d + 1, history + [probe], path + (answer,)
                )

    walk(root, np.arange(gt.size, dtype=np.int32), 0, [], ())
    return out


def solve_endgame(engine: Engine, e: Endgame) -> tuple[int, dict] | None:
    """The engine's optimal subtree of an endgame with its cost when it beats the heuristic one, else None."""
    b = engine.branching(e.S)
    value, probe = engine.solve(e.S, e.depth, e.cost, e.history, b, threaded=False)
    if probe < 0 or value >= e.cost:  # nothing below the heuristic cost (a set the scan solves may return
        return None  # its exact value even at the cut-off): that subtree is optimal already
    return int(value), engine.extract(e.S, e.depth, int(value), e.history, b)


def solving_order(games: list[Endgame], budget: float | None) -> list[Endgame]:
    """Largest first when every endgame will be searched (the threads end together); smallest first under a
    budget, which then finishes, and stores, as many as it can instead of stopping the largest half-searched."""
    return sorted(games, key=lambda e: len(e.S) if budget is not None else -len(e.S))


def graft(root: dict, path: tuple[str, ...], subtree: dict) -> dict:
    """The tree with the node at `path` replaced (the nodes along the path copied, the rest shared)."""
    if not path:
        return subtree
    return tree_node(root["guess"], {**root["next"], path[0]: graft(root["next"][path[0]], path[1:], subtree)})


def from_store(
    store: Store, gt: GameTable, e: Endgame, costs: Costs, consistent_only: bool
) -> tuple[int, dict] | None | _Unfinished:
    """What a store proves of an endgame: a cheaper subtree (its exact value and canonical tree), None when the
    tree's own is optimal already (an exact value or a lower bound at least its cost), UNFINISHED when it
    proves neither."""
    stored = stored_result(
        store, set_key(costs.name, e.depth, e.S), gt, cost_array(costs, gt.size), e.S, e.depth, consistent_only
    )
    if stored is None or not (stored.exact or stored.value >= e.cost):
        return UNFINISHED
    if stored.exact and stored.value < e.cost:
        # stored_result refuses an exact value without its subtree
        return stored.value, cast(dict, stored.tree)
    return None


def exact_endgame(
    gt: GameTable,
    root: dict,
    below: int,
    consistent_only: bool = False,
    costs: Costs | None = None,
    budget: float | None = None,
    threads: int | None = None,
    progress: bool = True,
    store: Store | None = None,
) -> tuple[dict, dict]:
    """The tree with every largest subtree over at most `below` secrets made optimal for `costs` (default the
    least total; objectives.total(D) keeps every secret within D questions, objectives.at_last_level(D) puts
    the fewest at question D), among consistent questions only with `consistent_only`, and a record of what
    changed.

    The endgames are solved on threads (the search releases the GIL), in `solving_order`, each with its own
    transposition table and the heuristic subtree's cost as the cut-off; Ctrl-C stops them all. After
    `budget` seconds the searches still running stop and the rest are skipped: their subtrees stay as they
    were, and the record counts them as unfinished. A `store` (of the game and probe rule) settles the endgames
    it has an answer for and keeps the answer of each one searched (the caller closes it)."""
    from tqdm import tqdm

    start = time.perf_counter()
    costs = costs or total()
    games = solving_order(endgames(gt, root, below, costs), budget)
    threads = max(1, min(threads or os.cpu_count() or 1, len(games)))
    spec = Spec(gt.game, costs, consistent_only, tt_bits_for(gt.size))
    engines: queue.SimpleQueue[Engine] = queue.SimpleQueue()
    everyone = [Engine(gt, spec) for _ in range(threads)]
    for engine in everyone:
        engines.put(engine)
    out_of_time = threading.Event()

    def stop_all() -> None:
        for engine in everyone:  # each search returns within a node or two
            engine.request_stop()

    def run(e: Endgame) -> tuple[tuple[int, dict] | None | _Unfinished, float]:
        if out_of_time.is_set():
            return UNFINISHED, 0.0
        engine = engines.get()
        began = time.perf_counter()
        try:
            return solve_endgame(engine, e), time.perf_counter() - began
        except Stopped:
            return UNFINISHED, 0.0
        finally:
            engines.put(engine)

    bar = tqdm(
        total=sum(len(e.S) for e in games),
        unit="secret",
        delay=1.0,
        disable=not progress,
        desc=f"exact below {below}",
        leave=False,
    )
    better: dict[int, tuple[int, dict]] = {}  # endgame -> (its new cost, its subtree)
    answers = (
        ((i, from_store(store, gt, e, costs, consistent_only)) for i, e in enumerate(games))
        if store is not None
        else ()
    )
    stored = {i: answer for i, answer in answers if answer is not UNFINISHED}
    better.update((i, answer) for i, answer in stored.items() if answer is not None)
    bar.update(sum(len(games[i].S) for i in stored))
    unfinished = 0
    executor = ThreadPoolExecutor(threads)
    finished = Completions()  # waited on without the futures' locks (see strategy.interrupts)
    try:
        pending = {finished.watch(executor.submit(run, e)): i for i, e in enumerate(games) if i not in stored}
        while pending:
            if budget is not None and not out_of_time.is_set() and time.perf_counter() - start >= budget:
                out_of_time.set()
                stop_all()
            future = finished.next(0.2)
            if future is None:
                continue
            i = pending.pop(future)
            solved, seconds = future.result()
            bar.update(len(games[i].S))
            if solved is UNFINISHED:  # the bar counts it as passed, and says it is not done
                unfinished += 1
                bar.set_postfix_str(f"{unfinished} left unfinished by the budget", refresh=False)
                continue
            if solved is not None:
                better[i] = solved
            if store is not None:  # the exact value and subtree, or the tree's own cost as a lower bound (it is the
                e = games[i]  # value; the store keeps only the engine's canonical subtrees)
                value, proven, subtree = (e.cost, False, None) if solved is None else (solved[0], True, solved[1])
                store.put(set_key(costs.name, e.depth, e.S), len(e.S), e.depth, value, proven, subtree, seconds)
    except BaseException:
        stop_all()
        executor.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        bar.close()
    executor.shutdown()
    if store is not None:
        store.commit()
    tree = root
    for i, (_, subtree) in better.items():
        tree = graft(tree, games[i].path, subtree)
    saved = sum(games[i].cost - value for i, (value, _) in better.items())
    record = {
        "below": below,
        "objective": costs.name,
        "subtrees": len(games),
        "improved": len(better),
        "unfinished": unfinished,
        "saved": saved,
        "seconds": round(time.perf_counter() - start, 1),
    }
    return tree, record if store is None else {**record, "from_store": len(stored)}


def objective_of(name: str, worst: int) -> Costs:
    """What `strategy improve --objective` makes the endgames of a tree of this worst case optimal for, never
    deeper than it: the least total, or the fewest secrets at that worst depth."""
    return total(worst) if name == "total" else at_last_level(worst)


def exact_endgames(
    gt: GameTable,
    root: dict,
    before,
    below: int,
    consistent_only: bool = False,
    costs: Costs | None = None,
    budget: float | None = None,
    progress: bool = True,
    store: Store | None = None,
) -> tuple[dict, object, dict]:
    """`exact_endgame`, then the new tree's measured stats and the record with the total `before` (the tree's
    stats before): what `build --exact-below` and `improve` write."""
    from ..tree.verify import measure

    root, record = exact_endgame(gt, root, below, consistent_only, costs, budget, progress=progress, store=store)
    return root, measure(gt.game, root)[0], {**record, "total_before": before.total}
