"""The store: every subproblem a solve finishes, in SQLite, so that a run resumes after any interruption.

One file holds one game and one probe rule (checked when it is opened); results of several objectives
may share it (the key includes the objective's fingerprint). A result is the exact value of a candidate
set at a depth with its canonical subtree, or a proven lower bound. A solve's driver writes it, and so does
a lookahead bound given it (what it searched exactly, and its slower bounds); WAL mode and a commit per
result batch, so a kill at any moment leaves a consistent file: SQLite's journal rolls back a half-written
transaction. Sets are keyed by a hash of (objective, depth, sorted codes); the size and depth are kept
beside it for the log and the tools. A lookahead bound also keeps its own results under keys of their own
(the objective's fingerprint with its levels and N), final or a bound: what it found, not what the set is
worth, so no solve reads them.

A store is a file from anywhere, so it runs no SQL of its own: its schema must be exactly the tables this tool
writes (no view, trigger, index, check or default of its own), functions in a schema are not trusted
(`trusted_schema=OFF`), and Ctrl-C or SIGTERM stops a statement within milliseconds (a progress handler), for a
store and every store `compact` and `merge` read.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import orjson

from ..files import MAX_UNPACK_RATIO, FileError, quote, unpack_limit
from ..interrupts import Heard
from ..rules import Game

STORE_FORMAT = "strategy-store"
STORE_VERSION = 1
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS results (
    key     TEXT PRIMARY KEY,   -- hash of (objective, depth, sorted codes)
    size    INTEGER NOT NULL,   -- secrets in the set
    depth   INTEGER NOT NULL,   -- questions asked before it
    value   INTEGER NOT NULL,   -- exact value, or a proven lower bound
    exact   INTEGER NOT NULL,   -- 1 exact (tree given; a lookahead's key: its final bound), 0 lower bound
    tree    BLOB,               -- zlib-compressed JSON subtree when exact
    seconds REAL NOT NULL,      -- work it took (summed over its tasks)
    saved   REAL NOT NULL       -- when it was written (Unix time)
) WITHOUT ROWID;
"""


def set_key(objective: str, d: int, S: np.ndarray) -> str:
    """The canonical key of a candidate set at a depth under an objective."""
    h = hashlib.blake2b(digest_size=16)
    h.update(objective.encode())
    h.update(d.to_bytes(4, "little"))
    h.update(np.sort(np.asarray(S, dtype=np.int32)).tobytes())
    return h.hexdigest()


class StoreRefused(FileError):
    """A row of a store that is not what a solve writes (altered or damaged): the search stops at once, with no
    partial result built on it."""


PROGRESS_STEPS = 10_000  # SQLite's steps between two looks for a signal (well under a millisecond)


def connect(path: str | os.PathLike, **options) -> tuple[sqlite3.Connection, Heard]:
    """A connection to a store file that trusts nothing in its schema and hears signals within its statements
    (raise what `Heard` caught with `raise_heard` when a statement ends in "interrupted")."""
    con = sqlite3.connect(path, **options)
    heard = Heard()
    try:
        con.execute("PRAGMA trusted_schema=OFF")
    except BaseException:
        con.close()
        raise
    con.set_progress_handler(heard.poll, PROGRESS_STEPS)
    return con, heard


def _normalised(sql: str | None) -> str | None:
    """A schema statement without its comments and with single spaces: the same table whatever its comments say."""
    return None if sql is None else " ".join(re.sub(r"--[^\n]*", " ", sql).split())


@functools.cache
def _schema() -> dict[tuple[str, str], str | None]:
    """(type, name) -> normalised SQL of every schema object a store has, as SCHEMA makes them."""
    con = sqlite3.connect(":memory:")
    try:
        con.executescript(SCHEMA)
        return {
            (kind, name): _normalised(sql)
            for kind, name, sql in con.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
        }
    finally:
        con.close()


def check_schema(con: sqlite3.Connection, path: str | os.PathLike, schema: str = "main") -> None:
    """Refuse a store (`schema`: the name it is attached under) whose tables are not exactly this tool's, or that
    holds a view or a trigger: SQL of its own would run as it is read or written (an endless recursive view, a
    trigger on every insert)."""
    rows = con.execute(f"SELECT type, name, tbl_name, sql FROM {schema}.sqlite_master").fetchall()
    expected = _schema()
    for kind, name, table, sql in rows:
        if kind in ("view", "trigger"):
            raise FileError(f"store {quote(path)} holds a {kind} ({name!r}): a store runs no SQL of its own")
        if table in ("meta", "results") and expected.get((kind, name), "") != _normalised(sql):
            raise FileError(
                f"store {quote(path)}: its {kind} {name!r} is not the one this tool writes "
                f"(a store runs no SQL of its own)"
            )
    present = {(kind, name) for kind, name, _, _ in rows}
    for kind, name in expected:
        if (kind, name) not in present:
            raise FileError(f"{quote(path)} is not a strategy store: it has no {kind} {name!r}")


