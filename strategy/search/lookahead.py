"""Lower bounds by lookahead: the recurrence of the exact search cut off after a few levels.

value(S, d) = min over probes g of cost[d+1]·[g in S] + sum over non-winning answers f of value(S_f, d+1)

With `levels` = 1, every value(S_f, d+1) is replaced by its level-fill bound (`exact.scan`: the bound
by which the search orders its probes); with more levels, by the lookahead bound of S_f one level
less deep. Every probe is considered (one per symmetry class of the node: equivalent probes split S
alike), so the result is a proven lower bound, for any objective the engine proves (least total,
within a depth, fewest at a depth; consistent probes only). It finds no tree and has no best tree to
refute every other probe against, so it costs a tiny fraction of the search: near the root of the open
games, three levels give in seconds or minutes bounds that the search reaches only after hours (the
frontier table in the README).

Probes are taken by increasing level-fill bound; one stops counting as soon as its parts reach the
best probe so far (or the caller's cut-off `beta`: fail-soft, as in the search), and the probes
whose level-fill bound reaches it are never expanded. A probe's parts start from the engine's cheap bound of
each (`exact.bound_set`), then are bounded in passes of narrow windows (each part's cut-off its bound so far
plus an even share of what the probe still lacks) before the whole cut-off left: most probes are refuted by
the shares, without their parts' exact values (tools/bench_moonshot.py, the moonshots' first-question parts:
the same bounds in a fraction of the time). With `half`, half a level more: below the last level each probe's
parts count at the engine's cheap bound (`exact.half_level`) instead of their level fill. The parts of the game's first questions are shared
out to threads, one lookahead (engine, scratch arrays) each: a part starts with the cut-off left then, so
the parts of a probe that reaches the cut-off may be counted further than in turn, and the bound is the same.

With `exact_below` N, a set of at most N secrets at any level is not bounded but searched by the exact
engine, with the cut-off that is left there (its value, or a proven bound once it reaches the cut-off):
small sets are where the level-fill bound is loosest and the search cheapest, so this raises the bound
for a little time (bulls 4 of 10, three levels: 25540 -> 25983 with N = 200, in 2 s).

With a `store` (a solve's, `strategy solve --store`), what the search has proven is used where the lookahead
meets it: a set's exact value ends the lookahead there, and a set's or a probe's proven lower bound raises
the lookahead's. An interrupted solve of the open games proves the small sets near the root exactly long
before it finishes; their values and the lookahead's bounds of the others add up to the game's bound.
The lookahead keeps what it proves there too, as a solve would, when it took a second or more: the sets it
searched exactly (the value and subtree, or the bound that reached the cut-off) and its bounds. Each bound
is also kept under a key of its own with the levels and N it was found with, final when it ended under its
cut-off: so a bound stopped after hours resumes where it was (run it again with the same store: every set it
finished is read back, not looked ahead again), and a later solve of the game starts from what it proved.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import numpy as np

from ..engine import exact
from ..engine.exact import INF
from ..engine.searcher import Costs, Engine, Spec
from ..engine.table import GameTable, split
from ..interrupts import Stopped, wait_for
from .driver import Plan
from .known import stored_result
from .solve import tt_bits_for
from .store import Store, set_key

LOOKAHEAD_TT_BITS = 4  # the transposition table when no set is searched exactly (it is not used then)
STORE_BOUND_SECONDS = 1.0  # a lookahead bound that took this long is kept in the store (quicker ones cost less to
# find again than to keep)
WINDOW_PASSES = 3  # passes of narrow windows before a probe's parts are bounded with the whole cut-off left
STORE_PROBES_ABOVE = Plan().min_size  # sets this large are the ones the driver splits into probes, whose bounds
# the store holds: the probes of smaller sets are not looked up (a search of a small set stores the set's bound)


class Lookahead:
    """The lookahead bounds of one game and objective (one engine's symmetry caches and scratch arrays)."""

    def __init__(
        self,
        gt: GameTable,
        costs: Costs,
        consistent_only: bool = False,
        on_node: Callable[[], None] | None = None,
        exact_below: int = 0,
        store: Store | None = None,
        threads: int = 1,
        half: bool = False,
    ):
        self.gt = gt
        self.half = half
        self.store = store
        self.objective = costs.key
        tt_bits = tt_bits_for(gt.size) if exact_below > 2 else LOOKAHEAD_TT_BITS
        self.engine = Engine(gt, Spec(gt.game, costs, consistent_only, tt_bits))
        self.on_node = on_node
        self.exact_below = exact_below
        self.stop = False  # set by `request_stop` from another thread: the bound unwinds at its next node
        # lookaheads of their own (engine, scratch arrays) that bound the parts of the game's first questions
        # in threads of their own, with this one (the kernels free the GIL)
        self.helpers = [
            Lookahead(gt, costs, consistent_only, on_node, exact_below, store, half=half) for _ in range(threads - 1)
        ]

    def request_stop(self) -> None:
        """Stop the bound (from another thread): at its next node, or within a node of the exact search."""
        self.stop = True
        self.engine.request_stop()
        for helper in self.helpers:
            helper.request_stop()

    @property
    def _store(self) -> Store:
        """The store, where a set has a key (one is made only when there is a store)."""
        assert self.store is not None
        return self.store

    def probes(self, S: np.ndarray, d: int, b: int, history: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """One probe per symmetry class of the node, their level-fill bounds (b for the parts), and the most
        non-winning parts any probe makes of S (valid for every subset of S)."""
        probes, lb, _, b_here, _ = self.engine.probe_bounds(S, d, b, history)
        return probes, lb, b_here

    def bound(self, S: np.ndarray, d: int, b: int, history: np.ndarray, levels: int, beta: int = int(INF)) -> int:
        """A lower bound of value(S, d) by `levels` levels of lookahead (b: the parent's branching); once it
        reaches beta it may stop there (a value of at least beta)."""
        n = len(S)
        if n <= 2:
            return self.engine.trivial(n, d)
        if self.stop:
            raise Stopped()
        if self.on_node is not None:
            self.on_node()
        key = set_key(self.objective, d, S) if self.store is not None else None
        e = self.engine
        stored = stored_result(self._store, key, self.gt, e.cost, S, d, e.spec.consistent_only) if key else None
        if stored is not None and stored.exact:
            return stored.value
        floor = stored.value if stored is not None else 0  # the store's proven lower bound of S
        if floor >= beta:
            return floor
        if n <= self.exact_below:  # raises Stopped if asked to stop
            return max(floor, self.searched(S, d, b, history, beta, key))
        # the lookahead's own result at these settings, from a run stopped before the end: final when it ended
        # under its cut-off (the value this computation would give), else a bound that may reach this one's
        setting = f"{levels}{'h' if self.half else ''}-{self.exact_below}"
        ahead = set_key(f"{self.objective}/lookahead-{setting}", d, S) if key and levels > 1 else None
        earlier = self._store.get(ahead) if ahead is not None else None
        if earlier is not None and (earlier.exact or earlier.value >= beta):
            return max(floor, earlier.value)
        start = time.perf_counter()
        value = self.looked_ahead(S, d, b, history, levels, beta, key, floor)
        seconds = time.perf_counter() - start
        if key is not None and seconds >= STORE_BOUND_SECONDS:
            if value > floor:  # a proven bound of the set, for a solve too
                self._store.put(key, n, d, value, False, None, seconds)
            if ahead is not None:
                self._store.put(ahead, n, d, value, value < beta, None, seconds)
        return value

    def searched(self, S: np.ndarray, d: int, b: int, history: np.ndarray, beta: int, key: str | None) -> int:
        """The exact search of a small set: its value, or a bound of at least beta; kept in the store (with the
        subtree when exact) when it took a second or more, so that a bound or a solve run later reads it back
        (the many quicker ones cost less to search again than to keep: a bound resumed reads back the larger
        sets they were part of)."""
        start = time.perf_counter()
        value, probe = self.engine.solve(S, d, beta, history, b, threaded=False)
        value, exact_value, seconds = int(value), bool(probe >= 0 and value < INF), time.perf_counter() - start
        if key is not None and seconds >= STORE_BOUND_SECONDS:
            tree = self.engine.extract(S, d, value, history, b, int(probe)) if exact_value else None
            self._store.put(key, len(S), d, value, exact_value, tree, seconds)
        return value

    def looked_ahead(
        self, S: np.ndarray, d: int, b: int, history: np.ndarray, levels: int, beta: int, key: str | None, floor: int
    ) -> int:
        """`bound` of a set too large to search: every probe's level-fill bound, then `levels` - 1 more levels."""
        probes, lb, b_here = self.probes(S, d, b, history)
        if key is not None and len(S) > STORE_PROBES_ABOVE:
            lb = self.stored_probe_bounds(key, probes, lb)
        base = max(floor, int(lb.min()) if len(lb) else int(INF))
        if levels <= 1 and self.half and base < beta:  # half a level: each probe's parts at their cheap bound
            e = self.engine
            return max(
                base,
                int(
                    exact.half_level(
                        self.gt.table,
                        e.params,
                        e.bounds,
                        e.zs,
                        e.tt,
                        e.counters,
                        e.scratch,
                        S,
                        np.int64(d),
                        np.int64(b_here),
                        probes,
                        lb,
                        np.int64(beta),
                    )
                ),
            )
        if levels <= 1 or base >= beta:
            return base
        gt = self.gt
        n_classes = len(gt.answers)
        pb = {}  # level filling of a part of k secrets: they have at most b_here parts themselves

        def fill(k: int) -> int:
            if k not in pb:
                pb[k] = self.engine.level_fill(k, b_here, d + 1)
            return pb[k]

        best = int(INF)
        for i in np.argsort(lb, kind="stable"):
            if lb[i] >= min(best, beta):  # this probe and every later one cannot do better
                best = min(best, int(lb[i]))
                break
            g = probes[i]
            members, starts = split(gt.table, S, g, n_classes)
            sizes = starts[1:] - starts[:-1]
            value = int(self.engine.cost[d + 1]) if sizes[gt.win] else 0
            value += sum(fill(int(k)) for c, k in enumerate(sizes) if c != gt.win and k)
            parts = [
                (members[starts[c] : starts[c + 1]], fill(int(sizes[c])))
                for c in sorted((c for c in range(n_classes) if c != gt.win and sizes[c] > 2), key=lambda c: -sizes[c])
            ]
            parts, value = self.prebound(parts, d + 1, b_here, value, min(best, beta))
            deeper = np.append(history, g).astype(history.dtype)
            share = self.parts_in_threads if d == 0 and self.helpers else self.parts_in_turn
            value = share(parts, d + 1, b_here, deeper, levels - 1, min(best, beta), value)
            best = min(best, max(value, int(lb[i])))
        return max(best, base)

    def prebound(
        self, parts: list[tuple[np.ndarray, int]], d: int, b: int, value: int, cut: int
    ) -> tuple[list[tuple[np.ndarray, int]], int]:
        """The parts' level fills raised to the engine's cheap bound of each (`exact.bound_set`: the transposition
        table, then a scan of the part's own candidates, which often proves its value), before any part is looked
        ahead or searched: a probe that these bounds refute costs no more, and the others' cut-offs are tighter.
        Parts proven exact leave the list; the sum is the same lower bound, only higher."""
        e = self.engine
        raised = []
        for part, fill in parts:
            if value >= cut:
                raised.append((part, fill))  # refuted already: the rest keep their level fill
                continue
            v, probe = exact.bound_set(
                self.gt.table, e.params, e.bounds, e.zs, e.tt, e.counters, e.scratch, part, np.int64(d), np.int64(b)
            )
            v = max(int(v), fill)
            value += v - fill
            if probe < 0:
                raised.append((part, v))
        return raised, value

    def parts_in_turn(
        self,
        parts: list[tuple[np.ndarray, int]],
        d: int,
        b: int,
        history: np.ndarray,
        levels: int,
        cut: int,
        value: int,
    ) -> int:
        """`value` (which counts each part at its bound so far) with each part's bound in its place, largest part
        first, until it reaches `cut`. First come passes of narrow windows: each part open is bounded (searched,
        when small enough) with its bound so far + an even share of what the probe still lacks as its cut-off,
        which most often proves the share cheaply, or gives the part's final value; then the parts still open are
        bounded with the whole cut-off left. A probe that the shares refute is never searched to its parts'
        exact values; a probe under the cut-off is counted in full either way (the same sum)."""
        bounds = [fill for _, fill in parts]
        final = [self.fixed(part, levels) for part, _ in parts]
        for rnd in range(WINDOW_PASSES + 1):
            deep = rnd == WINDOW_PASSES
            open_parts = [i for i in range(len(parts)) if not final[i]]
            if not open_parts or value >= cut:
                break
            step = max(1, (cut - value) // len(open_parts))
            for i in open_parts:
                if value >= cut:
                    break
                beta = cut - value + bounds[i] if deep or final[i] is None else bounds[i] + step
                got = max(bounds[i], self.bound(parts[i][0], d, b, history, levels, beta))
                value += got - bounds[i]
                bounds[i] = got
                final[i] = got < beta or final[i] is None
        return value

    def fixed(self, part: np.ndarray, levels: int) -> bool | None:
        """Whether a part's bound is final from the start (never), or None when a cut-off does not change it (a
        last level that only scans: it is bounded once, with the whole cut-off left)."""
        return None if levels <= 1 and len(part) > self.exact_below and not self.half else False

    def parts_in_threads(
        self,
        parts: list[tuple[np.ndarray, int]],
        d: int,
        b: int,
        history: np.ndarray,
        levels: int,
        cut: int,
        value: int,
    ) -> int:
        """`parts_in_turn`, the parts of each pass shared out to this lookahead and its helpers (one thread each,
        largest part first). A part's cut-off in the last pass counts the parts still running at their bound so
        far, so it is looser than in turn, but a sum under `cut` is the same: every part in it was bounded below
        its cut-off."""
        lock = threading.Lock()
        bounds = [fill for _, fill in parts]
        final = [self.fixed(part, levels) for part, _ in parts]
        state = {"value": value, "next": 0}

        def work(lookahead: Lookahead, todo: list[int], step: int | None) -> None:
            while True:
                with lock:
                    if state["value"] >= cut or state["next"] == len(todo) or self.stop:
                        return
                    i = todo[state["next"]]
                    state["next"] += 1
                    beta = (
                        cut - state["value"] + bounds[i]
                        if step is None or final[i] is None  # deep: all that is left
                        else bounds[i] + step
                    )
                got = lookahead.bound(parts[i][0], d, b, history, levels, beta)
                with lock:
                    got = max(got, bounds[i])
                    state["value"] += got - bounds[i]
                    bounds[i] = got
                    final[i] = got < beta or final[i] is None

        with ThreadPoolExecutor(len(self.helpers)) as pool:  # its exit waits for the helpers
            for rnd in range(WINDOW_PASSES + 1):
                todo = [i for i in range(len(parts)) if not final[i]]
                if not todo or state["value"] >= cut or self.stop:
                    break
                step = None if rnd == WINDOW_PASSES else max(1, (cut - state["value"]) // len(todo))
                state["next"] = 0
                running = [pool.submit(work, helper, todo, step) for helper in self.helpers]
                try:
                    work(self, todo, step)
                except BaseException:
                    for helper in self.helpers:  # the whole bound ends: theirs too, at their next node
                        helper.request_stop()
                    raise
                finally:
                    for future in running:
                        future.exception()  # wait for each helper before the next pass or the exit
                for future in running:
                    future.result()  # a helper's Stopped or failure, raised here
        if self.stop:
            raise Stopped()
        return state["value"]

    def stored_probe_bounds(self, key: str, probes: np.ndarray, lb: np.ndarray) -> np.ndarray:
        """The probes' level-fill bounds raised to what the store proves of each (a probe's exact value or bound)."""
        stored = self._store.probe_values(key)
        if not stored:
            return lb
        return np.maximum(lb, np.array([stored.get(int(g), 0) for g in probes], dtype=lb.dtype))

    def game_bound(self, levels: int) -> int:
        """The lookahead bound of the whole game."""
        gt = self.gt
        return self.bound(
            np.arange(gt.size, dtype=np.int32), 0, len(gt.answers) - 1, np.empty(0, dtype=np.int64), levels
        )


def lookahead_bound(
    gt: GameTable,
    costs: Costs,
    levels: int,
    consistent_only: bool = False,
    on_node: Callable[[], None] | None = None,
    exact_below: int = 0,
    store: Store | None = None,
    threads: int | None = None,
    half: bool = False,
) -> int:
    """A proven lower bound of the game's value under `costs` by `levels` levels of lookahead (INF: no tree
    meets the objective's depth bound), sets of at most `exact_below` secrets searched exactly, and what
    `store` has proven used where the lookahead meets it. The parts of the first questions are bounded by
    `threads` at once (one per core unless given); the bound is the same whatever their number. With `half`,
    half a level more: below the last level each probe's parts count at the engine's cheap bound of each.

    It runs in a thread while this one waits: a Ctrl-C or a signal that arrived in the middle of a compiled
    call would otherwise surface as numba's SystemError instead of itself; here it stops the bound at its
    next node and is raised as it came."""
    bound = Lookahead(gt, costs, consistent_only, on_node, exact_below, store, threads or os.cpu_count() or 1, half)
    out: list = []

    def run() -> None:
        try:
            out.append(bound.game_bound(levels))
        except Stopped:
            pass
        except BaseException as e:  # raised again in the caller's thread
            out.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    wait_for(thread, bound.request_stop)
    if isinstance(out[0], BaseException):
        raise out[0]
    return out[0]
