"""The moonshot benchmark (tools/bench_moonshot.py) times the package each of its two processes was given."""

from __future__ import annotations

import shutil

import pytest

from ..conftest import ROOT, import_tool


def test_each_worker_imports_the_package_it_was_given(tmp_path):
    """The baseline's process imports the baseline's package (a copy here), this checkout's imports this one's:
    a worker that found this checkout's package on its own would time the same engine twice."""
    bench = import_tool("bench_moonshot")
    baseline = tmp_path / "baseline"
    shutil.copytree(ROOT / "strategy", baseline / "strategy", ignore=shutil.ignore_patterns("__pycache__", "trees"))
    cases = tmp_path / "cases.json"
    cases.write_bytes(b"[]")
    for path in (baseline, ROOT):
        bench.Process(path, cases).close()
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit, match="strategy package|benchmark process failed"):
        bench.Process(tmp_path / "empty", cases)
