"""Every tree in strategy/trees/ solves every secret, and shows the figures its proof claims."""

from __future__ import annotations

import contextlib
import dataclasses
import lzma
import os
import signal
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import orjson
import pytest

from strategy.export.second_table import second_question_table
from strategy.tree import format as tree
from strategy.tree.verify import verify_file

from .conftest import ROOT, TREES, import_tool, solve

EXPECTED = {
    # published optima; the others are checked against their own recorded proof
    "bulls-4x10-total.json": {"total": 26274, "worst": 7},
    "mastermind-4x6-total.json": {"total": 5625},
    "mastermind-4x6-total-within-5.json": {"total": 5626, "worst": 5},
    "bulls-4x10-worst-then-fewest.json.gz": {"worst": 7},
}


@pytest.fixture(scope="module")
def tool():
    """tools/regenerate_trees.py, the script that writes the frontier table and ships the stores."""
    return import_tool("regenerate_trees")


@pytest.fixture(scope="module")
def checkout(tool):
    """The tool's steps on the checkout's own folders (read here, never written)."""
    return tool.Regenerator()


def in_folder(tool, folder: Path, **changed):
    """The tool's steps on a checkout's folders laid out in `folder` (stores, progress, partial, trees): its files
    are the test's own. `changed` are other fields of the Regenerator, or other Paths (`stores=...`)."""
    fields = {key: changed.pop(key) for key in ("frontier", "chunk_bytes") if key in changed}
    return tool.Regenerator(dataclasses.replace(tool.Paths.under(folder), **changed), **fields)


SHIPPED = sorted(p.name for p in TREES.iterdir() if p.name.endswith((".json", ".json.gz")))


def test_all_promised_trees_are_shipped():
    assert set(SHIPPED) >= {
        "bulls-3x10-total.json",
        "bulls-4x10-total.json",
        "bulls-4x10-worst-then-fewest.json.gz",
        "bulls-4x10-nz-total.json",
        "mastermind-4x6-total.json",
        "mastermind-4x6-total-within-5.json",
    }


def test_the_manifest_holds_the_digest_of_every_shipped_tree_and_of_nothing_else():
    """The player trusts a shipped tree whose bytes match the manifest (`shipped.open_tree`): the files it lists are
    exactly those the test below verifies over every secret."""
    import hashlib

    from strategy.tree.shipped import digests

    assert digests(TREES) == {name: hashlib.sha256((TREES / name).read_bytes()).hexdigest() for name in SHIPPED}


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_tree_verifies_and_matches_its_proof(name):
    doc, stats = verify_file(TREES / name)  # walks every secret; raises if any fails or the stored stats differ
    assert stats.secrets == doc.game.count()
    if doc.objective == "partial":  # the best tree found by an interrupted search: it respects its proven bound
        assert stats.total >= doc.generator["lower_bound"] and doc.generator["proven_optimal"] is False
        return
    proven = doc.generator["proven"]
    if "total" in proven:
        assert stats.total == proven["total"]
    if "worst" in proven:
        assert stats.worst == proven["worst"]
    if "max_depth" in proven:
        assert stats.worst <= proven["max_depth"]
    if "fewest_at_worst" in proven:
        assert stats.depth_counts[proven["worst"]] == proven["fewest_at_worst"]
    for key, value in EXPECTED.get(name, {}).items():
        assert getattr(stats, key) == value


def test_second_question_table_of_the_optimal_tree_adds_up():
    doc = tree.load(TREES / "bulls-4x10-total.json")
    rows = second_question_table(doc)
    assert sum(r.questions for r in rows) == 26274 - 5040
    by_answer = {r.answer: r for r in rows}
    # Tanaka's table: the classes and the second questions' class totals that the reprint gives right
    assert by_answer["1,1"].secrets == 720 and by_answer["1,1"].questions == 2992
    assert by_answer["0,2"].secrets == 1260 and by_answer["0,2"].questions == 5548
    assert by_answer["0,0"].questions == 1446 and by_answer["2,0"].questions == 659
    assert not by_answer["3,0"].consistent  # a second question that cannot be the secret


def test_table_command_prints_and_writes_csv(tmp_path):
    import csv

    from .conftest import run_cli

    out = tmp_path / "second.csv"
    r = run_cli("table", str(TREES / "bulls-4x10-total.json"), "--csv", str(out))
    assert r.returncode == 0 and "total 26274" in r.stdout
    with open(out) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 14 and sum(int(row["questions"]) for row in rows) == 21234
    assert {row["answer"]: row["second"] for row in rows}["0,1"] == "1456"


def test_objectives_of_one_game_agree_with_each_other():
    """Cross-checks between the proven trees of a game: restricting probes or depth never lowers the total,
    and the two worst-case objectives find the same minimum worst case."""
    by_game: dict[str, dict[str, dict]] = {}
    for name in SHIPPED:
        doc = tree.load(TREES / name)
        if doc.objective == "partial" or name.startswith("race-"):
            continue
        key = doc.objective + ("-consistent" if doc.generator.get("consistent_only") else "")
        by_game.setdefault(doc.game.spec, {})[key] = doc.generator["proven"] | {"stats": doc.stats}
    checked = 0
    for spec, proven in by_game.items():
        total = proven.get("total", {}).get("total")
        for key, p in proven.items():
            if total is not None and key != "total" and "total" in p:
                assert p["total"] >= total, (spec, key)
                checked += 1
        if "worst" in proven and "worst-then-fewest" in proven:
            assert proven["worst"]["worst"] == proven["worst-then-fewest"]["worst"], spec
            checked += 1
        if "worst" in proven and "total" in proven:
            assert proven["worst"]["worst"] <= proven["total"]["stats"]["worst"], spec
    assert checked >= 1


