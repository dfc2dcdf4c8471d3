"""Exact solving: the objectives as runs of the driver, on the executor and store the user chose.

`solve_game` proves an objective (minimum total, minimum worst case then total, minimum worst case
then fewest at it, minimum total within a depth) and returns the canonical optimal tree with a
proof record. An interrupted solve raises `interrupts.Interrupted` with what was proven so far
(`partial`: the lower bound, and the best complete tree found, resolved parts optimal, the rest greedy,
which `--partial` writes) and the interruption as its cause.
"""

from __future__ import annotations

import os
import platform
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import orjson

from ..engine import exact
from ..engine.exact import INF
from ..engine.searcher import Costs, Engine, Spec
from ..engine.table import GameTable
from ..files import FileError, quote
from ..interrupts import INTERRUPTIONS, Interrupted, signals_held
from ..rules import Game, GameError
from ..tree.format import TreeError, tree_node
from . import objectives
from .driver import NO_SPLIT, PLANS, Driver, Outcome, Plan, SetNode, plan_for
from .executors import DaskCluster, Executor, InProcess, LocalProcesses
from .known import Trusted, merged_tree, store_trust, tree_cost
from .store import Store, StoreRefused

OBJECTIVES = ("total", "worst", "worst-then-fewest", "win", "within")
MAX_SEARCH_DEPTH = 60
GREEDY_FALLBACKS = ("expected-size", "entropy")  # where an interrupted solve's best tree is not searched
# smaller games are solved in one process: splitting and workers cost more than they give. Measured on the
# idle 2-core machine (whole processes, 1 vs 2): bulls 4 of 10 4.5 s vs 4.7 s, Mastermind 4x8 4.7 s vs 5.8 s,
# bulls 4 of 10 with no leading zero 20.0 s vs 18.3 s
PARALLEL_MIN_CODES = 6000


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


def processes_for(game: Game, jobs: int | None) -> int:
    """How many processes a solve of `game` uses: `jobs` when given, else every core for games large
    enough to gain from them."""
    if jobs is not None:
        return max(1, jobs)
    return 1 if game.count() < PARALLEL_MIN_CODES else (os.cpu_count() or 1)


def describe(game: Game, objective: Objective, resources: Resources) -> str:
    """The line a solve starts with: what it proves, how, and where."""
    what = {
        "total": "minimum total",
        "worst": "minimum worst case, then minimum total",
        "worst-then-fewest": "minimum worst case, then fewest secrets at it",
        "win": "best response in a race",
        "within": "most secrets found",
    }[objective.name]
    if objective.max_depth is not None:
        what += f" within {objective.max_depth} questions"
    probes = "consistent probes only" if objective.consistent_only else "any probe"
    if resources.scheduler:
        where = f"Dask scheduler {resources.scheduler}"
    else:
        n = processes_for(game, resources.jobs)
        where = f"{n} process{'es' if n > 1 else ''}"
    return f"solve {game.spec}: {what}, {probes}, {game.count()} secrets, {where}"


@dataclass
class SolveReport:
    """What a solve proved, with the optimal tree.

    `proven` is deterministic; `run` holds what varies from run to run (time, executor, counters).
    """

    game: Game
    objective: str
    tree: dict | None
    proven: dict
    run: dict
    lines: list[str]


def check_proof(proven: dict, stats) -> None:
    """The tree to be written must show exactly the proven figures (RuntimeError: a bug, nothing is written)."""
    claims = []
    if "total" in proven:
        claims.append(("total", stats.total, proven["total"]))
    if "worst" in proven:
        claims.append(("worst case", stats.worst, proven["worst"]))
    if "max_depth" in proven:
        claims.append(("worst case within bound", stats.worst <= proven["max_depth"], True))
    if "fewest_at_worst" in proven:
        at_worst = stats.depth_counts[proven["worst"]] if len(stats.depth_counts) > proven["worst"] else 0
        claims.append(("secrets at the worst depth", at_worst, proven["fewest_at_worst"]))
    for what, measured, proved in claims:
        if measured != proved:
            raise RuntimeError(f"the tree's {what} is {measured}, the search proved {proved}")


