from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Callable

import orjson
import pytest

from strategy.rules import parse_game
from strategy.tree.format import TreeDoc, load, save
from strategy.tree.verify import VerifyError, measure, verify, verify_file

from ..conftest import TREES, run_cli
from .test_format import GAME, small_tree


def test_small_tree_is_measured_exactly():
    stats = verify(TreeDoc(GAME, small_tree()))
    # 01 at 1; 10 at 2; 12 and 02 at 2; 20 and 21 at 3
    assert stats.depth_counts == [0, 1, 3, 2] and stats.total == 13 and stats.worst == 3 and stats.secrets == 6


def edited(tmp_path: Path, name: str, edit: Callable[[dict], None]) -> Path:
    """A shipped tree's file with `edit` applied to its document, written to tmp_path/t.json."""
    doc = orjson.loads((TREES / name).read_bytes())
    edit(doc)
    path = tmp_path / "t.json"
    path.write_bytes(orjson.dumps(doc))
    return path


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


def test_a_forged_stat_of_millions_is_told_in_a_short_line():
    doc = TreeDoc(GAME, small_tree(), stats={"secrets": 6, "total": 13, "worst": 3, "depth_counts": [0] * 10**6})
    with pytest.raises(VerifyError, match=r"stats.depth_counts = \[0, 0, .*\.\.\. \(3000000 characters\)") as e:
        verify(doc)
    assert len(str(e.value)) < 300


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


RECORDS = {
    "a least total below the tree's": ("mastermind-4x6-total.json", ("proven", "total"), 5600),
    "a worst case above the tree's": ("mastermind-4x8-worst.json", ("proven", "worst"), 7),
    "fewer at the worst depth": ("mastermind-4x8-worst-then-fewest.json", ("proven", "fewest_at_worst"), 700),
    "a depth bound the tree breaks": ("mastermind-4x6-total-within-5.json", ("proven", "max_depth"), 4),
    "a worst case on a least-total tree": ("mastermind-4x6-total.json", ("proven", "worst"), 4),
    "a total on a worst-then-fewest tree": ("mastermind-4x8-worst-then-fewest.json", ("proven", "total"), 5000),
    "a lower bound on a solved tree": ("mastermind-4x6-total.json", ("generator", "lower_bound"), 6000),
}


@pytest.mark.parametrize("case", RECORDS)
@pytest.mark.parametrize("command", ["verify", "html"])
def test_a_proof_record_that_contradicts_its_tree_is_refused(tmp_path, case, command):
    """`verify` passed a tree whose record claimed a least total of 400 under its own 436, and `html` showed the
    claim: a record must at least describe the tree it comes with."""
    name, (section, field), claimed = RECORDS[case]
    doc = orjson.loads((TREES / name).read_bytes())
    (doc["generator"] if section == "generator" else doc["generator"][section])[field] = claimed
    path = tmp_path / name
    path.write_bytes(orjson.dumps(doc))
    extra = ["--json"] if command == "verify" else ["-o", str(tmp_path / "t.html")]
    r = run_cli(command, str(path), *extra)
    assert r.returncode == (1 if command == "verify" else 2) and "Traceback" not in r.stderr, r.stderr
    said = f"at most {claimed} questions" if field == "max_depth" else claimed
    assert f"its proof record says {'' if section == 'generator' else 'proven.'}{field} = {said}" in r.stderr
    if command == "verify":
        assert orjson.loads(r.stdout)["failure"]["kind"] == "record"
    else:
        assert not (tmp_path / "t.html").exists()


def test_a_partial_tree_may_not_claim_a_bound_above_its_own_total(tmp_path):
    doc = orjson.loads((TREES / "mastermind-4x6-total.json").read_bytes())
    doc["objective"] = "partial"
    doc["generator"] = {"tool": "t", "lower_bound": 5700, "bound_of": "total", "objective_of_the_search": "total"}
    path = tmp_path / "p.json"
    path.write_bytes(orjson.dumps(doc))
    with pytest.raises(VerifyError, match="lower_bound = 5700 but the tree gives 5625"):
        verify(load(path))


@pytest.mark.parametrize(
    "objective,generator,message",
    [
        ("total-max-depth-5", {"proven": {"total": 5625, "max_depth": 6}}, "objective total-max-depth-5 = at most 5"),
        ("partial", {"lower_bound": 5000, "proven_optimal": True}, "proven_optimal = True"),
        ("partial", {"lower_bound": 6000, "objective_of_the_search": "total"}, "lower_bound = 6000"),
        ("within-4", {"proven": {"within": 4, "found": 1296}}, "proven.found = 1296"),
        ("within-4", {"proven": {"within": 4, "found": 755, "missed": 0}}, "proven.missed = 0"),
        ("total", {"proven": {"total": 5625, "within": 4, "found": 1000}}, "proven.found = 1000"),
        ("heuristic", {"proven": {"total": 5000}}, "proven.total = 5000"),
    ],
)
def test_every_figure_a_record_gives_of_its_tree_is_checked(tmp_path, objective, generator, message):
    """The optimal Mastermind 4x6 tree (total 5625, worst 6, 755 secrets within 4) under records that contradict
    it: each is refused (the second attack found them accepted by verify, stats and html)."""
    doc = orjson.loads((TREES / "mastermind-4x6-total.json").read_bytes())
    doc["objective"], doc["generator"] = objective, {"tool": "t", **generator}
    path = tmp_path / "t.json"
    path.write_bytes(orjson.dumps(doc))
    with pytest.raises(VerifyError, match=re.escape(message)):
        verify(load(path))


