"""One game of the player, in every mode, as events out and command lines in.

The logic of offence (the computer asks), auto (it answers for a given secret too), defence (you
ask), the race and noisy-answer mode lives here once; a `Channel` renders the events, as prose for
a person (`channels.TextChannel`) or as one JSON object per line for a program
(`channels.JsonChannel`, the protocol documented in the README and `protocol.schema.json`).
Standard library only: the candidates are loaded (NumPy) at the first answer, noisy mode loads the engine
when it starts. The walker is a tree's (`walker.Walker`) or live play's (`live.LiveWalker`).

Commands, in every mode where they apply: an answer in any notation (`rules.read_answer_text`),
a question (a code), `undo`, `correct I ANSWER`, `noisy [Q]`, `help`, `quit` (or `q`); advice from the exact
engine at the position of whoever asks (`hint`, `grade CODE`, `analyse [K]`: `advice`); after a game,
`new [SECRET]` starts the next one (`serve`).
"""
from __future__ import annotations

from typing import Callable, Protocol

from ..protocol import EXIT_BAD_INPUT, EXIT_CONTRADICTION, EXIT_EOF, EXIT_QUIT, EXIT_SOLVED, PROTOCOL_VERSION
from ..rules import Answer, Code, Game, GameError, feedback
from . import advice
from .walker import Conflict, History, TreeGap, Walker

QUIT = {"q", "quit", "exit"}
HELP = {"help", "h", "?"}
ANSWERING = ("an answer to my question in any notation (1,2  1 2  12  1H2B  '1 hit, 2 blows'; the code length alone "
             "for all hits), undo, correct NUMBER ANSWER, noisy [Q] (answers may be wrong), q to quit")
ASKING = "a code as your question (e.g. {example}), q to quit"
DEFAULT_NOISE = 0.05
RACE_RULE = ("You ask first. If you find my secret, I still get my turn of that round: "
             "if I find yours too, the game is a draw.")


class Channel(Protocol):
    """Where events go and command lines come from."""

    def emit(self, event: dict) -> None: ...

    def read(self) -> str | None: ...  # one line, or None at the end of the input


class End(Exception):
    """The session ends before the game does: quit, end of input, or an error."""

    def __init__(self, reason: str, message: str = ""):
        super().__init__(message or reason)
        self.reason = reason
        self.message = message


def event(name: str, **fields) -> dict:
    return {"event": name, **fields}


def answer_fields(game: Game, answer: Answer) -> dict:
    return {"hits": answer[0], "blows": answer[1]}