MAX_VALUE = 1 << 40  # the engine's INF: a value or bound above it is not one the search can have written
MAX_TREE_BYTES = 64 << 20  # a stored subtree unpacks to at most this (the largest game's whole tree is ~10 MB)


@dataclass
class Stored:
    value: int
    exact: bool
    tree: dict | None
    seconds: float


class Store:
    """A SQLite file of finished subproblems for one game and probe rule."""

    def __init__(self, path: str | os.PathLike, game: Game, consistent_only: bool):
        self.path = os.fspath(path)
        self.identity = {
            "format": STORE_FORMAT,
            "version": str(STORE_VERSION),
            "game": game.spec,
            "probes": "consistent" if consistent_only else "any",
        }
        fresh = not os.path.exists(self.path) or os.path.getsize(self.path) == 0
        # not always used by the thread that opened it (a lookahead reads it from the threads it runs in, so that a
        # Ctrl-C stops it): `_lock` keeps them one at a time
        try:
            self.con, self._heard = connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        except sqlite3.DatabaseError as e:
            raise FileError(f"store {quote(self.path)} is not a usable store: {e}") from None
        try:
            if fresh:
                self.con.executescript("BEGIN;" + SCHEMA + "COMMIT;")
                self.con.executemany("INSERT INTO meta VALUES (?, ?)", sorted(self.identity.items()))
            self._check()  # before the journal mode is set: a file it refuses is left as it was, byte for byte
            self.con.execute("PRAGMA journal_mode=WAL")
            self.con.execute("PRAGMA synchronous=NORMAL")
        except BaseException as e:
            self.con.close()  # no journal files left beside a file it refuses
            if isinstance(e, sqlite3.DatabaseError):
                self._heard.raise_heard()
                raise FileError(f"store {quote(self.path)} is not a usable store: {e}") from None
            raise
        self._pending: list[tuple] = []
        self._last_commit = time.monotonic()
        self._lock = threading.RLock()  # the threads of one lookahead bound share the store

    def _check(self) -> None:
        try:
            check_schema(self.con, self.path)
            meta = dict(self.con.execute("SELECT key, value FROM meta").fetchall())
            self.con.execute("SELECT count(*) FROM results").fetchone()
        except sqlite3.DatabaseError as e:
            self._heard.raise_heard()
            raise FileError(f"store {quote(self.path)} is damaged or not a store: {e}") from None
        if meta.get("format") != STORE_FORMAT:
            raise FileError(f"{quote(self.path)} is not a strategy store")
        for field in ("version", "game", "probes"):
            if meta.get(field) != self.identity[field]:
                raise FileError(
                    f"store {quote(self.path)} is for {field} {meta.get(field)!r}, "
                    f"not {self.identity[field]!r}: use another file"
                )

    @contextlib.contextmanager
    def _statements(self):
        """SQL run in the block: a statement a signal stopped raises that signal's interruption, not SQLite's
        "interrupted"."""
        try:
            yield
        except sqlite3.OperationalError:
            self._heard.raise_heard()
            raise

    def __len__(self) -> int:
        self.commit()  # what is pending counts too
        with self._statements():
            return self.con.execute("SELECT count(*) FROM results").fetchone()[0]

    def count(self, exact: bool | None = None) -> int:
        if exact is None:
            return len(self)
        self.commit()
        # an exact value comes with its tree; a lookahead's final bound (exact = 1 too) has none
        sql = "exact = 1 AND tree IS NOT NULL" if exact else "NOT (exact = 1 AND tree IS NOT NULL)"
        with self._statements():
            return self.con.execute(f"SELECT count(*) FROM results WHERE {sql}").fetchone()[0]

    def get(self, key: str) -> Stored | None:
        """The result stored for `key`, its fields checked for type and range (FileError naming the row when one is
        not what a solve writes); whether an exact value's subtree holds is for the caller, who knows the set
        (`search.known.stored_result`)."""
        with self._lock:
            for pending in reversed(self._pending):
                if pending[0] == key:
                    return Stored(pending[3], bool(pending[4]), _unpack(pending[5]), pending[6])
            with self._statements():
                row = self.con.execute(
                    "SELECT value, exact, tree, seconds FROM results WHERE key = ?", (key,)
                ).fetchone()
        if row is None:
            return None
        value, exact, blob, seconds = row
        self.check_value(key, value)
        if exact not in (0, 1) or isinstance(exact, float):
            raise self.refused(key, f"exact is {_shown(exact)}, not 0 or 1")
        if not isinstance(seconds, (int, float)) or not 0 <= seconds < float("inf"):
            raise self.refused(key, f"seconds is {_shown(seconds)}")
        if blob is not None and not isinstance(blob, bytes):
            raise self.refused(key, f"its tree is {type(blob).__name__}, not a compressed subtree")
        try:
            tree = _unpack(blob)
        except (zlib.error, orjson.JSONDecodeError, ValueError) as e:
            raise self.refused(key, f"its subtree cannot be read: {e}") from None
        if tree is not None and not isinstance(tree, dict):
            raise self.refused(key, "its subtree is not a node")
        return Stored(value, bool(exact), tree, float(seconds))

    def check_value(self, key: str, value: object) -> None:
        """A stored value must be an integer the search can have proven (0 to its INF), or the row is refused."""
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_VALUE:
            raise self.refused(key, f"value is {_shown(value)}, not a value from 0 to 2^40")

    def refused(self, key: str, why: str) -> StoreRefused:
        """The one line that refuses a row of this store."""
        return StoreRefused(
            f"store {quote(self.path)}, row {key!r}: {why}; the store was altered or damaged "
            f"(delete the row, or the store, to search it again)"
        )

    def probe_values(self, key: str) -> dict[int, int]:
        """What the store proves of each first question of a set (the results keyed `key/probe`: an exact value
        or a bound), in one range scan of the keys rather than a lookup per question."""
        prefix = f"{key}/"
        with self._lock:
            with self._statements():
                rows = self.con.execute(
                    "SELECT key, value FROM results WHERE key > ? AND key < ?", (prefix, f"{key}0")
                ).fetchall()  # '0' follows '/'
            pending = [(row[0], row[3]) for row in self._pending if row[0].startswith(prefix)]
        out: dict[int, int] = {}
        for name, value in rows + pending:
            probe = name[len(prefix) :]
            if probe.isdigit():
                self.check_value(name, value)
                out[int(probe)] = max(out.get(int(probe), 0), value)
        return out

    def put(self, key: str, size: int, depth: int, value: int, exact: bool, tree: dict | None, seconds: float) -> None:
        """Record a result (an exact value replaces a bound; a bound never replaces an exact value; `merge` applies
        the same rule in SQL)."""
        with self._lock:
            old = self.get(key)
            if old is not None and (old.exact or (not exact and old.value >= value)):
                return
            blob = zlib.compress(orjson.dumps(tree), 6) if tree is not None else None
            self._pending.append((key, size, depth, value, int(exact), blob, seconds, time.time()))
            if len(self._pending) >= 200 or time.monotonic() - self._last_commit > 1.0:
                self.commit()

    def commit(self) -> None:
        with self._lock:
            if not self._pending:
                return
            try:
                self.con.execute("BEGIN IMMEDIATE")
                try:
                    self.con.executemany(
                        "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?)", self._pending
                    )
                    self.con.execute("COMMIT")
                except BaseException:
                    if self.con.in_transaction:  # SQLite rolls back by itself on a full disk
                        self.con.execute("ROLLBACK")
                    raise
            except sqlite3.Error as e:
                # a full disk: the solve stops as on Ctrl-C; what was pending is dropped, so that close() does not
                # fail on it again (a signal heard inside SQLite is raised as itself, the batch kept for close())
                self._heard.raise_heard()
                self._pending.clear()
                raise FileError(f"store {quote(self.path)} cannot be written: {e}") from None
            self._pending.clear()
            self._last_commit = time.monotonic()

    def close(self) -> None:
        try:
            self.commit()
        finally:
            self.con.close()


