"""The version-1 tree format: a document around a nested {"guess", "next"} tree.

Standard library and orjson only (the player loads trees). A node is a plain
dict `{"guess": "0123", "next": {"0,1": node, ...}}`; a leaf has no `next`.
Loading validates the structure against the game and names the offending path. The loader
is at least as strict as the JSON Schema (`tree.schema.json`): integers are JSON integers
(not `true`, not `1.0`), codes and answers are written exactly, and no key appears twice.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Iterator

import orjson

from ..files import read_bytes, write_output
from ..rules import ALPHABET, Code, Game, GameError, feedback

FORMAT = "strategy-tree"
VERSION = 1
TOP_KEYS = ("format", "version", "game", "objective", "generator", "stats", "tree")
STAT_KEYS = ("secrets", "total", "worst", "depth_counts")

Node = dict


def tree_node(guess: str, children: dict[str, dict]) -> Node:
    """A tree node; a leaf when there are no children."""
    return {"guess": guess, "next": children} if children else {"guess": guess}


class TreeError(ValueError):
    """A tree file that is malformed or belongs to another game; one line for the user."""


@dataclass
class TreeDoc:
    """A tree file in memory: the game, what the tree optimises, and the root node."""

    game: Game
    root: Node
    objective: str = "heuristic"
    generator: dict = field(default_factory=dict)
    stats: dict | None = None

    def to_json(self) -> dict:
        doc = {
            "format": FORMAT,
            "version": VERSION,
            "game": self.game.to_json(),
            "objective": self.objective,
            "generator": self.generator,
            "stats": self.stats,
            "tree": self.root,
        }
        if self.stats is None:
            del doc["stats"]
        return doc


def dumps(doc: TreeDoc) -> bytes:
    """Deterministic bytes of a tree document (fixed key order, compact, final newline)."""
    return orjson.dumps(doc.to_json()) + b"\n"


def save(doc: TreeDoc, path: str | os.PathLike | None) -> None:
    """Write a tree file completely or not at all (standard output for None or `-`); a name ending in
    .gz is gzipped (deterministically: no time stamp), which every command reads transparently."""
    data = dumps(doc)
    if path is not None and os.fspath(path).endswith(".gz"):
        import gzip

        data = gzip.compress(data, compresslevel=9, mtime=0)
    write_output(path, data, "tree file")


def load(path: str | os.PathLike, game: Game | None = None) -> TreeDoc:
    """Read and validate a tree file (`-`: standard input; gzip allowed); TreeError or FileError if wrong."""
    data = read_bytes(path, "tree file")
    return loads(data, game, source=repr(os.fspath(path)))


def _is_int(x: object) -> bool:
    return type(x) is int  # bool and float are not integers in this format


_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')


def _pairs_in_text(data: bytes) -> int:
    """Number of object members written in the JSON text (its colons outside strings)."""
    return _STRING.sub(b"", data).count(b":")


def _pairs_in_value(value: object) -> tuple[int, int]:
    """Object members in a parsed value, and the colons inside its strings (keys and values)."""
    stack, count, colons = [value], 0, 0
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            count += len(v)
            colons += sum(k.count(":") for k in v)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, str):
            colons += v.count(":")
    return count, colons


def _duplicate_key(raw: bytes, obj: dict, tree_members: int) -> bool:
    """True when the text has more members than the parsed value: a key written twice in one object.

    The tree's strings (codes and answers, checked already) have no colon, so without escapes in the text
    its colons are the members plus the colons inside the other strings; with escapes (a colon may be
    written as an escape) the strings are cut out of the text first."""
    rest = {k: v for k, v in obj.items() if k != "tree"}
    members, colons = _pairs_in_value(rest)
    members += len(obj) - len(rest) + tree_members
    if b"\\" in raw:
        return _pairs_in_text(raw) != members
    return raw.count(b":") - colons != members


def loads(data: bytes | str, game: Game | None = None, source: str = "tree") -> TreeDoc:
    """Parse tree JSON; if `game` is given the tree must be for that game."""
    raw = data.encode() if isinstance(data, str) else data
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise TreeError(f"{source}: not valid JSON ({e})") from None
    if not isinstance(obj, dict):
        raise TreeError(f"{source}: the top level must be an object")
    if obj.get("format") != FORMAT:
        raise TreeError(f"{source}: 'format' must be {FORMAT!r}")
    version = obj.get("version")
    if not _is_int(version) or version != VERSION:
        raise TreeError(f"{source}: unsupported version {str(version)[:20]} (this tool reads {VERSION})")
    missing = [k for k in TOP_KEYS if k not in obj and k != "stats"]
    if missing:
        raise TreeError(f"{source}: missing key {missing[0]!r}")
    unknown = [k for k in obj if k not in TOP_KEYS]
    if unknown:
        raise TreeError(f"{source}: unknown key {unknown[0][:40]!r}")
    try:
        tree_game = Game.from_json(obj["game"])
    except GameError as e:
        raise TreeError(f"{source}: {e}") from None
    if game is not None and tree_game != game:
        raise TreeError(f"{source}: tree is for {tree_game.spec}, not {game.spec}")
    if not isinstance(obj["objective"], str):
        raise TreeError(f"{source}: 'objective' must be a string")
    if not isinstance(obj["generator"], dict):
        raise TreeError(f"{source}: 'generator' must be an object")
    stats = obj.get("stats")
    if "stats" in obj:
        _check_stats(stats, source)
    tree_members = _check_structure(obj["tree"], tree_game, source)
    if _duplicate_key(raw, obj, tree_members):
        raise TreeError(f"{source}: a key appears twice in one object")
    return TreeDoc(tree_game, obj["tree"], obj["objective"], obj["generator"], stats)


def _check_stats(stats: object, source: str) -> None:
    if not isinstance(stats, dict) or set(stats) != set(STAT_KEYS):
        raise TreeError(f"{source}: 'stats' must have exactly the keys {list(STAT_KEYS)}")
    for k in ("secrets", "total", "worst"):
        if not _is_int(stats[k]) or stats[k] < 0:
            raise TreeError(f"{source}: 'stats.{k}' must be a non-negative integer")
    dc = stats["depth_counts"]
    if not isinstance(dc, list) or not all(_is_int(x) and x >= 0 for x in dc):
        raise TreeError(f"{source}: 'stats.depth_counts' must be a list of non-negative integers")


def path_text(path: list[tuple[str, str]]) -> str:
    """A path in the tree for messages: `0123 0,1 > 4567 1,1`."""
    return " > ".join(f"{g} {a}" for g, a in path) or "root"


def _check_structure(root: object, game: Game, source: str) -> int:
    """Check every node against the game (one line naming the path of the first problem); the number of
    object members in the tree. One pass with no per-node allocation beyond the stack: 30,000-code trees
    are read in a few hundredths of a second."""
    answers = frozenset(game.format_answer(a) for a in game.answers())
    win = game.format_answer(game.win)
    node_keys = frozenset(("guess", "next"))
    guesses: set = set()
    members = 0
    stack: list = [root]
    while stack:
        node = stack.pop()
        if type(node) is not dict or "guess" not in node or not node.keys() <= node_keys:
            _bad_node(root, node, game, source)
        guess = node["guess"]
        if type(guess) is not str:
            _bad_node(root, node, game, source)
        guesses.add(guess)
        members += len(node)
        nxt = node.get("next")
        if nxt is None:
            if "next" in node:
                _bad_node(root, node, game, source)
            continue
        if type(nxt) is not dict or not nxt or not nxt.keys() <= answers or win in nxt:
            _bad_node(root, node, game, source)
        members += len(nxt)
        stack.extend(nxt.values())
    _check_guesses(root, guesses, game, source)
    return members


def _check_guesses(root: Node, guesses: set, game: Game, source: str) -> None:
    """Every distinct guess is a code of the game (checked once each)."""
    n = game.length
    allowed = frozenset(ALPHABET[: game.symbols])
    for guess in guesses:
        if (type(guess) is not str or len(guess) != n or not allowed.issuperset(guess)
                or (game.distinct and len(set(guess)) != n) or (not game.leading_zero and guess[0] == "0")):
            _bad_node(root, _node_asking(root, guess), game, source)


def _node_asking(root: Node, guess: object) -> Node:
    for node, _ in walk(root):
        if node["guess"] == guess:
            return node
    return root


def _locate(root: object, target: object) -> list[tuple[str, str]]:
    """The path to a node (by identity), found again only to name a problem."""
    stack: list = [(root, [])]
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        if type(node) is dict and type(node.get("next")) is dict:
            for answer, child in node["next"].items():
                stack.append((child, path + [(str(node.get("guess")), answer)]))
    return []


def _bad_node(root: object, node: object, game: Game, source: str):
    """Raise the TreeError that names what is wrong with `node` and where it is."""
    where = f"{source}: at {path_text(_locate(root, node))}"
    if not isinstance(node, dict):
        raise TreeError(f"{where}: a node must be an object")
    if "guess" not in node or not set(node) <= {"guess", "next"}:
        raise TreeError(f"{where}: a node has 'guess' and optionally 'next', got {sorted(node)}")
    guess = node["guess"]
    if not isinstance(guess, str):
        raise TreeError(f"{where}: 'guess' must be a string")
    try:
        game.read_code(guess)
    except GameError as e:
        raise TreeError(f"{where}: {e}") from None
    nxt = node.get("next")
    if not isinstance(nxt, dict) or not nxt:
        raise TreeError(f"{where}: 'next' must be a non-empty object (omit it at a leaf)")
    answers = {game.format_answer(a) for a in game.answers()}
    win = game.format_answer(game.win)
    for answer in nxt:
        if answer == win:
            raise TreeError(f"{where}: the all-hits answer {win} must not have a branch")
        if answer not in answers:
            raise TreeError(f"{where}: {answer[:20]!r} is not an answer of {game.spec}")
    raise TreeError(f"{where}: a malformed node")


def walk(root: Node) -> Iterator[tuple[Node, list[tuple[str, str]]]]:
    """Every node with the history (guess, answer) pairs that leads to it, depth first in file order."""
    stack: list[tuple[Node, list[tuple[str, str]]]] = [(root, [])]
    while stack:
        node, path = stack.pop()
        yield node, path
        nxt = node.get("next")
        if nxt:
            for answer, child in reversed(list(nxt.items())):
                stack.append((child, path + [(node["guess"], answer)]))


def walk_secrets(root: Node, game: Game) -> Iterator[tuple[Node, list[tuple[str, str]], list[Code]]]:
    """Like `walk`, with the secrets that reach each node (split by the game's own rules)."""
    stack: list[tuple[Node, list[tuple[str, str]], list[Code]]] = [(root, [], game.codes())]
    while stack:
        node, path, secrets = stack.pop()
        yield node, path, secrets
        probe = game.parse_code(node["guess"])
        parts: dict[str, list[Code]] = {}
        for s in secrets:
            if s != probe:
                parts.setdefault(game.format_answer(feedback(s, probe)), []).append(s)
        for answer, child in reversed(list(node.get("next", {}).items())):
            stack.append((child, path + [(node["guess"], answer)], parts.get(answer, [])))


def question_nodes(root: Node) -> int:
    """Number of nodes (each asks one question)."""
    return sum(1 for _ in walk(root))
