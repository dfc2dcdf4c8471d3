"""Exact advice from any position: the value of every question, best first (`strategy analyse`, hints, grades).

A position is the set S of secrets still possible after d questions. The value of a question q there is the
least total number of further questions, q and the final one included, summed over the secrets of S, of the
strategies that ask q now; its average is that divided by |S|. A tree that reaches this position pays d·|S|
more for these secrets (the questions already asked), so at the empty history a question's value is the least
total of the whole game that starts with it, and the best one's is the proven optimum. With the objective
`worst`, a question's value is the fewest further questions that find every secret of S when q is asked now
(its worst case), then the least total among those strategies; questions rank by both, in that order.

Every figure is proven by the exact engine (`engine.searcher.Engine`): a value when its search finishes. Under a
budget, a search still running at the deadline stops, and the question keeps a proven lower bound (level filling,
its parts' own bounds, or the cut-off a refutation reached) and an upper bound (the cost of a complete greedy tree
that asks it first, verified against the game): bounds, labelled so, never an estimate shown as a value.

Questions are taken one per class under the symmetries the position keeps (those that send every earlier question
to itself or to another that got the same answer: `engine.symmetry`), so equivalent questions have equal values.
A set of secrets given as such (not the consequence of a history) keeps no symmetry but its absent symbols.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ..engine import exact
from ..engine.exact import INF
from ..engine.searcher import Costs, Engine, Spec
from ..engine.symmetry import dead_symbols, position_perms, stabiliser
from ..engine.table import GameTable, split
from ..interrupts import Stopped
from ..rules import GameError
from . import objectives
from .known import tree_cost
from .solve import GREEDY_FALLBACKS, tt_bits_for

ANALYSE_OBJECTIVES = ("total", "worst")
LINE_STEPS = 6  # questions shown of a question's best line (it follows the largest part)
SEARCH_SHARE = 0.75  # of a budget, what the searches may take: the rest for the bounds of what they did not finish
DEPTH_TT_BITS = 21  # the transposition table of each depth-bounded engine of the worst objective (64 MB at most)
LOOKAHEAD_LEVELS = 2  # a position whose search did not finish is bounded by this many levels of lookahead (quick)


class PositionError(GameError):
    """A history that is not a position of the game: a bad code or answer, a contradiction, a finished game."""


# -- positions -------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Position:
    """The secrets still possible (S, sorted code indices) after `asked` (question, answer) pairs as written.

    `probes` are the questions the engine keeps for its symmetries: the history's own questions, or for a set
    given as such (`symmetric` False) questions that name every symbol, with no position permutation allowed,
    so that nothing but absent symbols counts as equivalent."""

    gt: GameTable
    S: np.ndarray
    asked: tuple[tuple[str, str], ...]
    probes: np.ndarray
    symmetric: bool = True

    @property
    def d(self) -> int:
        """Questions already asked (the depth at which the engine values the set)."""
        return len(self.asked)

    @property
    def n(self) -> int:
        return len(self.S)

    def history_text(self) -> str:
        return " ".join(f"{q}:{a}" for q, a in self.asked)


def parse_history(text: str) -> list[tuple[str, str]]:
    """`0123:1,2 4567:0,1` (or `;` between the pairs, as `strategy export` writes them) as (question, answer)
    pairs, still unchecked; PositionError when a pair has no colon."""
    pairs = []
    for i, item in enumerate(text.replace(";", " ").split(), 1):
        question, sep, answer = item.partition(":")
        if not sep or not question or not answer:
            raise PositionError(f"question {i} of the history: write CODE:ANSWER (0123:1,2), got {item[:40]!r}")
        pairs.append((question, answer))
    return pairs


def position_from_history(gt: GameTable, history: Sequence[tuple[str, str]]) -> Position:
    """The position after these questions and answers (any notation); PositionError in one line for a code of
    another game, an answer impossible in the game or to its question, answers no secret gives together, or a
    game already won."""
    game = gt.game
    if len(history) > gt.size:  # the engine's depths go as far as one question per code
        raise PositionError(f"a history of {len(history)} questions: {game.spec} needs at most {gt.size}")
    S = np.arange(gt.size, dtype=np.int32)
    asked: list[tuple[str, str]] = []
    probes: list[int] = []
    win = game.format_answer(game.win)
    for i, (question, answer_text) in enumerate(history, 1):
        if asked and asked[-1][1] == win:
            raise PositionError(f"question {i - 1} ({asked[-1][0]}) was answered all hits: the game ended there")
        try:
            code = game.parse_code(question)
            answer = game.parse_answer(answer_text)
        except GameError as e:
            raise PositionError(f"question {i} of the history: {e}") from None
        probe = gt.index(code)
        cls = gt.answers.index(answer)
        q, a = game.format_code(code), game.format_answer(answer)
        if not np.any(gt.table[probe] == cls):
            raise PositionError(f"question {i}: no secret answers {q} with {a}")
        S = S[gt.table[probe, S] == cls]
        if len(S) == 0:
            raise PositionError(
                f"question {i} ({q}:{a}): no secret gives every answer so far"
                + (f" (questions 1 to {i} contradict each other)" if i > 1 else "")
            )
        asked.append((q, a))
        probes.append(probe)
    if asked and asked[-1][1] == win:
        raise PositionError(f"the game is over: {asked[-1][0]} was answered all hits")
    return Position(gt, S, tuple(asked), np.array(probes, dtype=np.int64))


def position_from_secrets(
    gt: GameTable, codes: Sequence[str], where: str = "the set", numbers: Sequence[int] | None = None
) -> Position:
    """The position of any set of secrets (as written, one per entry; `numbers`: their line numbers, else 1, 2,
    ...); PositionError naming the first bad entry."""
    game = gt.game
    seen: dict[int, int] = {}
    for i, text in zip(numbers or range(1, len(codes) + 1), codes):
        try:
            code = game.parse_code(text)
        except GameError as e:
            raise PositionError(f"{where}, line {i}: {e}") from None
        index = gt.index(code)
        if index in seen:
            raise PositionError(f"{where}, line {i}: {game.format_code(code)} is on line {seen[index]} already")
        seen[index] = i
    if not seen:
        raise PositionError(f"{where} holds no secret")
    S = np.array(sorted(seen), dtype=np.int32)
    return Position(gt, S, (), _naming_every_symbol(gt), symmetric=False)


def _naming_every_symbol(gt: GameTable) -> np.ndarray:
    """Codes of the game that name every symbol between them (symbol 0 never first where the game forbids it)."""
    game = gt.game
    n, k = game.length, game.symbols
    out = []
    for start in range(0, k, n):
        code = [(start + j) % k for j in range(n)]
        if not game.leading_zero and code[0] == 0:
            code = code[1:] + code[:1]
        out.append(gt.index(tuple(code)))
    return np.array(out, dtype=np.int64)


# -- classes of questions --------------------------------------------------------------------------


def class_representatives(pos: Position) -> np.ndarray:
    """For every code of the game, the lowest code of its class under the symmetries the position keeps: the
    canonical question the engine searches in its place (equivalent questions have equal values).

    The image of every code under each symmetry (a position permutation with the symbol map it forces on the asked
    symbols), with the never-asked and the absent symbols relabelled in order of first appearance, as
    `symmetry.canonical_probes` tests them; the least image, taken again until it is its own."""
    gt = pos.gt
    game = gt.game
    n, k = game.length, game.symbols
    fix_zero = not game.leading_zero
    perms = position_perms(n, fix_zero) if pos.symmetric else np.empty((0, n), dtype=np.int64)
    answers = gt.table[pos.probes, pos.S[0]].astype(np.int64)
    pis, taus, asked = stabiliser(gt.codes, pos.probes, answers, perms, k, fix_zero)
    dead, _ = dead_symbols(asked, gt.masks, pos.S, k, fix_zero)
    free = ~asked & ~dead
    codes = gt.codes.astype(np.int64)
    weights = k ** np.arange(n - 1, -1, -1, dtype=np.int64)
    keys = codes @ weights  # increasing: codes are in lexicographic order
    elements = [(np.arange(n), np.where(asked, np.arange(k), -1))]
    elements += [(pis[e], taus[e]) for e in range(len(pis))]
    best = keys.copy()
    rows = np.arange(len(codes))
    for pi, tau in elements:
        image = np.empty_like(codes)
        image[:, pi] = codes
        relabel = np.full((len(codes), k), -1, dtype=np.int64)
        taken = {"free": np.zeros(len(codes), dtype=np.int64), "dead": np.zeros(len(codes), dtype=np.int64)}
        labels = {"free": np.flatnonzero(free), "dead": np.flatnonzero(dead)}
        out = np.empty_like(codes)
        for j in range(n):
            x = image[:, j]
            y = np.where(asked[x], tau[x], x)
            group = np.where(dead[y], 1, np.where(asked[x], 0, 2))  # 1 dead, 0 asked, 2 never asked
            out[:, j] = y
            for name, g, sym in (("dead", 1, y), ("free", 2, x)):
                mine = group == g
                if not mine.any():
                    continue
                r, s = rows[mine], sym[mine]
                new = relabel[r, s] < 0
                relabel[r[new], s[new]] = labels[name][taken[name][r[new]]]
                taken[name][r[new]] += 1
                out[mine, j] = relabel[r, s]
        best = np.minimum(best, out @ weights)
    rep = np.searchsorted(keys, best)
    while True:  # the least image of the least image: a fixed point is canonical (see the docstring)
        again = rep[rep]
        if np.array_equal(again, rep):
            return rep
        rep = again


# -- values ----------------------------------------------------------------------------------------


def solve_set(
    engine: Engine,
    S: np.ndarray,
    d: int,
    history: np.ndarray,
    beta: int,
    b: int,
    probe: int = -1,
    deadline: float | None = None,
) -> tuple[int, int]:
    """Engine.solve: (value, probe) below beta, else (lower bound, -1); with `probe`, that question's. Stopped at
    the deadline, the engine ready for the next search (what its table holds was proven before the stop)."""
    if deadline is not None and time.perf_counter() >= deadline:
        raise Stopped()
    try:
        value, best = engine.solve(
            S, d, beta, history, b, probe=probe, threaded=deadline is not None or len(S) > 40, deadline=deadline
        )
    except Stopped:
        engine.control[exact.K_STOP] = 0
        raise
    return int(value), int(best)


@dataclass
class Row:
    """One question at a position: its value (exact when lower == upper) or proven bounds, and what it does.

    `lower` and `upper` are tuples in the objective's order: (total,) or (worst, total), counting further
    questions (see the module); `upper` is None when no complete tree is known within the budget."""

    code: str
    probe: int
    may_be_secret: bool
    parts: list[tuple[str, int]]  # (answer, secrets) of each non-winning answer, largest first
    lower: tuple[int, ...]
    upper: tuple[int, ...] | None = None
    line: list[tuple[str, str, int]] = field(default_factory=list)  # (question, answer, secrets left) steps
    class_size: int | None = None
    canonical: str | None = None  # the class's lowest code, when the question is not it

    @property
    def exact(self) -> bool:
        return self.upper is not None and self.lower == self.upper

    @property
    def key(self) -> tuple:
        """The order of a listing: proven value or lower bound, then the code."""
        return (self.lower, 0 if self.exact else 1, self.probe)


@dataclass
class Analysis:
    """The questions of a position, best first (all of them, or the `top` best), and how they were proven."""

    position: Position
    objective: str
    rows: list[Row]
    classes: int | None  # inequivalent questions at the position (None: not counted)
    best: Row | None  # the best question when it is proven best (no other can beat it; its value may be bounded
    # only, when it is the only question or the others' bounds are higher)
    best_lower: tuple[int, ...]  # a lower bound of the position's value (its value when `best` is)
    complete: bool  # every row exact, and every question left out proven no better than the last one shown
    seconds: float = 0.0
    incumbent: tuple[int, int] | None = None  # the caller's complete strategy, if asked for (see Analyser.analyse)
    incumbent_class: int | None = None  # the lowest code of its first question's class


class Analyser:
    """The exact engines of one game for analysis, one per stage of the objective (kept: their transposition
    tables serve every later question and position)."""

    def __init__(self, gt: GameTable, objective: str = "total"):
        if objective not in ANALYSE_OBJECTIVES:
            raise GameError(f"unknown objective {objective!r} (choose from {', '.join(ANALYSE_OBJECTIVES)})")
        self.gt = gt
        self.objective = objective
        self._engines: dict[tuple[str, bool], Engine] = {}

    # -- engines and searches ------------------------------------------------------------------------
    def engine(self, costs: Costs, symmetric: bool = True) -> Engine:
        key = (costs.key, symmetric)
        if key not in self._engines:
            gt = self.gt
            bits = tt_bits_for(gt.size) if costs.cap is None else min(tt_bits_for(gt.size), DEPTH_TT_BITS)
            engine = Engine(gt, Spec(gt.game, costs, False, bits))
            if not symmetric:  # no position permutation: only the relabelling of absent symbols is left
                engine.perms = np.empty((0, gt.game.length), dtype=np.int64)
            self._engines[key] = engine
        return self._engines[key]

    def _solve(
        self, engine: Engine, pos: Position, beta: int, b: int, probe: int = -1, deadline: float | None = None
    ) -> tuple[int, int]:
        """Engine.solve at the position: (value, probe) below beta, else (bound, -1)."""
        return solve_set(engine, pos.S, pos.d, pos.probes, beta, b, probe, deadline)

    # -- what a question does ------------------------------------------------------------------------
    def row(self, pos: Position, probe: int) -> Row:
        """A question's row before any search: its parts and whether it may be the secret."""
        gt = self.gt
        members, starts = split(gt.table, pos.S, probe, len(gt.answers))
        sizes = starts[1:] - starts[:-1]
        parts = sorted(
            ((gt.answer_str(c), int(sizes[c])) for c in range(len(gt.answers)) if c != gt.win and sizes[c]),
            key=lambda p: (-p[1], p[0]),
        )
        return Row(gt.code_str(probe), probe, bool(sizes[gt.win]), parts, ())

    def _parts(self, pos: Position, probe: int) -> list[np.ndarray]:
        gt = self.gt
        members, starts = split(gt.table, pos.S, probe, len(gt.answers))
        return [
            members[starts[c] : starts[c + 1]]
            for c in range(len(gt.answers))
            if c != gt.win and starts[c + 1] > starts[c]
        ]

    def _further(self, pos: Position, total: int) -> int:
        """An engine total (every question counted from the start) as further questions from the position."""
        return total - pos.d * pos.n

    def line(self, pos: Position, probe: int, deadline: float | None = None) -> list[tuple[str, str, int]]:
        """The best line from a question: (question, answer, secrets left) along its largest part, the best
        question there (the engine's, proven best for its set), its largest part, ...; as far as the deadline
        allows, ending with the all-hits answer once one secret is left."""
        gt = self.gt
        engine = self.engine(objectives.total(), pos.symmetric)
        S, d, history = pos.S, pos.d, pos.probes
        b = engine.branching(S)
        steps = []
        for _ in range(LINE_STEPS):
            members, starts = split(gt.table, S, probe, len(gt.answers))
            sizes = starts[1:] - starts[:-1]
            sizes[gt.win] = 0
            c = int(np.argmax(sizes))
            if sizes[c] == 0:  # only the win is left: the question is the secret
                break
            S = members[starts[c] : starts[c + 1]]
            steps.append((gt.code_str(probe), gt.answer_str(c), len(S)))
            history = np.append(history, probe).astype(np.int64)
            d += 1
            if len(S) <= 2:
                probe = int(S[0])
                continue
            try:
                _, probe = solve_set(engine, S, d, history, int(INF), b, deadline=deadline)
            except Stopped:
                return steps
        else:
            return steps
        steps.append((gt.code_str(probe), gt.answer_str(gt.win), 0))
        return steps

    # -- one question's value, in engine units ------------------------------------------------------
    # Values are tuples in the objective's order, (total,) or (worst, total), counted as the engine counts them
    # (every question from the start of the game: the worst as the depth of the last question, the total with the
    # d questions already asked); `_further` and `_units` turn them into further questions from the position.
    def _units(self, pos: Position, value: tuple[int, ...]) -> tuple[int, ...]:
        if self.objective == "total":
            return (self._further(pos, value[0]),)
        return (value[0] - pos.d, self._further(pos, value[1]))

    def _engine_units(self, pos: Position, value: tuple[int, ...]) -> tuple[int, ...]:
        if self.objective == "total":
            return (value[0] + pos.d * pos.n,)
        return (value[0] + pos.d, value[1] + pos.d * pos.n)

    def _depth_engine(self, name: str, depth: int, symmetric: bool) -> Engine:
        """The engine of feasibility within `depth` questions ("feasible") or of the least total within it
        ("total")."""
        costs = objectives.feasible(depth) if name == "feasible" else objectives.total(depth)
        return self.engine(costs, symmetric)

    def _least_depth(
        self, pos: Position, b: int, probe: int, start: int, cut: int | None, deadline: float | None
    ) -> tuple[int, bool]:
        """(R, True): the fewest questions R (counted from the start) within which a tree asking `probe` first
        (any question when -1) finds every secret of the position; (R, False): none within R - 1, and none within
        `cut` either (R > cut), or the deadline came (Stopped carries nothing: the caller keeps `start`)."""
        R = start
        while True:
            if cut is not None and R > cut:
                return R, False
            engine = self._depth_engine("feasible", R, pos.symmetric)
            value, found = self._solve(engine, pos, 1, b, probe, deadline)
            if found >= 0 and value == 0:
                return R, True
            R += 1
            self._refuted = R  # what a stop leaves proven: the worst case is at least R

    def _position_value(self, pos: Position, b: int, deadline: float | None) -> tuple[tuple[int, ...], int]:
        """The position's value (engine units) and a question that reaches it."""
        if self.objective == "total":
            value, probe = self._solve(
                self.engine(objectives.total(), pos.symmetric), pos, int(INF), b, deadline=deadline
            )
            return (value,), probe
        R, _ = self._least_depth(pos, b, -1, pos.d + 1, None, deadline)
        value, probe = self._solve(self._depth_engine("total", R, pos.symmetric), pos, int(INF), b, deadline=deadline)
        return (R, value), probe

    def _question_value(
        self,
        pos: Position,
        probe: int,
        b: int,
        deadline: float | None,
        floor: tuple[int, ...],
        cut: tuple[int, ...] | None,
    ) -> tuple[tuple[int, ...], bool]:
        """(value, True) for the question's exact value (engine units); (lower bound, False) when it is proven
        above `cut` or the deadline stops the search (Stopped is not raised: the bound proven so far is returned,
        and `self.stopped` set). `floor` is a lower bound known before (the position's value, the level fill).

        With `worst`, each part of a bound holds by itself: the worst case is at least its first, and the total
        within it at least its second (a least total with no depth bound, or one within exactly that worst case)."""
        self._refuted = floor[0]
        try:
            if self.objective == "total":
                beta = int(INF) if cut is None else cut[0] + 1
                value, found = self._solve(
                    self.engine(objectives.total(), pos.symmetric), pos, beta, b, probe, deadline
                )
                return ((value,), True) if found >= 0 else ((max(value, floor[0]),), False)
            R, feasible = self._least_depth(pos, b, probe, floor[0], None if cut is None else cut[0], deadline)
            if not feasible:
                return (R, 0), False
            beta = int(INF) if cut is None or R < cut[0] else cut[1] + 1
            value, found = self._solve(self._depth_engine("total", R, pos.symmetric), pos, beta, b, probe, deadline)
            return ((R, value), True) if found >= 0 else ((R, max(value, floor[1])), False)
        except Stopped:
            self.stopped = True
            return (floor if self.objective == "total" else (self._refuted, floor[1])), False

    def _with_cheap(self, pos: Position, probe: int, b: int, known: tuple[int, ...]) -> tuple[int, ...]:
        """A lower bound (engine units) raised by `_cheap_lower`, a bound of the least total with no depth bound:
        it bounds the total within any worst case too."""
        cheap = self._cheap_lower(pos, probe, b)
        return (max(known[0], cheap),) if self.objective == "total" else (known[0], max(known[1], cheap))

    def _lookahead(self, pos: Position, b: int, deadline: float | None) -> int | None:
        """A lower bound of the position's value (engine units) by LOOKAHEAD_LEVELS levels of lookahead
        (`search.lookahead`), or None if the deadline comes first."""
        import threading

        from .lookahead import Lookahead

        look = Lookahead(self.gt, objectives.total())
        if not pos.symmetric:
            look.engine.perms = np.empty((0, self.gt.game.length), dtype=np.int64)
        timer = threading.Timer(max(0.0, deadline - time.perf_counter()), look.request_stop) if deadline else None
        if timer is not None:
            timer.start()
        try:
            return look.bound(pos.S, pos.d, b, pos.probes, LOOKAHEAD_LEVELS)
        except Stopped:
            return None
        finally:
            if timer is not None:
                timer.cancel()

    def _cheap_lower(self, pos: Position, probe: int, b: int) -> int:
        """A proven lower bound of the question's total (engine units) with no search: the sum of its parts' own
        bounds (`Engine.bound_set`: level filling, the transposition table, a scan), plus the question itself."""
        engine = self.engine(objectives.total(), pos.symmetric)
        d = pos.d
        value = int(engine.cost[d + 1]) if self.gt.table[probe, pos.S].max() == self.gt.win else 0
        for part in self._parts(pos, probe):
            value += engine.trivial(len(part), d + 1) if len(part) <= 2 else engine.bound_set(part, d + 1, b)[0]
        return value

    def _greedy_upper(self, pos: Position, probe: int, quick: bool = False) -> tuple[int, ...] | None:
        """An upper bound of the question's value (engine units): the best of the greedy trees that ask it first,
        priced against the game (a tree that misses a secret costs INF and is not taken); None if there is none."""
        from ..build.greedy import build_arrays

        best = None
        for rule in GREEDY_FALLBACKS[:1] if quick else GREEDY_FALLBACKS:
            try:
                tree = build_arrays(
                    self.gt,
                    rule,
                    False,
                    first=probe,
                    progress=False,
                    candidates=pos.S,
                    history=tuple(int(p) for p in pos.probes),
                    threads=1,
                ).tree()
            except GameError:  # a rule whose questions stop splitting (possible only for a set given as such)
                continue
            cost = tree_cost(self.gt, tree, objectives.total(), pos.S, pos.d)
            if cost >= INF:
                continue
            value = (cost,) if self.objective == "total" else (pos.d + _height(tree), cost)
            if best is None or value < best:
                best = value
        return best

    # -- the listing --------------------------------------------------------------------------------
    def analyse(
        self,
        pos: Position,
        top: int | None = None,
        deadline: float | None = None,
        lines: bool = True,
        quick: bool = False,
        share: float = SEARCH_SHARE,
        incumbent: Callable[[], tuple[int, int] | None] | None = None,
        classes: bool = True,
    ) -> Analysis:
        """Every inequivalent question of the position (or the `top` best), best first, each valued exactly or,
        past the deadline, bounded. `quick`: one greedy rule for the upper bounds instead of two; `share`: of the
        time to the deadline, what the searches may take; `incumbent`: called when a search did not finish, a
        complete strategy known to the caller (its first question, and its total of further questions), an upper
        bound of its class (the analysis keeps it as `incumbent`). With `classes` False (a hint: `top` 1), the
        classes are not counted nor sized (they cost a pass over every code), and the questions that learn nothing
        are left out."""
        start = time.perf_counter()
        self.stopped = False
        gt = self.gt
        final, deadline = deadline, None if deadline is None else start + share * (deadline - start)
        engine = self.engine(objectives.total(), pos.symmetric)
        b = engine.branching(pos.S)
        probes, level_fill, _ = self._probes(pos, engine, b)
        known_reps: list[np.ndarray] = []

        def class_reps() -> np.ndarray:  # computed once, when needed
            if not known_reps:
                known_reps.append(class_representatives(pos))
            return known_reps[0]

        if classes:
            counts = np.bincount(class_reps(), minlength=gt.size)
            every = np.flatnonzero(counts)
        else:
            counts, every = None, probes
        answers = gt.table[np.ix_(every, pos.S)]
        learns = ~(answers == answers[:, :1]).all(axis=1) | (answers[:, 0] == gt.win)
        idle = [int(p) for p in every[~learns]] if classes else []  # questions that learn nothing here
        keep = ~np.isin(probes, idle) if classes else learns
        probes, level_fill = probes[keep], level_fill[keep]
        value, best_probe = (None, -1)
        try:
            value, best_probe = self._position_value(pos, b, deadline)
        except Stopped:
            self.stopped = True
        floor_depth = value[0] if value is not None and self.objective == "worst" else pos.d + 1
        rows: list[Row] = []
        exact_keys: list[tuple[int, ...]] = []
        left_out: list[tuple[int, ...]] = []  # lower bounds of the questions proven out of the top
        for probe, fill in zip(probes.tolist(), level_fill.tolist()):
            row = self.row(pos, probe)
            floor: tuple[int, ...] = (fill,) if self.objective == "total" else (floor_depth, fill)
            if value is not None and floor < value:
                floor = value  # no question beats the position's value
            cut = sorted(exact_keys)[top - 1] if top is not None and len(exact_keys) >= top else None
            if cut is not None and floor > cut:
                left_out.append(floor)
                continue
            known, exact_value = (value, True) if probe == best_probe and value is not None else (floor, False)
            if not exact_value and not self.stopped:
                known, exact_value = self._question_value(pos, probe, b, deadline, floor, cut)
            if exact_value:
                exact_keys.append(known)
                row.lower = row.upper = known
            else:
                if cut is not None and not self.stopped and known > cut:
                    left_out.append(known)
                    continue
                in_time = final is None or time.perf_counter() < final
                row.lower = self._with_cheap(pos, probe, b, known) if in_time else known
            rows.append(row)
        least = min([r.lower for r in rows] + left_out) if rows or left_out else (0,)
        step = (pos.n,) if self.objective == "total" else (1, pos.n)
        for probe in idle:  # the same set one question later: the position's value plus one question per secret
            row = self.row(pos, probe)
            row.lower = tuple(v + s for v, s in zip(value if value is not None else least, step))
            row.upper = row.lower if value is not None else None
            rows.append(row)
        rows.sort(key=lambda r: r.key)
        if top is not None:
            left_out += [r.lower for r in rows[top:]]
            rows = rows[:top]
        # what the searches did not finish: the first question's upper bound, then the position's lookahead bound
        # (every question is at least that: raised once the listing is ordered by their own), then the others'
        on_time = lambda: final is None or time.perf_counter() < final  # noqa: E731
        held = None  # the caller's incumbent: (its first question, its total)
        if incumbent is not None and not all(r.exact for r in rows):
            held = incumbent()
            if held is not None:
                upper = self._engine_units(pos, (held[1],))
                for row in rows:
                    if row.probe == class_reps()[held[0]] and (row.upper is None or upper < row.upper):
                        row.upper = upper  # a complete strategy asking a question of this class
        if rows and rows[0].upper is None and rows[0].probe not in idle and (held is None or on_time()):
            rows[0].upper = self._greedy_upper(pos, rows[0].probe, quick)  # past the deadline only with no other
        if value is None and self.objective == "total" and on_time():
            ahead = self._lookahead(pos, b, final)
            if ahead is not None and (ahead,) > least:
                least = (ahead,)
        for row in rows:
            row.lower = max(row.lower, tuple(v + s for v, s in zip(least, step)) if row.probe in idle else least)
        left_out = [max(v, least) for v in left_out]
        for row in rows:
            if row.upper is None and row.probe not in idle and on_time():
                row.upper = self._greedy_upper(pos, row.probe, quick)
        best_upper = min((r.upper for r in rows if r.upper is not None and r.probe not in idle), default=None)
        for row in rows:
            if row.upper is None and row.probe in idle and best_upper is not None:
                row.upper = tuple(v + s for v, s in zip(best_upper, step))
            row.class_size = None if counts is None else int(counts[row.probe])
            row.lower = self._units(pos, row.lower)
            row.upper = None if row.upper is None else self._units(pos, row.upper)
        least = self._units(pos, least)
        others = [r.lower for r in rows[1:]] + [self._units(pos, v) for v in left_out]
        # proven best: no other question's lower bound is below its upper bound (an exact least value, or the only
        # class, whose value may still be bounded only)
        best = rows[0] if rows and rows[0].upper is not None and all(rows[0].upper <= o for o in others) else None
        if lines:
            for row in rows:
                if row.exact and row.probe not in idle:
                    row.line = self.line(pos, row.probe, final)
        return Analysis(
            pos,
            self.objective,
            rows,
            None if counts is None else len(every),
            best,
            least,
            complete=best is not None and all(r.exact for r in rows),
            seconds=time.perf_counter() - start,
            incumbent=held,
            incumbent_class=None if held is None else int(class_reps()[held[0]]),
        )

    def _probes(self, pos: Position, engine: Engine, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The canonical questions of the position that learn something, with their level-fill bounds, in the
        engine's order (bound, sum of squared part sizes, code)."""
        probes, lb, sq, _, _ = engine.probe_bounds(pos.S, pos.d, b, pos.probes)
        order = np.lexsort((probes, sq, lb))
        return probes[order], lb[order], sq[order]

    # -- one question -------------------------------------------------------------------------------
    def grade(self, pos: Position, code: str, deadline: float | None = None, quick: bool = False) -> Grade:
        """A question's value at the position against the best question's: exact where the searches finish
        before the deadline, else proven bounds (the difference then as bounds too)."""
        gt = self.gt
        probe = gt.index(gt.game.parse_code(code))
        best = self.analyse(pos, top=1, deadline=deadline, lines=False, quick=quick)
        reps = class_representatives(pos)
        row = self.row(pos, probe)
        rep = int(reps[probe])
        row.canonical = gt.code_str(rep) if rep != probe else None
        same = [r for r in best.rows if r.probe == rep]
        if same:
            row.lower, row.upper = same[0].lower, same[0].upper
        else:
            engine = self.engine(objectives.total(), pos.symmetric)
            b = engine.branching(pos.S)
            sizes = [size for _, size in row.parts]
            if sizes == [pos.n] and not row.may_be_secret:  # the question learns nothing
                step = (pos.n,) if self.objective == "total" else (1, pos.n)
                low, up = best.best_lower, best.rows[0].upper if best.rows else None
                row.lower = tuple(v + s for v, s in zip(low, step))
                row.upper = None if up is None else tuple(v + s for v, s in zip(up, step))
            else:
                floor = self._engine_units(pos, best.best_lower)  # no question beats the position
                known, exact_value = self._question_value(pos, probe, b, deadline, floor, None)
                if exact_value:
                    row.lower = row.upper = self._units(pos, known)
                else:
                    row.lower = self._units(pos, self._with_cheap(pos, probe, b, known))
                    upper = self._greedy_upper(pos, probe, quick)
                    row.upper = None if upper is None else self._units(pos, upper)
        row.class_size = int(np.count_nonzero(reps == rep))
        return Grade(row, best)


@dataclass
class Grade:
    """A question graded against the best one of its position (`Analyser.grade`)."""

    row: Row
    best: Analysis

    @property
    def same_as_best(self) -> bool:
        """The question is in the class of the proven best question: it costs nothing more, whatever its value."""
        best = self.best.best
        return best is not None and (self.row.canonical or self.row.code) == best.code

    @property
    def exact(self) -> bool:
        """Whether the cost is exact (both values are, or the question is as good as the best)."""
        return self.same_as_best or (self.row.exact and self.best.best is not None and self.best.best.exact)

    def cost(self) -> tuple[tuple[int, ...], tuple[int | None, ...] | None]:
        """What the question costs more than the best, in the objective's order: (least, most) as proven, equal
        when exact; most is None when no upper bound is known. With `worst`, the totals are each within their own
        worst case: their difference is bounded above only when both worst cases are known."""
        if self.same_as_best:
            zero = tuple(0 for _ in self.row.lower)
            return zero, zero
        best_row = self.best.rows[0] if self.best.rows else None
        best_upper = best_row.upper if best_row is not None else None
        low = (
            tuple(max(0, a - b) for a, b in zip(self.row.lower, best_upper))
            if best_upper
            else tuple(0 for _ in self.row.lower)
        )
        if self.row.upper is None:
            return low, None
        high: tuple[int | None, ...] = tuple(a - b for a, b in zip(self.row.upper, self.best.best_lower))
        if len(high) == 2 and not (
            self.row.upper[0] == self.row.lower[0]
            and best_upper is not None
            and best_upper[0] == self.best.best_lower[0]
        ):
            high = (high[0], None)
        return low, high


def _height(tree: dict) -> int:
    """The questions a tree needs at most (its deepest node)."""
    return 1 + max((_height(child) for child in tree.get("next", {}).values()), default=0)


# -- as JSON ------------------------------------------------------------------------------------------


def value_fields(objective: str, value: tuple[int | None, ...] | None) -> dict | None:
    """A value tuple as named fields: {"total": T} or {"worst": W, "total": T}."""
    if value is None:
        return None
    return {"total": value[0]} if objective == "total" else {"worst": value[0], "total": value[1]}


def row_json(row: Row, objective: str, n: int) -> dict:
    """One question of an analysis (`strategy analyse --json`, the play protocol's `analysis` and `grade`)."""
    exact_total = row.lower[-1] if row.exact else None
    out: dict[str, object] = {
        "code": row.code,
        "class_size": row.class_size,
        "equivalent_to": row.canonical,
        "may_be_secret": row.may_be_secret,
        "parts": [{"answer": a, "secrets": k} for a, k in row.parts],
        "exact": row.exact,
    }
    if objective == "worst":
        out["worst"] = row.lower[0] if row.exact else None
    out["total"] = exact_total
    out["average"] = None if exact_total is None else round(exact_total / n, 4)
    out["lower"] = value_fields(objective, row.lower)
    out["upper"] = value_fields(objective, row.upper)
    out["line"] = [{"question": q, "answer": a, "secrets": k} for q, a, k in row.line]
    return out


def analysis_json(analysis: Analysis) -> dict:
    """An analysis as JSON: `value` is the best question's exact value (None when no question is proven best, or
    the best one is proven so by bounds alone: the only class, its search unfinished; its row has the bounds)."""
    pos, best = analysis.position, analysis.best
    game = pos.gt.game
    return {
        "game": game.spec,
        "objective": analysis.objective,
        "history": [{"question": q, "answer": a} for q, a in pos.asked],
        "secrets": pos.n,
        "asked": pos.d,
        "symmetric": pos.symmetric,
        "classes": analysis.classes,
        "best": best.code if best is not None else None,
        "value": value_fields(analysis.objective, best.lower) if best is not None and best.exact else None,
        "lower": value_fields(analysis.objective, analysis.best_lower),
        "complete": analysis.complete,
        "seconds": round(analysis.seconds, 3),
        "questions": [row_json(r, analysis.objective, pos.n) for r in analysis.rows],
    }


def grade_json(grade: Grade) -> dict:
    analysis = grade.best
    objective, n = analysis.objective, analysis.position.n
    low, high = grade.cost()
    best = analysis.rows[0] if analysis.rows else None
    return {
        "question": row_json(grade.row, objective, n),
        "best": None if best is None else row_json(best, objective, n),
        "best_proven": analysis.best is not None,
        "cost": {"exact": grade.exact, "lower": value_fields(objective, low), "upper": value_fields(objective, high)},
    }
