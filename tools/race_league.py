"""The race league: the seed article's Numeron AI, the minimum-total tree, the strongest fixed tree and our
adaptive race player against each other, under both rules and from both seats.

Usage: python tools/race_league.py [--game bulls:3x10] [--races N] [--seed S] [--jobs P] [--write]

Two fixed trees are compared exactly (race arithmetic over every pair of secrets). A pairing with the seed
AI or the adaptive player is played out over N races with uniformly random secrets (a fixed seed), and its
score (win 1, draw 1/2) is given with a 95% confidence interval. "first" = the row player asks first.
"""

from __future__ import annotations

import math
import os
import random
import signal
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numba
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from benchlib import write_table  # noqa: E402

from strategy.cli.options import Parser  # noqa: E402
from strategy.engine.table import game_table  # noqa: E402
from strategy.files import FileError  # noqa: E402
from strategy.play.race import AdaptiveRacer, SeedNumeronAI  # noqa: E402
from strategy.play.walker import Walker  # noqa: E402
from strategy.rules import GameError, feedback, parse_game  # noqa: E402
from strategy.tree.format import load  # noqa: E402
from strategy.tree.race import outcome  # noqa: E402
from strategy.tree.verify import verify  # noqa: E402


class Player:
    name = ""

    def reset(self, rng: random.Random) -> None:
        pass

    def move(self, ctx: dict) -> str:
        raise NotImplementedError


class TreePlayer(Player):
    def __init__(self, name: str, walker: Walker):
        self.name, self.walker = name, walker

    def move(self, ctx: dict) -> str:
        return self.walker.next_guess(ctx["history"], ctx["cands"])


class AdaptivePlayer(Player):
    def __init__(self, walker: Walker):
        self.name, self.racer = "adaptive", AdaptiveRacer(walker)

    def move(self, ctx: dict) -> str:
        return self.racer.choose(
            ctx["history"],
            ctx["cands"],
            ctx["their_history"],
            ctx["their_cands"],
            ctx["they_won"],
            ctx["rule"],
            ctx["we_first"],
        )


@numba.njit(cache=True)
def sum_of_squares(table: np.ndarray, idx: np.ndarray, n_classes: int) -> np.ndarray:
    """For every probe, the sum of squared part sizes of the candidates idx (the seed AI's score).

    Answers are symmetric (table[p, s] == table[s, p]), so each candidate's row is read whole and in order:
    a contiguous scan instead of a gather per probe, several times faster on large tables."""
    n = table.shape[0]
    counts = np.zeros((n, n_classes), dtype=np.int32)
    for j in idx:
        row = table[j]
        for p in range(n):
            counts[p, row[p]] += 1
    out = np.empty(n, dtype=np.int64)
    for p in range(n):
        total = 0
        for c in range(n_classes):
            total += counts[p, c] * counts[p, c]
        out[p] = total
    return out


