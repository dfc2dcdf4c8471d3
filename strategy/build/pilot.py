"""The pilot method: a greedy rule made stronger by looking ahead with itself.

At every node of at least `above` secrets, the rule's own probe and its `width` next best probes (by the
rule's score) are each judged by the total of the whole greedy tree they lead to (a rollout), and the least
total wins; ties keep the rule's own probe, then the better score. The children big enough are treated the
same way, the others keep the rollout's subtrees. Each node's tree is then never worse than its rollout, so
the pilot tree is never worse than the plain greedy tree (Voss, Fink & Duin, "Looking ahead with the pilot
method", Annals of Operations Research 136, 2005).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine import greedy
from ..engine.symmetry import position_perms
from ..engine.table import GameCodes, game_codes
from ..rules import Game, GameError
from .greedy import STRATEGIES, Built, build_arrays, klogk_table


@dataclass(frozen=True)
class _Node:
    """The secrets left at a node and the questions that led there."""

    cand: np.ndarray
    history: tuple[int, ...]


class _Pilot:
    """One pilot build's fixed arguments: the game's layout and the rule."""

    def __init__(self, gc: GameCodes, strategy: str, consistent_only: bool, width: int, above: int):
        g = gc.game
        self.gc, self.strategy, self.consistent_only, self.width, self.above = (
            gc,
            strategy,
            consistent_only,
            width,
            above,
        )
        self.rule = greedy.RULES[strategy]
        self.layout: tuple[np.ndarray, np.ndarray, np.ndarray] = greedy.code_layout(
            gc.codes, g.symbols
        )  # sym, occ, cnt
        self.symmetry = (
            gc.codes,
            gc.masks,
            position_perms(g.length, not g.leading_zero),
            g.symbols,
            not g.leading_zero,
            self.layout,
            gc.lut,
            gc.width,
            consistent_only,
        )
        self.klogk = klogk_table(gc.size)
        self.rollouts = 0

    def rollout(self, node: _Node, first: int | None) -> tuple[Built, int]:
        """The greedy tree of the node's secrets with `first` asked first (the rule's choice if None), and its
        total counted from this node."""
        self.rollouts += 1
        built = build_arrays(
            self.gc,
            self.strategy,
            self.consistent_only,
            first,
            progress=False,
            candidates=node.cand,
            history=node.history,
        )
        return built, built.stats().total

    def ranked(self, node: _Node, own: int) -> list[int]:
        """The node's probes that split it, other than `own`, best score first (ties: may be the secret, then the
        lowest)."""
        gc = self.gc
        pool = greedy.node_pool(*self.symmetry, node.cand, np.array(node.history, dtype=np.int64))
        score, cons, splits = greedy.probe_scores(
            self.layout, gc.lut, gc.width, node.cand, pool, len(gc.answers), gc.win, self.rule, self.klogk
        )
        order = np.lexsort((pool, ~cons, np.round(score, 9)))
        return [p for p in pool[order[splits[order]]].tolist() if p != own]

    def children(self, node: _Node, probe: int) -> dict[str, _Node]:
        """The node's secrets split by their answer to `probe` (the win answer left out), by answer text."""
        gc, n = self.gc, len(node.cand)
        perm, starts = node.cand.copy(), np.empty(len(gc.answers) + 1, dtype=np.int64)
        greedy.split_range(
            *self.layout, gc.lut, gc.width, perm, 0, n, probe, len(gc.answers), np.empty(n, dtype=np.int64), starts
        )
        history = (*node.history, probe)
        return {
            gc.answer_str(c): _Node(perm[starts[c] : starts[c + 1]], history)
            for c in range(len(gc.answers))
            if c != gc.win and starts[c + 1] > starts[c]
        }

    def tree(self, node: _Node, first: int | None, done) -> dict:
        """The pilot tree of a node (its first question `first` if given), reporting settled secrets to `done`."""
        best, best_total = self.rollout(node, first)
        if first is None:
            for probe in self.ranked(node, best.first)[: self.width]:
                built, total = self.rollout(node, probe)
                if total < best_total:
                    best, best_total = built, total
        best_tree = best.tree()
        children = self.children(node, best.first)
        done(len(node.cand) - sum(len(child.cand) for child in children.values()))
        for label, child in children.items():
            if len(child.cand) >= self.above:
                best_tree["next"][label] = self.tree(child, None, done)
            else:
                done(len(child.cand))
        return best_tree


def build_pilot(
    game: Game | GameCodes,
    strategy: str,
    width: int,
    above: int,
    consistent_only: bool = False,
    first: int | None = None,
    progress: bool = True,
):
    """The pilot tree of `strategy` over every secret: (tree as nested dicts, Stats measured by playing every
    secret through it, number of rollouts). `width`: probes tried besides the rule's own; `above`: the
    smallest node that is piloted."""
    if strategy not in STRATEGIES or strategy == "random-consistent":
        raise GameError(f"the pilot needs a scoring rule, not {strategy!r}")
    if width < 1 or above < 2:
        raise GameError("the pilot needs a width of at least 1 and nodes of at least 2 secrets")
    gc = game_codes(game if isinstance(game, Game) else game.game)
    pilot = _Pilot(gc, strategy, consistent_only, width, above)
    from tqdm import tqdm

    with tqdm(
        total=gc.size, unit="secret", delay=1.0, disable=not progress, desc=f"{strategy} pilot", leave=False
    ) as bar:
        root = pilot.tree(_Node(np.arange(gc.size, dtype=np.int32), ()), first, bar.update)
    from ..tree.verify import measure

    return root, measure(gc.game, root)[0], pilot.rollouts
