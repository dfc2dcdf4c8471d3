"""Stopping long work cleanly: Ctrl-C, SIGTERM and SIGHUP, a budget, a driver that no longer needs a result.

Three facts shape every long-running loop of the tool, and they are explained here once:

- **A signal reaches only the main thread, and only between Python bytecodes.** Compiled (numba) work runs in
  a helper thread and the main thread waits for it in short joins (`wait_for`), so that Ctrl-C is heard within
  a tenth of a second; the work is then asked to stop through its control array and joined. A signal that
  lands while a compiled function calls back into Python surfaces as numba's SystemError: `signals_unwrapped`
  raises the KeyboardInterrupt (or `Terminated`) behind it as itself.
- **Never wait on futures through their locks.** `concurrent.futures.wait` takes each future's lock in turn; a
  Ctrl-C arriving while one is held leaves it held for good, a worker thread then blocks on it as its work
  ends, and the shutdown, which joins that thread, never comes. Futures therefore report to a `Completions`
  queue from their done callbacks, and the waiting thread reads the queue.
- **SIGTERM and SIGHUP unwind like Ctrl-C** (`Terminated`, installed by `terminate_on_signals`), so that every
  `finally` runs: stores are closed, temporary files removed, worker processes stopped.
- **A C library that runs long in the main thread hears a signal only through a callback.** SQLite calls its
  progress handler every so many steps of a statement; the signal's handler runs as that callback is entered, and
  SQLite would swallow what it raises. `Heard` keeps it: its `poll` resumes a generator, whose `yield` sits inside a
  `try`, so the interruption is caught there, noted, and the statement asked to stop; the caller raises it again
  (`raise_heard`) once the library has returned.
- **Once stopped, a command winds up undisturbed.** A second Ctrl-C (or SIGTERM) while an interrupted solve writes
  its partial tree and stops its workers is held (`signals_held`), not raised: it would cut the writing short and
  leave shared memory and semaphores to the resource tracker. Anywhere else, a signal that comes while the
  first one is being handled is the same request, not raised again (`_stop`): the unwinding, the last event and
  the exit status stay the first one's.

An interrupted exact solve raises `Interrupted`, which carries what it had proven (`partial`) and the
interruption itself as its cause.
"""

from __future__ import annotations

import ctypes
import platform
import queue
import signal
import sys
import threading
import time
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any, Callable, Iterator


class Terminated(BaseException):
    """SIGTERM or SIGHUP: unwinds like KeyboardInterrupt, so every cleanup runs."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


class Stopped(Exception):
    """A search was asked to stop: the driver no longer needs its result, or Ctrl-C or a signal reached the
    thread that waits for it."""


class Interrupted(BaseException):
    """An exact solve stopped before its end (Ctrl-C, a signal, a full disk, a lost cluster): `partial` is what it
    had proven (the lower bound, the best complete tree found), and the interruption is its `__cause__`."""

    def __init__(self, partial: Any):
        super().__init__("interrupted")
        self.partial = partial


INTERRUPTIONS = (KeyboardInterrupt, Terminated)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _stop(signum: int, frame: object) -> None:
    """Raise the signal's interruption (KeyboardInterrupt, or `Terminated`), unless one is being handled already:
    a Ctrl-C pressed twice, or a supervisor's SIGTERM on the heels of a Ctrl-C, would cut short the wind-up the
    first one started (its except, finally and with-exit blocks: the work stopped and joined, the last event, the
    exit status). A signal is handled only while some such block runs, so it sees the first one there
    (`sys.exc_info`). A first one that a C library's callback swallowed is handled nowhere: the next is raised."""
    if _behind(sys.exc_info()[1], (*INTERRUPTIONS, Interrupted)) is not None:
        return
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


