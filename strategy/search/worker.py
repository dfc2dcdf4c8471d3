"""One process's exact-search state, and the task every executor runs.

A worker keeps, per game, the feedback table and an `Engine` (transposition table, symmetry cache,
scratch arrays) across tasks, so nothing large is sent with a task: a task is a candidate set, its
depth, the questions asked before it, a cut-off and a slot for live control. It returns the exact
value and the canonical subtree (`Engine.extract`), or a proven lower bound.
"""
from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..engine import exact
from ..engine.exact import INF
from ..feedback_table import GameTable, game_table, split
from ..rules import Game
from ..symmetry import position_perms
from .objectives import Costs, levels_for

SMALL_SET = 40  # extraction chooses the question of sets up to this size without a thread of its own


def tree_node(guess: str, children: dict[str, dict]) -> dict:
    """A tree node; a leaf when there are no children."""
    return {"guess": guess, "next": children} if children else {"guess": guess}


@dataclass(frozen=True)
class Spec:
    """What a worker needs to build its engine: the game, the objective, the probe rule, the table size."""

    game: Game
    costs: Costs
    consistent_only: bool
    tt_bits: int


class Engine:
    """The compiled search with its state for one game and objective."""

    def __init__(self, gt: GameTable, spec: Spec, seed: int = 12345):
        self.gt = gt
        self.spec = spec
        game = gt.game
        self.perms = position_perms(game.length, not game.leading_zero)
        self.all_probes = np.arange(gt.size, dtype=np.int32)
        self.cost = cost = spec.costs.array(gt.size)  # what a secret found at question r costs
        shift = bool(np.all(cost[1:] == np.arange(1, len(cost))))
        self.params = np.array([len(gt.answers), gt.win, game.symbols, int(not game.leading_zero),
                                int(spec.consistent_only), int(shift)], dtype=np.int64)
        self.bounds = exact.make_bounds(cost, len(gt.answers), exact.TABLE_DEPTHS, exact.BYTES_MAX)
        rng = np.random.default_rng(seed)
        width = max(gt.size, levels_for(gt.size) + 2)
        self.zs = rng.integers(-(2**63), 2**63 - 1, size=(4, width), dtype=np.int64)
        self.tt = np.zeros((1 << spec.tt_bits, 4), dtype=np.int64)
        self.counters = np.zeros(exact.N_COUNTERS, dtype=np.int64)
        self.control = np.zeros(2, dtype=np.int64)
        self.control[exact.K_BETA] = INF
        self.classes = exact.make_class_cache(gt.size)
        self.scratch = exact.make_scratch(gt.size, len(gt.answers))
        self.content = exact.make_content(gt.table, gt.codes, game.symbols, gt.answers)

    @property
    def root_branching(self) -> int:
        return len(self.gt.answers) - 1

    def branching(self, S: np.ndarray) -> int:
        """The most non-winning parts any probe makes of S (what a node passes to its children)."""
        if len(S) <= exact.BYTES_MAX and not self.spec.consistent_only:
            return int(exact.fast_bounds(self.gt.table, S, self.all_probes, True, 0, self.root_branching, self.bounds,
                                         len(self.gt.answers), self.gt.win, self.scratch))
        probes = S if self.spec.consistent_only else self.all_probes
        lb = np.empty(len(probes), dtype=np.int64)
        sq = np.empty(len(probes), dtype=np.int64)
        ex = np.empty(len(probes), dtype=np.bool_)
        return int(exact.scan(self.gt.table, S, probes, 0, self.root_branching, self.bounds, len(self.gt.answers),
                              self.gt.win, lb, sq, ex))

    def _args(self) -> tuple:
        return (self.gt.table, self.gt.codes, self.gt.masks, self.perms, self.all_probes, self.params, self.bounds,
                self.zs, self.tt, self.counters, self.classes, self.scratch, self.content)

    def solve(self, S: np.ndarray, d: int, beta: int, history: np.ndarray, b: int, control: np.ndarray | None = None,
              live: bool = False, probe: int = -1, threaded: bool = True,
              deadline: float | None = None) -> tuple[int, int]:
        """(value, probe) if value < beta, else (lower bound, -1); with `probe`, the value of that first question.

        Runs in a thread (the kernel releases the GIL) so that Ctrl-C and SIGTERM stop it at once, unless
        the caller stops it soon anyway (`threaded` False); `control` lets a driver lower the cut-off live;
        a threaded search still running at `deadline` (time.perf_counter()) stops there (Stopped)."""
        control = self.control if control is None else control
        args = self._args() + (S, np.int64(d), np.int64(beta), history, np.int64(b), np.int64(-1), np.int64(probe),
                               control, np.int64(1 if live else 0))
        return self._threaded(exact.solve, args, control, threaded, deadline)

    def _threaded(self, fn, args, control, threaded: bool = True, deadline: float | None = None) -> tuple[int, int]:
        if not threaded:  # a call that ends in milliseconds: a thread would cost more than it protects
            result = fn(*args)
            if control[exact.K_STOP]:
                raise Stopped()
            return result
        result: list = []
        worker = threading.Thread(target=lambda: result.append(fn(*args)), daemon=True)
        worker.start()
        try:  # it returns within a node or two of a stop
            wait_for(worker, lambda: control.__setitem__(exact.K_STOP, 1), deadline)
        except BaseException:
            control[exact.K_STOP] = 0
            self.tt[:] = 0  # whatever the stopped search stored is discarded with it
            raise
        if not result:
            raise RuntimeError("the search thread failed")
        if control[exact.K_STOP]:
            raise Stopped()
        return result[0]

    def value(self, S: np.ndarray, d: int, history: np.ndarray, b: int) -> int:
        """The exact value of S (cheap when the transposition table has it)."""
        if len(S) <= 2:
            return int(exact.trivial(len(S), d, self.bounds))
        v, probe = exact.bound_set(self.gt.table, self.params, self.bounds, self.zs, self.tt, self.counters,
                                   self.scratch, S, d, b)
        if probe >= 0:
            return int(v)
        return int(self.solve(S, d, INF, history, b)[0])

    def extract(self, S: np.ndarray, d: int, value: int, history: np.ndarray, b: int, probe: int = -1) -> dict:
        """The canonical subtree of S whose exact value is `value` (see exact.choose); `probe` fixes its question."""
        gt = self.gt
        n = len(S)
        if n == 1:
            return tree_node(gt.code_str(int(S[0])), {})
        if n == 2:
            return tree_node(gt.code_str(int(S[0])), {gt.answer_str(int(gt.table[S[0], S[1]])): tree_node(gt.code_str(int(S[1])), {})})
        if probe >= 0:
            b_here = self.branching(S)
        else:
            probe, b_here = self._threaded(exact.choose, self._args() + (S, np.int64(d), np.int64(value), history,
                                                                       np.int64(b), self.control), self.control,
                                           threaded=n > SMALL_SET)
        if probe < 0:
            raise RuntimeError(f"no question reaches the proven value {value} (a set of {n} secrets at depth {d})")
        members, starts = split(gt.table, S, probe, len(gt.answers))
        child_history = np.append(history, probe).astype(np.int64)
        children = {}
        for c in range(len(gt.answers)):
            if c == gt.win or starts[c] == starts[c + 1]:
                continue
            part = members[starts[c]:starts[c + 1]]
            v = self.value(part, d + 1, child_history, int(b_here))
            children[gt.answer_str(c)] = self.extract(part, d + 1, v, child_history, int(b_here))
        return tree_node(gt.code_str(int(probe)), children)


