"""Exact search at scale: the same search on local processes and on a real Dask cluster (loopback only),
surviving dead workers, resuming from its store after SIGINT, kill -9 or a lost scheduler with an identical
tree, and stopping in one line, with its best tree written, when its store or log cannot be written."""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import orjson
import pytest

from strategy.engine.table import game_table
from strategy.interrupts import Interrupted
from strategy.rules import parse_game
from strategy.tree import format as tree_io
from strategy.tree.verify import measure

from ..conftest import ROOT, TREES, import_tool, interrupt_after, run_cli, solve

pytestmark = [pytest.mark.slow, pytest.mark.cluster]

ENV = dict(os.environ, PYTHONPATH=str(ROOT))


def solved(spec: str, **kw):
    gt = game_table(parse_game(spec))
    report = solve(gt, "total", progress=False, **kw)
    assert measure(gt.game, report.tree)[0].total == report.proven["total"]
    return report


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
    ) as c:  # not 8787: see tools/benchlib.py
        yield c


@pytest.mark.parametrize("spec", ["bulls:3x10", "mastermind:4x6", "bulls:4x6"])
def test_dask_cluster_gives_the_same_tree_as_one_process(cluster, spec):
    alone = solved(spec, jobs=1)
    on_dask = solved(spec, scheduler=cluster.scheduler_address, plan="fine")
    assert on_dask.run["tasks"] > 1 and "Dask" in on_dask.run["executor"]
    assert on_dask.proven == alone.proven and on_dask.tree == alone.tree
    local = solved(spec, jobs=2, plan="fine")
    assert local.tree == alone.tree and local.run["executor"] == "2 local processes"


def _kill_a_worker_soon(pids, delay: float, done: threading.Event) -> threading.Thread:
    """Once the workers exist, wait `delay` seconds and kill one of them with SIGKILL."""

    def kill() -> None:
        deadline = time.time() + 60
        while not pids() and time.time() < deadline and not done.is_set():
            time.sleep(0.05)
        time.sleep(delay)
        if not done.is_set():
            for pid in pids()[:1]:
                os.kill(pid, signal.SIGKILL)

    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread


def test_a_dask_worker_killed_mid_run_loses_only_its_tasks(cluster):
    alone = solved("mastermind:4x6", jobs=1)
    done = threading.Event()

    def pids():
        return [w.process.pid for w in cluster.workers.values() if w.process and w.process.pid]

    before = set(pids())
    _kill_a_worker_soon(pids, 0.3, done)  # the whole run takes about a second on 2 cores
    report = solved("mastermind:4x6", scheduler=cluster.scheduler_address, plan="fine")
    done.set()
    assert report.proven == alone.proven and report.tree == alone.tree
    deadline = time.time() + 30
    while set(pids()) == before and time.time() < deadline:
        time.sleep(0.2)
    assert set(pids()) != before, "no worker was killed during the run"
    assert report.run["lost_workers"] >= 1, "the killed worker was not counted"


def test_a_local_worker_killed_mid_run_is_replaced(monkeypatch):
    from strategy.search import executors

    alone = solved("mastermind:4x6", jobs=1)
    original = executors.LocalProcesses.submit
    submitted = []

    def submit_then_kill(self, spec, task):  # a worker dies while tasks are out, however fast the machine
        handle = original(self, spec, task)
        submitted.append(handle)
        if len(submitted) == 4:
            os.kill(self.worker_pids()[0], signal.SIGKILL)
        return handle

    monkeypatch.setattr(executors.LocalProcesses, "submit", submit_then_kill)
    report = solved("mastermind:4x6", jobs=2, plan="fine")
    assert report.run["lost_workers"] >= 1, "the worker was not killed during the run"
    assert report.tree == alone.tree


def test_a_worker_death_seen_first_by_a_submit_loses_only_the_running_tasks(monkeypatch):
    """The pool may learn of a dead worker before the driver's next look at finished tasks: the next
    submit then finds it broken, and the running tasks are lost and run again, not the solve."""
    from strategy.search import executors

    alone = solved("mastermind:4x6", jobs=1)
    original = executors.LocalProcesses.submit
    killed = []

    def submit_to_a_broken_pool(self, spec, task):
        if not killed and self.running() == 1:  # a task is out: a worker dies, and the pool notices first
            os.kill(self.worker_pids()[0], signal.SIGKILL)
            killed.append(self._pool)
            deadline = time.time() + 10
            while not self._pool._broken and time.time() < deadline:
                time.sleep(0.01)
        return original(self, spec, task)

    monkeypatch.setattr(executors.LocalProcesses, "submit", submit_to_a_broken_pool)
    report = solved("mastermind:4x6", jobs=2, plan="fine")
    assert killed and report.run["lost_workers"] >= 1 and report.tree == alone.tree


