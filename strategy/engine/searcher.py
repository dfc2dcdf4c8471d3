"""The Python face of the exact kernels: an `Engine` is one game's compiled search with its state
(transposition table, symmetry caches, scratch arrays) for one objective, and every call into `exact`
goes through its methods. An objective is a cost vector (`Costs`: what a secret found at question r
costs); `search.objectives` names the ones the tool proves.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from typing import Any

import numba.experimental.function_type  # noqa: F401  (registers the typing of WrapperAddressProtocol objects)
import numpy as np
from numba import typeof, types
from numba.core.types import WrapperAddressProtocol

from ..interrupts import Stopped, wait_for
from ..rules import Game
from ..tree.format import tree_node
from . import exact
from .exact import INF
from .symmetry import position_perms
from .table import GameTable, split

SMALL_SET = 40  # extraction chooses the question of sets up to this size without a thread of its own


@dataclass(frozen=True)
class Costs:
    """cost[r] = head[r] for r < len(head); beyond it r (tail "linear") or head[-1] ("constant");
    INF for r > cap. Index 0 is unused."""

    name: str
    head: tuple[int, ...]
    tail: str = "linear"
    cap: int | None = None

    def array(self, n_codes: int) -> np.ndarray:
        """The engine's vector for a game of `n_codes` codes (a useful tree never needs more questions)."""
        size = levels_for(n_codes) + 2
        out = np.empty(size, dtype=np.int64)
        for r in range(size):
            if r < len(self.head):
                out[r] = self.head[r]
            else:
                out[r] = r if self.tail == "linear" else self.head[-1]
            if self.cap is not None and r > self.cap:
                out[r] = INF
        return out

    @property
    def key(self) -> str:
        """A short fingerprint of the objective, for store keys and logs."""
        return hashlib.sha256(repr((self.head, self.tail, self.cap)).encode()).hexdigest()[:16]


class ProbeBoundsFn(WrapperAddressProtocol):
    """`exact.probe_bounds` as a first-class function for the argument types of one engine: the search calls it
    through its address, so that `exact.solve` compiles without compiling it, and a first run compiles the two at
    once in two processes (`warmup`)."""

    def __init__(self, argtypes: tuple):
        probes = argtypes[4]  # every probe, of the dtype the probes returned have
        vector = types.Array(types.int64, 1, "C")
        returned = (types.Array(probes.dtype, 1, "C"), vector, vector, types.Array(types.bool_, 1, "C"))
        self._sig = types.Tuple((*returned, types.int64, types.int64, types.int64))(*argtypes)
        self._address: int | None = None

    def signature(self):
        return self._sig

    def __wrapper_address__(self) -> int:
        """The compiled kernel's address (compiled, or loaded from numba's cache, the first time)."""
        if self._address is None:
            # compiled for the arguments alone, as a call from Python is (one entry in numba's cache, not two); numba
            # then refuses a result of another shape than the signature says
            exact.probe_bounds.compile(self._sig.args)
            result: Any = exact.probe_bounds.get_compile_result(self._sig)
            self._address = result.library.get_pointer_to_function(result.fndesc.llvm_cfunc_wrapper_name)
        return self._address


# a node's arguments of the types every call passes (set, depth, branching, history, cut-off): for argument types
SAMPLE_NODE = (np.empty(0, dtype=np.int32), 0, 0, np.empty(0, dtype=np.int64), int(INF))


def _types(args: tuple) -> tuple:
    """numba's types of a kernel's arguments."""
    return tuple(typeof(a) for a in args)


