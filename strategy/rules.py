"""The game model: specs, codes, answers and the one feedback function.

Standard library only: the tiny player imports this module, and the engine
compiles `feedback` itself with numba, so there is exactly one definition of
the rules.
"""
from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from typing import Iterator, Sequence

ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
GAME_NAMES = ("bulls", "mastermind")

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
        if not isinstance(length, int) or not isinstance(symbols, int) or isinstance(length, bool):
            raise GameError("'game' needs integer 'length' and 'symbols'")
        expected = {"name", "length", "symbols"} | ({"leading_zero"} if name == "bulls" else set())
        if set(obj) != expected:
            raise GameError(f"'game' must have exactly the keys {sorted(expected)}")
        lz = obj.get("leading_zero", True)
        if not isinstance(lz, bool):
            raise GameError("'game.leading_zero' must be true or false")
        return cls(str(name), length, symbols, lz)

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

    def code_strings(self) -> frozenset[str]:
        """Every code as written (for fast validation of stored trees)."""
        return _code_strings(self)

    def is_code(self, code: Sequence[int]) -> bool:
        """True when `code` is a legal secret and probe of this game."""
        if len(code) != self.length or any(not 0 <= x < self.symbols for x in code):
            return False
        if self.distinct and len(set(code)) != len(code):
            return False
        return self.leading_zero or code[0] != 0

    def parse_code(self, text: str) -> Code:
        """Read a code such as `0123`; GameError naming the problem otherwise."""
        text = text.strip().lower()
        if len(text) != self.length:
            raise GameError(f"code {text!r} must have {self.length} symbols")
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
        """Read `1,2`, `1 2`, `12`, `1H2B`, `1A2B`, `4` (all hits); GameError if impossible here."""
        raw = text.strip().lower()
        for sep in "hab":
            raw = raw.replace(sep, " ")
        parts = raw.replace(",", " ").split()
        if len(parts) == 1 and parts[0].isdigit() and len(parts[0]) == 2 and self.length < 10:
            parts = [parts[0][0], parts[0][1]]
        if len(parts) == 1 and parts[0].isdigit() and int(parts[0]) == self.length:
            parts = [parts[0], "0"]
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise GameError(f"cannot read answer {text.strip()!r}: type hits and blows, e.g. 1,2")
        answer = (int(parts[0]), int(parts[1]))
        if answer not in _answer_set(self):
            h, b = answer
            why = f"hits + blows > {self.length}" if h + b > self.length else "no secret gives it"
            raise GameError(f"answer {h},{b} is impossible in {self.spec} ({why})")
        return answer

    @staticmethod
    def format_answer(answer: Answer) -> str:
        return f"{answer[0]},{answer[1]}"


@functools.lru_cache(maxsize=None)
def _codes(game: Game) -> list[Code]:
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
    elif k > n:
        # A spare colour outside the secret pads any probe, so every split is reachable.
        found = {(h, b) for h in range(n + 1) for b in range(n + 1 - h)}
        found.discard((n - 1, 1))
    else:
        found = _enumerate_answers(game)
    return sorted(found)


def _enumerate_answers(game: Game) -> set[Answer]:
    """Answers by brute force, for the small or repetitive games where no closed rule is used.

    Without the leading-zero rule, permuting positions of secret and probe together keeps the
    answer, so one secret per multiset of symbols (its sorted form) is enough.
    """
    codes = _codes(game)
    secrets = codes if not game.leading_zero else sorted({tuple(sorted(c)) for c in codes})
    if len(secrets) * len(codes) > 5_000_000:
        raise GameError(f"{game.spec} is too large to enumerate its answers")
    return {feedback(s, p) for s in secrets for p in codes}


@functools.lru_cache(maxsize=None)
def _answer_set(game: Game) -> frozenset[Answer]:
    return frozenset(_answers(game))


def parse_game(spec: str) -> Game:
    """Read `bulls:4x10`, `bulls:4x10:nz` or `mastermind:4x6`; GameError with a one-line reason."""
    parts = spec.strip().lower().split(":")
    if len(parts) not in (2, 3) or parts[0] not in GAME_NAMES:
        raise GameError(f"unknown game spec {spec!r} (expected e.g. bulls:4x10, bulls:4x10:nz, mastermind:4x6)")
    size = parts[1].split("x")
    if len(size) != 2 or not all(s.isdigit() for s in size):
        raise GameError(f"bad size {parts[1]!r} in game spec {spec!r} (expected LENGTHxSYMBOLS, e.g. 4x10)")
    leading_zero = True
    if len(parts) == 3:
        if parts[2] != "nz":
            raise GameError(f"unknown option {parts[2]!r} in game spec {spec!r} (only nz)")
        leading_zero = False
    return Game(parts[0], int(size[0]), int(size[1]), leading_zero)
