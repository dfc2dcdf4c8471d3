"""Objectives as cost vectors: what a secret found at question r costs the tree (see engine.exact).

Every objective the engine proves is a non-decreasing vector cost[r], INF beyond a depth bound:
the total number of questions, feasibility within L questions, the secrets that need all L
questions, and (for the race) any vector given explicitly, each a `engine.searcher.Costs`.
"""

from __future__ import annotations

from typing import Callable

from ..engine.searcher import Costs


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
    (see `win_costs`; our score is 1 - total / (2·ours·theirs))."""
    return Costs(
        f"win-{rule}" + (f"-{seat}" if rule == "first" else ""),
        tuple(win_costs(depth_counts, rule, seat)),
        "constant",
        None,
    )


def win_costs(depths_b: list[int], rule: str = "tie", seat: str = "first") -> list[int]:
    """cost[r] of a secret we find at question r against B (twice the B secrets we lose or half-lose to):
    minimising the total maximises our score, which is 1 - total / (2·ours·theirs)."""
    nb = sum(depths_b)
    out = [0]
    below = 0  # B secrets found before question r
    for r in range(1, len(depths_b) + 1):
        at = depths_b[r] if r < len(depths_b) else 0
        if rule == "tie":
            out.append(2 * below + at)
        elif seat == "first":
            out.append(2 * below)
        else:
            out.append(2 * (below + at))
        below += at
    out.append(2 * nb)  # after B's last question every secret is lost
    return out


def from_name(name: str) -> Costs | None:
    """The objective a stage name (`Costs.name`) stands for: total, total-within-D, feasible-D, fewest-at-D,
    within-D; None for a race's, whose costs the name does not hold."""
    head, _, depth = name.rpartition("-")
    if name == "total":
        return total()
    if not depth.isdigit() or not 0 < int(depth) < 1000:
        return None
    builders: dict[str, Callable[[int], Costs]] = {
        "total-within": total,
        "feasible": feasible,
        "fewest-at": at_last_level,
        "within": within,
    }
    return builders[head](int(depth)) if head in builders else None
