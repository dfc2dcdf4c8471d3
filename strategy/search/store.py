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

A store is a file from anywhere, so what it holds is believed only where this installation wrote it: every row is
sealed with a keyed hash under a key of this installation (`installation_key`) and believed only with that seal, or
when the user trusts the store (`trusted`: the proof then names the store with its SHA-256); a row sealed elsewhere,
or altered, is searched again. An exact value's subtree is also checked against the game as it is read
(`search.known.stored_result`), which shows the value can be reached, not that it is the least.

It runs no SQL of its own: its schema must be exactly the tables this tool
writes (no view, trigger, index, check or default of its own), functions in a schema are not trusted
(`trusted_schema=OFF`), and Ctrl-C or SIGTERM stops a statement within milliseconds (a progress handler), for a
store and every store `compact` and `merge` read.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import os
import re
import sqlite3
import stat
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson

from ..files import MAX_UNPACK_RATIO, FileError, file_sha256, quote, unpack_limit
from ..interrupts import Heard
from ..rules import Game

STORE_FORMAT = "strategy-store"
STORE_VERSION = 2  # 2: rows are sealed (version 1 stores are upgraded as they are opened, their rows unsealed)
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
    saved   REAL NOT NULL,      -- when it was written (Unix time)
    seal    BLOB                -- keyed hash of the row by the installation that wrote it (see Store.seal)
) WITHOUT ROWID;
"""
UPGRADE = "ALTER TABLE results ADD COLUMN seal BLOB"  # a version 1 store (no seals) to version 2
COLUMNS = "key, size, depth, value, exact, tree, seconds, saved"  # a row as every version has it, then its seal


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


def schema_statements() -> list[str]:
    """SCHEMA's statements one by one (to run inside a transaction of the caller's, which a script would end)."""
    out, part = [], ""
    for line in SCHEMA.splitlines(keepends=True):
        part += line
        if sqlite3.complete_statement(part):
            out.append(part)
            part = ""
    return out


def _normalised(sql: str | None) -> str | None:
    """A schema statement without its comments and with single spaces, none around punctuation: the same table
    whatever its comments and layout (SQLite's ALTER TABLE writes a column's definition as it likes)."""
    if sql is None:
        return None
    return re.sub(r" ?([(),]) ?", r"\1", " ".join(re.sub(r"--[^\n]*", " ", sql).split()))


@functools.cache
def _schema() -> dict[tuple[str, str], frozenset[str | None]]:
    """(type, name) -> the normalised SQL a store's schema objects may have: as SCHEMA makes them, or as a version 1
    store had them (before its upgrade, which makes them SCHEMA's)."""
    con = sqlite3.connect(":memory:")
    try:
        con.executescript(SCHEMA)
        forms: dict[tuple[str, str], set[str | None]] = {}
        for version in (2, 1):
            if version == 1:
                con.execute("ALTER TABLE results DROP COLUMN seal")
            for kind, name, sql in con.execute("SELECT type, name, sql FROM sqlite_master").fetchall():
                forms.setdefault((kind, name), set()).add(_normalised(sql))
        return {k: frozenset(v) for k, v in forms.items()}
    finally:
        con.close()


def check_schema(con: sqlite3.Connection, path: str | os.PathLike, schema: str = "main") -> bool:
    """Refuse a store (`schema`: the name it is attached under) whose tables are not exactly this tool's, or that
    holds a view or a trigger: SQL of its own would run as it is read or written (an endless recursive view, a
    trigger on every insert). True when its rows have seals (version 2)."""
    rows = con.execute(f"SELECT type, name, tbl_name, sql FROM {schema}.sqlite_master").fetchall()
    expected = _schema()
    sealed = False
    for kind, name, table, sql in rows:
        if kind in ("view", "trigger"):
            raise FileError(f"store {quote(path)} holds a {kind} ({name!r}): a store runs no SQL of its own")
        if table in ("meta", "results") and _normalised(sql) not in expected.get((kind, name), ()):
            raise FileError(
                f"store {quote(path)}: its {kind} {name!r} is not the one this tool writes "
                f"(a store runs no SQL of its own)"
            )
        sealed |= name == "results" and ",seal BLOB)" in (_normalised(sql) or "")
    present = {(kind, name) for kind, name, _, _ in rows}
    for kind, name in expected:
        if (kind, name) not in present:
            raise FileError(f"{quote(path)} is not a strategy store: it has no {kind} {name!r}")
    return sealed


def key_path() -> Path:
    """Where this installation keeps the key its stores' rows are sealed with: $XDG_DATA_HOME/strategy/store.key
    (~/.local/share by default)."""
    base = os.environ.get("XDG_DATA_HOME", "")
    if not os.path.isabs(base):  # unset, empty or relative: the XDG specification says to use the default
        base = os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "strategy" / "store.key"


KEY_FILE_BYTES = 65  # 64 hexadecimal digits and a newline


@functools.cache
def installation_key(path: Path) -> bytes:
    """The key at `path`, made (32 random bytes, readable by its owner only) the first time: written beside it and
    linked into place, so that two processes starting at once share one key and none reads half of one."""
    for _ in range(2):
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block, /dev/zero would never end
                raise FileError(f"this installation's store key {quote(path)} is not a file: delete it")
            with open(path, "rb") as f:
                text = f.read(KEY_FILE_BYTES + 1).decode("ascii").strip()
        except FileNotFoundError:
            pass
        except (OSError, UnicodeDecodeError) as e:
            raise FileError(f"cannot read this installation's store key {quote(path)}: {e}") from None
        else:
            if not re.fullmatch(r"[0-9a-f]{64}", text):
                raise FileError(
                    f"this installation's store key {quote(path)} is damaged: delete it (the rows it sealed are "
                    f"then searched again, or believed with --trust)"
                )
            return bytes.fromhex(text)
        part = path.with_name(f".{path.name}.{os.getpid()}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="ascii") as f:
                f.write(os.urandom(32).hex() + "\n")
                f.flush()
                os.fsync(f.fileno())
            try:
                os.link(part, path)
            except FileExistsError:
                pass  # another process made it first: read theirs
        except OSError as e:
            raise FileError(
                f"cannot keep this installation's store key at {quote(path)}: {e.strerror or e} "
                f"(set XDG_DATA_HOME to a folder you can write)"
            ) from None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(part)
    raise FileError(f"cannot keep this installation's store key at {quote(path)}")


MAX_VALUE = 1 << 40  # the engine's INF: a value or bound above it is not one the search can have written
MAX_TREE_BYTES = 64 << 20  # a stored subtree unpacks to at most this (the largest game's whole tree is ~10 MB)


@dataclass
class Stored:
    value: int
    exact: bool
    tree: dict | None
    seconds: float


class Store:
    """A SQLite file of finished subproblems for one game and probe rule. With `trusted`, the user vouches for it:
    its rows are believed without this installation's seal (`relied_on` then says whether a proof used one, and
    `sha256` names the store as the run found it)."""

    def __init__(self, path: str | os.PathLike, game: Game, consistent_only: bool, trusted: bool = False):
        self.path = os.fspath(path)
        self.identity = {
            "format": STORE_FORMAT,
            "version": str(STORE_VERSION),
            "game": game.spec,
            "probes": "consistent" if consistent_only else "any",
        }
        self.trusted = trusted
        self.relied_on = False  # a row believed without this installation's seal (a trusted store's)
        self.unsealed: set[str] = set()  # rows not believed: sealed elsewhere, or altered
        self.sha256 = ""
        self._key = installation_key(key_path())
        # not always used by the thread that opened it (a lookahead reads it from the threads it runs in, so that a
        # Ctrl-C stops it): `_lock` keeps them one at a time
        try:
            self.con, self._heard = connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        except sqlite3.DatabaseError as e:
            raise FileError(f"store {quote(self.path)} is not a usable store: {e}") from None
        try:
            if trusted:  # the file as given (with what SQLite's journal of a killed run holds folded in first)
                self.con.execute("SELECT count(*) FROM sqlite_master").fetchone()  # rolls a hot journal back
                wal = f"{os.path.realpath(self.path)}-wal"  # beside the file a link names, where SQLite keeps it
                if os.path.exists(wal) and os.path.getsize(wal) > 0:
                    self.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                self.sha256 = file_sha256(self.path) if os.path.exists(self.path) else file_sha256(os.devnull)
            # one run at a time makes, checks or upgrades it (two solves may start on one new store at once); a file
            # it refuses is left as it was, byte for byte (the journal mode is set only after the checks)
            self.con.execute("BEGIN IMMEDIATE")
            if self.con.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
                for statement in schema_statements():
                    self.con.execute(statement)
                self.con.executemany("INSERT INTO meta VALUES (?, ?)", sorted(self.identity.items()))
            if not self._check():  # version 1: its rows stay unsealed
                self.con.execute(UPGRADE)
                self.con.execute("UPDATE meta SET value = ? WHERE key = 'version'", (str(STORE_VERSION),))
            self.con.execute("COMMIT")
            self.con.execute("PRAGMA journal_mode=WAL")
            self.con.execute("PRAGMA synchronous=NORMAL")
        except BaseException as e:
            self.con.close()  # no journal files left beside a file it refuses (closing rolls back what is open)
            if isinstance(e, sqlite3.DatabaseError):
                self._heard.raise_heard()
                # an OperationalError is the file's place (read-only, locked); the others, what it holds
                what = (
                    "is not a usable store" if isinstance(e, sqlite3.OperationalError) else "is damaged or not a store"
                )
                raise FileError(f"store {quote(self.path)} {what}: {e}") from None
            raise
        self._pending: list[tuple] = []
        self._last_commit = time.monotonic()
        self._lock = threading.RLock()  # the threads of one lookahead bound share the store

    def _check(self) -> bool:
        """Refuse a file that is not a store of this game and probe rule; True when its rows have seals."""
        try:
            sealed = check_schema(self.con, self.path)
            meta = dict(self.con.execute("SELECT key, value FROM meta").fetchall())
            self.con.execute("SELECT count(*) FROM results").fetchone()
        except sqlite3.DatabaseError as e:
            self._heard.raise_heard()
            raise FileError(f"store {quote(self.path)} is damaged or not a store: {e}") from None
        if meta.get("format") != STORE_FORMAT:
            raise FileError(f"{quote(self.path)} is not a strategy store")
        if meta.get("version") != ("2" if sealed else "1"):
            raise FileError(
                f"store {quote(self.path)} is for version {meta.get('version')!r}, not {self.identity['version']!r}"
                f": use another file"
            )
        for field in ("game", "probes"):
            if meta.get(field) != self.identity[field]:
                raise FileError(
                    f"store {quote(self.path)} is for {field} {meta.get(field)!r}, "
                    f"not {self.identity[field]!r}: use another file"
                )
        return sealed

    def seal(self, key: str, value: int, exact: bool, has_tree: bool) -> bytes:
        """The keyed hash that shows a row was written by this installation, for this store's game and probe rule:
        nobody without the key can raise a stored bound and keep it believed."""
        text = f"{self.identity['game']}|{self.identity['probes']}|{key}|{value}|{int(exact)}|{int(has_tree)}"
        return hashlib.blake2b(text.encode(), key=self._key, digest_size=16).digest()

    def believed(self, key: str, value: int, exact: bool, has_tree: bool, seal: object) -> bool:
        """Whether a row read may be used as it says: sealed by this installation, or in a store the user trusts
        (then the proof relies on the store). An exact value's subtree is checked against the game besides
        (`search.known.stored_result`), but that shows only that the value can be reached, not that it is the
        least: the seal (or the user's trust) is what stands for the search behind it."""
        if isinstance(seal, bytes) and hmac.compare_digest(seal, self.seal(key, value, exact, has_tree)):
            return True
        if self.trusted:
            self.relied_on = True
            return True
        self.unsealed.add(key)
        return False

    def unsealed_line(self) -> str:
        """What the user is told of the rows not believed."""
        n = len(self.unsealed)
        return (
            f"store {quote(self.path)}: {n} stored result{'s' if n != 1 else ''} not sealed by this installation "
            f"(written elsewhere, or altered) searched again; --trust {quote(self.path)} believes them"
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
        not what a solve writes); None when it is not believed (see `believed`). Whether an exact value's subtree
        holds is for the caller, who knows the set (`search.known.stored_result`)."""
        with self._lock:
            for pending in reversed(self._pending):
                if pending[0] == key:
                    return Stored(pending[3], bool(pending[4]), _unpack(pending[5]), pending[6])
            with self._statements():
                row = self.con.execute(
                    "SELECT value, exact, tree, seconds, seal FROM results WHERE key = ?", (key,)
                ).fetchone()
        if row is None:
            return None
        value, exact, blob, seconds, seal = row
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
        if not self.believed(key, value, bool(exact), tree is not None, seal):
            return None
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
        or a bound, believed as `believed` says: its subtree is not checked here), in one range scan of the keys
        rather than a lookup per question."""
        prefix = f"{key}/"
        with self._lock:
            with self._statements():
                rows = self.con.execute(
                    "SELECT key, value, exact, tree IS NOT NULL, seal FROM results WHERE key > ? AND key < ?",
                    (prefix, f"{key}0"),
                ).fetchall()  # '0' follows '/'
            pending = [(row[0], row[3], row[4], row[5] is not None, row[8]) for row in self._pending]
        out: dict[int, int] = {}
        for name, value, exact, has_tree, seal in rows + [row for row in pending if row[0].startswith(prefix)]:
            probe = name[len(prefix) :]
            if probe.isdigit():
                self.check_value(name, value)
                if self.believed(name, value, bool(exact), bool(has_tree), seal):
                    out[int(probe)] = max(out.get(int(probe), 0), value)
        return out

    def put(self, key: str, size: int, depth: int, value: int, exact: bool, tree: dict | None, seconds: float) -> None:
        """Record a result (an exact value replaces a bound; a bound never replaces an exact value; `merge` applies
        the same rule in SQL)."""
        with self._lock:
            old = self.get(key)
            if old is not None and not old.exact and exact and value < old.value:  # a trusted store's false claim
                raise self.refused(key, f"it claims a lower bound of {old.value}, and the search found {value}")
            if old is not None and (old.exact or (not exact and old.value >= value)):
                return
            blob = zlib.compress(orjson.dumps(tree), 6) if tree is not None else None
            # once a row believed on trust alone has been read, what this run finds may rest on it: it is written
            # unsealed, so that a later run without --trust searches it again rather than take a trusted claim as
            # this installation's own work
            seal = None if self.relied_on else self.seal(key, value, exact, tree is not None)
            self._pending.append((key, size, depth, value, int(exact), blob, seconds, time.time(), seal))
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
                        "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", self._pending
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
        sealed = {}
        for name, path in attached.items():
            con.execute(f"ATTACH DATABASE ? AS {name}", (os.fspath(path),))
            sealed[name] = check_schema(con, path, name)
        con.execute("BEGIN")
        _copy_meta(con)
        kept = con.execute(
            f"INSERT INTO results SELECT {_columns(sealed['source'])} FROM source.results s WHERE (s.exact = 1 "
            "OR s.seconds >= ? OR s.depth = 0)" + new,
            (min_seconds,),
        ).rowcount
        con.execute("COMMIT")
        for name in attached:
            con.execute(f"DETACH DATABASE {name}")
        return kept

    return _write_store(target, copy, source)


# `Store.put`'s rule in SQL: a result of a set already there is replaced only if it is a bound and the new one is
# exact or a higher bound (`WHERE true` lets SQLite read ON CONFLICT as the upsert, not as part of the SELECT)
MERGE = """INSERT INTO results SELECT {columns} FROM source.results WHERE true ON CONFLICT(key) DO UPDATE SET
    size = excluded.size, depth = excluded.depth, value = excluded.value, exact = excluded.exact, tree = excluded.tree,
    seconds = excluded.seconds, saved = excluded.saved, seal = excluded.seal
    WHERE results.exact = 0 AND (excluded.exact = 1 OR excluded.value > results.value)"""


def _columns(sealed: bool) -> str:
    """A source store's rows as a version 2 store holds them (a version 1 store's with no seal)."""
    return f"{COLUMNS}, {'seal' if sealed else 'NULL'}"


def _copy_meta(con: sqlite3.Connection) -> None:
    """The attached source's identity, at this version (a copy of a version 1 store is upgraded as it is made)."""
    con.execute("INSERT INTO meta SELECT * FROM source.meta")
    con.execute("UPDATE meta SET value = ? WHERE key = 'version'", (str(STORE_VERSION),))


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
            sealed = check_schema(con, source, "source")
            con.execute("BEGIN")
            meta = sorted(con.execute("SELECT key, value FROM source.meta WHERE key != 'version'").fetchall())
            if i == 0:
                _copy_meta(con)
                first = meta
            elif meta != first:
                raise FileError(
                    f"store {quote(os.fspath(source))} is not of the game and probe rule of "
                    f"{quote(os.fspath(sources[0]))}"
                )
            con.execute(MERGE.format(columns=_columns(sealed)))
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