def test_the_frontier_table_is_rebuilt_from_the_shipped_best_trees_found(checkout):
    """The table of unfinished solves is what the shipped best-found trees give (their bound, tree and time
    record), so it survives the loss of the stores; no best-found tree is left beside its proven tree."""
    names = list(checkout.frontier)
    rows = checkout.unfinished_rows(names)
    table = (ROOT / "tools" / "results" / "frontier-unfinished.md").read_text().splitlines()
    assert [line for line in table if line.startswith("| ") and not line.startswith("| game")] == [
        "| " + " | ".join(row) + " |" for row in rows
    ]
    unfinished = {checkout.best_found_path(n).name for n in names if not checkout.shipped_path(n)}
    assert {name for name in SHIPPED if "-best-found" in name} <= unfinished
    assert len(rows) == sum((TREES / name).exists() for name in unfinished) >= 2
    # the least total bounds the least total within a depth: the table shows the higher bound
    for row in (row for row in rows if "total-within-" in row[1]):
        assert int(row[2].split()[0]) >= checkout.least_total_bound(row[0]) > 0, row
        if int(row[2].split()[0]) == checkout.least_total_bound(row[0]):  # and says where an equal bound comes from
            assert "the least total's bound" in row[1] or "lookahead" in row[2], row


def test_the_cross_check_table_matches_the_shipped_trees_and_names_those_it_lacks(tool, checkout):
    """Each tree solved again (tools/cross_check.py) shows the proof of the file that ships now, and every
    shipped tree of the regeneration script is either in the table or named as not solved again yet."""
    benchlib, cross_check = import_tool("benchlib"), import_tool("cross_check")
    rows = benchlib.saved_rows("frontier-cross-check")
    assert rows
    for label, proven, verdict, _ in rows:
        assert proven == cross_check.proven_text(tree.load(TREES / label.strip("`")).generator["proven"]), label
        assert verdict == "identical tree and proof", label
    checked = {row[0] for row in rows}
    text = (benchlib.RESULTS / "frontier-cross-check.md").read_text()
    missing = text.split("Not solved again by this route yet: ")[1] if "Not solved again" in text else ""
    for name in dict(tool.CORE, **checkout.frontier):
        if checkout.shipped_path(name):
            assert (cross_check.label(name) in checked) != (cross_check.label(name) in missing), name


PROVEN = [name for name in SHIPPED if "-best-found" not in name and not name.startswith("race-")]


@pytest.mark.slow
@pytest.mark.parametrize("name", PROVEN)
def test_a_lookahead_bound_never_passes_a_shipped_optimum(name):
    """A second route from below: two levels of lookahead (strategy bound) never prove more than the search
    proved, for the objective each tree was solved for (and never deny its worst case)."""
    from strategy.engine.table import game_table
    from strategy.search import objectives
    from strategy.search.lookahead import lookahead_bound

    doc = tree.load(TREES / name)
    proven, consistent = doc.generator["proven"], bool(doc.generator.get("consistent_only"))
    if "fewest_at_worst" in proven:
        costs, value = objectives.at_last_level(proven["worst"]), proven["fewest_at_worst"]
    else:
        costs, value = objectives.total(proven.get("max_depth", proven.get("worst"))), proven["total"]
    bound = lookahead_bound(game_table(doc.game), costs, 2, consistent)
    assert 0 <= bound <= value


PROGRESS = sorted(
    p
    for p in (ROOT / "trees" / "progress").glob("*.db.xz")  # the first chunks, not the later ones
    if p.name.count(".") == 2
)


def test_each_frontier_solve_keeps_its_endgames_in_a_store_of_its_own(tool, checkout):
    """improve keys its sets by the best tree's depth-capped objective, which the solve never reads: its store is
    another file, named after the solve's, whose chunks ship and restore for the same solves. The store of every
    unfinished solve ships (and the test below restores each)."""
    for name, args in checkout.frontier.items():
        store, endgames = tool.store_path(args), tool.endgame_store(args)
        assert endgames.parent == store.parent and endgames.name == f"{store.stem}-endgames.db"
        assert name in checkout.sharing(endgames) and checkout.sharing(endgames) == checkout.sharing(store)
        assert not set(checkout.shipped_chunks(store)) & set(checkout.shipped_chunks(endgames))
        if checkout.best_found_path(name).exists():
            assert checkout.shipped_chunks(store) and checkout.shipped_chunks(store)[0] in PROGRESS, name


@pytest.mark.parametrize("shipped", PROGRESS, ids=[p.name for p in PROGRESS])
def test_a_shipped_store_restores_for_its_unfinished_solves_with_their_time(shipped, tmp_path, tool):
    """The compacted store of an unfinished frontier solve comes back as a store of its game, and each solve
    that uses it starts from the time its best tree found records (once, however often it starts), so that
    the next machine resumes where the last one stopped."""
    from strategy.rules import parse_game
    from strategy.search.store import Store

    here = tool.Regenerator(dataclasses.replace(tool.CHECKOUT, stores=tmp_path))  # the shipped files, a new machine
    path = tmp_path / shipped.name.removesuffix(".xz")
    users = here.sharing(path)
    unfinished = [name for name in users if here.best_found_path(name).exists()]
    assert unfinished, f"{shipped.name} is shipped for no unfinished solve"
    here.restore(path)
    args = here.frontier[users[0]]
    store = Store(path, parse_game(args[args.index("--game") + 1]), "--consistent-only" in args)
    # a solve's store: the parts of a first probe are solved exactly, bounds come later; an endgames store (of
    # improve): an answer per endgame finished, a bound where the tree's own subtree was optimal already
    assert (len(store) if path.stem.endswith("-endgames") else store.count(exact=True)) >= 1
    store.close()
    for name in unfinished:
        record = tree.load(here.best_found_path(name)).generator["frontier"]
        for _ in range(2):
            here.carry_over(name, record)
            assert float((tmp_path / f"{name}.seconds").read_text()) == record["wall_seconds"]
            assert here.task_record(name)[0] == pytest.approx(record["worker_seconds"], abs=0.1)


