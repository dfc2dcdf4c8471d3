"""One game of the player, in every mode, as events out and command lines in.

The logic of offence (the computer asks), auto (it answers for a given secret too), defence (you
ask), the race and noisy-answer mode lives here once; a `Channel` renders the events, as prose for
a person (`channels.TextChannel`) or as one JSON object per line for a program
(`channels.JsonChannel`, the protocol documented in the README and `protocol.schema.json`).
Standard library only: the candidates are loaded (NumPy) at the first answer, noisy mode loads the engine
when it starts. The walker is a tree's (`walker.Walker`) or live play's (`live.LiveWalker`).

Commands, in every mode where they apply: an answer in any notation (`rules.read_answer_text`),
a question (a code), `undo`, `correct I ANSWER`, `noisy [Q]`, `help`, `quit` (or `q`); advice from the exact
engine at the position of whoever asks (`hint`, `grade CODE`, `analyse [K]`: `advice`); for a program,
`new [SECRET]` starts the next game, after one or in the middle of one (`serve`, `Games`). Every refusal and
error carries a code from `protocol.CODES`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Protocol, Union, cast

from ..protocol import EXIT_BAD_INPUT, EXIT_CONTRADICTION, EXIT_EOF, EXIT_QUIT, EXIT_SOLVED, PROTOCOL_VERSION
from ..rules import Answer, Code, Game, GameError, feedback
from . import advice
from .walker import Conflict, History, TreeGap, Walker

if TYPE_CHECKING:
    from .candidates import Candidates
    from .live import LiveWalker

# what plays: a tree's walker, or live play's (which asks what a walker does, and has no tree of the whole game)
AnyWalker = Union[Walker, "LiveWalker"]

QUIT = {"q", "quit", "exit"}
HELP = {"help", "h", "?"}
ANSWERING = (
    "an answer to my question in any notation (1,2  1 2  12  1H2B  '1 hit, 2 blows'; the code length alone "
    "for all hits), undo, correct NUMBER ANSWER, noisy [Q] (answers may be wrong), q to quit"
)
ASKING = "a code as your question (e.g. {example}), q to quit"
DEFAULT_NOISE = 0.05
RACE_RULE = (
    "You ask first. If you find my secret, I still get my turn of that round: if I find yours too, the game is a draw."
)


class Channel(Protocol):
    """Where events go and command lines come from."""

    def emit(self, event: dict) -> None: ...

    def read(self) -> str | None: ...  # one line, or None at the end of the input


class End(Exception):
    """The session ends before the game does: quit, end of input, `new` (the game is abandoned for the next), or
    an error (with a code from `protocol.CODES` and a message)."""

    def __init__(self, reason: str, message: str = "", code: str | None = None):
        super().__init__(message or reason)
        self.reason = reason
        self.message = message
        self.code = code


MAX_NUMBER_DIGITS = 9  # an answer's number beyond this many digits (leading zeros aside) names no answer


def typed_number(text: str) -> int | None:
    """A whole number as typed (`3`, `003`), or None if the text is not one; a number too long to name any
    answer comes back as 10**9, which names none."""
    if not (text.isascii() and text.isdigit()):
        return None
    digits = text.lstrip("0") or "0"
    return int(digits) if len(digits) <= MAX_NUMBER_DIGITS else 10**MAX_NUMBER_DIGITS


def shown_number(text: str) -> str:
    """A typed number for a message: without its leading zeros, and cut if it is long."""
    digits = text.lstrip("0") or "0"
    return digits if len(digits) <= 12 else digits[:12] + "..."


def event(name: str, **fields) -> dict:
    return {"event": name, **fields}


def answer_fields(game: Game, answer: Answer) -> dict:
    return {"hits": answer[0], "blows": answer[1]}


class Asker:
    """The computer asking: the tree's questions (or noisy mode's), answers checked as they come."""

    def __init__(self, walker: AnyWalker, secret: Code | None = None, in_race: bool = False):
        self.walker, self.game = walker, walker.game
        self.secret = secret
        self.in_race = in_race
        self.history: History = []
        self._cands: Candidates | None = None  # the candidates (play.candidates), made at the first answer
        self.before: list[int] = []  # secrets that remained before each question of the history
        self.corrected: set[int] = set()
        self.pending: str | None = None  # the question asked and not yet answered
        self.conflict: Conflict | None = None
        self.fixing: int | None = None  # the answer whose correction is awaited (two-step correction)
        self.guesser = None  # noisy mode's posterior

    # -- state ------------------------------------------------------------------------------
    @property
    def win_key(self) -> str:
        return self.game.format_answer(self.game.win)

    @property
    def solved(self) -> bool:
        return bool(self.history) and self.history[-1][1] == self.win_key and self.conflict is None

    @property
    def cands(self):
        """The secrets every answer so far allows (a `candidates.Candidates`)."""
        if self._cands is None:
            self._cands = self.walker.start()
        return self._cands

    @property
    def remaining(self) -> int:
        """How many secrets remain (before the first answer: every code, counted without listing them)."""
        return self.game.count() if self._cands is None else len(self._cands)

    def transcript(self) -> list[dict]:
        """The questions so far with the secrets that remained before each (after every correction)."""
        return [
            {"number": i + 1, "code": q, "answer": a, "candidates": self.before[i], "corrected": i in self.corrected}
            for i, (q, a) in enumerate(self.history)
        ]

    def _recount(self) -> list[dict]:
        """Recompute the candidates after a change to the history; a contradiction event if none is left."""
        cands, self.before = self.walker.start(), []
        for probe, answer in self.walker.parse(self.history):
            self.before.append(len(cands))
            cands = cands.narrow(probe, answer)
        self._cands = cands
        if self.guesser is not None:
            self.guesser = self._new_guesser(self.guesser.q)
            return []
        if not self.cands:
            self.conflict = self.walker.conflict(self.history)
            return [self._contradiction()]
        self.conflict = None
        return []

    def _contradiction(self) -> dict:
        c = self.conflict
        assert c is not None  # made just before
        return event(
            "contradiction",
            core=[i + 1 for i in c.core],
            answers=[{"number": i + 1, "code": self.history[i][0], "answer": self.history[i][1]} for i in c.core],
            repairs=[{"number": i + 1, "candidates": n} for i, n in sorted(c.repairs.items())],
        )

    # -- questions --------------------------------------------------------------------------
    def question(self, chosen: str | None = None) -> dict:
        """Choose the next question (the tree's, noisy mode's, or `chosen`) and return its event."""
        extra: dict = {}
        if chosen is not None:
            guess = chosen
        elif self.guesser is not None:
            try:
                probe = self.guesser.next_question()
            except GameError as e:  # noise 0 and an answer no secret gives: nothing is left to ask about
                raise End("error", str(e), "contradiction") from None
            guess = self.guesser.gt.code_str(probe)
            best, p = self.guesser.map_secret()
            extra = {"most_likely": self.guesser.gt.code_str(best), "probability": round(p, 6)}
        elif not self.history and self._cands is None and hasattr(self.walker, "first_guess"):
            guess = self.walker.first_guess()  # before any answer: no candidates to list yet
        else:
            next_guess = self.walker.next_guess(self.history, self.cands)
            assert next_guess is not None  # asked only while the game is not won
            guess = next_guess
        if self.guesser is None and hasattr(self.walker, "chooser"):
            extra = {"by": self.walker.chooser.last}  # live play: how the question was chosen
        self.pending = guess
        code = self.game.read_code(guess)
        may_be = True if self._cands is None else code in self._cands  # every code may be it before any answer
        return event(
            "question",
            number=len(self.history) + 1,
            code=guess,
            candidates=self.remaining,
            may_be_secret=may_be,
            **extra,
        )

    def expecting(self) -> dict:
        """The `await` event: what input the computer needs now."""
        if self.fixing is not None:
            return event("await", input="correction", number=self.fixing + 1, code=self.history[self.fixing][0])
        if self.conflict is not None:
            return event("await", input="repair")
        return event("await", input="answer", number=len(self.history) + 1, code=self.pending)

    # -- input ------------------------------------------------------------------------------
    def handle(self, line: str) -> list[dict]:
        """Events for one command line while the computer waits for an answer or a repair."""
        text = line.strip()
        low = text.lower()
        words = low.split()
        if low in QUIT:
            raise End("quit")
        if low in HELP:
            return [event("help", commands=ANSWERING)]
        if low == "undo":
            return self.undo()
        if words and words[0] == "correct":
            parts = text.split(None, 2)
            number = typed_number(parts[1]) if len(parts) == 3 else None
            if number is None:
                return [refused(text, "write correct NUMBER ANSWER, e.g. correct 1 0,3", "bad_command")]
            if not 1 <= number <= len(self.history):
                return [self._no_such_answer(text, parts[1])]
            return self.correct(number - 1, parts[2], text)
        if low == "n" or (words and words[0] == "noisy"):
            return self.to_noisy(words[1] if len(words) > 1 else None)
        if words and words[0] in advice.ADVICE_COMMANDS:
            return self.advise(text)
        if self.fixing is not None:
            i, self.fixing = self.fixing, None
            return self.correct(i, text)
        if self.conflict is not None:
            number = typed_number(text)
            if number is None:
                return [
                    refused(
                        text,
                        f"your answers contradict each other: type a number from 1 to "
                        f"{len(self.history)} to correct that answer, correct NUMBER ANSWER, undo, "
                        f"n (noisy mode) or q",
                        "contradiction",
                    )
                ]
            if not 1 <= number <= len(self.history):
                return [self._no_such_answer(text, text)]
            self.fixing = number - 1
            return []
        try:
            answer = self.game.parse_answer(text)
        except GameError as e:
            return [refused(text, str(e), "bad_answer")]
        return self.record(answer, "you")

    def _no_such_answer(self, text: str, number: str) -> dict:
        return refused(
            text, f"there is no answer {shown_number(number)} (answers 1 to {len(self.history)})", "no_such_answer"
        )

    def advise(self, text: str) -> list[dict]:
        """An advice command at the position of the answers so far (not in noisy mode, nor while they conflict)."""
        if self.guesser is not None:
            return [refused(text, "no advice in noisy-answer mode: the answers may be wrong", "unavailable")]
        if self.conflict is not None:
            return [refused(text, "your answers contradict each other: correct one first", "contradiction")]
        tree = getattr(self.walker, "tree_option", None)  # a tree's walker (live play's has none)
        return (
            advice.command(
                advice.advisor_for(self.game),
                list(self.history),
                text,
                len(self.history) + 1,
                (lambda: tree(self.history, self.cands)) if tree else None,
            )
            or []
        )

    def record(self, answer: Answer, source: str) -> list[dict]:
        """The answer to the pending question."""
        question, self.pending = self.pending, None
        assert question is not None  # an answer comes to a question asked
        key = self.game.format_answer(answer)
        self.history.append((question, key))
        probe = self.game.read_code(question)
        self.before.append(len(self.cands))
        self._cands = self.cands.narrow(probe, answer)
        events = [
            event(
                "answer",
                number=len(self.history),
                code=question,
                **answer_fields(self.game, answer),
                candidates=len(self._cands),
                source=source,
            )
        ]
        if self.guesser is not None:
            self.guesser.update(self.guesser.gt.index(probe), answer)
        elif not self.cands:
            self.conflict = self.walker.conflict(self.history)
            events.append(self._contradiction())
        return events

    def undo(self) -> list[dict]:
        if self.in_race:
            return [refused("undo", "there is no undo in a race: use correct NUMBER ANSWER", "unavailable")]
        if not self.history:
            return [refused("undo", "there is no answer to undo", "unavailable")]
        question, answer = self.history.pop()
        self.before.pop()
        self.corrected.discard(len(self.history))
        self.pending, self.fixing = None, None
        events = self._recount()
        return [
            event("undone", number=len(self.history) + 1, code=question, answer=answer, candidates=len(self.cands))
        ] + events

    def correct(self, i: int, text: str, line: str | None = None) -> list[dict]:
        """Answer i (from 0, an answer given) was `text` (typed on `line`, the whole command, if not alone)."""
        try:
            answer = self.game.parse_answer(text)
        except GameError as e:
            return [refused(line or text, str(e), "bad_answer")]
        question = self.history[i][0]
        key = self.game.format_answer(answer)
        self.history[i] = (question, key)
        self.corrected.add(i)
        self.pending = None  # the question awaiting its answer was chosen from the old one: choose again
        if key == self.win_key:  # the game ended at that question
            del self.history[i + 1 :]
            del self.before[i + 1 :]
        events = self._recount()
        return [
            event(
                "corrected", number=i + 1, code=question, **answer_fields(self.game, answer), candidates=len(self.cands)
            )
        ] + events

    def to_noisy(self, q_text: str | None) -> list[dict]:
        if self.in_race:
            return [refused("noisy", "there is no noisy-answer mode in a race", "unavailable")]
        if self.guesser is not None:
            return [refused("noisy", "noisy-answer mode is already on", "unavailable")]
        try:
            q = DEFAULT_NOISE if q_text is None else float(q_text[:20])
        except ValueError:
            return [refused(f"noisy {q_text}", "the noise must be a number in [0, 1), e.g. noisy 0.05", "bad_command")]
        if not 0.0 <= q < 1.0:
            return [refused(f"noisy {q_text}", "the noise must be in [0, 1)", "bad_command")]
        try:
            guesser = self._new_guesser(q)
        except GameError as e:
            return [refused(f"noisy {q_text or ''}".strip(), str(e), "unavailable")]
        try:
            guesser.posterior()  # with noise 0, answers that already contradict each other leave no secret
        except GameError as e:
            return [refused(f"noisy {q_text or ''}".strip(), str(e), "contradiction")]
        self.guesser = guesser
        self.conflict, self.fixing, self.pending = None, None, None  # the next question is noisy mode's
        return [event("noisy", probability=q)]

    def _new_guesser(self, q: float):
        from .noisy import NoisyGuesser  # loads NumPy and the feedback table, only now

        guesser = NoisyGuesser(self.game, q)
        for question, answer in self.history:
            guesser.update(guesser.gt.index(self.game.read_code(question)), self.game.parse_answer(answer))
        return guesser

    # -- a turn -----------------------------------------------------------------------------
    def play_turn(self, channel: Channel, choose=None) -> None:
        """Ask one question and take input until it is answered and no contradiction is left (or solved).

        `choose()`, if given, picks the question instead of the tree (the race's adaptive player)."""
        answered = False
        while not self.solved:
            if self.conflict is None and self.fixing is None:
                if answered and self.pending is None:
                    return
                if self.pending is None:
                    channel.emit(self.question(choose() if choose else None))
                assert self.pending is not None  # the question just asked, or the one still pending
                if self.secret is not None:
                    for e in self.record(feedback(self.secret, self.game.read_code(self.pending)), "secret"):
                        channel.emit(e)
                    answered = True
                    continue
            channel.emit(self.expecting())
            if not self.history:  # the first question is out: ready the rest while its answer is awaited
                self.walker.warm()
            line = channel.read()
            if line is None:
                raise End("eof")
            for e in self.handle(line):
                if e["event"] in ("answer", "undone"):
                    answered = e["event"] == "answer"  # after an undo the turn asks again
                channel.emit(e)

    def end_status(self, end: End) -> int:
        return EXIT_CONTRADICTION if self.conflict is not None and end.reason != "error" else end_status(end)


def end_status(end: End) -> int:
    """The exit status of a game that ended before it was won."""
    if end.reason == "error":
        return EXIT_CONTRADICTION if end.code == "contradiction" else EXIT_BAD_INPUT
    return EXIT_EOF if end.reason == "eof" else EXIT_QUIT  # quit, or new: the game abandoned


def refused(text: str, reason: str, code: str) -> dict:
    """The `refused` event: the input line (cut), why in words, and the code (`protocol.CODES`)."""
    return event("refused", input=text[:80], reason=reason, code=code)


def _ready(mode: str, game: Game, walker: AnyWalker | None, tree: str | None) -> dict:
    objective = getattr(walker, "objective", None) or (walker.doc.objective if walker and walker.doc else None)
    return event(
        "ready",
        protocol=PROTOCOL_VERSION,
        mode=mode,
        game=game.spec,
        secrets=game.count(),
        tree=tree,
        objective=objective,
    )


class Games:
    """A channel for many games in one process (the protocol): `new [SECRET]`, read at any point, ends the game in
    progress (its `end` has reason `new`) and `serve` starts the next one, with that secret if given."""

    def __init__(self, channel: Channel, game: Game):
        self.channel, self.game = channel, game
        self.next_secret: tuple[Code | None] | None = None  # set by `new`: the next game's secret (or None)
        self.waiting: dict | None = None  # the last `await`, put again after a refused `new`

    def emit(self, e: dict) -> None:
        if e["event"] == "await":
            self.waiting = e
        self.channel.emit(e)

    def read(self) -> str | None:
        while True:
            line = self.channel.read()
            words = line.split() if line is not None else []
            if line is None or not words or words[0].lower() != "new":
                return line
            try:
                if len(words) > 2:
                    self.emit(refused(line, "write new, or new SECRET", "bad_command"))
                else:
                    self.next_secret = (self.game.parse_code(words[1]) if len(words) == 2 else None,)
                    raise End("new")
            except GameError as e:
                self.emit(refused(line, str(e), "bad_code"))
            if self.waiting is not None:  # wait for the same input again
                self.emit(self.waiting)


def serve(channel: Games, play: Callable[[Code | None], int], secret: Code | None) -> int:
    """Play games until the input ends: `new [SECRET]` after a game, or during one, starts another.

    The exit status is that of the last game (0 when it was solved or decided).
    """
    status = play(secret)
    while True:
        if channel.next_secret is not None:
            (secret,), channel.next_secret = channel.next_secret, None
            status = play(secret)
            continue
        if status != EXIT_SOLVED:
            return status
        channel.emit(event("await", input="new"))
        try:
            line = channel.read()
        except End as e:
            if e.reason == "new":
                continue
            return _stopped(channel, e, end_status(e))
        if line is None or line.strip().lower() in QUIT:
            return status
        channel.emit(refused(line, "the game is over: type new [SECRET] or quit", "game_over"))


def _finish(channel: Channel, reason: str, status: int, message: str = "", code: str | None = None) -> int:
    extra = {"message": message, "code": code} if message else {}
    channel.emit(event("end", reason=reason, exit=status, **extra))
    return status


def failed_to_start(channel: Channel, message: str) -> int:
    """The player could not start (bad options, a missing tree): an error and an end, with no ready before them."""
    return _stopped(channel, End("error", message, "startup"), EXIT_BAD_INPUT)


def _stopped(channel: Channel, end: End, status: int) -> int:
    """A game that ended before it was won: an error says why first, then the `end`."""
    if end.reason == "error":
        channel.emit(event("error", message=end.message, code=end.code))
        return _finish(channel, "error", status, end.message, end.code)
    return _finish(channel, end.reason, status)


def offence(
    walker: AnyWalker, channel: Channel, secret: Code | None = None, noise: float | None = None, tree: str | None = None
) -> int:
    """The computer asks from the tree; a person answers, or the given secret does (auto mode)."""
    me = Asker(walker, secret)
    channel.emit(
        _ready("auto" if secret is not None else "noisy" if noise is not None else "offence", walker.game, walker, tree)
    )
    try:
        if noise is not None:
            for e in me.to_noisy(str(noise)):
                channel.emit(e)
        while True:
            me.play_turn(channel)
            if me.solved:
                channel.emit(
                    event("solved", by="me", code=me.history[-1][0], questions=len(me.history), history=me.transcript())
                )
                return _finish(channel, "solved", EXIT_SOLVED)
    except End as e:
        return _stopped(channel, e, me.end_status(e))
    except TreeGap as e:
        return _stopped(channel, End("error", str(e), "tree_gap"), EXIT_BAD_INPUT)


def _read_question(game: Game, channel: Channel, number: int, history: History | None = None) -> Code:
    """The person's next question (a code), refusing what is not a code of the game; advice commands are answered
    at the position of `history` (the person's questions and my answers)."""
    while True:
        channel.emit(event("await", input="question", number=number))
        line = channel.read()
        if line is None:
            raise End("eof")
        text = line.strip()
        if text.lower() in QUIT:
            raise End("quit")
        if text.lower() in HELP:
            channel.emit(event("help", commands=ASKING.format(example=game.format_code(game.code_at(0)))))
            continue
        events = None if history is None else advice.command(advice.advisor_for(game), history, text, number)
        if events is not None:
            for e in events:
                channel.emit(e)
            continue
        try:
            return game.parse_code(text)
        except GameError as e:
            channel.emit(refused(text, str(e), "bad_code"))


def defence(game: Game, channel: Channel, secret: Code, coach: bool = False) -> int:
    """The computer holds `secret` and answers the person's questions; with `coach`, each question is graded
    against the best one at its position (a `grade` event after its answer)."""
    channel.emit(_ready("defence", game, None, None))
    asked: list[dict] = []
    coach = coach and game.count() <= advice.COACH_MAX_CODES
    if coach:
        advice.advisor_for(game).preload()
    try:
        while True:
            history = [(a["code"], a["answer"]) for a in asked]
            probe = _read_question(game, channel, len(asked) + 1, history)
            answer = feedback(secret, probe)
            asked.append(
                {"number": len(asked) + 1, "code": game.format_code(probe), "answer": game.format_answer(answer)}
            )
            channel.emit(
                event(
                    "answer_to_your_question",
                    number=len(asked),
                    code=game.format_code(probe),
                    **answer_fields(game, answer),
                )
            )
            if coach:
                channel.emit(
                    event(
                        "grade",
                        number=len(asked),
                        code=game.format_code(probe),
                        **advice.advisor_for(game).grade(history, game.format_code(probe)),
                    )
                )
            if answer == game.win:
                channel.emit(
                    event("solved", by="you", code=game.format_code(secret), questions=len(asked), history=asked)
                )
                return _finish(channel, "solved", EXIT_SOLVED)
    except End as e:
        return _stopped(channel, e, end_status(e))


def race(walker: AnyWalker, channel: Channel, secret: Code, tree: str | None = None, model: str = "tree") -> int:
    """Numeron: both hold a secret and ask in turn; the person asks first, the computer gets the last word.

    Each of the computer's questions is chosen for its chance to win the race (`race.AdaptiveRacer`),
    from what both sides know: it gambles on a candidate when the person is close, plays the tree when
    it is ahead.
    """
    from .race import AdaptiveRacer

    game = walker.game
    mine = secret
    me = Asker(walker, in_race=True)
    if hasattr(walker, "chooser"):  # live play: no tree to model the race with
        from .live import LiveRacer

        racer: LiveRacer | AdaptiveRacer = LiveRacer(cast("LiveWalker", walker))
    else:
        racer = AdaptiveRacer(cast(Walker, walker), model)
    their_cands = walker.start()  # what the person may still think my secret is
    asked: list[dict] = []
    channel.emit(_ready("race", game, walker, tree))
    try:
        for round_number in range(1, 10 * game.length + 50):
            probe = _read_question(game, channel, round_number, [(a["code"], a["answer"]) for a in asked])
            answer = feedback(mine, probe)
            their_cands = their_cands.narrow(probe, answer)
            asked.append(
                {"number": round_number, "code": game.format_code(probe), "answer": game.format_answer(answer)}
            )
            channel.emit(
                event(
                    "answer_to_your_question",
                    number=round_number,
                    code=game.format_code(probe),
                    **answer_fields(game, answer),
                )
            )
            person_won = answer == game.win
            their_history = [(a["code"], a["answer"]) for a in asked]
            me.play_turn(channel, lambda: racer.choose(me.history, me.cands, their_history, their_cands, person_won))
            computer_won = me.solved
            result = None
            if person_won or computer_won:
                result = "draw" if person_won and computer_won else "you" if person_won else "me"
            channel.emit(
                event(
                    "race",
                    round=round_number,
                    your_questions=round_number,
                    my_questions=len(me.history),
                    your_candidates=len(their_cands),
                    my_candidates=len(me.cands),
                    result=result,
                    **({"my_secret": game.format_code(mine)} if result else {}),
                )
            )
            if result:
                channel.emit(
                    event(
                        "solved",
                        by=result,
                        code=game.format_code(mine) if person_won else me.history[-1][0],
                        questions=round_number,
                        history=asked,
                        my_history=me.transcript(),
                    )
                )
                return _finish(channel, "solved", EXIT_SOLVED)
        return _stopped(channel, End("error", "the race did not end", "internal"), EXIT_BAD_INPUT)
    except End as e:
        return _stopped(channel, e, me.end_status(e))
    except TreeGap as e:
        return _stopped(channel, End("error", str(e), "tree_gap"), EXIT_BAD_INPUT)