def compact(
    source: str | os.PathLike, target: str | os.PathLike, min_seconds: float, shipped: str | os.PathLike | None = None
) -> int:
    """Copy a store into a new file with every exact result, the bounds that took at least `min_seconds` to prove
    (the many quick ones cost less to find again than to carry) and the roots' bounds: a store small enough to ship.
    With `shipped` (a store copied earlier), only the results it does not hold as they are now: what the store has
    gained since, to ship beside that copy (`merge` puts them together). Returns the number of results kept; the
    target is written whole or not at all."""
    if not os.path.isfile(source):
        raise FileError(f"store {quote(os.fspath(source))} does not exist")
    attached = {"source": source, **({"shipped": shipped} if shipped is not None else {})}
    new = (
        ""
        if shipped is None
        else (
            " AND NOT EXISTS (SELECT 1 FROM shipped.results h WHERE h.key = s.key"
            " AND h.value = s.value AND h.exact = s.exact)"
        )
    )

    def copy(con: sqlite3.Connection) -> int:
        for name, path in attached.items():
            con.execute(f"ATTACH DATABASE ? AS {name}", (os.fspath(path),))
            check_schema(con, path, name)
        con.execute("BEGIN")
        con.execute("INSERT INTO meta SELECT * FROM source.meta")
        kept = con.execute(
            "INSERT INTO results SELECT * FROM source.results s WHERE (s.exact = 1 OR s.seconds >= ? "
            "OR s.depth = 0)" + new,
            (min_seconds,),
        ).rowcount
        con.execute("COMMIT")
        for name in attached:
            con.execute(f"DETACH DATABASE {name}")
        return kept

    return _write_store(target, copy, source)