def test_a_task_that_kills_every_worker_stops_the_solve(monkeypatch):
    """A dead worker is retried; a task that no worker survives ends the solve with one clear error."""
    from strategy.search import executors

    def start_a_killer(self, spec, task):
        return self._pool.submit(os._exit, 3)  # the worker process dies at once

    monkeypatch.setattr(executors.LocalProcesses, "_start", start_a_killer)
    with pytest.raises(Interrupted) as info:
        solved("bulls:3x6", jobs=2)
    assert isinstance(info.value.__cause__, executors.TaskLost)
    assert re.search("lost 3 times.*out of memory", str(info.value.__cause__))


@pytest.mark.parametrize(
    "failure, hint",
    [
        ((importlib.import_module, "strategy_not_installed"), "No module named .*can every worker import strategy"),
        ((bytearray, 1 << 62), "MemoryError.*out of memory"),
    ],
)
def test_a_task_that_fails_on_every_worker_names_the_likely_cause(monkeypatch, failure, hint):
    """A task that raises in its worker is run again like a lost one; the error that ends the solve says
    what the last attempt raised and what usually causes it (a worker without the engine, or short of memory)."""
    from strategy.search import executors

    def start_a_failure(self, spec, task):
        return self._pool.submit(*failure)

    monkeypatch.setattr(executors.LocalProcesses, "_start", start_a_failure)
    with pytest.raises(Interrupted) as info:
        solved("bulls:3x6", jobs=2)
    assert isinstance(info.value.__cause__, executors.TaskLost)
    assert re.search(f"lost 3 times.*{hint}", str(info.value.__cause__))


# a search long enough (about 8 s on 2 processes) that a Ctrl-C after the store's first results lands mid-search
# (bulls 4 of 9 became a 2 s search, and the signal could arrive once it had finished); its shipped tree is the
# uninterrupted solve's
RESUMED = "bulls:4x10"
RESUMED_TREE = TREES / "bulls-4x10-total.json"


def _solve_cli(tmp: Path, *extra: str, stderr=subprocess.PIPE) -> subprocess.Popen:
    """bulls 4 of 10 with a store and a log in tmp, on 2 local processes unless `extra` names a scheduler."""
    where = () if "--scheduler" in extra else ("--jobs", "2")
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "strategy",
            "solve",
            "--game",
            RESUMED,
            *where,
            "--store",
            str(tmp / "s.db"),
            "--log",
            str(tmp / "log.jsonl"),
            "--quiet",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        env=ENV,
    )