class SeedPlayer(Player):
    """The seed's AI, its expected-size choices computed with the answer table (the same choices, faster).

    Its second question depends only on its random first question q and the answer a. Relabelling the
    symbols (in order of first appearance in q) maps q to a canonical code c with the same answers, and
    the score of a probe p for (q, a) is the score of its image for (c, a); so the scores of the few
    (c, a) are computed once and read through the relabelling (exact, lowest code still wins ties)."""

    def __init__(self, game):
        gt = game_table(game)
        self.name, self.game, self.table = "seed AI", game, gt.table
        self.n_classes = len(gt.answers)
        self.codes = gt.codes.astype(np.int64)
        self.weights = game.symbols ** np.arange(game.length - 1, -1, -1)
        self.rank = np.full(game.symbols**game.length, -1, dtype=np.int64)  # code as a number -> index
        self.rank[self.codes @ self.weights] = np.arange(len(self.codes))
        self.answer_class = {game.format_answer(a): k for k, a in enumerate(gt.answers)}
        self.second: dict = {}
        self.history: list = []
        self.relabel = game.leading_zero  # with no leading zero, a relabelling is not a symmetry

    def indices(self, codes) -> np.ndarray:
        """Table indices of codes (tuples of symbols)."""
        return self.rank[np.asarray(codes, dtype=np.int64).reshape(-1, self.game.length) @ self.weights]

    def best(self, cands: list) -> int:
        """Index of the first code with the lowest sum of squared part sizes over cands."""
        if self.relabel and len(self.history) == 1:
            return self.best_second(*self.history[0])
        return int(np.argmin(sum_of_squares(self.table, self.indices(cands), self.n_classes)))

    def best_second(self, guess: str, answer: str) -> int:
        q = self.game.read_code(guess)
        order = list(dict.fromkeys(q)) + [x for x in range(self.game.symbols) if x not in q]
        sigma = np.empty(self.game.symbols, dtype=np.int64)
        sigma[order] = np.arange(self.game.symbols)  # symbol order[i] -> i
        canon = sigma[list(q)]
        key = tuple(canon.tolist()), answer
        if key not in self.second:
            row = self.table[self.indices(canon)[0]]
            idx = np.flatnonzero(row == self.answer_class[answer]).astype(np.int64)
            self.second[key] = sum_of_squares(self.table, idx, self.n_classes)
        return int(np.argmin(self.second[key][self.indices(sigma[self.codes])]))  # read at every code's image

    def reset(self, rng: random.Random) -> None:
        self.ai = SeedNumeronAI(self.game, rng.randrange(2**31), self.best)

    def move(self, ctx: dict) -> str:
        self.history = ctx["history"]
        return self.game.format_code(self.ai.choose(len(ctx["history"]), ctx["cands"], ctx["they_won"]))


def play(game, first: Player, second: Player, secrets: tuple, rule: str, rng: random.Random) -> float:
    """One race; the first player's score (1, 1/2, 0). secrets[i] is player i's own secret."""
    players = (first, second)
    for p in players:
        p.reset(rng)
    gt = game_table(game)  # the candidate lists are filtered with the answer table: the referee's hot loop
    codes = game.codes()
    hist = [[], []]  # what each player asked and heard
    cands = [list(codes), list(codes)]  # what each player may still think the other's secret is
    alive = [np.arange(gt.size), np.arange(gt.size)]
    for _ in range(60):
        found = [False, False]
        for side in (0, 1):
            other = 1 - side
            ctx = {
                "history": hist[side],
                "cands": cands[side],
                "their_history": hist[other],
                "their_cands": cands[other],
                "they_won": rule == "tie" and side == 1 and found[0],
                "rule": rule,
                "we_first": side == 0,
            }
            guess = players[side].move(ctx)
            probe = game.read_code(guess)
            answer = feedback(secrets[other], probe)
            hist[side] = hist[side] + [(guess, game.format_answer(answer))]
            row = gt.table[gt.index(probe)]
            alive[side] = alive[side][row[alive[side]] == row[gt.index(secrets[other])]]
            cands[side] = [codes[i] for i in alive[side].tolist()]
            found[side] = answer == game.win
            if rule == "first" and found[side]:
                return 1.0 if side == 0 else 0.0
        if rule == "tie" and any(found):
            return 0.5 if all(found) else (1.0 if found[0] else 0.0)
    raise RuntimeError("a race did not end")


def race_secrets(codes: list, seed: int, i: int) -> tuple[tuple, random.Random]:
    """Race i's two secrets and its random stream: the same whatever process plays it."""
    rng = random.Random(seed * 1_000_003 + i)
    return (rng.choice(codes), rng.choice(codes)), rng


_LEAGUE: tuple | None = None  # (game, players) of this worker process


def _start_worker(spec: str) -> None:
    global _LEAGUE
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    game = parse_game(spec)
    _LEAGUE = game, make_players(game, spec)


