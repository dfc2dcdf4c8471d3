"""Exact solving: objectives, the root split over worker processes, tree extraction and proof records.

The parts of the first question's partition are independent problems, so they go to a pool of
worker processes (spawned, each with its own feedback table and transposition table); each worker
returns the exact value of its part and the optimal subtree.
"""
from __future__ import annotations

import ctypes
import multiprocessing
import os
import platform
import signal
import threading
import time
from dataclasses import dataclass

import numpy as np
from numba import types
from numba.typed import Dict
from tqdm import tqdm

from ..engine import exact
from ..engine.exact import INF, NO_CAP
from ..feedback_table import GameTable, game_table, split
from ..rules import Game, GameError
from ..symmetry import canonical_probes, position_perms

OBJECTIVES = ("total", "worst", "worst-then-fewest")
MAX_SEARCH_DEPTH = 30


@dataclass(frozen=True)
class Weights:
    """Cost of a secret found at question r of a tree bounded by L questions: w1*r + m*[r == L]."""

    w1: int
    m: int


TOTAL = Weights(1, 0)
FEASIBLE = Weights(0, 0)
AT_LAST_LEVEL = Weights(0, 1)


def engine_params(gt: GameTable, weights: Weights, consistent_only: bool) -> np.ndarray:
    """The engine's parameter vector (see engine.P_*)."""
    game = gt.game
    return np.array([weights.w1, weights.m, len(gt.answers), gt.win, game.symbols, int(not game.leading_zero),
                     int(consistent_only)], dtype=np.int64)


def tree_node(guess: str, children: dict[str, dict]) -> dict:
    """A tree node; a leaf when there are no children."""
    return {"guess": guess, "next": children} if children else {"guess": guess}


class Searcher:
    """One process's exact-search state: the game's arrays, symmetry data and transposition table."""

    def __init__(self, gt: GameTable, consistent_only: bool, tt_bits: int, weights: Weights, seed: int = 12345):
        self.gt = gt
        game = gt.game
        self.perms = position_perms(game.length, not game.leading_zero)
        self.all_probes = np.arange(gt.size, dtype=np.int32)
        self.params = engine_params(gt, weights, consistent_only)
        rng = np.random.default_rng(seed)
        width = max(gt.size, NO_CAP + 1)
        self.zs = rng.integers(-(2**63), 2**63 - 1, size=(4, width), dtype=np.int64)
        self.tt = np.zeros((1 << tt_bits, 4), dtype=np.int64)
        self.counters = np.zeros(4, dtype=np.int64)
        self.control = np.zeros(4, dtype=np.int64)
        self.classes = Dict.empty(key_type=types.UniTuple(types.int64, 2), value_type=types.int32[:])
        self.weights = weights

    def set_weights(self, weights: Weights) -> None:
        """Switch objective; stored results of another objective are dropped."""
        if weights != self.weights:
            self.params[exact.P_W1], self.params[exact.P_M] = weights.w1, weights.m
            self.tt[:] = 0
            self.weights = weights

    def solve(self, S: np.ndarray, L: int, beta: int, history: np.ndarray, b: int, only_probe: int = -1) -> tuple[int, int]:
        """The compiled search, run in a thread (it releases the GIL) so that Ctrl-C and SIGTERM stop it at once."""
        args = (self.gt.table, self.gt.codes, self.gt.masks, self.perms, self.all_probes, self.params, self.zs, self.tt,
                self.counters, self.classes, S, L, beta, history, b, -1, only_probe, self.control)
        result: list = []
        worker = threading.Thread(target=lambda: result.append(exact.solve(*args)), daemon=True)
        worker.start()
        try:
            while worker.is_alive():
                worker.join(0.1)
        except BaseException:
            self.control[exact.K_STOP] = 1  # the search returns within a node or two
            worker.join()
            self.control[exact.K_STOP] = 0
            self.tt[:] = 0  # whatever the stopped search stored is discarded with it
            raise
        if not result:
            raise RuntimeError("the search thread failed")
        return result[0]

    def extract(self, S: np.ndarray, L: int, history: np.ndarray, b: int, probe: int = -1) -> dict:
        """The optimal subtree of S (values come back from the transposition table); `probe` fixes its first question."""
        if probe < 0:
            value, probe = self.solve(S, L, INF, history, b)
        else:
            value, _ = self.solve(S, L, INF, history, b, only_probe=probe)
        if value >= INF:
            raise RuntimeError("extracting a subtree of an infeasible set")
        gt = self.gt
        members, starts = split(gt.table, S, probe, len(gt.answers))
        children = {}
        child_history = np.append(history, probe).astype(np.int64)
        for c in range(len(gt.answers)):
            if c == gt.win or starts[c] == starts[c + 1]:
                continue
            children[gt.answer_str(c)] = self.extract(members[starts[c]:starts[c + 1]], exact.child_cap(L), child_history, b)
        return tree_node(gt.code_str(probe), children)


