"""Benchmark: how fast the player answers, through the protocol, from trees and live.

Usage: python tools/bench_live.py [--games 5] [--seed 1] [--skip-live]

Three tables, each figure read from outside the player process (`strategy.protocol.Player`, one process per
row, this checkout's code):
- the first question of every shipped tree: seconds from the start of `play TREE --protocol` to its first
  `question` event (median of 5 starts for the 30,000-code trees and the 4x10 one, of 3 for the others,
  whose slowest is shown; the bar is 0.2 s);
- protocol replies from a tree: the seconds from sending an answer to the player's next `await`, the win
  included, over `--games` seeded games in one process (bars: median 5 ms on bulls 5 of 10, 1 ms on 4 of 10);
- live play, no tree file (`play --game G`): offence (the player asks, this client answers for a seeded
  secret), defence and race on bulls 10 of 10 and the other big games: the first reply, the median and the
  worst, and the player's peak memory (its VmHWM; the bars: 1 s and 1 GB).
Writes tools/results/live.md.
"""

from __future__ import annotations

import compileall
import os
import random
import statistics
import time
from pathlib import Path

from benchlib import write_table

import strategy
from strategy.cli.options import Parser
from strategy.protocol import Player
from strategy.rules import MAX_LIVE_CODES, feedback, parse_game
from strategy.tree.shipped import names, path_of

BIG_TREES = [
    "bulls-4x10-total",
    "bulls-5x10-best-found",
    "mastermind-5x8-best-found",
    "mastermind-5x8-consistent-total",
]
LIVE_GAMES = ["bulls:10x10", "bulls:9x10", "bulls:8x10", "mastermind:7x10"]


def first_question(args: list[str], runs: int = 5) -> float:
    """Median seconds from the start of the player to its first question."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        with Player.start(*args) as player:
            player.next("question")
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak_mb(player: Player) -> float:
    with open(f"/proc/{player.process.pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def offence_replies(args: list[str], games: int, seed: int) -> tuple[list[float], list[int], float, list[float]]:
    """Seconds from each answer to the next await over `games` games in one process, the questions of each
    game, the peak memory, and the replies to the winning answers; the first game's first question is timed
    from the start."""
    rng = random.Random(seed)
    replies, counts, wins = [], [], []
    start = time.perf_counter()
    with Player.start(*args) as player:
        game = parse_game(player.ready.game, MAX_LIVE_CODES)
        events = player.until_await()
        first = time.perf_counter() - start
        for g in range(games):
            secret = game.code_at(rng.randrange(game.count()))
            asked = 0
            while True:
                code = [e for e in events if e.kind == "question"][-1].code
                asked += 1
                h, b = feedback(secret, game.read_code(code))
                t = time.perf_counter()
                events = player.answer(h, b)
                replies.append(time.perf_counter() - t)
                if any(e.kind == "solved" for e in events):
                    wins.append(replies[-1])
                    break
            counts.append(asked)
            if g + 1 < games:
                events = player.send("new")  # the next game's first question, up to its await
                player.log.clear()
        memory = peak_mb(player)
    return [first] + replies, counts, memory, wins


def defence_replies(spec: str, games: int, seed: int) -> tuple[list[float], float]:
    """Seconds from each question to the answer's await, a person asking random codes (at most 12 a game)."""
    rng = random.Random(seed)
    game = parse_game(spec, MAX_LIVE_CODES)
    replies = []
    with Player.start("--defence", "--game", spec, "--seed", str(seed)) as player:
        player.until_await()
        for _ in range(12 * games):
            code = game.format_code(game.code_at(rng.randrange(game.count())))
            t = time.perf_counter()
            player.ask(code)
            replies.append(time.perf_counter() - t)
        memory = peak_mb(player)
    return replies, memory