def levels_for(n_codes: int) -> int:
    """The deepest question any useful tree can need: each question removes at least one code."""
    return n_codes + 1


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
        self.params = np.array(
            [len(gt.answers), gt.win, game.symbols, int(not game.leading_zero), int(spec.consistent_only), int(shift)],
            dtype=np.int64,
        )
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
        self.probe_bounds_fn = ProbeBoundsFn(_types(self._probe_bounds_args(*SAMPLE_NODE)))

    @property
    def root_branching(self) -> int:
        return len(self.gt.answers) - 1

    def branching(self, S: np.ndarray) -> int:
        """The most non-winning parts any probe makes of S (what a node passes to its children)."""
        if len(S) <= exact.BYTES_MAX and not self.spec.consistent_only:
            return int(
                exact.fast_bounds(
                    self.gt.table,
                    S,
                    self.all_probes,
                    True,
                    0,
                    self.root_branching,
                    self.bounds,
                    len(self.gt.answers),
                    self.gt.win,
                    self.scratch,
                )
            )
        probes = S if self.spec.consistent_only else self.all_probes
        lb = np.empty(len(probes), dtype=np.int64)
        sq = np.empty(len(probes), dtype=np.int64)
        ex = np.empty(len(probes), dtype=np.bool_)
        return int(
            exact.scan(
                self.gt.table,
                S,
                probes,
                0,
                self.root_branching,
                self.bounds,
                len(self.gt.answers),
                self.gt.win,
                lb,
                sq,
                ex,
            )
        )

    def _args(self) -> tuple:
        return (
            self.gt.table,
            self.gt.codes,
            self.gt.masks,
            self.perms,
            self.all_probes,
            self.params,
            self.bounds,
            self.zs,
            self.tt,
            self.counters,
            self.classes,
            self.scratch,
            self.content,
        )

    def solve(
        self,
        S: np.ndarray,
        d: int,
        beta: int,
        history: np.ndarray,
        b: int,
        control: np.ndarray | None = None,
        live: bool = False,
        probe: int = -1,
        threaded: bool = True,
        deadline: float | None = None,
    ) -> tuple[int, int]:
        """(value, probe) if value < beta, else (lower bound, -1); with `probe`, the value of that first question.

        Runs in a thread (the kernel releases the GIL) so that Ctrl-C and SIGTERM stop it at once, unless
        the caller stops it soon anyway (`threaded` False); `control` lets a driver lower the cut-off live;
        a threaded search still running at `deadline` (time.perf_counter()) stops there (Stopped)."""
        control = self.control if control is None else control
        args = self._solve_args(S, d, beta, history, b, control, live, probe)
        return self._threaded(exact.solve, args, control, threaded, deadline)

    def _solve_args(self, S, d, beta, history, b, control, live, probe) -> tuple:
        """The arguments of `exact.solve`, of the types `probe_bounds_fn` is declared for."""
        return self._args() + (
            np.ascontiguousarray(S, dtype=np.int32),
            np.int64(d),
            np.int64(beta),
            np.ascontiguousarray(history, dtype=np.int64),
            np.int64(b),
            np.int64(-1),
            np.int64(probe),
            control,
            np.int64(1 if live else 0),
            self.probe_bounds_fn,
        )

    def solve_types(self) -> tuple:
        """The argument types of `exact.solve` as this engine calls it: what a first run compiles it for."""
        S, d, b, history, beta = SAMPLE_NODE
        return _types(self._solve_args(S, d, beta, history, b, self.control, False, -1))

    def _threaded(self, fn, args, control, threaded: bool = True, deadline: float | None = None) -> tuple[int, int]:
        if not threaded:  # a call that ends in milliseconds: a thread would cost more than it protects
            outcome = fn(*args)
            if control[exact.K_STOP]:
                raise Stopped()
            return outcome
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

    def request_stop(self) -> None:
        """Stop the search running on this engine (from another thread): it returns within a node or two."""
        self.control[exact.K_STOP] = 1

    def trivial(self, n: int, d: int) -> int:
        """The exact value of a set of at most two secrets at depth d (by formula)."""
        return int(exact.trivial(n, d, self.bounds))

    def level_fill(self, n: int, b: int, d: int) -> int:
        """The level-fill bound of any set of n secrets at depth d whose probes make at most b parts."""
        return int(exact.level_fill(n, b, d, self.bounds))

    def bound_set(self, S: np.ndarray, d: int, b: int) -> tuple[int, int]:
        """The cheap bound of S (transposition table, level filling, a scan of its own candidates): (value, probe)
        when it proves the value outright, else (lower bound, -1)."""
        value, probe = exact.bound_set(
            self.gt.table,
            self.params,
            self.bounds,
            self.zs,
            self.tt,
            self.counters,
            self.scratch,
            S,
            np.int64(d),
            np.int64(b),
        )
        return int(value), int(probe)

    def _probe_bounds_args(self, S: np.ndarray, d: int, b: int, history: np.ndarray, beta: int) -> tuple:
        """The arguments of `exact.probe_bounds` as a call from Python passes them (no probe to stop at)."""
        gt = self.gt
        return (
            gt.table,
            gt.codes,
            gt.masks,
            self.perms,
            self.all_probes,
            self.params,
            self.zs,
            self.classes,
            self.counters,
            S,
            np.int64(d),
            np.int64(b),
            self.bounds,
            history,
            np.int64(beta),
            np.int64(-1),
            self.scratch,
        )

    def probe_bounds(
        self, S: np.ndarray, d: int, b: int, history: np.ndarray, beta: int = int(INF)
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
        """The canonical probes of S worth trying below beta (one per symmetry class), their level-fill bounds and
        sums of squared part sizes, the most non-winning parts any probe makes of S (valid for every subset), and
        the least bound of the probes left out (INF if none)."""
        probes, lb, sq, _, b_here, _, fail = exact.probe_bounds(*self._probe_bounds_args(S, d, b, history, beta))
        return probes, lb, sq, int(b_here), int(fail)

    def value(self, S: np.ndarray, d: int, history: np.ndarray, b: int) -> int:
        """The exact value of S (cheap when the transposition table has it)."""
        if len(S) <= 2:
            return self.trivial(len(S), d)
        v, probe = self.bound_set(S, d, b)
        if probe >= 0:
            return v
        return int(self.solve(S, d, int(INF), history, b)[0])

    def choose(
        self, S: np.ndarray, d: int, value: int, history: np.ndarray, b: int, threaded: bool = True
    ) -> tuple[int, int]:
        """The canonical question of S at depth d, whose exact value is `value`: (probe, b_here).

        The first probe, in the order (bound, sum of squares, position), whose value equals `value`. Values are
        facts, so the choice, and the tree built from it, depend on the game and the bounds vector only: not on
        the search order, the cut-offs, the executor or what the transposition table holds. A loop over the
        kernels the search compiles anyway: a kernel of its own would compile the whole search once more."""
        if not threaded:
            return self._choose(S, d, value, history, b)

        def choice() -> tuple[int, int]:  # one thread for the whole choice, not one per probe
            try:
                return self._choose(S, d, value, history, b)
            except Stopped:  # _threaded sees the stop too and raises it: nothing for the thread to print
                return -1, b

        return self._threaded(choice, (), self.control)

    def _choose(self, S: np.ndarray, d: int, value: int, history: np.ndarray, b: int) -> tuple[int, int]:
        if len(S) <= 2:
            return int(S[0]), b
        probes, lb, sq, b_here, _ = self.probe_bounds(S, d, b, history, value + 1)
        for i in np.lexsort((sq, lb)):  # stable: equal (bound, squares) keep their position
            if lb[i] > value:
                break
            v, _ = self.solve(S, d, value + 1, history, b, probe=int(probes[i]), threaded=False)
            if v == value:
                return int(probes[i]), b_here
        return -1, b_here

    def extract(self, S: np.ndarray, d: int, value: int, history: np.ndarray, b: int, probe: int = -1) -> dict:
        """The canonical subtree of S whose exact value is `value` (see choose); `probe` fixes its question."""
        gt = self.gt
        n = len(S)
        if n == 1:
            return tree_node(gt.code_str(int(S[0])), {})
        if n == 2:
            return tree_node(
                gt.code_str(int(S[0])),
                {gt.answer_str(int(gt.table[S[0], S[1]])): tree_node(gt.code_str(int(S[1])), {})},
            )
        if probe >= 0:
            b_here = self.branching(S)
        else:
            probe, b_here = self.choose(S, d, value, history, b, threaded=n > SMALL_SET)
        if probe < 0:
            raise RuntimeError(f"no question reaches the proven value {value} (a set of {n} secrets at depth {d})")
        members, starts = split(gt.table, S, probe, len(gt.answers))
        child_history = np.append(history, probe).astype(np.int64)
        children = {}
        for c in range(len(gt.answers)):
            if c == gt.win or starts[c] == starts[c + 1]:
                continue
            part = members[starts[c] : starts[c + 1]]
            v = self.value(part, d + 1, child_history, int(b_here))
            children[gt.answer_str(c)] = self.extract(part, d + 1, v, child_history, int(b_here))
        return tree_node(gt.code_str(int(probe)), children)
