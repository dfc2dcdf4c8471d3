"""Flat lookup tables of a tree: one row per question node, as CSV, JSON lines or SQLite.

A row says what to ask after a history: `history` is the key (`0123:1-1;4567:0-2`, empty at the
root; no comma, so a CSV line splits on commas alone), with the depth, the secrets remaining, the probe,
whether it may be the secret, and the questions still needed from there (this one included) summed over the
remaining secrets. Rows are streamed depth first, so memory stays bounded by one path of the tree. Every
format carries the table's metadata (`metadata`: the game, the objective, the total): SQLite in its
`metadata` table, JSON lines as their first line, CSV in a sidecar file `OUT.meta.json`.
"""

from __future__ import annotations

import csv
import io
import os
import sqlite3
from dataclasses import astuple, dataclass
from typing import BinaryIO, Iterator

import orjson
from tqdm import tqdm

from ..files import atomic_open, atomic_path
from ..tree.format import TreeDoc, question_nodes, walk_secrets
from ..tree.verify import measure

FORMATS = ("csv", "jsonl", "sqlite")
COLUMNS = ("history", "depth", "remaining", "probe", "consistent", "questions")
FORMAT = "strategy-lookup"
VERSION = 2  # 2: the history key writes an answer H-B (1: H,B, which CSV had to quote)
SIDECAR = ".meta.json"  # the CSV table's metadata: OUT + SIDECAR


@dataclass(frozen=True)
class Row:
    history: str
    depth: int
    remaining: int
    probe: str
    consistent: bool
    questions: int


def history_key(path: list[tuple[str, str]]) -> str:
    """The lookup key of a history, the tree's answers `H,B` written `H-B`: `0123:1-1;4567:0-2`."""
    return ";".join(f"{q}:{a.replace(',', '-')}" for q, a in path)


def metadata(doc: TreeDoc, depth_of: dict[str, int] | None = None) -> dict:
    """What a table is of: its format and version, the game, the objective, the secrets, the total (the questions
    summed over every secret, the root row's `questions`) and the number of rows."""
    if depth_of is None:
        depth_of = measure(doc.game, doc.root)[1]
    return {
        "format": FORMAT,
        "version": VERSION,
        "game": doc.game.spec,
        "objective": doc.objective,
        "secrets": len(depth_of),
        "total": sum(depth_of.values()),
        "rows": question_nodes(doc.root),
    }


def rows(doc: TreeDoc, progress: bool = False, depth_of: dict[str, int] | None = None) -> Iterator[Row]:
    """Every question node, depth first in file order, with the secrets that reach it."""
    game = doc.game
    if depth_of is None:
        depth_of = measure(game, doc.root)[1]
    bar = tqdm(total=len(depth_of), unit="secret", delay=1.0, disable=not progress, desc="export")
    for node, path, secrets in walk_secrets(doc.root, game):
        guess = node["guess"]
        depth = len(path) + 1
        names = [game.format_code(s) for s in secrets]
        questions = sum(depth_of[s] - depth + 1 for s in names)
        if guess in names:
            bar.update(1)
        yield Row(history_key(path), depth, len(secrets), guess, guess in names, questions)
    bar.close()


def sidecar(out: str | os.PathLike) -> str | None:
    """The CSV table's metadata file, beside it (None when the table goes to a device such as /dev/stdout)."""
    name = os.fspath(out)
    return None if os.path.exists(name) and not os.path.isfile(name) else name + SIDECAR


def export(doc: TreeDoc, fmt: str, out: str | os.PathLike, progress: bool = True) -> int:
    """Write the lookup table (and a CSV table's sidecar) completely or not at all; returns the number of rows."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    _, depth_of = measure(doc.game, doc.root)
    meta = metadata(doc, depth_of)
    if fmt == "sqlite":
        with atomic_path(out, "export") as tmp:
            return _sqlite(doc, tmp, progress, depth_of, meta)
    if fmt == "jsonl":
        with atomic_open(out, "export") as f:
            return _jsonl(doc, f, progress, depth_of, meta)
    beside = sidecar(out)
    if beside is None:
        with atomic_open(out, "export") as f:
            return _csv(doc, f, progress, depth_of)
    with atomic_open(beside, "export metadata") as m, atomic_open(out, "export") as f:  # the table renamed first
        m.write(orjson.dumps(meta, option=orjson.OPT_INDENT_2) + b"\n")
        return _csv(doc, f, progress, depth_of)


def _csv(doc: TreeDoc, f: BinaryIO, progress: bool, depth_of: dict[str, int]) -> int:
    n = 0
    text = io.TextIOWrapper(f, encoding="utf-8", newline="")
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows(doc, progress, depth_of):
        writer.writerow(astuple(row)[:4] + (int(row.consistent), row.questions))
        n += 1
    text.flush()
    text.detach()
    return n


def _jsonl(doc: TreeDoc, f: BinaryIO, progress: bool, depth_of: dict[str, int], meta: dict) -> int:
    """The metadata as the first line (it has `format`; a row has `history`), then one line per row."""
    f.write(orjson.dumps(meta) + b"\n")
    n = 0
    for row in rows(doc, progress, depth_of):
        f.write(orjson.dumps(dict(zip(COLUMNS, astuple(row)))) + b"\n")
        n += 1
    return n


SCHEMA = """
CREATE TABLE nodes (
    history    TEXT PRIMARY KEY,  -- '' at the root, else 'probe:H-B;probe:H-B'
    depth      INTEGER NOT NULL,  -- question number asked at this node
    remaining  INTEGER NOT NULL,  -- secrets still possible
    probe      TEXT NOT NULL,     -- the question to ask
    consistent INTEGER NOT NULL,  -- 1 if the probe may be the secret
    questions  INTEGER NOT NULL   -- questions from here on, summed over the remaining secrets
) WITHOUT ROWID;
CREATE TABLE metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def _sqlite(doc: TreeDoc, path: str, progress: bool, depth_of: dict[str, int], meta: dict) -> int:
    con = sqlite3.connect(path)  # the empty temporary file is an empty database
    try:
        con.executescript(SCHEMA)
        n = 0
        batch = []
        for row in rows(doc, progress, depth_of):
            batch.append(astuple(row))
            if len(batch) >= 5000:
                con.executemany("INSERT INTO nodes VALUES (?, ?, ?, ?, ?, ?)", batch)
                n += len(batch)
                batch.clear()
        con.executemany("INSERT INTO nodes VALUES (?, ?, ?, ?, ?, ?)", batch)
        n += len(batch)
        con.executemany("INSERT INTO metadata VALUES (?, ?)", sorted((k, str(v)) for k, v in meta.items()))
        con.commit()
    finally:
        con.close()
    return n
