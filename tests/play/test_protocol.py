"""The machine interface: the JSON-lines protocol of `strategy play`, its Python client, exit statuses, and
`--json` reports. Every event read here is checked against the shipped JSON Schema."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import orjson
import pytest

import strategy.play
from strategy.protocol import CODES, EXIT_BAD_INPUT, Event, Player, ProtocolError
from strategy.rules import feedback, parse_game
from strategy.tree import format as tree_io
from strategy.tree.verify import measure

from ..conftest import ROOT, TREES, run_cli

SCHEMA = json.loads((Path(strategy.play.__file__).parent / "protocol.schema.json").read_text())
# Every event type pins "event" to its own name, so the schema's oneOf holds exactly when the object
# matches the type it names (asserted here); validating against that one type is 14 times cheaper.
assert all(
    d["properties"]["event"] == {"const": kind} and "event" in d["required"] for kind, d in SCHEMA["$defs"].items()
)
assert SCHEMA["oneOf"] == [{"$ref": f"#/$defs/{kind}"} for kind in SCHEMA["$defs"]]
VALIDATORS = {
    kind: jsonschema.Draft202012Validator({**SCHEMA, "oneOf": [{"$ref": f"#/$defs/{kind}"}]})
    for kind in SCHEMA["$defs"]
}
# the last test checks what the module's sessions produced: they run in one worker, in order
pytestmark = [pytest.mark.xdist_group("protocol")]
SEEN: set[str] = set()
VALID: set[bytes] = set()
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
TREE3 = str(TREES / "bulls-3x10-total.json")
TREE4 = str(TREES / "bulls-4x10-total.json")
TREE_MM = str(TREES / "mastermind-4x6-total.json")


def start(*args: str) -> Player:
    return Player.start(*args, env=ENV)


def player_process(*args: str) -> subprocess.Popen:
    """The player on the shipped bulls 4 of 10 tree in the protocol, as a bare process (to signal it mid-game)."""
    return subprocess.Popen(
        [sys.executable, "-m", "strategy", "play", TREE4, "--protocol", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
        text=True,
    )


def checked(events: list[Event]) -> list[Event]:
    for e in events:
        obj = {"event": e.kind, **e.fields}
        key = orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
        if key not in VALID:  # validation is a pure function of the event: each distinct one is checked once
            assert e.kind in VALIDATORS, obj
            errors = sorted(VALIDATORS[e.kind].iter_errors(obj), key=str)
            assert not errors, (obj, [err.message for err in errors][:3])
            VALID.add(key)
        if e.kind in ("refused", "error") or "message" in e.fields or e.fields.get("reason") == "error":
            assert e.fields.get("code") in CODES, obj  # every reply in words carries a code for programs
        SEEN.add(e.kind)
    return events


def close(player: Player) -> int:
    status = player.close()
    checked(player.log)
    return status


def depths(tree: str) -> dict[str, int]:
    doc = tree_io.load(tree)
    return measure(doc.game, doc.root)[1]


def referee(tree: str, spec: str, secrets: list[str]) -> float:
    """Play every secret between an offence process and a defence process, through the protocol only."""
    need = depths(tree)
    start_time = time.perf_counter()
    breaker = start(tree)
    holder = start("--defence", "--game", spec, "--secret", secrets[0])
    holder.until_await()
    events = breaker.until_await()
    for i, secret in enumerate(secrets):
        if i:
            holder.new(secret)
            events = breaker.new()
        asked = 0
        while True:
            question = [e for e in events if e.kind == "question"][-1]
            asked += 1
            reply = holder.ask(question.code)
            answer = next(e for e in reply if e.kind == "answer_to_your_question")
            events = breaker.answer(answer.hits, answer.blows)
            solved = [e for e in events if e.kind == "solved"]
            if solved:
                assert solved[0].code == secret and solved[0].questions == asked == need[secret]
                assert any(e.kind == "solved" and e.by == "you" for e in reply)
                break
            assert asked < 12
    assert close(breaker) == 0 and close(holder) == 0
    return (time.perf_counter() - start_time) / len(secrets)


@pytest.mark.slow
def test_referee_every_secret_of_3_of_10():
    game = parse_game("bulls:3x10")
    per_game = referee(TREE3, "bulls:3x10", [game.format_code(c) for c in game.codes()])
    print(f"3 of 10: {per_game * 1000:.1f} ms per refereed game")


def test_referee_200_secrets_of_4_of_10():
    game = parse_game("bulls:4x10")
    codes = game.codes()
    secrets = [game.format_code(codes[i * 5040 // 200 + 3]) for i in range(200)]
    per_game = referee(TREE4, "bulls:4x10", secrets)
    print(f"4 of 10: {per_game * 1000:.1f} ms per refereed game")


def test_offence_corrections_undo_and_noisy():
    p = start(TREE4)
    ev = checked(p.until_await())
    assert ev[0].kind == "question" and ev[0].code == "0123" and ev[0].candidates == 5040 and ev[-1].input == "answer"
    ev = checked(p.send("3,1"))
    assert ev[0].kind == "refused" and "impossible" in ev[0].reason and ev[-1].input == "answer"
    ev = checked(p.answer(0, 2))  # true secret 1234 would say 0,3
    assert ev[0].kind == "answer" and ev[0].hits == 0 and ev[0].blows == 2 and ev[0].source == "you"
    ev = checked(p.undo())
    assert ev[0].kind == "undone" and ev[0].number == 1 and ev[1].code == "0123"
    ev = checked(p.answer(0, 2))
    secret = parse_game("bulls:4x10").parse_code("1234")
    game = parse_game("bulls:4x10")
    for _ in range(8):
        q = [e for e in ev if e.kind == "question"][-1]
        ev = checked(p.send(game.format_answer(feedback(secret, game.parse_code(q.code)))))
        if any(e.kind == "contradiction" for e in ev):
            break
    c = next(e for e in ev if e.kind == "contradiction")
    assert 1 in c.core and ev[-1].input == "repair"
    ev = checked(p.send("7,7"))
    assert ev[0].kind == "refused"
    ev = checked(p.correct(1, 0, 3))
    assert ev[0].kind == "corrected" and ev[0].candidates >= 1
    ev = checked(p.noisy(0.1))
    assert ev[0].kind == "noisy" and ev[0].probability == 0.1
    q = [e for e in ev if e.kind == "question"][-1]
    assert 0 <= q.probability <= 1 and q.most_likely
    for _ in range(15):
        ev = checked(p.send(game.format_answer(feedback(secret, game.parse_code(q.code)))))
        if any(e.kind == "solved" for e in ev):
            break
        q = [e for e in ev if e.kind == "question"][-1]
    assert any(e.kind == "solved" and e.code == "1234" for e in ev)
    assert close(p) == 0


def test_race_through_the_protocol():
    p = start(TREE4, "--race", "--secret", "0123")
    mine = parse_game("bulls:4x10").parse_code("9876")
    game = parse_game("bulls:4x10")
    ev = checked(p.until_await())
    assert ev[-1].input == "question"
    for round_number in range(1, 12):
        ev = checked(p.ask("0123" if round_number == 3 else "4567"))
        assert ev[0].kind == "answer_to_your_question"
        while ev[-1].input == "answer":
            q = [e for e in ev if e.kind == "question"][-1]
            ev = checked(p.send(game.format_answer(feedback(mine, game.parse_code(q.code)))))
        race = next(e for e in ev if e.kind == "race")
        assert race.round == round_number and race.your_questions == round_number
        if race.result:
            break
    assert race.result in ("you", "me", "draw") and race.my_secret == "0123"
    assert close(p) == 0


def test_every_exit_status_is_reached(tmp_path):
    p = start(TREE3)
    p.until_await()
    assert p.quit() == 3
    p = start(TREE3)
    p.until_await()
    assert close(p) == 4  # end of input mid-game
    p = start(TREE3)
    p.until_await()
    p.answer(0, 0)
    ev = p.answer(0, 0)
    for _ in range(5):
        if ev[-1].input == "repair":
            break
        ev = p.answer(0, 0)
    assert ev[-1].input == "repair"
    assert close(p) == 5  # the answers still contradict each other
    p = start(TREE3, "--secret", "345")
    assert close(p) == 0
    with pytest.raises(ProtocolError):
        start(TREE3, "--secret", "33")  # bad input: status 2, an error and an end, no ready
    r = run_cli("play", TREE3, "--secret", "33", "--protocol")
    assert r.returncode == 2 and [json.loads(line)["event"] for line in r.stdout.splitlines()] == ["error", "end"]
    # a tree that cannot go on: an error event, then status 2
    doc = orjson.loads(Path(TREE3).read_bytes())
    del doc["tree"]["next"]["0,0"]
    doc.pop("stats")
    holey = tmp_path / "holey.json"
    holey.write_bytes(orjson.dumps(doc))
    p = start(str(holey))
    p.until_await()
    ev = checked(p.answer(0, 0))
    assert [e.kind for e in ev] == ["answer", "error", "end"] or ev[-1].kind == "end"
    assert close(p) == 2


ANSWERS = [
    "1,2",
    "1 2",
    "12",
    "1H2B",
    "1A2B",
    "1 hits, 2 blows",
    "Hit = 1, Blow = 2",
    "1 bull 2 cows",
    "1B2C",
    "1 black 2 white",
    "1B2W",
    "2 blows 1 hit",
    "1 eat 2 bite",
]


@pytest.mark.parametrize("text", ANSWERS)
def test_every_notation_in_both_modes(text):
    r = run_cli("play", TREE4, input=f"{text}\nq\n")
    assert "(remaining 216)" in r.stdout and "try again" not in r.stdout, r.stdout
    p = start(TREE4)
    p.until_await()
    ev = checked(p.send(text))
    assert ev[0].kind == "answer" and (ev[0].hits, ev[0].blows) == (1, 2) and ev[0].candidates == 216
    p.quit()


@pytest.mark.parametrize(
    "text,reason",
    [
        ("2B", "B alone"),
        ("1B2B", "B alone"),
        ("3", "single number"),
        ("1 hit", "gives hits but not blows"),
        ("2 blows", "gives blows but not hits"),
        ("1 hit 2 hits", "twice"),
    ],
)
def test_ambiguous_notations_are_refused_with_the_reason(text, reason):
    r = run_cli("play", TREE4, input=f"{text}\nq\n")
    assert reason in r.stdout and "try again" in r.stdout
    p = start(TREE4)
    p.until_await()
    ev = checked(p.send(text))
    assert ev[0].kind == "refused" and reason in ev[0].reason and ev[-1].input == "answer"
    p.quit()


@pytest.mark.slow
def test_our_defence_output_is_accepted_by_our_offence():
    r = run_cli("play", "--defence", "--game", "bulls:4x10", "--secret", "1234", input="0123\nq\n")
    said = re.search(r"\d+ hits?, \d+ blows?", r.stdout).group(0)
    assert said == "0 hits, 3 blows"
    r = run_cli("play", TREE4, input=f"{said}\nq\n")
    assert "try again" not in r.stdout and "(remaining 264)" in r.stdout, r.stdout


@pytest.mark.parametrize(
    "command",
    [
        ["verify", TREE_MM],
        ["stats", TREE_MM],
        ["table", TREE_MM],
        ["compare", TREE_MM, str(TREES / "mastermind-4x6-total-within-5.json")],
        ["play", TREE_MM, "--all"],
        ["play", "--game", "bulls:3x6", "--noise", "0.1", "--self-test", "--games", "5"],
    ],
)
def test_every_report_has_json(command):
    r = run_cli(*command, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    text = run_cli(*command).stdout
    figures = json.dumps(doc)
    if command[0] in ("verify", "stats") or "--all" in command:
        assert doc["stats"]["total"] == 5625 and doc["stats"]["worst"] == 6 and "total 5625" in text
        counts = doc["stats"]["depth_counts"]
        assert sum(counts) == 1296 and sum(d * c for d, c in enumerate(counts)) == 5625 and counts[6] > 0
        doc_mm = tree_io.load(TREE_MM)
        assert counts == measure(doc_mm.game, doc_mm.root)[0].depth_counts
    elif command[0] == "table":
        assert doc["total"] == 5625 and len(doc["rows"]) == 14 and f"total {doc['total']}" in text
        assert all(str(row["questions"]) in text for row in doc["rows"])
    elif command[0] == "compare":
        assert [t["stats"]["total"] for t in doc["trees"]] == [5625, 5626] and doc["total_difference"] == 1
        diff = doc["first_difference"]
        assert diff["kind"] == "question" and (diff["a"], diff["b"]) == ("5054", "5044")
        assert diff["at"] == [{"code": "0012", "answer": "1,0"}, {"code": "0334", "answer": "1,1"}]
        assert "first difference at 0012 1,0 > 0334 1,1: 5054 vs 5044" in text
    else:
        assert doc["games"] == 5 and "5 games" in text
    assert figures


@pytest.mark.slow
def test_solve_and_build_json(tmp_path):
    r = run_cli("solve", "--game", "bulls:3x6", "--json", "-o", str(tmp_path / "s.json"))
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and doc["proven"]["total"] == 436 == doc["stats"]["total"] and r.stderr == ""
    r = run_cli("build", "--game", "mastermind:4x6", "--strategy", "minimax", "--json", "-o", str(tmp_path / "b.json"))
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and doc["stats"]["total"] == 5801 and doc["stats"]["worst"] == 5 and r.stderr == ""


def test_advice_through_the_protocol():
    """hint, grade CODE and analyse [K] answer with JSON at the position of whoever asks: the computer's in offence,
    yours in defence (where a program asks for grades: they are not sent unasked). --budget 60: time enough for the
    searches to finish on a loaded machine (a second did not, on a busy CI runner)."""
    with start(TREE3, "--budget", "60") as me:
        checked(me.until_await())
        checked(me.answer(0, 1))
        hint = checked([me.hint()])[0]
        assert hint.number == 2 and hint.proven_best and hint.candidates == 252 and hint.code == "134"
        assert hint.exact and hint.total == hint.lower["total"] == hint.upper["total"]
        grade = checked([me.grade("345")])[0]
        assert grade.cost["exact"] and grade.best["code"] == "134" and grade.best_proven
        assert grade.question["total"] - grade.best["total"] == grade.cost["lower"]["total"] > 0
        analysis = checked([me.analyse(3)])[0]
        assert analysis.complete and analysis.best == "134" and len(analysis.questions) == 3
        assert [q["total"] for q in analysis.questions] == sorted(q["total"] for q in analysis.questions)
        refused = checked(me.send("grade 01"))
        assert refused[0].kind == "refused" and "must have 3 symbols" in refused[0].reason
    with start("--defence", "--game", "bulls:3x10", "--secret", "459", "--budget", "60") as holder:
        checked(holder.until_await())
        events = checked(holder.ask("012"))
        assert [e.kind for e in events] == ["answer_to_your_question", "await"]
        grade = checked([holder.grade("345")])[0]
        assert grade.number == 2 and grade.candidates == 210 and grade.cost["exact"]
        hint = checked([holder.hint()])[0]
        assert hint.proven_best and hint.code == grade.best["code"]


def test_an_analysis_with_bounds_only_gives_no_value_and_a_bad_k_is_refused():
    """At bulls 3 of 10's first question every question is equivalent, so one is proven best before any search
    ends: with no time, 'value' is null (it was the lower bound) and its row has the bounds. An analyse K with
    thousands of digits is refused (it ended the player with an internal error)."""
    with start(TREE3, "--budget", "1e-9") as me:
        checked(me.until_await())
        analysis = checked([me.analyse(2)])[0]
        row = analysis.questions[0]
        assert analysis.best == row["code"] and not analysis.complete and analysis.value is None
        assert row["lower"]["total"] < row["upper"]["total"] and not row["exact"]
        for k in ("1" + "0" * 5000, "99999999", "0"):
            refused = checked(me.send(f"analyse {k}"))
            assert refused[0].kind == "refused" and refused[0].code == "bad_command", refused
            assert "K from 1 to 1,000,000" in refused[0].reason


def test_a_refused_correction_quotes_the_whole_line():
    """The refusal's input is the line typed, as the schema says (it was the answer part alone)."""
    with start(TREE3) as me:
        checked(me.until_await())
        checked(me.answer(0, 1))
        refused = checked(me.send("correct 1 3,1"))[0]
        assert refused.kind == "refused" and refused.code == "bad_answer" and refused.input == "correct 1 3,1"


