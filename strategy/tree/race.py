"""The race between two fixed trees: who wins, with what probability, from their depth distributions alone.

Two rules. `tie`: the players ask in rounds and the one who needs fewer questions wins, equal counts draw (the
equalising last turn of `play --race`, Tanaka's rule for MOO). `first`: A asks first and the first to find the
other's secret wins. With fixed trees and independent uniform secrets only the two depth distributions matter
(`outcome`); `strategy race` prints it, the verifier checks a best response's proof record with it, and the
adaptive player (`play.race`) builds on it. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

RULES = ("tie", "first")


@dataclass(frozen=True)
class Outcome:
    """Exact probabilities for A against B."""

    a_wins: Fraction
    draw: Fraction
    b_wins: Fraction

    @property
    def score(self) -> Fraction:
        """A's expected result: a win counts 1, a draw 1/2."""
        return self.a_wins + self.draw / 2

    def to_json(self) -> dict:
        return {
            name: {"fraction": str(value), "decimal": round(float(value), 6)}
            for name, value in (
                ("a_wins", self.a_wins),
                ("draw", self.draw),
                ("b_wins", self.b_wins),
                ("a_score", self.score),
            )
        }


def outcome(depths_a: list[int], depths_b: list[int], rule: str = "tie") -> Outcome:
    """P(A wins), P(draw), P(B wins) from two depth-count lists (index r: secrets found at question r)."""
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}")
    na, nb = sum(depths_a), sum(depths_b)
    top = max(len(depths_a), len(depths_b))
    a = list(depths_a) + [0] * (top - len(depths_a))
    b = list(depths_b) + [0] * (top - len(depths_b))
    below = [0] * (top + 1)  # below[r] = B secrets found before question r
    for r in range(1, top + 1):
        below[r] = below[r - 1] + b[r - 1]
    wins = draws = 0
    for r in range(1, top):
        if rule == "tie":
            wins += a[r] * (nb - below[r] - b[r])  # B needs more than r
            draws += a[r] * b[r]
        else:
            wins += a[r] * (nb - below[r])  # A asks first: at r questions A is done before B's r-th
    total = na * nb
    return Outcome(Fraction(wins, total), Fraction(draws, total), Fraction(total - wins - draws, total))


def score(depths_a: list[int], depths_b: list[int], rule: str = "tie", seat: str = "first") -> Fraction:
    """A's score (a win 1, a draw 1/2) against B; under `first`, `seat` says whether A asks first or second."""
    if rule == "first" and seat == "second":
        return 1 - outcome(depths_b, depths_a, rule).score
    return outcome(depths_a, depths_b, rule).score
