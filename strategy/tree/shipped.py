"""The trees that ship with the package (`strategy/trees/`, read through importlib.resources), and the names by
which every command that takes a TREE finds them.

A shipped tree is named by its file: `bulls-4x10-total`, `mastermind-5x7-worst`, `bulls-5x10-best-found`,
`race-bulls-4x10-strongest`. A game names its least-total tree, or for an open game its best tree found
(`bulls:4x10` is `bulls-4x10-total`, `bulls:5x10` is `bulls-5x10-best-found`); a game and an objective name
another (`bulls:4x10/worst`). Every shipped tree is verified over every secret by the tests.

The folder's manifest (`SHA256SUMS`, as `sha256sum` writes it) holds the SHA-256 of every tree file the tests
verified (they check that it lists exactly the files there, with their digests). The player trusts a shipped tree
whose bytes match it (`open_tree`): it asks the root's question from the file's first bytes and parses the tree
when the first answer comes, without walking it again; a shipped file that does not match is refused. Any other file
is read and validated whole, as every command does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..rules import GameError, parse_game

SHIPPED = Path(str(resources.files("strategy").joinpath("trees")))
SUFFIXES = (".json", ".json.gz")
MANIFEST = "SHA256SUMS"


class UnknownTree(GameError):
    """A TREE argument that is neither a file nor the name of a shipped tree."""


def names() -> list[str]:
    """The names of the shipped trees, sorted."""
    if not SHIPPED.is_dir():
        return []
    return sorted(
        p.name.removesuffix(".gz").removesuffix(".json") for p in SHIPPED.iterdir() if p.name.endswith(SUFFIXES)
    )


def path_of(name: str) -> Path | None:
    """The file of a shipped tree, or None."""
    for suffix in SUFFIXES:
        path = SHIPPED / f"{name}{suffix}"
        if path.is_file():
            return path
    return None


def stem(spec: str) -> str:
    """The file-name form of a game spec: bulls:4x10:nz -> bulls-4x10-nz."""
    return parse_game(spec).spec.replace(":", "-")


def find(argument: str) -> str:
    """The file a TREE argument stands for: a file that exists (or `-`, standard input), else a shipped tree's name,
    else a game (GAME, or GAME/OBJECTIVE) that names one; UnknownTree, in one line, otherwise."""
    if argument == "-" or os.path.exists(argument):
        return argument
    path = path_of(argument)
    if path is None and ":" in argument:
        spec, _, objective = argument.partition("/")
        try:
            base = stem(spec)
        except GameError as e:  # a game name misspelt (not a file either): say what is wrong with it
            raise UnknownTree(f"{argument!r} is neither a file nor a shipped tree, and as a game: {e}") from None
        if base is not None:
            tried = [f"{base}-{objective}"] if objective else [f"{base}-total", f"{base}-best-found"]
            path = next((p for p in map(path_of, tried) if p is not None), None)
            if path is None:
                kinds = [
                    n.removeprefix(base + "-")
                    for n in names()
                    if n.startswith(base + "-") and not n.removeprefix(base + "-").startswith("nz-")
                ]
                have = f"; shipped for {spec}: {', '.join(kinds)}" if kinds else f"; none ships for {spec}"
                raise UnknownTree(f"no shipped tree {argument!r}{have} (strategy trees lists them)")
    if path is None:
        raise UnknownTree(
            f"{argument!r} is neither a file nor a shipped tree (strategy trees lists them; a game such "
            f"as bulls:4x10 names its least-total tree)"
        )
    return str(path)


def is_shipped(path: str | os.PathLike) -> bool:
    """Whether a file is one of the shipped trees (named by its path or by its name)."""
    where = Path(path)
    return where.name.endswith(SUFFIXES) and where.parent.resolve() == SHIPPED.resolve()


def digests(folder: Path | None = None) -> dict[str, str]:
    """The manifest of a folder of trees (default: the shipped ones): file name -> SHA-256 (empty if there is none)."""
    folder = SHIPPED if folder is None else folder
    try:
        text = (folder / MANIFEST).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return {}
    out = {}
    for line in text.splitlines():
        digest, _, name = line.partition("  ")
        if name:
            out[name] = digest
    return out


def write_manifest(folder: Path | None = None) -> Path:
    """Write the manifest of every tree file in `folder` (default: the shipped ones), after the tools that ship trees
    change one; the tests verify each file it lists over every secret."""
    import hashlib

    folder = SHIPPED if folder is None else folder
    from ..files import write_atomic

    lines = [
        f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n"
        for p in sorted(folder.iterdir(), key=lambda p: p.name)
        if p.name.endswith(SUFFIXES)
    ]
    path = folder / MANIFEST
    write_atomic(path, "".join(lines).encode())
    return path


HEAD_BYTES = 1 << 16  # unpacked bytes read at a time to reach the root's question


def open_tree(path: str | os.PathLike):
    """A tree file for the player: a shipped tree whose bytes match the manifest as a `format.LazyTreeDoc` (its root's
    question read at once, the tree parsed at its first use); a shipped tree that does not match is refused (TreeError);
    any other file read and validated whole (`format.load`)."""
    from .format import TreeError, load

    if not is_shipped(path):
        return load(path)
    import hashlib

    where = Path(path)
    with open(where, "rb") as f:
        packed = f.read()
    expected = digests().get(where.name)
    if expected is None or hashlib.sha256(packed).hexdigest() != expected:
        raise TreeError(
            f"shipped tree {label(str(path))}: its bytes are not those the package's tests verified (its "
            f"SHA-256 is not the one in {MANIFEST}): reinstall the package, or give a copy of the file "
            f"elsewhere to have it read and checked as any tree file"
        )
    return _lazy(where, packed) or load(path)


def _lazy(where: Path, packed: bytes):
    """The lazy document of a shipped tree's bytes, or None if its first bytes do not read as `format.dumps` writes."""
    import zlib

    import orjson

    from ..files import GZIP_MAGIC, _gunzip, unpack_limit
    from ..rules import Game
    from .format import LazyTreeDoc, read_header

    gz = packed[:2] == GZIP_MAGIC
    if gz:  # unpacked a block at a time, only as far as the root's question
        unpack, head, rest = zlib.decompressobj(wbits=31), b"", packed
        while True:
            head += unpack.decompress(rest, HEAD_BYTES)
            rest = unpack.unconsumed_tail
            found = read_header(head)
            if found is not None or not rest:
                break
    else:
        found = read_header(packed)
    if found is None:
        return None
    top, first = found

    def parse_root():  # the very bytes the manifest vouched for, unpacked with the gzip reader's limits
        data = _gunzip(packed, str(where), "tree file", unpack_limit(len(packed))) if gz else packed
        return orjson.loads(data)["tree"]

    try:
        game = Game.from_json(top["game"])
        game.read_code(first)
    except GameError:
        return None
    return LazyTreeDoc(game, first, top["objective"], top["generator"], top.get("stats"), parse_root)