# -- worker processes -------------------------------------------------------------------------

_WORKER: dict = {}


def _worker_init() -> None:
    """Workers leave signals to the parent, which terminates them; they also die with it (Linux)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent()


def die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (even by kill -9): no orphaned workers."""
    if platform.system() == "Linux":
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _worker_searcher(spec: tuple, weights: Weights) -> Searcher:
    game, consistent_only, tt_bits = spec
    s = _WORKER.get(spec)
    if s is None:
        _WORKER.clear()
        s = _WORKER[spec] = Searcher(game_table(game), consistent_only, tt_bits, weights)
    s.set_weights(weights)
    return s


def solve_part(spec: tuple, weights: Weights, part: np.ndarray, L: int, beta: int, history: np.ndarray, b: int,
               want_tree: bool, fresh: bool):
    """Worker task: (value, subtree or None, counters delta, seconds) for one part of the root split.

    `fresh` empties the transposition table first: parts are disjoint sets, so nothing is lost,
    and the tree no longer depends on which worker happened to get which part.
    """
    start = time.perf_counter()
    s = _worker_searcher(spec, weights)
    if fresh:
        s.tt[:] = 0
    before = s.counters.copy()
    value, _ = s.solve(part, L, beta, history, b)
    tree = s.extract(part, L, history, b) if want_tree and value < beta else None
    return value, tree, s.counters - before, time.perf_counter() - start


def solve_first_question(spec: tuple, weights: Weights, probe: int, L: int, beta: int, b: int, want_tree: bool):
    """Worker task: the value of the whole game with a fixed first question, if below beta (and its tree)."""
    start = time.perf_counter()
    s = _worker_searcher(spec, weights)
    before = s.counters.copy()
    S = np.arange(s.gt.size, dtype=np.int32)
    none = np.zeros(0, dtype=np.int64)
    value, _ = s.solve(S, L, beta, none, b, only_probe=probe)
    tree = s.extract(S, L, none, b, probe=probe) if want_tree and value < beta else None
    return value, tree, s.counters - before, time.perf_counter() - start


class _InProcess:
    """The pool interface, run synchronously (small games, or --jobs 1)."""

    class _Done:
        def __init__(self, value):
            self._value = value

        def get(self, timeout=None):
            return self._value

        def ready(self):
            return True

    def apply_async(self, fn, args):
        return self._Done(fn(*args))

    def terminate(self):
        pass

    def close(self):
        pass

    def join(self):
        pass


# -- the search at the root ----------------------------------------------------------------------


@dataclass
class RootResult:
    value: int
    tree: dict | None


@dataclass
class SolveReport:
    """What a solve proved, with the optimal tree.

    `search` holds the search counters, which are deterministic; `run` what varies from run to run
    (seconds, processes, machine).
    """

    game: Game
    objective: str
    tree: dict | None
    proven: dict
    search: dict
    run: dict
    lines: list[str]


