"""The feedback table: answer class of every (probe, secret) pair as a NumPy array.

Built once per game by a compiled row kernel that computes `rules.feedback`'s
hits and blows as vector passes over all secrets (tests compare it with
`rules.feedback` on every pair of several games). Memory is N*N bytes
(uint8): 25 MB for the 5040 codes of bulls 4x10, 914 MB for the 30240 codes of
bulls 5x10, 1.07 GB for mastermind 5x8; games above 50000 codes are refused.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numba
import numpy as np

from ..rules import ALPHABET, MAX_TABLE_CODES, Game, GameError
from .symmetry import symbol_masks


@numba.njit(cache=True)
def _fill_row(
    columns: np.ndarray, counts: np.ndarray, class_of: np.ndarray, width: int, out: np.ndarray, p: int
) -> None:
    """Row p of the table: the answers of probe p to every secret, one symbol or position at a time.

    rules.feedback's hits and blows, computed as vector passes over all secrets (contiguous loops the
    compiler vectorises): hits count equal symbols per position; the common symbols of probe and
    secret are the sum over the probe's symbols x of min(secret's count of x, probe's count of x).
    `columns[j]` is position j of every code, `counts[x]` the count of symbol x in every code."""
    n_pos, n = columns.shape
    hits = np.zeros(n, dtype=np.uint8)
    common = np.zeros(n, dtype=np.uint8)
    for j in range(n_pos):
        x = columns[j, p]
        column = columns[j]
        for s in range(n):
            hits[s] += column[s] == x
    for x in range(counts.shape[0]):
        mine = counts[x, p]
        if mine == 0:
            continue
        theirs = counts[x]
        for s in range(n):
            common[s] += min(theirs[s], mine)
    row = out[p]
    for s in range(n):
        row[s] = class_of[hits[s] * width + common[s] - hits[s]]


@numba.njit(cache=True, parallel=True)
def _fill_parallel(columns: np.ndarray, counts: np.ndarray, class_of: np.ndarray, width: int, out: np.ndarray) -> None:
    for p in numba.prange(columns.shape[1]):
        _fill_row(columns, counts, class_of, width, out, p)


@numba.njit(cache=True)
def _fill_serial(columns: np.ndarray, counts: np.ndarray, class_of: np.ndarray, width: int, out: np.ndarray) -> None:
    for p in range(columns.shape[1]):
        _fill_row(columns, counts, class_of, width, out, p)


PARALLEL_FILL = 12_000  # below this many codes, starting the thread pool costs more than it saves


@numba.njit(cache=True, nogil=True)
def split(table, S, probe, n_classes):
    """Parts of S by answer to `probe`: (members grouped by class in their order, start offsets per class)."""
    n = S.shape[0]
    row = table[probe]
    starts = np.zeros(n_classes + 1, dtype=np.int64)
    for i in range(n):
        starts[row[S[i]] + 1] += 1
    for c in range(n_classes):
        starts[c + 1] += starts[c]
    fill = starts[:-1].copy()
    out = np.empty(n, dtype=S.dtype)
    for i in range(n):
        c = row[S[i]]
        out[fill[c]] = S[i]
        fill[c] += 1
    return out, starts


class _Codes:
    """What a game's code arrays answer alike: the win class, the size, codes and answers as text."""

    game: Game
    codes: np.ndarray
    answers: list[tuple[int, int]]

    @property
    def win(self) -> int:
        return len(self.answers) - 1

    @property
    def size(self) -> int:
        return self.codes.shape[0]

    def index(self, code: tuple[int, ...]) -> int:
        """Internal index of a code (its rank in lexicographic order)."""
        return _index_of(self.game)[code]

    def probe_of(self, node: dict) -> int:
        """The index of the question a tree node asks (a code as the tree format writes it)."""
        return self.index(self.game.read_code(node["guess"]))

    def code_str(self, i: int) -> str:
        return self.game.format_code(self.codes[i].tolist())

    def code_strs(self, indices: np.ndarray) -> list[str]:
        """The text of many codes at once: one ASCII byte per symbol, decoded row by row."""
        chars = np.frombuffer(ALPHABET.encode("ascii"), dtype=np.uint8)[self.codes[indices]]
        return [row.decode("ascii") for row in chars.view(f"S{self.codes.shape[1]}").ravel()]

    def answer_str(self, cls: int) -> str:
        return self.game.format_answer(self.answers[cls])


@dataclass(frozen=True, eq=False)
class GameTable(_Codes):
    """A game with its codes as an (N, length) uint8 array and its (N, N) answer-class table.

    `table[p, s]` is the index in `answers` of the answer probe p gets from secret s;
    `masks[i]` has bit x set when code i contains symbol x;
    `win` is the class of the all-hits answer (the last one).
    """

    game: Game
    codes: np.ndarray
    answers: list[tuple[int, int]]
    table: np.ndarray
    masks: np.ndarray  # bit set of the symbols of each code


@functools.lru_cache(maxsize=4)
def _index_of(game: Game) -> dict[tuple[int, ...], int]:
    return {c: i for i, c in enumerate(game.codes())}


@dataclass(frozen=True, eq=False)
class GameCodes(_Codes):
    """A game's codes without the N×N table: what the greedy builders need (memory O(N)).

    `lut[h * width + c]` is the answer class of h hits and c common symbols (255 if impossible).
    """

    game: Game
    codes: np.ndarray
    answers: list[tuple[int, int]]
    masks: np.ndarray
    lut: np.ndarray

    @property
    def width(self) -> int:
        return self.game.length + 1


@functools.lru_cache(maxsize=2)
def game_codes(game: Game) -> GameCodes:
    """The codes of `game` as an (N, length) uint8 array, with symbol masks and the answer-class table."""
    count = game.count()
    answers = game.answers()
    if len(answers) > 255:
        raise GameError(f"{game.spec} has {len(answers)} answers, more than a uint8 class holds")
    codes = np.array(game.codes(), dtype=np.uint8).reshape(count, game.length)
    width = game.length + 1
    lut = np.full(width * width, 255, dtype=np.uint8)
    for i, (h, b) in enumerate(answers):
        lut[h * width + h + b] = i
    return GameCodes(game, codes, answers, symbol_masks(codes), lut)


@functools.lru_cache(maxsize=2)
def game_table(game: Game) -> GameTable:
    """Build (once per process) the codes and the feedback table of `game`."""
    count = game.count()
    if count > MAX_TABLE_CODES:
        raise GameError(
            f"{game.spec} has {count} codes: its feedback table would need {count * count / 1e9:.1f} GB "
            f"(limit {MAX_TABLE_CODES} codes)"
        )
    answers = game.answers()
    if len(answers) > 255:
        raise GameError(f"{game.spec} has {len(answers)} answers, more than a uint8 table holds")
    codes = np.array(game.codes(), dtype=np.uint8).reshape(count, game.length)
    width = game.length + 1
    class_of = np.full(width * width, 255, dtype=np.uint8)
    for i, (h, b) in enumerate(answers):
        class_of[h * width + b] = i
    table = np.empty((count, count), dtype=np.uint8)
    columns = np.ascontiguousarray(codes.T)
    counts = np.stack([(codes == x).sum(axis=1, dtype=np.uint8) for x in range(game.symbols)])
    (_fill_parallel if count > PARALLEL_FILL else _fill_serial)(columns, counts, class_of, width, table)
    return GameTable(game, codes, answers, table, symbol_masks(codes))
