"""The race (Numeron, MOO, Hit&Blow head to head) played adaptively.

The exact outcome of two fixed trees, and the rules, are `tree.race`'s. In a real race each side hears the other's
questions, so the adaptive player (`AdaptiveRacer`) chooses each question for its chance to win from the current
state: its own remaining questions X, simulated by the tree's continuation after each question it might ask, and
the opponent's Y, modelled by the tree's continuation over the opponent's candidates. Standard library only.
"""

from __future__ import annotations

import functools
import random
from fractions import Fraction
from typing import TYPE_CHECKING

from ..rules import Code, Game, feedback
from .walker import History, Walker

if TYPE_CHECKING:
    from .candidates import Candidates
    from .walker import Codes

MODEL_SAMPLE = 160  # opponent candidate sets up to this size are simulated; larger ones use tree depths
ASK_CANDIDATES = 16  # our candidates tried as questions at most (the tree's question is always tried)
DEVIATE_BELOW = 40  # with more candidates than this the tree's question is kept (unless the opponent has won)
CLOSE = 2  # the tree's question is kept unless the opponent may finish within this many questions

# The racer replays the same (candidate, probe) pairs many times over (each question it weighs walks the
# tree's continuation over the same candidates): remembering answers makes a race several times faster.
_answer = functools.lru_cache(maxsize=1 << 18)(feedback)


# -- adaptive play -----------------------------------------------------------------------------------


def continuations(walker: Walker, history: History, cands: Codes, limit: int = 40) -> dict[Code, int]:
    """For every candidate, how many more questions the tree's play needs to find it after `history`.

    One walk of the subtree for all candidates at once: each question splits the set as the answers would."""
    game = walker.game
    out: dict[Code, int] = {}
    stack = [(list(history), cands, 0)]
    while stack:
        hist, part, asked = stack.pop()
        if asked == limit:  # a tree that makes no progress: count the limit rather than loop
            out.update((c, limit) for c in part)
            continue
        guess = walker.next_guess(hist, part)
        assert guess is not None  # no history here ends with the all-hits answer
        probe = walker.probe(guess)
        parts: dict = {}
        for c in part:
            parts.setdefault(_answer(c, probe), []).append(c)
        for answer, sub in parts.items():
            if answer == game.win:
                out[sub[0]] = asked + 1
            else:
                stack.append((hist + [(guess, game.format_answer(answer))], sub, asked + 1))
    return out


def spread_sample(items: list | Candidates, size: int) -> list:
    """At most `size` items, evenly spread (deterministic)."""
    if len(items) <= size:
        return list(items)
    step = len(items) / size
    return [items[int(i * step)] for i in range(size)]


def distribution(counts: list[int]) -> list[Fraction]:
    """Counts of questions -> probabilities, index = number of questions."""
    total = len(counts)
    out = [Fraction(0)] * (max(counts) + 1 if counts else 1)
    for c in counts:
        out[c] += Fraction(1, total)
    return out


