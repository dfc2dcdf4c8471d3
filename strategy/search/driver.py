"""The solve driver: one exact search as many tasks, on any executor, resumable from a store.

The value of a large candidate set near the root is found in this process, one probe at a time:
a probe's parts are independent sets, each wanted below the budget the other parts leave. Sets
deeper or smaller than `expand` says become tasks (`worker.run_task`: the engine solves the set and
extracts its canonical subtree). A set tries one probe before the others, which then only have to
refute it: the question the cheapest tree known beforehand asks there (an earlier run's best tree;
its value is also a cut-off from the start), else the first in the canonical order (bound, sum of
squares, code). Every cut-off only decreases, reaches running tasks through the executor, and a
probe is abandoned as soon as its parts prove it cannot win. Ties go to the earlier probe in the
order (a later probe must be strictly better, an earlier one may equal the incumbent), so the tree
is the canonical tree of `engine.searcher.Engine.extract`, whatever the executor, the guides, the order in
which tasks finish, or what was read back from the store.

Ready work is taken in depth-first order of its position in the search (`path`), so free workers
are given the most promising work first.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence, cast

import numpy as np

from ..engine import exact
from ..engine.exact import INF
from ..engine.searcher import Engine, Spec
from ..engine.table import split
from ..tree.format import tree_node
from .executors import Executor, Finished, TaskLost
from .known import merged_tree, stored_result
from .store import Store, Stored, set_key
from .worker import Result, Task, run_on


def lost_reason(error: str) -> str:
    """What a lost task's last error says, with the likely cause: a worker that cannot import the engine, or one
    that died running the task (most often out of memory, which its own log or the system log confirms)."""
    first = error.strip().splitlines()[0][:200] if error.strip() else "its worker died each time"
    if any(word in error for word in ("No module named", "ImportError", "ModuleNotFoundError")):
        return f"{first}; can every worker import strategy?"
    return f"{first}; out of memory? the worker's log or the system log says why"


@dataclass(frozen=True)
class Plan:
    """Which sets the driver splits itself (depth <= max_depth, more than min_size secrets): their first
    probe is split into its parts; their other probes run as one task each, unless the set has more than
    split_probes secrets (then they are split too, so that no task holds a large part of the work).
    With `quick`, the driver first tries each probe task itself for QUICK_SECONDS: right for a few workers
    (a round trip costs more than most refutations), wrong for many (the driver must stay free to dispatch).
    With `batch_seconds`, consecutive probe tasks of a set go out together, as many as the set's probe tasks
    so far say fill that long: the many workers' way past a round trip per millisecond refutation.
    With `whole_seconds`, the probes of a set of more than split_probes (and at most whole_max) secrets are
    first tried as one task each for that long, and split only when that is not enough: the engine refutes
    most of them whole, in a fraction of the work their parts take as tasks of their own."""

    min_size: int = 150
    max_depth: int = 2
    split_probes: int = 400
    split_refuting: int = 300
    quick: bool = False
    batch_seconds: float = 0.0
    whole_seconds: float = 0.0
    whole_max: int = 0

    def expands(self, n: int, d: int) -> bool:
        return d <= self.max_depth and n > self.min_size


NO_SPLIT = Plan(min_size=1 << 30, max_depth=-1)
# few workers: refutations stay whole (least total work), except those of sets too large for one task: an
# interrupted task loses all its work, and on 2 workers a whole refutation of a 1920-secret set of bulls 5 of 8
# took 14 min, of Mastermind 5x6's whole game 29 min. Splitting above 1500 secrets (Mastermind 4x8: the
# longest task 9.4 s -> 0.66 s, worker time +16%, same wall time) leaves bulls 4 of 10 as it was. But split
# parts cost far more work than the engine's own refutation where most refutations are quick: so such a
# refutation is tried whole for 20 s first (Mastermind 5x7 fewest at 6, part of 3012 secrets: over 900 s ->
# 101 s on 2 workers; Mastermind 5x6 least total 136 s -> 75 s). Sets above 8000 (a first question of a
# game this size) are split at once: their refutations are never that quick.
COARSE = Plan(split_probes=1500, quick=True, whole_seconds=20.0, whole_max=8000)
FINE = Plan(batch_seconds=0.25)  # many workers: large refutations are split too (more work, no task holds much
# of it), and the probes of a set are batched into tasks of about 0.25 s
PLANS = {"coarse": COARSE, "fine": FINE}
FINE_FROM_SLOTS = 8
# a probe task is first tried in the driver for this long: most refutations end within a millisecond, far
# less than a round trip to a worker (on Dask about 5 ms of scheduler and client time per task)
QUICK_SECONDS = 0.004
QUICK_MAX_SIZE = 600  # larger sets are not tried: one scan of their probes can outlast the timer (it is checked
# between subproblems), and a driver stuck in it would not answer Ctrl-C
PROGRESS_SECONDS = 0.2  # how often the progress callback is given the share settled
MAX_BATCH = 64  # probes in one batch at most
BATCH_AFTER = 4  # probe tasks of a set measured before its probes are batched (until then, one per task)
MAX_ATTEMPTS = 3  # a task lost this many times stops the solve: a dead worker is bad luck, three are a cause


class Deadline:
    """Stops the compiled search of a quick task at its deadline (control[K_STOP]): one polling thread for
    a whole solve, where a threading.Timer per task cost more than most of the tasks (a thread start each).
    The driver only assigns `armed`; it takes no lock a Ctrl-C could leave held."""

    def __init__(self) -> None:
        self.armed: tuple[np.ndarray, float] | None = None
        self.open = True
        threading.Thread(target=self._watch, daemon=True, name="quick-deadline").start()

    def arm(self, control: np.ndarray, seconds: float) -> None:
        self.armed = (control, time.perf_counter() + seconds)

    def disarm(self) -> None:
        self.armed = None

    def close(self) -> None:
        self.open = False

    def _watch(self) -> None:
        while self.open:
            time.sleep(0.001)  # the search checks control between nodes: a millisecond late is fine
            armed = self.armed
            if armed is not None and time.perf_counter() >= armed[1]:
                armed[0][exact.K_STOP] = 1


def plan_for(workers: int) -> Plan:
    """The granularity that suits this many workers."""
    return FINE if workers >= FINE_FROM_SLOTS else COARSE


class SetNode:
    """The value of S at depth d, wanted below a cut-off that only decreases."""

    def __init__(
        self,
        drv: "Driver",
        S: np.ndarray,
        d: int,
        history: np.ndarray,
        b: int,
        parent: "ProbeNode | None",
        path: tuple,
        guides: Sequence[dict] = (),
    ):
        self.drv, self.S, self.d, self.history, self.b = drv, S, d, history, b
        self.parent, self.path = parent, path
        self.guides = list(guides)  # complete trees for S known beforehand (subtrees of the driver's guides)
        self.guide_cut = INF  # the cheapest guide's value + 1: no probe past that value can be the best
        self.first = 0  # the position of the probe tried first
        self.fail_lb = INF  # the least bound of the probes left out of the list (a refuted set's value is no higher)
        # a part of a probe that only has to be refuted is expanded again only when it is large: small
        # ones are one task each, which is what keeps the number of tasks (and their overhead) in check
        self.refuting: bool = parent is not None and (parent.pos != parent.owner.first or parent.owner.refuting)
        self.n = len(S)
        self.key = set_key(drv.spec.costs.key, d, S)
        self.lb = drv.engine.level_fill(self.n, b, d)  # proven lower bound
        self.value: int | None = None  # exact value once known
        self.tree: dict | None = None
        self.done = False
        self.cancelled = False
        self.handle: int | None = None  # the leaf task, when it is one
        self.seconds = 0.0
        # expansion
        self.probes: list[tuple[int, int, int]] | None = None  # (probe, bound, sum of squares), canonical order
        self.b_here = b
        self.launched: dict[int, ProbeNode] = {}
        self.proven: dict[int, int] = {}  # probe position -> proven lower bound (refuted)
        # what check() needs without a walk of every probe (a set may have thousands): the launched probes
        # not finished yet, and the first position that is neither launched nor proven
        self.pending: set[int] = set()
        self.first_open = 0
        self.incumbent = INF
        self.incumbent_pos = -1
        self.phase_two = False
        self.probe_tasks, self.probe_seconds = 0, 0.0  # this set's probe tasks finished by workers, and their time

    # -- bounds -------------------------------------------------------------------------------------
    def cutoff(self) -> int:
        return self.drv.root_beta if self.parent is None else self.parent.budget(self)

    def cutoff_for(self, pos: int, cut: int | None = None) -> int:
        """A probe at `pos` must beat the incumbent (or equal it when it comes earlier in the order); `cut`: this
        set's cut-off when the caller has it already (it walks up to the root)."""
        inc = self.incumbent + (1 if pos < self.incumbent_pos else 0) if self.incumbent < INF else INF
        return min(self.cutoff() if cut is None else cut, inc, self.guide_cut)

    def bound(self) -> int:
        return self.value if self.value is not None else self.lb

    def progress(self) -> float:
        """Secrets of this set whose value is settled, as a share of its work. Each question still worth searching
        counts alike, credited by its own progress while it runs; one refuted by its listed bound cost nothing and
        counts nothing. (Crediting half to the first question overstated it: on bulls 5 of 9 the first question of a
        part of 2520 secrets took 203 worker-seconds, the refutations of the others about 15,000.)"""
        if self.done:
            return float(self.n)
        if self.probes is None:
            return 0.0
        cut = self.cutoff()  # once, not for every probe
        units, settled = 0, 0.0
        for pos, (_, bound, _) in enumerate(self.probes):
            node = self.launched.get(pos)
            if node is not None:
                units += 1
                settled += 1.0 if node.done else min(1.0, node.progress() / self.n)
            elif pos not in self.proven and bound < self.cutoff_for(pos, cut):
                units += 1  # still to search
        return self.n * settled / units if units else 0.0

    # -- life ---------------------------------------------------------------------------------------
    def bound_cheaply(self) -> None:
        """The engine's cheap bound (transposition table, level filling, candidate scan); exact sets resolve now."""
        drv = self.drv
        stored = drv.stored(self.key, self.S, self.d)
        if stored is not None:
            if stored.exact:
                self.value, self.tree, self.done, self.lb = stored.value, stored.tree, True, stored.value
                drv.resolved(self)
                return
            self.lb = max(self.lb, stored.value)
        e = drv.engine
        if self.n <= 2:
            value = e.trivial(self.n, self.d)
        else:
            value, probe = e.bound_set(self.S, self.d, self.b)
            if probe < 0:
                self.lb = max(self.lb, value)
                return
        if value >= INF:
            self.lb = INF
            return
        self.value, self.done, self.lb = value, True, value
        self.tree = e.extract(self.S, self.d, value, self.history, self.b)
        drv.resolved(self)

    def start(self) -> None:
        drv = self.drv
        if self.cancelled or self.done:
            return
        stored = drv.stored(self.key, self.S, self.d)
        if stored is not None:
            if stored.exact:
                return self.resolve(stored.value, stored.tree, 0.0)
            self.lb = max(self.lb, stored.value)
        if self.n <= 2:
            value = drv.engine.trivial(self.n, self.d)
            return self.resolve(value, drv.engine.extract(self.S, self.d, value, self.history, self.b), 0.0)
        if self.lb >= self.cutoff():
            return self.fail(self.lb)
        if drv.plan.expands(self.n, self.d) and (not self.refuting or self.n > drv.plan.split_refuting):
            return self.expand()
        drv.submit(self)

    def expand(self) -> None:
        """List the probes worth trying, in the canonical order, and start the one the cheapest guide asks (the
        first in the order when there is none)."""
        drv = self.drv
        guess = self.follow_guides()
        cut = self.cutoff_for(0)  # no incumbent yet: the set's cut-off, capped by its guide
        probes, lb, sq, b_here, self.fail_lb = drv.probe_list(self.S, self.d, self.history, self.b, cut)
        self.b_here = b_here
        self.probes = [(int(p), int(v), int(s)) for p, v, s in zip(probes, lb, sq)]
        if self.probes:
            self.lb = max(self.lb, min(v for _, v, _ in self.probes))
        if not self.probes:
            return self.fail(max(self.lb, cut))
        self.first = next((pos for pos, (p, _, _) in enumerate(self.probes) if p == guess), 0)
        drv.push(self.path + (self.first,), self, self.first)

    def follow_guides(self) -> int:
        """Price the guides here: the cheapest is a value S can reach, so no probe need be searched past it
        (`guide_cut`), and its question is likely the best, so it is tried first. Its code, or -1 when no guide
        is complete within the objective's depth. (The canonical tree does not change: ties still go to the
        earlier probe in the order.)"""
        if not self.guides:
            return -1
        gt = self.drv.engine.gt
        value, tree = merged_tree(gt, self.drv.engine.cost, self.S, self.d, self.guides)
        if value >= INF:
            self.guides = []
            return -1
        self.guides, self.guide_cut = [tree], value + 1
        return gt.probe_of(tree)

    def launch(self, positions: list[int]) -> None:
        """Launch these probes (consecutive in the order): the first of a set, and any of a set too large
        for one task, split into its parts; the others a task each, sent as one batch task when several."""
        assert self.probes is not None  # listed by `expand`, which pushes the probes launched
        members = []
        for pos in positions:
            if self.done or self.cancelled:
                return
            if pos in self.launched or pos in self.proven:
                continue
            probe, bound, _ = self.probes[pos]
            if bound >= self.cutoff_for(pos):
                self.proven[pos] = bound
                continue
            node = self.launched[pos] = ProbeNode(self, pos, probe)
            self.pending.add(pos)
            if not self.whole_probes(pos):
                node.start()  # the likely winner (its parts must be solved anyway), or a large set
            elif not node.from_store():
                members.append(node)  # most others are refuted fast by the engine's own ordering
        if len(members) > 1:
            self.drv.submit(ProbeBatch(members))
        elif members:
            self.drv.submit(members[0])
        self.check()

    def whole_probes(self, pos: int) -> bool:
        """Whether the probe at `pos` runs as one task (else the driver splits it into its parts), for a limited
        time (`whole_limit`) when the set is larger than split_probes."""
        return pos != self.first and (self.n <= self.drv.plan.split_probes or self.whole_limit() > 0)

    def whole_limit(self) -> float:
        """How long one of its probes may run as one task before the driver splits it (0: no limit)."""
        plan = self.drv.plan
        return plan.whole_seconds if plan.split_probes < self.n <= plan.whole_max else 0.0

    def batch_size(self) -> int:
        """How many probe tasks of this set to send as one, from what its probe tasks took so far."""
        target = self.drv.plan.batch_seconds
        if target <= 0 or self.probe_tasks < BATCH_AFTER or self.whole_limit() > 0:
            return 1
        return max(1, min(MAX_BATCH, int(target * self.probe_tasks / max(self.probe_seconds, 1e-6))))

    def probe_finished(self, pos: int, value: int, exact_value: bool) -> None:
        """A probe's outcome: its exact value, or a proven lower bound."""
        self.pending.discard(pos)
        if self.done:
            return
        if exact_value and (value < self.incumbent or (value == self.incumbent and pos < self.incumbent_pos)):
            if self.incumbent_pos >= 0:
                self.proven[self.incumbent_pos] = self.incumbent  # the former incumbent's exact value
            self.incumbent, self.incumbent_pos = value, pos
            self.drv.cutoffs_changed = True
        elif not exact_value or value > self.incumbent or pos > self.incumbent_pos:
            self.proven[pos] = value
        if not self.phase_two:
            self.phase_two = True
            assert self.probes is not None  # a probe of this set finished: they were listed
            for later in range(len(self.probes)):
                if later != self.first:
                    self.drv.push(self.path + (later,), self, later)
        self.check()

    def check(self) -> None:
        """Resolve once no probe can still change the answer."""
        if self.done or not self.phase_two:
            return
        if self.pending:
            return
        assert self.probes is not None  # phase two comes after the probes were listed
        for pos in range(self.first_open, len(self.probes)):
            if pos in self.launched or pos in self.proven:
                continue
            self.first_open = pos
            if self.probes[pos][1] < self.cutoff_for(pos):
                return  # still queued: it will run
            self.proven[pos] = self.probes[pos][1]
        self.first_open = len(self.probes)
        lower = min([self.incumbent, self.fail_lb] + list(self.proven.values()))
        if (
            self.incumbent < INF
            and lower >= self.incumbent
            and all(v > self.incumbent or pos > self.incumbent_pos for pos, v in self.proven.items())
        ):
            winner = self.launched[self.incumbent_pos]
            tree = (
                winner.tree
                if winner.tree is not None
                else tree_node(
                    self.drv.engine.gt.code_str(winner.probe),
                    {answer: cast(dict, part.tree) for answer, part in sorted(winner.answers.items())},
                )
            )  # exact parts
            return self.resolve(self.incumbent, tree, sum(p.seconds() for p in self.launched.values()))
        if self.incumbent >= INF and self.guide_cut < INF and lower >= self.guide_cut:
            raise RuntimeError(
                f"a tree known beforehand reaches {self.guide_cut - 1} at {self.path}, yet the search "
                "refuted every question there: a bug in the engine's bounds or in that tree's pricing"
            )
        self.fail(max(lower, self.lb))

    def resolve(self, value: int, tree: dict | None, seconds: float) -> None:
        self.value, self.tree, self.done = value, tree, True
        self.lb = max(self.lb, value)
        self.seconds = seconds
        self.drv.resolved(self)
        if self.parent is not None:
            self.parent.part_finished(self)

    def fail(self, lb: int) -> None:
        self.lb = max(self.lb, lb)
        self.done = True
        self.drv.resolved(self)
        if self.parent is not None:
            self.parent.part_finished(self)

    def cancel(self) -> None:
        if self.done or self.cancelled:
            return
        self.cancelled = True
        if self.handle is not None:
            self.drv.cancel(self)
        for probe in self.launched.values():
            probe.cancel()