@dataclass(frozen=True)
class Objective:
    """What a solve proves (`strategy solve --objective`): the least total (within `max_depth` questions if
    given), the least worst case then the least total or the fewest secrets at it, the most secrets found within
    `max_depth` questions, or the best response in a race against a tree of depth counts `against` (under the
    race's `rule` and, for the rule first, its `seat`); asking only codes that may be the secret with
    `consistent_only`. Checked when made: an option that does not apply is refused (GameError)."""

    name: str = "total"
    max_depth: int | None = None
    consistent_only: bool = False
    against: tuple[int, ...] | None = None
    rule: str | None = None
    seat: str | None = None

    def __post_init__(self) -> None:
        if self.name not in OBJECTIVES:
            raise GameError(f"unknown objective {self.name!r} (choose from {', '.join(OBJECTIVES)})")
        if self.max_depth is not None and self.name not in ("total", "within"):
            raise GameError("--max-depth applies to the total and within objectives only")
        if self.name == "within" and self.max_depth is None:
            raise GameError("the within objective needs --max-depth K (the most secrets found within K questions)")
        if self.name == "win" and self.against is None:
            raise GameError("the win objective needs --against TREE (the tree to beat)")
        for option, given in (
            ("--against", self.against is not None),
            ("--rule", self.rule is not None),
            ("--seat", self.seat is not None),
        ):
            if given and self.name != "win":
                raise GameError(f"{option} applies to the win objective only")
        if self.seat is not None and self.rule != "first":
            raise GameError("--seat applies to the rule first only (who asks first)")

    @property
    def label(self) -> str:
        """The objective as tree files name it: total, total-max-depth-D, worst, within-K, win-RULE[-SEAT]."""
        if self.name == "within":
            return f"within-{self.max_depth}"
        if self.name == "win":
            return self.race_costs().name
        return self.name if self.max_depth is None else f"{self.name}-max-depth-{self.max_depth}"

    def race_costs(self) -> Costs:
        assert self.against is not None
        return objectives.against(list(self.against), self.rule or "tie", self.seat or "first")


@dataclass(frozen=True)
class Resources:
    """Where and how a solve runs: `jobs` local worker processes (default: every core for games of
    PARALLEL_MIN_CODES or more) or a Dask `scheduler`; a `store` of finished subproblems to resume from; a `log`
    of tasks; the task `plan` (coarse or fine; see driver.Plan) and the transposition table's size in bits."""

    jobs: int | None = None
    scheduler: str | None = None
    store: str | None = None
    log: str | None = None
    plan: Plan | str | None = None
    tt_bits: int | None = None
    trust_store: bool = False  # the user vouches for the store: its rows are believed unsealed (the proof names it)


@dataclass
class Partial:
    """An interrupted solve: the proven lower bound and the best complete tree found (if any)."""

    objective: str
    costs: Costs
    lower_bound: int
    tree: dict | None
    progress: float = 0.0  # the progress bar's share of the search settled (a measure of work, not of value)
    lines: list[str] = field(default_factory=list)  # what the finished stages of the objective proved
    proven: dict = field(default_factory=dict)  # the same, as figures (e.g. the minimum worst case)
    relies_on: list[dict] = field(default_factory=list)  # trusted files its lower bound comes from


def tt_bits_for(size: int) -> int:
    """Transposition table slots (a power of two, 32 bytes each) for a game of `size` codes: bulls 4 of 9 and
    Mastermind 4x7 store well under a million sets and run about 5% faster on 2^21 slots than on 2^23 (fewer
    cache and TLB misses, 200 MB less to zero); the larger games keep 2^23 (256 MB)."""
    return 20 if size <= 1500 else 21 if size <= 4000 else 23


