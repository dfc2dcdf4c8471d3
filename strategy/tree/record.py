"""The generator record of a tree file (`generator`): what made the tree and what is proven of it, built here
and nowhere else, so that every file says it the same way (the schema in tree.schema.json describes it)."""

from __future__ import annotations

from .. import __version__

TOOL = f"strategy {__version__}"


def built(
    strategy: str,
    consistent_only: bool,
    *,
    pilot: dict | None = None,
    first: str | None = None,
    seed: int | None = None,
) -> dict:
    """A greedy tree (`strategy build`): the rule, and the pilot's width and rollouts, the first question or the
    random rule's seed when they were given."""
    record = {"tool": TOOL, "strategy": strategy, "consistent_only": consistent_only}
    if pilot is not None:
        record["pilot"] = pilot
    if first is not None:
        record["first"] = first
    if seed is not None:
        record["seed"] = seed
    return record


def solved(consistent_only: bool, proven: dict, run: dict) -> dict:
    """A proven tree (`strategy solve`): the proven figures (deterministic) and the run (what varies)."""
    return {"tool": TOOL, "engine": "exact", "consistent_only": consistent_only, "proven": proven, "run": run}


def interrupted(
    lower_bound: int,
    objective: str,
    bound_of: str,
    proven_so_far: dict,
    consistent_only: bool,
    progress: float,
    relies_on: list[dict],
) -> dict:
    """The best tree an interrupted solve found (objective `partial`): not proven optimal; the proven lower bound
    of the stage it stopped in (`bound_of`), what its finished stages proved, and the share of the search
    settled."""
    record = {
        "tool": TOOL,
        "engine": "exact, interrupted",
        "proven_optimal": False,
        "lower_bound": lower_bound,
        "objective_of_the_search": objective,
        "bound_of": bound_of,
        "proven_so_far": proven_so_far,
        "consistent_only": consistent_only,
        "progress": round(progress, 6),
    }
    if relies_on:
        record["relies_on"] = relies_on
    return record


def improved(objective: str, generator: dict, endgames: dict) -> tuple[str, dict]:
    """A tree whose endgames `strategy improve` made exact: its objective and record. A proof made for the tree
    as it was no longer describes it once a subtree changed: the tree becomes a heuristic one (its bound on the
    game, which still holds, stays in a partial tree's record)."""
    record = {**generator, "exact_endgame": endgames}
    if endgames["improved"] and objective not in ("heuristic", "partial"):
        objective, record["improved_from"] = "heuristic", objective
        for claim in ("proven", "proven_optimal"):
            record.pop(claim, None)
    return objective, record
