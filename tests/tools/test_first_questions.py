"""The shipped first-question tables (tools/results/first-questions.md): the shipped tree's first question holds the
tree's proven total, the table is what the code computes, and Mastermind 4x6 agrees with what is published."""

from __future__ import annotations

import pytest

from strategy.engine.table import game_table
from strategy.rules import parse_game
from strategy.search.analyse import Analyser, class_representatives, position_from_history
from strategy.tree import shipped
from strategy.tree.verify import verify_file

from ..conftest import import_tool

# Serkan Gür's Mastermind strategies page (http://serkangur.freeservers.com/): the secrets left after each first
# question, by answer (black, white), for the five first questions 1111 1112 1122 1123 1234 (0000 0001 0011 0012 0123
# here, colours relabelled from 0); answers no secret gives are left out.
PUBLISHED_PARTS = {
    "0000": {"0,0": 625, "1,0": 500, "2,0": 150, "3,0": 20},
    "0001": {
        "0,0": 256,
        "0,1": 308,
        "0,2": 61,
        "1,0": 317,
        "1,1": 156,
        "1,2": 27,
        "2,0": 123,
        "2,1": 24,
        "2,2": 3,
        "3,0": 20,
    },
    "0011": {
        "0,0": 256,
        "0,1": 256,
        "0,2": 96,
        "0,3": 16,
        "0,4": 1,
        "1,0": 256,
        "1,1": 208,
        "1,2": 36,
        "2,0": 114,
        "2,1": 32,
        "2,2": 4,
        "3,0": 20,
    },
    "0012": {
        "0,0": 81,
        "0,1": 276,
        "0,2": 222,
        "0,3": 44,
        "0,4": 2,
        "1,0": 182,
        "1,1": 230,
        "1,2": 84,
        "1,3": 4,
        "2,0": 105,
        "2,1": 40,
        "2,2": 5,
        "3,0": 20,
    },
    "0123": {
        "0,0": 16,
        "0,1": 152,
        "0,2": 312,
        "0,3": 136,
        "0,4": 9,
        "1,0": 108,
        "1,1": 252,
        "1,2": 132,
        "1,3": 8,
        "2,0": 96,
        "2,1": 48,
        "2,2": 6,
        "3,0": 20,
    },
}


def table_rows() -> dict[str, list[list[str]]]:
    benchlib = import_tool("benchlib")
    out: dict[str, list[list[str]]] = {}
    for row in benchlib.saved_rows("first-questions"):
        out.setdefault(row[0], []).append(row)
    return out


def bounds(cell: str) -> tuple[int, int | None]:
    if cell.startswith("["):
        lo, hi = cell[1:-1].split(", ")
        return int(lo), None if hi == "?" else int(hi)
    return int(cell), int(cell)


@pytest.mark.slow
def test_every_solved_game_has_its_table_and_the_trees_first_question_holds_its_total():
    tool = import_tool("first_questions")
    rows = table_rows()
    assert {spec for spec, _ in tool.solved_games()} <= set(rows), "a solved game of at most 10,000 codes is missing"
    for spec, tree_name in tool.solved_games():
        doc, stats = verify_file(shipped.path_of(tree_name))
        gt = game_table(doc.game)
        pos = position_from_history(gt, [])
        reps = class_representatives(pos)
        first = gt.code_str(int(reps[gt.index(doc.game.read_code(doc.root["guess"]))]))
        mine = [r for r in rows[spec] if r[1] == first]
        assert len(mine) == 1 and mine[0][-1] == f"`{tree_name}` asks it", (spec, first)
        lo, hi = bounds(mine[0][4])
        assert lo <= stats.total and (hi is None or stats.total <= hi), (spec, mine[0])
        if lo == hi:
            assert lo == stats.total == doc.generator["proven"]["total"], (spec, mine[0])
        assert sum(int(r[2]) for r in rows[spec]) == gt.size  # the classes hold every first question once
        assert all(
            bounds(r[4])[0] >= stats.total or r[1] == first
            for r in rows[spec]
            if bounds(r[4])[1] is not None and bounds(r[4])[0] == bounds(r[4])[1]
        )  # no exact value below the proven optimum


@pytest.mark.parametrize("spec", ["mastermind:4x6", "bulls:3x10"])
def test_the_table_is_what_the_code_computes(spec):
    gt = game_table(parse_game(spec))
    analysis = Analyser(gt).analyse(position_from_history(gt, []), lines=False)
    assert [[r.code, str(r.class_size), str(r.lower[0])] for r in analysis.rows] == [
        [r[1], r[2], r[4]] for r in table_rows()[spec]
    ]


def test_mastermind_4x6_against_the_published_figures():
    """Koyama & Lai's optimum 5625 with 1123 first (0012 here), and the parts of every first question as published;
    the values of the other first questions were not in the sources available to us."""
    gt = game_table(parse_game("mastermind:4x6"))
    analysis = Analyser(gt).analyse(position_from_history(gt, []), lines=False)
    assert analysis.best.code == "0012" and analysis.best.lower == (5625,)
    for row in analysis.rows:
        assert dict(row.parts) == {a: k for a, k in PUBLISHED_PARTS[row.code].items() if a != "4,0"}, row.code
    rows = table_rows()["mastermind:4x6"]
    assert rows[0][1] == "0012" and rows[0][4] == "5625"
