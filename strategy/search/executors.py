"""Where the driver's tasks run: in this process, in local worker processes, or on a Dask cluster.

All three take the same tasks (`worker.Task`) and give back the same results (`worker.Result`);
only how a running task hears about a lower cut-off differs: shared memory for local processes, a
Dask Variable polled by the task on a cluster. A worker that dies loses only its current tasks:
the executor reports them lost and the driver submits them again. A lost Dask scheduler ends the
solve (`ClusterLost`) like an interruption: what finished is in the store, and a rerun resumes.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import itertools
import logging
import multiprocessing
import signal
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from multiprocessing import shared_memory
from typing import Protocol, cast

import numpy as np

from ..engine import exact
from ..engine.searcher import Spec
from ..interrupts import Completions, die_with_parent
from .worker import Result, Task, run_task

SLOTS = 4096  # tasks in flight at once, at most (each has two int64 of shared control)


@dataclass
class Finished:
    """A task's outcome: its result, or None when its worker was lost (submit it again; `error` says why)."""

    handle: int
    result: Result | None
    error: str = ""


class TaskLost(ConnectionError):
    """A task was lost again and again: the workers cannot run it (not a dead worker's bad luck)."""


class ClusterLost(ConnectionError):
    """The connection to the Dask scheduler is gone, and with it every task it held."""


class Executor(Protocol):
    """What the driver needs of a place to run tasks. `workers`: tasks that run at once; `slots`: tasks handed out
    at once; `remote`: tasks run outside the driver's process (a round trip costs more than most refutations);
    `name`: for the proof record's run; `lost_workers`: workers lost while running tasks that the executor ran again
    itself, unseen by the driver (a Dask scheduler reschedules them; a local pool reports its lost tasks to the
    driver instead, which counts them)."""

    # read-only: a Dask cluster computes name, slots and lost_workers as it is asked
    @property
    def name(self) -> str: ...

    @property
    def workers(self) -> int: ...

    @property
    def slots(self) -> int: ...

    @property
    def remote(self) -> bool: ...

    @property
    def lost_workers(self) -> int: ...

    def submit(self, spec: Spec, task: Task) -> int:
        """Start a task; its handle."""

    def running(self) -> int:
        """Tasks submitted and not yet reported by `done`."""

    def done(self, timeout: float) -> list[Finished]:
        """The tasks finished (or lost) since the last call, waiting up to `timeout` seconds for the first."""

    def set_cutoff(self, handle: int, beta: int) -> None:
        """Lower a running task's cut-off (it ends sooner, with a bound, if its value is not below it)."""

    def cancel(self, handle: int) -> None:
        """Stop a task whose result is no longer needed (it is reported by `done` no more)."""

    def close(self) -> None:
        """Stop every task and free the workers."""


class InProcess:
    """Run tasks one at a time in this process (small games, --jobs 1)."""

    name = "in this process"
    workers = slots = 1  # workers: tasks that run at once; slots: tasks handed out at once
    remote = False  # tasks run in the driver's process anyway
    lost_workers = 0

    def __init__(self) -> None:
        self._queue: dict[int, tuple[Spec, Task, np.ndarray]] = {}
        self._ids = itertools.count()

    def submit(self, spec: Spec, task: Task) -> int:
        handle = next(self._ids)
        control = np.zeros(2, dtype=np.int64)
        control[exact.K_BETA] = task.beta
        self._queue[handle] = (spec, task, control)
        return handle

    def running(self) -> int:
        return len(self._queue)

    def done(self, timeout: float) -> list[Finished]:
        if not self._queue:
            return []
        handle = next(iter(self._queue))
        spec, task, control = self._queue[handle]
        result = run_task(spec, task, control)
        del self._queue[handle]
        return [Finished(handle, result)]

    def set_cutoff(self, handle: int, beta: int) -> None:
        if handle in self._queue:
            control = self._queue[handle][2]
            control[exact.K_BETA] = min(int(control[exact.K_BETA]), beta)

    def cancel(self, handle: int) -> None:
        self._queue.pop(handle, None)

    def close(self) -> None:
        self._queue.clear()


# -- local worker processes -------------------------------------------------------------------------

_SHARED: dict = {}


def _init_local(shm_name: str) -> None:
    """A local worker: leaves signals to the driver (which terminates it), dies with it, maps the controls."""

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent()
    shm = shared_memory.SharedMemory(name=shm_name)
    _SHARED["shm"] = shm
    _SHARED["controls"] = np.ndarray((SLOTS, 2), dtype=np.int64, buffer=shm.buf)


