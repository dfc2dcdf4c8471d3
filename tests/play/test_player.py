"""The player as a person meets it: real typed input through a pseudo-terminal (pexpect)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Callable

import pexpect
import pytest

from strategy.play.walker import Contradiction, Walker
from strategy.rules import feedback, parse_game

from ..conftest import ROOT, TREES, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.pty]

TREE = str(TREES / "bulls-4x10-total.json")
GAME = parse_game("bulls:4x10")
QUESTION = r"Is your number (\w+)\?"


def spawn(*args: str) -> pexpect.spawn:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return pexpect.spawn(sys.executable, ["-m", "strategy", *args], env=env, encoding="utf-8", timeout=60)


def honest(secret: str) -> Callable[[str], str]:
    return lambda guess: "{},{}".format(*feedback(GAME.parse_code(secret), GAME.parse_code(guess)))


def answer_loop(child: pexpect.spawn, respond: Callable[[str], str], until: list[str]) -> tuple[int, list[str]]:
    """Answer every question with respond(guess) until one of `until` appears; (its index, questions asked)."""
    asked = []
    while True:
        i = child.expect([QUESTION, *until])
        if i > 0:
            return i - 1, asked
        asked.append(child.match.group(1))
        child.expect("hits, blows: ")
        child.sendline(respond(asked[-1]))


def finish(child: pexpect.spawn, status: int = 0) -> str:
    child.expect(pexpect.EOF)
    out = child.before
    child.close()
    assert child.exitstatus == status, out
    return out


def test_player_imports_no_engine():
    code = (
        "import sys, strategy.cli, strategy.play.session, strategy.play.channels, strategy.play.walker, strategy.tree.verify;"
        "bad = [m for m in ('numpy', 'numba') if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT))
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_offence_accepts_every_answer_form_and_rejects_impossible_ones():
    secret = "4271"
    truth = honest(secret)
    forms = iter(["{},{}", "{} {}", "{}{}", "{}H{}B", "{}A{}B", "{}h {}b"] * 3)
    child = spawn("play", TREE)
    child.expect(r"\(remaining 5040\) Is your number 0123\?")
    child.expect(r"\[1\] hits, blows: ")
    child.sendline("3,1")
    child.expect(r"answer 3,1 is impossible in bulls:4x10")
    child.sendline("2,3")
    child.expect(r"hits \+ blows > 4")
    child.sendline(truth("0123"))

    def respond(guess: str) -> str:
        h, b = truth(guess).split(",")
        return "4" if h == "4" else next(forms).format(h, b)

    _, asked = answer_loop(child, respond, [r"Solved in (\d+) questions"])
    assert int(child.match.group(1)) == len(asked) + 1
    out = finish(child)
    assert "===== history =====" in out and "4271  4,0" in out
    assert re.search(r"1\s+5040\s+0123\s+0,2", out)


def wrong_first_answer(wrong: str, truth: Callable[[str], str]) -> pexpect.spawn:
    """Start offence, answer the first question wrongly and the rest truly, until the player objects."""
    child = spawn("play", TREE)
    child.expect(QUESTION)
    child.expect("hits, blows: ")
    child.sendline(wrong)
    i, _ = answer_loop(child, truth, ["cannot all be true", "Solved in"])
    assert i == 0, "the contradiction was not detected"
    return child


def test_a_wrong_answer_is_detected_explained_and_corrected():
    secret = "1234"
    truth = honest(secret)
    child = wrong_first_answer("0,2", truth)  # the truth for 0123 is 0,3
    child.expect(r"\[1\] 0123 -> 0,2 \(if it was wrong, \d+ secrets remain\)")
    child.expect("Correct which question")
    child.sendline("7")  # not a question number
    child.expect(r"there is no answer 7 \(answers 1 to \d+\); try again")
    child.sendline("1")
    child.expect(r"\[1\] 0123 hits, blows: ")
    child.sendline(truth("0123"))
    child.expect(r"Corrected; \d+ secrets remain\.")
    i, _ = answer_loop(child, truth, ["Solved in"])
    out = finish(child)
    assert "0,3 (corrected)" in out and "1234  4,0" in out


def test_noisy_mode_recovers_from_a_wrong_answer():
    secret = "5930"
    truth = honest(secret)
    child = wrong_first_answer("0,0", truth)  # wrong: 0123 shares 0 and 3 with 5930
    child.expect("Correct which question")
    child.sendline("n")
    child.expect("Noisy-answer mode: each answer may be wrong with probability 0.05")
    _, asked = answer_loop(child, truth, ["Solved in"])
    assert asked[-1] == secret
    finish(child)


def test_quit_and_end_of_input_are_clean():
    child = spawn("play", TREE)
    child.expect("hits, blows: ")
    child.sendline("q")
    assert "bye" in finish(child, 3)  # quit
    child = spawn("play", TREE)
    child.expect("hits, blows: ")
    child.sendeof()
    assert "Traceback" not in finish(child, 4)  # end of input


def test_auto_mode_and_all():
    r = run_cli("play", TREE, "--secret", "9876")
    assert r.returncode == 0 and "Solved in" in r.stdout and "9876  4,0" in r.stdout
    r = run_cli("play", TREE, "--all")
    assert r.returncode == 0 and "secrets 5040  total 26274  average 5.2131  worst 7" in r.stdout
    r = run_cli("play", TREE, "--secret", "9866")
    assert r.returncode == 2 and "repeats a symbol" in r.stderr


def test_defence_rejects_bad_codes_and_congratulates():
    child = spawn("play", "--defence", "--game", "bulls:4x10", "--secret", "5071")
    child.expect(r"\[1\] your question: ")
    child.sendline("1123")
    child.expect("repeats a symbol")
    child.sendline("12")
    child.expect("must have 4 symbols")
    child.sendline("12a4")
    child.expect("outside the symbols")
    child.sendline("0123")
    child.expect("0 hits, 2 blows")
    child.expect(r"\[2\] your question: ")
    child.sendline("5071")
    child.expect("Congratulations! You found 5071 in 2 questions.")
    out = finish(child)
    assert re.search(r"2\s+5071\s+4,0", out)


def test_defence_random_secret_is_repeatable_with_a_seed():
    runs = []
    for _ in range(2):
        child = spawn("play", "--defence", "--game", "bulls:3x6", "--seed", "7")
        child.expect("your question: ")
        child.sendline("012")
        child.expect(r"(\d) hits, (\d) blows")
        runs.append(child.match.group(0))
        child.sendline("q")
        finish(child, 3)
    assert runs[0] == runs[1]


def test_race_rule_and_last_turn():
    mine = "0123"  # the computer's secret
    person = honest("9876")  # the person's secret answers the computer's questions
    child = spawn("play", TREE, "--race", "--secret", mine)
    child.expect("You ask first. If you find my secret, I still get my turn")
    child.expect(r"\[1\] your question: ")
    child.sendline("0124")
    child.expect("3 hits, 0 blows")
    child.expect(QUESTION)
    assert child.match.group(1) == "0123"
    child.expect("hits, blows: ")
    child.sendline(person("0123"))
    child.expect(r"\[2\] your question: ")
    child.sendline("0123")
    child.expect("You found my secret. My last turn:")
    child.expect(QUESTION)
    guess = child.match.group(1)
    child.expect("hits, blows: ")
    child.sendline(person(guess))
    child.expect("You win in 2 questions.")
    out = finish(child)
    assert "your questions" in out and "my questions" in out
    # on its last turn the computer asks a code that can still be my secret, to try to draw
    assert not set(guess) & set("0123")


def test_library_api_partial_history():
    walker = Walker.load(TREE)
    assert walker.next_guess([]) == "0123"
    assert walker.next_guess([("0123", "0,1")]) == "1456"
    assert len(walker.candidates([("0123", "0,1")])) == 1440
    assert walker.next_guess([("0123", "4,0")]) is None
    with pytest.raises(Contradiction):
        walker.next_guess([("0123", "0,0"), ("4567", "0,0")])
    # an off-tree question: the walker still finishes every secret consistent with the answers
    history = [("0123", "0,1"), ("9876", "1,1")]
    cands = walker.candidates(history)
    assert all(isinstance(c, str) for c in cands)  # codes are strings at the API, as next_guess returns
    secret = GAME.parse_code(cands[len(cands) // 2])
    while True:
        guess = walker.next_guess(history)
        answer = GAME.format_answer(feedback(secret, GAME.parse_code(guess)))
        history.append((guess, answer))
        if answer == "4,0":
            break
        assert len(history) < 12
    assert history[-1][0] == GAME.format_code(secret)


def test_noisy_self_test_reports():
    r = run_cli("play", "--game", "bulls:3x6", "--noise", "0.1", "--self-test", "--games", "30", "--seed", "1")
    assert r.returncode == 0, r.stderr
    m = re.search(r"30 games, secret found in (\d+) \(([\d.]+)%\), average ([\d.]+) questions", r.stdout)
    assert m and int(m.group(1)) >= 20 and 3.0 < float(m.group(3)) < 15.0
