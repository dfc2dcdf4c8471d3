"""Walk a stored tree for any partial game: the next question and the remaining candidates.

Standard library and orjson only, so a program (or the player) answers instantly. Questions
that are not the tree's (a corrected answer, a question asked for another reason) are allowed:
the walker stays at the deepest tree node the history reaches, and skips that subtree's
questions whose answer every remaining candidate already determines.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..rules import Answer, Code, Game, feedback
from ..io.tree import Node, TreeDoc, load

History = list[tuple[str, str]]  # (question, answer) as written: ("0123", "1,2")


class Contradiction(ValueError):
    """No secret agrees with every answer given."""


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
        self._codes: list[Code] = self.game.codes()
        self._win = self.game.format_answer(self.game.win)

    @classmethod
    def load(cls, path: str | Path) -> "Walker":
        return cls(load(path))

    def parse(self, history: History) -> list[tuple[Code, Answer]]:
        """Read and check a history; GameError for a bad code or an impossible answer."""
        return [(self.game.parse_code(q), self.game.parse_answer(a)) for q, a in history]

    def candidates(self, history: History, among: list[Code] | None = None) -> list[Code]:
        """Every secret that gives each recorded answer to its question."""
        cands = self._codes if among is None else among
        for probe, answer in self.parse(history):
            cands = [c for c in cands if feedback(c, probe) == answer]
        return cands

    def node(self, history: History) -> Node:
        """The deepest tree node the history follows (off-tree questions leave it where it is)."""
        node = self.root
        for q, a in history:
            if node["guess"] == q and a != self._win:
                child = node.get("next", {}).get(a)
                if child is None:
                    break
                node = child
        return node

    def next_guess(self, history: History, cands: list[Code] | None = None) -> str | None:
        """The question to ask now; None when the last answer was all hits. Contradiction if no secret fits."""
        if history and history[-1][1] == self._win:
            return None
        if cands is None:
            cands = self.candidates(history)
        if not cands:
            raise Contradiction("no secret agrees with every answer")
        node = self.node(history)
        fmt = self.game.format_answer
        while True:
            probe = self.game.parse_code(node["guess"])
            only = _common_answer(cands, probe)
            if only is not None and only != self.game.win:
                child = node.get("next", {}).get(fmt(only))
                if child is not None:
                    node = child  # every candidate answers this the same way: nothing to learn
                    continue
            return node["guess"]

    def conflict(self, history: History) -> Conflict:
        """Explain a contradiction: a minimal set of answers that cannot all hold, and single-answer repairs."""
        items = list(range(len(history)))
        repairs = {}
        for i in items:
            left = len(self.candidates([h for j, h in enumerate(history) if j != i]))
            if left:
                repairs[i] = left
        core = list(items)
        for i in items:
            trial = [j for j in core if j != i]
            if not self.candidates([history[j] for j in trial]):
                core = trial
        return Conflict(core, repairs)


def _common_answer(cands: list[Code], probe: Code) -> Answer | None:
    """The answer every candidate gives to `probe`, or None as soon as two differ."""
    first = feedback(cands[0], probe)
    for c in cands[1:]:
        if feedback(c, probe) != first:
            return None
    return first