RACE_RECORDS = {
    "a better score": ({"score": "521202/1036800"}, "proven.score = 521202/1036800"),
    "a score that is no fraction": ({"score": "most"}, "proven.score = most"),
    "a score with words after it": ({"score": "521201/1036800" + " " * 86 + "PROVEN WIN 1/1"}, "proven.score = "),
    "a lower cost": ({"cost": 515598}, "proven.cost = 515598"),
    "a weaker opponent": ({"against_depth_counts": [0, 1, 4, 23, 134, 389, 166, 3]}, "proven.score = 521201/1036800"),
    "no opponent": ({"against_depth_counts": [], "score": "1/1"}, "proven.against_depth_counts = 0 secrets"),
    "an opponent of another game": ({"against_depth_counts": [0, 1]}, "proven.against_depth_counts = 1 secrets"),
    "another rule": ({"rule": "first", "seat": "first"}, "objective win-tie = win-tie"),
    "an unknown rule": ({"rule": "sudden-death"}, "proven.rule and seat = sudden-death, None"),
    "a seat under rule tie": ({"seat": "second"}, "proven.rule and seat = tie, second"),
    "no seat under rule first": ({"rule": "first"}, "proven.rule and seat = first, None"),
}


@pytest.mark.parametrize("case", RACE_RECORDS)
def test_a_race_record_is_the_trees_own_score_against_its_opponent(tmp_path, case):
    """A best response's record says whom it races (the opponent's depth counts, the rule) and its score: the score
    and cost are those of its own depth counts against that opponent, over the game's secrets, under the rule and
    seat its objective names, or the file is refused. A forged score passed verify, and `strategy trees` showed it."""
    verify(load(TREES / "race-bulls-3x10-strongest.json"))  # as shipped, it is its own
    forged, message = RACE_RECORDS[case]
    path = edited(tmp_path, "race-bulls-3x10-strongest.json", lambda doc: doc["generator"]["proven"].update(forged))
    with pytest.raises(VerifyError, match=re.escape(f"its proof record says {message}")):
        verify(load(path))


def test_a_race_record_under_the_first_to_find_rule_names_its_seat(tmp_path):
    """Under rule first, the seat decides the score: a best response solved asking second verifies, and the same
    record claiming the first seat does not."""
    out = tmp_path / "br.json"
    args = ["--objective", "win", "--against", str(TREES / "bulls-3x10-total.json"), "--rule", "first"]
    r = run_cli("solve", "--game", "bulls:3x10", *args, "--seat", "second", "--quiet", "-o", str(out))
    assert r.returncode == 0, r.stderr
    verify(load(out))
    doc = orjson.loads(out.read_bytes())
    assert doc["generator"]["proven"]["seat"] == "second"
    doc["generator"]["proven"]["seat"] = "first"
    out.write_bytes(orjson.dumps(doc))
    with pytest.raises(VerifyError, match="objective win-first-second = win-first-second but .* win-first-first"):
        verify(load(out))
    doc["objective"] = "win-first-first"
    out.write_bytes(orjson.dumps(doc))
    with pytest.raises(VerifyError, match="its proof record says proven.score"):
        verify(load(out))


@pytest.mark.parametrize(
    "objective",
    ["total-max-depth-²", "within-²", "total-max-depth-" + "9" * 5000, "within-" + "9" * 5000],
)
def test_an_objective_with_odd_digits_is_a_name_not_a_crash(tmp_path, objective):
    """A depth written with digits int() does not read (a superscript, 5000 of them) names no depth: the tree is
    checked as any other objective (it was an internal error)."""

    def edit(doc: dict) -> None:
        doc["objective"] = objective
        doc["generator"]["proven"]["found"] = 1296

    path = edited(tmp_path, "mastermind-4x6-total.json", edit)
    verify(load(path))
    r = run_cli("verify", str(path), "--json")
    assert r.returncode == 0 and "internal error" not in r.stderr, r.stderr


def test_verify_escapes_the_files_text_and_reports_a_forged_cost_as_data(tmp_path):
    """The failure line quotes the record's text escaped (an escape sequence from the file reached the terminal);
    with --json a forged cost is a record failure (it was an internal error: the measured cost was a Fraction)."""
    race = "race-bulls-3x10-strongest.json"
    path = edited(tmp_path, race, lambda doc: doc["generator"]["proven"].update(score="\x1b[31mRED\x1b[0m 1/2\n 2"))
    r = run_cli("verify", str(path))
    assert r.returncode == 1 and "\x1b" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    path = edited(tmp_path, race, lambda doc: doc["generator"]["proven"].update(cost=1))
    r = run_cli("verify", str(path), "--json")
    failure = orjson.loads(r.stdout)["failure"]
    assert r.returncode == 1 and failure["kind"] == "record" and failure["measured"] == 515599, r.stderr
