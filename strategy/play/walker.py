"""Walk a stored tree for any partial game: the next question and the remaining candidates.

Standard library and orjson only, so a program (or the player) answers instantly; the candidates of a
session (`start`, `narrowed`) are NumPy arrays (`candidates`), loaded at the first answer. Questions
that are not the tree's (a corrected answer, a question asked for another reason) are allowed:
the walker stays at the deepest tree node the history reaches, and skips that subtree's
questions whose answer every remaining candidate already determines. Codes are strings at
this API (`"0123"`), as in the tree file; answers are `"H,B"`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

from ..rules import Answer, Code, Game, feedback
from ..tree.format import Node, TreeDoc, load, path_text

History = list[tuple[str, str]]  # (question, answer) as written: ("0123", "1,2")


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
        self.root: Node = doc.root
        self._win = self.game.format_answer(self.game.win)
        self._probes: dict[str, Code] = {}

    def probe(self, guess: str) -> Code:
        """A question of the tree as a code (read once: races and self-tests ask the same ones often)."""
        code = self._probes.get(guess)
        if code is None:
            code = self._probes[guess] = self.game.read_code(guess)
        return code

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Walker":
        return cls(load(path))

    def parse(self, history: History) -> list[tuple[Code, Answer]]:
        """Read and check a history; GameError for a bad code or an impossible answer."""
        return [(self.game.parse_code(q), self.game.parse_answer(a)) for q, a in history]

    def first_guess(self) -> str:
        """The first question: the root's (no candidate is listed before the first answer, which the
        candidates are made ready for meanwhile)."""
        prepare(self.start)
        return self.root["guess"]

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
        node, path = self.root, []
        for q, a in history:
            if node["guess"] == q and a != self._win:
                child = node.get("next", {}).get(a)
                if child is None:
                    break
                path.append((q, a))
                node = child
        return node, path

    def next_guess(self, history: History, cands: list[Code] | None = None) -> str | None:
        """The question to ask now; None after an all-hits answer.

        Contradiction if no secret fits the answers; TreeGap if the tree has no question that makes
        progress (it misses a secret the answers allow: a damaged tree, or one for another rule).
        """
        if history and history[-1][1] == self._win:
            return None
        if cands is None:
            cands = self.narrow(history)
        if not cands:
            raise Contradiction("no secret agrees with every answer")
        node, path = self.node(history)
        fmt = self.game.format_answer
        while True:
            probe = self.probe(node["guess"])
            only = _common_answer(cands, probe)
            if only is None or only == self.game.win:
                return node["guess"]
            child = node.get("next", {}).get(fmt(only))
            if child is None:
                where = path_text(path + [(node["guess"], fmt(only))])
                raise TreeGap(f"the tree has no branch {where}: it does not cover the "
                              f"{len(cands)} secret{'s' if len(cands) > 1 else ''} your answers allow "
                              f"(it is for {self.game.spec})")
            path.append((node["guess"], fmt(only)))
            node = child  # every candidate answers this the same way: nothing to learn

    def conflict(self, history: History) -> Conflict:
        """Explain a contradiction: a minimal set of answers that cannot all hold, and single-answer repairs."""
        return explain(history, lambda h: len(self.narrowed(h)))


def prepare(make: Callable[[], object]) -> None:
    """Call `make` in a daemon thread: the candidates (NumPy, and numba for live play) load while the person
    thinks about the first question; a program that answers at once waits for the rest, as it would have."""
    import threading

    threading.Thread(target=make, daemon=True).start()


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