class Session:
    """The executor, store, log and progress bar shared by the runs of one solve."""

    def __init__(
        self,
        gt: GameTable,
        consistent_only: bool,
        resources: Resources,
        progress: bool,
        incumbents: Sequence[dict] = (),
        known_bounds: dict[str, Trusted] | None = None,
    ):
        self.gt = gt
        jobs, scheduler, store, log, plan, tt_bits = (
            resources.jobs,
            resources.scheduler,
            resources.store,
            resources.log,
            resources.plan,
            resources.tt_bits,
        )
        self.incumbents = list(incumbents)  # complete trees known beforehand: the best tree found is never worse
        self.known_bounds = dict(known_bounds or {})  # stage -> a lower bound taken from a trusted file
        self.relies_on: dict[str, Trusted] = {}  # trusted files a settled stage or the partial bound used
        self.consistent_only = consistent_only
        self.tt_bits = tt_bits if tt_bits is not None else tt_bits_for(gt.size)
        self.progress = progress
        self.store = Store(store, gt.game, consistent_only, resources.trust_store) if store else None
        self.stored_before = len(self.store) if self.store is not None else 0
        self._log = open(log, "a", buffering=1) if log else None
        self.run_id = f"{os.getpid()}-{int(time.time())}"
        self.executor: Executor
        if scheduler:
            self.executor = DaskCluster(scheduler)
        elif processes_for(gt.game, jobs) > 1:
            self.executor = LocalProcesses(processes_for(gt.game, jobs))
        else:
            self.executor = InProcess()
        parallel = self.executor.workers > 1 or scheduler is not None
        if isinstance(plan, str):
            plan = PLANS[plan]
        self.plan = (
            plan
            if plan is not None
            else (plan_for(self.executor.workers) if parallel or self.store is not None else NO_SPLIT)
        )
        self.plan_name = next(
            (k for k, v in PLANS.items() if v == self.plan), "one task" if self.plan == NO_SPLIT else "custom"
        )
        self.tasks = self.reused = self.lost = 0
        self.executor_lost = 0  # workers whose tasks the executor ran again itself (see Executor.lost_workers)
        self.worker_seconds = 0.0
        self.counters = np.zeros(exact.N_COUNTERS, dtype=np.int64)
        self.driver: Driver | None = None
        self.phase = ""
        self.last_tree: dict | None = None  # the tree of the last finished stage (a staged objective's incumbent)
        self.settled: list[str] = []  # stages a known tree settled without a search (see run)

    def start_line(self) -> str | None:
        if self.store is None:
            return None
        return f"store {self.store.path!r}: {self.stored_before} subproblems already solved"

    def log(self, entry: dict) -> None:
        if self._log:
            try:
                self._log.write(orjson.dumps({"run": self.run_id, "phase": self.phase, **entry}).decode() + "\n")
            except OSError as e:
                raise self._log_failed(e) from None

    def _log_failed(self, e: OSError) -> FileError:
        assert self._log is not None  # only a write to the log or its close fails
        return FileError(f"cannot write the log {quote(self._log.name)}: {e.strerror or e}")

    def known_bound(self, stage: str) -> tuple[int, Trusted | None]:
        """A lower bound on this stage that holds before its search, and the trusted file it relies on (None
        when the game alone proves it): a trusted file's bound on the stage, or on the least total for a total
        within a depth (never below it); a fewest-at-D stage runs once no tree within D-1 exists, so some secret
        needs all D questions."""
        own = (1 if stage.startswith("fewest-at-") else 0, None)
        given = [
            self.known_bounds[s]
            for s in (stage, "total")
            if s in self.known_bounds and (s == stage or stage.startswith("total"))
        ]
        return max([own, *((t.value, t) for t in given)], key=lambda b: b[0])

    def run(self, costs: Costs, beta: int = INF, label: str = "") -> Outcome:
        """Prove the value of the whole game under `costs` if it is below beta.

        A known tree (an incumbent, or the last stage's) that meets the stage's known bound settles it
        with no search (e.g. a proven least-total tree within D questions is a least total within D);
        otherwise the cheapest one is the search's first cut-off (anything not at least as good is cut), and
        they guide the driver: at each set it splits, their cheapest subtree's question is tried first."""
        from tqdm import tqdm

        known = [
            (tree_cost(self.gt, t, costs), i, t)
            for i, t in enumerate([*self.incumbents, self.last_tree])
            if t is not None
        ]
        cost, _, tree = min(known, key=lambda k: k[:2]) if known else (INF, 0, None)
        bound, source = self.known_bound(costs.name)
        check_claim(source, bound, cost, "a given tree costs")
        if cost < INF:
            if cost <= bound:
                self.settled.append(costs.name)
                if source is not None:
                    self.relies_on.update((t.sha256, t) for t in source.chain())
                self.last_tree = tree
                return Outcome(cost, True, tree, cost, 0, 0, 0.0, 0)
            beta = min(beta, cost + 1)
        spec = Spec(self.gt.game, costs, self.consistent_only, self.tt_bits)
        engine = Engine(self.gt, spec)
        self.phase = costs.name
        bar = tqdm(
            total=self.gt.size,
            unit="secret",
            delay=0.5,
            smoothing=0.0,
            disable=not self.progress,
            desc=label or costs.name,
            leave=False,
        )

        def advance(settled: float) -> None:  # the bar never goes back
            if settled > bar.n:
                bar.update(int(settled) - bar.n)

        self.driver = Driver(
            engine,
            spec,
            self.executor,
            self.store,
            self.plan,
            self.log if self._log else None,
            advance if self.progress else None,
        )
        try:
            out = self.driver.solve(np.arange(self.gt.size, dtype=np.int32), beta, [t for _, _, t in known])
        finally:
            bar.close()
            d = self.driver
            self.tasks += d.tasks
            self.reused += d.reused
            self.lost += d.lost
            self.worker_seconds += d.worker_seconds
            self.counters += d.counters
        if out.exact:
            check_claim(source, bound, out.value, "the search found")
        if out.tree is not None:
            self.last_tree = out.tree
        return out

    def partial(self, objective: str) -> Partial | None:
        """What the interrupted run had proven, with the best complete tree it can assemble."""
        d = self.driver
        if d is None or not hasattr(d, "root"):
            return None
        stage = d.spec.costs.name
        own, (known, source) = d.lower_bound(), self.known_bound(stage)
        lb = max(own, known)
        relies_on = [
            *self.relies_on.values(),
            *(source.chain() if known > own and source is not None else []),
            *store_trust(self.store),
        ]
        # in a later stage of a staged objective, the previous stage's tree keeps within the depth this stage
        # must respect; a tree known beforehand (an earlier run's, the consistent-only optimum) can be better
        # than the search's line at any node, and its subtrees are taken where they are
        tree = best_tree(d.root, d.engine, [t for t in (self.last_tree, *self.incumbents) if t is not None])
        if d.root.tree is None and d.root.probes is not None and d.root.launched:
            # early on, a greedy tree of the whole game may still be the better one
            greedy = cheapest_greedy(d.engine, d.root.S, d.root.history, d.root.d)
            tree = merged_tree(self.gt, d.engine.cost, d.root.S, 0, [tree, greedy])[1]  # ties keep the search's
        return Partial(
            objective,
            d.spec.costs,
            lb,
            tree,
            d.root.progress() / d.root.n,
            relies_on=[t.record() for t in {t.sha256: t for t in relies_on}.values()],
        )

    def close(self) -> None:
        try:
            self.executor_lost = self.executor.lost_workers
            self.executor.close()
        finally:
            try:
                if self.store is not None:
                    self.store.close()
            finally:
                if self._log:
                    try:
                        self._log.close()
                    except OSError as e:
                        raise self._log_failed(e) from None