class Solver:
    def __init__(self, gt: GameTable, consistent_only: bool = False, jobs: int | None = None,
                 tt_bits: int | None = None, progress: bool = True):
        self.gt = gt
        self.consistent_only = consistent_only
        if tt_bits is None:
            tt_bits = 20 if gt.size <= 1500 else 23
        self.spec = (gt.game, consistent_only, tt_bits)
        self.jobs = processes_for(gt.game, jobs)
        self.progress = progress
        self.counters = np.zeros(4, dtype=np.int64)
        self.seconds_in_parts = 0.0
        self._pool = None

    def __enter__(self) -> "Solver":
        if self.jobs > 1:
            self._pool = multiprocessing.get_context("spawn").Pool(self.jobs, initializer=_worker_init)
        else:
            self._pool = _InProcess()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self._pool.close()
        else:
            self._pool.terminate()
        self._pool.join()

    def root(self, L: int, weights: Weights, beta: int = INF, want_tree: bool = True, label: str = "") -> RootResult:
        """Value (and tree) of the whole game within L questions, if below beta."""
        gt = self.gt
        n = gt.size
        S = np.arange(n, dtype=np.int32)
        params = engine_params(gt, weights, self.consistent_only)
        if n <= 2:
            value = int(exact.trivial(n, L, weights.w1, weights.m))
            kids = {gt.answer_str(int(gt.table[0, 1])): tree_node(gt.code_str(1), {})} if n == 2 else {}
            return RootResult(value, tree_node(gt.code_str(0), kids) if value < beta else None)
        perms = position_perms(gt.game.length, not gt.game.leading_zero)
        probes = canonical_probes(gt.codes, gt.masks, S, np.zeros(0, np.int64), perms, gt.game.symbols, not gt.game.leading_zero, S)
        b0 = len(gt.answers) - 1
        lb = np.empty(len(probes), dtype=np.int64)
        sq = np.empty(len(probes), dtype=np.int64)
        ex = np.empty(len(probes), dtype=np.bool_)
        b = int(exact.scan(gt.table, S, probes, L, b0, params, lb, sq, ex, -1)[0])
        order = [i for i in sorted(range(len(probes)), key=lambda i: (lb[i], sq[i])) if lb[i] < beta]
        if len(order) > 1 and self.jobs > 1:
            # Solve first the question that leads to the best greedy tree: the others are then
            # usually refuted quickly, and only the first gets all the processes.
            order.sort(key=lambda i: self._greedy_total(int(probes[i])))
        best, best_tree, fail = beta, None, INF
        if len(order) < len(probes):
            fail = int(min(lb[i] for i in range(len(probes)) if lb[i] >= beta))
        bar = tqdm(total=n, unit="secret", delay=0.5, disable=not self.progress, desc=label or "solve")
        try:
            if order:
                # The most promising first question: its parts are independent, solve them in parallel.
                value, tree = self._split_first_question(int(probes[order[0]]), S, L, weights, beta, b, want_tree, bar)
                if value < best:
                    best, best_tree = value, tree
                else:
                    fail = min(fail, value)
            # The other first questions only need to be refuted (or found better): one task each,
            # whose parts share the cut-off sequentially. Ties keep the earlier question.
            rest = [i for i in order[1:] if lb[i] < best]
            if 0 < len(rest) < self.jobs:
                # too few to keep every process busy one question each: split their parts instead
                for i in rest:
                    bar.reset(total=n)
                    bar.set_description(f"{label or 'solve'}: refute {gt.code_str(int(probes[i]))}")
                    value, tree = self._split_first_question(int(probes[i]), S, L, weights, best, b, want_tree, bar)
                    if value < best:
                        best, best_tree = value, tree
                    elif value < fail:
                        fail = value
                rest = []
            if rest:
                bar.reset(total=len(rest))
                bar.unit = "first question"
                jobs = {i: self._pool.apply_async(solve_first_question, (
                    self.spec, weights, int(probes[i]), L, best, b, want_tree)) for i in rest}
                for i in rest:  # in order, so that ties keep the earlier question
                    value, tree = self._collect(jobs[i])
                    bar.update(1)
                    if value < best:
                        best, best_tree = value, tree
                    elif value < fail:
                        fail = value
        finally:
            bar.close()
        if best < beta:
            return RootResult(int(best), best_tree)
        return RootResult(int(max(fail, beta)), None)

    def _split_first_question(self, probe, S, L, weights, beta, b, want_tree, bar) -> tuple[int, dict | None]:
        """Value (and tree) with this first question, its parts solved by the workers in parallel."""
        gt = self.gt
        n = len(S)
        cl = int(exact.child_cap(L))
        members, starts = split(gt.table, S, probe, len(gt.answers))
        parts = [(c, members[starts[c]:starts[c + 1]]) for c in range(len(gt.answers))
                 if c != gt.win and starts[c + 1] > starts[c]]
        part_lb = {c: int(exact.level_fill(len(p), b, cl, weights.w1, weights.m)) for c, p in parts}
        bound = weights.w1 * n + sum(part_lb.values())
        if bound >= beta:
            return bound, None
        history = np.array([probe], dtype=np.int64)
        jobs = {}
        for c, part in sorted(parts, key=lambda cp: -len(cp[1])):
            sub_beta = beta - (bound - part_lb[c]) if beta < INF else INF
            jobs[c] = self._pool.apply_async(
                solve_part, (self.spec, weights, part, cl, sub_beta, history, b, want_tree, self.jobs > 1))
        total, children, failed = weights.w1 * n, {}, False
        size = {c: len(p) for c, p in parts}
        bar.update(n - sum(size.values()))
        while jobs and not failed:
            done = [c for c, job in jobs.items() if job.ready()]
            if not done:
                time.sleep(0.05)
                continue
            for c in done:
                value, tree = self._collect(jobs.pop(c))
                bar.update(size[c])
                total += value
                children[c] = tree
                if value >= beta - (bound - part_lb[c]):
                    failed = True  # this first question cannot beat the cut-off: drop its other parts
        if jobs:
            self._restart_pool()
            total += sum(part_lb[c] for c in jobs)
        if failed or total >= beta:
            return max(total, beta), None
        tree = tree_node(gt.code_str(probe), {gt.answer_str(c): children[c] for c in sorted(children)}) if want_tree else None
        return int(total), tree

    def _collect(self, job) -> tuple[int, dict | None]:
        """A finished worker task's (value, tree), its search counters added to the totals."""
        value, tree, counters, seconds = job.get()
        self.counters += counters
        self.seconds_in_parts += seconds
        return value, tree

    def _greedy_total(self, first: int) -> int:
        """Total of the expected-size tree that starts with `first` (an estimate to order first questions)."""
        from ..search.heuristics import build
        from ..io.verify import measure

        tree = build(self.gt, "expected-size", self.consistent_only, first=first, progress=False)
        return measure(self.gt.game, tree)[0].total

    def _restart_pool(self) -> None:
        """Drop tasks that are no longer needed (a pool cannot cancel them)."""
        if self.jobs > 1:
            self._pool.terminate()
            self._pool.join()
            self._pool = multiprocessing.get_context("spawn").Pool(self.jobs, initializer=_worker_init)