class Stopped(Exception):
    """A search was asked to stop: the driver no longer needs its result, or Ctrl-C or a signal reached the
    thread that waits for it."""


def wait_for(thread: threading.Thread, stop: Callable[[], None], deadline: float | None = None) -> None:
    """Join a thread that runs compiled work, in short waits so that Ctrl-C and signals reach this thread (in
    the middle of a compiled call they would surface as numba's SystemError): on any of them the work is asked
    to stop (`stop`), the thread joined, and the exception raised again. At `deadline` (time.perf_counter())
    the work is asked to stop too, and joined."""
    try:
        while thread.is_alive():
            left = 0.1 if deadline is None else min(0.1, deadline - time.perf_counter())
            if left <= 0:
                stop()
                deadline, left = None, 0.1
            thread.join(left)
    except BaseException:
        stop()
        thread.join()
        raise


# -- the task ---------------------------------------------------------------------------------------


@dataclass
class Task:
    """Solve S at depth d below a cut-off (with `probe` >= 0: the value of that first question; with
    `probes`, a batch: the value of each of those first questions in turn, see `run_batch`);
    `slot` addresses the live control of the executor (or -1)."""

    key: str
    S: np.ndarray
    d: int
    history: np.ndarray
    b: int
    beta: int
    probe: int = -1
    slot: int = -1
    probes: tuple[int, ...] = ()
    seconds: float = 0.0  # > 0: stop after this long (Result.timed_out), and the driver splits the task instead


