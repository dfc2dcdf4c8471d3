"""Trees known beforehand (given by the user, an earlier run's, a greedy tree, another stage's) and what a store
holds: what one costs under an objective, the cheapest tree made of several, node by node, and what may be
believed of them. The driver is guided by them and the best tree found is assembled from them.

Nothing a file claims is a proof: a given tree is an upper bound, its cost as the game prices it. The lower
bound a tree file's proof record claims is taken only from a file the user trusts (`trusted_bounds`, for
`strategy solve --trust`), named with its SHA-256 in every proof that uses it; a store's exact results are
checked against the game as they are read (`stored_result`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..engine.exact import INF
from ..engine.searcher import Costs
from ..engine.table import GameTable, split
from ..files import file_sha256, printable_name, quote
from ..rules import Game
from ..tree.format import TreeDoc, TreeError, load, tree_node
from ..tree.verify import impossible_question, verify
from .store import Store, Stored


@dataclass(frozen=True)
class Trusted:
    """A lower bound on a stage that the solve does not prove but takes from a file the user trusts
    (`strategy solve --trust`): what a proof that uses it relies on."""

    value: int
    file: str
    sha256: str
    store: bool = False  # a store's bounds (`strategy solve --store S --trust S`), not a tree file's claim
    inherited: tuple[Trusted, ...] = ()  # what the file's own proof relied on: a proof that uses it relies on them too

    def chain(self) -> list[Trusted]:
        """This file and every file its claim relied on, in turn."""
        return [self, *(t for parent in self.inherited for t in parent.chain())]

    def record(self) -> dict:
        return {"file": self.file, "sha256": self.sha256, **({"store": True} if self.store else {})}

    def said(self) -> str:
        """What the proof relies on, for a line of its report."""
        what = "the bounds stored in" if self.store else "the bound claimed by"
        return f"{what} {quote(self.file)} (sha256 {self.sha256})"


def store_trust(store: Store | None) -> list[Trusted]:
    """The store as what a result relies on, when the user trusts it and a row without this installation's seal
    was believed (none otherwise)."""
    if store is None or not store.relied_on:
        return []
    return [Trusted(0, printable_name(store.path), store.sha256, store=True)]


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
        probe = gt.probe_of(group[0])
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
            child_value, children[answer] = merged_tree(gt, cost, members[starts[c] : starts[c + 1]], d + 1, subtrees)
            value = min(int(INF), value + child_value)
        if value < best[0]:
            best = (value, tree_node(guess, children))
    return best


def stored_result(
    store: Store,
    key: str,
    gt: GameTable,
    cost: np.ndarray,
    S: np.ndarray,
    d: int,
    consistent_only: bool,
    probe: int | None = None,
) -> Stored | None:
    """What `store` holds for the set S reached after d questions (asking `probe` first, when the key is a
    probe's), checked against the game before it is believed: an exact value must come with a subtree that finds
    every secret of S (asking `probe` first, and only possible secrets under `consistent_only`) and costs exactly
    that value. The one store lookup of every search;
    a row that fails is refused in one line naming the store and the row (FileError). A stored lower bound
    cannot be checked short of the search it saves, so it is read as the solve's own work."""
    stored = store.get(key)
    if stored is None or not stored.exact:
        return stored
    tree = stored.tree
    if tree is None:  # every exact value a search stores comes with its subtree
        raise store.refused(key, "it holds an exact value with no subtree to show for it")
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
    probe = gt.probe_of(tree)
    if probe not in S:
        return False
    members, starts = split(gt.table, S, probe, len(gt.answers))
    return all(
        asks_candidates(gt, members[starts[c] : starts[c + 1]], tree["next"][gt.answer_str(c)])
        for c in range(len(gt.answers))
        if c != gt.win and starts[c + 1] > starts[c]
    )


def given_tree(path: str, game: Game, consistent_only: bool) -> TreeDoc:
    """A complete tree of `game` from a file, verified; under consistent_only it must ask only codes that may still
    be the secret, or it bounds a different search (TreeError)."""
    doc = load(path, game)
    verify(doc)
    if consistent_only:
        where = impossible_question(game, doc.root)
        if where:
            raise TreeError(f"{path!r}: {where} (--consistent-only compares only trees that ask possible secrets)")
    return doc


def trusted_bounds(path: str, doc: TreeDoc, gt: GameTable, consistent_only: bool) -> dict:
    """{objective stage: solve.Trusted} that the proof record of a file the user trusts claims (see
    `claimed_bounds`), each with the file's SHA-256; a claim above what the file's own tree costs under that stage
    is refused (TreeError)."""
    from . import objectives

    try:
        bounds = claimed_bounds(doc, consistent_only)
    except (KeyError, TypeError, ValueError):
        raise TreeError(f"{path!r}: a partial or proven tree without a valid bound in its generator") from None
    sha256 = file_sha256(path)
    g = doc.generator
    inherited = tuple(
        Trusted(0, r["file"], r["sha256"], bool(r.get("store")))
        for r in (g.get("relies_on") or (g.get("proven") or {}).get("relies_on") or [])
    )  # the loader checked their types
    out = {}
    for stage, bound in bounds.items():
        costs = objectives.from_name(stage)
        own = tree_cost(gt, doc.root, costs) if costs is not None else None
        if own is not None and bound > own:
            raise TreeError(
                f"{path!r} claims a lower bound of {bound} on {stage}, above its own tree's {own}: not a proof"
            )
        out[stage] = Trusted(bound, printable_name(path), sha256, inherited=inherited)
    return out


def claimed_bounds(doc: TreeDoc, consistent_only: bool) -> dict[str, int]:
    """{objective stage: lower bound} that a tree file claims: an interrupted solve's partial tree's bound, or the
    proven values of a solved tree (least total; least total within, or fewest at, its proven worst case), when
    they would bound this search: a bound proven with any probe also bounds a consistent-only search, not the other
    way round. A race's costs are not in its stage name, so its bound is never carried over."""
    g = doc.generator
    if not (consistent_only or not g.get("consistent_only")):
        return {}
    if doc.objective == "partial":
        stage = str(g.get("bound_of") or g.get("objective_of_the_search") or "")
        if not stage or stage.startswith("win"):
            return {}
        bounds = {stage: g["lower_bound"]}
    else:
        proven = g.get("proven") or {}
        if doc.objective == "total" and "total" in proven:
            bounds = {"total": proven["total"]}
        elif doc.objective.startswith("total-max-depth-") and "total" in proven:
            bounds = {f"total-within-{proven['max_depth']}": proven["total"]}
        elif doc.objective == "worst" and "worst" in proven:
            bounds = {f"total-within-{proven['worst']}": proven["total"]}
        elif doc.objective == "worst-then-fewest" and "worst" in proven:
            bounds = {f"fewest-at-{proven['worst']}": proven["fewest_at_worst"]}
        else:
            return {}
    for bound in bounds.values():
        if not isinstance(bound, int) or isinstance(bound, bool) or bound < 0:
            raise ValueError(f"lower_bound {bound!r}")
    return bounds