def test_a_chunk_missing_from_a_shipped_store_is_one_line_not_a_weaker_store(tool, tmp_path):
    """Each chunk holds what one run added: with one missing, the store would come back with less than was proven,
    so the restore stops in one line that names it; a chunk that is not a store of the game is named as shipped."""
    here = in_folder(tool, tmp_path)
    here.paths.progress.mkdir(parents=True)
    store = here.paths.stores / "g.db"
    for name in ("g.db.xz", "g.3.db.xz"):
        (here.paths.progress / name).write_bytes(lzma.compress(b""))
    with pytest.raises(SystemExit, match=r"g\.2\.db\.xz is missing"):
        here.restore(store)
    (here.paths.progress / "g.db.xz").unlink()
    with pytest.raises(SystemExit, match=r"g\.db\.xz is missing: the later chunks of g need it"):
        here.restore(store)
    (here.paths.progress / "g.3.db.xz").unlink()
    (here.paths.progress / "g.db.xz").write_bytes(lzma.compress(b"hello\n"))
    with pytest.raises(SystemExit, match=r"g\.db cannot be restored: .*g\.db\.xz.*") as stopped:
        here.restore(store)
    assert "/0.db" not in str(stopped.value) and not store.exists()  # not the scratch copy it was read from


def test_a_store_ships_whole_then_run_by_run_what_it_gained_and_restores_from_its_chunks(tool, tmp_path):
    """The first shipping of a store writes it compacted; each later one only its new or raised results (into the
    last chunk while it is small, else a chunk of its own; nothing when nothing is new), so that a commit carries
    about one run's work; a machine without the store gets back, from the chunks in order, what compacting the
    store whole gives; a proven game drops them all."""
    from strategy.rules import parse_game
    from strategy.search.store import Store, compact

    game = parse_game("bulls:3x6")
    path = tmp_path / "stores" / "g.db"
    here = in_folder(tool, tmp_path, frontier={"g-total": ["--game", "bulls:3x6", "--store", str(path)]})
    here.paths.stores.mkdir()
    unfinished = here.best_found_path("g-total")  # the one solve that uses the store is unfinished
    unfinished.parent.mkdir(parents=True)
    unfinished.write_text("")
    store = Store(path, game, False)
    store.put("exact", 3, 1, 7, True, {"guess": "012"}, 0.001)
    store.put("quick", 9, 1, 4, False, None, 0.001)  # too quick to ship
    store.put("slow", 9, 1, 5, False, None, 1.0)
    store.commit()
    here.ship(path)
    assert [p.name for p in here.shipped_chunks(path)] == ["g.db.xz"]
    store.put("slow", 9, 1, 6, False, None, 2.0)  # raised
    store.put("new", 4, 2, 3, True, {"guess": "345"}, 0.5)
    store.put("quick", 9, 1, 5, False, None, 0.001)  # raised, still too quick
    store.commit()
    here.ship(path)
    here.ship(path)  # nothing new: no chunk
    assert [p.name for p in here.shipped_chunks(path)] == ["g.db.xz", "g.2.db.xz"]

    def keys(chunk: int) -> list[str]:
        with tempfile.TemporaryDirectory() as folder:
            got = tool.unpacked([here.shipped_chunks(path)[chunk]], Path(folder))[0]
            return sorted(r[0] for r in sqlite3.connect(got).execute("SELECT key FROM results"))

    assert keys(1) == ["new", "slow"]
    store.put("later", 5, 2, 1, True, {"guess": "024"}, 0.1)
    store.commit()
    here.ship(path)  # the last chunk is small: it takes the new result in
    assert len(here.shipped_chunks(path)) == 2 and keys(1) == ["later", "new", "slow"]
    here = dataclasses.replace(here, chunk_bytes=0)
    store.put("last", 5, 2, 2, True, {"guess": "135"}, 0.1)
    store.commit()
    here.ship(path)  # the last chunk is full: a new one
    assert [p.name for p in here.shipped_chunks(path)][2:] == ["g.3.db.xz"] and keys(2) == ["last"]
    store.close()
    whole = tmp_path / "whole.db"
    compact(path, whole, tool.SHIP_MIN_SECONDS)
    fresh = tmp_path / "new-machine" / "stores" / "g.db"  # a fresh clone: no stores/ yet
    here.restore(fresh)
    rows = "SELECT key, size, depth, value, exact, tree FROM results ORDER BY key"
    assert sqlite3.connect(fresh).execute(rows).fetchall() == sqlite3.connect(whole).execute(rows).fetchall()
    with contextlib.closing(Store(fresh, game, False)) as restored:
        assert restored.get("slow").value == 6
    fresh.unlink()
    (here.paths.progress / "g.2.db.xz").write_bytes(b"not xz")
    with pytest.raises(SystemExit, match=r"^[^\n]*/g\.2\.db\.xz is damaged [^\n]*afresh$"):
        here.restore(fresh)
    assert list(fresh.parent.iterdir()) == []
    unfinished.unlink()
    here.ship(path)
    assert here.shipped_chunks(path) == [] and list(here.paths.progress.iterdir()) == []


