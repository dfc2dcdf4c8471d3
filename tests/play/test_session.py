"""The play session in process, through its Channel seam: the game logic of every mode, as a person's channel
(`TextChannel`, prose) and a program's (`JsonChannel`, the protocol) see it, without a terminal or a process."""

from __future__ import annotations

import io

import orjson
import pytest

from strategy.play import session
from strategy.play.channels import JsonChannel, TextChannel, remain
from strategy.play.walker import Walker
from strategy.protocol import EXIT_BAD_INPUT, EXIT_CONTRADICTION, EXIT_QUIT, EXIT_SOLVED
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


def test_a_correction_chooses_the_next_question_again(walker):
    """After `correct`, the question waiting for its answer is chosen again from the corrected answers and put (it
    was first not put at all, then put unchanged: 1435, the tree's question after 0,3, asked after 0,2)."""
    channel, said = scripted(walker.game, ["0,3", "correct 1 0,2", "q"])
    session.offence(walker, channel)
    after = said[[i for i, line in enumerate(said) if line.startswith("Corrected;")][0] :]
    assert walker.next_guess([("0123", "0,3")]) == "1435" and walker.next_guess([("0123", "0,2")]) == "1245"
    assert after[1].endswith("Is your number 1245?"), after


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


# -- the protocol's hostile and odd input (issue 55) ------------------------------------------------------------


def protocol(run, lines: bytes | list[str]) -> tuple[int, list[dict]]:
    """Run a session (`run(channel)`) on a program's channel fed `lines`; its status and events."""
    out = io.StringIO()
    data = lines if isinstance(lines, bytes) else "".join(line + "\n" for line in lines).encode()
    status = run(JsonChannel(out=out, inp=io.BytesIO(data)))
    return status, [orjson.loads(line) for line in out.getvalue().splitlines()]


def replies(events: list[dict]) -> list[dict]:
    """The events that answer a line: everything but the awaits."""
    return [e for e in events if e["event"] != "await"]


@pytest.mark.parametrize(
    "data",
    [b"\xff\xfe\n", b"0,3\xc3\n", b"0,\x003\n", b"\x1b[A\n", b"1" * 70_000 + b"\n"],
    ids=["latin-1", "cut-utf8", "nul", "escape", "70000-bytes"],
)
def test_input_that_is_not_text_ends_the_game_with_an_error_event(walker, data):
    status, events = protocol(lambda ch: session.offence(walker, ch), data)
    assert [e["event"] for e in events][-2:] == ["error", "end"], events
    assert events[-2]["code"] == events[-1]["code"] == "bad_input_encoding" and "UTF-8" in events[-2]["message"]
    assert events[-1]["reason"] == "error" and status == events[-1]["exit"] == EXIT_BAD_INPUT


def test_a_person_whose_input_is_not_in_the_terminals_encoding_gets_one_line(walker, capsys):
    def ask(prompt: str) -> str:
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    assert session.offence(walker, TextChannel(walker.game, ask=ask, say=lambda text: None)) == EXIT_BAD_INPUT
    assert (
        capsys.readouterr().err.strip() == "strategy: error: the input is not a line of UTF-8 text: bytes the "
        "terminal's encoding cannot read"
    )


@pytest.mark.parametrize("text", ["-1,2", "1.0", "0,-3", "1H-2B", "0.3"])
def test_a_sign_or_a_decimal_point_is_refused_not_read_as_an_answer(walker, text):
    status, events = protocol(lambda ch: session.offence(walker, ch), [text, "q"])
    assert [e["event"] for e in replies(events)] == ["ready", "question", "refused", "end"], events
    refusal = replies(events)[2]
    assert refusal["code"] == "bad_answer" and ("negative" in refusal["reason"] or "whole numbers" in refusal["reason"])
    assert status == EXIT_QUIT


def test_1_2_and_a_dash_between_the_numbers_still_read():
    game = parse_game("bulls:4x10")
    assert game.parse_answer("1-2") == game.parse_answer("1,2") == game.parse_answer(" 1 2 ") == (1, 2)


def contradicted(walker) -> list[str]:
    """0,0 to 0123 and to 4567: no secret of bulls 4 of 10 gives both (only 8 and 9 would be left)."""
    return ["0,0", "0,0"]


@pytest.mark.parametrize(
    "number,reply",
    [
        ("0000010", "there is no answer 10 (answers 1 to 2)"),
        ("1" * 5000, "there is no answer 111111111111... (answers 1 to 2)"),
        ("0", "there is no answer 0 (answers 1 to 2)"),
    ],
    ids=["0000010", "5000-digits", "0"],
)
def test_a_repair_number_that_names_no_answer_gets_one_clear_reply(walker, number, reply):
    status, events = protocol(lambda ch: session.offence(walker, ch), contradicted(walker) + [number])
    kinds = [e["event"] for e in replies(events)]
    assert kinds[-3:] == ["contradiction", "refused", "end"], events
    assert replies(events)[-2] == {"event": "refused", "input": number[:80], "reason": reply, "code": "no_such_answer"}
    assert events[-2] == {"event": "await", "input": "repair"} and status == EXIT_CONTRADICTION