class ProbeNode:
    """One probe of a set: hit + the sum of its parts' values, each part a SetNode; or one task that
    evaluates the probe whole (`submit`)."""

    def __init__(self, owner: SetNode, pos: int, probe: int):
        self.owner, self.pos, self.probe = owner, pos, probe
        self.done = False
        self.parts: list[SetNode] = []
        self.answers: dict[str, SetNode] = {}
        self.hit = 0
        self.handle: int | None = None
        self.tree: dict | None = None
        self.task_seconds = 0.0
        assert owner.probes is not None  # a probe is launched from the set's list
        self.lb = owner.probes[pos][1]
        self.key = owner.key + f"/{probe}"
        self.n, self.d, self.path = owner.n, owner.d, owner.path + (pos,)
        self.cancelled = False
        self.batch: ProbeBatch | None = None  # the batch task that runs it, if any

    def from_store(self) -> bool:
        """Settled by what the store holds (exact, or a bound at the cut-off): then finished here."""
        drv, o = self.owner.drv, self.owner
        stored = drv.stored(self.key, o.S, o.d, self.probe)
        if stored is not None:
            if stored.exact:
                self.task_finished(Result(self.key, stored.value, True, stored.tree, 0.0, "store"))
                return True
            self.lb = max(self.lb, stored.value)
            if self.lb >= self.cutoff():
                self.task_finished(Result(self.key, self.lb, False, None, 0.0, "store"))
                return True
        return False

    def task(self, beta: int) -> Task:
        o = self.owner
        return Task(self.key, o.S, o.d, o.history, o.b, int(beta), probe=self.probe, seconds=o.whole_limit())

    def timed_out(self) -> None:
        """Its task ran out of its time whole: split it into its parts instead."""
        self.handle = None
        self.start()

    def task_finished(self, r: Result) -> None:
        """The probe task's outcome: exact value (and subtree), or a lower bound."""
        self.task_seconds = r.seconds
        self.done = True
        if r.worker != "store":
            self.owner.probe_tasks += 1
            self.owner.probe_seconds += r.seconds
        store = self.owner.drv.store
        if store is not None and r.worker != "store" and (r.exact or r.value > 0):
            store.put(self.key, self.n, self.d, r.value, r.exact, r.tree, r.seconds)
        if r.exact:
            self.tree = r.tree
            self.owner.probe_finished(self.pos, r.value, True)
        else:
            self.lb = max(self.lb, r.value)
            self.owner.probe_finished(self.pos, r.value, False)

    def start(self) -> None:
        owner, drv = self.owner, self.owner.drv
        gt = drv.engine.gt
        members, starts = split(gt.table, owner.S, self.probe, len(gt.answers))
        self.hit = int(drv.engine.bounds[0][owner.d + 1]) if starts[gt.win + 1] > starts[gt.win] else 0
        history = np.append(owner.history, self.probe).astype(np.int64)
        sizes = [(starts[c + 1] - starts[c], c) for c in range(len(gt.answers)) if c != gt.win]
        sign = 1 if self.solved_whole() else -1
        code = gt.code_str(self.probe)
        guides = [t for t in owner.guides if t["guess"] == code]  # complete for S: a child for every part
        for i, (m, c) in enumerate(sorted(sizes, key=lambda x: (sign * x[0], x[1]))):
            if m == 0:
                continue
            answer = gt.answer_str(c)
            part = SetNode(
                drv,
                members[starts[c] : starts[c + 1]].copy(),
                owner.d + 1,
                history,
                owner.b_here,
                self,
                owner.path + (self.pos, i),
                [t["next"][answer] for t in guides],
            )
            self.parts.append(part)
            self.answers[answer] = part
        # as the engine does: bound every part cheaply first (often exactly), and drop the probe if that refutes it
        for part in self.parts:
            if self.total() >= self.cutoff():
                break
            part.bound_cheaply()
        if self.total() >= self.cutoff() or any(p.done and p.value is None for p in self.parts):
            self.done = True
            return owner.probe_finished(self.pos, max(self.total(), self.cutoff()), False)
        if all(p.value is not None for p in self.parts):
            self.done = True
            return owner.probe_finished(self.pos, self.total(), True)
        for part in self.parts:
            if part.value is None:
                drv.push(part.path, part)

    def solved_whole(self) -> bool:
        """Whether every part must be solved exactly whatever happens: the only question of a root (bulls: every first
        question is alike). Its parts then go smallest first, so that an interrupted run has proven the most of them
        (each exact in the store, where the lookahead bound reads it); elsewhere largest first, which refutes a probe
        soonest."""
        assert self.owner.probes is not None
        return self.owner.parent is None and len(self.owner.probes) == 1

    def progress(self) -> float:
        """Settled secrets of its parts. The parts of a root's only question, solved smallest first, are weighted by
        the square of their size instead, a guess at the work they hold (on bulls 5 of 9 the parts of 10 to 1440
        secrets, a third of the game, took 20 minutes on 2 cores, and one of 2520 took more than an hour alone):
        counted by secrets, the share settled would rise far faster than the work done."""
        if not self.solved_whole():
            return sum(p.progress() for p in self.parts)
        weight = sum(p.n**2 for p in self.parts)
        return self.owner.n * sum(p.progress() * p.n for p in self.parts) / weight if weight else 0.0

    def cutoff(self) -> int:
        return self.owner.cutoff_for(self.pos)

    def proven(self) -> int:
        """What is established about this probe so far."""
        if self.handle is not None or self.tree is not None:
            return self.lb
        return self.hit + sum(_proven(p) for p in self.parts) if self.parts else self.lb

    def total(self) -> int:
        return self.hit + sum(p.bound() for p in self.parts)

    def budget(self, part: SetNode) -> int:
        cut = self.cutoff()
        return cut if cut >= INF else cut - (self.total() - part.bound())

    def seconds(self) -> float:
        return self.task_seconds + sum(p.seconds for p in self.parts)

    def part_finished(self, part: SetNode) -> None:
        if self.done:
            return
        self.owner.drv.cutoffs_changed = True
        total = self.total()
        if all(p.value is not None for p in self.parts):
            self.done = True
            return self.owner.probe_finished(self.pos, total, True)
        if total >= self.cutoff() or (part.value is None and part.done):
            self.done = True
            self.cancel()
            return self.owner.probe_finished(self.pos, max(total, self.cutoff()), False)

    def cancel(self) -> None:
        if self.handle is not None and not self.done:
            self.cancelled = True
            if self.batch is not None:
                self.batch.member_cancelled()
            else:
                self.owner.drv.cancel(self)
        for part in self.parts:
            if not part.done:
                part.cancel()