def _wait_for_results(tmp: Path, count: int, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        assert proc.poll() is None, proc.communicate()[1]
        try:
            con = sqlite3.connect(tmp / "s.db")
            n = con.execute("SELECT count(*) FROM results").fetchone()[0]
            con.close()
            if n >= count:
                return
        except sqlite3.Error:
            pass
        time.sleep(0.1)
    raise AssertionError("the store did not fill")


def test_resume_after_sigint_and_kill_9_gives_the_same_tree(tmp_path):
    """bulls 4 of 10: interrupted by Ctrl-C, then its driver killed by SIGKILL, then finished from the store."""
    from strategy.build.greedy import build

    shipped = tree_io.load(RESUMED_TREE)
    optimum = shipped.stats["total"]
    out = tmp_path / "t.json"
    best = tmp_path / "best.json"
    proc = _solve_cli(tmp_path, "-o", str(out), "--partial", str(best))
    _wait_for_results(tmp_path, 10, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "proven lower bound" in err and "Traceback" not in err, err
    # the best tree found so far: verified, above the proven bound, and never worse than the greedy tree
    doc = tree_io.load(best)
    gt = game_table(parse_game(RESUMED))
    found = measure(gt.game, doc.root)[0].total
    greedy = measure(gt.game, build(gt, "expected-size", False, progress=False))[0].total
    assert doc.generator["lower_bound"] <= optimum <= found <= greedy
    assert doc.generator["objective_of_the_search"] == doc.generator["bound_of"] == "total"
    proc = _solve_cli(tmp_path, "-o", str(out))
    _wait_for_results(tmp_path, 30, proc)
    proc.kill()  # kill -9 of the driver: its workers die with it
    assert proc.wait(30) == -signal.SIGKILL, "the second run ended before it could be killed"
    con = sqlite3.connect(tmp_path / "s.db")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    stored = {row[0] for row in con.execute("SELECT key FROM results WHERE exact = 1")}
    con.close()
    proc = _solve_cli(tmp_path, "-o", str(out))
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert "subproblems already solved" in err and f"proved: minimum total {optimum}" in err
    resumed = orjson.loads(out.read_bytes())
    assert resumed["stats"]["total"] == optimum
    rows = [orjson.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    last_run = rows[-1]["run"]
    recomputed = [r for r in rows if r["run"] == last_run and r["exact"] and r["key"] in stored]
    assert recomputed == [], f"{len(recomputed)} stored subproblems were computed again"
    assert resumed["tree"] == orjson.loads(RESUMED_TREE.read_bytes())["tree"]


class DaskProcesses:
    """A real `dask scheduler` on 127.0.0.1 (any free port), and `dask worker` processes added on demand."""

    def __init__(self, tmp: Path):
        address_file = tmp / "scheduler.json"
        self.scheduler = self._start(
            "distributed.cli.dask_scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--scheduler-file",
            str(address_file),
        )
        self.workers: list[subprocess.Popen] = []
        deadline = time.time() + 60
        while not address_file.exists() and time.time() < deadline:
            time.sleep(0.1)
        self.address = orjson.loads(address_file.read_bytes())["address"]

    @staticmethod
    def _start(*args: str) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-m", *args, "--no-dashboard"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=ENV,
        )

    def add_worker(self) -> None:
        self.workers.append(
            self._start("distributed.cli.dask_worker", self.address, "--nworkers", "1", "--nthreads", "1")
        )

    def close(self) -> None:
        for p in (self.scheduler, *self.workers):
            p.kill()
            p.wait(30)


def test_a_lost_dask_scheduler_ends_the_solve_in_one_line_and_the_store_resumes_it(tmp_path):
    """A real `dask scheduler` and `dask worker`; the scheduler is killed with SIGKILL mid-run."""
    dask = DaskProcesses(tmp_path)
    try:
        dask.add_worker()
        address = dask.address
        best = tmp_path / "best.json"
        proc = _solve_cli(tmp_path, "--scheduler", address, "-o", str(tmp_path / "t.json"), "--partial", str(best))
        _wait_for_results(tmp_path, 10, proc)
        dask.scheduler.kill()
        _, err = proc.communicate(timeout=20)  # seconds, not the client's 30 s reconnection: ask no lost scheduler
    finally:
        dask.close()
    assert proc.returncode == 2 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == (
        f"strategy: error: lost the connection to the Dask scheduler at {address}: run "
        "again once it is back (with --store, the search resumes where it stopped)"
    )
    assert "proven lower bound" in err and not (tmp_path / "t.json").exists()
    assert tree_io.load(best).generator["lower_bound"] <= tree_io.load(RESUMED_TREE).stats["total"]
    proc = _solve_cli(tmp_path, "-o", str(tmp_path / "t.json"))
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0 and "subproblems already solved" in err, err
    assert orjson.loads((tmp_path / "t.json").read_bytes())["tree"] == orjson.loads(RESUMED_TREE.read_bytes())["tree"]


def test_a_solve_waits_for_dask_workers_and_uses_those_that_join_later(tmp_path):
    """Driver first, then the workers: it says what it waits for, then sends tasks to every worker that joins."""
    dask = DaskProcesses(tmp_path)
    try:
        err_file = tmp_path / "err.txt"
        with err_file.open("w") as err:
            proc = _solve_cli(tmp_path, "--scheduler", dask.address, "-o", str(tmp_path / "t.json"), stderr=err)
        deadline = time.time() + 60
        while "waiting for a worker" not in err_file.read_text() and time.time() < deadline:
            assert proc.poll() is None, err_file.read_text()
            time.sleep(0.1)
        log = tmp_path / "log.jsonl"
        time.sleep(1)
        assert proc.poll() is None and not (log.exists() and log.stat().st_size), "a task ran with no worker"
        from distributed import Client

        with Client(dask.address, timeout=60) as client:
            dask.add_worker()
            client.wait_for_workers(1, timeout=60)  # the solve sends its tasks now
            # joins the running solve as soon as the first worker has (the solve, of a few seconds, recounts its
            # workers every second)
            dask.add_worker()
            client.wait_for_workers(2, timeout=60)
        assert proc.wait(300) == 0, err_file.read_text()
    finally:
        dask.close()
    err = err_file.read_text()
    assert f"waiting for a worker to join the Dask scheduler at {dask.address}" in err
    assert f"Dask at {dask.address} (2 workers, 2 threads)" in err
    assert orjson.loads((tmp_path / "t.json").read_bytes())["tree"] == orjson.loads(RESUMED_TREE.read_bytes())["tree"]


def test_a_compacted_store_keeps_the_exact_results_and_the_slow_bounds_and_resumes_to_the_same_tree(tmp_path):
    """The shipped form of a store (tools/regenerate_trees.py): a subset of its results is still a store."""
    from strategy.search.store import Store, compact

    store, small = tmp_path / "s.db", tmp_path / "small.db"
    first = run_cli(
        "solve", "--game", "bulls:4x7", "--jobs", "2", "--store", str(store), "--quiet", "-o", str(tmp_path / "a.json")
    )
    assert first.returncode == 0, first.stderr
    con = sqlite3.connect(store)
    exact, bounds = (con.execute(f"SELECT count(*) FROM results WHERE exact = {e}").fetchone()[0] for e in (1, 0))
    times = sorted(row[0] for row in con.execute("SELECT seconds FROM results WHERE exact = 0"))
    con.close()
    cut = times[len(times) // 2]  # the median time of a bound: about half of them are kept
    slow = sum(t >= cut for t in times)
    assert 0 < slow < bounds and exact > 1
    assert compact(store, small, cut) == exact + slow
    assert Store(small, parse_game("bulls:4x7"), False).count() == exact + slow
    assert compact(store, small, float("inf")) == exact  # replaced whole
    con = sqlite3.connect(small)
    con.execute("DELETE FROM results WHERE depth = 0")  # as if the run had been interrupted before the root
    con.commit()
    con.close()
    again = run_cli(
        "solve", "--game", "bulls:4x7", "--jobs", "2", "--store", str(small), "--quiet", "-o", str(tmp_path / "b.json")
    )
    assert again.returncode == 0 and f"{exact - 1} subproblems already solved" in again.stderr, again.stderr
    assert (
        orjson.loads((tmp_path / "b.json").read_bytes())["tree"]
        == orjson.loads((tmp_path / "a.json").read_bytes())["tree"]
    )
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


def test_stores_of_two_games_do_not_merge(tmp_path):
    """A shipped chunk of another game or probe rule is refused in one line, and no merged file is left."""
    from strategy.files import FileError
    from strategy.search.store import Store, merge

    for name, spec, consistent in (("a", "bulls:3x6", False), ("b", "bulls:3x6", True), ("c", "mastermind:3x3", False)):
        Store(tmp_path / f"{name}.db", parse_game(spec), consistent).close()
    for other in ("b", "c"):
        with pytest.raises(FileError, match=rf"^store '[^']*{other}\.db' is not of the game and probe rule of "):
            merge([tmp_path / "a.db", tmp_path / f"{other}.db"], tmp_path / "m.db")
    assert not (tmp_path / "m.db").exists() and not (tmp_path / "m.db.tmp").exists()
    assert merge([tmp_path / "a.db", tmp_path / "a.db"], tmp_path / "m.db") == 0


def test_a_merged_store_keeps_the_best_result_of_each_set_whatever_the_order(tmp_path):
    """An exact value beats a bound, a higher bound a lower one, in whichever of the merged stores it comes."""
    import itertools

    from strategy.search.store import Store, merge

    game = parse_game("bulls:3x6")
    results = [[("k", 4, False), ("j", 1, False)], [("k", 6, False), ("j", 3, True)], [("k", 5, True)]]
    for order in itertools.permutations(range(3)):
        folder = tmp_path / "".join(map(str, order))
        folder.mkdir()
        for i in order:
            store = Store(folder / f"{i}.db", game, False)
            for key, value, exact in results[i]:
                store.put(key, 3, 1, value, exact, {"guess": "012"} if exact else None, 0.1)
            store.close()
        merge([folder / f"{i}.db" for i in order], folder / "m.db")
        with contextlib.closing(Store(folder / "m.db", game, False)) as merged:
            got = {key: (merged.get(key).value, merged.get(key).exact) for key in ("k", "j")}
        assert got == {"k": (5, True), "j": (3, True)}, order


def test_an_interrupted_solve_stores_the_bound_it_proved_and_a_resume_from_the_store_alone_starts_there(
    tmp_path, monkeypatch
):
    """On an interruption each unfinished set the driver split keeps its proven bound in the store (the root's
    too, which even the most compacted store ships): a run resumed from the store alone, with no partial file,
    reports at least that bound at once (bulls 4 of 7, split finely, interrupted mid-search)."""
    import numpy as np

    from strategy.search import objectives, worker
    from strategy.search.driver import Plan
    from strategy.search.store import Store, compact, set_key

    gt = game_table(parse_game("bulls:4x7"))
    plan = Plan(min_size=10, split_probes=10, split_refuting=10)
    store, small = tmp_path / "s.db", tmp_path / "small.db"

    def interrupted_after(pushes: int) -> int:
        interrupt_after(monkeypatch, pushes)
        monkeypatch.setattr(worker, "_ENGINES", {})  # a fresh engine, as in a new process: nothing in memory
        with pytest.raises(Interrupted) as info:
            solve(gt, "total", progress=False, store=str(small if pushes == 0 else store), plan=plan)
        return info.value.partial.lower_bound

    optimum = solved("bulls:4x7").proven["total"]
    bound = interrupted_after(15)
    assert bound < optimum
    root = set_key(objectives.total().key, 0, np.arange(gt.size))
    assert Store(store, gt.game, False).get(root).value == bound
    compact(store, small, float("inf"))  # exact results and the root's bound only
    assert Store(small, gt.game, False).get(root).value == bound
    assert bound <= interrupted_after(0) <= optimum


def test_a_full_disk_stops_the_solve_like_an_interruption_and_the_store_stays_usable(tmp_path, monkeypatch, capsys):
    """SQLite's page limit stands in for a full disk: one line, the partial tree written, the store consistent."""
    from strategy.cli import main
    from strategy.search.store import Store

    opened = Store.__init__

    def full_after_a_few_pages(self, *args, **kw):
        opened(self, *args, **kw)
        self.con.execute("PRAGMA max_page_count = 6")

    monkeypatch.setattr(Store, "__init__", full_after_a_few_pages)
    store, best, out = tmp_path / "s.db", tmp_path / "best.json", tmp_path / "t.json"
    args = ["solve", "--game", "bulls:4x8", "--store", str(store), "--quiet", "-o", str(out)]
    assert main([*args, "--partial", str(best)]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == (
        f"strategy: error: store '{store}' cannot be written: database or disk is full"
    )
    assert "proven lower bound" in err and "Traceback" not in err and not out.exists()
    optimum = solved("bulls:4x8", jobs=1).proven["total"]
    assert tree_io.load(best).generator["lower_bound"] <= optimum
    con = sqlite3.connect(store)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    monkeypatch.setattr(Store, "__init__", opened)
    assert main(args) == 0
    assert orjson.loads(out.read_bytes())["stats"]["total"] == optimum


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_log_that_cannot_be_written_stops_the_solve_in_one_line(tmp_path):
    """/dev/full fails every write with ENOSPC: the partial tree is still written, the error is one line."""
    best = tmp_path / "best.json"
    r = run_cli(
        "solve",
        "--game",
        "bulls:4x8",
        "--store",
        str(tmp_path / "s.db"),
        "--log",
        "/dev/full",
        "--quiet",
        "--partial",
        str(best),
        "-o",
        str(tmp_path / "t.json"),
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert (
        r.stderr.strip().splitlines()[-1]
        == "strategy: error: cannot write the log '/dev/full': No space left on device"
    )
    assert "proven lower bound" in r.stderr and best.exists() and not (tmp_path / "t.json").exists()


def test_a_store_for_another_game_or_a_damaged_one_is_refused(tmp_path):
    store = tmp_path / "s.db"
    assert (
        run_cli(
            "solve", "--game", "bulls:3x6", "--store", str(store), "--quiet", "-o", str(tmp_path / "a.json")
        ).returncode
        == 0
    )
    r = run_cli("solve", "--game", "bulls:3x7", "--store", str(store), "--quiet", "-o", str(tmp_path / "b.json"))
    assert (
        r.returncode == 2
        and "is for game 'bulls:3x6', not 'bulls:3x7'" in r.stderr
        and len(r.stderr.strip().splitlines()) == 2
    )
    r = run_cli(
        "solve",
        "--game",
        "bulls:3x6",
        "--consistent-only",
        "--store",
        str(store),
        "--quiet",
        "-o",
        str(tmp_path / "c.json"),
    )
    assert r.returncode == 2 and "probes" in r.stderr
    damaged = tmp_path / "d.db"
    damaged.write_bytes(b"SQLite format 3\x00" + os.urandom(4000))
    r = run_cli("solve", "--game", "bulls:3x6", "--store", str(damaged), "--quiet", "-o", str(tmp_path / "d.json"))
    assert r.returncode == 2 and "store" in r.stderr and "Traceback" not in r.stderr
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE x (y)")
    con.commit()
    con.close()
    r = run_cli("solve", "--game", "bulls:3x6", "--store", str(other), "--quiet", "-o", str(tmp_path / "e.json"))
    assert r.returncode == 2 and "not a" in r.stderr and "store" in r.stderr


def test_an_unreachable_scheduler_is_one_line(tmp_path, monkeypatch):
    """After Dask's connect timeout (its own setting, from the environment here) the error is one line."""
    monkeypatch.setenv("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT", "3s")
    start = time.perf_counter()
    r = run_cli(
        "solve",
        "--game",
        "bulls:3x6",
        "--scheduler",
        "tcp://127.0.0.1:9",
        "--quiet",
        "-o",
        str(tmp_path / "x.json"),
        timeout=120,
    )
    assert r.returncode == 2 and "cannot reach the Dask scheduler" in r.stderr and "Traceback" not in r.stderr
    assert time.perf_counter() - start < 25
    monkeypatch.setenv("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT", "soon")
    r = run_cli(
        "solve", "--game", "bulls:3x6", "--scheduler", "tcp://127.0.0.1:9", "--quiet", "-o", str(tmp_path / "x.json")
    )
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1].endswith("is not a duration such as 30s")


def test_the_simulation_schedules_a_log_as_written():
    """The list scheduling of tools/simulate_scaling.py on a log whose times are given, not measured: the makespans
    are worked out by hand (four 1 s tasks sent out, released by a 2 s task the driver ran itself)."""
    sim = import_tool("simulate_scaling")
    driver_task = {"run": "7-100", "task": 0, "after": None, "worker": "host:7", "seconds": 2.0}
    sent = [{"run": "7-100", "task": i, "after": 0, "worker": "host:8", "seconds": 1.0} for i in range(1, 5)]
    rows = [driver_task, *sent]
    assert sim.in_driver(driver_task) and not sim.in_driver(sent[0])
    assert sim.makespan(rows, 1) == 6.0 and sim.makespan(rows, 2) == 4.0 and sim.makespan(rows, 64) == 3.0
    assert sim.critical_path(rows) == 3.0
    # 10 ms of the driver's time per task sent out: the fourth starts at 2.03 s and ends 1.01 s later
    assert sim.makespan(rows, 64, 0.01) == pytest.approx(3.04)
    assert sim.makespan(rows, 1, 0.01) == pytest.approx(6.04)


def test_the_task_log_replays_in_the_simulation(tmp_path):
    """A real solve's log replays (a batch of probes as one task). Its times are the machine's, so only what holds
    whatever they are is checked (on a loaded machine every task is slower, the driver's dispatch a smaller share
    of it, and the printed speed-ups, rounded to a tenth, came out equal with and without it: 3.4 < 3.4)."""
    log = tmp_path / "log.jsonl"
    gt = game_table(parse_game("mastermind:4x6"))
    solve(gt, "total", progress=False, jobs=2, plan="fine", log=str(log))
    r = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "simulate_scaling.py"),
            str(log),
            "--workers",
            "1,2,64",
            "--dispatch",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "tasks" in lines[0] and lines[-1].split()[0] == "64"
    rows = [orjson.loads(line) for line in log.read_text().splitlines()]
    tasks = {row["task"] for row in rows}
    assert len(tasks) < len(rows), "the fine plan sent no batch of probes"
    assert int(lines[0].split()[0]) == len(tasks)  # a batch replays as one task
    assert lines[-3].split()[-1] == "1.0x"  # one worker: the work itself
    sim = import_tool("simulate_scaling")
    replayed = sim.load(str(log), None)
    work = sum(row["seconds"] for row in replayed)
    one, two = sim.makespan(replayed, 1), sim.makespan(replayed, 2)
    assert one == pytest.approx(work) and two <= one  # a worker idles only while another works
    assert sim.makespan(replayed, 64, 0.003) >= sim.makespan(
        replayed, 64
    )  # the driver's dispatch delays, never hastens


def test_the_coarse_plan_tries_refutations_of_large_sets_whole_for_a_while_then_splits_them(tmp_path):
    """An interrupted task loses its work, so the few-worker plan never lets a refutation of a set above
    `split_probes` secrets run long as one task: it tries it whole for `whole_seconds` (the engine refutes most
    such questions whole in a fraction of the work of their parts as tasks of their own), and splits it into its
    parts when that is not enough, or at once above `whole_max` secrets. Below `split_probes` a refutation stays
    one task. The tree is the same every way (Mastermind 4x6, 1296 secrets: its root's other probes are
    refutations)."""
    import dataclasses

    from strategy.search.driver import COARSE, plan_for

    assert (
        plan_for(2) == COARSE and 1440 < COARSE.split_probes < 1920
    )  # bulls 4 of 10's parts stay whole, 5 of 8's split
    assert COARSE.whole_seconds > 0 and COARSE.whole_max > 3012  # Mastermind 5x7's parts are tried whole
    plans = {
        "whole": dataclasses.replace(COARSE, split_probes=1 << 30),
        "split at once": dataclasses.replace(COARSE, split_probes=1000, whole_max=0),
        "whole in time": dataclasses.replace(COARSE, split_probes=1000, whole_seconds=60.0),
        "out of time": dataclasses.replace(COARSE, split_probes=1000, whole_seconds=1e-4),
    }
    trees, root_tasks, split_questions = {}, {}, {}
    for name, plan in plans.items():
        log = tmp_path / f"{len(trees)}.jsonl"
        trees[name] = solved("mastermind:4x6", jobs=2, plan=plan, log=str(log)).tree
        lines = [orjson.loads(line) for line in log.read_text().splitlines()]
        root_tasks[name] = [line["stopped"] for line in lines if line["size"] == 1296]
        split_questions[name] = len({line["path"][0] for line in lines if line["depth"] == 1})
    assert all(tree == trees["whole"] for tree in trees.values())
    assert split_questions["whole"] == 1 < split_questions["out of time"]  # the first question's parts, or all
    assert root_tasks["whole"] and not any(root_tasks["whole"])
    assert root_tasks["split at once"] == []
    assert root_tasks["whole in time"] == root_tasks["whole"]
    assert any(root_tasks["out of time"])  # (one that ends before the worker looks at the time stands)


def test_the_quick_deadline_stops_only_the_armed_search():
    """The driver's quick tasks are stopped through control[K_STOP] by one polling thread: an armed control
    is stopped after its time, a disarmed one never, and close() ends the thread."""
    import threading
    import time

    import numpy as np

    from strategy.engine import exact
    from strategy.search.driver import Deadline

    deadline = Deadline()
    armed, spared = np.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.int64)
    deadline.arm(spared, 0.005)
    deadline.disarm()
    deadline.arm(armed, 0.005)
    time.sleep(0.1)
    assert armed[exact.K_STOP] == 1 and spared[exact.K_STOP] == 0
    deadline.close()
    time.sleep(0.05)
    assert not any(t.name == "quick-deadline" and t.is_alive() for t in threading.enumerate())


def test_a_batch_of_probes_gives_each_probe_the_result_it_would_get_alone():
    """run_batch tightens the cut-off after each exact value (a later probe must be strictly better), so each
    probe's outcome is the one a task of its own would give with the cut-off the driver would then send."""
    import numpy as np

    from strategy.engine.searcher import Engine, Spec
    from strategy.search.objectives import total
    from strategy.search.worker import Task, run_batch, run_on

    gt = game_table(parse_game("mastermind:3x4"))
    spec = Spec(gt.game, total(), False, 12)
    S = np.arange(gt.size, dtype=np.int32)
    history = np.zeros(0, dtype=np.int64)
    b = Engine(gt, spec).branching(S)
    probes = tuple(range(0, gt.size, 5))
    for beta in (10**9, 200, 190):
        batch = run_batch(Engine(gt, spec), Task("k", S, 0, history, b, beta, probes=probes))
        assert [r.key for r in batch.batch] == [f"k/{p}" for p in probes]
        cut, exact_seen = beta, 0
        for probe, got in zip(probes, batch.batch):
            alone = run_on(Engine(gt, spec), Task("k", S, 0, history, b, cut, probe=probe))
            assert (got.value, got.exact, got.tree) == (alone.value, alone.exact, alone.tree)
            assert got.exact == (got.value < cut) and (got.exact or got.value >= cut)
            if got.exact:
                cut, exact_seen = got.value, exact_seen + 1
        assert exact_seen >= (1 if beta > 10**8 else 0)


@pytest.mark.parametrize("spec,smallest_first", [("bulls:4x7", True), ("mastermind:4x5", False)])
def test_a_root_with_one_question_solves_its_parts_smallest_first(tmp_path, spec, smallest_first):
    """Bulls asks one first question up to symmetry, whose every part must be solved: smallest first, so that an
    interrupted run has proven the most parts. A root with several (Mastermind) may refute its first: largest
    first, the sizes along the task paths say which."""
    log = tmp_path / "log.jsonl"
    solved(spec, jobs=2, log=str(log))
    parts = {}
    for row in map(orjson.loads, log.read_text().splitlines()):
        if row["depth"] == 1 and row["path"][0] == 0:
            parts.setdefault(row["path"][1], row["size"])
    sizes = [parts[i] for i in sorted(parts)]
    assert len(sizes) > 3 and sizes == sorted(sizes, reverse=not smallest_first)


def test_the_share_settled_weighs_the_parts_of_a_roots_only_question_by_their_size_squared():
    """Solved smallest first, the small parts would otherwise count as most of the work; elsewhere secrets count."""
    from types import SimpleNamespace

    from strategy.search.driver import ProbeNode

    node = object.__new__(ProbeNode)
    node.owner = SimpleNamespace(parent=None, probes=[(0, 0, 0)], n=11)
    node.parts = [SimpleNamespace(n=1, progress=lambda: 1.0), SimpleNamespace(n=9, progress=lambda: 4.5)]
    assert node.progress() == pytest.approx(11 * (1 * 1 + 0.5 * 81) / 82)
    node.owner.probes.append((1, 0, 0))  # a root with two questions, or any other set: settled secrets
    assert node.progress() == 5.5


def test_the_share_settled_of_a_split_set_counts_its_questions_worth_searching_alike():
    """The first question is one of the questions still worth searching, not half of the work (on bulls 5 of 9 it was
    about 1% of it); a question refuted by its listed bound counts nothing, one that runs is credited by its progress."""
    from types import SimpleNamespace

    from strategy.search.driver import INF, SetNode

    node = object.__new__(SetNode)
    node.n, node.done, node.parent = 100, False, None
    node.drv = SimpleNamespace(root_beta=50)
    node.incumbent, node.incumbent_pos, node.guide_cut = INF, -1, INF
    node.probes = [(p, bound, 0) for p, bound in enumerate((10, 20, 30, 60, 49))]  # 60: refuted by its bound
    node.proven = {}
    node.launched = {0: SimpleNamespace(done=False, progress=lambda: 40.0)}
    assert node.progress() == pytest.approx(100 * 0.4 / 4)
    node.launched = {0: SimpleNamespace(done=True), 1: SimpleNamespace(done=False, progress=lambda: 50.0)}
    assert node.progress() == pytest.approx(100 * 1.5 / 4)
    node.incumbent, node.incumbent_pos = 40, 0  # the first question's value: the question bounded by 49 is refuted too
    assert node.progress() == pytest.approx(100 * 1.5 / 3)
    node.proven = {2: 45}
    node.launched[1] = SimpleNamespace(done=True)
    assert node.progress() == pytest.approx(100.0)


def test_a_stores_probe_values_of_a_set_are_read_in_one_scan_committed_or_pending(tmp_path):
    """`probe_values` finds the results keyed `key/probe` of that set only (not of a set whose key extends it),
    whether committed or still pending, the higher when a probe has two."""
    from strategy.search.store import Store, set_key

    game = parse_game("bulls:3x6")
    key = set_key("total", 1, np.arange(5, dtype=np.int32))
    with contextlib.closing(Store(tmp_path / "s.db", game, False)) as store:
        for name, value, exact in (
            (f"{key}/3", 10, False),
            (f"{key}/12", 7, True),
            (f"{key}x/4", 99, False),
            (key, 50, False),
            (f"{key}/3/5", 98, False),
        ):
            store.put(name, 5, 1, value, exact, {"guess": "012"} if exact else None, 0.1)
        store.commit()
        store.put(f"{key}/3", 5, 1, 11, False, None, 0.1)  # pending: not committed yet
        store.put(f"{key}/40", 5, 1, 9, False, None, 0.1)
        assert store.probe_values(key) == {3: 11, 12: 7, 40: 9}
        assert store.probe_values(set_key("total", 2, np.arange(5, dtype=np.int32))) == {}
