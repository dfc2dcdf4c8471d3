"""Where a play session's events go: prose and prompts for a person, or JSON lines for a program.

Standard library and orjson only.
"""

from __future__ import annotations

import re
import sys
from typing import BinaryIO, Callable, TextIO

import orjson

from ..protocol import EXIT_CONTRADICTION
from ..rules import Game
from .advice import advisor_for, grade_lines, hint_lines, table_lines
from .session import RACE_RULE, End

MAX_LINE_BYTES = 65_536  # a longer input line is no command: the protocol ends with an error rather than hold it
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # control characters (a tab aside) in a command line


def not_text(why: str) -> End:
    """The error that ends a game whose input is not text."""
    return End("error", f"the input is not a line of UTF-8 text: {why}", "bad_input_encoding")


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def remain(n: int) -> str:
    """'1 secret remains', '2 secrets remain'."""
    return f"{plural(n, 'secret')} {'remains' if n == 1 else 'remain'}"


def percent(p: float) -> str:
    """A probability for people: 37%, 0.4%, 0.0021%."""
    if p >= 0.01:
        return f"{p:.0%}"
    return f"{p * 100:.2g}%"


class JsonChannel:
    """The protocol: one JSON object per line out, one command per line in, flushed at once. The input is read as
    bytes: a line that is not UTF-8 text (or a control character, or a line too long to be a command) ends the
    game with an error (`bad_input_encoding`), never a crash."""

    def __init__(self, out: TextIO | None = None, inp: BinaryIO | TextIO | None = None):
        self.out = out or sys.stdout
        self.inp = inp or sys.stdin.buffer

    def emit(self, event: dict) -> None:
        self.out.write(orjson.dumps(event).decode() + "\n")
        self.out.flush()

    def read(self) -> str | None:
        raw = self.inp.readline(MAX_LINE_BYTES + 1)
        if isinstance(raw, str):  # a text stream (a test's): its characters, as bytes again
            raw = raw.encode("utf-8", "surrogateescape")
        if not raw:
            return None
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raise not_text(f"a line of more than {MAX_LINE_BYTES:,} bytes")
        try:
            line = raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError:
            raise not_text("invalid UTF-8 bytes") from None
        if _CONTROL.search(line):
            raise not_text("a control character")
        return line


