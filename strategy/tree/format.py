"""The version-1 tree format: a document around a nested {"guess", "next"} tree.

Standard library and orjson only (the player loads trees). A node is a plain
dict `{"guess": "0123", "next": {"0,1": node, ...}}`; a leaf has no `next`.
Loading validates the structure against the game and names the offending path. The loader
is at least as strict as the JSON Schema (`tree.schema.json`): integers are JSON integers
(not `true`, not `1.0`), codes and answers are written exactly, the generator record's fields have
their types (`"consistent_only": "no"` is not true), and no key appears twice.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field
from typing import Callable, Iterator, NoReturn

import orjson

from ..files import read_bytes, write_atomic
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

    def first_question(self) -> str:
        """The root's question."""
        return self.root["guess"]


class LazyTreeDoc(TreeDoc):
    """A tree file known good (a shipped tree whose bytes match the package's manifest, `shipped.open_tree`) read
    lazily: its top-level fields and its root's question from the file's first bytes, the tree itself parsed at the
    first use of `root` (once, under a lock: the player parses it in a thread while the first question waits)."""

    def __init__(
        self,
        game: Game,
        first: str,
        objective: str,
        generator: dict,
        stats: dict | None,
        parse_root: Callable[[], Node],
    ):
        self.game, self.objective, self.generator, self.stats = game, objective, generator, stats
        self.first = first
        self._parse_root = parse_root
        self._lock = threading.Lock()

    def __getattr__(self, name: str):  # only for what the instance does not hold yet: `root`, before its parse
        if name != "root":
            raise AttributeError(name)
        with self._lock:
            if "root" not in self.__dict__:
                root = self._parse_root()
                if not isinstance(root, dict) or root.get("guess") != self.first:
                    raise TreeError("the tree's root is not the question its header was read with")
                self.__dict__["root"] = root
        return self.__dict__["root"]

    def first_question(self) -> str:
        return self.first


TREE_START = b',"tree":{"guess":"'  # where `dumps` writes the tree: after every other top-level field


def read_header(head: bytes) -> tuple[dict, str] | None:
    """The top-level fields but the tree, and the root's question, of a file written by `dumps`, read from its first
    bytes (`head`, enough of them to reach the root's question); None when they do not read so (then parse it
    whole). Only for bytes known to be such a file: nothing here checks the tree."""
    at = head.find(TREE_START)
    if at < 0:
        return None
    start = at + len(TREE_START)
    end = head.find(b'"', start)
    if end < 0:
        return None
    try:
        top = orjson.loads(head[:at] + b"}")
    except orjson.JSONDecodeError:  # a "tree" key inside the generator's record: not the top level's
        return None
    if not isinstance(top, dict) or list(top) != [k for k in TOP_KEYS if k != "tree" and (k != "stats" or k in top)]:
        return None
    return top, head[start:end].decode("ascii", "replace")


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
    write_atomic("-" if path is None else path, data, "tree file")


def load(path: str | os.PathLike, game: Game | None = None) -> TreeDoc:
    """Read and validate a tree file (`-`: standard input; gzip allowed); TreeError or FileError if wrong."""
    data = read_bytes(path, "tree file")
    return loads(data, game, source=repr(os.fspath(path)))


def _is_int(x: object) -> bool:
    return type(x) is int  # bool and float are not integers in this format


def _strings_in_text(data: bytes | bytearray) -> int:
    """Number of strings written in a valid JSON text: its quotes less the escaped ones, halved. Outside strings
    valid JSON has no backslash, and inside one a run of backslashes pairs off from its left, so removing the
    pairs, then the escaped quotes, leaves the quotes that open and close strings. Two copies of the text at most
    (a regular expression over a long string took about 120 bytes of memory per byte)."""
    return data.replace(b"\\\\", b"").replace(b'\\"', b"").count(b'"') // 2


def _strings_in_value(value: object) -> int:
    """Number of strings in a parsed value: its object keys and its string values."""
    stack, count = [value], 0
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            count += len(v)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, str):
            count += 1
    return count


def _duplicate_key(raw: bytes | bytearray, obj: dict, tree_strings: int) -> bool:
    """True when the text has more strings than the parsed value: a key written twice in one object. The tree's
    strings were counted as its structure was checked (`_check_structure`), so only the rest is walked here."""
    rest = {k: v for k, v in obj.items() if k != "tree"}
    return _strings_in_text(raw) != _strings_in_value(rest) + len(obj) - len(rest) + tree_strings


