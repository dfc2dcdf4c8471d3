"""The command line as a user meets it: one-line errors with exit status 2, never a traceback."""

from __future__ import annotations

import os
import sys

import orjson
import pytest

from ..conftest import ROOT, TREES, run_cli


@pytest.mark.parametrize(
    "args,message",
    [
        (["build", "--game", "bulls:5x4", "--strategy", "minimax"], "n <= k"),
        (["build", "--game", "poker:4x10", "--strategy", "minimax"], "unknown game spec"),
        (["build", "--game", "bulls:4x10", "--strategy", "minimax", "--first", "0012"], "repeats a symbol"),
        (["verify", "missing.json"], "is neither a file nor a shipped tree"),
        (
            ["table", "mastermnd:5x7"],
            "'mastermnd:5x7' is neither a file nor a shipped tree, and as a game: unknown game spec",
        ),
        (["html", "mastermind:5x7x", "-o", "x.html"], "as a game: bad size '5x7x'"),
    ],
)
def test_bad_input_is_one_line(args, message):
    r = run_cli(*args)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and message in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_build_verify_stats(tmp_path):
    out = tmp_path / "mm.json"
    r = run_cli("build", "--game", "mastermind:4x6", "--strategy", "minimax", "-o", str(out))
    assert r.returncode == 0, r.stderr
    doc = orjson.loads(out.read_bytes())
    assert doc["stats"]["total"] == 5801 and doc["game"] == {"name": "mastermind", "length": 4, "symbols": 6}
    r = run_cli("verify", str(out))
    assert r.returncode == 0 and "total 5801" in r.stdout and "worst 5" in r.stdout
    r = run_cli("stats", str(out))
    assert r.returncode == 0 and "#" in r.stdout and "average 4.4761" in r.stdout
    r = run_cli("verify", str(out), "--game", "bulls:4x10")
    assert r.returncode == 2 and "tree is for mastermind:4x6, not bulls:4x10" in r.stderr


@pytest.mark.slow
def test_build_with_exact_endgames_records_what_they_saved(tmp_path):
    """Minimax on Mastermind 4x6 (5801) with exact endgames below 100 secrets: a verified tree whose record
    says how many questions the exact subtrees saved against the greedy tree."""
    out = tmp_path / "mm.json"
    r = run_cli(
        "build", "--game", "mastermind:4x6", "--strategy", "minimax", "--exact-below", "100", "--json", "-o", str(out)
    )
    assert r.returncode == 0, r.stderr
    doc = orjson.loads(out.read_bytes())
    record = doc["generator"]["exact_endgame"]
    assert record["total_before"] == 5801 and record["below"] == 100 and record["improved"] >= 1
    assert orjson.loads(r.stdout)["stats"]["total"] == doc["stats"]["total"] == 5801 - record["saved"]
    assert 5625 < doc["stats"]["total"] < 5801
    assert run_cli("verify", str(out)).returncode == 0


@pytest.mark.slow
def test_improve_makes_small_subtrees_optimal_without_a_deeper_worst_case(tmp_path):
    """Minimax (worst 5) improved below 300 secrets stays within 5 questions and saves questions; a
    consistent-only tree stays consistent-only; an optimal tree comes back with the same total."""
    greedy, better = tmp_path / "mm.json", tmp_path / "better.json"
    assert run_cli("build", "--game", "mastermind:4x6", "--strategy", "minimax", "-o", str(greedy)).returncode == 0
    r = run_cli("improve", str(greedy), "--exact-below", "300", "--json", "-o", str(better))
    assert r.returncode == 0, r.stderr
    report, doc = orjson.loads(r.stdout), orjson.loads(better.read_bytes())
    assert report["before"]["total"] == doc["generator"]["exact_endgame"]["total_before"] == 5801
    assert 5626 <= report["stats"]["total"] < 5801 and report["stats"]["worst"] == 5  # 5626: the optimum within 5
    assert (
        doc["generator"]["strategy"] == "minimax" and doc["generator"]["exact_endgame"]["objective"] == "total-within-5"
    )
    consistent, kept = tmp_path / "c.json", tmp_path / "kept.json"
    assert (
        run_cli(
            "build", "--game", "mastermind:4x6", "--strategy", "entropy", "--consistent-only", "-o", str(consistent)
        ).returncode
        == 0
    )
    assert run_cli("improve", str(consistent), "--exact-below", "1296", "-o", str(kept)).returncode == 0
    doc = orjson.loads(kept.read_bytes())
    assert doc["stats"]["total"] == 5660 and doc["generator"]["consistent_only"] is True  # the consistent optimum
    r = run_cli("improve", str(TREES / "mastermind-4x6-total.json"), "--exact-below", "100", "--json", "-o", str(kept))
    assert r.returncode == 0 and orjson.loads(r.stdout)["stats"]["total"] == 5625
    doc = orjson.loads(kept.read_bytes())
    assert doc["objective"] == "total" and doc["generator"]["proven"]["total"] == 5625  # unchanged: still proven


