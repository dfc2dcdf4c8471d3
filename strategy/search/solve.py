"""Exact solving: the objectives as runs of the driver, on the executor and store the user chose.

`solve_game` proves an objective (minimum total, minimum worst case then total, minimum worst case
then fewest at it, minimum total within a depth) and returns the canonical optimal tree with a
proof record. An interrupted solve raises the interruption with what was proven so far attached
(`Interrupted.partial`): the lower bound, and the best complete tree found (resolved parts optimal,
the rest greedy), which `--partial` writes.
"""
from __future__ import annotations

import ctypes
import os
import platform
import signal
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import orjson

from ..engine import exact
from ..engine.exact import INF
from ..feedback_table import GameTable
from ..io.files import FileError, quote
from ..rules import Game, GameError
from . import objectives
from .driver import NO_SPLIT, PLANS, Driver, Outcome, Plan, SetNode, plan_for
from .executors import DaskCluster, InProcess, LocalProcesses
from .known import merged_tree, tree_cost
from .objectives import Costs
from .store import Store, StoreRefused
from .worker import Engine, Spec, tree_node

OBJECTIVES = ("total", "worst", "worst-then-fewest", "win", "within")
MAX_SEARCH_DEPTH = 60
GREEDY_FALLBACKS = ("expected-size", "entropy")  # where an interrupted solve's best tree is not searched
# smaller games are solved in one process: splitting and workers cost more than they give. Measured on the
# idle 2-core machine (whole processes, 1 vs 2): bulls 4 of 10 4.5 s vs 4.7 s, Mastermind 4x8 4.7 s vs 5.8 s,
# bulls 4 of 10 with no leading zero 20.0 s vs 18.3 s
PARALLEL_MIN_CODES = 6000