def race_rounds(spec: str, seed: int, rounds: int = 8) -> tuple[list[float], float]:
    """Seconds from each of the person's questions to the player's next await (its own question answered by
    the client in between is timed separately and added), over a few rounds of a race."""
    rng = random.Random(seed)
    game = parse_game(spec, MAX_LIVE_CODES)
    mine = game.code_at(rng.randrange(game.count()))  # the client's secret, which the player tries to find
    times = []
    with Player.start("--race", "--game", spec, "--seed", str(seed)) as player:
        player.until_await()
        for _ in range(rounds):
            code = game.format_code(game.code_at(rng.randrange(game.count())))
            t = time.perf_counter()
            events = player.ask(code)
            spent = time.perf_counter() - t
            while events and events[-1].kind == "await" and events[-1].input == "answer":
                asked = [e for e in events if e.kind == "question"][-1].code
                h, b = feedback(mine, game.read_code(asked))
                t = time.perf_counter()
                events = player.answer(h, b)
                spent += time.perf_counter() - t
            times.append(spent)
            if any(e.kind == "solved" for e in events):
                break
        memory = peak_mb(player)
    return times, memory


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def main() -> None:
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-live", action="store_true")
    args = parser.parse_args()
    # the players read this checkout's package compiled, as pip leaves an installed one (this machine's Python is
    # told not to write bytecode, which would otherwise make every start compile every module it imports)
    compileall.compile_dir(str(Path(strategy.__file__).parent), quiet=1)
    load_before = os.getloadavg()[0]
    rows = []
    starts = {name: first_question([str(path_of(name))], runs=3) for name in names() if name not in BIG_TREES}
    slowest = max(starts, key=starts.get)
    rows.append(
        [
            f"every other shipped tree ({len(starts)})",
            "offence",
            f"{ms(starts[slowest])} (slowest: {slowest})",
            "",
            "",
            "",
            "",
            "",
        ]
    )
    print(" | ".join(rows[-1]), flush=True)
    for name in BIG_TREES:
        path = str(path_of(name))
        first = first_question([path])
        replies, counts, memory, wins = offence_replies([path], args.games, args.seed)
        rows.append(
            [
                f"tree {name}",
                "offence",
                ms(first),
                ms(statistics.median(replies[1:])),
                ms(max(replies[1:])),
                ms(statistics.median(wins)),
                f"{statistics.fmean(counts):.2f}",
                f"{memory:.0f} MB",
            ]
        )
        print(" | ".join(rows[-1]), flush=True)
    if not args.skip_live:
        for spec in LIVE_GAMES:
            replies, counts, memory, wins = offence_replies(
                ["--game", spec, "--seed", str(args.seed)], args.games, args.seed
            )
            rows.append(
                [
                    f"live {spec}",
                    "offence",
                    ms(replies[0]),
                    ms(statistics.median(replies[1:])),
                    ms(max(replies[1:])),
                    ms(statistics.median(wins)),
                    f"{statistics.fmean(counts):.2f}",
                    f"{memory:.0f} MB",
                ]
            )
            print(" | ".join(rows[-1]), flush=True)
        for spec in LIVE_GAMES[:1]:
            replies, memory = defence_replies(spec, 1, args.seed)
            rows.append(
                [
                    f"live {spec}",
                    "defence",
                    ms(replies[0]),
                    ms(statistics.median(replies)),
                    ms(max(replies)),
                    "",
                    "",
                    f"{memory:.0f} MB",
                ]
            )
            times, memory = race_rounds(spec, args.seed)
            rows.append(
                [
                    f"live {spec}",
                    "race (a round: your question, mine)",
                    ms(times[0]),
                    ms(statistics.median(times)),
                    ms(max(times)),
                    "",
                    "",
                    f"{memory:.0f} MB",
                ]
            )
            print(" | ".join(rows[-1]), flush=True)
    note = (
        f"Through the protocol, one player process per row, timed from this client; {args.games} seeded games per "
        f"offence row (seed {args.seed}), in one process (`new` between games). First: the first question from the "
        f"process start (trees: median of 5 starts), or the first reply (defence, race). Median and worst: a reply "
        f"from an answer (or question) sent to the player's next await, the win included. Memory: the player's peak "
        f"resident memory. The package's bytecode is compiled before the run, as an installed package's is. The machine has 2 cores shared with other work: its load average was "
        f"{load_before:.1f} when this run began and {os.getloadavg()[0]:.1f} when it ended (above 2, every wall time "
        f"here is stretched by the other work)."
    )
    path = write_table(
        "live",
        "Play from trees and live, through the protocol (tools/bench_live.py)",
        ["player", "mode", "first", "median reply", "worst reply", "win reply (median)", "average questions", "memory"],
        rows,
        note,
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
