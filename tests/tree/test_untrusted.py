"""Tree files from anywhere (issue 55): gzip read as `gzip -dc` reads it, with nothing after its last member;
memory that follows the bytes read, not what they unpack to; the generator record's fields with their types."""

from __future__ import annotations

import copy
import gzip
import json
import os
import subprocess
import time
from pathlib import Path

import jsonschema
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strategy import files
from strategy.files import FileError, read_bytes
from strategy.rules import GameError
from strategy.tree import format as tree_io
from strategy.tree.format import TreeError

from ..cli.test_hardening import CASES, capped, one_line
from ..conftest import TREES

TREE_3 = TREES / "bulls-3x10-total.json"
SCHEMA = json.loads((Path(tree_io.__file__).parent / "tree.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


# -- gzip, member by member ------------------------------------------------------------------------


def gzip_members(*parts: bytes) -> bytes:
    return b"".join(gzip.compress(p, mtime=0) for p in parts)


def test_every_gzip_member_is_read_as_gzip_dc_reads_it(tmp_path):
    text = TREE_3.read_bytes()
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip_members(text[:1000], text[1000:5000], b"", text[5000:]))
    unpacked = subprocess.run(["gzip", "-dc", str(path)], capture_output=True, check=True).stdout
    assert read_bytes(path) == unpacked == text
    assert tree_io.load(path).root["guess"] == "012"


@pytest.mark.parametrize(
    "case,tail,expect",
    [
        ("text after the last member", b"hidden text", "bytes after the gzip data"),
        ("zeros after the last member", b"\0" * 512, "bytes after the gzip data"),
        ("a member cut short", gzip.compress(b'{"x": 1}', mtime=0)[:-4], "cut short"),
        ("a damaged member", gzip.compress(b'{"x": 1}', mtime=0)[:-8] + b"\0\0\0\0\x08\0\0\0", "damaged gzip data"),
    ],
    ids=lambda value: value if isinstance(value, str) and " " in value else "",  # the case's name: one per process
)
def test_what_follows_the_last_gzip_member_is_refused(tmp_path, case, tail, expect):
    """It was silently ignored: a file could carry anything after a tree that every command read."""
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(TREE_3.read_bytes()) + tail)
    CASES.append(f"gzip with {case}")
    with pytest.raises(FileError, match=expect):
        read_bytes(path)
    one_line(capped("verify", str(path)), expect=expect)


def test_a_file_of_countless_gzip_members_is_refused_at_once(tmp_path):
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(b"") * 200_000)  # 4 MB of empty members
    CASES.append("200,000 empty gzip members")
    start = time.perf_counter()
    with pytest.raises(FileError, match="more than 10,000 gzip members"):
        read_bytes(path)
    assert time.perf_counter() - start < 5


# -- memory follows the bytes read -------------------------------------------------------------------


def big_string_tree(size: int) -> bytes:
    doc = orjson.loads(TREE_3.read_bytes())
    doc["objective"] = "x" * size
    return orjson.dumps(doc)


def test_a_gzip_that_unpacks_a_thousandfold_is_refused_before_it_is_parsed(tmp_path):
    """A 42 kB .json.gz holding one 40 MB string took 4.7 GB to verify."""
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(big_string_tree(40 << 20), 9))
    assert path.stat().st_size < 60_000
    start = time.perf_counter()
    one_line(capped("verify", str(path), memory=500), expect="64 times its")
    assert time.perf_counter() - start < 30


def test_a_valid_tree_gzipped_beyond_any_ratio_this_tool_writes_is_refused(tmp_path):
    """A few hundred kB of gzip that unpack to a valid tree of hundreds of MB took gigabytes: its records repeat."""
    doc = orjson.loads(TREE_3.read_bytes())
    doc["generator"]["history"] = [dict(doc["generator"])] * 200_000
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(orjson.dumps(doc), 9))
    with pytest.raises(FileError, match="64 times its"):
        read_bytes(path)
    assert files.unpack_limit(path.stat().st_size) < 64 * path.stat().st_size + (1 << 20)


def test_the_trees_this_tool_ships_gzipped_are_well_within_the_ratio():
    for path in TREES.glob("*.json.gz"):
        assert len(read_bytes(path)) < files.MAX_UNPACK_RATIO / 4 * path.stat().st_size


def test_a_long_string_is_checked_for_duplicate_keys_in_memory_proportional_to_it(tmp_path):
    """The duplicate-key check took about 120 bytes of memory per byte of a string (a regular expression): a
    40 MB string in a plain file needed 4.7 GB. Under a 600 MB address-space cap it now reads, and the tree's own
    fault is told (its objective is not what trips it)."""
    path = tmp_path / "t.json"
    path.write_bytes(big_string_tree(40 << 20))
    r = capped("stats", str(path), memory=600)
    assert r.returncode == 0 and "out of memory" not in r.stderr, r.stderr[-300:]


@pytest.mark.parametrize(
    "text,count",
    [
        (b'{"a":"b\\\\"}', 2),
        (b'{"a\\"b":["x\\\\\\"y",1,"z"]}', 3),
        (b'["\\\\\\\\",{"":""}]', 3),
        (b'{"k":{"a":1,"a":2}}', 3),
        (b'{"a":"\\\\","a":"\\""}', 4),
    ],
)
def test_strings_are_counted_as_the_parser_reads_them(text, count):
    """The duplicate-key check counts the strings written (a key written twice is one key parsed)."""
    json.loads(text)
    assert tree_io._strings_in_text(text) == count