PARALLEL_MIN_CODES = 2000  # smaller games are solved in one process: starting workers costs more


def processes_for(game: Game, jobs: int | None) -> int:
    """How many processes a solve of `game` uses when asked for `jobs` (None: every core)."""
    if game.count() < PARALLEL_MIN_CODES:
        return 1
    return max(1, jobs if jobs is not None else (os.cpu_count() or 1))


def describe(game: Game, objective: str, max_depth: int | None, consistent_only: bool, jobs: int | None) -> str:
    """The line a solve starts with: what it proves, how, and where."""
    what = {"total": "minimum total", "worst": "minimum worst case, then minimum total",
            "worst-then-fewest": "minimum worst case, then fewest secrets at it"}[objective]
    if max_depth is not None:
        what += f" within {max_depth} questions"
    probes = "consistent probes only" if consistent_only else "any probe"
    n = processes_for(game, jobs)
    return f"solve {game.spec}: {what}, {probes}, {game.count()} secrets, {n} process{'es' if n > 1 else ''}"


def min_depth_bound(gt: GameTable) -> int:
    """Smallest depth that level filling allows for the whole game."""
    b = len(gt.answers) - 1
    for d in range(1, MAX_SEARCH_DEPTH + 1):
        if exact.level_fill(gt.size, b, d, 0, 0) < INF:
            return d
    raise GameError("game too deep to search")