def terminate_on_signals() -> None:
    """Make Ctrl-C raise KeyboardInterrupt, and SIGTERM and SIGHUP `Terminated`, in the main thread, once for a
    burst of them (`_stop`)."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, _stop)


@contextmanager
def signals_unwrapped() -> Iterator[None]:
    """Raise the KeyboardInterrupt (or Terminated) behind a SystemError as itself: a compiled function that calls
    back into Python (numba does, to build some of its results) when a signal arrives returns with the handler's
    exception set, and numba raises a SystemError caused by it. Any other SystemError goes on as it is."""
    try:
        yield
    except SystemError as error:
        seen = _behind(error, INTERRUPTIONS)
        if seen is None:
            raise
        raise seen from None


def _behind(error: BaseException | None, kinds: tuple[type[BaseException], ...]) -> BaseException | None:
    """The first exception of `kinds` among `error` and those it was raised from or while handling (None if none)."""
    while error is not None and not isinstance(error, kinds):
        error = error.__cause__ or error.__context__
    return error


def wait_for(thread: threading.Thread, stop: Callable[[], None], deadline: float | None = None) -> None:
    """Join a thread that runs compiled work, in short waits so that Ctrl-C and signals reach this thread: on any
    of them the work is asked to stop (`stop`), the thread joined, and the exception raised again. At `deadline`
    (time.perf_counter()) the work is asked to stop too, and joined."""
    try:
        while thread.is_alive():
            left = 0.1 if deadline is None else min(0.1, deadline - time.perf_counter())
            if left <= 0:
                stop()
                deadline, left = None, 0.1
            thread.join(left)
    except BaseException:  # a signal meanwhile is the same request (`_stop`): the work stops and is joined
        stop()
        thread.join()
        raise


class Completions:
    """Futures that report here as they finish (from their done callbacks); `next` waits on this queue and takes
    no future's lock (see the module's notes)."""

    def __init__(self) -> None:
        self._finished: queue.SimpleQueue[Future] = queue.SimpleQueue()

    def watch(self, future: Future) -> Future:
        future.add_done_callback(self._finished.put)
        return future

    def next(self, timeout: float) -> Future | None:
        """The next finished future, or None after `timeout` seconds."""
        try:
            return self._finished.get(timeout=timeout)
        except queue.Empty:
            return None

    def ready(self) -> list[Future]:
        """Every future finished so far and not yet taken, without waiting."""
        out = []
        while True:
            try:
                out.append(self._finished.get_nowait())
            except queue.Empty:
                return out


class Heard:
    """Signals heard inside a C library's callback (SQLite's progress handler): `poll` is the callback (1 asks the
    library to stop), `raise_heard` raises the interruption it caught, once the library has returned. Only the main
    thread runs signal handlers: in any other thread `poll` merely returns 0."""

    def __init__(self) -> None:
        self.heard: BaseException | None = None
        beats = self._beats()
        next(beats)
        self.poll: Callable[[], int] = beats.__next__  # C calls it: the handler runs as the generator resumes

    def _beats(self) -> Iterator[int]:
        while True:
            try:
                yield 0
            except GeneratorExit:  # the connection is gone
                return
            except BaseException as e:  # KeyboardInterrupt or Terminated, raised by the signal's handler
                self.heard = e
                yield 1

    def raise_heard(self) -> None:
        """Raise the interruption heard since the last call, if any."""
        if self.heard is not None:
            heard, self.heard = self.heard, None
            raise heard


@contextmanager
def signals_held() -> Iterator[list[int]]:
    """Ctrl-C, SIGTERM and SIGHUP are noted (in the list yielded), not raised, until the block ends: for the wind-up
    of a command already stopped. Outside the main thread, where no handler can be set, it does nothing."""
    held: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield held
        return
    kept = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    for sig in kept:
        signal.signal(sig, lambda signum, frame: held.append(signum))
    try:
        yield held
    finally:
        for sig, handler in kept.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


def die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (even by kill -9): no orphaned workers."""
    if platform.system() == "Linux":
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
