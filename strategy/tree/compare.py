"""Compare two trees of the same game: figures side by side and the first node where they differ."""

from __future__ import annotations

from dataclasses import dataclass

from ..files import printable
from .format import TreeDoc, TreeError, path_text
from .verify import Stats, path_json, verify


@dataclass(frozen=True)
class Difference:
    """Where two trees first differ: the path to the node, and what each asks there (`question`) or the answers
    each branches on (`answers`)."""

    at: list[tuple[str, str]]
    kind: str
    a: str | list[str]
    b: str | list[str]

    def text(self) -> str:
        if self.kind == "question":
            return f"at {path_text(self.at)}: {self.a} vs {self.b}"
        return f"at {path_text(self.at)}: answers {self.a} vs {self.b}"

    def to_json(self) -> dict:
        return {"at": path_json(self.at), "kind": self.kind, "a": self.a, "b": self.b}


def first_difference(a: dict, b: dict) -> Difference | None:
    """The first node, depth first in answer order, where the trees ask different questions or branch differently."""
    stack: list[tuple[dict, dict, list[tuple[str, str]]]] = [(a, b, [])]
    while stack:
        x, y, path = stack.pop()
        if x["guess"] != y["guess"]:
            return Difference(path, "question", x["guess"], y["guess"])
        nx_, ny = x.get("next", {}), y.get("next", {})
        if set(nx_) != set(ny):
            return Difference(path, "answers", sorted(nx_), sorted(ny))
        for answer in reversed(sorted(nx_, key=lambda s: tuple(int(v) for v in s.split(",")))):
            stack.append((nx_[answer], ny[answer], path + [(x["guess"], answer)]))
    return None


def _verified_pair(a: TreeDoc, b: TreeDoc) -> tuple[Stats, Stats]:
    if a.game != b.game:
        raise TreeError(f"the trees are for different games: {a.game.spec} and {b.game.spec}")
    return verify(a), verify(b)


def compare_json(a: TreeDoc, b: TreeDoc, names: tuple[str, str] = ("A", "B")) -> dict:
    """The comparison as data: each tree's objective and figures, and the first difference as fields (or null)."""
    from .report import stats_json

    sa, sb = _verified_pair(a, b)
    diff = first_difference(a.root, b.root)
    return {
        "game": a.game.spec,
        "trees": [
            {"tree": name, "objective": doc.objective, "stats": stats_json(s)}
            for name, doc, s in ((names[0], a, sa), (names[1], b, sb))
        ],
        "total_difference": sb.total - sa.total,
        "first_difference": None if diff is None else diff.to_json(),
    }


def compare(a: TreeDoc, b: TreeDoc, names: tuple[str, str] = ("A", "B")) -> str:
    """The comparison as text for a terminal (the names and objectives escaped)."""
    sa, sb = _verified_pair(a, b)
    names = (printable(names[0]), printable(names[1]))
    width = max(len(names[0]), len(names[1]), 8)
    lines = [f"game {a.game.spec}", f"{'':12}{names[0]:>{width}}  {names[1]:>{width}}  difference"]

    def row(label: str, x, y, diff=True) -> None:
        d = f"{y - x:+}" if diff and isinstance(x, int) else ""
        lines.append(f"{label:12}{str(x):>{width}}  {str(y):>{width}}  {d}")

    row("objective", printable(a.objective), printable(b.objective), diff=False)
    row("total", sa.total, sb.total)
    row("average", f"{sa.average:.4f}", f"{sb.average:.4f}", diff=False)
    row("worst", sa.worst, sb.worst)
    for d in range(1, max(len(sa.depth_counts), len(sb.depth_counts))):
        row(f"at {d}", _count(sa, d), _count(sb, d))
    diff = first_difference(a.root, b.root)
    lines.append("identical trees" if diff is None else f"first difference {diff.text()}")
    return "\n".join(lines)


def _count(stats: Stats, depth: int) -> int:
    return stats.depth_counts[depth] if depth < len(stats.depth_counts) else 0