def solve_game(gt: GameTable, objective: str, max_depth: int | None = None, consistent_only: bool = False,
               jobs: int | None = None, tt_bits: int | None = None, progress: bool = True) -> SolveReport:
    """Run the exact search for `objective`; the report says what was proved and holds the tree."""
    if objective not in OBJECTIVES:
        raise GameError(f"unknown objective {objective!r} (choose from {', '.join(OBJECTIVES)})")
    if max_depth is not None and objective != "total":
        raise GameError("--max-depth applies to the total objective only")
    start = time.perf_counter()
    game = gt.game
    proven: dict = {}
    lines: list[str] = []
    with Solver(gt, consistent_only, jobs, tt_bits, progress) as solver:
        if objective == "total":
            L = max_depth if max_depth is not None else NO_CAP
            res = solver.root(L, TOTAL, label="min total")
            if res.tree is None:
                proven = {"max_depth": max_depth, "feasible": False}
                lines.append(f"impossible: no tree finds every secret of {game.spec} within {max_depth} questions "
                             f"(exhaustive search)")
                tree = None
            else:
                proven = {"total": res.value}
                if max_depth is not None:
                    proven["max_depth"] = max_depth
                within = f" among trees of at most {max_depth} questions" if max_depth else ""
                lines.append(f"proved: minimum total {res.value}{within} (average {res.value / gt.size:.4f})")
                tree = res.tree
        else:
            depth = min_depth_bound(gt)
            refuted = []
            while True:
                res = solver.root(depth, FEASIBLE, beta=1, want_tree=False, label=f"within {depth}?")
                if res.value == 0:
                    break
                refuted.append(depth)
                depth += 1
                if depth > MAX_SEARCH_DEPTH:
                    raise GameError("no depth bound found")
            proven = {"worst": depth}
            if refuted:
                lines.append(f"proved: no tree finds every secret within {refuted[-1]} questions")
            lines.append(f"proved: minimum worst case {depth}")
            if objective == "worst":
                res = solver.root(depth, TOTAL, label=f"min total within {depth}")
                proven["total"] = res.value
                lines.append(f"proved: minimum total within {depth} questions {res.value} (average {res.value / gt.size:.4f})")
            else:
                res = solver.root(depth, AT_LAST_LEVEL, label=f"fewest at {depth}")
                proven["fewest_at_worst"] = res.value
                lines.append(f"proved: the fewest secrets that need {depth} questions is {res.value}")
            tree = res.tree
    seconds = time.perf_counter() - start
    c = solver.counters
    search = {"nodes": int(c[exact.C_NODES]), "probes_tried": int(c[exact.C_PROBES]),
              "shortcuts": int(c[exact.C_SHORTCUTS]), "table_hits": int(c[exact.C_TT_HITS])}
    run = {"seconds": round(seconds, 2), "worker_seconds": round(solver.seconds_in_parts, 2), "jobs": solver.jobs,
           "machine": machine()}
    return SolveReport(game, objective if max_depth is None else f"total-max-depth-{max_depth}", tree, proven, search,
                       run, lines)


def machine() -> str:
    """Where a run happened, for proof records: processor, cores, Python and numba versions."""
    import numba

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, numba {numba.__version__}"