# the generator record's fields and their types, as tree.schema.json gives them: (what it must be, test), an object
# of typed fields (others may follow), or [items]
Check = tuple
STRING: Check = ("a string", lambda v: isinstance(v, str))
BOOLEAN: Check = ("true or false", lambda v: isinstance(v, bool))
NATURAL: Check = ("a non-negative integer", lambda v: _is_int(v) and v >= 0)
POSITIVE: Check = ("a positive integer", lambda v: _is_int(v) and v >= 1)
OBJECT: Check = ("an object", lambda v: isinstance(v, dict))
SHARE: Check = ("a number from 0 to 1", lambda v: type(v) in (int, float) and 0 <= v <= 1)
SHA256: Check = ("64 lowercase hexadecimal digits", lambda v: isinstance(v, str) and re.fullmatch("[0-9a-f]{64}", v))
RELIES_ON = [{"file": STRING, "sha256": SHA256, "store": BOOLEAN, "required": ("file", "sha256")}]
PROVEN = {
    "total": NATURAL,
    "worst": NATURAL,
    "max_depth": POSITIVE,
    "fewest_at_worst": NATURAL,
    "feasible": BOOLEAN,
    "within": POSITIVE,
    "found": NATURAL,
    "missed": NATURAL,
    "rule": STRING,
    "seat": ("a string or null", lambda v: v is None or isinstance(v, str)),
    "against_depth_counts": [NATURAL],
    "cost": NATURAL,
    "score": STRING,
    "relies_on": RELIES_ON,
}
GENERATOR = {
    "tool": STRING,
    "strategy": STRING,
    "engine": STRING,
    "consistent_only": BOOLEAN,
    "first": STRING,
    "seed": NATURAL,
    "pilot": {"width": POSITIVE, "above": POSITIVE, "rollouts": NATURAL},
    "proven": PROVEN,
    "proven_so_far": PROVEN,
    "proven_optimal": BOOLEAN,
    "lower_bound": NATURAL,
    "objective_of_the_search": STRING,
    "bound_of": STRING,
    "progress": SHARE,
    "relies_on": RELIES_ON,
    "run": OBJECT,
    "exact_endgame": OBJECT,
    "improved_from": STRING,
}


def _check_typed(value: object, check: Check | dict | list, where: str, source: str) -> None:
    """A generator field against its type (the message names the field, never its value)."""
    if isinstance(check, dict):
        if not isinstance(value, dict):
            raise TreeError(f"{source}: '{where}' must be an object")
        for key in check.get("required", ()):
            if key not in value:
                raise TreeError(f"{source}: '{where}' needs {key!r}")
        for key, inner in check.items():
            if key != "required" and key in value:
                _check_typed(value[key], inner, f"{where}.{key}", source)
    elif isinstance(check, list):
        if not isinstance(value, list):
            raise TreeError(f"{source}: '{where}' must be a list")
        for i, item in enumerate(value):
            _check_typed(item, check[0], f"{where}[{i}]", source)
    elif not check[1](value):
        raise TreeError(f"{source}: '{where}' must be {check[0]}")


def loads(data: bytes | bytearray | str, game: Game | None = None, source: str = "tree") -> TreeDoc:
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
    _check_typed(obj["generator"], GENERATOR, "generator", source)
    stats = obj.get("stats")
    if "stats" in obj:
        _check_stats(stats, source)
    tree_strings = _check_structure(obj["tree"], tree_game, source)
    if _duplicate_key(raw, obj, tree_strings):
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
    strings in the tree (its keys and guesses, for `_duplicate_key`). One pass with no per-node allocation beyond
    the stack: 30,000-code trees are read in a few hundredths of a second."""
    answers = frozenset(game.format_answer(a) for a in game.answers())
    win = game.format_answer(game.win)
    node_keys = frozenset(("guess", "next"))
    guesses: set = set()
    strings = 0
    stack: list = [root]
    while stack:
        node = stack.pop()
        if type(node) is not dict or "guess" not in node or not node.keys() <= node_keys:
            _bad_node(root, node, game, source)
        guess = node["guess"]
        if type(guess) is not str:
            _bad_node(root, node, game, source)
        guesses.add(guess)
        strings += len(node) + 1  # its keys and its guess
        nxt = node.get("next")
        if nxt is None:
            if "next" in node:
                _bad_node(root, node, game, source)
            continue
        if type(nxt) is not dict or not nxt or not nxt.keys() <= answers or win in nxt:
            _bad_node(root, node, game, source)
        strings += len(nxt)
        stack.extend(nxt.values())
    assert type(root) is dict  # the first node the loop checked
    _check_guesses(root, guesses, game, source)
    return strings


def _check_guesses(root: Node, guesses: set, game: Game, source: str) -> None:
    """Every distinct guess is a code of the game (checked once each)."""
    n = game.length
    allowed = frozenset(ALPHABET[: game.symbols])
    for guess in guesses:
        if (
            type(guess) is not str
            or len(guess) != n
            or not allowed.issuperset(guess)
            or (game.distinct and len(set(guess)) != n)
            or (not game.leading_zero and guess[0] == "0")
        ):
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


def _bad_node(root: object, node: object, game: Game, source: str) -> NoReturn:
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
