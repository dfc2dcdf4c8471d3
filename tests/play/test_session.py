"""The play session in process, through its Channel seam: the game logic of every mode, as a person's channel
(`TextChannel`, prose) and a program's (`JsonChannel`, the protocol) see it, without a terminal or a process."""
from __future__ import annotations

import io

import orjson
import pytest

from strategy.play import session
from strategy.play.channels import JsonChannel, TextChannel, remain
from strategy.play.walker import Walker
from strategy.protocol import EXIT_QUIT, EXIT_SOLVED
from strategy.rules import feedback, parse_game

from ..conftest import TREES


@pytest.fixture(scope="module")
def walker() -> Walker:
    return Walker.load(TREES / "bulls-4x10-total.json")


def scripted(game, lines: list[str]) -> tuple[TextChannel, list[str]]:
    """A person's channel that types `lines` in turn and keeps what it is told."""
    said: list[str] = []
    typed = iter(lines)

    def ask(prompt: str) -> str:
        said.append(prompt)
        try:
            return next(typed)
        except StopIteration:
            raise EOFError from None

    return TextChannel(game, ask=ask, say=said.append), said


def test_help_lists_the_commands_and_the_game_goes_on(walker):
    channel, said = scripted(walker.game, ["help", "q"])
    assert session.offence(walker, channel) == EXIT_QUIT
    text = "\n".join(said)
    assert "undo, correct NUMBER ANSWER, noisy [Q]" in text and text.count("Is your number 0123?") == 1


def test_a_correction_asks_the_pending_question_again(walker):
    """After `correct`, the question still waiting for its answer is put again (it was not, and the prompt alone
    did not say which question it was)."""
    channel, said = scripted(walker.game, ["0,3", "correct 1 0,2", "q"])
    session.offence(walker, channel)
    after = said[[i for i, line in enumerate(said) if line.startswith("Corrected;")][0]:]
    assert after[1] == "Is your number 1435?"


def test_a_secret_plays_itself_to_the_end_in_the_protocol(walker):
    out = io.StringIO()
    code = session.offence(walker, JsonChannel(out=out, inp=io.StringIO("")), walker.game.parse_code("9876"))
    events = [orjson.loads(line) for line in out.getvalue().splitlines()]
    assert code == EXIT_SOLVED and events[-2]["event"] == "solved" and events[-2]["code"] == "9876"


def test_the_protocol_answers_help_with_an_event():
    game = parse_game("bulls:3x6")
    out = io.StringIO()
    session.defence(game, JsonChannel(out=out, inp=io.StringIO("help\n012\nq\n")), game.parse_code("012"))
    events = [orjson.loads(line) for line in out.getvalue().splitlines()]
    helped = [e for e in events if e["event"] == "help"]
    assert helped and "a code as your question" in helped[0]["commands"]
    assert any(e["event"] == "solved" for e in events)


def test_defence_answers_with_the_rules():
    game = parse_game("bulls:3x6")
    secret = game.parse_code("254")
    channel, said = scripted(game, ["012", "345", "254"])
    assert session.defence(game, channel, secret) == EXIT_SOLVED
    assert any(game.describe_answer(feedback(secret, game.parse_code("012"))) in line for line in said)


def test_the_count_of_secrets_left_is_grammatical():
    assert remain(1) == "1 secret remains" and remain(2) == "2 secrets remain" and remain(0) == "0 secrets remain"