def test_a_solve_new_to_a_machine_that_has_its_store_starts_from_its_recorded_time(tool, tmp_path):
    """A machine that ran one objective of a game has the game's store but no time of another objective run
    elsewhere: that one's recorded time is carried over (its task log here counted, not twice)."""
    machine = tool.Regenerator(dataclasses.replace(tool.CHECKOUT, stores=tmp_path))
    record = {"wall_seconds": 500.0, "worker_seconds": 900.0}
    (tmp_path / "g-worst.log").write_text(
        '{"run": "1-1", "phase": "total", "task": 1, "after": null, "key": "k", "size": 9, "depth": 2, "probe": false, '
        '"path": [0], "seconds": 100.0, "worker": "w", "value": 20, "exact": true, "stopped": false, "finished": 100.0}\n'
    )
    here = machine.task_record("g-worst")[0]
    machine.carry_over("g-worst", record)
    assert float((tmp_path / "g-worst.seconds").read_text()) == 500.0
    assert machine.task_record("g-worst")[0] == pytest.approx(900.0, abs=0.1) and here < 900.0
    (tmp_path / "g-worst.seconds").write_text("800.0\n")  # more here than the record: kept
    machine.carry_over("g-worst", record)
    assert float((tmp_path / "g-worst.seconds").read_text()) == 800.0


def test_the_efficiency_comes_from_the_latest_hour_of_runs_not_a_short_last_one(tool, tmp_path):
    """A 50-second run after one that filled 64 workers for half an hour: the efficiency is the two replayed
    one after the other (not the short one's 1/64), and an older run beyond the latest hour of worker time does
    not count; runs are taken in the order they started, whatever the order of the log's lines."""
    machine = tool.Regenerator(dataclasses.replace(tool.CHECKOUT, stores=tmp_path))

    def task(run: str, i: int, seconds: float) -> str:
        return orjson.dumps(
            {
                "run": run,
                "phase": "total",
                "task": i,
                "after": None,
                "key": f"k{i}",
                "size": 9,
                "depth": 2,
                "probe": False,
                "path": [0],
                "seconds": seconds,
                "worker": "host:99",
                "value": 20,
                "exact": False,
                "stopped": False,
                "finished": 1.0,
            }
        ).decode()

    lines = [task("2-200", 1, 50.0), *(task("1-100", i, 1000.0) for i in range(1, 129)), task("0-50", 1, 5000.0)]
    (tmp_path / "g-total.log").write_text("\n".join(lines) + "\n")
    work, efficiency, last = machine.task_record("g-total")
    assert work == pytest.approx(128_000 + 50 + 5000) and last == pytest.approx(50.0)
    assert efficiency == pytest.approx(128_050 / (2000 + 50) / 64, rel=1e-3)


def test_the_projection_also_runs_the_open_share_at_the_last_runs_rate(tool):
    """64 worker-hours settled 20%, the last 64 of them 10%: 5 h on 64 workers at the average rate, 8 h
    for the open 80% at the last run's rate; a run that settled nothing more gives no finite projection."""
    hours = 3600 * 64
    record = {
        "worker_seconds": hours,
        "efficiency": 1.0,
        "workers": 64,
        "last_run": {"worker_seconds": hours, "settled_before": 0.1, "settled_after": 0.2},
    }
    assert tool.projection(record, 0.2) == "5.0 h; 8.0 h at the last run's rate"
    record["last_run"]["settled_after"] = 0.1
    assert tool.projection(record, 0.1) == "10.0 h; unknown at the last run's rate (it settled no more)"
    record["last_run"]["settled_before"] = 0.0  # a run on a new store: its rate is the average one
    assert tool.projection(record, 0.1) == "10.0 h"
    del record["last_run"]
    assert tool.projection(record, 0.1) == "10.0 h"


def test_the_frontier_runs_on_local_processes_or_a_dask_cluster(tool):
    assert tool.placement(tool.parse_args(["solve", "--frontier", "--scheduler", "tcp://10.0.0.1:8786"])) == [
        "--scheduler",
        "tcp://10.0.0.1:8786",
    ]
    assert tool.placement(tool.parse_args(["solve", "--jobs", "2"])) == ["--jobs", "2"]
    assert tool.placement(tool.parse_args(["solve"])) == []
    with pytest.raises(SystemExit):  # one or the other
        tool.parse_args(["solve", "--jobs", "2", "--scheduler", "tcp://10.0.0.1:8786"])


def test_each_step_is_a_command_with_its_own_options_and_a_wrong_one_is_one_line(tool, capsys):
    """solve, table, gaps, improve N, pilot K and bound K [--exact-below N]: --exact-below goes with bound alone, each
    step is a command of its own (one at a time), and a wrong command line ends in one line and exit status 2."""
    assert tool.parse_args(["bound", "3", "--exact-below", "200"]).exact_below == 200
    assert tool.parse_args(["pilot", "30"]).width == 30
    args = tool.parse_args(["improve", "300", "--budget", "60", "bulls-5x9-total", "mastermind-5x6-total"])
    assert (args.below, args.budget, args.names) == (300, 60.0, ["bulls-5x9-total", "mastermind-5x6-total"])
    assert tool.parse_args(["table"]).command == "table"
    assert tool.parse_args(["gaps"]).command == "gaps"
    capsys.readouterr()
    for wrong in (
        ["solve", "--exact-below", "200"],
        ["improve", "300", "--exact-below", "200"],
        ["bound", "3", "--exact-below", "2"],
        ["pilot", "30", "--improve", "300"],
        ["pilot", "30", "--bound", "3"],
        ["pilot", "0"],
        ["improve", "2"],
        ["bound", "0"],
        ["bound", "99"],
        ["solve", "--budget", "0"],
        ["--frontier"],
        ["table", "--budget", "60"],
        ["gaps", "--budget", "60"],
        ["gaps", "bulls-5x10-total"],  # every open game's rows or none: the table is one
        [],
    ):
        with pytest.raises(SystemExit) as stopped:
            tool.parse_args(wrong)
        err = capsys.readouterr().err
        assert stopped.value.code == 2 and err.startswith("regenerate_trees.py: error: ") and err.count("\n") == 1, (
            wrong
        )
    # a tree of the frontier is the frontier's: solve asks for --frontier, the other steps take it as it is
    with pytest.raises(SystemExit, match=r"^unknown tree 'bulls-5x10-total'; [^\n]* needs --frontier$"):
        tool.main(["solve", "bulls-5x10-total"])
    with pytest.raises(SystemExit, match=r"^unknown tree 'nope'; choose from [^\n]*bulls-5x10-total[^\n]*$"):
        tool.main(["bound", "3", "nope"])