@pytest.mark.slow
def test_improve_with_a_store_resumes_where_its_budget_stopped(tmp_path):
    """Bulls 4 of 10's entropy tree below 2000 secrets with a budget of 3 s (the endgame of 1440 secrets takes
    longer here, the 12 others less): the store keeps what was finished, and the rerun of the same command
    without a budget takes those from it and solves the rest: every part of the first question is then optimal, and
    so is the tree (26274, Tanaka 1996); a store of another game is refused in one line."""
    greedy, store = tmp_path / "es.json", str(tmp_path / "endgames.db")
    assert run_cli("build", "--game", "bulls:4x10", "--strategy", "entropy", "-o", str(greedy)).returncode == 0
    first = run_cli(
        "improve",
        str(greedy),
        "--exact-below",
        "2000",
        "--budget",
        "3",
        "--store",
        store,
        "-o",
        str(tmp_path / "a.json"),
    )
    assert first.returncode == 0, first.stderr
    done = orjson.loads((tmp_path / "a.json").read_bytes())["generator"]["exact_endgame"]
    assert done["unfinished"] < done["subtrees"] and done["from_store"] == 0  # some finished (all on a fast machine)
    again = run_cli("improve", str(greedy), "--exact-below", "2000", "--store", store, "-o", str(tmp_path / "b.json"))
    assert again.returncode == 0, again.stderr
    b = orjson.loads((tmp_path / "b.json").read_bytes())
    assert b["stats"]["total"] == 26274 and run_cli("verify", str(tmp_path / "b.json")).returncode == 0
    assert b["generator"]["exact_endgame"]["from_store"] == done["subtrees"] - done["unfinished"]
    assert b["generator"]["exact_endgame"]["unfinished"] == 0
    r = run_cli("improve", str(TREES / "mastermind-4x6-total.json"), "--exact-below", "100", "--store", store)
    assert r.returncode == 2 and "is for game 'bulls:4x10', not 'mastermind:4x6'" in r.stderr


def test_improve_drops_the_claims_a_changed_tree_no_longer_proves(tmp_path):
    """The strongest race tree of bulls 3 of 10 is not a least-total tree: made one below 720 secrets, its
    proof of the race no longer holds, so the file says heuristic, names what it came from, and claims nothing."""
    out = tmp_path / "t.json"
    r = run_cli("improve", str(TREES / "race-bulls-3x10-strongest.json"), "--exact-below", "720", "-o", str(out))
    assert r.returncode == 0, r.stderr
    doc = orjson.loads(out.read_bytes())
    assert doc["stats"]["total"] < doc["generator"]["exact_endgame"]["total_before"]
    assert doc["objective"] == "heuristic" and doc["generator"]["improved_from"] == "win-tie"
    assert "proven" not in doc["generator"] and "proven_optimal" not in doc["generator"]


@pytest.mark.slow
def test_build_is_deterministic_and_writes_stdout(tmp_path):
    a = run_cli("build", "--game", "bulls:3x6", "--strategy", "entropy")
    b = run_cli("build", "--game", "bulls:3x6", "--strategy", "entropy")
    assert a.returncode == 0 and a.stdout == b.stdout and a.stdout.startswith('{"format":"strategy-tree"')