class ProbeBatch:
    """Consecutive probes of one set run as one task (`worker.run_batch`): with many workers, most
    refutations take less than a task's round trip. Stopped only once none of its probes is wanted."""

    def __init__(self, members: list[ProbeNode]):
        self.members = members
        self.owner = members[0].owner
        self.key, self.n, self.d, self.path = self.owner.key, self.owner.n, self.owner.d, members[0].path
        self.handle: int | None = None
        self.cancelled = False
        for m in members:
            m.batch = self

    @property
    def done(self) -> bool:
        return all(m.done for m in self.members)

    def cutoff(self) -> int:
        """The loosest of its probes' cut-offs (one cut-off reaches the task; the worker tightens it)."""
        return max(m.cutoff() for m in self.members)

    def task(self, beta: int) -> Task:
        o = self.owner
        return Task(o.key, o.S, o.d, o.history, o.b, int(beta), probes=tuple(m.probe for m in self.members))

    def cancel(self) -> None:
        if self.handle is not None and not self.cancelled:
            self.cancelled = True
            self.owner.drv.cancel(self)

    def member_cancelled(self) -> None:
        if all(m.cancelled or m.done for m in self.members):
            self.cancel()


@dataclass(order=True)
class Ready:
    """Work ready to start, taken in depth-first order of its place in the search (`path`), then as it came: a set
    to start (`probe` -1), or the probe at position `probe` of the set to launch; `trigger` is the task whose
    completion released it."""

    path: tuple
    order: int
    node: SetNode = field(compare=False)
    probe: int = field(compare=False)
    trigger: int | None = field(compare=False)