def test_the_frontier_solves_of_a_game_are_given_the_extra_trees_for_it(tool, checkout, tmp_path):
    """--incumbent FILE goes to the solves of its file's game (not to consistent-only ones, which it could not
    bound); a file that is not a tree stops the tool with one line before any solve."""
    path = tmp_path / "mine.json"  # a tree of the user's (here a copy of a shipped one)
    path.write_bytes((TREES / "mastermind-4x6-total.json").read_bytes())
    given = tool.given_trees([str(path)])
    assert given == {"mastermind:4x6": [path.resolve()]}
    options = checkout.incumbents("mastermind-4x6-worst", ["--game", "mastermind:4x6", "--objective", "worst"], given)
    assert options[-2:] == ["--incumbent", str(path.resolve())]
    trusted = [options[i + 1] for i, option in enumerate(options) if option == "--trust"]
    assert str(path.resolve()) not in trusted and str(TREES / "mastermind-4x6-total.json") in trusted
    assert trusted == [options[i + 1] for i, option in enumerate(options[:-2]) if option == "--incumbent"]
    assert str(path.resolve()) not in checkout.incumbents(
        "mastermind-4x6-consistent-total", ["--game", "mastermind:4x6", "--consistent-only"], given
    )
    assert str(path.resolve()) not in checkout.incumbents("bulls-5x9-total", ["--game", "bulls:5x9"], given)
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    for wrong in (bad, tmp_path / "missing.json"):
        with pytest.raises(SystemExit, match=r"^--incumbent: [^\n]*$"):
            tool.given_trees([str(wrong)])


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_solve_stopped_by_an_error_still_ships_its_best_tree_found(tool, tmp_path):
    """A frontier solve that stops on an error it survives (here its log on /dev/full; a lost Dask scheduler
    or a full disk alike) writes its best tree with its bound: the tool ships it, then reports the error; the
    records of the tree's exact endgames and pilots stay while the tree does."""
    here = in_folder(tool, tmp_path)
    here.paths.trees.mkdir(parents=True)
    args = ["--game", "bulls:4x8", "--store", str(here.paths.stores / "b.db"), "--log", "/dev/full"]
    with pytest.raises(SystemExit, match="cannot write the log '/dev/full'"):
        here.solve("bulls-4x8-total", args, ["--jobs", "1"], None)
    from strategy.build.greedy import build
    from strategy.engine.table import game_table
    from strategy.tree.verify import verify

    path = here.best_found_path("bulls-4x8-total")
    best = tree.load(path)
    assert best.generator["proven_optimal"] is False and best.generator["lower_bound"] > 0
    assert best.generator["frontier"]["wall_seconds"] > 0
    assert not (here.paths.trees / "bulls-4x8-total.json").exists()
    # run again, the same tree comes back: what its record says of its endgames and pilots still holds
    record = {"exact_endgame": {"below": 100, "subtrees": 1, "unfinished": 0}, "pilots": [{"width": 2}]}
    tree.save(tree.TreeDoc(best.game, best.root, best.objective, {**best.generator, **record}, best.stats), path)
    with pytest.raises(SystemExit, match="cannot write the log '/dev/full'"):
        here.solve("bulls-4x8-total", args, ["--jobs", "1"], None)
    again = tree.load(path)
    assert again.root == best.root and all(again.generator[key] == value for key, value in record.items())
    # a tree that the search changes loses them: its endgames are no longer the ones the record counted
    worse = build(game_table(best.game), "minimax", progress=False)
    stats = verify(tree.TreeDoc(best.game, worse)).to_json()
    tree.save(tree.TreeDoc(best.game, worse, best.objective, {**best.generator, **record}, stats), path)
    with pytest.raises(SystemExit, match="cannot write the log '/dev/full'"):
        here.solve("bulls-4x8-total", args, ["--jobs", "1"], None)
    changed = tree.load(path)
    assert changed.root != worse and not record.keys() & changed.generator.keys()


def _greedy_best_found(here, strategy: str, generator: dict):
    """A greedy tree of bulls 4 of 8 shipped as bulls-4x8-total's best tree found (in the trees folder of `here`, a
    Regenerator on the test's folders), with `generator`: (game table, tree, its stats, its path)."""
    from strategy.build.greedy import build
    from strategy.engine.table import game_table
    from strategy.rules import parse_game
    from strategy.tree.verify import verify

    here.paths.trees.mkdir(parents=True)
    gt = game_table(parse_game("bulls:4x8"))
    greedy = build(gt, strategy, progress=False)
    stats = verify(tree.TreeDoc(gt.game, greedy))
    path = here.best_found_path("bulls-4x8-total")
    tree.save(tree.TreeDoc(gt.game, greedy, "partial", generator, stats.to_json()), path)
    return gt, greedy, stats, path


