"""The command line as a user meets it: one-line errors with exit status 2, never a traceback."""
from __future__ import annotations

import orjson
import pytest

from .conftest import run_cli


@pytest.mark.parametrize(
    "args,message",
    [
        (["build", "--game", "bulls:5x4", "--strategy", "minimax"], "n <= k"),
        (["build", "--game", "poker:4x10", "--strategy", "minimax"], "unknown game spec"),
        (["build", "--game", "bulls:4x10", "--strategy", "minimax", "--first", "0012"], "repeats a symbol"),
        (["verify", "missing.json"], "cannot read tree file"),
    ],
)
def test_bad_input_is_one_line(args, message):
    r = run_cli(*args)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and message in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_build_verify_stats(tmp_path):
    out = tmp_path / "mm.json"
    r = run_cli("build", "--game", "mastermind:4x6", "--strategy", "minimax", "-o", str(out))
    assert r.returncode == 0, r.stderr
    doc = orjson.loads(out.read_bytes())
    assert doc["stats"]["total"] == 5801 and doc["game"] == {"name": "mastermind", "length": 4, "symbols": 6}
    r = run_cli("verify", str(out))
    assert r.returncode == 0 and "total 5801" in r.stdout and "worst 5" in r.stdout
    r = run_cli("stats", str(out))
    assert r.returncode == 0 and "#" in r.stdout and "average 4.4761" in r.stdout
    r = run_cli("verify", str(out), "--game", "bulls:4x10")
    assert r.returncode == 2 and "tree is for mastermind:4x6, not bulls:4x10" in r.stderr


def test_build_is_deterministic_and_writes_stdout(tmp_path):
    a = run_cli("build", "--game", "bulls:3x6", "--strategy", "entropy")
    b = run_cli("build", "--game", "bulls:3x6", "--strategy", "entropy")
    assert a.returncode == 0 and a.stdout == b.stdout and a.stdout.startswith('{"format":"strategy-tree"')


def test_tampered_tree_fails_verification(tmp_path):
    out = tmp_path / "t.json"
    assert run_cli("build", "--game", "bulls:3x6", "--strategy", "minimax", "-o", str(out)).returncode == 0
    doc = orjson.loads(out.read_bytes())
    doc["stats"]["worst"] += 1
    out.write_bytes(orjson.dumps(doc))
    r = run_cli("verify", str(out))
    assert r.returncode == 2 and "stored stats.worst" in r.stderr
    first = next(iter(doc["tree"]["next"]))
    del doc["tree"]["next"][first]
    out.write_bytes(orjson.dumps(doc))
    r = run_cli("verify", str(out))
    assert r.returncode == 2 and "is not solved" in r.stderr


def test_python_dash_m_and_version():
    r = run_cli("--version")
    assert r.returncode == 0 and r.stdout.startswith("strategy ")