@dataclass
class Outcome:
    """What the driver proved: the exact value and tree, or a lower bound (and how it ran)."""

    value: int
    exact: bool
    tree: dict | None
    lower_bound: int
    tasks: int
    reused: int
    worker_seconds: float
    lost: int


class Driver:
    def __init__(
        self,
        engine: Engine,
        spec: Spec,
        executor: Executor,
        store: Store | None = None,
        plan: Plan = Plan(),
        log: Callable[[dict], None] | None = None,
        progress: Callable[[float], None] | None = None,
    ):
        self.engine, self.spec, self.executor, self.store, self.plan = engine, spec, executor, store, plan
        self.log, self.progress = log, progress
        self.ready: list[Ready] = []
        self._order = itertools.count()
        self.running: dict[int, SetNode | ProbeNode | ProbeBatch] = {}  # handle -> what the task runs
        self.sent_cutoff: dict[int, int] = {}
        self.cutoffs_changed = False
        self.tasks = 0
        self.counters = np.zeros(exact.N_COUNTERS, dtype=np.int64)
        self.reused = 0
        self.lost = 0
        self.attempts: dict[int, int] = {}  # id(node) -> times its task was lost
        self.quick_done: list[Finished] = []  # tasks finished in the driver itself, not yet handled
        self.deadline: Deadline | None = None  # stops quick tasks (see quick), started at the first
        self._quick_ids = itertools.count(1)
        self.worker_seconds = 0.0
        self.root_beta = INF
        self.started = time.perf_counter()
        self.event_of: dict[int, int] = {}  # handle -> task number, for the log
        self.trigger: int | None = None  # the task whose completion is being handled (released what is pushed now)
        self.after: dict[int, int | None] = {}  # handle -> the task that released it

    def stored(self, key: str, S: np.ndarray, d: int, probe: int | None = None) -> Stored | None:
        """What the store holds for a set (or one of its probes), checked against the game; counted as reused."""
        if self.store is None:
            return None
        e = self.engine
        stored = stored_result(self.store, key, e.gt, e.cost, S, d, self.spec.consistent_only, probe)
        if stored is not None:
            self.reused += 1
        return stored

    def push(self, path: tuple, node: SetNode, probe: int = -1) -> None:
        """Ready work: a set to start, or (`probe` >= 0) the probe at that position of the set to launch; it
        remembers the task whose completion released it (for the log's dependencies)."""
        heapq.heappush(self.ready, Ready(path, next(self._order), node, probe, self.trigger))

    def launch_probes(self, owner: SetNode, pos: int) -> None:
        """Launch the probe at `pos`, with the probes queued right after it when the set batches them."""
        size = owner.batch_size() if owner.whole_probes(pos) else 1
        positions = [pos]
        while len(positions) < size and self.ready:  # the set's next probes come next in depth-first order
            if self.ready[0].probe < 0 or self.ready[0].node is not owner:
                break
            positions.append(heapq.heappop(self.ready).probe)
        owner.launch(positions)

    def probe_list(self, S, d, history, b, beta):
        """Canonical probes with a bound below beta, in the canonical order, the set's branching, and the least bound
        of the probes left out."""
        probes, lb, sq, b_here, fail = self.engine.probe_bounds(S, d, b, history, beta)
        order = np.lexsort((sq, lb))  # stable: equal (bound, squares) keep code order
        return probes[order], lb[order], sq[order], b_here, fail

    # -- tasks -------------------------------------------------------------------------------------
    def submit(self, node) -> None:
        """Run a set (SetNode), a probe (ProbeNode) or a batch of probes (ProbeBatch) as one task."""
        beta = node.cutoff()
        if isinstance(node, (ProbeNode, ProbeBatch)):
            task = node.task(beta)
        else:
            task = Task(node.key, node.S, node.d, node.history, node.b, int(beta))
        quick = self.plan.quick and self.executor.remote and isinstance(node, ProbeNode) and node.n <= QUICK_MAX_SIZE
        result = self.quick(task) if quick else None
        if result is not None:  # done here: handled by the loop like a worker's result, under its own handle
            node.handle = -next(self._quick_ids)
            self.quick_done.append(Finished(node.handle, result))
        else:
            node.handle = self.executor.submit(self.spec, task)
        if isinstance(node, ProbeBatch):
            for m in node.members:
                m.handle = node.handle
        self.running[node.handle] = node
        self.sent_cutoff[node.handle] = int(beta)
        self.tasks += 1
        self.event_of[node.handle] = self.tasks
        self.after[node.handle] = self.trigger

    def quick(self, task: Task) -> Result | None:
        """The task's result if this process finds it within QUICK_SECONDS, else None (then it goes out)."""
        control = np.array([0, task.beta], dtype=np.int64)
        if self.deadline is None:
            self.deadline = Deadline()
        self.deadline.arm(control, QUICK_SECONDS)
        try:
            result = run_on(self.engine, task, control, threaded=False)
        finally:
            self.deadline.disarm()
        return None if result.stopped else result

    def cancel(self, node: SetNode | ProbeNode | ProbeBatch) -> None:
        if node.handle in self.running and node.handle >= 0:
            self.executor.cancel(node.handle)

    def finished(self, f: Finished) -> None:
        node = self.running.pop(f.handle, None)
        self.sent_cutoff.pop(f.handle, None)
        after = self.after.pop(f.handle, None)
        if node is None:
            return
        self.trigger = self.event_of.get(f.handle)
        if f.result is None:  # the worker died: run it again, but not forever
            self.lost += 1
            attempts = self.attempts[id(node)] = self.attempts.get(id(node), 0) + 1
            if attempts >= MAX_ATTEMPTS:
                raise TaskLost(
                    f"a task was lost {attempts} times, so the workers cannot run it ({lost_reason(f.error)})"
                )
            node.handle = None
            if not node.cancelled:
                self.submit(node)
            return
        r: Result = f.result
        self.worker_seconds += r.seconds
        if r.counters:
            self.counters += np.asarray(r.counters, dtype=np.int64)
        if isinstance(node, ProbeBatch):
            return self.batch_finished(node, f.handle, r, after)
        if self.log:
            self.log_task(f.handle, after, node, r)
        if r.timed_out and isinstance(node, ProbeNode) and not node.cancelled:
            return node.timed_out()
        if r.stopped or node.cancelled:
            return
        if isinstance(node, ProbeNode):
            node.handle = None
            node.task_finished(r)
        elif r.exact:
            node.resolve(r.value, r.tree, r.seconds)
        else:
            node.fail(r.value)

    def batch_finished(self, batch: ProbeBatch, handle: int, r: Result, after: int | None) -> None:
        """A batch's outcome: each probe's, in order (the log has a line per probe, all with the batch's number)."""
        if self.log:
            for m, mr in zip(batch.members, r.batch) if r.batch else [(batch, r)]:
                self.log_task(handle, after, m, mr, stopped=batch.cancelled)
        if r.stopped or batch.cancelled:
            return
        for m, mr in zip(batch.members, r.batch):
            m.handle = None
            if not m.cancelled:
                m.task_finished(mr)

    def log_task(self, handle: int, after: int | None, node, r: Result, stopped: bool = False) -> None:
        assert self.log is not None  # called only when there is a log
        self.log(
            {
                "task": self.event_of.get(handle),
                "after": after,
                "key": node.key,
                "size": node.n,
                "depth": node.d,
                "probe": isinstance(node, (ProbeNode, ProbeBatch)),
                "path": list(node.path),
                "seconds": round(r.seconds, 4),
                "worker": r.worker,
                "value": r.value,
                "exact": r.exact,
                "stopped": r.stopped or node.cancelled or stopped,
                "finished": round(time.perf_counter() - self.started, 4),
            }
        )

    def resolved(self, node: SetNode) -> None:
        if self.store is not None and not node.cancelled and (node.value is not None or node.lb < INF):
            if node.value is not None:
                self.store.put(node.key, node.n, node.d, node.value, True, node.tree, node.seconds)
            elif node.lb > 0:
                self.store.put(node.key, node.n, node.d, node.lb, False, None, node.seconds)

    def keep_proven(self) -> None:
        """On an interruption, store what each unfinished set split here has proven so far (probes refuted, parts
        solved): a run resumed from the store alone then starts from those bounds, never reporting a weaker one."""
        assert self.store is not None  # called only with a store
        stack = [self.root]
        while stack:
            node = stack.pop()
            if node.done or node.cancelled or node.probes is None:
                continue
            bound = _proven(node)
            if 0 < bound < INF:
                self.store.put(
                    node.key, node.n, node.d, bound, False, None, sum(p.seconds() for p in node.launched.values())
                )
            for probe in node.launched.values():
                stack.extend(probe.parts)

    def push_cutoffs(self) -> None:
        """Tell running tasks about lower cut-offs."""
        if not self.cutoffs_changed:
            return
        self.cutoffs_changed = False
        for handle, node in list(self.running.items()):
            if node.cancelled or handle < 0:
                continue
            owner_done = (
                node.owner.done
                if isinstance(node, (ProbeNode, ProbeBatch))
                else (node.parent is not None and node.parent.done)
            )
            if owner_done and not node.done:
                node.cancel()
                continue
            beta = node.cutoff()
            if beta < self.sent_cutoff.get(handle, INF):
                self.sent_cutoff[handle] = int(beta)
                self.executor.set_cutoff(handle, int(beta))

    # -- the loop ----------------------------------------------------------------------------------
    def solve(self, S: np.ndarray, beta: int = INF, guides: Sequence[dict] = ()) -> Outcome:
        """The value of S below beta; `guides` are complete trees for S known beforehand (see SetNode.follow_guides)."""
        e = self.engine
        self.root_beta = beta
        root = SetNode(self, S, 0, np.zeros(0, dtype=np.int64), e.root_branching, None, (), guides)
        self.root = root
        self.push((), root)
        next_report = 0.0
        try:
            while not root.done:
                while self.ready and self.executor.running() + len(self.quick_done) < self.executor.slots:
                    item = heapq.heappop(self.ready)
                    self.trigger = item.trigger
                    if item.probe < 0:
                        item.node.start()
                    else:
                        self.launch_probes(item.node, item.probe)
                self.push_cutoffs()
                if root.done:
                    break
                if not self.executor.running() and not self.quick_done:
                    if not self.ready:
                        raise RuntimeError("the search stalled (no task running, nothing ready)")
                    continue
                done, self.quick_done = self.quick_done, []
                for f in done + self.executor.done(0.0 if done else 0.2):
                    self.finished(f)
                self.push_cutoffs()
                if self.progress and time.perf_counter() >= next_report:  # a walk of the whole search: not per task
                    self.progress(root.progress())
                    next_report = time.perf_counter() + PROGRESS_SECONDS
        finally:
            if self.deadline is not None:
                self.deadline.close()
                self.deadline = None
            if self.store is not None:
                if not root.done:
                    self.keep_proven()
                self.store.commit()
        if self.progress:
            self.progress(root.progress())
        return Outcome(
            root.value if root.value is not None else root.lb,
            root.value is not None,
            root.tree,
            root.lb,
            self.tasks,
            self.reused,
            self.worker_seconds,
            self.lost,
        )

    def lower_bound(self) -> int:
        """What is proven about the root so far (for an interrupted run)."""
        return _proven(self.root)


def _proven(node: SetNode) -> int:
    """A lower bound of a set from what its search has established so far."""
    if node.value is not None:
        return node.value
    if node.probes is None:
        return node.lb
    bounds = []
    for pos, (_, bound, _) in enumerate(node.probes):
        if pos in node.proven:
            bounds.append(node.proven[pos])
        elif pos in node.launched:
            bounds.append(node.launched[pos].proven())
        else:
            bounds.append(bound)
    return max(node.lb, min(bounds + [node.fail_lb])) if bounds else node.lb