def test_tampered_tree_fails_verification(tmp_path):
    out = tmp_path / "t.json"
    assert run_cli("build", "--game", "bulls:3x6", "--strategy", "minimax", "-o", str(out)).returncode == 0
    doc = orjson.loads(out.read_bytes())
    doc["stats"]["worst"] += 1
    out.write_bytes(orjson.dumps(doc))
    r = run_cli("verify", str(out))
    assert r.returncode == 1 and "stored stats.worst" in r.stderr
    first = next(iter(doc["tree"]["next"]))
    del doc["tree"]["next"][first]
    out.write_bytes(orjson.dumps(doc))
    r = run_cli("verify", str(out))
    assert r.returncode == 1 and "is not solved" in r.stderr


def test_verify_json_reports_a_false_tree_as_data_with_its_own_exit_status(tmp_path):
    """A tree that fails (exit 1, `ok: false`, what failed as fields) is told apart from a file that is missing or no
    tree (exit 2)."""
    doc = orjson.loads((TREES / "bulls-3x10-total.json").read_bytes())
    stats = dict(doc["stats"])
    doc["stats"]["worst"] += 1
    lying = tmp_path / "lying.json"
    lying.write_bytes(orjson.dumps(doc))
    doc["stats"] = stats
    doc["tree"]["next"]["0,0"]["next"].pop("0,0")
    doc.pop("stats")
    holey = tmp_path / "holey.json"
    holey.write_bytes(orjson.dumps(doc))
    r = run_cli("verify", str(lying), "--json")
    report = orjson.loads(r.stdout)
    assert r.returncode == 1 and report["ok"] is False and report["game"] == "bulls:3x10"
    assert report["failure"] == {
        "kind": "stats",
        "field": "worst",
        "stored": stats["worst"] + 1,
        "measured": stats["worst"],
        "message": report["failure"]["message"],
    }
    r = run_cli("verify", str(holey), "--json")
    failure = orjson.loads(r.stdout)["failure"]
    assert r.returncode == 1 and failure["kind"] == "unsolved" and failure["at"] == [{"code": "012", "answer": "0,0"}]
    assert failure["code"] == doc["tree"]["next"]["0,0"]["guess"] and failure["answer"] == "0,0"
    assert failure["secret"] and "is not solved" in failure["message"]
    (tmp_path / "not-a-tree.json").write_text('{"format": "x"}')
    r = run_cli("verify", str(tmp_path / "not-a-tree.json"), "--json")
    assert r.returncode == 2 and orjson.loads(r.stdout)["failure"]["kind"] == "format"
    r = run_cli("verify", str(tmp_path / "missing.json"), "--json")
    assert r.returncode == 2 and r.stdout == "" and "neither a file" in r.stderr
    r = run_cli("verify", "bulls:3x10", "--json")
    assert r.returncode == 0 and orjson.loads(r.stdout)["ok"] is True


def test_compare_json_gives_the_first_difference_as_fields():
    r = run_cli("compare", "mastermind:4x6", "mastermind-4x6-total-within-5", "--json")
    diff = orjson.loads(r.stdout)["first_difference"]
    assert r.returncode == 0 and diff == {
        "at": [{"code": "0012", "answer": "1,0"}, {"code": "0334", "answer": "1,1"}],
        "kind": "question",
        "a": "5054",
        "b": "5044",
    }
    r = run_cli("compare", "bulls:3x10", "bulls:3x10", "--json")
    assert r.returncode == 0 and orjson.loads(r.stdout)["first_difference"] is None
    from strategy.tree.compare import first_difference

    doc = orjson.loads((TREES / "bulls-3x10-total.json").read_bytes())
    first = doc["tree"]["next"]["0,0"]
    cut = {"guess": doc["tree"]["guess"], "next": {**doc["tree"]["next"], "0,0": {"guess": first["guess"]}}}
    assert first_difference(doc["tree"], cut).to_json() == {
        "at": [{"code": "012", "answer": "0,0"}],
        "kind": "answers",
        "a": sorted(first["next"]),
        "b": [],
    }