def test_a_repair_number_with_leading_zeros_names_its_answer(walker):
    """000...02 (5000 digits) is answer 2, not refused, not an internal error."""
    status, events = protocol(lambda ch: session.offence(walker, ch), contradicted(walker) + ["0" * 4999 + "2"])
    assert events[-2] == {"event": "await", "input": "correction", "number": 2, "code": events[-2]["code"]}
    assert events[-2]["code"] == [e for e in events if e["event"] == "question"][1]["code"]


@pytest.mark.parametrize(
    "command,number",
    [("correct 0000001 0,2", 1), ("correct " + "0" * 4999 + "1 0,2", 1)],
    ids=["0000001", "5000-digits"],
)
def test_correct_reads_the_number_typed(walker, command, number):
    status, events = protocol(lambda ch: session.offence(walker, ch), ["0,3", command])
    corrected = [e for e in events if e["event"] in ("corrected", "refused")]
    assert [e["event"] for e in corrected] == ["corrected"] and corrected[0]["number"] == number, events
    assert corrected[0]["hits"] == 0 and corrected[0]["blows"] == 2


@pytest.mark.parametrize(
    "command,code",
    [
        ("correct 0000001", "bad_command"),
        ("correct 2 0,1", "no_such_answer"),
        ("correct " + "1" * 5000 + " 0,1", "no_such_answer"),
        ("correct x 0,1", "bad_command"),
        ("correct 1 9,9", "bad_answer"),
    ],
    ids=["no-answer", "answer-2", "5000-digits", "not-a-number", "impossible"],
)
def test_a_correction_that_cannot_be_made_gets_one_reply_with_its_code(walker, command, code):
    status, events = protocol(lambda ch: session.offence(walker, ch), ["0,3", command])
    after = replies(events)[replies(events).index(next(e for e in events if e["event"] == "answer")) + 2 :]
    assert [e["event"] for e in after] == ["refused", "end"] and after[0]["code"] == code, events


def test_noisy_0_then_an_answer_no_secret_gives_ends_with_an_end_event(walker):
    status, events = protocol(lambda ch: session.offence(walker, ch), ["noisy 0"] + contradicted(walker) + ["0,0"])
    assert [e["event"] for e in events][-2:] == ["error", "end"], events[-4:]
    assert events[-2]["code"] == events[-1]["code"] == "contradiction" and "noise 0" in events[-1]["message"]
    assert status == events[-1]["exit"] == EXIT_CONTRADICTION


def test_noisy_0_after_a_contradiction_is_refused_and_the_repair_goes_on(walker):
    status, events = protocol(lambda ch: session.offence(walker, ch), contradicted(walker) + ["noisy 0", "1"])
    refusal = [e for e in events if e["event"] == "refused"]
    assert refusal and refusal[0]["code"] == "contradiction" and events[-2]["input"] == "correction"


def served(walker, lines: list[str], secret=None) -> tuple[int, list[dict]]:
    """Games served to a program in one process, as `play --protocol` does."""

    def run(channel):
        games = session.Games(channel, walker.game)
        return session.serve(games, lambda code: session.offence(walker, games, code), secret)

    return protocol(run, lines)


def test_new_abandons_the_game_in_progress(walker):
    status, events = served(walker, ["0,3", "new 12", "new 1 2", "new 9876"])
    ends = [e for e in events if e["event"] == "end"]
    assert ends[0] == {"event": "end", "reason": "new", "exit": EXIT_QUIT}
    refusals = [e for e in events if e["event"] == "refused"]
    assert [r["code"] for r in refusals] == ["bad_code", "bad_command"]
    # each refusal is followed by the same await again, then the next game plays itself for 9876
    waits = [events[i + 1] for i, e in enumerate(events) if e["event"] == "refused"]
    assert all(w["event"] == "await" and w["input"] == "answer" and w["number"] == 2 for w in waits)
    after = events[events.index(ends[0]) + 1 :]
    assert after[0]["event"] == "ready" and after[0]["mode"] == "auto"
    assert ends[-1]["reason"] == "solved" and [e for e in after if e["event"] == "solved"][0]["code"] == "9876"
    assert events[-1] == {"event": "await", "input": "new"} and status == EXIT_SOLVED


def test_new_in_defence_holds_the_new_secret():
    game = parse_game("bulls:3x6")

    def run(channel):
        games = session.Games(channel, game)
        return session.serve(games, lambda code: session.defence(game, games, code or game.parse_code("012")), None)

    status, events = protocol(run, ["345", "new 543", "543"])
    assert [e["reason"] for e in events if e["event"] == "end"] == ["new", "solved"]
    assert [e for e in events if e["event"] == "solved"][0]["code"] == "543" and status == EXIT_SOLVED


def test_after_a_game_only_new_or_quit_is_taken(walker):
    status, events = served(walker, ["help", "new 0123"], secret=walker.game.parse_code("9876"))
    refusal = [e for e in events if e["event"] == "refused"]
    assert refusal[0]["code"] == "game_over" and [e["reason"] for e in events if e["event"] == "end"] == ["solved"] * 2