class TextChannel:
    """Prose and prompts for a person at a terminal."""

    def __init__(self, game: Game, ask: Callable[[str], str] = input, say: Callable[[str], None] | None = None):
        self.game = game
        self.ask = ask
        self.say = say or (lambda text: print(text, flush=True))
        self.prompt = ""
        self.mode = ""
        self.shown: str | None = None  # the question last put to the person
        self.pegs = "black, white" if game.name == "mastermind" else "hits, blows"

    def read(self) -> str | None:
        try:
            line = self.ask(self.prompt)
        except EOFError:
            return None
        except UnicodeDecodeError:  # a terminal or file in another encoding than the locale's
            raise not_text("bytes the terminal's encoding cannot read") from None
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:  # bytes the locale could not decode, kept as surrogates
            raise not_text("bytes the terminal's encoding cannot read") from None
        return line

    def emit(self, e: dict) -> None:
        getattr(self, "_" + e["event"])(e)

    # -- events ---------------------------------------------------------------------------------
    def _ready(self, e: dict) -> None:
        self.mode = e["mode"]
        spec, words = e["game"], "black and white" if self.game.name == "mastermind" else "hits and blows"
        if self.mode in ("offence", "noisy"):
            labelled = "1B2W" if self.game.name == "mastermind" else "1H2B"
            self.say(
                f"{spec}: think of a secret and answer {words} (1,2 or 12 or {labelled}; "
                f"{self.game.length} = all {self.pegs.split(',')[0]}); q quits."
            )
        elif self.mode == "defence":
            self.say(
                f"I have a secret of {spec}. Ask codes like {self.game.format_code(self.game.code_at(0))}; "
                "hint gives the best question, grade CODE and analyse [K] the value of questions; q quits."
            )
        elif self.mode == "race":
            self.say(f"Race on {spec}. Think of your secret; I have mine. {RACE_RULE}")

    def _question(self, e: dict) -> None:
        self.shown = e["code"]
        if "most_likely" in e:
            self.say(f"(most likely {e['most_likely']} at {percent(e['probability'])}) Is your number {e['code']}?")
        else:
            self.say(f"(remaining {e['candidates']}) Is your number {e['code']}?")

    def _await(self, e: dict) -> None:
        kind = e["input"]
        if kind == "answer":
            if self.shown != e["code"]:  # a correction or a refusal came between: ask it again
                self.say(f"Is your number {e['code']}?")
                self.shown = e["code"]
            self.prompt = f"[{e['number']}] {self.pegs}: "
        elif kind == "correction":
            self.prompt = f"[{e['number']}] {e['code']} {self.pegs}: "
        elif kind == "repair":
            self.prompt = "Correct which question (number), 'n' for noisy-answer mode, or 'q': "
        else:
            self.prompt = f"[{e['number']}] your question: "

    def _answer(self, e: dict) -> None:
        if e["source"] == "secret":
            self.say(f"[{e['number']}] {self.pegs}: {e['hits']},{e['blows']}")

    def _help(self, e: dict) -> None:
        self.say(f"  type {e['commands']}")

    def _refused(self, e: dict) -> None:
        self.say(f"  {e['reason']}; try again")

    def _contradiction(self, e: dict) -> None:
        self.say("No secret agrees with all your answers. These cannot all be true:")
        repairs = {r["number"]: r["candidates"] for r in e["repairs"]}
        for a in e["answers"]:
            fix = f" (if it was wrong, {remain(repairs[a['number']])})" if a["number"] in repairs else ""
            self.say(f"  [{a['number']}] {a['code']} -> {a['answer']}{fix}")

    def _corrected(self, e: dict) -> None:
        n = e["candidates"]
        self.say(f"Corrected; {remain(n)}.")
        self.shown = None  # the question waiting for its answer is asked again

    def _undone(self, e: dict) -> None:
        n = e["candidates"]
        self.say(f"Undone [{e['number']}] {e['code']} -> {e['answer']}; {remain(n)}.")

    def _noisy(self, e: dict) -> None:
        self.say(f"Noisy-answer mode: each answer may be wrong with probability {e['probability']}.")

    def _answer_to_your_question(self, e: dict) -> None:
        self.say("  " + self.game.describe_answer((e["hits"], e["blows"])))
        if self.mode == "race" and e["hits"] == self.game.length:
            self.say("You found my secret. My last turn:")

    def _race(self, e: dict) -> None:
        result, r = e["result"], e["round"]
        if result == "draw":
            self.say("We both found it: a draw.")
        elif result == "you":
            self.say(f"You win in {plural(r, 'question')}.")
        elif result == "me":
            self.say(f"I win in {plural(r, 'question')}. My secret was {e['my_secret']}.")

    def _solved(self, e: dict) -> None:
        if self.mode == "race":
            self.say(your_table(e["history"], "your questions"))
            self.say(my_table(e["my_history"], "my questions"))
        elif e["by"] == "you":
            self.say(f"Congratulations! You found {e['code']} in {plural(e['questions'], 'question')}.")
            self.say(your_table(e["history"], "history"))
        else:
            self.say(f"Solved in {plural(e['questions'], 'question')}.")
            self.say(my_table(e["history"], "history"))

    def _hint(self, e: dict) -> None:
        for line in hint_lines(e, advisor_for(self.game).seconds):
            self.say(line)

    def _grade(self, e: dict) -> None:
        for line in grade_lines(e):
            self.say("  " + line)

    def _analysis(self, e: dict) -> None:
        for line in table_lines(e, None):
            self.say(line)

    def _error(self, e: dict) -> None:
        print(f"strategy: error: {e['message']}", file=sys.stderr, flush=True)

    def _end(self, e: dict) -> None:
        if e["reason"] in ("quit", "eof"):
            still = " (your answers still contradict each other)" if e["exit"] == EXIT_CONTRADICTION else ""
            self.say(f"bye{still}")


def my_table(rows: list[dict], title: str) -> str:
    lines = [f"===== {title} =====", f"{'#':>3}  {'remaining':>9}  {'question':>8}  answer"]
    for r in rows:
        lines.append(
            f"{r['number']:>3}  {r['candidates']:>9}  {r['code']:>8}  {r['answer']}"
            f"{' (corrected)' if r['corrected'] else ''}"
        )
    return "\n".join(lines)


def your_table(rows: list[dict], title: str) -> str:
    lines = [f"===== {title} =====", f"{'#':>3}  {'question':>8}  answer"]
    for r in rows:
        lines.append(f"{r['number']:>3}  {r['code']:>8}  {r['answer']}")
    return "\n".join(lines)
