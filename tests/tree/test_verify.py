from __future__ import annotations

import copy

import pytest

from strategy.rules import parse_game
from strategy.tree.format import TreeDoc, save
from strategy.tree.verify import VerifyError, measure, verify, verify_file

from .test_format import GAME, small_tree


def test_small_tree_is_measured_exactly():
    stats = verify(TreeDoc(GAME, small_tree()))
    # 01 at 1; 10 at 2; 12 and 02 at 2; 20 and 21 at 3
    assert stats.depth_counts == [0, 1, 3, 2] and stats.total == 13 and stats.worst == 3 and stats.secrets == 6


def broken(edit):
    t = small_tree()
    edit(t)
    return TreeDoc(GAME, t)


@pytest.mark.parametrize(
    "edit,message",
    [
        (lambda t: t["next"].pop("0,2"), "secret 10 is not solved"),
        (lambda t: t["next"]["0,1"]["next"].pop("0,1"), "secret 20 is not solved"),
        (lambda t: t["next"]["0,1"].update(guess="20"), "never reached|not solved"),
        (lambda t: t["next"]["0,2"].update(guess="12"), "secret 10 is not solved: a leaf"),
        (lambda t: t["next"]["0,2"].update(next={"0,0": {"guess": "21"}}), "branch 01 0,2 > 10 0,0 is never reached"),
    ],
)
def test_broken_trees_are_rejected(edit, message):
    with pytest.raises(VerifyError, match=message):
        verify(broken(edit))


def test_wrong_stats_are_rejected():
    doc = TreeDoc(GAME, small_tree(), stats={"secrets": 6, "total": 12, "worst": 3, "depth_counts": [0, 1, 3, 2]})
    with pytest.raises(VerifyError, match="stats.total = 12 but the tree gives 13"):
        verify(doc)
    doc.stats = dict(doc.stats, total=13)
    assert verify(doc).total == 13


def test_measure_gives_depth_per_secret():
    _, depths = measure(GAME, small_tree())
    assert depths == {"01": 1, "02": 2, "10": 2, "12": 2, "20": 3, "21": 3}


def test_a_probe_that_cannot_be_the_secret_is_allowed():
    # at {12, 20} ask 21, which cannot be the secret but splits them
    t = copy.deepcopy(small_tree())
    t["next"]["0,1"] = {"guess": "21", "next": {"0,2": {"guess": "12"}, "1,0": {"guess": "20"}}}
    stats = verify(TreeDoc(GAME, t))
    assert stats.total == 14 and stats.depth_counts == [0, 1, 2, 3]
    assert parse_game("bulls:2x3").count() == 6


def test_a_tree_file_is_walked_again_when_it_changes(tmp_path):
    """verify_file shares the walk of an unchanged file; a file rewritten with a broken tree is caught."""
    path = tmp_path / "t.json"
    save(TreeDoc(GAME, small_tree()), path)
    doc, stats = verify_file(path)
    assert stats.total == 13 and verify_file(path)[1] is stats
    save(broken(lambda t: t["next"].pop("0,2")), path)
    with pytest.raises(VerifyError, match="secret 10 is not solved"):
        verify_file(path)
