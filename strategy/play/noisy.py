"""Noisy-answer mode: a posterior over all secrets when any answer may be wrong (the Bayesian seed's model).

Each answer is replaced, with probability q, by an answer drawn uniformly from the game's answers:
P(a | s) = (1 - q) [a = f(s, g)] + q / K. The noise term is the same for every probe, so the expected
information gain of a probe is the entropy of its predicted answer distribution; the player asks the
probe with the largest gain, or the most probable secret once it holds half of the posterior, until
an all-hits answer confirms a secret. Loaded only when needed (it uses the feedback table).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import numpy as np

from ..engine.noisy import answer_entropies
from ..engine.table import game_table
from ..rules import Game, GameError

SUPPORT_CUTOFF = 1e-9  # secrets below this share of the top posterior are left out of the gain
CONFIDENT = 0.5


class NoisyGuesser:
    """Posterior over every secret of `game` given answers that are each wrong with probability q."""

    def __init__(self, game: Game, q: float):
        if not 0.0 <= q < 1.0:
            raise GameError(f"noise must be in [0, 1), got {q}")
        self.gt = game_table(game)
        self.q = q
        self.n_classes = len(self.gt.answers)
        self.log_post = np.zeros(self.gt.size)
        self._right = math.log(1.0 - q + q / self.n_classes)
        self._wrong = math.log(q / self.n_classes) if q > 0 else -math.inf

    def update(self, probe: int, answer: tuple[int, int]) -> None:
        cls = self.gt.answers.index(answer)
        self.log_post += np.where(self.gt.table[probe] == cls, self._right, self._wrong)

    def posterior(self) -> np.ndarray:
        top = self.log_post.max()
        if not np.isfinite(top):
            raise GameError("no secret is possible (with noise 0 the answers contradict each other)")
        p = np.exp(self.log_post - top)
        return p / p.sum()

    def next_question(self) -> int:
        """The most probable secret when it holds half of the posterior, else the most informative probe."""
        p = self.posterior()
        best = int(np.argmax(p))
        if p[best] >= CONFIDENT:
            return best
        support = np.flatnonzero(p >= p[best] * SUPPORT_CUTOFF).astype(np.int32)
        ent, win_mass = answer_entropies(self.gt.table, support, p[support], self.n_classes, self.q)
        # largest gain; among (near-)ties the probe more likely to be the secret, then the lowest code
        top = ent.max()
        tied = np.flatnonzero(ent >= top - 1e-12)
        return int(tied[np.argmax(win_mass[tied])])

    def map_secret(self) -> tuple[int, float]:
        p = self.posterior()
        best = int(np.argmax(p))
        return best, float(p[best])


@dataclass(frozen=True)
class SelfTest:
    games: int
    found: int
    average_questions: float
    worst: int


def self_test(
    game: Game, q: float, games: int, seed: int = 0, max_questions: int = 40, progress: bool = False
) -> SelfTest:
    """Play against a simulated answerer who lies with probability q; a game ends at an all-hits answer."""
    from tqdm import tqdm

    rng = random.Random(seed)
    gt = game_table(game)
    answers = gt.answers
    found, lengths = 0, []
    for _ in tqdm(range(games), disable=not progress, unit="game", delay=1.0):
        secret = rng.randrange(gt.size)
        guesser = NoisyGuesser(game, q)
        for asked in range(1, max_questions + 1):
            probe = guesser.next_question()
            truth = answers[gt.table[probe, secret]]
            told = answers[rng.randrange(len(answers))] if rng.random() < q else truth
            if told == game.win:
                found += probe == secret
                lengths.append(asked)
                break
            guesser.update(probe, told)
        else:
            lengths.append(max_questions)
    return SelfTest(games, found, sum(lengths) / len(lengths) if lengths else 0.0, max(lengths, default=0))
