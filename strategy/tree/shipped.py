"""The trees that ship with the package (`strategy/trees/`, read through importlib.resources), and the names by
which every command that takes a TREE finds them.

A shipped tree is named by its file: `bulls-4x10-total`, `mastermind-5x7-worst`, `bulls-5x10-best-found`,
`race-bulls-4x10-strongest`. A game names its least-total tree, or for an open game its best tree found
(`bulls:4x10` is `bulls-4x10-total`, `bulls:5x10` is `bulls-5x10-best-found`); a game and an objective name
another (`bulls:4x10/worst`). Every shipped tree is verified over every secret by the tests.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..rules import GameError, parse_game

SHIPPED = Path(str(resources.files("strategy").joinpath("trees")))
SUFFIXES = (".json", ".json.gz")


class UnknownTree(GameError):
    """A TREE argument that is neither a file nor the name of a shipped tree."""


def names() -> list[str]:
    """The names of the shipped trees, sorted."""
    if not SHIPPED.is_dir():
        return []
    return sorted(p.name.removesuffix(".gz").removesuffix(".json") for p in SHIPPED.iterdir()
                  if p.name.endswith(SUFFIXES))


def path_of(name: str) -> Path | None:
    """The file of a shipped tree, or None."""
    for suffix in SUFFIXES:
        path = SHIPPED / f"{name}{suffix}"
        if path.is_file():
            return path
    return None


def stem(spec: str) -> str:
    """The file-name form of a game spec: bulls:4x10:nz -> bulls-4x10-nz."""
    return parse_game(spec).spec.replace(":", "-")


def find(argument: str) -> str:
    """The file a TREE argument stands for: a file that exists (or `-`, standard input), else a shipped tree's name,
    else a game (GAME, or GAME/OBJECTIVE) that names one; UnknownTree, in one line, otherwise."""
    if argument == "-" or os.path.exists(argument):
        return argument
    path = path_of(argument)
    if path is None and ":" in argument:
        spec, _, objective = argument.partition("/")
        try:
            base = stem(spec)
        except GameError:
            base = None
        if base is not None:
            tried = [f"{base}-{objective}"] if objective else [f"{base}-total", f"{base}-best-found"]
            path = next((p for p in map(path_of, tried) if p is not None), None)
            if path is None:
                kinds = [n.removeprefix(base + "-") for n in names()
                         if n.startswith(base + "-") and not n.removeprefix(base + "-").startswith("nz-")]
                have = f"; shipped for {spec}: {', '.join(kinds)}" if kinds else f"; none ships for {spec}"
                raise UnknownTree(f"no shipped tree {argument!r}{have} (strategy trees lists them)")
    if path is None:
        raise UnknownTree(f"{argument!r} is neither a file nor a shipped tree (strategy trees lists them; a game such "
                          f"as bulls:4x10 names its least-total tree)")
    return str(path)


@dataclass(frozen=True)
class Listed:
    """A shipped tree as `strategy trees` lists it: what its file's record says."""

    name: str
    game: str
    objective: str
    proven: str
    total: int
    average: float
    worst: int

    def to_json(self) -> dict:
        return {"name": self.name, "game": self.game, "objective": self.objective, "proven": self.proven,
                "total": self.total, "average": round(self.average, 4), "worst": self.worst}


def listing() -> list[Listed]:
    """Every shipped tree with the figures of its record (the tests verify each file over every secret)."""
    from .format import load

    out = []
    for name in names():
        path = path_of(name)
        assert path is not None
        doc = load(path)
        stats = doc.stats or {}
        out.append(Listed(name, doc.game.spec, doc.objective, proof_of(doc), stats.get("total", 0),
                          stats.get("total", 0) / max(1, stats.get("secrets", 1)), stats.get("worst", 0)))
    return out


def proof_of(doc) -> str:
    """What a shipped tree's record says is proven of it, in a few words."""
    g = doc.generator
    if doc.objective == "partial":
        return f"lower bound {g.get('lower_bound')} (best found)"
    proven = g.get("proven") or {}
    if "score" in proven:
        return f"best response, score {proven['score']}"
    parts = [f"{key.replace('_', ' ')} {value}" for key, value in proven.items()
             if key in ("total", "worst", "fewest_at_worst", "max_depth")]
    return ", ".join(parts) if parts else "heuristic"
