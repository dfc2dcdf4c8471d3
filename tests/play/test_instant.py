"""The first question at once: a shipped tree is read lazily (its root's question from the file's first bytes, vouched
for by the package's manifest), and the player of a tree starts without the engine. Behaviour only, no timing."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from strategy.cli import main
from strategy.play.walker import Walker
from strategy.tree import format as tree_format
from strategy.tree import shipped

from ..conftest import ROOT, TREES

# Run as the player's process: report, at the first question and at the end, which of the heavy modules are loaded
# and whether the tree had been parsed yet; then play as `strategy play ARGS --protocol` does.
PROBE = """
import sys
from strategy.play import channels, walker
seen = []
_emit = channels.JsonChannel.emit
_init = walker.Walker.__init__
def init(self, doc):
    _init(self, doc)
    seen.append(doc)
def emit(self, e):
    if e["event"] in ("question", "end") and not any(r.get("at") == e["event"] for r in REPORTS):
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "numba") or m.startswith("strategy.engine"))
        parsed = [("root" in vars(d)) for d in seen]
        REPORTS.append({"at": e["event"], "heavy": heavy, "parsed": parsed})
        sys.stderr.write("REPORT " + __import__("json").dumps(REPORTS[-1]) + "\\n")
    _emit(self, e)
REPORTS = []
channels.JsonChannel.emit = emit
walker.Walker.__init__ = init
from strategy.cli import main
sys.exit(main(["play", *sys.argv[1:], "--protocol"]))
"""


def probe(*args: str, input: str = "") -> tuple[dict, list[dict]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    reports = {}
    for line in done.stderr.splitlines():
        if line.startswith("REPORT "):
            report = json.loads(line[len("REPORT ") :])
            reports[report["at"]] = report
    return reports, [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize("name", ["bulls-5x10-best-found", "mastermind-5x8-best-found"])
def test_a_shipped_trees_first_question_comes_before_its_tree_is_parsed_and_without_numpy(name):
    reports, events = probe(name)
    question = next(e for e in events if e["event"] == "question")
    assert question["code"] == tree_format.load(shipped.path_of(name)).root["guess"]
    assert reports["question"]["heavy"] == []
    assert reports["question"]["parsed"] == [False]


def test_the_tree_player_never_loads_the_engine_over_a_whole_game():
    """Auto mode plays a 30,000-code tree to the win: NumPy lists the candidates, numba is never loaded."""
    reports, events = probe("bulls-5x10-best-found", "--secret", "98765")
    assert any(e["event"] == "solved" for e in events)
    assert reports["end"]["parsed"] == [True]
    assert not [m for m in reports["end"]["heavy"] if m.startswith(("numba", "strategy.engine"))]


def test_a_user_tree_is_still_read_and_validated_whole_before_its_first_question(tmp_path):
    copy = tmp_path / "mine.json"
    shutil.copy(TREES / "bulls-4x10-total.json", copy)
    reports, events = probe(str(copy))
    assert reports["question"]["parsed"] == [True]
    doc = Walker.open(copy).doc
    assert type(doc) is tree_format.TreeDoc
    broken = tmp_path / "broken.json"
    broken.write_bytes(copy.read_bytes().replace(b'"guess":"0123"', b'"guess":"0122"', 1))
    _, events = probe(str(broken))
    assert events[0]["event"] == "error" and events[0]["code"] == "startup" and "0122" in events[0]["message"]


@pytest.mark.parametrize("name", shipped.names())
def test_every_shipped_tree_opens_lazily_with_its_own_root_question_and_fields(name):
    path = shipped.path_of(name)
    lazy = shipped.open_tree(path)
    assert isinstance(lazy, tree_format.LazyTreeDoc) and "root" not in vars(lazy)
    full = tree_format.load(path)
    assert lazy.first_question() == full.root["guess"] == Walker(lazy).first_guess()
    assert (lazy.game, lazy.objective, lazy.generator, lazy.stats) == (
        full.game,
        full.objective,
        full.generator,
        full.stats,
    )
    assert "root" not in vars(lazy)
    assert lazy.root == full.root


@pytest.fixture
def shipped_copy(tmp_path, monkeypatch):
    """A folder of shipped trees with its manifest, standing for the package's."""
    folder = tmp_path / "trees"
    folder.mkdir()
    for name in ("bulls-4x10-total.json", "bulls-5x10-best-found.json.gz"):
        shutil.copy(TREES / name, folder / name)
    shipped.write_manifest(folder)
    monkeypatch.setattr(shipped, "SHIPPED", folder)
    return folder


def test_a_tampered_shipped_tree_is_refused(shipped_copy, capsys):
    path = shipped_copy / "bulls-4x10-total.json"
    assert isinstance(shipped.open_tree(path), tree_format.LazyTreeDoc)
    data = path.read_bytes()
    path.write_bytes(
        data.replace(b'"guess":"0123"', b'"guess":"3210"', 1)
    )  # still a valid tree, but not the tested one
    with pytest.raises(tree_format.TreeError, match="SHA-256"):
        shipped.open_tree(path)
    assert main(["play", str(path), "--protocol"]) == 2
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert out[0]["event"] == "error" and out[0]["code"] == "startup" and "SHA-256" in out[0]["message"]
    path.write_bytes(data)
    (shipped_copy / "SHA256SUMS").unlink()  # no manifest: nothing is vouched for
    with pytest.raises(tree_format.TreeError, match="SHA-256"):
        shipped.open_tree(path)


def test_a_shipped_tree_unknown_to_the_manifest_is_refused(shipped_copy):
    extra = shipped_copy / "bulls-3x10-total.json"
    shutil.copy(TREES / extra.name, extra)
    with pytest.raises(tree_format.TreeError, match="SHA-256"):
        shipped.open_tree(extra)


def test_the_manifest_is_what_sha256sum_reads(shipped_copy):
    lines = (shipped_copy / "SHA256SUMS").read_text().splitlines()
    assert lines == [
        f"{hashlib.sha256((shipped_copy / n).read_bytes()).hexdigest()}  {n}"
        for n in sorted(p.name for p in shipped_copy.iterdir() if p.name != "SHA256SUMS")
    ]
