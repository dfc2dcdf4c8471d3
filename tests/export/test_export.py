"""Every exported table and graph agrees with the tree it came from."""

from __future__ import annotations

import csv
import shutil
import sqlite3
import subprocess

import networkx as nx
import orjson
import pytest

from strategy.export.graph import to_graph, tree_from_graph
from strategy.export.tables import history_key, rows
from strategy.rules import feedback
from strategy.tree import format as tree
from strategy.tree.format import TreeDoc, walk
from strategy.tree.verify import measure, verify

from ..conftest import TREES, run_cli

TREE = TREES / "mastermind-4x6-total.json"


@pytest.fixture(scope="module")
def doc():
    return tree.load(TREE)


def expected_rows(doc):
    """Walk the tree, counting the secrets at each node by the game's rules."""
    game = doc.game
    out = {}
    for node, path in walk(doc.root):
        secrets = game.codes()
        for q, a in path:
            probe = game.parse_code(q)
            secrets = [s for s in secrets if game.format_answer(feedback(s, probe)) == a]
        out[history_key(path)] = (node["guess"], len(secrets), node["guess"] in {game.format_code(s) for s in secrets})
    return out


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["csv", "jsonl", "sqlite"])
def test_export_rows_agree_with_the_tree(doc, fmt, tmp_path):
    out = tmp_path / f"t.{fmt}"
    r = run_cli("export", str(TREE), "--format", fmt, "-o", str(out))
    assert r.returncode == 0, r.stderr
    if fmt == "csv":
        with open(out) as f:
            got = [dict(r) for r in csv.DictReader(f)]
    elif fmt == "jsonl":
        got = [orjson.loads(line) for line in out.read_bytes().splitlines()][1:]  # after the metadata line
    else:
        con = sqlite3.connect(out)
        con.row_factory = sqlite3.Row
        got = [dict(r) for r in con.execute("SELECT * FROM nodes")]
        meta = dict(con.execute("SELECT key, value FROM metadata").fetchall())
        assert meta["game"] == "mastermind:4x6" and meta["total"] == "5625" and int(meta["rows"]) == len(got)
        plan = " ".join(
            str(tuple(r)) for r in con.execute("EXPLAIN QUERY PLAN SELECT probe FROM nodes WHERE history = '0012:0,1'")
        )
        assert "PRIMARY KEY" in plan or "INDEX" in plan
        con.close()
    want = expected_rows(doc)
    assert len(got) == len(want) == tree.question_nodes(doc.root)
    for row in got:
        probe, remaining, consistent = want[row["history"]]
        assert row["probe"] == probe and int(row["remaining"]) == remaining
        assert str(row["consistent"]) in (("1", "True") if consistent else ("0", "False"))
    root = next(r for r in got if r["history"] == "")
    assert int(root["questions"]) == 5625 and int(root["depth"]) == 1


def test_questions_column_is_the_subtree_total(doc):
    _, depths = measure(doc.game, doc.root)
    by_key = {r.history: r for r in rows(doc)}
    # below the answer 0,0 to the first question: the secrets of that class, counted from question 2
    key = history_key([(doc.root["guess"], "0,0")])
    cls = [
        s
        for s in depths
        if doc.game.format_answer(feedback(doc.game.parse_code(s), doc.game.parse_code(doc.root["guess"]))) == "0,0"
    ]
    assert by_key[key].questions == sum(depths[s] - 1 for s in cls)


def test_graphml_reloads_as_the_same_tree(doc, tmp_path):
    out = tmp_path / "t.graphml"
    assert run_cli("graph", str(TREE), "--format", "graphml", "-o", str(out)).returncode == 0
    g = nx.read_graphml(out)
    assert nx.is_arborescence(g)
    assert g.number_of_nodes() == tree.question_nodes(doc.root)
    rebuilt = tree_from_graph(g)
    assert verify(TreeDoc(doc.game, rebuilt)).total == 5625


