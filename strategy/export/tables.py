"""Flat lookup tables of a tree: one row per question node, as CSV, JSON lines or SQLite.

A row says what to ask after a history: `history` is the key (`0123:1,1;4567:0,2`, empty at the
root), with the depth, the secrets remaining, the probe, whether it may be the secret, and the
questions still needed from there (this one included) summed over the remaining secrets.
Rows are streamed depth first, so memory stays bounded by one path of the tree.
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
from ..tree.format import TreeDoc, walk_secrets
from ..tree.verify import measure

FORMATS = ("csv", "jsonl", "sqlite")
COLUMNS = ("history", "depth", "remaining", "probe", "consistent", "questions")


@dataclass(frozen=True)
class Row:
    history: str
    depth: int
    remaining: int
    probe: str
    consistent: bool
    questions: int


def history_key(path: list[tuple[str, str]]) -> str:
    """The lookup key of a history: `0123:1,1;4567:0,2`."""
    return ";".join(f"{q}:{a}" for q, a in path)


def rows(doc: TreeDoc, progress: bool = False) -> Iterator[Row]:
    """Every question node, depth first in file order, with the secrets that reach it."""
    game = doc.game
    _, depth_of = measure(game, doc.root)
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


def export(doc: TreeDoc, fmt: str, out: str | os.PathLike, progress: bool = True) -> int:
    """Write the lookup table completely or not at all; returns the number of rows."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    if fmt == "sqlite":
        with atomic_path(out, "export") as tmp:
            return _sqlite(doc, tmp, progress)
    with atomic_open(out, "export") as f:
        return _csv(doc, f, progress) if fmt == "csv" else _jsonl(doc, f, progress)


def _csv(doc: TreeDoc, f: BinaryIO, progress: bool) -> int:
    n = 0
    text = io.TextIOWrapper(f, encoding="utf-8", newline="")
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows(doc, progress):
        writer.writerow(astuple(row)[:4] + (int(row.consistent), row.questions))
        n += 1
    text.flush()
    text.detach()
    return n


def _jsonl(doc: TreeDoc, f: BinaryIO, progress: bool) -> int:
    n = 0
    for row in rows(doc, progress):
        f.write(orjson.dumps(dict(zip(COLUMNS, astuple(row)))) + b"\n")
        n += 1
    return n


SCHEMA = """
CREATE TABLE nodes (
    history    TEXT PRIMARY KEY,  -- '' at the root, else 'probe:H,B;probe:H,B'
    depth      INTEGER NOT NULL,  -- question number asked at this node
    remaining  INTEGER NOT NULL,  -- secrets still possible
    probe      TEXT NOT NULL,     -- the question to ask
    consistent INTEGER NOT NULL,  -- 1 if the probe may be the secret
    questions  INTEGER NOT NULL   -- questions from here on, summed over the remaining secrets
) WITHOUT ROWID;
CREATE TABLE metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def _sqlite(doc: TreeDoc, path: str, progress: bool) -> int:
    con = sqlite3.connect(path)  # the empty temporary file is an empty database
    try:
        con.executescript(SCHEMA)
        n = 0
        batch = []
        for row in rows(doc, progress):
            batch.append(astuple(row))
            if len(batch) >= 5000:
                con.executemany("INSERT INTO nodes VALUES (?, ?, ?, ?, ?, ?)", batch)
                n += len(batch)
                batch.clear()
        con.executemany("INSERT INTO nodes VALUES (?, ?, ?, ?, ?, ?)", batch)
        n += len(batch)
        total = con.execute("SELECT questions FROM nodes WHERE history = ''").fetchone()[0]
        meta = {"format": "strategy-lookup", "version": "1", "game": doc.game.spec, "objective": doc.objective,
                "secrets": str(doc.game.count()), "total": str(total), "rows": str(n)}
        con.executemany("INSERT INTO metadata VALUES (?, ?)", sorted(meta.items()))
        con.commit()
    finally:
        con.close()
    return n

