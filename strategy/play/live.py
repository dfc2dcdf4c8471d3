"""Live play: each question chosen at play time from the current position, with no tree of the whole game.

The candidates are NumPy arrays (`candidates.Candidates`), filtered in vector operations: one answer over
bulls 10 of 10's 3,628,800 codes takes about a tenth of a second, the later ones far less. The question, in
order of preference:

1. the shipped tree's, while the answers keep the position on it (`strategy/trees/`, when one exists for the
   game);
2. one or two candidates left: the first of them;
3. few candidates (`EXACT_MAX`): a candidate whose answers tell them all apart, which is optimal (every secret
   but the one found at once needs two questions at least); else an exact search, when reducing the probes costs
   at most `DEDUP_PAIRS` code x candidate answers (which bounds its cost on the biggest games; numba is loaded only
   then): the probes are reduced to one per partition of the candidates, the lowest code of each (over every code
   of the game, so nothing is lost), and the project's exact engine proves the minimum-total subtree on that small
   universe (at most `UNIVERSE_MAX` codes); its questions are then followed while the answers stay on it. A search
   that does not end within the move's budget is dropped for the greedy rule;
4. otherwise a greedy rule (entropy) over the candidates, scoring a seeded sample of the candidates as
   probes and as secrets, and a seeded sample of the other codes as probes (never a table).

The first question is chosen by symmetry: with every code equivalent (bulls with leading zeros) the lowest
code; otherwise the lowest code of each symmetry class of first questions, scored over a seeded sample.
NumPy only, but for the exact engine (numba), loaded only when a search runs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np

from ..rules import Answer, Code, Game
from .candidates import Candidates, Everything, codes_at, every
from .walker import Conflict, Contradiction, History, Walker, explain, prepare

EXACT_MAX = 64  # candidate sets up to this size are searched exactly
DEDUP_PAIRS = 4_000_000  # ... when reducing the probes costs at most this many answers (codes x candidates): about
# a third of a second, with the engine's load, a second at most on this machine
SAMPLE_SECRETS = 2500  # secrets a greedy question is scored on
POOL_CANDIDATES = 500  # candidates tried as questions
POOL_OTHERS = 500  # other codes tried as questions
FIRST_SAMPLE = 4096  # secrets the classes of first questions are scored on
UNIVERSE_MAX = 3000  # ... and the candidates with one probe per partition of them are at most this many codes
EXACT_SECONDS = 0.6  # an exact search still running after this long is dropped for the greedy rule


# -- the shipped trees ----------------------------------------------------------------------------------


def shipped_tree(game: Game) -> Path | None:
    """The shipped tree that plays `game` best on average (least total, else the best found), if any."""
    from ..tree.shipped import path_of

    base = game.spec.replace(":", "-")
    return next((p for p in map(path_of, (f"{base}-total", f"{base}-best-found")) if p is not None), None)


# -- the first question ------------------------------------------------------------------------------


def first_classes(game: Game) -> list[Code]:
    """The lowest code of each symmetry class of first questions (symbols and positions permuted; with no
    leading zero, symbol 0 and position 0 stay put)."""
    n, k = game.length, game.symbols
    if game.distinct:
        if game.leading_zero:
            return [tuple(range(n))]
        with_zero = (1, 0) + tuple(range(2, n)) if n >= 2 else None
        without = tuple(range(1, n + 1)) if n + 1 <= k else None
        return [c for c in (with_zero, without) if c is not None and game.is_code(c)]
    out = []
    for parts in _partitions(n, min(n, k)):  # multiplicities, largest first: symbol 0 the most often
        code: list[int] = []
        for symbol, m in enumerate(parts):
            code.extend([symbol] * m)
        out.append(tuple(code))
    return sorted(out)


def _partitions(n: int, most: int, largest: int | None = None) -> list[tuple[int, ...]]:
    """Partitions of n into at most `most` parts, each at most `largest`, parts in decreasing order."""
    largest = n if largest is None else largest
    if n == 0:
        return [()]
    if most == 0:
        return []
    out: list[tuple[int, ...]] = []
    for first in range(min(n, largest), 0, -1):
        out.extend((first,) + rest for rest in _partitions(n - first, most - 1, first))
    return out


def entropy_score(keys: np.ndarray) -> float:
    """Sum of k log k over the parts (lower is better: the expected information is higher)."""
    counts = np.bincount(keys.astype(np.int64))
    counts = counts[counts > 1].astype(np.float64)
    return float((counts * np.log(counts)).sum())


def first_question(game: Game, seed: int = 0) -> Code:
    """The first question: the only class, or the best class by entropy over a seeded sample of secrets."""
    classes = first_classes(game)
    if len(classes) == 1:
        return classes[0]
    count = game.count()
    sample = codes_at(game, np.random.default_rng(seed).integers(0, count, size=min(FIRST_SAMPLE, count)))
    return min(classes, key=lambda c: (entropy_score(sample.answer_keys(c)), c))


# -- the chooser ---------------------------------------------------------------------------------------


@dataclass
class Plan:
    """A proven minimum-total subtree, followed from the position where it was searched."""

    before: list  # the questions and answers before its root, (code, answer) pairs
    root: dict
    value: int
    secrets: int


class LiveChooser:
    """Chooses each question from the current position (see the module's docstring)."""

    def __init__(self, game: Game, tree: Walker | None = None, seed: int = 0, exact_seconds: float = EXACT_SECONDS):
        self.game = game
        self.tree = tree
        self.seed = seed
        self.exact_seconds = exact_seconds
        self.plan: Plan | None = None
        self.last = "first"  # how the last question was chosen: tree, first, last, exact, greedy
        answers = game.answers()  # at most 156 in games of up to 10,000,000 codes: uint8 classes suffice
        width = game.length + 1
        self.lut = np.full(width * width, 255, dtype=np.uint8)
        for i, (h, b) in enumerate(answers):
            self.lut[h * width + h + b] = i
        self.n_classes, self.win = len(answers), len(answers) - 1

    def choose(self, history: list[tuple[Code, Answer]], cands: Candidates) -> Code:
        """The next question after `history` (every candidate agrees with it)."""
        fmt = self.game.format_code
        if self.tree is not None:
            text = [(fmt(q), self.game.format_answer(a)) for q, a in history]
            node, path = self.tree.node(text)
            if len(path) == len(history):  # still on the tree
                self.last = "tree"
                guess = self.tree.next_guess(text, cands)
                assert guess is not None  # a question is chosen only while the game goes on
                return self.tree.probe(guess)
        if not history and self.tree is None and self.game.count() > EXACT_MAX:
            self.last = "first"
            return first_question(self.game, self.seed)
        n = len(cands)
        if n <= 2:
            self.last = "last"
            return cands[0]
        planned = self._follow(history)
        if planned is not None:
            self.last = "exact"
            return planned
        if n <= EXACT_MAX:
            perfect = _perfect_candidate(cands)
            if perfect is not None:  # optimal: no search needed, and no engine loaded
                self.last = "exact"
                return perfect
        if n <= EXACT_MAX and n * self.game.count() <= DEDUP_PAIRS:
            found = self._search(history, cands)
            if found is not None:
                self.last = "exact"
                return found
        self.last = "greedy"
        return self._greedy(history, cands)

    # -- exact ------------------------------------------------------------------------------------
    def _follow(self, history: list[tuple[Code, Answer]]) -> Code | None:
        """The plan's question after `history`, if the history went down the plan from its root."""
        plan = self.plan
        at = 0 if plan is None else len(plan.before)
        if plan is None or len(history) < at or history[:at] != plan.before:
            return None
        node = plan.root
        for q, a in history[at:]:
            if node["guess"] != self.game.format_code(q):
                return None
            node = node.get("next", {}).get(self.game.format_answer(a))
            if node is None:
                return None
        return self.game.read_code(node["guess"])

    def _search(self, history: list[tuple[Code, Answer]], cands: Candidates) -> Code | None:
        """Prove the minimum-total subtree of the candidates; None when it takes longer than the budget."""
        from ..engine.candidates import class_table, signatures
        from ..engine.exact import INF
        from ..engine.searcher import Engine, Spec
        from ..engine.symmetry import symbol_masks
        from ..engine.table import GameTable
        from ..interrupts import Stopped
        from ..search import objectives

        game = self.game
        space = every(game)
        secrets_cols, secrets_counts = cands.cols, cands.counts
        sig = signatures(space.cols, space.counts, secrets_cols, secrets_counts, game.distinct, game.length + 1)
        _, first = np.unique(sig, return_index=True)  # the lowest code of each partition of the candidates
        if len(first) + len(cands) > UNIVERSE_MAX:
            return None  # too many kinds of question for a search within the move's budget
        asked = np.array([game.rank(q) for q, _ in history], dtype=np.int64)
        universe = np.unique(np.concatenate([space.index[first].astype(np.int64), cands.index.astype(np.int64), asked]))
        ucols = np.ascontiguousarray(space.cols[:, universe])
        ucounts = np.ascontiguousarray(space.counts[:, universe])
        table = class_table(ucols, ucounts, self.lut, game.length + 1, game.distinct)
        codes = np.ascontiguousarray(ucols.T)
        gt = GameTable(game, codes, game.answers(), table, symbol_masks(codes))
        engine = Engine(gt, Spec(game, objectives.total(), False, 18))
        S = np.searchsorted(universe, cands.index.astype(np.int64)).astype(np.int32)
        hist = np.searchsorted(universe, asked).astype(np.int64)
        d = len(history)
        deadline = time.perf_counter() + self.exact_seconds
        try:
            value, probe = engine.solve(S, d, INF, hist, engine.root_branching, deadline=deadline)
            if probe < 0:
                return None
            root = engine.extract(S, d, int(value), hist, engine.root_branching)
        except Stopped:
            return None
        self.plan = Plan(list(history), root, int(value), len(cands))
        return game.read_code(root["guess"])

    # -- greedy -----------------------------------------------------------------------------------
    def _greedy(self, history: list[tuple[Code, Answer]], cands: Candidates) -> Code:
        """Entropy over a seeded sample: candidates as secrets and probes, other codes as probes. The least sum
        of k log k over the parts wins; ties go to a question that may be the secret, then the earlier one."""
        game = self.game
        rng = np.random.default_rng([self.seed, len(history), len(cands)])
        n = len(cands)
        secrets = np.arange(n) if n <= SAMPLE_SECRETS else np.sort(rng.choice(n, SAMPLE_SECRETS, replace=False))
        as_probes = (
            secrets
            if len(secrets) <= POOL_CANDIDATES
            else secrets[np.sort(rng.choice(len(secrets), POOL_CANDIDATES, replace=False))]
        )
        count = game.count()
        others = codes_at(game, rng.integers(0, count, size=min(POOL_OTHERS, count)))  # no list of every code
        sample = cands.take(secrets)
        win = Candidates.key_of(game, game.win)
        best, best_score, best_cons = None, np.inf, False
        for probe in [cands[int(i)] for i in as_probes] + list(others):
            parts = np.bincount(sample.answer_keys(probe))
            cons = bool(win < len(parts) and parts[win] > 0)
            big = parts[parts > 1].astype(np.float64)
            score = float((big * np.log(big)).sum())
            if score < best_score - 1e-9 or (abs(score - best_score) <= 1e-9 and cons and not best_cons):
                best, best_score, best_cons = probe, score, cons
        assert best is not None  # the first probe's score is finite
        return best


def _perfect_candidate(cands: Candidates) -> Code | None:
    """The lowest candidate whose answers tell every candidate apart, if any. It is an optimal question for the total:
    one secret is found by the first question at best, every other needs two at least, and after it each is alone."""
    n = len(cands)
    for i in range(n):
        probe = cands[i]
        if len(np.unique(cands.answer_keys(probe))) == n:
            return probe
    return None


# -- the walker of live play ------------------------------------------------------------------------------


class LiveWalker:
    """What the session asks of a walker, for live play: candidates, the next question, conflicts."""

    objective = "live"  # what the `ready` event names: questions chosen at play time

    def __init__(self, game: Game, seed: int = 0, tree: Walker | None = None):
        self.game = game
        self.tree = tree
        self.doc = tree.doc if tree is not None else None
        self.chooser = LiveChooser(game, tree, seed)

    def start(self) -> Candidates:
        """Every code, listed only when needed (`candidates.Everything`)."""
        return cast(Candidates, Everything(self.game))  # a stand-in: what it lacks, it takes from the listed codes

    def first_guess(self) -> str:
        """The first question, before any candidate is listed (the tree's, or by symmetry)."""
        if self.tree is not None:
            self.chooser.last = "tree"
            return self.tree.first_guess()
        if self.game.count() <= EXACT_MAX:
            guess = self.next_guess([])
            assert guess is not None  # no answer yet
            return guess
        self.chooser.last = "first"
        return self.game.format_code(first_question(self.game, self.chooser.seed))

    def warm(self) -> None:
        """List every code (and parse the shipped tree) in a thread while the first answer is awaited."""
        if self.tree is not None:
            self.tree.warm()  # the same list of every code, and the tree
        else:
            prepare(lambda: every(self.game))

    def probe(self, guess: str) -> Code:
        return self.game.read_code(guess)

    def parse(self, history: History) -> list[tuple[Code, Answer]]:
        return [(self.game.parse_code(q), self.game.parse_answer(a)) for q, a in history]

    def narrowed(self, history: History, among: Candidates | None = None) -> Candidates:
        cands = self.start() if among is None else among
        for probe, answer in self.parse(history):
            cands = cands.narrow(probe, answer)
        return cands

    def next_guess(self, history: History, cands: Candidates | None = None) -> str | None:
        if history and history[-1][1] == self.game.format_answer(self.game.win):
            return None
        if cands is None:
            cands = self.narrowed(history)
        if not len(cands):
            raise Contradiction("no secret agrees with every answer")
        return self.game.format_code(self.chooser.choose(self.parse(history), cands))

    def conflict(self, history: History) -> Conflict:
        return explain(history, lambda h: len(self.narrowed(h)))


class LiveRacer:
    """The race without a tree: live play's questions; once the person has found my secret, only a
    candidate can still draw, so I ask one."""

    def __init__(self, walker: LiveWalker):
        self.walker = walker

    def choose(
        self, history: History, cands: Candidates, their_history: History, their_cands: Candidates, they_won: bool
    ) -> str:
        guess = self.walker.next_guess(history, cands)
        assert guess is not None  # the race goes on: I have not found the secret
        if they_won and self.walker.game.read_code(guess) not in cands:
            self.walker.chooser.last = "race"
            return cands.text(0)
        return guess


def play_out(walker: LiveWalker, secret: Code, limit: int = 100) -> list[tuple[str, float]]:
    """Play one game against `secret` with no session: each question with the seconds it took to choose."""
    from ..rules import feedback

    game = walker.game
    history: History = []
    cands = None
    out: list[tuple[str, float]] = []
    while len(out) < limit:
        start = time.perf_counter()
        if cands is None:
            guess = walker.first_guess()
        else:
            next_guess = walker.next_guess(history, cands)
            assert next_guess is not None  # the game goes on: it returns at the all-hits answer
            guess = next_guess
        out.append((guess, time.perf_counter() - start))
        answer = feedback(secret, game.read_code(guess))
        if answer == game.win:
            return out
        start = time.perf_counter()
        cands = (walker.start() if cands is None else cands).narrow(game.read_code(guess), answer)
        history.append((guess, game.format_answer(answer)))
        out[-1] = (guess, out[-1][1] + time.perf_counter() - start)
    raise RuntimeError(f"no solution of {game.format_code(secret)} within {limit} questions")


def live_walker(game: Game, seed: int = 0) -> LiveWalker:
    """Live play of `game`, from its shipped tree while the position is on it (when one exists)."""
    path = shipped_tree(game)
    return LiveWalker(game, seed, Walker.open(path) if path is not None else None)