# `Store.put`'s rule in SQL: a result of a set already there is replaced only if it is a bound and the new one is
# exact or a higher bound (`WHERE true` lets SQLite read ON CONFLICT as the upsert, not as part of the SELECT)
MERGE = """INSERT INTO results SELECT * FROM source.results WHERE true ON CONFLICT(key) DO UPDATE SET
    size = excluded.size, depth = excluded.depth, value = excluded.value, exact = excluded.exact, tree = excluded.tree,
    seconds = excluded.seconds, saved = excluded.saved
    WHERE results.exact = 0 AND (excluded.exact = 1 OR excluded.value > results.value)"""


def merge(sources: Sequence[str | os.PathLike], target: str | os.PathLike) -> int:
    """One store from several of one game and probe rule, each set with the best result any of them holds (an exact
    value, else the highest bound), whatever their order: a shipped store and what was shipped after it (`compact`
    with `shipped`). Returns the number of results; the target is written whole or not at all."""
    if not sources:
        raise ValueError("merge needs at least one store")

    def copy(con: sqlite3.Connection) -> int:
        for i, source in enumerate(sources):
            if not os.path.isfile(source):
                raise FileError(f"store {quote(os.fspath(source))} does not exist")
            con.execute("ATTACH DATABASE ? AS source", (os.fspath(source),))
            check_schema(con, source, "source")
            con.execute("BEGIN")
            meta = sorted(con.execute("SELECT key, value FROM source.meta").fetchall())
            if i == 0:
                con.executemany("INSERT INTO meta VALUES (?, ?)", meta)
                first = meta
            elif meta != first:
                raise FileError(
                    f"store {quote(os.fspath(source))} is not of the game and probe rule of "
                    f"{quote(os.fspath(sources[0]))}"
                )
            con.execute(MERGE)
            con.execute("COMMIT")
            con.execute("DETACH DATABASE source")
        return con.execute("SELECT count(*) FROM results").fetchone()[0]

    return _write_store(target, copy, sources[0])


def _write_store(
    target: str | os.PathLike, fill: Callable[[sqlite3.Connection], int], source: str | os.PathLike
) -> int:
    """A new store file at `target`, its tables filled by `fill` (which returns a count), written through a temporary
    file so that it is whole or absent; `source` names the store a failure is blamed on."""
    part = f"{os.fspath(target)}.tmp"
    if os.path.exists(part):
        os.unlink(part)
    con, heard = connect(part, isolation_level=None)
    try:
        con.executescript("BEGIN;" + SCHEMA + "COMMIT;")
        count = fill(con)
        con.execute("VACUUM")
    except BaseException as e:  # a Ctrl-C too: no half-written file is left
        con.close()
        os.unlink(part)
        if isinstance(e, sqlite3.DatabaseError):
            heard.raise_heard()
            raise FileError(f"store {quote(os.fspath(source))} cannot be copied: {e}") from None
        raise
    con.close()
    os.replace(part, target)
    return count


def _unpack(blob: bytes | None) -> dict | None:
    """A stored subtree, unpacked to at most MAX_TREE_BYTES, and to at most what a file of its size may unpack to
    (`files.unpack_limit`: memory follows the bytes read); a row that would unpack to more is refused, not read
    into memory."""
    if blob is None:
        return None
    limit = unpack_limit(len(blob), MAX_TREE_BYTES)
    inflate = zlib.decompressobj()
    text = inflate.decompress(blob, limit + 1)
    if len(text) > limit or inflate.unconsumed_tail:
        raise ValueError(
            f"it unpacks to more than {limit / 2**20:.1f} MB, {MAX_UNPACK_RATIO} times its {len(blob):,} bytes"
            if limit < MAX_TREE_BYTES
            else f"it unpacks to more than {MAX_TREE_BYTES >> 20} MB"
        )
    if not inflate.eof:
        raise ValueError("it is cut short")
    return orjson.loads(text)


def _shown(value: object) -> str:
    """A stored field's value for a message: its type and a short, escaped form."""
    text = repr(value)
    return f"{type(value).__name__} {text[:40]}{'...' if len(text) > 40 else ''}"