def test_help_lists_the_commands_in_every_mode():
    player = start(TREE3)
    player.until_await()
    events = checked(player.send("help"))
    assert events[0].kind == "help" and "undo" in events[0].commands
    assert close(player) == 4
    player = start("--defence", "--game", "bulls:10x10", "--secret", "0123456789")  # live: no list of every code
    player.until_await()
    assert checked(player.send("help"))[0].kind == "help"
    assert close(player) == 4


@pytest.mark.parametrize(
    "args,says",
    [
        ((TREE3, "--secret", "33"), "code '33' must have 3 symbols"),
        (("no-such-tree.json",), "'no-such-tree.json' is neither a file nor a shipped tree"),
        ((TREE3, "--seed", "x"), "--seed must be an integer"),
        (("--game", "bulls:11x10"), "bulls needs n <= k"),
    ],
    ids=["secret", "tree", "option", "game"],
)
def test_a_player_that_cannot_start_says_why_in_the_protocol_and_the_client_raises_it(args, says):
    r = run_cli("play", *args, "--protocol")
    events = checked([Event.parse(line) for line in r.stdout.splitlines()])
    assert [e.kind for e in events] == ["error", "end"] and r.returncode == EXIT_BAD_INPUT == events[1].exit
    assert events[0].code == events[1].code == "startup" and says in events[0].message == events[1].message
    assert r.stderr.count("\n") == 1 and says in r.stderr and "Traceback" not in r.stderr
    for _ in range(10):  # the client reads the reason whole every time (it read standard error too early)
        with pytest.raises(ProtocolError) as raised:
            start(*args)
        assert says in str(raised.value) and raised.value.code == "startup"


