from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import orjson
import pytest

from strategy import files
from strategy.rules import parse_game
from strategy.tree import format as tree
from strategy.tree.format import TreeDoc, TreeError

SCHEMA = json.loads((Path(tree.__file__).parent / "tree.schema.json").read_text())
GAME = parse_game("bulls:2x3")  # codes 01 02 10 12 20 21


def small_tree() -> dict:
    # 01 first; 0,2 -> 10 is the only one; 1,0 -> {02, 21}; 0,1 -> {12, 20}
    return {
        "guess": "01",
        "next": {
            "0,1": {"guess": "12", "next": {"0,1": {"guess": "20"}}},
            "0,2": {"guess": "10"},
            "1,0": {"guess": "02", "next": {"0,1": {"guess": "21"}}},
        },
    }


def doc_bytes(**overrides) -> bytes:
    doc = TreeDoc(GAME, small_tree(), "heuristic", {"tool": "test"}).to_json()
    doc.update(overrides)
    return orjson.dumps(doc)


def test_round_trip_is_byte_identical(tmp_path):
    doc = tree.loads(doc_bytes())
    path = tmp_path / "t.json"
    tree.save(doc, path)
    again = tree.load(path)
    assert tree.dumps(again) == path.read_bytes() == tree.dumps(doc)
    assert list(orjson.loads(path.read_bytes())) == ["format", "version", "game", "objective", "generator", "tree"]
    jsonschema.validate(orjson.loads(path.read_bytes()), SCHEMA)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_gz_name_writes_a_deterministic_gzip_every_reader_takes(tmp_path):
    import gzip

    doc = tree.loads(doc_bytes())
    a, b = tmp_path / "a.json.gz", tmp_path / "b.json.gz"
    tree.save(doc, a)
    tree.save(doc, b)
    assert a.read_bytes()[:2] == b"\x1f\x8b" and a.read_bytes() == b.read_bytes()  # no time stamp inside
    assert gzip.decompress(a.read_bytes()) == tree.dumps(doc)
    assert tree.dumps(tree.load(a)) == tree.dumps(doc)


def test_wrong_game_is_rejected():
    with pytest.raises(TreeError, match="tree is for bulls:2x3, not bulls:4x10"):
        tree.loads(doc_bytes(), parse_game("bulls:4x10"))


@pytest.mark.parametrize(
    "mutate,message",
    [
        (lambda d: d.update(format="other"), "'format' must be"),
        (lambda d: d.update(version=2), "unsupported version 2"),
        (lambda d: d.pop("tree"), "missing key 'tree'"),
        (lambda d: d.update(extra=1), "unknown key 'extra'"),
        (lambda d: d.update(game={"name": "bulls", "length": 2}), "'game' needs integer"),
        (lambda d: d["tree"].update(guess="00"), "at root: code '00' repeats a symbol"),
        (lambda d: d["tree"]["next"]["0,1"].update(guess="0x"), "at 01 0,1: code '0x' uses 'x'"),
        (lambda d: d["tree"]["next"].update({"2,0": {"guess": "01"}}), "all-hits answer 2,0"),
        (lambda d: d["tree"]["next"].update({"1,1": {"guess": "10"}}), "'1,1' is not an answer"),
        (lambda d: d["tree"].update(next={}), "'next' must be a non-empty object"),
        (lambda d: d["tree"].update(ask="x"), "a node has 'guess'"),
        (lambda d: d["tree"]["next"]["0,2"].update(guess=["1", "0"]), "at 01 0,2: 'guess' must be a string"),
        (lambda d: d.update(stats={"secrets": 6}), "'stats' must have exactly"),
    ],
)
def test_malformed_trees_name_the_problem(mutate, message):
    obj = orjson.loads(doc_bytes())
    mutate(obj)
    with pytest.raises(TreeError, match=message):
        tree.loads(orjson.dumps(obj))


def test_not_json(tmp_path):
    with pytest.raises(TreeError, match="not valid JSON"):
        tree.loads(b"{not json")
    with pytest.raises(files.FileError, match="cannot read tree file"):
        tree.load(tmp_path / "missing.json")


def test_atomic_write_leaves_special_files_alone(tmp_path):
    import os
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    files.write_atomic(fifo, b"data")
    reader.join(5)
    assert got == [b"data"] and fifo.is_fifo()


def test_written_files_follow_the_umask(tmp_path):
    import os
    import stat

    path = tmp_path / "t.json"
    tree.save(tree.loads(doc_bytes()), path)
    mode = stat.S_IMODE(os.stat(path).st_mode)
    mask = os.umask(0)
    os.umask(mask)
    assert mode == 0o666 & ~mask
