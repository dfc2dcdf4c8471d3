"""The second-question table: for each answer to the first question, the second probe and its class.

Like Tanaka's table (reprinted in seed 001) but computed from a tree, so its totals add up:
the class totals are the questions after the first, summed over the class's secrets.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from ..files import printable
from ..rules import feedback
from ..tree.format import TreeDoc
from ..tree.verify import measure

COLUMNS = ("answer", "second", "consistent", "secrets", "questions", "average", "second_vs_first")


@dataclass(frozen=True)
class Row:
    answer: str
    second: str  # "" when the first answer is all hits
    consistent: bool
    secrets: int
    questions: int  # questions after the first, summed over the class

    def values(self, first: str, game) -> list:
        vs = ""
        if self.second:
            vs = game.format_answer(feedback(game.parse_code(first), game.parse_code(self.second)))
        avg = f"{self.questions / self.secrets:.4f}" if self.secrets else ""
        return [
            self.answer,
            self.second or "-",
            "yes" if self.consistent else "no",
            self.secrets,
            self.questions,
            avg,
            vs,
        ]


def second_question_table(doc: TreeDoc) -> list[Row]:
    """Rows in answer order, the all-hits class first (as in the published table)."""
    game = doc.game
    first = doc.root["guess"]
    probe = game.parse_code(first)
    _, depths = measure(game, doc.root)
    classes: dict[str, list[str]] = {}
    for code in game.codes():
        classes.setdefault(game.format_answer(feedback(code, probe)), []).append(game.format_code(code))
    rows = []
    for answer in sorted(classes, key=lambda a: tuple(-int(x) for x in a.split(","))):
        members = classes[answer]
        child = doc.root.get("next", {}).get(answer)
        second = child["guess"] if child else ""
        questions = sum(depths[s] - 1 for s in members)
        rows.append(Row(answer, second, second in members if second else True, len(members), questions))
    return rows


def format_table(doc: TreeDoc, rows: list[Row]) -> str:
    first = doc.root["guess"]
    lines = [
        f"first question {first} ({doc.game.spec}, {printable(doc.objective)})",
        f"{'answer':>6}  {'second':>8}  {'consistent':>10}  {'secrets':>7}  {'questions':>9}  {'average':>7}  {'vs first':>8}",
    ]
    for row in rows:
        a, s, c, n, q, avg, vs = row.values(first, doc.game)
        lines.append(f"{a:>6}  {s:>8}  {c:>10}  {n:>7}  {q:>9}  {avg:>7}  {vs:>8}")
    total_q = sum(r.questions for r in rows)
    secrets = sum(r.secrets for r in rows)
    lines.append(
        f"classes {len(rows)}  secrets {secrets}  questions after the first {total_q}  total {total_q + secrets}"
    )
    lines += ["", *LEGEND]
    return "\n".join(lines)


LEGEND = (
    "answer: to the first question; second: the question the tree asks next (- when the first was right);",
    "consistent: whether that question may be the secret; secrets: those that give this answer;",
    "questions: the questions they still need after the first, summed (average: per secret);",
    "vs first: what the first question answers if the second is the secret (the answer itself when consistent).",
)


def table_json(doc: TreeDoc, rows: list[Row]) -> dict:
    """The table as data, with the same figures as the text."""
    first = doc.root["guess"]
    out = []
    for row in rows:
        values = dict(zip(COLUMNS, row.values(first, doc.game)))
        values["consistent"] = row.consistent
        values["second"] = row.second or None
        values["average"] = round(row.questions / row.secrets, 6) if row.secrets else None
        values["second_vs_first"] = values["second_vs_first"] or None
        out.append(values)
    secrets = sum(r.secrets for r in rows)
    after = sum(r.questions for r in rows)
    return {
        "game": doc.game.spec,
        "objective": doc.objective,
        "first": first,
        "rows": out,
        "secrets": secrets,
        "questions_after_first": after,
        "total": after + secrets,
    }


def table_csv(doc: TreeDoc, rows: list[Row]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow(row.values(doc.root["guess"], doc.game))
    return out.getvalue()