def _play_range(i_a: int, i_b: int, rule: str, seed: int, start: int, stop: int) -> list[float]:
    game, players = _LEAGUE
    codes = game.codes()
    scores = []
    for i in range(start, stop):
        secrets, rng = race_secrets(codes, seed, i)
        scores.append(play(game, players[i_a], players[i_b], secrets, rule, rng))
    return scores


def simulate(pool, i_a: int, i_b: int, rule: str, races: int, seed: int) -> tuple[float, float, float]:
    """A's mean score asking first over `races` races (in chunks over the pool), its 95% half-width, seconds."""
    start = time.perf_counter()
    chunk = max(1, races // 64)
    futures = [
        pool.submit(_play_range, i_a, i_b, rule, seed, lo, min(races, lo + chunk)) for lo in range(0, races, chunk)
    ]
    scores = [s for f in futures for s in f.result()]
    mean = sum(scores) / races
    sd = math.sqrt(sum((s - mean) ** 2 for s in scores) / max(1, races - 1))
    return mean, 1.96 * sd / math.sqrt(races), time.perf_counter() - start


def make_players(game, spec: str) -> list[Player]:
    stem = spec.replace(":", "-")
    total = load(ROOT / "strategy" / "trees" / f"{stem}-total.json")
    strongest_path = ROOT / "strategy" / "trees" / f"race-{stem}-strongest.json"
    players = [SeedPlayer(game), TreePlayer("min-total tree", Walker(total))]
    if strongest_path.exists():
        players.append(TreePlayer("strongest tree", Walker(load(strongest_path))))
    players.append(AdaptivePlayer(Walker(total)))
    return players


def main() -> None:
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="bulls:3x10")
    parser.add_argument("--races", type=int, default=2000, help="races per simulated pairing and seat")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count(), help="processes playing races (default: every core)"
    )
    parser.add_argument("--write", action="store_true", help="save the league table in tools/results/")
    args = parser.parse_args()
    if args.races < 1 or args.jobs < 1:
        parser.error("--races and --jobs must be at least 1")
    try:
        game = parse_game(args.game)
        players = make_players(game, args.game)
    except (GameError, FileError) as e:  # no such game, or no shipped tree for it
        parser.error(str(e))
    stem = args.game.replace(":", "-")
    depths = {p.name: verify(p.walker.doc).depth_counts for p in players if isinstance(p, TreePlayer)}
    pool = ProcessPoolExecutor(args.jobs, initializer=_start_worker, initargs=(args.game,))
    rows = []
    for i, a in enumerate(players):
        for j, b in enumerate(players[i + 1 :], i + 1):
            for rule in ("tie", "first"):
                if a.name in depths and b.name in depths:
                    first = float(outcome(depths[a.name], depths[b.name], rule).score)
                    second = 1 - float(outcome(depths[b.name], depths[a.name], rule).score)
                    cells = [f"{first:.4f} (exact)", f"{second:.4f} (exact)"]
                else:
                    m1, h1, s1 = simulate(pool, i, j, rule, args.races, args.seed)
                    m2, h2, s2 = simulate(pool, j, i, rule, args.races, args.seed + 1)
                    cells = [f"{m1:.4f} ± {h1:.4f}", f"{1 - m2:.4f} ± {h2:.4f}"]
                    print(f"  ({s1 + s2:.0f} s)", file=sys.stderr)
                print(f"{a.name:16} vs {b.name:16} rule {rule:5}: {a.name} asking first {cells[0]}, second {cells[1]}")
                rows.append([a.name, b.name, rule, *cells])
    pool.shutdown()
    if args.write:
        write_table(
            f"league-{stem}",
            f"Race league on {args.game} (tools/race_league.py)",
            ["player A", "player B", "rule", "A's score asking first", "A's score asking second"],
            rows,
            f"Score: win 1, draw 1/2. Simulated pairings: {args.races} races per seat, random secrets, "
            f"seed {args.seed}, 95% intervals.",
        )


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # the pool's workers ignore SIGINT and end with the main process
        sys.exit("race_league.py: interrupted (nothing written)")
