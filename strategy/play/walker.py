"""Walk a stored tree for any partial game: the next question and the remaining candidates.

Standard library and orjson only, so a program (or the player) answers instantly; the candidates of a
session (`start`, `narrowed`) are NumPy arrays (`candidates`), loaded at the first answer. Questions
that are not the tree's (a corrected answer, a question asked for another reason) are allowed:
once the history leaves the tree's path, the next question comes from the exact engine
(`advice.off_tree_question`, loaded then, in games of up to 10,000 codes: the best question, or with more
than a second of search needed, whichever of the engine's candidate and the tree's own continuation has the
least proven total); with one or two secrets left, the first of them, which is optimal. The tree's continuation
stays at the deepest tree node the history reaches, and skips that subtree's questions whose answer
every remaining candidate already determines. Codes are strings at this API (`"0123"`), as in the
tree file; answers are `"H,B"`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from ..rules import Answer, Code, Game, feedback
from ..tree.format import Node, TreeDoc, load, path_text

History = list[tuple[str, str]]  # (question, answer) as written: ("0123", "1,2")
if TYPE_CHECKING:
    from .candidates import Candidates

    Codes = list[Code] | Candidates  # the secrets still possible: a list of codes, or a session's candidates


class Contradiction(ValueError):
    """No secret agrees with every answer given."""


class TreeGap(ValueError):
    """The tree has no question for this history: it does not cover a secret the answers allow."""


@dataclass(frozen=True)
class Conflict:
    """Why the answers contradict each other: a smallest set that cannot all be true, and the repairs."""

    core: list[int]  # indices into the history of answers that cannot all be true
    repairs: dict[int, int]  # index -> secrets left if that one answer were dropped


class Walker:
    """A tree with its game: next_guess(history) and candidates(history) for any partial history."""

    def __init__(self, doc: TreeDoc):
        self.doc = doc
        self.game: Game = doc.game
        self._win = self.game.format_answer(self.game.win)
        self._probes: dict[str, Code] = {}

    @property
    def root(self) -> Node:
        """The tree (a shipped tree's is parsed at its first use: `format.LazyTreeDoc`)."""
        return self.doc.root

    def probe(self, guess: str) -> Code:
        """A question of the tree as a code (read once: races and self-tests ask the same ones often)."""
        code = self._probes.get(guess)
        if code is None:
            code = self._probes[guess] = self.game.read_code(guess)
        return code

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Walker":
        """The walker of a tree file, read and validated whole (`format.load`)."""
        return cls(load(path))

    @classmethod
    def open(cls, path: str | os.PathLike) -> "Walker":
        """The walker of the player: a shipped tree vouched for by the package's manifest is read lazily, its root's
        question at once; any other file is read and validated whole (`shipped.open_tree`)."""
        from ..tree.shipped import open_tree

        return cls(open_tree(path))

    def parse(self, history: History) -> list[tuple[Code, Answer]]:
        """Read and check a history; GameError for a bad code or an impossible answer."""
        return [(self.game.parse_code(q), self.game.parse_answer(a)) for q, a in history]

    def first_guess(self) -> str:
        """The first question: the root's (no candidate is listed before the first answer, and a shipped tree is not
        parsed before it: `warm` readies both while the answer is awaited)."""
        return self.doc.first_question()

    def warm(self) -> None:
        """Parse the tree and list the candidates (NumPy is loaded then) in a thread: called when the first question
        is out and its answer awaited. Whatever is not ready when the answer comes is made then (both are kept)."""
        prepare(lambda: (self.root, self.start()))

    def start(self):
        """Every code of the game as a `candidates.Candidates` (NumPy is loaded here, not before)."""
        from .candidates import every

        return every(self.game)

    def narrowed(self, history: History, among=None):
        """The `Candidates` (default: of every code) that give each recorded answer."""
        cands = self.start() if among is None else among
        for probe, answer in self.parse(history):
            cands = cands.narrow(probe, answer)
        return cands

    def narrow(self, history: History, among: list[Code] | None = None) -> list[Code]:
        """Every secret (as a tuple) among `among` (default: all) that gives each recorded answer."""
        cands = self.game.codes() if among is None else among
        for probe, answer in self.parse(history):
            cands = [c for c in cands if feedback(c, probe) == answer]
        return cands

    def candidates(self, history: History) -> list[str]:
        """Every secret that gives each recorded answer to its question."""
        fmt = self.game.format_code
        return [fmt(c) for c in self.narrow(history)]

    def node(self, history: History) -> tuple[Node, list[tuple[str, str]]]:
        """The deepest tree node the history follows (off-tree questions leave it where it is), and its path."""
        node, path, _ = self._follow(history)
        return node, path

    def _follow(self, history: History) -> tuple[Node, list[tuple[str, str]], bool]:
        """`node` and whether some question of the history is not the tree's at the node reached (off its path)."""
        node, path, off = self.root, [], False
        for q, a in history:
            if node["guess"] != q:
                off = True
            elif a != self._win:
                child = node.get("next", {}).get(a)
                if child is None:
                    break
                path.append((q, a))
                node = child
        return node, path, off

    def next_guess(self, history: History, cands: Codes | None = None) -> str | None:
        """The question to ask now; None after an all-hits answer. On the tree's path, the tree's; off it, the
        engine's best (see the module).

        Contradiction if no secret fits the answers; TreeGap if the tree has no question that makes
        progress on its path (it misses a secret the answers allow: a damaged tree, or one for another rule).
        """
        if history and history[-1][1] == self._win:
            return None
        if cands is None:
            cands = self.narrow(history)
        if not cands:
            raise Contradiction("no secret agrees with every answer")
        node, path, off = self._follow(history)
        if not off:
            return self._tree_guess(node, path, cands)
        if len(cands) <= 2:  # ask one of them: 1 question, or 1 + 2 (any other question costs at least 2 + 2)
            return self.game.format_code(min(cands))
        from .advice import COACH_MAX_CODES, off_tree_question  # the engine, loaded only now

        if self.game.count() > COACH_MAX_CODES:  # no feedback table built behind a player's back
            return self._tree_guess(node, path, cands)
        return off_tree_question(self.game, history, lambda: self.tree_option(history, cands))

    def tree_option(self, history: History, cands: Codes) -> tuple[str, int] | None:
        """The tree's own question from here and the questions its play needs over `cands` (None if it has no
        branch for some of them)."""
        try:
            node, path = self.node(history)
            return self._tree_guess(node, path, cands), self.tree_total(history, cands)
        except TreeGap:
            return None

    def tree_total(self, history: History, cands: Codes) -> int:
        """The questions the tree's play (its question from the deepest node reached, as off-tree histories are
        walked) needs from here, this one included, summed over `cands`; TreeGap if it misses one of them."""
        total = 0
        stack = [(list(history), cands, 1)]
        while stack:
            hist, part, depth = stack.pop()
            node, path = self.node(hist)
            guess = self._tree_guess(node, path, part)
            probe = self.probe(guess)
            parts: dict = {}
            for c in part:
                parts.setdefault(feedback(c, probe), []).append(c)
            for answer, sub in parts.items():
                if answer == self.game.win:
                    total += depth
                else:  # every question the tree's play asks splits its part or finds a secret: this ends
                    stack.append((hist + [(guess, self.game.format_answer(answer))], sub, depth + 1))
        return total

    def _tree_guess(self, node: Node, path: list[tuple[str, str]], cands: Codes) -> str:
        path = list(path)
        fmt = self.game.format_answer
        while True:
            probe = self.probe(node["guess"])
            only = _common_answer(cands, probe)
            if only is None or only == self.game.win:
                return node["guess"]
            child = node.get("next", {}).get(fmt(only))
            if child is None:
                where = path_text(path + [(node["guess"], fmt(only))])
                raise TreeGap(
                    f"the tree has no branch {where}: it does not cover the "
                    f"{len(cands)} secret{'s' if len(cands) > 1 else ''} your answers allow "
                    f"(it is for {self.game.spec})"
                )
            path.append((node["guess"], fmt(only)))
            node = child  # every candidate answers this the same way: nothing to learn

    def conflict(self, history: History) -> Conflict:
        """Explain a contradiction: a minimal set of answers that cannot all hold, and single-answer repairs."""
        return explain(history, lambda h: len(self.narrowed(h)))


def prepare(make: Callable[[], object]) -> None:
    """Call `make` in a daemon thread: the candidates (NumPy, and numba for live play) load while the person
    thinks about the first question; a program that answers at once waits for the rest, as it would have."""
    import threading

    def run() -> None:
        try:
            make()
        except Exception:  # noqa: BLE001 - the main thread does the same work when it needs it, and meets the error
            pass

    threading.Thread(target=run, daemon=True).start()


def explain(history: History, left: Callable[[History], int]) -> Conflict:
    """A contradiction's explanation, from `left(history)`: how many secrets agree with a history."""
    items = list(range(len(history)))
    repairs = {}
    for i in items:
        count = left([h for j, h in enumerate(history) if j != i])
        if count:
            repairs[i] = count
    core = list(items)
    for i in items:
        trial = [j for j in core if j != i]
        if not left([history[j] for j in trial]):
            core = trial
    return Conflict(core, repairs)


def _common_answer(cands, probe: Code) -> Answer | None:
    """The answer every candidate gives to `probe`, or None as soon as two differ."""
    if not isinstance(cands, list):
        return cands.common_answer(probe)
    first = feedback(cands[0], probe)
    for c in cands[1:]:
        if feedback(c, probe) != first:
            return None
    return first