class AdaptiveRacer:
    """Chooses our next question in a race for its chance to win, given both sides' knowledge.

    `model`: "tree" (the opponent continues as our tree would from their candidates) or
    "random-consistent" (the opponent asks random codes that may be the secret).
    """

    def __init__(self, walker: Walker, model: str = "tree", seed: int = 0):
        self.walker, self.game, self.model = walker, walker.game, model
        self.rng = random.Random(seed)
        self._depth: dict[Code, int] | None = None

    def tree_depth(self, code: Code) -> int:
        """Questions the tree needs from the start for this secret (computed once for all codes)."""
        if self._depth is None:
            from ..tree.verify import measure

            depths = measure(self.game, self.walker.root)[1]
            self._depth = {self.game.read_code(c): d for c, d in depths.items()}
        return self._depth[code]

    def opponent_needs(self, their_history: History, their_cands: Codes) -> list[Fraction]:
        """P(the opponent needs j more questions), for j = 0, 1, ...

        Small candidate sets are played out; for a large one (early in the game) each candidate's
        remaining count is taken as its tree depth less the questions already asked (at least 1)."""
        if len(their_cands) > MODEL_SAMPLE and self.model == "tree":
            asked = len(their_history)
            return distribution([max(1, self.tree_depth(c) - asked) for c in their_cands])
        if self.model == "random-consistent":
            counts = []
            for s in spread_sample(their_cands, MODEL_SAMPLE):
                cands, asked = list(their_cands), 0
                while True:
                    asked += 1
                    probe = cands[self.rng.randrange(len(cands))]
                    answer = _answer(s, probe)
                    if answer == self.game.win:
                        break
                    cands = [c for c in cands if _answer(c, probe) == answer]
                counts.append(asked)
        else:
            counts = list(continuations(self.walker, their_history, their_cands).values())
        return distribution(counts)

    def our_needs(self, history: History, cands: Codes, question: str) -> list[Fraction]:
        """P(we need x questions, this one included) if we ask `question` now."""
        probe = self.game.read_code(question)
        parts: dict = {}
        for c in cands:
            parts.setdefault(_answer(c, probe), []).append(c)
        counts = []
        for answer, part in parts.items():
            if answer == self.game.win:
                counts.append(1)
            else:
                after = history + [(question, self.game.format_answer(answer))]
                counts.extend(1 + n for n in continuations(self.walker, after, part).values())
        return distribution(counts)

    @staticmethod
    def value(
        ours: list[Fraction], theirs: list[Fraction], they_won: bool, rule: str = "tie", we_first: bool = False
    ) -> Fraction:
        """Our score (win 1, draw 1/2) if we need X questions (this one included) and they Y more.

        Asking second in each round (as in play --race), their next question comes in the next round:
        under the tie rule we win if X <= Y and draw if X = Y + 1 (their last question and our
        equalising one share a round); if they already found our secret, only X = 1 draws. Asking
        first, their next question is in this round: we win if X < Y and draw if X = Y. Under the rule
        first the earlier finisher wins: we win if X <= Y.
        """
        if they_won:
            return ours[1] / 2 if len(ours) > 1 else Fraction(0)
        at_least = [Fraction(0)] * (len(theirs) + 2)  # at_least[j] = P(Y >= j)
        for j in range(len(theirs) - 1, -1, -1):
            at_least[j] = at_least[j + 1] + theirs[j]

        def p_y_at_least(j: int) -> Fraction:
            return at_least[j] if j < len(at_least) else Fraction(0)

        def p_y_is(j: int) -> Fraction:
            return theirs[j] if 0 <= j < len(theirs) else Fraction(0)

        score = Fraction(0)
        for x, p in enumerate(ours):
            if not p:
                continue
            if rule == "first":
                score += p * p_y_at_least(x)
            elif we_first:
                score += p * (p_y_at_least(x + 1) + p_y_is(x) / 2)
            else:
                score += p * (p_y_at_least(x) + p_y_is(x - 1) / 2)
        return score

    def choose(
        self,
        history: History,
        cands: Codes,
        their_history: History,
        their_cands: Codes,
        they_won: bool,
        rule: str = "tie",
        we_first: bool = False,
    ) -> str:
        """The question with the best chance to win (ties: the tree's question, then the lowest code)."""
        tree_question = self.walker.next_guess(history, cands)
        assert tree_question is not None  # the race goes on: we have not found the secret
        if len(cands) > DEVIATE_BELOW:
            if they_won and self.game.read_code(tree_question) not in cands:
                return self.game.format_code(min(cands))  # only a candidate can still draw
            return tree_question
        theirs = [Fraction(0), Fraction(1)] if they_won else self.opponent_needs(their_history, their_cands)
        if not they_won and sum(theirs[: CLOSE + 1]) == 0:
            return tree_question  # the opponent is far: no reason to leave the tree
        options = [tree_question] + [self.game.format_code(c) for c in spread_sample(sorted(cands), ASK_CANDIDATES)]
        best, best_value = tree_question, None
        for q in dict.fromkeys(options):
            v = self.value(self.our_needs(history, cands, q), theirs, they_won, rule, we_first)
            if best_value is None or v > best_value:
                best, best_value = q, v
        return best


# -- the seed article's Numeron AI --------------------------------------------------------------------


class SeedNumeronAI:
    """The AI of the Numeron article (shared/seeds/000), as it describes it: a random first question; then
    the code (of all codes) that minimises the expected number of remaining candidates (lowest code on
    ties); with one candidate left, ask it; with two, either at random; on its last turn after the
    opponent found its number, a random candidate."""

    def __init__(self, game: Game, seed: int = 0, best=None):
        """`best(cands)`: optional fast chooser, the index in code order of the first code with the lowest
        sum of squared part sizes over cands (the same choice as the loop below)."""
        self.game = game
        self.codes = game.codes()
        self.rng = random.Random(seed)
        self.best = best

    def choose(self, asked: int, cands: list[Code], opponent_won: bool) -> Code:
        if asked == 0:
            return self.rng.choice(self.codes)
        if len(cands) == 1:
            return cands[0]
        if len(cands) == 2 or opponent_won:
            return self.rng.choice(cands)
        if self.best is not None:
            return self.codes[self.best(cands)]
        best, best_score = None, None
        for probe in self.codes:
            parts: dict = {}
            for c in cands:
                a = feedback(c, probe)
                parts[a] = parts.get(a, 0) + 1
            score = sum(v * v for v in parts.values())
            if best_score is None or score < best_score:
                best, best_score = probe, score
        assert best is not None  # a game has codes
        return best