def check_claim(source: Trusted | None, bound: int, value: int, how: str) -> None:
    """Refuse, in one line, a trusted file's lower bound that a tree below it shows false (as a store's row is
    refused): neither the claim nor a proof resting on it is printed, nor a partial result."""
    if source is not None and value < bound:
        raise TreeError(
            f"{quote(source.file)} claims a lower bound of {bound}, and {how} {value}: the claim is false "
            f"(it was trusted with --trust)"
        )


def cheapest_greedy(engine: Engine, S: np.ndarray, history: np.ndarray, d: int) -> dict:
    """The cheaper under the objective of the greedy trees for S (expected size or entropy, the two best on
    average: neither always wins)."""
    from ..build.greedy import build_subtree

    trees = [build_subtree(engine.gt, S, history, h, engine.spec.consistent_only) for h in GREEDY_FALLBACKS]
    return min(trees, key=lambda t: tree_cost(engine.gt, t, engine.spec.costs, S, d))


def best_tree(node: SetNode, engine: Engine, known: Sequence[dict] = ()) -> dict:
    """A complete tree for the node's set: optimal where solved; elsewhere the best line searched so far
    (greedy where there is none) or, node by node, the subtrees of `known` (complete trees known beforehand,
    followed down to this node) where they are cheaper: the best tree found takes the best of each."""
    if node.tree is not None:
        return node.tree
    gt, cost = engine.gt, engine.cost
    probe = None
    if node.probes is not None and node.launched:
        pos = node.incumbent_pos if node.incumbent_pos >= 0 else min(node.launched)
        probe = node.launched[pos]
    if probe is None or not probe.parts:
        return merged_tree(gt, cost, node.S, node.d, [cheapest_greedy(engine, node.S, node.history, node.d), *known])[1]
    guess = gt.code_str(probe.probe)
    below = [t for t in known if t["guess"] == guess]
    line = tree_node(
        guess,
        {
            answer: best_tree(part, engine, [t["next"][answer] for t in below])
            for answer, part in sorted(probe.answers.items())
        },
    )
    return merged_tree(gt, cost, node.S, node.d, [line, *(t for t in known if t["guess"] != guess)])[1]


