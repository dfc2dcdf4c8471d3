"""Drive `strategy play --protocol` from Python: start a player process and exchange typed events.

Standard library only, so a bot, a GUI or a referee can use it without the engine:

    from strategy.protocol import Player

    with Player.start("bulls:4x10") as me:
        question = me.next("question")              # Event(question, code='0123', candidates=5040, ...)
        events = me.answer(1, 2)                     # everything up to the player's next await
        ...

Each line the player writes is one JSON object (documented in the README and in
`strategy/play/protocol.schema.json`); an `Event` gives its fields as attributes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import IO, Iterator, Sequence

PROTOCOL_VERSION = 1
# how `strategy play` ends (its exit status, and the `exit` field of the protocol's `end` event)
EXIT_SOLVED = 0  # the game ended: solved, or the race was decided
EXIT_BAD_INPUT = 2  # bad options or files, a tree that does not cover the answers
EXIT_QUIT = 3
EXIT_EOF = 4
EXIT_CONTRADICTION = 5  # the input ended (or quit) while the answers contradicted each other
EXIT_HANGUP = 129  # a signal stopped the player: 128 + its number (SIGHUP, SIGINT, SIGTERM)
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
# The `code` of every `refused` and `error` event (and of an `end` that carries a message): what went wrong, for
# programs; the free-text `reason` or `message` beside it is for people and may change between versions.
CODES = {
    "bad_answer": "an answer that cannot be read (a word it does not know, a sign, a decimal point, an ambiguous "
    "notation), or that no secret gives in this game",
    "bad_code": "a code that is not one of this game's: a question, the secret of `new`, or what `grade` grades",
    "bad_command": "a command written wrongly: `correct NUMBER ANSWER`, `noisy [Q]` with Q in [0, 1), `grade CODE`, "
    "`analyse [K]` with K from 1",
    "no_such_answer": "`correct` or a repair names an answer number that was not given",
    "unavailable": "a command that does not apply now: `undo` with nothing to undo, `undo` or `noisy` in a race, "
    "`noisy` twice, or on a game too large for its table, advice in noisy-answer mode",
    "contradiction": "refused: the answers contradict each other, and only a repair is taken; error: in "
    "noisy-answer mode with noise 0, no secret agrees with the answers (exit 5)",
    "game_over": "the game is over: only `new [SECRET]` or `quit` is taken",
    "tree_gap": "the tree has no question for the answers given (exit 2)",
    "bad_input_encoding": "an input line that is not a line of text: invalid UTF-8, a control character, or more "
    "than 65,536 bytes (exit 2)",
    "startup": "the player could not start: a bad option, a missing or invalid tree (exit 2; no `ready`)",
    "internal": "the player broke its own rules: a bug to report (exit 2)",
}


class ProtocolError(Exception):
    """The player process broke the protocol (or ended) where an event was expected; `code` is the `error`
    event's code when the player said why (`startup` when it could not start)."""

    def __init__(self, message: str, code: str | None = None):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Event:
    """One line from the player: `kind` is its `event` field; the other fields are attributes."""

    kind: str
    fields: dict = field(default_factory=dict)

    def __getattr__(self, name: str):
        try:
            return self.fields[name]
        except KeyError:
            raise AttributeError(f"{self.kind} event has no field {name!r}") from None

    @classmethod
    def parse(cls, line: str) -> "Event":
        try:
            obj = json.loads(line)
        except ValueError:
            raise ProtocolError(f"not a JSON line: {line[:200]!r}") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("event"), str):
            raise ProtocolError(f"not an event: {line[:200]!r}")
        kind = obj.pop("event")
        return cls(kind, obj)


