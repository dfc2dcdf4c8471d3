"""A store is a file from anywhere: it runs no SQL of its own, and Ctrl-C or SIGTERM stops even a statement
inside SQLite (issue 55). A store whose `results` was an endless recursive view, or that had an insert trigger,
hung a solve until kill -9."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from strategy.files import FileError
from strategy.interrupts import Terminated, terminate_on_signals
from strategy.rules import parse_game
from strategy.search.store import Store, check_schema, compact, connect, merge

from ..conftest import ROOT

GAME = parse_game("bulls:3x6")
ENDLESS = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r)"
COLUMNS = "key, size, depth, value, exact, tree, seconds, saved"
# each is run on a fresh store: what it adds would run as the store is read or written
HOSTILE = {
    "results an endless view": f"DROP TABLE results; CREATE VIEW results({COLUMNS}) AS {ENDLESS} "
    "SELECT 'k', 1, 1, 1, 1, NULL, 0.0, 0.0 FROM r",
    "an endless insert trigger": f"CREATE TRIGGER spin AFTER INSERT ON results BEGIN {ENDLESS} "
    "SELECT count(*) FROM r; END",
    "a trigger on meta": "CREATE TRIGGER note AFTER UPDATE ON meta BEGIN SELECT 1; END",
    "meta a view": "ALTER TABLE meta RENAME TO m; CREATE VIEW meta AS SELECT * FROM m",
    "an expression index": "CREATE INDEX costly ON results (length(printf('%.*c', 100000000, 'x')))",
    "a check on results": "DROP TABLE results; CREATE TABLE results (key TEXT PRIMARY KEY, size INTEGER NOT NULL, "
    "depth INTEGER NOT NULL, value INTEGER NOT NULL CHECK (length(zeroblob(500000000)) > 0), "
    "exact INTEGER NOT NULL, tree BLOB, seconds REAL NOT NULL, saved REAL NOT NULL) WITHOUT ROWID",
    "a generated column": "DROP TABLE results; CREATE TABLE results (key TEXT PRIMARY KEY, size INTEGER NOT NULL, "
    "depth INTEGER NOT NULL, value INTEGER NOT NULL, exact INTEGER NOT NULL, tree BLOB, "
    "seconds REAL NOT NULL, saved REAL NOT NULL, big AS (zeroblob(500000000))) WITHOUT ROWID",
    "a view elsewhere": f"CREATE VIEW other AS {ENDLESS} SELECT x FROM r",
}


def store_file(tmp_path: Path, sql: str = "", name: str = "s.db") -> Path:
    path = tmp_path / name
    Store(path, GAME, False).close()
    if sql:
        con = sqlite3.connect(path)
        con.executescript(sql)
        con.commit()
        con.close()
    return path


@pytest.fixture
def watchdog(monkeypatch):
    """Every SQLite connection opened in the test is interrupted after 5 s: a statement that never ends fails the
    test instead of hanging it."""
    opened = []
    real_connect = sqlite3.connect

    def connect_watched(*args, **kwargs):
        opened.append(real_connect(*args, **kwargs))
        return opened[-1]

    def interrupt() -> None:
        for con in opened:
            try:
                con.interrupt()
            except sqlite3.ProgrammingError:  # closed already
                pass

    monkeypatch.setattr(sqlite3, "connect", connect_watched)
    timer = threading.Timer(5.0, interrupt)
    timer.start()
    yield
    timer.cancel()


@pytest.mark.parametrize("case", HOSTILE)
def test_a_store_with_sql_of_its_own_is_refused_as_it_is_opened(tmp_path, watchdog, case):
    path = store_file(tmp_path, HOSTILE[case])
    start = time.perf_counter()
    with pytest.raises(FileError, match="SQL of its own"):
        Store(path, GAME, False)
    assert time.perf_counter() - start < 3  # milliseconds, on any machine; an endless statement is stopped at 5 s
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.db"]  # no journal left beside it


@pytest.mark.parametrize("case", ["results an endless view", "an endless insert trigger"])
@pytest.mark.parametrize("command", ["solve", "bound"])
def test_a_hostile_store_ends_a_command_in_one_line_not_a_hang(tmp_path, case, command):
    path = store_file(tmp_path, HOSTILE[case])
    out = tmp_path / "t.json"
    args = ["-o", str(out)] if command == "solve" else ["--levels", "2"]
    r = subprocess.run(
        [sys.executable, "-m", "strategy", command, "--game", "bulls:3x6", "--quiet", "--store", str(path), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith(f"strategy: error: store {str(path)!r} holds a ")
    assert not out.exists()


@pytest.mark.parametrize("how", ["compact", "merge", "compact beside a shipped copy"])
def test_compact_and_merge_refuse_a_hostile_store_and_write_nothing(tmp_path, watchdog, how):
    good = store_file(tmp_path, name="good.db")
    bad = store_file(tmp_path, HOSTILE["results an endless view"], name="bad.db")
    target = tmp_path / "out.db"
    with pytest.raises(FileError, match="SQL of its own"):
        if how == "compact":
            compact(bad, target, 1.0)
        elif how == "merge":
            merge([good, bad], target)
        else:
            compact(good, target, 1.0, shipped=bad)
    assert not target.exists() and not Path(f"{target}.tmp").exists()


def test_a_store_trusts_no_function_of_its_schema(tmp_path):
    con, _ = connect(tmp_path / "s.db")
    assert con.execute("PRAGMA trusted_schema").fetchone() == (0,)
    con.close()
    store = Store(store_file(tmp_path), GAME, False)
    assert store.con.execute("PRAGMA trusted_schema").fetchone() == (0,)
    store.close()


def test_a_store_a_solve_wrote_passes_the_schema_check(tmp_path):
    """What this tool writes is what it reads: a new store, and one from before the columns' comments changed."""
    path = store_file(tmp_path)
    con = sqlite3.connect(path)
    check_schema(con, path)
    con.close()
    old = tmp_path / "old.db"
    con = sqlite3.connect(old)
    con.executescript(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE results (\n key TEXT PRIMARY KEY, -- a hash\n size INTEGER NOT NULL,\n"
        " depth INTEGER NOT NULL,\n value INTEGER NOT NULL,\n exact INTEGER NOT NULL, -- 1 exact\n"
        " tree BLOB,\n seconds REAL NOT NULL,\n saved REAL NOT NULL\n) WITHOUT ROWID;"
    )
    check_schema(con, old)
    con.close()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_a_statement_inside_sqlite_within_a_second(tmp_path, sig):
    """A statement that runs long inside SQLite (here an endless one) hears Ctrl-C and SIGTERM through the
    progress handler, and the store raises the interruption itself, not SQLite's "interrupted". (Without it, the
    signal's handler runs only once SQLite returns: a watchdog ends the statement after 5 s so that this test fails
    rather than hangs.)"""
    terminate_on_signals()
    store = Store(store_file(tmp_path), GAME, False)
    watchdog = threading.Timer(5.0, store.con.interrupt)
    threading.Timer(0.3, os.kill, (os.getpid(), sig)).start()
    watchdog.start()
    start = time.perf_counter()
    try:
        with pytest.raises(KeyboardInterrupt if sig == signal.SIGINT else Terminated):
            with store._statements():
                store.con.execute(f"{ENDLESS} SELECT count(*) FROM r").fetchone()
        took = time.perf_counter() - start
    finally:
        watchdog.cancel()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
    assert took < 3, took  # the signal comes at 0.3 s and is heard within milliseconds; the watchdog stops at 5 s
    assert store.count() == 0  # the store still works after it
    store.close()
