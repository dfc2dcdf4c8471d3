"""The game model: specs, codes, answers and the one feedback function.

Standard library only: the tiny player imports this module, and the engine
compiles `feedback` itself with numba, so there is exactly one definition of
the rules.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass
from typing import Iterator, Sequence

ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
GAME_NAMES = ("bulls", "mastermind")
MAX_CODES = (
    1_000_000  # the size limit of every command that enumerates the codes as Python values (tree files, builders)
)
MAX_LIVE_CODES = 10_000_000  # play without a tree (live play, defence, race): codes in NumPy arrays, never a table
MAX_TABLE_CODES = 50_000  # the exact engine and noisy mode keep an N×N answer table (engine.table)

Code = tuple[int, ...]
Answer = tuple[int, int]


class GameError(ValueError):
    """Bad input about a game: a spec, a code or an answer. Its text is one line for the user."""


def feedback(secret: Sequence[int], probe: Sequence[int]) -> tuple[int, int]:
    """(hits, blows) of `probe` against `secret`; blacks and whites in Mastermind.

    Hits are equal symbols in equal places; blows are the remaining common
    symbols, counted as a multiset (the standard Mastermind rule, which for
    codes of distinct symbols is the Bulls and Cows rule). Plain loops so that
    numba can compile this very function for the feedback table.
    """
    n = len(probe)
    hits = 0
    for i in range(n):
        if probe[i] == secret[i]:
            hits += 1
    common = 0
    taken = 0  # bit j set: secret position j already matched
    for i in range(n):
        x = probe[i]
        for j in range(n):
            if secret[j] == x and not (taken >> j) & 1:
                taken |= 1 << j
                common += 1
                break
    return hits, common - hits


@dataclass(frozen=True)
class Game:
    """One code-breaking game: `bulls` (distinct symbols) or `mastermind` (repetition allowed)."""

    name: str
    length: int
    symbols: int
    leading_zero: bool = True

    def __post_init__(self) -> None:
        if self.name not in GAME_NAMES:
            raise GameError(f"unknown game {self.name!r} (expected bulls or mastermind)")
        if not 1 <= self.symbols <= len(ALPHABET):
            raise GameError(f"number of symbols must be 1..{len(ALPHABET)}, got {self.symbols}")
        if self.length < 1:
            raise GameError(f"code length must be at least 1, got {self.length}")
        if self.name == "bulls" and self.length > self.symbols:
            raise GameError(f"bulls needs n <= k distinct symbols, got n={self.length} > k={self.symbols}")
        if self.name == "mastermind" and self.length > 64:
            raise GameError("mastermind length must be at most 64")
        if not self.leading_zero and self.name != "bulls":
            raise GameError("the no-leading-zero option exists only for bulls")
        if not self.leading_zero and self.symbols < 2:
            raise GameError("no-leading-zero needs at least 2 symbols")
        count = self.count()
        if count > MAX_LIVE_CODES:  # beyond every mode: refused before any work
            raise GameError(
                f"{self.spec} has {count:,} codes; this tool handles games of up to {MAX_CODES:,} codes "
                f"(play without a tree: up to {MAX_LIVE_CODES:,})"
            )

    def check_size(self, limit: int = MAX_CODES) -> "Game":
        """This game, or GameError when it has more codes than `limit` (what a command can enumerate)."""
        count = self.count()
        if count > limit:
            more = f" (play without a tree: up to {MAX_LIVE_CODES:,})" if limit < MAX_LIVE_CODES else ""
            raise GameError(f"{self.spec} has {count:,} codes; this tool handles games of up to {limit:,} codes{more}")
        return self

    # -- naming -----------------------------------------------------------
    @property
    def spec(self) -> str:
        """The short spec, e.g. `bulls:4x10:nz`, `mastermind:4x6`."""
        tail = "" if self.leading_zero else ":nz"
        return f"{self.name}:{self.length}x{self.symbols}{tail}"

    @property
    def distinct(self) -> bool:
        """True when a code may not repeat a symbol."""
        return self.name == "bulls"

    def to_json(self) -> dict:
        """The `game` object of the tree format."""
        obj: dict = {"name": self.name, "length": self.length, "symbols": self.symbols}
        if self.name == "bulls":
            obj["leading_zero"] = self.leading_zero
        return obj

    @classmethod
    def from_json(cls, obj: object) -> "Game":
        """Read the `game` object of a tree file; GameError on anything malformed."""
        if not isinstance(obj, dict):
            raise GameError("'game' must be an object")
        name = obj.get("name")
        length, symbols = obj.get("length"), obj.get("symbols")
        if type(length) is not int or type(symbols) is not int:  # not bool, not 4.0
            raise GameError("'game' needs integer 'length' and 'symbols'")
        if not isinstance(name, str):
            raise GameError("'game.name' must be a string")
        expected = {"name", "length", "symbols"} | ({"leading_zero"} if name == "bulls" else set())
        if set(obj) != expected:
            raise GameError(f"'game' must have exactly the keys {sorted(expected)}")
        lz = obj.get("leading_zero", True)
        if not isinstance(lz, bool):
            raise GameError("'game.leading_zero' must be true or false")
        return cls(str(name), length, symbols, lz).check_size()  # a tree file is read as Python values

    # -- codes ------------------------------------------------------------
    def codes(self) -> list[Code]:
        """Every code of the game in increasing (lexicographic) order: the internal indexing."""
        return _codes(self)

    def count(self) -> int:
        """Number of codes (= number of possible secrets)."""
        n, k = self.length, self.symbols
        if self.name == "mastermind":
            return k**n
        total = 1
        for i in range(n):
            total *= k - i
        if not self.leading_zero:
            total = total * (k - 1) // k
        return total

    def is_code(self, code: Sequence[int]) -> bool:
        """True when `code` is a legal secret and probe of this game (live play checks codes it never listed)."""
        if len(code) != self.length or any(not 0 <= x < self.symbols for x in code):
            return False
        if self.distinct and len(set(code)) != len(code):
            return False
        return self.leading_zero or code[0] != 0

    def rank(self, code: Sequence[int]) -> int:
        """The index of `code` in `codes()` (its rank in lexicographic order), or -1 when it is not a code."""
        if not self.is_code(code):
            return -1
        n, k = self.length, self.symbols
        r = 0
        if not self.distinct:
            for x in code:
                r = r * k + x
            return r
        used = 0
        for j, x in enumerate(code):
            below = x - bin(used & ((1 << x) - 1)).count("1")  # free symbols below x
            r += below * _falling(k - j - 1, n - j - 1)
            used |= 1 << x
        if not self.leading_zero:
            r -= _falling(k - 1, n - 1)  # the codes that start with 0 come first and are not codes here
        return r

    def code_at(self, index: int) -> Code:
        """The code of rank `index` (the inverse of `rank`): a random secret needs no list of every code."""
        n, k = self.length, self.symbols
        if not 0 <= index < self.count():
            raise GameError(f"no code of rank {index} in {self.spec}")
        if not self.distinct:
            out = []
            for _ in range(n):
                index, x = divmod(index, k)
                out.append(x)
            return tuple(reversed(out))
        if not self.leading_zero:
            index += _falling(k - 1, n - 1)
        free = list(range(k))
        out = []
        for j in range(n):
            block = _falling(k - j - 1, n - j - 1)
            i, index = divmod(index, block)
            out.append(free.pop(i))
        return tuple(out)

    def code_strings(self) -> frozenset[str]:
        """Every code as written (for fast validation of stored trees)."""
        return _code_strings(self)

    def parse_code(self, text: str) -> Code:
        """Read a code typed by a person (`0123`, ` AbF `); GameError naming the problem otherwise."""
        return self.read_code(text.strip().lower())

    def read_code(self, text: str) -> Code:
        """Read a code exactly as the tree format writes it (lowercase, no spaces); GameError otherwise."""
        if len(text) != self.length:
            raise GameError(f"code {text[:40]!r} must have {self.length} symbols")
        allowed = ALPHABET[: self.symbols]
        bad = [c for c in text if c not in allowed]
        if bad:
            raise GameError(f"code {text!r} uses {bad[0]!r}, outside the symbols {allowed[0]}-{allowed[-1]}")
        code = tuple(ALPHABET.index(c) for c in text)
        if self.distinct and len(set(code)) != len(code):
            raise GameError(f"code {text!r} repeats a symbol, which {self.spec} forbids")
        if not self.leading_zero and code[0] == 0:
            raise GameError(f"code {text!r} starts with 0, which {self.spec} forbids")
        return code

    @staticmethod
    def format_code(code: Sequence[int]) -> str:
        return "".join(ALPHABET[x] for x in code)

    # -- answers ----------------------------------------------------------
    @property
    def win(self) -> Answer:
        return (self.length, 0)

    def answers(self) -> list[Answer]:
        """Every answer that some (secret, probe) pair produces, sorted; the last one is the win."""
        return _answers(self)

    def parse_answer(self, text: str) -> Answer:
        """Read an answer in any common notation; GameError if it is unreadable, ambiguous or impossible here.

        Unlabelled: `1,2` `1 2` `12` (hits then blows), `4` (all hits). Labelled, in either order:
        `1H2B` `1A2B` `1 hit, 2 blows` `Hit = 1, Blow = 2` `1 bull 2 cows` `1B2C` `1 black 2 white`
        `1B2W` `1 eat 2 bite`. A lone `B` is refused: it means blows, bulls or blacks.
        """
        answer = read_answer_text(text, self.length)
        if answer not in _answer_set(self):
            h, b = answer
            why = f"hits + blows > {self.length}" if h + b > self.length else "no secret gives it"
            raise GameError(f"answer {h},{b} is impossible in {self.spec} ({why})")
        return answer

    def describe_answer(self, answer: Answer) -> str:
        """An answer in words: `1 hit, 2 blows`, or `1 black, 2 white` in Mastermind."""
        h, b = answer
        if self.name == "mastermind":
            return f"{h} black, {b} white"
        return f"{h} {'hit' if h == 1 else 'hits'}, {b} {'blow' if b == 1 else 'blows'}"

    @staticmethod
    def format_answer(answer: Answer) -> str:
        return f"{answer[0]},{answer[1]}"


def _falling(a: int, b: int) -> int:
    """a (a-1) ... (a-b+1): the codes of b distinct symbols drawn from a."""
    out = 1
    for i in range(b):
        out *= a - i
    return out


@functools.lru_cache(maxsize=None)
def _codes(game: Game) -> list[Code]:
    game.check_size()  # a list of tuples: larger games live in NumPy arrays (play.candidates)
    rng = range(game.symbols)
    if game.distinct:
        it: Iterator[Code] = itertools.permutations(rng, game.length)
    else:
        it = itertools.product(rng, repeat=game.length)
    return [c for c in it if game.leading_zero or c[0] != 0]


@functools.lru_cache(maxsize=4)
def _code_strings(game: Game) -> frozenset[str]:
    letters = ALPHABET[: game.symbols]
    if game.distinct:
        it: Iterator[tuple[str, ...]] = itertools.permutations(letters, game.length)
    else:
        it = itertools.product(letters, repeat=game.length)
    return frozenset("".join(c) for c in it if game.leading_zero or c[0] != "0")


# -- answers in words --------------------------------------------------------------------------
_HITS = {"h", "hit", "hits", "a", "bull", "bulls", "black", "blacks", "eat", "eats"}
_BLOWS = {"blow", "blows", "cow", "cows", "c", "white", "whites", "w", "bite", "bites"}
# a lone "b" is blows beside hits (1H2B, 1A2B), bulls beside cows (1B2C), blacks beside whites (1B2W)
_B_MEANS = {
    "h": "blows",
    "hit": "blows",
    "hits": "blows",
    "a": "blows",
    "c": "hits",
    "cow": "hits",
    "cows": "hits",
    "w": "hits",
    "white": "hits",
    "whites": "hits",
}
_TOKEN = re.compile(r"[0-9]+|[a-z]+|[^\s,;:=/._-]")  # numbers, words, and any stray character
_SIGNED = re.compile(r"(?<![0-9])-[0-9]")  # -1,2 and 1H-2B: a minus sign, not a dash between two numbers (1-2)
_DECIMAL = re.compile(r"[0-9]\.[0-9]")  # 1.0: a decimal point, not a full stop between two answers' parts
MAX_ANSWER_TEXT = 60


def read_answer_text(text: str, length: int) -> Answer:
    """(hits, blows) from an answer in any common notation, before checking it against a game."""
    raw = text.strip().lower()
    shown = text.strip()[:MAX_ANSWER_TEXT]
    if len(raw) > MAX_ANSWER_TEXT:
        raise GameError(f"cannot read answer {shown!r}...: too long")
    tokens = _TOKEN.findall(raw)
    if not raw.isascii() or not all(tok.isalnum() for tok in tokens):
        raise GameError(f"cannot read answer {shown!r}: type hits and blows, e.g. 1,2")
    if _SIGNED.search(raw):
        raise GameError(f"cannot read answer {shown!r}: hits and blows are never negative")
    if _DECIMAL.search(raw):
        raise GameError(f"cannot read answer {shown!r}: hits and blows are whole numbers, e.g. 1,0")
    numbers = [tok for tok in tokens if tok.isdigit()]
    words = [tok for tok in tokens if not tok.isdigit()]
    if any(len(n) > 3 for n in numbers):
        raise GameError(f"cannot read answer {shown!r}: a number is too long")
    if not words:
        if len(numbers) == 1 and len(numbers[0]) == 2 and length < 10:
            numbers = [numbers[0][0], numbers[0][1]]
        if len(numbers) == 1:
            if int(numbers[0]) == length:
                return (length, 0)
            raise GameError(
                f"answer {shown!r} is ambiguous: a single number is read only as all hits ({length}); "
                f"give hits and blows, e.g. {numbers[0]},0"
            )
        if len(numbers) == 2:
            return int(numbers[0]), int(numbers[1])
        raise GameError(f"cannot read answer {shown!r}: type hits and blows, e.g. 1,2")
    # labelled: number-label pairs (1H2B) or label-number pairs (Hit = 1, Blow = 2)
    if len(tokens) not in (2, 4) or len(numbers) != len(words):
        raise GameError(f"cannot read answer {shown!r}: type hits and blows, e.g. 1,2")
    if tokens[0].isdigit():
        pairs = [(tokens[i + 1], tokens[i]) for i in range(0, len(tokens), 2)]
    else:
        pairs = [(tokens[i], tokens[i + 1]) for i in range(0, len(tokens), 2)]
    if not all(n.isdigit() and not w.isdigit() for w, n in pairs):
        raise GameError(f"cannot read answer {shown!r}: type hits and blows, e.g. 1,2")
    labels = [w for w, _ in pairs]
    found: dict[str, int] = {}
    for word, number in pairs:
        if word == "b":
            others = [w for w in labels if w != "b"]
            if not others or others[0] not in _B_MEANS:
                raise GameError(
                    f"answer {shown!r} is ambiguous: B alone may mean blows, bulls or blacks; write 1H2B, 1B2C or 1B2W"
                )
            kind = _B_MEANS[others[0]]
        elif word in _HITS:
            kind = "hits"
        elif word in _BLOWS:
            kind = "blows"
        else:
            raise GameError(f"cannot read answer {shown!r}: unknown word {word[:20]!r}")
        if kind in found:
            raise GameError(f"answer {shown!r} gives {kind} twice")
        found[kind] = int(number)
    if "blows" not in found:
        if found["hits"] == length:
            return (length, 0)
        raise GameError(f"answer {shown!r} is ambiguous: it gives hits but not blows")
    if "hits" not in found:
        raise GameError(f"answer {shown!r} is ambiguous: it gives blows but not hits")
    return found["hits"], found["blows"]


@functools.lru_cache(maxsize=None)
def _answers(game: Game) -> list[Answer]:
    n, k = game.length, game.symbols
    if game.distinct:
        # Common symbols c range over [max(0, 2n-k), n]; any split into hits and blows
        # is reachable except a single blow among n common symbols (n-1 hits, 1 blow).
        # With no leading zero the same holds once k >= 3 (checked in the tests).
        found = {(h, c - h) for c in range(max(0, 2 * n - k), n + 1) for h in range(c + 1)}
        found.discard((n - 1, 1))
        if not game.leading_zero and k < 3:
            found = _enumerate_answers(game)
    else:
        found = {(h, b) for h in range(n + 1) for b in _mastermind_blows(n - h, k)}
    return sorted(found)


def _mastermind_blows(m: int, k: int) -> set[int]:
    """Blows possible when m positions of secret and probe differ, with k colours.

    Hits can sit on any colours, so only the m other positions matter: colour x fills r_x of them in
    the secret and s_x in the probe (sum r = sum s = m), and they can be placed with no further equal
    position exactly when r_x + s_x <= m for every colour. The blows are sum min(r_x, s_x).
    A small dynamic programme over colours: states (sum r, sum s, blows).
    """
    states = {(0, 0, 0)}
    for _ in range(k):
        nxt = set()
        for sr, ss, bl in states:
            for r in range(m - sr + 1):
                for s in range(min(m - ss, m - r) + 1):
                    nxt.add((sr + r, ss + s, bl + min(r, s)))
        states = nxt
    return {bl for sr, ss, bl in states if sr == m and ss == m}


def _enumerate_answers(game: Game) -> set[Answer]:
    """Answers by brute force: only for bulls with no leading zero and fewer than 3 symbols (tiny games)."""
    codes = _codes(game)
    return {feedback(s, p) for s in codes for p in codes}


@functools.lru_cache(maxsize=None)
def _answer_set(game: Game) -> frozenset[Answer]:
    return frozenset(_answers(game))


_SPEC = re.compile(r"(bulls|mastermind):([0-9]{1,3})x([0-9]{1,3})(?::(nz))?")


def parse_game(spec: str, limit: int = MAX_CODES) -> Game:
    """Read `bulls:4x10`, `bulls:4x10:nz` or `mastermind:4x6`; GameError with a one-line reason, also for a
    game of more than `limit` codes (MAX_LIVE_CODES for play without a tree)."""
    text = spec.strip().lower()
    shown = spec.strip()[:40]
    m = _SPEC.fullmatch(text)
    if m is None:
        parts = text.split(":")
        if len(parts) not in (2, 3) or parts[0] not in GAME_NAMES:
            raise GameError(f"unknown game spec {shown!r} (expected e.g. bulls:4x10, bulls:4x10:nz, mastermind:4x6)")
        if len(parts) == 3 and parts[2] != "nz":
            raise GameError(f"unknown option {parts[2][:20]!r} in game spec {shown!r} (only nz)")
        raise GameError(f"bad size {parts[1][:20]!r} in game spec {shown!r} (expected LENGTHxSYMBOLS, e.g. 4x10)")
    return Game(m.group(1), int(m.group(2)), int(m.group(3)), m.group(4) is None).check_size(limit)
