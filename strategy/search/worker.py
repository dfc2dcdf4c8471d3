"""The task every executor runs, and a worker process's engines.

A worker keeps, per game, the feedback table and an `Engine` (transposition table, symmetry cache,
scratch arrays) across tasks, so nothing large is sent with a task: a task is a candidate set, its
depth, the questions asked before it, a cut-off and a slot for live control. It returns the exact
value and the canonical subtree (`Engine.extract`), or a proven lower bound.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass, field

import numpy as np

from ..engine import exact
from ..engine.exact import INF
from ..engine.searcher import Engine, Spec
from ..engine.table import game_table
from ..interrupts import Stopped


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
        value, probe = engine.solve(
            task.S,
            task.d,
            task.beta,
            task.history,
            task.b,
            control,
            live=control is not None,
            probe=task.probe,
            threaded=threaded or deadline is not None,
            deadline=deadline,
        )
        exact_value = bool(probe >= 0 and value < INF)
        tree = engine.extract(task.S, task.d, int(value), task.history, task.b, task.probe) if exact_value else None
    except Stopped:
        end = time.perf_counter()
        return Result(
            task.key,
            0,
            False,
            None,
            end - start,
            worker_name(),
            stopped=True,
            timed_out=deadline is not None and end >= deadline,
        )
    return Result(
        task.key,
        int(value),
        exact_value,
        tree,
        time.perf_counter() - start,
        worker_name(),
        (engine.counters - before).tolist(),
    )


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
        r = run_on(
            engine,
            Task(f"{task.key}/{probe}", task.S, task.d, task.history, task.b, beta, probe=probe),
            control,
            threaded,
        )
        if r.stopped:
            return Result(task.key, 0, False, None, time.perf_counter() - start, worker_name(), stopped=True)
        results.append(r)
        if r.exact:
            beta = min(beta, r.value)
    return Result(
        task.key,
        0,
        False,
        None,
        time.perf_counter() - start,
        worker_name(),
        (engine.counters - before).tolist(),
        batch=results,
    )