class Player:
    """A `strategy play --protocol` process: send command lines, read events."""

    def __init__(self, args: Sequence[str], python: str = sys.executable, env: dict | None = None):
        self.args = list(args)
        self.process = subprocess.Popen(
            [python, "-m", "strategy", "play", *self.args, "--protocol"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
            env=env if env is not None else dict(os.environ),
        )
        self.log: list[Event] = []  # every event read, in order
        first = self.read()
        if first.kind == "error":  # it could not start: the error, an end, and the exit
            self.close()
            raise ProtocolError(
                f"the player could not start (status {self.process.returncode}): {first.message}",
                first.fields.get("code"),
            )
        self.ready = first if first.kind == "ready" else self.next("ready")
        if self.ready.protocol != PROTOCOL_VERSION:
            raise ProtocolError(f"the player speaks protocol {self.ready.protocol}, this client {PROTOCOL_VERSION}")

    @classmethod
    def start(cls, *args: str, **kwargs) -> "Player":
        """Start a player: the arguments are those of `strategy play` (a tree, --defence --game G, --race, ...)."""
        return cls(args, **kwargs)

    def __enter__(self) -> "Player":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # the three pipes of the process (all made by Popen with PIPE above, so never None)
    @property
    def _stdin(self) -> IO[str]:
        assert self.process.stdin is not None
        return self.process.stdin

    @property
    def _stdout(self) -> IO[str]:
        assert self.process.stdout is not None
        return self.process.stdout

    @property
    def _stderr(self) -> IO[str]:
        assert self.process.stderr is not None
        return self.process.stderr

    # -- reading ----------------------------------------------------------------------------------
    def read(self) -> Event:
        """The next event; ProtocolError if the process ended instead."""
        line = self._stdout.readline()
        if not line:  # the player ended: its standard error, read to its end, says why
            err = self._stderr.read() if not self._stderr.closed else ""
            raise ProtocolError(f"the player ended (status {self.process.wait()}): {err.strip()[:300]}")
        event = Event.parse(line)
        self.log.append(event)
        return event

    def events(self) -> Iterator[Event]:
        """Events until the player's next `await` (included), or its last (an `end` it exits after)."""
        while True:
            event = self.read()
            yield event
            if event.kind == "await" or (event.kind == "end" and event.exit != EXIT_SOLVED):
                return

    def until_await(self) -> list[Event]:
        return list(self.events())

    def next(self, kind: str) -> Event:
        """Read until an event of this kind (ProtocolError if an `await` or `end` comes first)."""
        while True:
            event = self.read()
            if event.kind == kind:
                return event
            if event.kind in ("await", "end") and kind not in ("await", "end"):
                raise ProtocolError(f"expected {kind}, got {event.kind} {event.fields}")

    # -- commands ---------------------------------------------------------------------------------
    def send(self, line: str) -> list[Event]:
        """Send one command line; the events it caused, up to the next `await`."""
        self._stdin.write(line + "\n")
        self._stdin.flush()
        return self.until_await()

    def answer(self, hits: int, blows: int) -> list[Event]:
        return self.send(f"{hits},{blows}")

    def ask(self, code: str) -> list[Event]:
        return self.send(code)

    def correct(self, number: int, hits: int, blows: int) -> list[Event]:
        return self.send(f"correct {number} {hits},{blows}")

    def undo(self) -> list[Event]:
        return self.send("undo")

    def noisy(self, probability: float | None = None) -> list[Event]:
        return self.send("noisy" if probability is None else f"noisy {probability}")

    def hint(self) -> Event:
        """The best question from the position of whoever asks (the `hint` event)."""
        return self._reply("hint", "hint")

    def grade(self, code: str) -> Event:
        """A question's value against the best one's (the `grade` event)."""
        return self._reply(f"grade {code}", "grade")

    def analyse(self, top: int | None = None) -> Event:
        """Every question of the position, or the `top` best, valued (the `analysis` event)."""
        return self._reply("analyse" if top is None else f"analyse {top}", "analysis")

    def _reply(self, line: str, kind: str) -> Event:
        events = self.send(line)
        found = [e for e in events if e.kind == kind]
        if not found:
            raise ProtocolError(f"expected {kind}, got {[(e.kind, e.fields) for e in events][:3]}")
        return found[0]

    def new(self, secret: str | None = None) -> list[Event]:
        """Start the next game (after an `await` for `new`)."""
        return self.send("new" if secret is None else f"new {secret}")

    def quit(self) -> int:
        """Quit and return the exit status (that of the game's end if the player has already exited)."""
        if not self._stdin.closed:
            try:
                self._stdin.write("quit\n")
                self._stdin.flush()
            except BrokenPipeError:
                pass
        return self.close()

    def close(self) -> int:
        """End the input (the player exits with the status of its last game) and wait for it; again, after a
        `quit` or an earlier close, only the status."""
        if self.process.stdin and not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except BrokenPipeError:
                pass
        if not self._stdout.closed:
            for line in self._stdout:  # the remaining events (an `end`, perhaps)
                self.log.append(Event.parse(line))
            self._stdout.close()
            self._stderr.close()
        return self.process.wait()

    @property
    def returncode(self) -> int | None:
        return self.process.poll()