def test_python_dash_m_and_version():
    r = run_cli("--version")
    assert r.returncode == 0 and r.stdout.startswith("strategy ")


@pytest.mark.slow
def test_compiling_is_announced_and_timed_on_a_terminal(monkeypatch):
    """The first run after install compiles for a minute or more on a slow machine: never in silence."""
    import io
    import sys
    import time

    from strategy.cli import options as cli

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    with cli.compiling("the search engine", True):
        time.sleep(2.2)
    shown = term.getvalue()
    assert shown.count("compiling the search engine (once after install): 00:0") >= 3 and shown.endswith("\n")
    assert "compiling the search engine (once after install): 00:02" in shown
    plain = io.StringIO()
    monkeypatch.setattr(sys, "stderr", plain)
    with cli.compiling("the tree builder", True):
        pass
    with cli.compiling("the tree builder", False):
        pass
    assert plain.getvalue() == "compiling the tree builder (once after install)\n"


WARMED_RUN = """
import sys
import numba
from strategy import warmup
import strategy.engine as engine
from strategy.engine import exact, greedy, noisy, symmetry, table

def signatures():
    return {(m.__name__, name): len(f.signatures) for m in (exact, greedy, noisy, symmetry, table)
            for name, f in vars(m).items() if isinstance(f, numba.core.registry.CPUDispatcher)}

for part in sys.argv[1].split(","):
    warmup.warm_up(part)
before = signatures()
from strategy.cli import main
main(sys.argv[2:])
after = signatures()
print(sorted(f"{m}.{n}" for (m, n), k in after.items() if k > before.get((m, n), 0)))
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "part,command",
    [
        (
            "search",
            [
                "solve",
                "--game",
                "mastermind:3x5",
                "--objective",
                "worst-then-fewest",
                "--store",
                "{tmp}/s.db",
                "--quiet",
                "-o",
                "{tmp}/t.json",
            ],
        ),
        (
            "builder,search",
            [
                "build",
                "--game",
                "bulls:4x7",
                "--strategy",
                "entropy",
                "--exact-below",
                "200",
                "--quiet",
                "-o",
                "{tmp}/b.json",
            ],
        ),
        (
            "builder",
            [
                "build",
                "--game",
                "mastermind:4x5",
                "--strategy",
                "minimax",
                "--pilot",
                "2",
                "--quiet",
                "-o",
                "{tmp}/p.json",
            ],
        ),
        ("bound", ["bound", "--game", "bulls:4x7", "--levels", "2", "--exact-below", "60", "--quiet"]),
        ("analyse", ["analyse", "--game", "bulls:4x7", "--history", "0123:0,1", "--budget", "30"]),
        (
            "analyse",
            ["analyse", "--game", "mastermind:3x5", "--history", "012:0,1", "--objective", "worst", "--move", "111"],
        ),
    ],
)
def test_after_its_warm_up_a_command_compiles_nothing_more(tmp_path, part, command):
    """What a command calls from Python is compiled (or loaded) by its warm-up, before any worker or thread starts:
    a compile later on would be silent (and, for a solve, repeated in every worker). In a fresh process: the
    warm-up, then the command on another game; no kernel gains a signature."""
    import subprocess
    import sys

    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    done = subprocess.run(
        [sys.executable, "-c", WARMED_RUN, part, *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout


@pytest.mark.slow
def test_a_kernel_counts_as_compiled_only_when_numba_would_load_it_from_its_cache(tmp_path):
    """`compiled` says whether a first call would load the cache or compile: not before the first call, yes after
    it (in the next process too), not once the kernel's source is edited (numba's cache is stale then)."""
    import os
    import subprocess
    import sys

    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); import kernel; from strategy.engine import compiled; "
        "before = compiled(kernel, 'f'); kernel.f(3); print(before, compiled(kernel, 'f'))"
    )
    source = "from numba import njit\n\n\n@njit(cache=True)\ndef f(x):\n    return x + {}\n"

    def run() -> str:
        done = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    (tmp_path / "kernel.py").write_text(source.format(1))
    assert run() == "False True"
    assert run() == "True True"
    (tmp_path / "kernel.py").write_text(source.format(2))
    os.utime(tmp_path / "kernel.py", ns=(0, 10**18))  # another time stamp, whatever the clock's resolution
    assert run() == "False True"


def test_the_command_alone_prints_its_help():
    r = run_cli()
    assert r.returncode == 0 and r.stdout.startswith("usage: strategy") and "trees" in r.stdout and not r.stderr


@pytest.mark.slow
@pytest.mark.pty
def test_a_tree_is_never_poured_onto_a_terminal(tmp_path):
    """As gzip refuses to write to a terminal: solve and build without -o refuse before any work when standard
    output is a terminal; into a pipe the tree still flows."""
    import pexpect

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for args in (["solve", "--game", "bulls:3x6"], ["build", "--game", "bulls:3x6", "--strategy", "entropy"]):
        child = pexpect.spawn(sys.executable, ["-m", "strategy", *args], env=env, encoding="utf-8", timeout=60)
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 2 and "would be written to the terminal: give -o FILE" in child.before
    piped = run_cli("build", "--game", "bulls:3x6", "--strategy", "entropy", "--quiet")
    assert piped.returncode == 0 and piped.stdout.startswith('{"format":"strategy-tree"')


@pytest.mark.slow
def test_improve_reports_its_own_objective_and_what_the_budget_left(tmp_path):
    """improve --objective worst-then-fewest improves the secrets at the worst depth (the total may grow): it says
    so first; a budget that stops some endgames is named, not hidden behind a full progress bar."""
    tree = tmp_path / "e.json"
    assert run_cli("build", "--game", "bulls:4x7", "--strategy", "entropy", "--quiet", "-o", str(tree)).returncode == 0
    r = run_cli(
        "improve",
        str(tree),
        "--objective",
        "worst-then-fewest",
        "--exact-below",
        "100",
        "--quiet",
        "-o",
        str(tmp_path / "w.json"),
    )
    assert r.returncode == 0 and "bulls:4x7: secrets at depth 6: 16 -> 6 (total 3657 -> 3683)" in r.stderr, r.stderr
    r = run_cli(
        "improve", str(tree), "--exact-below", "400", "--budget", "0.05", "--quiet", "-o", str(tmp_path / "t.json")
    )
    assert r.returncode == 0 and "endgames left unfinished by --budget" in r.stderr, r.stderr


def test_the_second_question_table_explains_its_columns():
    r = run_cli("table", "bulls:4x10")
    assert r.returncode == 0 and "vs first: what the first question answers if the second is the secret" in r.stdout


def test_dash_is_standard_output_for_every_single_file_output(tmp_path):
    """`-o -` (and `table --csv -`) writes to standard output, as `solve -o -` does, not to a file named `-`; export,
    which writes a file and its metadata beside it, refuses it in one line."""
    import subprocess

    tree = str(TREES / "mastermind-4x6-total.json")

    def run(*args: str) -> subprocess.CompletedProcess:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        cmd = [sys.executable, "-m", "strategy", *args]
        return subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)

    page = run("html", tree, "-o", "-")
    assert page.returncode == 0 and page.stdout.startswith("<!DOCTYPE html>")
    csv = run("table", tree, "--csv", "-")
    assert csv.returncode == 0 and csv.stdout.splitlines()[0].startswith("answer,second,")
    assert all("," in line for line in csv.stdout.splitlines())  # the CSV alone, not the table for people after it
    graph = run("graph", tree, "--format", "graphml", "-o", "-")
    assert graph.returncode == 0 and "<graphml" in graph.stdout
    refused = run("export", tree, "--format", "csv", "-o", "-")
    assert refused.returncode == 2 and "-o needs a file name" in refused.stderr
    assert list(tmp_path.iterdir()) == []