def min_depth_bound(gt: GameTable) -> int:
    """Smallest depth that level filling allows for the whole game."""
    b = len(gt.answers) - 1
    for d in range(1, MAX_SEARCH_DEPTH + 1):
        if exact.fill_levels(gt.size, b, 0, objectives.feasible(d).array(gt.size), 1) < INF:
            return d
    raise GameError("game too deep to search")


def solve_game(
    gt: GameTable,
    objective: Objective | str = "total",
    resources: Resources = Resources(),
    *,
    progress: bool = True,
    on_start: Callable[[str], None] | None = None,
    incumbents: Sequence[dict] = (),
    known_bounds: dict[str, Trusted] | None = None,
) -> SolveReport:
    """Prove `objective` (an Objective, or the name of one with its defaults) on the `resources`; the report says
    what was proved and holds the tree.

    `incumbents` are complete trees of the game (under consistent_only, asking only possible secrets): if
    interrupted, the best tree found is the cheapest of the search's and these; their costs are upper bounds,
    nothing more. `known_bounds` are lower bounds by objective stage (`Costs.name`) that the caller trusts without
    proof (a bound on "total" bounds every total-within-D stage): a stage an incumbent meets is settled with no
    search, an interrupted run reports the higher of its own bound and these, and the proof record lists each one
    used under `relies_on`. An interruption is raised as `Interrupted` with what was proven (see the module)."""
    if isinstance(objective, str):
        objective = Objective(objective)
    start = time.perf_counter()
    game = gt.game
    proven: dict = {}
    lines: list[str] = []
    session = Session(gt, objective.consistent_only, resources, progress, incumbents, known_bounds)
    name, max_depth = objective.label, objective.max_depth
    try:
        if on_start and (start_line := session.start_line()):
            on_start(start_line)
        if objective.name == "within":
            assert max_depth is not None
            out = session.run(objectives.within(max_depth), label=f"most within {max_depth}")
            found = gt.size - out.value
            proven = {"within": max_depth, "found": found, "missed": out.value}
            lines.append(
                f"proved: at most {found} of {gt.size} secrets can be found within {max_depth} questions "
                f"({out.value} need more)"
            )
            tree = out.tree
        elif objective.name == "win":
            from fractions import Fraction

            assert objective.against is not None
            costs = objective.race_costs()
            rule, seat = objective.rule or "tie", objective.seat or "first"
            out = session.run(costs, label=f"best response ({costs.name})")
            score = 1 - Fraction(out.value, 2 * gt.size * sum(objective.against))
            proven = {
                "rule": rule,
                "seat": seat if rule == "first" else None,
                "against_depth_counts": list(objective.against),
                "cost": out.value,
                "score": str(score),
            }
            lines.append(
                f"proved: the best response scores {score} = {float(score):.6f} "
                f"(P(win) + P(draw)/2, rule {rule}{', seat ' + seat if rule == 'first' else ''})"
            )
            tree = out.tree
        elif objective.name == "total":
            out = session.run(objectives.total(max_depth), label="min total")
            if not out.exact:
                proven = {"max_depth": max_depth, "feasible": False}
                lines.append(
                    f"impossible: no tree finds every secret of {game.spec} within {max_depth} questions "
                    f"(exhaustive search)"
                )
                tree = None
            else:
                proven = {"total": out.value}
                if max_depth is not None:
                    proven["max_depth"] = max_depth
                within = f" among trees of at most {max_depth} questions" if max_depth else ""
                lines.append(f"proved: minimum total {out.value}{within} (average {out.value / gt.size:.4f})")
                tree = out.tree
        else:
            depth = min_depth_bound(gt)
            refuted = []
            while True:
                out = session.run(objectives.feasible(depth), beta=1, label=f"within {depth}?")
                if out.exact and out.value == 0:
                    break
                refuted.append(depth)
                depth += 1
                if depth > MAX_SEARCH_DEPTH:
                    raise GameError("no depth bound found")
            proven = {"worst": depth}
            if refuted:
                lines.append(f"proved: no tree finds every secret within {refuted[-1]} questions")
            lines.append(f"proved: minimum worst case {depth}")
            if objective.name == "worst":
                out = session.run(objectives.total(depth), label=f"min total within {depth}")
                proven["total"] = out.value
                lines.append(
                    f"proved: minimum total within {depth} questions {out.value} (average {out.value / gt.size:.4f})"
                )
            else:
                out = session.run(objectives.at_last_level(depth), label=f"fewest at {depth}")
                proven["fewest_at_worst"] = out.value
                lines.append(f"proved: the fewest secrets that need {depth} questions is {out.value}")
            tree = out.tree
    except BaseException as e:
        partial = None
        with signals_held():  # a second Ctrl-C neither loses the partial result nor leaves the workers' resources
            if isinstance(e, (*INTERRUPTIONS, OSError, FileError)) and not isinstance(e, StoreRefused):
                try:
                    partial = session.partial(name)
                    if partial is not None:
                        partial.lines, partial.proven = list(lines), dict(proven)
                except Exception:
                    partial = None
            try:
                session.close()
            except (
                Exception
            ):  # e.g. the log cannot be flushed to a full disk either: the first error is the one to tell
                pass
        if partial is not None:
            raise Interrupted(partial) from e
        raise
    session.close()
    if session.settled:
        lines.append(
            f"settled with no search: {', '.join(session.settled)} (a given tree meets the bound "
            f"known before the search)"
        )
    relies_on = [*session.relies_on.values(), *store_trust(session.store)]
    if relies_on:
        proven["relies_on"] = [t.record() for t in relies_on]
        lines.append(f"the proof relies on {', '.join(t.said() for t in relies_on)}, trusted with --trust")
    if session.store is not None and session.store.unsealed:
        lines.append(session.store.unsealed_line())
    seconds = time.perf_counter() - start
    c = session.counters
    run = {
        "seconds": round(seconds, 2),
        "worker_seconds": round(session.worker_seconds, 2),
        "executor": session.executor.name,
        "plan": session.plan_name,
        "tasks": session.tasks,
        "reused_from_store": session.reused,
        "lost_workers": session.lost + session.executor_lost,
        "nodes": int(c[exact.C_NODES]),
        "probes_tried": int(c[exact.C_PROBES]),
        "machine": machine(),
    }
    if session.settled:
        run["settled_by_a_given_tree"] = session.settled
    return SolveReport(game, name, tree, proven, run, lines)