def die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (even by kill -9): no orphaned workers."""
    if platform.system() == "Linux":
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


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


def describe(game: Game, objective: str, max_depth: int | None, consistent_only: bool, jobs: int | None,
             scheduler: str | None = None) -> str:
    """The line a solve starts with: what it proves, how, and where."""
    what = {"total": "minimum total", "worst": "minimum worst case, then minimum total",
            "worst-then-fewest": "minimum worst case, then fewest secrets at it",
            "win": "best response in a race", "within": "most secrets found"}[objective]
    if max_depth is not None:
        what += f" within {max_depth} questions"
    probes = "consistent probes only" if consistent_only else "any probe"
    if scheduler:
        where = f"Dask scheduler {scheduler}"
    else:
        n = processes_for(game, jobs)
        where = f"{n} process{'es' if n > 1 else ''}"
    return f"solve {game.spec}: {what}, {probes}, {game.count()} secrets, {where}"


class Interrupted(Exception):
    """Carried on an interruption: what the search had proven (lines for the user, the partial tree)."""


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


@dataclass(frozen=True)
class Trusted:
    """A lower bound on a stage that the solve does not prove but takes from a file the user trusts
    (`strategy solve --trust`): what a proof that uses it relies on."""

    value: int
    file: str
    sha256: str

    def record(self) -> dict:
        return {"file": self.file, "sha256": self.sha256}


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

    def __init__(self, gt: GameTable, consistent_only: bool, jobs: int | None, scheduler: str | None,
                 store: str | None, log: str | None, progress: bool, tt_bits: int | None, plan: Plan | str | None,
                 incumbents: Sequence[dict] = (), known_bounds: dict[str, Trusted] | None = None):
        self.gt = gt
        self.incumbents = list(incumbents)  # complete trees known beforehand: the best tree found is never worse
        self.known_bounds = dict(known_bounds or {})  # stage -> a lower bound taken from a trusted file
        self.relies_on: dict[str, Trusted] = {}  # trusted files a settled stage or the partial bound used
        self.consistent_only = consistent_only
        self.tt_bits = tt_bits if tt_bits is not None else tt_bits_for(gt.size)
        self.progress = progress
        self.store = Store(store, gt.game, consistent_only) if store else None
        self.stored_before = len(self.store) if self.store is not None else 0
        self._log = open(log, "a", buffering=1) if log else None
        self.run_id = f"{os.getpid()}-{int(time.time())}"
        if scheduler:
            self.executor = DaskCluster(scheduler)
        elif processes_for(gt.game, jobs) > 1:
            self.executor = LocalProcesses(processes_for(gt.game, jobs))
        else:
            self.executor = InProcess()
        parallel = self.executor.workers > 1 or scheduler is not None
        if isinstance(plan, str):
            plan = PLANS[plan]
        self.plan = plan if plan is not None else (
            plan_for(self.executor.workers) if parallel or self.store is not None else NO_SPLIT)
        self.plan_name = next((k for k, v in PLANS.items() if v == self.plan), "one task" if self.plan == NO_SPLIT else "custom")
        self.tasks = self.reused = self.lost = 0
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
        return FileError(f"cannot write the log {quote(self._log.name)}: {e.strerror or e}")

    def known_bound(self, stage: str) -> tuple[int, Trusted | None]:
        """A lower bound on this stage that holds before its search, and the trusted file it relies on (None
        when the game alone proves it): a trusted file's bound on the stage, or on the least total for a total
        within a depth (never below it); a fewest-at-D stage runs once no tree within D-1 exists, so some secret
        needs all D questions."""
        own = (1 if stage.startswith("fewest-at-") else 0, None)
        given = [self.known_bounds[s] for s in (stage, "total") if s in self.known_bounds
                 and (s == stage or stage.startswith("total"))]
        return max([own, *((t.value, t) for t in given)], key=lambda b: b[0])

    def run(self, costs: Costs, beta: int = INF, label: str = "") -> Outcome:
        """Prove the value of the whole game under `costs` if it is below beta.

        A known tree (an incumbent, or the last stage's) that meets the stage's known bound settles it
        with no search (e.g. a proven least-total tree within D questions is a least total within D);
        otherwise the cheapest one is the search's first cut-off (anything not at least as good is cut), and
        they guide the driver: at each set it splits, their cheapest subtree's question is tried first."""
        from tqdm import tqdm

        known = [(tree_cost(self.gt, t, costs), i, t) for i, t in enumerate([*self.incumbents, self.last_tree])
                 if t is not None]
        cost, _, tree = min(known, key=lambda k: k[:2]) if known else (INF, 0, None)
        if cost < INF:
            bound, source = self.known_bound(costs.name)
            if cost <= bound:
                self.settled.append(costs.name)
                if source is not None:
                    self.relies_on[source.sha256] = source
                self.last_tree = tree
                return Outcome(cost, True, tree, cost, 0, 0, 0.0, 0)
            beta = min(beta, cost + 1)
        spec = Spec(self.gt.game, costs, self.consistent_only, self.tt_bits)
        engine = Engine(self.gt, spec)
        self.phase = costs.name
        bar = tqdm(total=self.gt.size, unit="secret", delay=0.5, smoothing=0.0, disable=not self.progress,
                   desc=label or costs.name, leave=False)
        def advance(settled: float) -> None:  # the bar never goes back
            if settled > bar.n:
                bar.update(int(settled) - bar.n)

        self.driver = Driver(engine, spec, self.executor, self.store, self.plan, self.log if self._log else None,
                             advance if self.progress else None)
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
        relies_on = [*self.relies_on.values(), *([source] if known > own and source is not None else [])]
        # in a later stage of a staged objective, the previous stage's tree keeps within the depth this stage
        # must respect; a tree known beforehand (an earlier run's, the consistent-only optimum) can be better
        # than the search's line at any node, and its subtrees are taken where they are
        tree = best_tree(d.root, d.engine, [t for t in (self.last_tree, *self.incumbents) if t is not None])
        if d.root.tree is None and d.root.probes is not None and d.root.launched:
            # early on, a greedy tree of the whole game may still be the better one
            greedy = cheapest_greedy(d.engine, d.root.S, d.root.history, d.root.d)
            tree = merged_tree(self.gt, d.engine.cost, d.root.S, 0, [tree, greedy])[1]  # ties keep the search's
        return Partial(objective, d.spec.costs, lb, tree, d.root.progress() / d.root.n,
                       relies_on=[t.record() for t in {t.sha256: t for t in relies_on}.values()])

    def close(self) -> None:
        try:
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


def cheapest_greedy(engine: Engine, S: np.ndarray, history: np.ndarray, d: int) -> dict:
    """The cheaper under the objective of the greedy trees for S (expected size or entropy, the two best on
    average: neither always wins)."""
    from .heuristics import build_subtree

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
    line = tree_node(guess, {answer: best_tree(part, engine, [t["next"][answer] for t in below])
                             for answer, part in sorted(probe.answers.items())})
    return merged_tree(gt, cost, node.S, node.d, [line, *(t for t in known if t["guess"] != guess)])[1]


def min_depth_bound(gt: GameTable) -> int:
    """Smallest depth that level filling allows for the whole game."""
    b = len(gt.answers) - 1
    for d in range(1, MAX_SEARCH_DEPTH + 1):
        if exact.fill_levels(gt.size, b, 0, objectives.feasible(d).array(gt.size), 1) < INF:
            return d
    raise GameError("game too deep to search")


def validate(objective: str, max_depth: int | None, against: list[int] | None = None) -> None:
    if objective not in OBJECTIVES:
        raise GameError(f"unknown objective {objective!r} (choose from {', '.join(OBJECTIVES)})")
    if max_depth is not None and objective not in ("total", "within"):
        raise GameError("--max-depth applies to the total and within objectives only")
    if objective == "within" and max_depth is None:
        raise GameError("the within objective needs --max-depth K (the most secrets found within K questions)")
    if objective == "win" and against is None:
        raise GameError("the win objective needs --against TREE (the tree to beat)")
    if objective != "win" and against is not None:
        raise GameError("--against applies to the win objective only")


def warmed_up() -> bool:
    """True when numba's cache holds what `warm_up` compiles (checked by the search's kernel and the greedy
    builder's)."""
    from ..engine import compiled, greedy

    return compiled(exact, "solve") and compiled(greedy, "build_steps")


def warm_up(spec: str) -> None:
    """Solve a small game in this process with the driver splitting it, so that every kernel a solve calls is
    compiled here, once, before any worker starts (the workers then load numba's cache instead of each
    compiling the same code at the same time)."""
    from ..feedback_table import game_codes, game_table
    from ..rules import parse_game
    from .heuristics import warm_up_greedy

    gt = game_table(parse_game(spec))
    solve_game(gt, "total", jobs=1, progress=False, plan="coarse")
    # an interrupted solve's best tree falls back on greedy trees: compiling them then would delay the exit
    warm_up_greedy(game_codes(gt.game), GREEDY_FALLBACKS[0])
    min_depth_bound(gt)  # the worst-case objectives start here
    engine = Engine(gt, Spec(gt.game, objectives.total(), False, tt_bits=4))
    for n in (exact.BYTES_MAX, gt.size):  # both kernels of `branching` (a probe task's extraction calls it)
        engine.branching(np.arange(n, dtype=np.int32))


def solve_game(gt: GameTable, objective: str, max_depth: int | None = None, consistent_only: bool = False,
               jobs: int | None = None, tt_bits: int | None = None, progress: bool = True,
               scheduler: str | None = None, store: str | None = None, log: str | None = None,
               plan: Plan | str | None = None, on_start: Callable[[str], None] | None = None,
               against: list[int] | None = None, rule: str = "tie", seat: str = "first",
               incumbents: Sequence[dict] = (), known_bounds: dict[str, Trusted] | None = None) -> SolveReport:
    """Run the exact search for `objective`; the report says what was proved and holds the tree.

    `against` (depth counts of a fixed tree), `rule` and `seat` define the race objective `win`.
    `incumbents` are complete trees of the game (under --consistent-only, asking only possible secrets):
    if interrupted, the best tree found is the cheapest of the search's and these; their costs are upper
    bounds, nothing more. `known_bounds` are lower bounds by objective stage (`Costs.name`) that the caller
    trusts without proof (a bound on "total" bounds every total-within-D stage): a stage an incumbent meets is
    settled with no search, an interrupted run reports the higher of its own bound and these, and the proof
    record lists each one used under `relies_on`."""
    validate(objective, max_depth, against)
    start = time.perf_counter()
    game = gt.game
    proven: dict = {}
    lines: list[str] = []
    session = Session(gt, consistent_only, jobs, scheduler, store, log, progress, tt_bits, plan, incumbents, known_bounds)
    name = objective if max_depth is None else f"{objective}-max-depth-{max_depth}"
    if objective == "within":
        name = f"within-{max_depth}"
    elif objective == "win":
        name = objectives.against(against, rule, seat).name
    try:
        if on_start and session.start_line():
            on_start(session.start_line())
        if objective == "within":
            out = session.run(objectives.within(max_depth), label=f"most within {max_depth}")
            found = gt.size - out.value
            proven = {"within": max_depth, "found": found, "missed": out.value}
            lines.append(f"proved: at most {found} of {gt.size} secrets can be found within {max_depth} questions "
                         f"({out.value} need more)")
            tree = out.tree
        elif objective == "win":
            from fractions import Fraction

            costs = objectives.against(against, rule, seat)
            out = session.run(costs, label=f"best response ({costs.name})")
            score = 1 - Fraction(out.value, 2 * gt.size * sum(against))
            proven = {"rule": rule, "seat": seat if rule == "first" else None, "against_depth_counts": against,
                      "cost": out.value, "score": str(score)}
            lines.append(f"proved: the best response scores {score} = {float(score):.6f} "
                         f"(P(win) + P(draw)/2, rule {rule}{', seat ' + seat if rule == 'first' else ''})")
            tree = out.tree
        elif objective == "total":
            out = session.run(objectives.total(max_depth), label="min total")
            if not out.exact:
                proven = {"max_depth": max_depth, "feasible": False}
                lines.append(f"impossible: no tree finds every secret of {game.spec} within {max_depth} questions "
                             f"(exhaustive search)")
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
            if objective == "worst":
                out = session.run(objectives.total(depth), label=f"min total within {depth}")
                proven["total"] = out.value
                lines.append(f"proved: minimum total within {depth} questions {out.value} (average {out.value / gt.size:.4f})")
            else:
                out = session.run(objectives.at_last_level(depth), label=f"fewest at {depth}")
                proven["fewest_at_worst"] = out.value
                lines.append(f"proved: the fewest secrets that need {depth} questions is {out.value}")
            tree = out.tree
    except BaseException as e:
        if (isinstance(e, (KeyboardInterrupt, OSError, FileError)) or type(e).__name__ == "Terminated") \
                and not isinstance(e, StoreRefused):
            try:
                e.partial = session.partial(name)  # type: ignore[attr-defined]
                if e.partial is not None:  # type: ignore[attr-defined]
                    e.partial.lines, e.partial.proven = list(lines), dict(proven)  # type: ignore[attr-defined]
            except Exception:
                e.partial = None  # type: ignore[attr-defined]
        try:
            session.close()
        except Exception:  # e.g. the log cannot be flushed to a full disk either: the first error is the one to tell
            pass
        raise
    session.close()
    if session.settled:
        lines.append(f"settled with no search: {', '.join(session.settled)} (a given tree meets the bound "
                     f"known before the search)")
    if session.relies_on:
        proven["relies_on"] = [t.record() for t in session.relies_on.values()]
        lines.append("the proof relies on the bound claimed by " + ", ".join(
            f"{quote(t.file)} (sha256 {t.sha256})" for t in session.relies_on.values()) + ", trusted with --trust")
    seconds = time.perf_counter() - start
    c = session.counters
    run = {"seconds": round(seconds, 2), "worker_seconds": round(session.worker_seconds, 2),
           "executor": session.executor.name, "plan": session.plan_name, "tasks": session.tasks, "reused_from_store": session.reused,
           "lost_workers": session.lost, "nodes": int(c[exact.C_NODES]), "probes_tried": int(c[exact.C_PROBES]),
           "machine": machine()}
    if session.settled:
        run["settled_by_a_given_tree"] = session.settled
    return SolveReport(game, name, tree, proven, run, lines)