def test_a_player_that_ends_without_a_word_in_the_protocol_is_reported_with_its_standard_error(tmp_path):
    """The client's other path: a process that writes no event ends (here a stand-in for python that only
    complains); what it said on standard error is in the exception every time, not read before it was written."""
    stand_in = tmp_path / "python"
    stand_in.write_text("#!/bin/sh\nsleep 0.05\necho 'no such interpreter feature' >&2\nexit 3\n")
    stand_in.chmod(0o755)
    for _ in range(10):
        with pytest.raises(ProtocolError) as raised:
            Player(["bulls:3x10"], python=str(stand_in), env=ENV)
        assert str(raised.value) == "the player ended (status 3): no such interpreter feature"


def test_quit_inside_with_closes_once():
    with start(TREE3) as player:
        player.until_await()
        assert player.quit() == 3
    assert player.close() == 3 and player.quit() == 3  # again: the status, never an I/O error


def test_bytes_that_are_not_text_get_an_error_event_from_the_process():
    player = start(TREE3)
    player.until_await()
    player.process.stdin.buffer.write(b"\xff\xfe0,0\n")
    player.process.stdin.flush()
    events = checked(player.until_await())
    assert [e.kind for e in events] == ["error", "end"] and events[0].code == "bad_input_encoding"
    assert close(player) == EXIT_BAD_INPUT