def label(path: str) -> str:
    """How a tree file is named to the user: a shipped tree by its name, any other file by the path as given."""
    if is_shipped(path):
        return Path(path).name.removesuffix(".gz").removesuffix(".json")
    return path


@dataclass(frozen=True)
class Listed:
    """A shipped tree as `strategy trees` lists it: what its file's record says."""

    name: str
    game: str
    objective: str
    proven: str
    total: int
    average: float
    worst: int

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "game": self.game,
            "objective": self.objective,
            "proven": self.proven,
            "total": self.total,
            "average": round(self.average, 4),
            "worst": self.worst,
        }


def listing() -> list[Listed]:
    """Every shipped tree with the figures of its record (the tests verify each file over every secret)."""
    from .format import load

    out = []
    for name in names():
        path = path_of(name)
        assert path is not None
        doc = load(path)
        stats = doc.stats or {}
        out.append(
            Listed(
                name,
                doc.game.spec,
                doc.objective,
                proof_of(doc),
                stats.get("total", 0),
                stats.get("total", 0) / max(1, stats.get("secrets", 1)),
                stats.get("worst", 0),
            )
        )
    return out


def proof_of(doc) -> str:
    """What a shipped tree's record says is proven of it, in a few words."""
    g = doc.generator
    if doc.objective == "partial":
        return f"lower bound {g.get('lower_bound')} (best found)"
    proven = g.get("proven") or {}
    if "score" in proven:
        return f"best response, score {proven['score']}"
    parts = [
        f"{key.replace('_', ' ')} {value}"
        for key, value in proven.items()
        if key in ("total", "worst", "fewest_at_worst", "max_depth")
    ]
    return ", ".join(parts) if parts else "heuristic"