def _run_local(spec: Spec, task: Task) -> Result:
    return run_task(spec, task, _SHARED["controls"][task.slot])


class LocalProcesses:
    """Worker processes on this machine (spawned, each with its own table and engine)."""

    remote = True
    lost_workers = 0  # a dead worker's tasks come back from done() as lost: the driver counts them

    def __init__(self, jobs: int):
        self.workers = self.slots = jobs
        self.name = f"{jobs} local processes"
        self._shm = shared_memory.SharedMemory(create=True, size=SLOTS * 16)
        self.controls = np.ndarray((SLOTS, 2), dtype=np.int64, buffer=self._shm.buf)
        self._free = list(range(SLOTS - 1, -1, -1))
        self._futures: dict[cf.Future, int] = {}
        self._slot_of: dict[int, int] = {}
        self._ids = itertools.count()
        self._lost: list[Finished] = []  # tasks of a pool found broken at a submit, reported by the next done()
        self._finished = Completions()  # read without the futures' locks (see strategy.interrupts)
        self._pool = self._new_pool()

    def _new_pool(self) -> cf.ProcessPoolExecutor:
        return cf.ProcessPoolExecutor(
            self.slots,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_local,
            initargs=(self._shm.name,),
        )

    def submit(self, spec: Spec, task: Task) -> int:
        handle = next(self._ids)
        slot = self._free.pop()
        self.controls[slot, exact.K_STOP] = 0
        self.controls[slot, exact.K_BETA] = task.beta
        task.slot = slot
        self._slot_of[handle] = slot
        try:
            future = self._start(spec, task)
        except cf.process.BrokenProcessPool:  # a worker died since the last done(): as there, start afresh
            self._lost += self._replace_pool()
            future = self._start(spec, task)
        self._futures[future] = handle
        self._finished.watch(future)
        return handle

    def _start(self, spec: Spec, task: Task) -> cf.Future:
        return self._pool.submit(_run_local, spec, task)

    def running(self) -> int:
        return len(self._futures) + len(self._lost)

    def _replace_pool(self) -> list[Finished]:
        """A worker died: the pool is unusable and its running tasks are lost; a new pool takes over."""
        lost = []
        for handle in list(self._futures.values()):
            self._free.append(self._slot_of.pop(handle))
            lost.append(Finished(handle, None))
        self._futures.clear()
        self._kill_pool()
        self._pool = self._new_pool()
        return lost

    def done(self, timeout: float) -> list[Finished]:
        out, self._lost = self._lost, []
        if not self._futures:
            return out
        first = self._finished.next(0.0 if out else timeout) if not out else None
        finished = [
            f for f in [*([first] if first else []), *self._finished.ready()] if f in self._futures
        ]  # not a task of a pool replaced since
        broken = False
        for future in finished:
            handle = self._futures.pop(future)
            self._free.append(self._slot_of.pop(handle))
            if future.cancelled():
                continue
            try:
                out.append(Finished(handle, future.result()))
            except cf.process.BrokenProcessPool as e:
                broken = True
                out.append(Finished(handle, None, str(e)))
            except Exception as e:  # the task itself failed (out of memory, say): submit again, as on Dask
                out.append(Finished(handle, None, f"{type(e).__name__}: {e}"))
        if broken:  # a worker died: its pool's other tasks are lost too
            out += self._replace_pool()
        return out

    def set_cutoff(self, handle: int, beta: int) -> None:
        slot = self._slot_of.get(handle)
        if slot is not None and beta < self.controls[slot, exact.K_BETA]:
            self.controls[slot, exact.K_BETA] = beta

    def cancel(self, handle: int) -> None:
        slot = self._slot_of.get(handle)
        if slot is not None:
            self.controls[slot, exact.K_STOP] = 1
        for future, h in self._futures.items():
            if h == handle:
                future.cancel()
                break

    def worker_pids(self) -> list[int]:
        return [cast(int, p.pid) for p in (self._pool._processes or {}).values()]  # started: each has its pid

    def _kill_pool(self) -> None:
        processes = list((self._pool._processes or {}).values())
        self._pool.shutdown(wait=False, cancel_futures=True)
        for p in processes:
            if p.is_alive():
                p.terminate()
        for p in processes:
            p.join(timeout=5)

    def close(self) -> None:
        try:
            self._kill_pool()
        finally:
            self._shm.close()
            self._shm.unlink()


# -- a Dask cluster -----------------------------------------------------------------------------------

POLL_SECONDS = 0.5
WORKERS_SECONDS = 1.0  # how often the driver asks the scheduler how many workers it has (they come and go)
LOST_SECONDS = 5.0  # a scheduler unreachable this long is lost (a client would block in its reconnection for 30 s)


