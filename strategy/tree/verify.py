"""The verifier: walk every secret of the game through a tree with the game's own rules.

Standard library only, so the player can report exact figures too. A tree passes
when every secret ends with all hits, every branch is reached, and the stored
stats (if any) equal what the walk measured.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from ..rules import Game, feedback
from .format import Node, TreeDoc, TreeError, load, path_text, walk, walk_secrets
from .race import RULES
from .race import score as race_score


class VerifyError(TreeError):
    """The tree does not solve the game as claimed; one line naming the first problem. `kind` says which check
    failed (`unsolved`: a secret the tree does not find, `unreached`: a branch no secret reaches, `stats`: a stored
    figure the walk does not give) and `details` its particulars, for a report to programs."""

    def __init__(self, message: str, kind: str = "unsolved", **details: object):
        super().__init__(message)
        self.kind = kind
        self.details = details

    def to_json(self) -> dict:
        return {"kind": self.kind, "message": str(self), **self.details}


def path_json(path: list[tuple[str, str]]) -> list[dict]:
    """A path in the tree as data: each question and the answer taken."""
    return [{"code": guess, "answer": answer} for guess, answer in path]


@dataclass(frozen=True)
class Stats:
    """Measured performance of a tree over all secrets."""

    secrets: int
    total: int
    worst: int
    depth_counts: list[int]

    @property
    def average(self) -> float:
        return self.total / self.secrets if self.secrets else 0.0

    def to_json(self) -> dict:
        return {"secrets": self.secrets, "total": self.total, "worst": self.worst, "depth_counts": self.depth_counts}


def measure(game: Game, root: Node, secrets: list[tuple[int, ...]] | None = None) -> tuple[Stats, dict[str, int]]:
    """Play every secret (or the given ones) through the tree; return stats and the depth per secret."""
    fmt = {a: game.format_answer(a) for a in game.answers()}
    win = game.win
    parse: dict[str, tuple[int, ...]] = {}
    visits: dict[int, int] = {}
    depths: dict[str, int] = {}
    counts: list[int] = [0]
    for secret in secrets if secrets is not None else game.codes():
        node, depth, path = root, 1, []
        while True:
            guess = node["guess"]
            probe = parse.get(guess)
            if probe is None:
                probe = parse[guess] = game.parse_code(guess)
            visits[id(node)] = visits.get(id(node), 0) + 1
            answer = feedback(secret, probe)
            if answer == win:
                break
            key = fmt[answer]
            path.append((guess, key))
            child = node.get("next", {}).get(key)
            if child is None:
                where = "a leaf" if "next" not in node else "a node"
                raise VerifyError(
                    f"secret {game.format_code(secret)} is not solved: {where} at {path_text(path[:-1])} "
                    f"asks {guess}, answer {key} has no branch",
                    "unsolved",
                    secret=game.format_code(secret),
                    at=path_json(path[:-1]),
                    code=guess,
                    answer=key,
                )
            node, depth = child, depth + 1
        depths[game.format_code(secret)] = depth
        while len(counts) <= depth:
            counts.append(0)
        counts[depth] += 1
    if secrets is None:
        _check_reached(root, visits)
    total = sum(d * c for d, c in enumerate(counts))
    return Stats(sum(counts), total, len(counts) - 1 if len(counts) > 1 else 0, counts), depths


def _check_reached(root: Node, visits: dict[int, int]) -> None:
    for node, path in walk(root):
        if id(node) not in visits:
            raise VerifyError(
                f"branch {path_text(path)} is never reached by any secret", "unreached", at=path_json(path)
            )


def impossible_question(game: Game, root: Node) -> str | None:
    """Where the tree asks a code that can no longer be the secret (None if it never does): a tree
    that a consistent-only search may be compared with asks only possible secrets."""
    for node, path, secrets in walk_secrets(root, game):
        if game.parse_code(node["guess"]) not in secrets:
            return f"{path_text(path)} asks {node['guess']}, which cannot be the secret there"
    return None


def _brief(value: object, limit: int = 80) -> str:
    """A value from a file as an error line shows it: cut short, so that a forged list of millions stays one line."""
    text = str(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def verify(doc: TreeDoc) -> Stats:
    """Check the tree solves every secret and its stored stats are true; VerifyError otherwise."""
    stats, _ = measure(doc.game, doc.root)
    if doc.stats is not None:
        measured = stats.to_json()
        for key, value in measured.items():
            if doc.stats.get(key) != value:
                raise VerifyError(
                    f"stored stats.{key} = {_brief(doc.stats.get(key))} but the tree gives {_brief(value)}",
                    "stats",
                    field=key,
                    stored=doc.stats.get(key),
                    measured=value,
                )
    _check_record(doc, stats)
    return stats


def _check_record(doc: TreeDoc, stats: Stats) -> None:
    """A proof record's figures about the tree itself must be what the walk gives: its proven total, worst case and
    fewest at it are its own, it keeps within the depth its record or objective names, a within-K tree finds the
    secrets it says, a partial tree is not proven optimal, and a lower bound on the least total (or on the least
    total within a depth it keeps to) is at most its own total. This does not prove a claim (only a solve does, see
    `strategy solve`), but a record that contradicts its own tree is refused (VerifyError, kind `record`)."""
    g = doc.generator
    proven = g.get("proven") or {}
    claims: list[tuple[str, object, object]] = []  # (field, claimed, what the tree gives)
    for field, own in (("total", stats.total), ("worst", stats.worst)):
        if field in proven:
            claims.append((f"proven.{field}", proven[field], own))
    if "fewest_at_worst" in proven:
        claims.append(("proven.fewest_at_worst", proven["fewest_at_worst"], stats.depth_counts[stats.worst]))
    depth = _depth_named(doc.objective, "total-max-depth-")
    for name, bound in (("proven.max_depth", proven.get("max_depth")), (f"objective {doc.objective}", depth)):
        if isinstance(bound, int) and stats.worst > bound:
            claims.append((name, f"at most {bound} questions", f"{stats.worst}"))
    within = _depth_named(doc.objective, "within-") or proven.get("within")
    if isinstance(within, int):
        found = sum(stats.depth_counts[: within + 1])
        if "found" in proven:
            claims.append(("proven.found", proven["found"], found))
        if "missed" in proven:
            claims.append(("proven.missed", proven["missed"], stats.secrets - found))
    if {"against_depth_counts", "score", "cost", "rule", "seat"} & proven.keys():
        claims.extend(_race_claims(doc.objective, proven, stats))
    if doc.objective == "partial" and g.get("proven_optimal") not in (None, False):
        claims.append(("proven_optimal", g["proven_optimal"], "a partial tree, not proven optimal"))
    if "lower_bound" in g:
        stage = str(g.get("bound_of") or g.get("objective_of_the_search") or "total")
        keeps = stage == "total" or stats.worst <= (_depth_named(stage, "total-within-") or -1)
        if keeps and isinstance(g["lower_bound"], int) and g["lower_bound"] > stats.total:
            claims.append(("lower_bound", g["lower_bound"], stats.total))
    for name, claimed, measured in claims:
        if claimed != measured:
            raise VerifyError(
                f"its proof record says {name} = {_brief(claimed)} but the tree gives {_brief(measured)}: the record does not "
                f"describe this tree",
                "record",
                field=name,
                stored=claimed,
                measured=measured,
            )


def _race_claims(objective: str, proven: dict, stats: Stats) -> list[tuple[str, object, object]]:
    """A race's best response (objective win-RULE[-SEAT]): the record names its opponent by depth counts over the
    game's secrets, its rule and seat as its objective does, and the score and cost of its own depth counts."""
    against, rule, seat = proven.get("against_depth_counts"), proven.get("rule"), proven.get("seat")
    named = f"win-{rule}" + (f"-{seat}" if rule == "first" else "")
    if rule not in RULES or (seat is None) != (rule == "tie") or seat not in (None, "first", "second"):
        return [("proven.rule and seat", f"{rule}, {seat}", "tie with no seat, or first with seat first or second")]
    if objective != named:
        return [(f"objective {objective}", objective, f"{named}, as its rule and seat say")]
    if not isinstance(against, list) or sum(against) != stats.secrets:
        counted = sum(against) if isinstance(against, list) else "no"
        return [("proven.against_depth_counts", f"{counted} secrets", f"{stats.secrets} secrets, the game's")]
    scored = race_score(stats.depth_counts, against, rule, seat or "first")
    claims: list[tuple[str, object, object]] = []
    if "score" in proven:  # as written when it is the tree's own (a fraction written otherwise is the same)
        claimed = proven["score"]
        claims.append(("proven.score", claimed, claimed if _fraction(claimed) == scored else str(scored)))
    if "cost" in proven:  # the best response's total cost: our score is 1 - cost / (2·ours·theirs), an integer
        claims.append(("proven.cost", proven["cost"], int((1 - scored) * 2 * stats.secrets * sum(against))))
    return claims


def _fraction(text: object) -> Fraction | None:
    """A record's fraction ("521201/1036800": ASCII, at most 100 characters), or None when it is none."""
    if not (isinstance(text, str) and len(text) <= 100 and text.isascii() and "_" not in text):
        return None
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        return None


def _depth_named(name: str, prefix: str) -> int | None:
    """D of an objective or stage named `prefix` + D (total-max-depth-5, within-4), None for another name."""
    rest = name[len(prefix) :] if name.startswith(prefix) else ""
    return int(rest) if rest.isascii() and rest.isdigit() and len(rest) <= 6 else None


_VERIFIED: dict[tuple[str, int, int], Stats] = {}


def verify_file(path: str | os.PathLike) -> tuple[TreeDoc, Stats]:
    """Load a tree file and verify it. The walk is done once per process while the file is unchanged (same
    path, size and modification time): the tools that report on every shipped tree, and the tests that run
    them in one process, share it."""
    where = Path(path).resolve()
    st = where.stat()
    key = (str(where), st.st_mtime_ns, st.st_size)
    doc = load(where)
    if key not in _VERIFIED:
        _VERIFIED[key] = verify(doc)
    return doc, _VERIFIED[key]