@pytest.mark.slow
def test_bound_raises_a_best_tree_founds_proven_bound_by_lookahead_and_the_table_says_so(tool, tmp_path):
    """bound K records the deepest lookahead level that finished and takes its bound when it is higher than
    the search's; a later, shallower one does not replace a higher record; the table names the lookahead."""
    from strategy.search import objectives
    from strategy.search.lookahead import lookahead_bound

    generator = {"lower_bound": 1, "bound_of": "total", "objective_of_the_search": "total", "progress": 0.0}
    here = in_folder(tool, tmp_path, stores=tmp_path / "scratch")  # not made yet, as in a fresh clone
    gt, _, stats, path = _greedy_best_found(here, "entropy", generator)
    here.lookahead("bulls-4x8-total", 3, None)
    doc = tree.load(path)
    three = lookahead_bound(gt, objectives.total(), 3)
    assert doc.generator["lower_bound"] == three and doc.generator["lookahead"]["levels"] == 3
    assert lookahead_bound(gt, objectives.total(), 2) < three <= stats.total
    here.lookahead("bulls-4x8-total", 2, None)
    assert tree.load(path).generator["lookahead"]["levels"] == 3
    row = here.unfinished_rows(["bulls-4x8-total"])[0]
    hours = f"in {tree.load(path).generator['lookahead']['seconds'] / 3600:.1f} h"  # the time it took, recorded
    assert row[2] == f"{three} ({three / gt.size:.4f}), by 3 levels of lookahead {hours}"
    here.lookahead("bulls-4x8-total", 3, None, exact_below=200)  # higher: sets of at most 200 searched exactly
    higher = lookahead_bound(gt, objectives.total(), 3, exact_below=200)
    assert three < higher == tree.load(path).generator["lookahead"]["bound"] and higher <= stats.total
    assert here.unfinished_rows(["bulls-4x8-total"])[0][2] == (
        f"{higher} ({higher / gt.size:.4f}), by 3 levels of lookahead and exact search below 200 secrets "
        f"in {tree.load(path).generator['lookahead']['seconds'] / 3600:.1f} h"
    )
    here.lookahead("bulls-4x8-total", 3, None, exact_below=100)  # as high or lower: the record stays
    record = tree.load(path).generator["lookahead"]
    assert record["bound"] == higher and record["exact_below"] == 200
    # the solve's store, as an interrupted run leaves it (no root): two levels add its root's exact parts up
    doc.generator["lower_bound"] = three  # the plain bound's record again, lower than what the store gives
    tree.save(doc, path)
    store = tmp_path / "stores" / "bulls-4x8.db"
    store.parent.mkdir()
    here = dataclasses.replace(here, frontier={"bulls-4x8-total": ["--game", "bulls:4x8", "--store", str(store)]})
    optimum = solve(gt, "total", progress=False, store=str(store)).proven["total"]
    with contextlib.closing(sqlite3.connect(store)) as con, con:
        con.execute("DELETE FROM results WHERE depth = 0")
        exact = con.execute("SELECT count(*) FROM results WHERE exact = 1").fetchone()[0]
    here.lookahead("bulls-4x8-total", 2, None)
    record = tree.load(path).generator["lookahead"]
    assert lookahead_bound(gt, objectives.total(), 2) < higher <= optimum == record["bound"]
    assert record["levels"] == 2 and record["store_exact_results"] == exact
    assert here.unfinished_rows(["bulls-4x8-total"])[0][2] == (
        f"{optimum} ({optimum / gt.size:.4f}), by 2 levels of lookahead and the {exact} exact results of its store "
        f"in {record['seconds'] / 3600:.1f} h"
    )
    # what a bound keeps in the store ships with it: the next run, or the next machine, reads it back
    assert [p.name for p in here.shipped_chunks(store)] == ["bulls-4x8.db.xz"]


@pytest.mark.slow
def test_a_bound_out_of_budget_is_stopped_and_its_store_kept(tool, tmp_path, monkeypatch, capsys):
    """--budget stops the running `strategy bound` (SIGTERM: it closes its store) and records only the time it
    spent, by its levels and N; what it stored is shipped all the same. The next run that finishes that level
    counts that time in its record."""
    shipped = []

    class Shipping(tool.Regenerator):
        """The tool's steps, with each store they ship noted (a bound stopped this soon may have made none)."""

        def ship(self, store):
            shipped.append(store)

    store = tmp_path / "stores" / "bulls-4x8.db"
    here = Shipping(tool.Paths.under(tmp_path), {"bulls-4x8-total": ["--game", "bulls:4x8", "--store", str(store)]})
    generator = {"lower_bound": 1, "bound_of": "total", "objective_of_the_search": "total", "progress": 0.0}
    _, _, _, path = _greedy_best_found(here, "entropy", generator)
    here.lookahead("bulls-4x8-total", 3, 0.05)
    assert "no lookahead level finished within 0 s" in capsys.readouterr().out
    assert shipped == [store]
    assert subprocess.run(["pgrep", "-f", "--", f"--store {store}"], capture_output=True).returncode == 1
    doc = tree.load(path)
    spent = doc.generator.pop("lookahead_unfinished")["1 levels, exact below 0"]
    assert doc.generator == generator and spent["seconds"] >= 0.05
    doc.generator["lookahead_unfinished"] = {"1 levels, exact below 0": {**spent, "seconds": 1000.0}}  # a long one
    tree.save(doc, path)
    here.lookahead("bulls-4x8-total", 1, None)
    record = tree.load(path).generator
    assert "lookahead_unfinished" not in record and 1000 <= record["lookahead"]["seconds"] < 1100
    # Ctrl-C (here while the tool waits for level 2): the bound is stopped and waited for, the time kept, the store
    # shipped
    real, waits = subprocess.Popen.communicate, []

    def communicate(process, *args, **kwargs):
        waits.append(kwargs.get("timeout"))
        if len(waits) == 2:
            raise KeyboardInterrupt
        return real(process, *args, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "communicate", communicate)
    handler = signal.getsignal(signal.SIGINT)
    try:
        assert here.lookahead("bulls-4x8-total", 3, None) is True
    finally:
        signal.signal(signal.SIGINT, handler)
    record = tree.load(path).generator
    assert list(record["lookahead_unfinished"]) == ["2 levels, exact below 0"] and waits[2] is None  # SIGTERM sent
    told = capsys.readouterr()
    assert "; interrupted at the next level" in told.out and shipped == [store] * 3
    assert "interrupted; keeping what the bound proved" in told.err
    assert 1000 <= record["lookahead"]["seconds"] < 1100  # the same bound again keeps the record of its first run


