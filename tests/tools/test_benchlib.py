"""What the benchmark tools share: a run of some cases keeps the saved rows of the others, and says which."""

from __future__ import annotations

import pytest

from ..conftest import import_tool


@pytest.fixture()
def benchlib(tmp_path, monkeypatch):
    benchlib = import_tool("benchlib")
    monkeypatch.setattr(benchlib, "RESULTS", tmp_path)
    return benchlib


def test_a_partial_run_keeps_the_other_rows_in_place_and_names_the_shorter_list(benchlib):
    saved = [[f"g{i}", "old"] for i in range(5)]
    benchlib.write_table("t", "title", ["game", "value"], saved, "note")
    assert benchlib.saved_rows("t") == saved
    rows, note = benchlib.merged_rows("t", [["g2", "new"], ["g9", "new"]], 1)
    assert rows == [["g0", "old"], ["g1", "old"], ["g2", "new"], ["g3", "old"], ["g4", "old"], ["g9", "new"]]
    assert note == " Measured by the last run: g2; g9; the other rows are kept from earlier runs."
    rows, note = benchlib.merged_rows("t", [[f"g{i}", "new"] for i in range(4)], 1)
    assert rows[-1] == ["g4", "old"] and note == " Kept from an earlier run, not measured by the last one: g4."
    assert benchlib.merged_rows("t", [[f"g{i}", "new"] for i in range(5)], 1)[1] == ""
    assert benchlib.saved_rows("never-written") == []