def test_gexf_and_cut_dot(doc, tmp_path):
    gexf = tmp_path / "t.gexf"
    assert run_cli("graph", str(TREE), "--format", "gexf", "-o", str(gexf)).returncode == 0
    assert nx.read_gexf(gexf).number_of_nodes() == tree.question_nodes(doc.root)
    dot = tmp_path / "top.dot"
    assert run_cli("graph", str(TREE), "--format", "dot", "--max-depth", "2", "-o", str(dot)).returncode == 0
    g = to_graph(doc, max_depth=2)
    more = [d for _, d in g.nodes(data=True) if d["probe"] == ""]
    counts = verify(doc).depth_counts
    assert sum(d["remaining"] for d in more) + counts[1] + counts[2] == 1296  # every secret is shown or summarised
    assert max(d["depth"] for _, d in g.nodes(data=True)) == 3 and all(d["depth"] == 3 for d in more)
    text = dot.read_text()
    assert text.startswith("strict digraph") and "rankdir" in text
    if shutil.which("dot"):
        png = tmp_path / "top.png"
        subprocess.run(["dot", "-Tpng", str(dot), "-o", str(png)], check=True)
        assert png.read_bytes()[:4] == b"\x89PNG"


def test_stats_plot(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "d.svg"
    r = run_cli("stats", str(TREE), "--plot", str(out))
    assert r.returncode == 0 and out.read_text().lstrip().startswith("<?xml")
    r = run_cli("stats", str(TREE), "--plot", str(tmp_path / "d.txt"))
    assert r.returncode == 2 and ".svg or .png" in r.stderr


def test_compare(tmp_path):
    other = tmp_path / "greedy.json"
    assert run_cli("build", "--game", "mastermind:4x6", "--strategy", "minimax", "-o", str(other)).returncode == 0
    r = run_cli("compare", str(TREE), str(other))
    assert r.returncode == 0
    assert "total" in r.stdout and "5625" in r.stdout and "5801" in r.stdout and "+176" in r.stdout
    assert "first difference at root: 0012 vs 0011" in r.stdout
    r = run_cli("compare", str(TREE), str(TREE))
    assert "identical trees" in r.stdout
    r = run_cli("compare", str(TREE), str(TREES / "bulls-3x10-total.json"))
    assert r.returncode == 2 and "different games" in r.stderr


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "sqlite"])
def test_every_format_says_its_game_objective_and_total(doc, fmt, tmp_path):
    """The metadata of every format, the same: SQLite's table, the first line of JSON lines, CSV's sidecar."""
    out = tmp_path / f"t.{fmt}"
    r = run_cli("export", str(TREE), "--format", fmt, "-o", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    if fmt == "csv":
        meta = orjson.loads((tmp_path / "t.csv.meta.json").read_bytes())
        assert "t.csv.meta.json" in r.stderr
    elif fmt == "jsonl":
        meta = orjson.loads(out.read_bytes().splitlines()[0])
    else:
        with sqlite3.connect(out) as con:
            meta = {k: int(v) if v.isdigit() else v for k, v in con.execute("SELECT key, value FROM metadata")}
    stats = verify(doc)
    assert meta == {
        "format": "strategy-lookup",
        "version": 2,
        "game": "mastermind:4x6",
        "objective": doc.objective,
        "secrets": 1296,
        "total": stats.total,
        "rows": tree.question_nodes(doc.root),
    }
    assert stats.total == 5625


def test_a_csv_line_splits_on_its_commas_alone(doc, tmp_path):
    """The history key has no comma (answers H-B), so no field is quoted and a naive split reads every line."""
    out = tmp_path / "t.csv"
    assert run_cli("export", str(TREE), "--format", "csv", "-o", str(out), "--quiet").returncode == 0
    text = out.read_text()
    assert '"' not in text
    lines = text.splitlines()
    header = lines[0].split(",")
    with open(out, newline="") as f:
        assert [line.split(",") for line in lines] == [header] + [list(r.values()) for r in csv.DictReader(f)]
    by_key = {line.split(",")[0]: line.split(",") for line in lines[1:]}
    assert by_key[f"{doc.root['guess']}:0-0"][3] == doc.root["next"]["0,0"]["guess"]
    assert history_key([("0123", "1,1"), ("4567", "0,2")]) == "0123:1-1;4567:0-2"


def test_a_csv_table_to_a_device_has_no_sidecar(tmp_path):
    r = run_cli("export", str(TREE), "--format", "csv", "-o", "/dev/null", "--quiet")
    assert r.returncode == 0 and "meta.json" not in r.stderr