def test_a_total_within_d_stage_shows_the_least_totals_bound_when_that_is_higher(tool, tmp_path):
    """The least total bounds the least total within a depth: an unfinished within-D stage whose own bound is
    lower shows the least total's (and says so); a higher own bound stays its own."""
    here = in_folder(tool, tmp_path)
    gt, greedy, stats, _ = _greedy_best_found(
        here, "entropy", {"lower_bound": 5000, "bound_of": "total", "objective_of_the_search": "total", "progress": 0.0}
    )
    within = here.best_found_path("bulls-4x8-worst")
    for own, shown in ((4000, 5000), (5100, 5100)):
        generator = {
            "lower_bound": own,
            "bound_of": "total-within-7",
            "objective_of_the_search": "worst",
            "progress": 0.5,
            "proven_so_far": {"worst": 7},
        }
        tree.save(tree.TreeDoc(gt.game, greedy, "partial", generator, stats.to_json()), within)
        row = here.unfinished_rows(["bulls-4x8-worst"])[0]
        assert row[2] == f"{shown} ({shown / gt.size:.4f})" and row[4] == str(stats.total - shown)
        assert ("the least total's bound" in row[1]) == (own < shown), row[1]
    assert here.least_total_bound("bulls:4x8") == 5000


def _least_total_best_found(here):
    """A most-parts tree of bulls 4 of 8 as bulls-4x8-total's best tree found, bounded on the least total, in the
    folders of `here` (a Regenerator on the test's folders): (game table, tree, its stats, its path, its endgames
    store)."""
    gt, greedy, before, path = _greedy_best_found(here, "most-parts", {"lower_bound": 1, "bound_of": "total"})
    return gt, greedy, before, path, here.paths.stores / "bulls-4x8-endgames.db"


@pytest.mark.slow
def test_improve_gives_a_best_tree_found_exact_endgames_and_keeps_its_record(tool, tmp_path):
    """improve N rewrites an unfinished solve's best tree with its small subtrees optimal and its record kept:
    for the least total, or for the fewest secrets at the worst depth in a fewest-at-D stage."""
    from strategy.search.store import Store

    here = in_folder(tool, tmp_path)
    gt, greedy, before, path, endgames = _least_total_best_found(here)
    here.improve("bulls-4x8-total", endgames, 200, None)
    doc, after = verify_file(path)
    record = doc.generator["exact_endgame"]
    assert after.total == before.total - record["saved"] < before.total and record["from_store"] == 0
    assert after.worst <= before.worst and doc.generator["lower_bound"] == 1 and doc.objective == "partial"
    store = Store(endgames, gt.game, False)
    assert len(store) == record["subtrees"]  # each endgame's answer kept for the next run
    store.close()
    improved = path.read_bytes()
    here.improve("bulls-4x8-total", endgames, 200, None)  # nothing left to save: the tree and its record stay
    assert path.read_bytes() == improved
    # a store restored from its shipped copy holds no seal of this installation: the tool trusts its own store, so
    # the endgames come from it instead of being searched again, and the record names it
    with contextlib.closing(sqlite3.connect(endgames)) as con, con:
        con.execute("UPDATE results SET seal = NULL")
    tree.save(tree.TreeDoc(gt.game, greedy, "partial", {"lower_bound": 1, "bound_of": "total"}, before.to_json()), path)
    here.improve("bulls-4x8-total", endgames, 200, None)
    again = verify_file(path)[0].generator["exact_endgame"]
    assert again["from_store"] == again["subtrees"] == record["subtrees"] and again["saved"] == record["saved"]
    assert again["relies_on"][0]["file"] == endgames.name and again["relies_on"][0]["store"] is True
    stopped = {"exact_endgame": {"below": 1000, "subtrees": 91, "unfinished": 90}}  # a run its budget stopped
    assert tool.best_found(after, "total", stopped).endswith(", exact below 1000 secrets but for 90 of its 91 endgames")
    fewest = here.best_found_path("bulls-4x8-worst-then-fewest")
    tree.save(
        tree.TreeDoc(gt.game, greedy, "partial", {"bound_of": f"fewest-at-{before.worst}"}, before.to_json()), fewest
    )
    here.improve("bulls-4x8-worst-then-fewest", None, 200, 60)
    doc, after = verify_file(fewest)
    assert doc.generator["exact_endgame"]["objective"] == f"fewest-at-{before.worst}" and after.worst <= before.worst
    at_worst = after.depth_counts[before.worst] if after.worst == before.worst else 0  # none left there: shallower
    assert at_worst == before.depth_counts[-1] - doc.generator["exact_endgame"]["saved"] < before.depth_counts[-1]