# -- the generator record, typed ------------------------------------------------------------------------

SMALL = {
    "format": "strategy-tree",
    "version": 1,
    "game": {"name": "bulls", "length": 2, "symbols": 3, "leading_zero": True},
    "objective": "heuristic",
    "generator": {"tool": "test"},
    "tree": {
        "guess": "01",
        "next": {
            "0,1": {"guess": "12", "next": {"0,1": {"guess": "20"}}},
            "0,2": {"guess": "10"},
            "1,0": {"guess": "02", "next": {"0,1": {"guess": "21"}}},
        },
    },
}
SHA = "0" * 64
WRONG = [
    ("consistent_only", "no"),
    ("consistent_only", 0),
    ("consistent_only", None),
    ("tool", 1),
    ("strategy", ["x"]),
    ("engine", False),
    ("seed", -1),
    ("seed", 1.5),
    ("seed", True),
    ("first", 12),
    ("pilot", 3),
    ("pilot", {"width": 0}),
    ("pilot", {"rollouts": "many"}),
    ("proven", []),
    ("proven", {"total": "26274"}),
    ("proven", {"max_depth": 0}),
    ("proven", {"feasible": "yes"}),
    ("proven", {"seat": 1}),
    ("proven", {"against_depth_counts": [0, "1"]}),
    ("proven", {"relies_on": {}}),
    ("proven_so_far", {"total": -1}),
    ("proven_optimal", "false"),
    ("lower_bound", "31196"),
    ("lower_bound", -5),
    ("objective_of_the_search", 3),
    ("bound_of", None),
    ("progress", 2),
    ("progress", "0.5"),
    ("progress", True),
    ("relies_on", [{"file": "a.json"}]),
    ("relies_on", [{"file": "a.json", "sha256": "abc"}]),
    ("relies_on", [{"file": 3, "sha256": SHA}]),
    ("relies_on", "a.json"),
    ("run", []),
    ("exact_endgame", 1),
    ("improved_from", {}),
]


def with_generator(**fields) -> dict:
    doc = copy.deepcopy(SMALL)
    doc["generator"].update(fields)
    return doc


def loader_rejects(doc: dict) -> bool:
    try:
        tree_io.loads(orjson.dumps(doc))
    except (TreeError, GameError):
        return True
    return False


@pytest.mark.parametrize("field,value", WRONG, ids=[f"{f}={v!r}" for f, v in WRONG])
def test_generator_fields_of_the_wrong_type_are_refused_by_schema_and_loader(field, value):
    """`"consistent_only": "no"` was taken as true (improve kept such a tree consistent-only; a trusted file's
    bound was believed for any probes)."""
    CASES.append(f"generator {field} = {value!r}")
    doc = with_generator(**{field: value})
    assert not VALIDATOR.is_valid(doc) and loader_rejects(doc)


@pytest.mark.slow
def test_the_records_this_tool_writes_pass_schema_and_loader():
    good = with_generator(
        consistent_only=True,
        seed=3,
        first="01",
        pilot={"width": 2, "above": 100, "rollouts": 9},
        proven={
            "total": 13,
            "worst": 3,
            "seat": None,
            "against_depth_counts": [0, 1],
            "relies_on": [{"file": "a.json", "sha256": SHA}],
        },
        proven_optimal=False,
        lower_bound=12,
        progress=0.25,
        run={"seconds": 1.5},
        relies_on=[{"file": "a.json", "sha256": SHA}],
        later_field={"anything": [1, "x"]},
    )
    assert VALIDATOR.is_valid(good) and not loader_rejects(good)
    for path in TREES.glob("*.json*"):
        doc = orjson.loads(read_bytes(path))
        assert VALIDATOR.is_valid(doc), path
        tree_io.loads(read_bytes(path))


VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["", "no", "yes", "a.json", SHA, "total"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["total", "worst", "seat", "file", "sha256", "width", "rollouts", "relies_on", "x"]),
            inner,
            max_size=3,
        )
    ),
    max_leaves=6,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(SCHEMA["properties"]["generator"]["properties"])), VALUES)
def test_whatever_the_schema_rejects_in_a_generator_the_loader_rejects(field, value):
    doc = with_generator(**{field: value})
    if not VALIDATOR.is_valid(doc):
        assert loader_rejects(doc), doc


def test_improve_refuses_a_tree_whose_consistent_only_is_a_word(tmp_path):
    doc = orjson.loads(TREE_3.read_bytes())
    doc["generator"]["consistent_only"] = "no"
    path = tmp_path / "t.json"
    path.write_bytes(orjson.dumps(doc))
    one_line(
        capped("improve", str(path), "--exact-below", "9", "-o", str(tmp_path / "out.json")),
        expect="'generator.consistent_only' must be true or false",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]


def test_reading_takes_memory_for_the_file_not_for_the_cap(tmp_path):
    """`read(cap + 1)` reserved 512 MB of address space for any tree: a tree read under a 300 MB cap failed."""
    one_line(capped("verify", str(tmp_path / "missing.json"), memory=300), expect="missing.json")
    r = capped("verify", str(TREE_3), memory=300)
    assert r.returncode == 0 and "solves every secret" in r.stdout, r.stderr
    assert os.path.getsize(TREE_3) < 1 << 20