@dataclass
class Result:
    key: str
    value: int
    exact: bool
    tree: dict | None
    seconds: float
    worker: str
    counters: list[int] = field(default_factory=list)
    stopped: bool = False
    timed_out: bool = False  # stopped at the task's own time limit, not by the driver
    batch: list["Result"] = field(default_factory=list)  # a batch's outcome, one result per probe in order


_ENGINES: dict = {}


def engine_for(spec: Spec) -> Engine:
    """This process's engine for `spec`, built once (the feedback table too) and kept."""
    engine = _ENGINES.get(spec)
    if engine is None:
        _ENGINES.clear()
        engine = _ENGINES[spec] = Engine(game_table(spec.game), spec)
    return engine


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def run_task(spec: Spec, task: Task, control: np.ndarray | None = None) -> Result:
    """Solve one task: its exact value and canonical subtree, or a lower bound >= its cut-off."""
    return run_on(engine_for(spec), task, control)


def run_on(engine: Engine, task: Task, control: np.ndarray | None = None, threaded: bool = True) -> Result:
    """Solve one task with this engine (stopped at once, without a result, when control[K_STOP] is set);
    `threaded` False when a timer stops it within milliseconds (a thread costs more than it protects then)."""
    if task.probes:
        return run_batch(engine, task, control, threaded)
    start = time.perf_counter()
    before = engine.counters.copy()
    if control is not None and control[exact.K_BETA] > task.beta:
        control[exact.K_BETA] = task.beta
    deadline = start + task.seconds if task.seconds > 0 else None
    try:
        value, probe = engine.solve(task.S, task.d, task.beta, task.history, task.b, control, live=control is not None,
                                    probe=task.probe, threaded=threaded or deadline is not None, deadline=deadline)
        exact_value = bool(probe >= 0 and value < INF)
        tree = engine.extract(task.S, task.d, int(value), task.history, task.b, task.probe) if exact_value else None
    except Stopped:
        end = time.perf_counter()
        return Result(task.key, 0, False, None, end - start, worker_name(), stopped=True,
                      timed_out=deadline is not None and end >= deadline)
    return Result(task.key, int(value), exact_value, tree, time.perf_counter() - start, worker_name(),
                  (engine.counters - before).tolist())


def run_batch(engine: Engine, task: Task, control: np.ndarray | None = None, threaded: bool = True) -> Result:
    """The value of each of `task.probes` as the first question of S, in order: each must beat the cut-off,
    which an exact value lowers for the probes after it (a later probe must be strictly better, as the
    driver's tie rule says). The batch stops whole, without results, when the driver stops it."""
    start = time.perf_counter()
    before = engine.counters.copy()
    beta = task.beta
    results = []
    for probe in task.probes:
        if control is not None:
            beta = min(beta, int(control[exact.K_BETA]))
        r = run_on(engine, Task(f"{task.key}/{probe}", task.S, task.d, task.history, task.b, beta, probe=probe),
                   control, threaded)
        if r.stopped:
            return Result(task.key, 0, False, None, time.perf_counter() - start, worker_name(), stopped=True)
        results.append(r)
        if r.exact:
            beta = min(beta, r.value)
    return Result(task.key, 0, False, None, time.perf_counter() - start, worker_name(),
                  (engine.counters - before).tolist(), batch=results)
