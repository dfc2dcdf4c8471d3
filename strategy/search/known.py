"""Trees known beforehand (an earlier run's, a greedy tree, another stage's): what one costs under an objective,
and the cheapest tree made of several, node by node. The driver is guided by them and the best tree found is
assembled from them."""
from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

from ..engine.exact import INF
from ..feedback_table import GameTable, split
from .objectives import Costs
from .store import Store, Stored
from .worker import tree_node


def tree_cost(gt: GameTable, tree: dict, costs: Costs, S: np.ndarray | None = None, d: int = 0) -> int:
    """What a tree for the secrets S (default: all) reached after d questions costs under the objective (INF
    beyond its depth bound), priced from the feedback table as `merged_tree` prices one tree."""
    S = np.arange(gt.size, dtype=np.int32) if S is None else S
    return merged_tree(gt, cost_array(costs, gt.size), S, d, [tree])[0]


@functools.lru_cache(maxsize=16)
def cost_array(costs: Costs, n_codes: int) -> np.ndarray:
    """costs.array(n_codes), built once (a Python loop over every depth a game allows, priced per subtree)."""
    return costs.array(n_codes)


def merged_tree(gt: GameTable, cost: np.ndarray, S: np.ndarray, d: int, trees: Sequence[dict]) -> tuple[int, dict]:
    """The cheapest tree for the secrets S reached after d questions whose every node is the node of one of
    `trees` (complete trees for S) at the same place, with its cost: where several ask the same question,
    each answer takes the cheapest of their subtrees. Ties go to the earlier tree."""
    best: tuple[int, dict] = (int(INF), trees[0])
    groups: dict[str, list[dict]] = {}
    for t in trees:
        groups.setdefault(t["guess"], []).append(t)
    for guess, group in groups.items():
        probe = gt.index(gt.game.read_code(guess))
        members, starts = split(gt.table, S, probe, len(gt.answers))
        value = int(cost[d + 1]) if starts[gt.win + 1] > starts[gt.win] else 0
        children = {}
        for c in range(len(gt.answers)):
            if c == gt.win or starts[c + 1] == starts[c]:
                continue
            answer = gt.answer_str(c)
            subtrees = [t["next"][answer] for t in group if answer in t.get("next", {})]
            if not subtrees:  # not a tree for S: some secret is never found
                value = int(INF)
                break
            child_value, children[answer] = merged_tree(gt, cost, members[starts[c]:starts[c + 1]], d + 1, subtrees)
            value = min(int(INF), value + child_value)
        if value < best[0]:
            best = (value, tree_node(guess, children))
    return best


def stored_result(store: Store, key: str, gt: GameTable, cost: np.ndarray, S: np.ndarray, d: int,
                  consistent_only: bool, probe: int | None = None) -> Stored | None:
    """What `store` holds for the set S reached after d questions (asking `probe` first, when the key is a
    probe's), checked against the game before it is believed: an exact value must come with a subtree that finds
    every secret of S (asking `probe` first, and only possible secrets under `consistent_only`) and costs exactly
    that value. The one store lookup of every search;
    a row that fails is refused in one line naming the store and the row (FileError). A stored lower bound
    cannot be checked short of the search it saves, so it is read as the solve's own work."""
    stored = store.get(key)
    if stored is None or not stored.exact or stored.tree is None:
        return stored
    tree = stored.tree
    if probe is not None and tree.get("guess") != gt.code_str(probe):
        raise store.refused(key, f"its subtree asks {tree.get('guess')!r} first, not {gt.code_str(probe)}")
    try:
        value, tree = merged_tree(gt, cost, S, d, [tree])
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError):
        value = int(INF)
    if value >= INF:
        raise store.refused(key, f"its subtree is not a tree of the {len(S)} secrets it is stored for")
    if value != stored.value:
        raise store.refused(key, f"its value {stored.value} is not its subtree's cost {value}")
    if consistent_only and not asks_candidates(gt, S, tree):
        raise store.refused(key, "its subtree asks a code that cannot be the secret, in a consistent-only store")
    return Stored(stored.value, True, tree, stored.seconds)


def asks_candidates(gt: GameTable, S: np.ndarray, tree: dict) -> bool:
    """True when every question of a tree for S (one `merged_tree` returns) is a code that may still be the secret."""
    probe = gt.index(gt.game.read_code(tree["guess"]))
    if probe not in S:
        return False
    members, starts = split(gt.table, S, probe, len(gt.answers))
    return all(asks_candidates(gt, members[starts[c]:starts[c + 1]], tree["next"][gt.answer_str(c)])
               for c in range(len(gt.answers)) if c != gt.win and starts[c + 1] > starts[c])