def test_the_ready_event_names_the_shipped_tree_by_its_name_not_its_path():
    for args in (("bulls:3x10",), (TREE3,), ("bulls-3x10-total",), ("--game", "bulls:3x10")):
        player = start(*args)
        assert player.ready.tree == "bulls-3x10-total", (args, player.ready.fields)
        close(player)


def test_a_game_no_shipped_tree_names_plays_live_as_the_tree_argument():
    player = start("bulls:10x10")
    assert player.ready.objective == "live" and player.ready.tree is None and player.ready.game == "bulls:10x10"
    question = player.next("question")
    assert question.code == "0123456789" and question.candidates == 3628800
    assert player.quit() == 3
    r = run_cli("play", "--help")
    assert "a game no shipped tree names (bulls:10x10) plays live" in " ".join(r.stdout.split())
    r = run_cli("verify", "bulls:10x10")  # only play: the others still need a tree
    assert r.returncode == 2 and "shipped" in r.stderr


def test_the_codes_are_one_set_in_the_schema_and_the_client():
    for kind in ("refused", "error", "end"):
        assert SCHEMA["$defs"][kind]["properties"]["code"]["enum"] == list(CODES)
    assert set(SCHEMA["$defs"]["refused"]["required"]) >= {"reason", "code"}
    assert set(SCHEMA["$defs"]["error"]["required"]) >= {"message", "code"}