class Asker:
    """The computer asking: the tree's questions (or noisy mode's), answers checked as they come."""

    def __init__(self, walker: Walker, secret: Code | None = None, in_race: bool = False):
        self.walker, self.game = walker, walker.game
        self.secret = secret
        self.in_race = in_race
        self.history: History = []
        self._cands = None  # the candidates (play.candidates), made at the first answer
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
        return [{"number": i + 1, "code": q, "answer": a, "candidates": self.before[i], "corrected": i in self.corrected}
                for i, (q, a) in enumerate(self.history)]

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
        return event("contradiction", core=[i + 1 for i in c.core],
                     answers=[{"number": i + 1, "code": self.history[i][0], "answer": self.history[i][1]} for i in c.core],
                     repairs=[{"number": i + 1, "candidates": n} for i, n in sorted(c.repairs.items())])

    # -- questions --------------------------------------------------------------------------
    def question(self, chosen: str | None = None) -> dict:
        """Choose the next question (the tree's, noisy mode's, or `chosen`) and return its event."""
        extra: dict = {}
        if chosen is not None:
            guess = chosen
        elif self.guesser is not None:
            probe = self.guesser.next_question()
            guess = self.guesser.gt.code_str(probe)
            best, p = self.guesser.map_secret()
            extra = {"most_likely": self.guesser.gt.code_str(best), "probability": round(p, 6)}
        elif not self.history and self._cands is None and hasattr(self.walker, "first_guess"):
            guess = self.walker.first_guess()  # before any answer: no candidates to list yet
        else:
            guess = self.walker.next_guess(self.history, self.cands)
        if self.guesser is None and hasattr(self.walker, "chooser"):
            extra = {"by": self.walker.chooser.last}  # live play: how the question was chosen
        self.pending = guess
        code = self.game.read_code(guess)
        may_be = True if self._cands is None else code in self._cands  # every code may be it before any answer
        return event("question", number=len(self.history) + 1, code=guess, candidates=self.remaining,
                     may_be_secret=may_be, **extra)

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
            if len(parts) < 3 or not parts[1].isascii() or not parts[1].isdigit():
                return [refused(text, "write correct NUMBER ANSWER, e.g. correct 1 0,3")]
            return self.correct(int(parts[1][:6]) - 1, parts[2])
        if low == "n" or (words and words[0] == "noisy"):
            return self.to_noisy(words[1] if len(words) > 1 else None)
        if words and words[0] in advice.ADVICE_COMMANDS:
            return self.advise(text)
        if self.fixing is not None:
            i, self.fixing = self.fixing, None
            return self.correct(i, text)
        if self.conflict is not None:
            if text.isascii() and text.isdigit() and 1 <= int(text[:6]) <= len(self.history):
                self.fixing = int(text) - 1
                return []
            return [refused(text, f"your answers contradict each other: type a number from 1 to {len(self.history)} "
                                  f"to correct that answer, correct NUMBER ANSWER, undo, n (noisy mode) or q")]
        try:
            answer = self.game.parse_answer(text)
        except GameError as e:
            return [refused(text, str(e))]
        return self.record(answer, "you")

    def advise(self, text: str) -> list[dict]:
        """An advice command at the position of the answers so far (not in noisy mode, nor while they conflict)."""
        if self.guesser is not None:
            return [refused(text, "no advice in noisy-answer mode: the answers may be wrong")]
        if self.conflict is not None:
            return [refused(text, "your answers contradict each other: correct one first")]
        tree = getattr(self.walker, "tree_option", None)  # a tree's walker (live play's has none)
        return advice.command(advice.advisor_for(self.game), list(self.history), text, len(self.history) + 1,
                              (lambda: tree(self.history, self.cands)) if tree else None) or []

    def record(self, answer: Answer, source: str) -> list[dict]:
        """The answer to the pending question."""
        question, self.pending = self.pending, None
        key = self.game.format_answer(answer)
        self.history.append((question, key))
        probe = self.game.read_code(question)
        self.before.append(len(self.cands))
        self._cands = self.cands.narrow(probe, answer)
        events = [event("answer", number=len(self.history), code=question, **answer_fields(self.game, answer),
                        candidates=len(self._cands), source=source)]
        if self.guesser is not None:
            self.guesser.update(self.guesser.gt.index(probe), answer)
        elif not self.cands:
            self.conflict = self.walker.conflict(self.history)
            events.append(self._contradiction())
        return events

    def undo(self) -> list[dict]:
        if self.in_race:
            return [refused("undo", "there is no undo in a race: use correct NUMBER ANSWER")]
        if not self.history:
            return [refused("undo", "there is no answer to undo")]
        question, answer = self.history.pop()
        self.before.pop()
        self.corrected.discard(len(self.history))
        self.pending, self.fixing = None, None
        events = self._recount()
        return [event("undone", number=len(self.history) + 1, code=question, answer=answer, candidates=len(self.cands))] + events

    def correct(self, i: int, text: str) -> list[dict]:
        if not 0 <= i < len(self.history):
            return [refused(f"correct {i + 1}", f"there is no answer {i + 1} (answers 1 to {len(self.history)})")]
        try:
            answer = self.game.parse_answer(text)
        except GameError as e:
            return [refused(text, str(e))]
        question = self.history[i][0]
        key = self.game.format_answer(answer)
        self.history[i] = (question, key)
        self.corrected.add(i)
        if key == self.win_key:  # the game ended at that question
            del self.history[i + 1:]
            del self.before[i + 1:]
            self.pending = None
        events = self._recount()
        return [event("corrected", number=i + 1, code=question, **answer_fields(self.game, answer),
                      candidates=len(self.cands))] + events

    def to_noisy(self, q_text: str | None) -> list[dict]:
        if self.in_race:
            return [refused("noisy", "there is no noisy-answer mode in a race")]
        if self.guesser is not None:
            return [refused("noisy", "noisy-answer mode is already on")]
        try:
            q = DEFAULT_NOISE if q_text is None else float(q_text[:20])
        except ValueError:
            return [refused(f"noisy {q_text}", "the noise must be a number in [0, 1), e.g. noisy 0.05")]
        if not 0.0 <= q < 1.0:
            return [refused(f"noisy {q_text}", "the noise must be in [0, 1)")]
        try:
            self.guesser = self._new_guesser(q)
        except GameError as e:
            return [refused(f"noisy {q_text or ''}".strip(), str(e))]
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
                if self.secret is not None:
                    for e in self.record(feedback(self.secret, self.game.read_code(self.pending)), "secret"):
                        channel.emit(e)
                    answered = True
                    continue
            channel.emit(self.expecting())
            line = channel.read()
            if line is None:
                raise End("eof")
            for e in self.handle(line):
                if e["event"] in ("answer", "undone"):
                    answered = e["event"] == "answer"  # after an undo the turn asks again
                channel.emit(e)

    def end_status(self, reason: str) -> int:
        if self.conflict is not None:
            return EXIT_CONTRADICTION
        return EXIT_QUIT if reason == "quit" else EXIT_EOF


def refused(text: str, reason: str) -> dict:
    return event("refused", input=text[:80], reason=reason)


def _ready(mode: str, game: Game, walker: Walker | None, tree: str | None) -> dict:
    objective = getattr(walker, "objective", None) or (walker.doc.objective if walker else None)
    return event("ready", protocol=PROTOCOL_VERSION, mode=mode, game=game.spec, secrets=game.count(), tree=tree,
                 objective=objective)


