"""The tiny player: offence (it asks, you answer), auto (against a given secret), defence (you ask),
and the Numeron race. Standard library and orjson only; noisy-answer mode loads the engine on demand.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable, TypeVar

from ..rules import Code, Game, GameError, feedback
from .walker import Contradiction, History, Walker

T = TypeVar("T")
Ask = Callable[[str], str]
Say = Callable[[str], None]
QUIT = {"q", "quit", "exit"}


class Quit(Exception):
    """The person asked to stop (q or end of input)."""


@dataclass
class Record:
    """One question of a game: how many secrets remained, the question and its answer."""

    remaining: int
    question: str
    answer: str = ""


@dataclass
class Transcript:
    records: list[Record] = field(default_factory=list)

    def table(self, title: str = "history") -> str:
        lines = [f"===== {title} =====", f"{'#':>3}  {'remaining':>9}  {'question':>8}  answer"]
        for i, r in enumerate(self.records, 1):
            remaining = "" if r.remaining < 0 else str(r.remaining)
            lines.append(f"{i:>3}  {remaining:>9}  {r.question:>8}  {r.answer}")
        return "\n".join(lines)


def _read(ask: Ask, prompt: str) -> str:
    try:
        text = ask(prompt).strip()
    except EOFError:
        raise Quit from None
    if text.lower() in QUIT:
        raise Quit
    return text


def read_valid(parse: Callable[[str], T], ask: Ask, say: Say, prompt: str) -> T:
    """Ask until `parse` accepts what the person types (a code, an answer); say why it did not."""
    while True:
        text = _read(ask, prompt)
        try:
            return parse(text)
        except GameError as e:
            say(f"  {e}; try again")


class Offence:
    """The computer asks from the tree; answers come from a person or from a known secret."""

    def __init__(self, walker: Walker, ask: Ask, say: Say, noise: float | None = None, secret: Code | None = None):
        self.walker, self.game = walker, walker.game
        self.ask, self.say = ask, say
        self.noise = noise
        self.secret = secret
        self.history: History = []
        self.cands = walker.candidates([])
        self.transcript = Transcript()

    def answer_for(self, guess: str, number: int) -> tuple[int, int]:
        prompt = f"[{number}] hits, blows: "
        if self.secret is not None:
            answer = feedback(self.secret, self.game.parse_code(guess))
            self.say(prompt + self.game.format_answer(answer))
            return answer
        return read_valid(self.game.parse_answer, self.ask, self.say, prompt)

    def step(self, guess: str | None = None) -> bool:
        """Ask one question (the tree's unless given); True when solved, Contradiction if no secret fits."""
        if guess is None:
            guess = self.walker.next_guess(self.history, self.cands)
        number = len(self.history) + 1
        self.say(f"(remaining {len(self.cands)}) Is your number {guess}?")
        answer = self.answer_for(guess, number)
        key = self.game.format_answer(answer)
        self.transcript.records.append(Record(len(self.cands), guess, key))
        self.history.append((guess, key))
        if answer == self.game.win:
            return True
        self.cands = self.walker.candidates([(guess, key)], among=self.cands)
        if not self.cands:
            raise Contradiction("no secret agrees with every answer")
        return False

    def play(self) -> int:
        """Run to the end; exit status 0 when solved."""
        if self.noise is not None:
            return self.noisy()
        while True:
            try:
                if self.step():
                    return self.solved()
            except Contradiction:
                if not self.repair():
                    return self.noisy()

    def solved(self) -> int:
        self.say(f"Solved in {len(self.history)} questions.")
        self.say(self.transcript.table())
        return 0

    def repair(self) -> bool:
        """After contradictory answers: show why, let the person correct one. False: switch to noisy mode."""
        conflict = self.walker.conflict(self.history)
        self.say("No secret agrees with all your answers. These cannot all be true:")
        for i in conflict.core:
            q, a = self.history[i]
            fix = f" (if it was wrong, {conflict.repairs[i]} secrets remain)" if i in conflict.repairs else ""
            self.say(f"  [{i + 1}] {q} -> {a}{fix}")
        while True:
            text = _read(self.ask, "Correct which question (number), 'n' for noisy-answer mode, or 'q': ")
            if text.lower() == "n":
                return False
            if text.isdigit() and 1 <= int(text) <= len(self.history):
                i = int(text) - 1
                q = self.history[i][0]
                answer = read_valid(self.game.parse_answer, self.ask, self.say, f"[{i + 1}] {q} hits, blows: ")
                key = self.game.format_answer(answer)
                self.history[i] = (q, key)
                self.transcript.records[i].answer = key + " (corrected)"
                self.cands = self.walker.candidates(self.history)
                if not self.cands:
                    return self.repair()
                if answer == self.game.win:
                    self.cands = [self.game.parse_code(q)]
                self.say(f"Corrected; {len(self.cands)} secrets remain.")
                return True
            self.say(f"  type a number from 1 to {len(self.history)}, n or q")

    def noisy(self) -> int:
        """Play on with a posterior in which every answer may be wrong (loads the engine)."""
        from ..play.noisy import NoisyGuesser

        q = 0.05 if self.noise is None else self.noise
        self.say(f"Noisy-answer mode: each answer may be wrong with probability {q}.")
        guesser = NoisyGuesser(self.game, q)
        gt = guesser.gt
        for question, answer in self.history:
            guesser.update(gt.index(self.game.parse_code(question)), self.game.parse_answer(answer))
        while True:
            probe = guesser.next_question()
            guess = gt.code_str(probe)
            best, p = guesser.map_secret()
            number = len(self.history) + 1
            self.say(f"(most likely {gt.code_str(best)} at {p:.0%}) Is your number {guess}?")
            answer = self.answer_for(guess, number)
            key = self.game.format_answer(answer)
            self.transcript.records.append(Record(-1, guess, key))
            self.history.append((guess, key))
            if answer == self.game.win:
                return self.solved()
            guesser.update(probe, answer)


def defence(game: Game, ask: Ask, say: Say, secret: Code | None = None, seed: int | None = None) -> int:
    """The computer holds a secret and answers the person's questions."""
    codes = game.codes()
    if secret is None:
        secret = random.Random(seed).choice(codes)
    say(f"I have a secret of {game.spec}. Ask codes like {game.format_code(codes[0])}; q quits.")
    transcript = Transcript()
    while True:
        probe = read_valid(game.parse_code, ask, say, f"[{len(transcript.records) + 1}] your question: ")
        answer = feedback(secret, probe)
        key = game.format_answer(answer)
        transcript.records.append(Record(-1, game.format_code(probe), key))
        say(f"  {answer[0]} hits, {answer[1]} blows")
        if answer == game.win:
            say(f"Congratulations! You found {game.format_code(secret)} in {len(transcript.records)} questions.")
            say(transcript.table())
            return 0


RACE_RULE = ("You ask first. If you find my secret, I still get my turn of that round: "
             "if I find yours too, the game is a draw.")


def race(walker: Walker, ask: Ask, say: Say, secret: Code | None = None, seed: int | None = None) -> int:
    """Numeron: both hold a secret and ask in turn; the person asks first, the computer gets the last word.

    When the person's answers leave at most two codes for the computer's secret (the person may win at
    the next turn), the computer stops asking for information and asks its most likely secret.
    """
    game = walker.game
    codes = game.codes()
    rng = random.Random(seed)
    mine = secret if secret is not None else rng.choice(codes)
    say(f"Race on {game.spec}. Think of your secret; I have mine. {RACE_RULE}")
    me = Offence(walker, ask, say)
    their_cands = list(codes)  # what the person may still think my secret is
    theirs = Transcript()
    person_won = False
    for round_number in range(1, 10 * game.length + 50):
        probe = read_valid(game.parse_code, ask, say, f"[{round_number}] your question: ")
        answer = feedback(mine, probe)
        asked = (game.format_code(probe), game.format_answer(answer))
        theirs.records.append(Record(len(their_cands), *asked))
        their_cands = walker.candidates([asked], among=their_cands)
        say(f"  {answer[0]} hits, {answer[1]} blows")
        person_won = answer == game.win
        if person_won:
            say("You found my secret. My last turn:")
        try:
            computer_won = _race_turn(me, urgent=person_won or len(their_cands) <= 2)
        except Contradiction:
            say("Your answers cannot be corrected in a race; the race is void.")
            say(me.transcript.table("my questions"))
            return 1
        if person_won or computer_won:
            if person_won and computer_won:
                say("We both found it: a draw.")
            elif person_won:
                say(f"You win in {round_number} questions.")
            else:
                say(f"I win in {round_number} questions. My secret was {game.format_code(mine)}.")
            say(theirs.table("your questions"))
            say(me.transcript.table("my questions"))
            return 0
    return 1


def _race_turn(me: Offence, urgent: bool) -> bool:
    """The computer's question of one round: from the tree, or its best chance to win now when urgent."""
    while True:
        try:
            guess = None
            if urgent:
                tree_guess = me.walker.next_guess(me.history, me.cands)
                if tree_guess not in {me.game.format_code(c) for c in me.cands}:
                    guess = me.game.format_code(_best_candidate(me.cands))
            return me.step(guess)
        except Contradiction:
            if not me.repair():
                raise


def _best_candidate(cands: list[Code]) -> Code:
    """The candidate that wins now with the same chance as any other and splits the rest best."""
    if len(cands) == 1:
        return cands[0]

    def spread(code: Code) -> int:
        parts: dict = {}
        for c in cands:
            a = feedback(c, code)
            parts[a] = parts.get(a, 0) + 1
        return sum(v * v for v in parts.values())

    return min(cands, key=spread)