def _run_dask(spec: Spec, task: Task, cutoffs_name: str, handle: int) -> Result:
    """On a Dask worker: run the task while a thread follows the driver's cut-offs for it."""
    from distributed import Variable, get_client

    control = np.zeros(2, dtype=np.int64)
    control[exact.K_BETA] = task.beta
    stop = threading.Event()
    client = get_client()  # from the task's thread: the follower thread has no client of its own

    def follow() -> None:
        variable = Variable(cutoffs_name, client=client)
        while not stop.wait(POLL_SECONDS):
            try:
                cutoffs = variable.get(timeout=5)
            except Exception:  # the driver went away or is busy: keep the current cut-off
                continue
            beta = cutoffs.get(handle) if isinstance(cutoffs, dict) else None
            if beta is None:
                continue
            if beta < 0:
                control[exact.K_STOP] = 1
            elif beta < control[exact.K_BETA]:
                control[exact.K_BETA] = beta

    watcher = threading.Thread(target=follow, daemon=True)
    watcher.start()
    try:
        return run_task(spec, task, control)
    finally:
        stop.set()


def _ask_scheduler(address: str, seconds: float) -> None:
    """Ask `address` who it is, within `seconds`: a ConnectionError unless a Dask scheduler answers. A Client would
    wait for ever on a peer that accepts the connection and never speaks (or an HTTP server)."""
    import asyncio

    from distributed.core import rpc

    async def identity() -> dict:
        async with rpc(address) as peer:
            return await peer.identity()

    try:
        who = asyncio.run(asyncio.wait_for(identity(), seconds))
    except (asyncio.TimeoutError, TimeoutError):
        raise ConnectionError(
            f"cannot reach the Dask scheduler at {address}: no answer within {seconds:g} s "
            "(distributed.comm.timeouts.connect)"
        ) from None
    except Exception as e:  # OSError, a malformed address, a peer that speaks another protocol
        raise ConnectionError(f"cannot reach the Dask scheduler at {address}: {e}") from None
    if not isinstance(who, dict) or who.get("type") != "Scheduler":
        raise ConnectionError(f"{address} is not a Dask scheduler")