@pytest.mark.parametrize("signum,status", [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
def test_a_signal_ends_the_game_with_an_end_event(signum, status):
    """A program hears that the player stopped: an end (interrupted) with the exit status, then the exit. Before,
    the output stopped at the await."""
    import signal

    proc = player_process()
    assert proc.stdout is not None
    for line in proc.stdout:  # up to the first await: the player waits for an answer
        if '"await"' in line:
            break
    proc.send_signal(getattr(signal, signum))
    out, err = proc.communicate(timeout=60)
    last = orjson.loads(out.splitlines()[-1])
    assert not sorted(VALIDATORS["end"].iter_errors(last), key=str), last
    assert last == {"event": "end", "reason": "interrupted", "exit": status} and proc.returncode == status, (out, err)
    SEEN.add("end")


def test_two_signals_at_once_end_the_game_as_the_first_says():
    """A second signal hard on the first (a Ctrl-C pressed twice, or a supervisor's SIGTERM after it) cannot cut
    the wind-up short: the end event is still the last line, with the first signal's status, and standard error has
    one line. It had no end event, and the status of the second."""
    import signal

    proc = player_process("--budget", "100")
    assert proc.stdin is not None and proc.stdout is not None

    def send(line: str, until: str) -> None:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
        for out in proc.stdout:
            if f'"event":"{until}"' in out:
                return

    send("3,0", "await")
    send("hint", "hint")  # 24 secrets: the engine is loaded, the hint quick
    send("undo", "await")
    send("0,1", "await")
    proc.stdin.write("hint\n")  # 1440 secrets: the search takes seconds, and a stopped one unwinds for a while
    proc.stdin.flush()
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    last = orjson.loads(out.splitlines()[-1])
    assert last == {"event": "end", "reason": "interrupted", "exit": 130} and proc.returncode == 130, (out, err)
    assert err.strip() == "strategy: interrupted", err


def test_every_event_kind_was_produced_and_valid():
    """Runs last in this module: the sessions above produced every event the schema defines."""
    assert SEEN == set(SCHEMA["$defs"]), set(SCHEMA["$defs"]) - SEEN
