"""Objectives as cost vectors: what a secret found at question r costs the tree (see engine.exact).

Every objective the engine proves is a non-decreasing vector cost[r], INF beyond a depth bound:
the total number of questions, feasibility within L questions, the secrets that need all L
questions, and (for the race) any vector given explicitly. A `Costs` is small and hashable: an
explicit head, a rule for the tail (cost[r] = r, or the last value repeated) and a cap; workers
expand it into the engine's array.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ..engine.exact import INF


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


def levels_for(n_codes: int) -> int:
    """The deepest question any useful tree can need: each question removes at least one code."""
    return n_codes + 1


def total(max_depth: int | None = None) -> Costs:
    """cost[r] = r: the total number of questions (the average times the number of secrets)."""
    return Costs("total" if max_depth is None else f"total-within-{max_depth}", (0,), "linear", max_depth)


def feasible(depth: int) -> Costs:
    """0 up to `depth` questions, INF beyond: value 0 exactly when a tree within `depth` exists."""
    return Costs(f"feasible-{depth}", (0,), "constant", depth)


def at_last_level(depth: int) -> Costs:
    """1 for each secret that needs exactly `depth` questions, INF beyond: fewest at the worst depth."""
    return Costs(f"fewest-at-{depth}", (0,) * depth + (1,), "constant", depth)


def within(depth: int) -> Costs:
    """0 up to `depth` questions, 1 beyond (no bound): the fewest secrets left after `depth` questions."""
    return Costs(f"within-{depth}", (0,) * (depth + 1) + (1,), "constant", None)


def against(depth_counts: list[int], rule: str = "tie", seat: str = "first") -> Costs:
    """A race against a fixed tree with these depth counts: the best response minimises this cost
    (see play.race.win_costs; our score is 1 - total / (2·ours·theirs))."""
    from ..play.race import win_costs

    return Costs(f"win-{rule}" + (f"-{seat}" if rule == "first" else ""), tuple(win_costs(depth_counts, rule, seat)),
                 "constant", None)


def from_name(name: str) -> Costs | None:
    """The objective a stage name (`Costs.name`) stands for: total, total-within-D, feasible-D, fewest-at-D,
    within-D; None for a race's, whose costs the name does not hold."""
    head, _, depth = name.rpartition("-")
    if name == "total":
        return total()
    if not depth.isdigit() or not 0 < int(depth) < 1000:
        return None
    builders = {"total-within": total, "feasible": feasible, "fewest-at": at_last_level, "within": within}
    return builders[head](int(depth)) if head in builders else None