class DaskCluster:
    """A running Dask scheduler with its workers (`dask scheduler`, `dask worker ADDRESS`)."""

    remote = True

    def __init__(self, address: str):
        import dask
        from dask.utils import parse_timedelta
        from distributed import Client, Variable

        connect_timeout = dask.config.get("distributed.comm.timeouts.connect")  # 30 s unless set
        try:
            seconds = parse_timedelta(connect_timeout, default="seconds")
        except (KeyError, TypeError, ValueError):
            raise ConnectionError(
                f"Dask's connect timeout {connect_timeout!r} (distributed.comm.timeouts.connect) is not a "
                "duration such as 30s"
            ) from None
        _ask_scheduler(address, seconds)
        try:
            self.client = Client(address)  # waits that connect timeout
        except Exception as e:  # OSError, TimeoutError: one line for the user
            raise ConnectionError(f"cannot reach the Dask scheduler at {address}: {e}") from None
        self.address = address
        self._lost_workers = 0
        self._removed_before = self._removals()  # workers the scheduler removes from now on are this solve's losses
        self._count_workers()
        if not self._threads:  # a cluster may be started driver first: say what it waits for
            print(
                f"waiting for a worker to join the Dask scheduler at {address} (dask worker {address})",
                file=sys.stderr,
                flush=True,
            )
            self.client.wait_for_workers(1)
            self._count_workers()
        self.workers = self._threads  # the plan is chosen for the workers there at the start
        self._run = uuid.uuid4().hex[:12]
        self._cutoffs: dict[int, int] = {}
        self._dirty = False
        self._last_push = 0.0
        # the client logs a lost scheduler on stderr (its reconnection at ERROR, its closed comms at INFO with a
        # traceback); ClusterLost says it in one line instead. distributed.client has a level of its own
        for logger in ("distributed", "distributed.client"):
            logging.getLogger(logger).setLevel(logging.CRITICAL)
        self._variable = Variable(f"strategy-cutoffs-{self._run}", client=self.client)
        self._variable.set({})
        self._futures: dict = {}
        self._ids = itertools.count()
        self._unreachable_since: float | None = None

    def _removals(self) -> set[tuple]:
        """The scheduler's record of workers that left unannounced (killed, crashed): (time, worker) pairs."""
        return {
            (when, event.get("worker"))
            for when, event in self.client.get_events("all")
            if isinstance(event, dict) and event.get("action") == "remove-worker" and not event.get("expected")
        }

    @property
    def lost_workers(self) -> int:
        """Workers that left the cluster unannounced since the solve began: the scheduler runs their tasks again on
        the others, so the driver never sees them lost."""
        if not self._connected():  # the scheduler is gone (asking would block in the reconnection): the last count
            return self._lost_workers
        try:
            self._lost_workers = len(self._removals() - self._removed_before)
        except Exception:  # the scheduler went in between: what was counted last
            pass
        return self._lost_workers

    def _count_workers(self) -> None:
        """The workers and threads the scheduler has now: tasks in flight follow them as workers join or leave."""
        threads = self.client.nthreads()
        self._machines, self._threads = len(threads), sum(threads.values())
        self._counted = time.monotonic()

    @property
    def slots(self) -> int:
        return 2 * max(self._threads, 1)  # a task waits behind each running one: no worker idles for a round trip

    @property
    def name(self) -> str:
        return f"Dask at {self.address} ({self._machines} workers, {self._threads} threads)"

    def _gone(self) -> ClusterLost:
        return ClusterLost(
            f"lost the connection to the Dask scheduler at {self.address}: run again once it is back "
            "(with --store, the search resumes where it stopped)"
        )

    def _connected(self) -> bool:
        return self.client.status == "running"

    @contextlib.contextmanager
    def _unless_gone(self):
        """What a client that lost its scheduler raises becomes ClusterLost; other errors pass through."""
        try:
            yield
        except cf.CancelledError:  # the client cancels every future when it loses the scheduler
            raise self._gone() from None
        except Exception:
            if self._connected():
                raise
            raise self._gone() from None

    def submit(self, spec: Spec, task: Task) -> int:
        handle = next(self._ids)
        with self._unless_gone():
            future = self.client.submit(
                _run_dask, spec, task, self._variable.name, handle, pure=False, key=f"strategy-{self._run}-{handle}"
            )
        self._futures[future] = handle
        return handle

    def running(self) -> int:
        return len(self._futures)

    def _reachable(self, timeout: float) -> bool:
        """False while the client reconnects to its scheduler (waiting up to `timeout` for it to come back); the
        scheduler is lost after LOST_SECONDS of that. Asking it anything meanwhile would block in the reconnection."""
        if self._connected():
            self._unreachable_since = None
            return True
        now = time.monotonic()
        if self._unreachable_since is None:
            self._unreachable_since = now
        if now - self._unreachable_since >= LOST_SECONDS:
            raise self._gone()
        time.sleep(min(timeout, POLL_SECONDS))
        return False

    def done(self, timeout: float) -> list[Finished]:
        from distributed import wait

        if not self._reachable(timeout):
            return []
        with self._unless_gone():
            self._push()
            if time.monotonic() - self._counted >= WORKERS_SECONDS:
                self._count_workers()
            if not self._futures:
                return []
            try:
                finished = wait(list(self._futures), timeout=timeout, return_when="FIRST_COMPLETED").done
            except TimeoutError:
                return []
        out = []
        for future in finished:
            handle = self._futures.pop(future)
            self._cutoffs.pop(handle, None)
            if future.status == "cancelled":  # not by cancel(), which forgets the future first
                if not self._connected():
                    raise self._gone()
                out.append(Finished(handle, None, "cancelled by the cluster"))
                continue
            try:
                out.append(Finished(handle, future.result()))
            except Exception as e:  # KilledWorker and the like: submit again
                out.append(Finished(handle, None, f"{type(e).__name__}: {e}"))
        return out

    def set_cutoff(self, handle: int, beta: int) -> None:
        if self._cutoffs.get(handle, exact.INF) > beta:
            self._cutoffs[handle] = int(beta)
            self._dirty = True

    def cancel(self, handle: int) -> None:
        self._cutoffs[handle] = -1
        self._dirty = True
        for future, h in list(self._futures.items()):
            if h == handle:
                future.cancel()
                del self._futures[future]

    def _push(self) -> None:
        if self._dirty and time.monotonic() - self._last_push >= POLL_SECONDS:
            self._variable.set(dict(self._cutoffs))
            self._dirty = False
            self._last_push = time.monotonic()

    def close(self) -> None:
        try:
            if self._connected():  # a lost scheduler has forgotten them, and asking it would block
                for future in list(self._futures):
                    future.cancel()
                self._variable.delete()
        finally:
            if self._connected():
                self.client.close()
            else:
                self.client.close(timeout=POLL_SECONDS)
