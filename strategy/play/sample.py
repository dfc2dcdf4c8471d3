"""Many games of live play: every secret of a small game, or a seeded sample where `--all` cannot go.

A sample's average comes with its 95% interval (normal approximation: 1.96 standard errors); playing every
secret gives the exact figures. The distribution is reported as `io.verify.Stats`, as a tree's is.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from ..rules import Code, Game
from ..tree.verify import Stats
from .live import LiveWalker, play_out

ALL_LIVE = 10_000  # `play --all` without a tree plays every secret up to this many codes; above, a sample


@dataclass(frozen=True)
class Played:
    """The questions each secret needed, and how the secrets were chosen."""

    game: Game
    depths: list[int]
    sampled: bool  # a seeded sample (else every secret)
    seed: int

    @property
    def stats(self) -> Stats:
        counts = [0] * (max(self.depths) + 1)
        for d in self.depths:
            counts[d] += 1
        return Stats(len(self.depths), sum(self.depths), max(self.depths), counts)

    @property
    def half_width(self) -> float:
        """Half the 95% interval of the average (0 when every secret was played)."""
        n = len(self.depths)
        if not self.sampled or n < 2:
            return 0.0
        mean = sum(self.depths) / n
        var = sum((d - mean) ** 2 for d in self.depths) / (n - 1)
        return 1.96 * math.sqrt(var / n)

    def to_json(self) -> dict:
        s = self.stats
        out = {
            "game": self.game.spec,
            "secrets": s.secrets,
            "sampled": self.sampled,
            "average": round(s.average, 4),
            "worst": s.worst,
            "total": s.total,
            "depth_counts": s.depth_counts,
        }
        if self.sampled:
            out |= {
                "seed": self.seed,
                "interval95": [round(s.average - self.half_width, 4), round(s.average + self.half_width, 4)],
            }
        return out

    def summary(self, source: str) -> str:
        s = self.stats
        if self.sampled:
            return (
                f"{self.game.spec}: {s.secrets:,} seeded secrets (seed {self.seed}) played {source}: average "
                f"{s.average:.4f} ± {self.half_width:.4f} (95% interval), worst {s.worst} of them"
            )
        return f"{self.game.spec}: every secret played {source}: average {s.average:.4f}, worst {s.worst}"


def sampled_secrets(game: Game, count: int, seed: int) -> list[Code]:
    """`count` secrets drawn uniformly (with replacement) by a seeded generator, without listing the codes."""
    rng = random.Random(seed)
    return [game.code_at(rng.randrange(game.count())) for _ in range(count)]


def play_many(walker: LiveWalker, sample: int | None, seed: int, progress: bool = False) -> Played:
    """Every secret (sample None) or `sample` seeded secrets, each played to the end."""
    game = walker.game
    secrets = game.codes() if sample is None else sampled_secrets(game, sample, seed)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(secrets), unit="game", leave=False, file=None)
    depths = []
    for secret in secrets:
        depths.append(len(play_out(walker, secret)))
        if bar is not None:
            bar.update()
    if bar is not None:
        bar.close()
    return Played(game, depths, sample is not None, seed)