def serve(channel: Channel, game: Game, play: Callable[[Code | None], int], secret: Code | None) -> int:
    """Play games until the input ends: after each finished game, `new [SECRET]` starts another.

    The exit status is that of the last game (0 when it was solved or decided).
    """
    status = play(secret)
    while status == EXIT_SOLVED:
        channel.emit(event("await", input="new"))
        line = channel.read()
        if line is None or line.strip().lower() in QUIT:
            return status
        words = line.split()
        if not words or words[0].lower() != "new" or len(words) > 2:
            channel.emit(refused(line, "the game is over: type new [SECRET] or quit"))
            continue
        try:
            secret = game.parse_code(words[1]) if len(words) == 2 else None
        except GameError as e:
            channel.emit(refused(line, str(e)))
            continue
        status = play(secret)
    return status


def _finish(channel: Channel, reason: str, status: int, message: str = "") -> int:
    channel.emit(event("end", reason=reason, exit=status, **({"message": message} if message else {})))
    return status


def offence(walker: Walker, channel: Channel, secret: Code | None = None, noise: float | None = None,
            tree: str | None = None) -> int:
    """The computer asks from the tree; a person answers, or the given secret does (auto mode)."""
    me = Asker(walker, secret)
    channel.emit(_ready("auto" if secret is not None else "noisy" if noise is not None else "offence",
                        walker.game, walker, tree))
    try:
        if noise is not None:
            for e in me.to_noisy(str(noise)):
                channel.emit(e)
        while True:
            me.play_turn(channel)
            if me.solved:
                channel.emit(event("solved", by="me", code=me.history[-1][0], questions=len(me.history),
                                   history=me.transcript()))
                return _finish(channel, "solved", EXIT_SOLVED)
    except End as e:
        return _finish(channel, e.reason, me.end_status(e.reason))
    except TreeGap as e:
        channel.emit(event("error", message=str(e)))
        return _finish(channel, "error", EXIT_BAD_INPUT, str(e))


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
            channel.emit(refused(text, str(e)))


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
            asked.append({"number": len(asked) + 1, "code": game.format_code(probe), "answer": game.format_answer(answer)})
            channel.emit(event("answer_to_your_question", number=len(asked), code=game.format_code(probe),
                               **answer_fields(game, answer)))
            if coach:
                channel.emit(event("grade", number=len(asked), code=game.format_code(probe),
                                   **advice.advisor_for(game).grade(history, game.format_code(probe))))
            if answer == game.win:
                channel.emit(event("solved", by="you", code=game.format_code(secret), questions=len(asked), history=asked))
                return _finish(channel, "solved", EXIT_SOLVED)
    except End as e:
        return _finish(channel, e.reason, EXIT_QUIT if e.reason == "quit" else EXIT_EOF)


def race(walker: Walker, channel: Channel, secret: Code, tree: str | None = None, model: str = "tree") -> int:
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

        racer = LiveRacer(walker)
    else:
        racer = AdaptiveRacer(walker, model)
    their_cands = walker.start()  # what the person may still think my secret is
    asked: list[dict] = []
    channel.emit(_ready("race", game, walker, tree))
    try:
        for round_number in range(1, 10 * game.length + 50):
            probe = _read_question(game, channel, round_number, [(a["code"], a["answer"]) for a in asked])
            answer = feedback(mine, probe)
            their_cands = their_cands.narrow(probe, answer)
            asked.append({"number": round_number, "code": game.format_code(probe), "answer": game.format_answer(answer)})
            channel.emit(event("answer_to_your_question", number=round_number, code=game.format_code(probe),
                               **answer_fields(game, answer)))
            person_won = answer == game.win
            their_history = [(a["code"], a["answer"]) for a in asked]
            me.play_turn(channel, lambda: racer.choose(me.history, me.cands, their_history, their_cands, person_won))
            computer_won = me.solved
            result = None
            if person_won or computer_won:
                result = "draw" if person_won and computer_won else "you" if person_won else "me"
            channel.emit(event("race", round=round_number, your_questions=round_number, my_questions=len(me.history),
                               your_candidates=len(their_cands), my_candidates=len(me.cands), result=result,
                               **({"my_secret": game.format_code(mine)} if result else {})))
            if result:
                channel.emit(event("solved", by=result, code=game.format_code(mine) if person_won else me.history[-1][0],
                                   questions=round_number, history=asked, my_history=me.transcript()))
                return _finish(channel, "solved", EXIT_SOLVED)
        return _finish(channel, "error", EXIT_BAD_INPUT, "the race did not end")
    except End as e:
        return _finish(channel, e.reason, me.end_status(e.reason))
    except TreeGap as e:
        channel.emit(event("error", message=str(e)))
        return _finish(channel, "error", EXIT_BAD_INPUT, str(e))