@pytest.mark.slow
def test_gaps_says_what_the_best_tree_spends_and_what_is_proven_on_each_part_of_its_first_question(
    tool, tmp_path, monkeypatch
):
    """gaps: one row per answer to the best tree's first question, the store's bound where it holds one, else the
    exact value of a small part or one level of lookahead found here; the gaps add up to the last row's, which
    counts the whole tree; a proven or fewest-at-D solve has no rows."""
    import numpy as np

    from strategy.search import objectives
    from strategy.search.solve import tt_bits_for
    from strategy.search.store import Store, set_key
    from strategy.search.worker import Engine, Spec

    monkeypatch.setattr(tool, "GAP_SEARCH_BELOW", 100)  # the larger parts of bulls 4 of 8 by one level of lookahead
    store = tmp_path / "stores" / "bulls-4x8.db"
    here = in_folder(tool, tmp_path, frontier={"bulls-4x8-total": ["--game", "bulls:4x8", "--store", str(store)]})
    gt, greedy, stats, _ = _greedy_best_found(here, "most-parts", {"lower_bound": 1, "bound_of": "total"})
    first = gt.probe_of(greedy)
    answers = gt.table[first, np.arange(gt.size)]
    part = lambda a: np.flatnonzero(answers == a).astype(np.int32)  # noqa: E731
    biggest = max((a for a in range(len(gt.answers)) if a != gt.win), key=lambda a: len(part(a)))
    store.parent.mkdir()
    with contextlib.closing(Store(store, gt.game, False)) as opened:
        opened.put(set_key(objectives.total().key, 1, part(biggest)), len(part(biggest)), 1, 1234, False, None, 1.0)
        opened.commit()
    rows = here.gap_rows("bulls-4x8-total")
    by_answer = {row[1]: row for row in rows[:-1]}
    assert len(by_answer) == sum(1 for a in set(answers.tolist()) if a != gt.win)
    assert by_answer[gt.answer_str(biggest)][4:6] == ["1234", "bound, stored"]
    engine = Engine(gt, Spec(gt.game, objectives.total(), False, tt_bits_for(gt.size)))
    for answer, row in by_answer.items():
        a = next(a for a in range(len(gt.answers)) if gt.answer_str(a) == answer)
        assert int(row[2]) == len(part(a)) and int(row[6]) == int(row[3]) - int(row[4]) >= 0
        if row[5].endswith("here"):  # the exact value, or at most it
            value = engine.value(part(a), 1, np.array([first], dtype=np.int64), len(gt.answers) - 1)
            assert (len(part(a)) <= 100) == (row[5] == "exact, here")
            assert int(row[4]) == value if row[5] == "exact, here" else int(row[4]) <= value
    assert {row[5] for row in rows[:-1]} >= {"exact, here", "1 level of lookahead, here", "bound, stored"}
    last = rows[-1]
    assert last[1] == f"all, after {gt.code_str(first)}" and int(last[3]) == stats.total
    assert int(last[6]) == sum(int(row[6]) for row in rows[:-1]) == int(last[3]) - int(last[4])
    assert sum(int(row[7].rstrip("%")) for row in rows[:-1]) == pytest.approx(100, abs=len(rows))
    spent = int(by_answer[gt.answer_str(biggest)][3])
    with contextlib.closing(Store(store, gt.game, False)) as opened:  # a bound no tree could be under: refused
        opened.put(set_key(objectives.total().key, 1, part(biggest)), len(part(biggest)), 1, spent + 1, False, None, 1)
        opened.commit()
    with pytest.raises(
        SystemExit, match=rf"holds {spent + 1} for the answer .* above the {spent} .*: the store is wrong"
    ):
        here.gap_rows("bulls-4x8-total")
    tree.save(
        tree.TreeDoc(gt.game, greedy, "partial", {"lower_bound": 1, "bound_of": "fewest-at-7"}, stats.to_json()),
        here.best_found_path("bulls-4x8-total"),
    )
    assert here.gap_rows("bulls-4x8-total") == []


@pytest.mark.slow
def test_pilot_merges_a_best_tree_found_with_the_pilots_tree_given_the_same_endgames(tool, tmp_path):
    """pilot K builds the entropy pilot's tree, gives it exact endgames below the best tree's N (through the
    endgames store) and keeps the cheaper merge of the two, with the pilot's record, the endgames' record gathered
    again from the store and the proven bound unchanged; a tree bounded on a fewest-at-D stage is left alone."""
    here = in_folder(tool, tmp_path)
    gt, greedy, before, path, endgames = _least_total_best_found(here)
    here.improve("bulls-4x8-total", endgames, 60, None)
    improved = verify_file(path)[1]
    here.pilot("bulls-4x8-total", endgames, 5, None)
    doc, after = verify_file(path)
    assert after.total < improved.total < before.total
    (record,) = doc.generator["pilots"]
    assert (record["strategy"], record["width"]) == ("entropy", 5) and record["total"] >= after.total
    endgame = doc.generator["exact_endgame"]
    assert endgame["below"] == 60 and endgame["from_store"] > 0 and endgame["unfinished"] == 0
    assert doc.generator["lower_bound"] == 1 and doc.objective == "partial"
    assert tool.best_found(after, "total", doc.generator).endswith(
        ", exact below 60 secrets, upper levels partly by the entropy pilot (5)"
    )
    fewest = here.best_found_path("bulls-4x8-worst-then-fewest")
    tree.save(
        tree.TreeDoc(gt.game, greedy, "partial", {"bound_of": f"fewest-at-{before.worst}"}, before.to_json()), fewest
    )
    kept = fewest.read_bytes()
    here.pilot("bulls-4x8-worst-then-fewest", None, 5, None)
    assert fewest.read_bytes() == kept
