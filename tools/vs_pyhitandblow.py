"""Side by side: strategy's live play against pyHitAndBlow's offence, on the same seeded secrets.

Usage: python tools/vs_pyhitandblow.py --pyhitandblow GITDIR [--lengths 5 6 7 8 9 10] [--secrets 1000]
       [--seed 1] [--real 5]

For each length n of bulls n of 10, the same `--secrets` secrets (drawn with `--seed`) are played by
`strategy play --game bulls:nx10` in process (live play; the shipped tree where there is one) and by
pyHitAndBlow's offence. pyHitAndBlow (https://github.com/NobuyukiInoue/pyHitAndBlow) plays lengths other
than 4 by asking a random code that may still be the secret (`create_canidiate_number`: a uniform index
into its list of candidates, kept in increasing order). Its own code, `mylibs/lib_hit_and_blow.py`, is read
from its git directory (`git show`) into a temporary folder, never into this repository, and plays in
process: its `offence()` reseeds the `random` module from the system, so the tool hands it a seeded
generator whose reseeding does nothing, one per game, which makes its games reproducible.

Its pure-Python filtering takes about half a minute per game at 9 and 10 digits, so the 1,000 games of
each length are played by a replica of its rule (the same seeded draws of an index into the same ordered
candidates, filtered here by NumPy), and its own code plays the first `--real` secrets of each length:
the replica must ask exactly the same questions (the tool stops otherwise), and pyHitAndBlow's time per
game is that of its own code. Writes tools/results/vs-pyhitandblow.md.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import math
import random
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from benchlib import ROOT, merged_rows, write_table  # noqa: F401  (puts this checkout first on sys.path)

from strategy.cli.options import Parser
from strategy.play.live import LiveWalker, play_out, shipped_tree
from strategy.play.walker import Walker
from strategy.rules import MAX_LIVE_CODES, Game, feedback


class SeededRandom(random.Random):
    """A generator whose seed() without an argument keeps its state (pyHitAndBlow calls random.seed())."""

    def seed(self, a=None, version=2):
        if a is not None:
            super().seed(a, version)


def load_peer(gitdir: str, folder: Path):
    """pyHitAndBlow's lib_hit_and_blow module, written from its git directory into `folder` and imported."""
    text = subprocess.run(
        ["git", "--git-dir", gitdir, "show", "HEAD:mylibs/lib_hit_and_blow.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = folder / "lib_hit_and_blow.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("lib_hit_and_blow", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def peer_real(lib, n: int, secret: str, seed: int) -> tuple[list[str], float]:
    """pyHitAndBlow's own offence against `secret`: its questions and its time (candidate list included)."""
    lib.random = SeededRandom(seed)
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        targets = lib.create_target_numbers(n)
        ok, history = lib.offence(n, targets, False, secret)
    seconds = time.perf_counter() - start
    if not ok:
        raise SystemExit(f"pyHitAndBlow did not solve {secret}")
    return list(history.challenge), seconds


def peer_replica(walker: LiveWalker, secret: tuple[int, ...], seed: int) -> list[str]:
    """pyHitAndBlow's rule for lengths other than 4: a uniformly drawn index into the ordered candidates."""
    game = walker.game
    rng = SeededRandom(seed)
    cands = walker.start()
    asked = []
    while True:
        guess = cands[rng.randint(0, len(cands) - 1)]
        asked.append(game.format_code(guess))
        answer = feedback(secret, guess)
        if answer == game.win:
            return asked
        cands = cands.narrow(guess, answer)


def secrets_for(game: Game, count: int, seed: int) -> list[tuple[int, ...]]:
    rng = random.Random(seed)
    return [game.code_at(rng.randrange(game.count())) for _ in range(count)]


def summary(counts: list[int]) -> tuple[float, float, int]:
    """Average, half-width of its 95% interval, worst."""
    mean = statistics.fmean(counts)
    half = 1.96 * statistics.stdev(counts) / math.sqrt(len(counts)) if len(counts) > 1 else 0.0
    return mean, half, max(counts)


def main() -> None:
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument("--pyhitandblow", required=True, metavar="GITDIR", help="pyHitAndBlow's git directory")
    parser.add_argument("--lengths", type=int, nargs="+", default=[5, 6, 7, 8, 9, 10])
    parser.add_argument("--secrets", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--real", type=int, default=5, help="secrets of each length pyHitAndBlow's own code plays")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        lib = load_peer(args.pyhitandblow, Path(tmp))
        for n in args.lengths:
            game = Game("bulls", n, 10)
            if game.count() > MAX_LIVE_CODES:
                raise SystemExit(f"{game.spec} is beyond live play")
            tree_path = shipped_tree(game)
            walker = LiveWalker(game, seed=args.seed, tree=Walker.load(tree_path) if tree_path else None)
            secrets = secrets_for(game, args.secrets, args.seed)
            ours, our_time = [], 0.0
            for i, secret in enumerate(secrets):
                start = time.perf_counter()
                ours.append(len(play_out(walker, secret)))
                our_time += time.perf_counter() - start
            theirs = [len(peer_replica(walker, s, args.seed * 100_003 + i)) for i, s in enumerate(secrets)]
            real_times = []
            for i, secret in enumerate(secrets[: args.real]):
                asked, seconds = peer_real(lib, n, game.format_code(secret), args.seed * 100_003 + i)
                replica = peer_replica(walker, secret, args.seed * 100_003 + i)
                if asked != replica:
                    raise SystemExit(
                        f"the replica of pyHitAndBlow differs from its code on {game.format_code(secret)}: "
                        f"{asked} vs {replica}"
                    )
                real_times.append(seconds)
            (a, ha, wa), (b, hb, wb) = summary(ours), summary(theirs)
            source = f"tree {tree_path.name} + live" if tree_path else "live"
            rows.append(
                [
                    f"{n}",
                    f"{game.count():,}",
                    f"{a:.3f} ± {ha:.3f}",
                    f"{wa}",
                    f"{our_time / len(secrets):.3f} s",
                    f"{b:.3f} ± {hb:.3f}",
                    f"{wb}",
                    f"{statistics.fmean(real_times):.2f} s ({len(real_times)} games)",
                    f"{b - a:+.3f}",
                    source,
                ]
            )
            print(" | ".join(rows[-1]), flush=True)
            write(rows, args)  # after each length: a long run keeps what it measured


def write(rows: list[list[str]], args) -> None:
    """The table, with the lengths of an earlier run that this one does not measure kept in their rows."""
    merged, kept = merged_rows("vs-pyhitandblow", rows, 1)
    merged.sort(key=lambda row: int(row[0]))
    note = (
        f"The same {args.secrets} secrets per length (seed {args.seed}), in process on this machine (2 cores shared). "
        f"strategy: `play --game bulls:Nx10` without a tree file (the shipped tree while on it, then exact search or "
        f"sampled entropy). pyHitAndBlow: its offence for lengths other than 4 (a random code that may be the secret); "
        f"its averages from a replica of its rule that asked exactly its questions on the first {args.real} secrets of "
        f"each length, played by its own code, whose time per game is shown. ± is a 95% interval.{kept}"
    )
    path = write_table(
        "vs-pyhitandblow",
        "strategy against pyHitAndBlow, bulls N of 10 (tools/vs_pyhitandblow.py)",
        [
            "N",
            "codes",
            "strategy average",
            "worst",
            "time per game",
            "pyHitAndBlow average",
            "worst",
            "its time per game",
            "difference",
            "strategy's questions",
        ],
        merged,
        note,
    )
    print(f"wrote {path}", flush=True)


if __name__ == "__main__":
    main()
