"""Hostile files and a hostile environment (issue 55): what a shared tree prints, files named for two jobs,
closed standard streams, repeated signals, a compiler turned off or out of memory, a Dask address that never
answers. Each case was a hang, a traceback, a forged line on the terminal or a lost file; each ends in one clear
line now (or, where the command is right to go on, in its normal output)."""

from __future__ import annotations

import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest

from ..conftest import ROOT, TREES
from .test_hardening import CASES, capped, one_line

pytestmark = [pytest.mark.slow]

TREE_3 = TREES / "bulls-3x10-total.json"
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
# what a shared tree may carry in its strings: a window title, a screen clear, a forged line, a bidirectional
# override, a NUL, a C1 CSI (U+009B)
HOSTILE = "total\x1b]2;owned\x07\x1b[2J\nstrategy: error: forged\u202e\x00\x9b31m"


def strategy(*args: str, **options) -> subprocess.CompletedProcess:
    """The CLI as a user runs it, with its output as bytes (nothing decoded away)."""
    CASES.append(" ".join(map(str, args))[:80])
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **options}
    return subprocess.run(
        [sys.executable, "-m", "strategy", *map(str, args)],
        env=streams.pop("env", ENV),
        timeout=streams.pop("timeout", 120),
        **streams,
    )


def hostile_tree(tmp_path: Path, name: str = "shared.json", **fields) -> Path:
    doc = orjson.loads(TREE_3.read_bytes())
    doc.update(fields)
    path = tmp_path / name
    path.write_bytes(orjson.dumps(doc))
    return path


def controls(data: bytes) -> set[str]:
    """The characters in terminal output that a terminal acts on (newlines between lines aside)."""
    return {c for c in data.decode() if not c.isprintable() and c != "\n"}


# -- every string from a file that reaches a terminal is escaped ---------------------------------


@pytest.mark.parametrize("command", [["stats"], ["table"], ["compare", str(TREE_3)], ["verify"]])
def test_a_trees_strings_reach_the_terminal_escaped(tmp_path, command):
    tree = hostile_tree(tmp_path, objective=HOSTILE)
    r = strategy(command[0], tree, *command[1:])
    assert r.returncode == 0, r.stderr
    assert not controls(r.stdout) and not controls(r.stderr), controls(r.stdout)
    assert not any(line.startswith(b"strategy: error: forged") for line in r.stdout.splitlines())
    if command[0] != "verify":  # verify does not print the objective
        assert b"\\x1b]2;owned\\x07\\x1b[2J\\nstrategy: error: forged\\u202e\\x00\\x9b31m" in r.stdout


def test_json_reports_escape_what_a_terminal_acts_on(tmp_path):
    tree = hostile_tree(tmp_path, objective=HOSTILE)
    r = strategy("stats", tree, "--json")
    assert r.returncode == 0 and not controls(r.stdout)
    assert orjson.loads(r.stdout)["objective"] == HOSTILE  # the same string, read back


@pytest.mark.parametrize(
    "field,value,expect",
    [
        ("version", "\x1b[2J\nstrategy: ok", "unsupported version \\x1b[2J\\nstrategy: ok"),
        ("game", {"name": "\x1b[31mbulls", "length": 3, "symbols": 10}, "unknown game '\\x1b[31mbulls'"),
    ],
)
def test_error_lines_escape_what_a_file_says(tmp_path, field, value, expect):
    r = strategy("verify", hostile_tree(tmp_path, **{field: value}))
    line = one_line(subprocess.CompletedProcess(r.args, r.returncode, r.stdout.decode(), r.stderr.decode()))
    assert expect in line and not controls(r.stderr)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pydot's parser calls pyparsing's old names
@pytest.mark.parametrize("fmt", ["graphml", "gexf", "dot"])
def test_graph_exports_of_a_tree_with_control_characters_parse(tmp_path, fmt):
    import networkx as nx

    out = tmp_path / f"t.{fmt}"
    r = strategy("graph", hostile_tree(tmp_path, objective=HOSTILE), "--format", fmt, "--max-depth", "2", "-o", out)
    assert r.returncode == 0, r.stderr
    if fmt == "dot":
        import pydot

        assert len(pydot.graph_from_dot_file(str(out))) == 1
        return
    g = nx.read_graphml(out) if fmt == "graphml" else nx.read_gexf(out)
    assert g.number_of_nodes() > 1 and g.nodes["0"]["probe"] == "012"
    if fmt == "graphml":
        assert g.graph["objective"] == "total\\x1b]2;owned\\x07\\x1b[2J\\nstrategy: error: forged\\u202e\\x00\\x9b31m"


@pytest.mark.parametrize("objective", [HOSTILE, "tot$\\frac{a$al"], ids=["controls", "mathtext"])
def test_a_plot_of_a_tree_with_hostile_strings_is_drawn_and_parses(tmp_path, objective):
    """Control characters made an SVG that no XML reader takes; $...$ was read as mathtext and broke the drawing
    (an internal error)."""
    import xml.etree.ElementTree as ElementTree

    out = tmp_path / "p.svg"
    r = strategy("stats", hostile_tree(tmp_path, objective=objective), "--plot", out)
    assert r.returncode == 0, r.stderr
    ElementTree.parse(out)


# -- one file never does two jobs -----------------------------------------------------------------

SOLVE_ROLES = ["-o", "--store", "--partial", "--log", "--incumbent", "--against"]
PAIRS = [
    (a, b) for i, a in enumerate(SOLVE_ROLES) for b in SOLVE_ROLES[i + 1 :] if {a, b} != {"--incumbent", "--against"}
]


def _solve_args(roles: dict[str, str]) -> list[str]:
    args = ["solve", "--game", "bulls:3x6", "--quiet"]
    if "--against" in roles:
        args += ["--objective", "win"]
    for role, name in roles.items():
        args += [role, name]
    return args


@pytest.mark.parametrize("first,second", PAIRS, ids=[f"{a}{b}" for a, b in PAIRS])
def test_one_file_named_for_two_jobs_of_solve_is_refused_before_any_work(tmp_path, capsys, first, second):
    """Every pair of solve's files (a tree, a store, a log) naming one file, by the same name, a symbolic or a hard
    link: refused in one line, the file untouched (`--store s.db -o s.db` replaced the store with the tree, and
    --partial on Ctrl-C and --log did the same)."""
    from strategy import cli

    victim = tmp_path / "precious"
    victim.write_bytes(TREE_3.read_bytes())  # a file any role can read
    (tmp_path / "sym").symlink_to(victim)
    os.link(victim, tmp_path / "hard")
    for alias in ("precious", "sym", "hard", "./precious"):
        CASES.append(f"solve {first} precious {second} {alias}")
        roles = {
            first: str(victim),
            second: str(tmp_path / alias.lstrip("./"))
            if alias != "./precious"
            else os.path.join(str(tmp_path), ".", "precious"),
        }
        start = time.perf_counter()
        assert cli.main(_solve_args(roles)) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"{first} and {second} name the same file" in err[0], err
        assert time.perf_counter() - start < 5  # before any table is built or anything compiled
    assert victim.read_bytes() == TREE_3.read_bytes() and sorted(p.name for p in tmp_path.iterdir()) == [
        "hard",
        "precious",
        "sym",
    ]


@pytest.mark.parametrize(
    "args",
    [
        ["build", "--game", "bulls:3x6", "--strategy", "entropy", "--exact-below", "9", "--store", "{F}", "-o", "{F}"],
        ["improve", "{F}", "--exact-below", "9", "--store", "{F}", "-o", "{tmp}/out.json"],
        ["improve", "{tmp}/tree.json", "--exact-below", "9", "--store", "{F}", "-o", "{F}"],
    ],
)
def test_build_and_improve_refuse_one_file_for_two_jobs(tmp_path, capsys, args):
    from strategy import cli

    victim = tmp_path / "f.json"
    victim.write_bytes(TREE_3.read_bytes())
    (tmp_path / "tree.json").write_bytes(TREE_3.read_bytes())
    CASES.append(" ".join(args))
    assert cli.main([a.replace("{F}", str(victim)).replace("{tmp}", str(tmp_path)) for a in args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "name the same file" in err[0], err
    assert victim.read_bytes() == TREE_3.read_bytes()


def test_reading_one_file_twice_is_no_second_job(tmp_path):
    """Two reads are allowed: a tree given as --incumbent and --against; --trust, which names a file given with
    --incumbent (a qualifier, not a job); compare and race of a tree with itself; /dev/null as two outputs, which
    keeps nothing to lose."""
    tree = tmp_path / "t6.json"
    assert strategy("build", "--game", "bulls:3x6", "--strategy", "entropy", "--quiet", "-o", tree).returncode == 0
    r = strategy(
        "solve",
        "--game",
        "bulls:3x6",
        "--objective",
        "win",
        "--against",
        tree,
        "--incumbent",
        tree,
        "--quiet",
        "-o",
        tmp_path / "win.json",
    )
    assert r.returncode == 0 and (tmp_path / "win.json").exists(), r.stderr
    r = strategy(
        "solve", "--game", "bulls:3x10", "--incumbent", TREE_3, "--trust", TREE_3, "--quiet", "-o", tmp_path / "t.json"
    )
    assert r.returncode == 0 and b"settled with no search" in r.stderr, r.stderr
    assert strategy("compare", TREE_3, TREE_3).returncode == 0
    assert strategy("race", TREE_3, TREE_3).returncode == 0
    r = strategy("solve", "--game", "bulls:3x6", "--quiet", "-o", "/dev/null", "--log", "/dev/null")
    assert r.returncode == 0, r.stderr


# -- standard streams -----------------------------------------------------------------------------


def closing(*fds: int):
    """A preexec_fn that closes standard streams (as `>&-`, `<&-`, `2>&-` do)."""

    def close() -> None:
        for fd in fds:
            os.close(fd)

    return close


@pytest.mark.parametrize("fds", [(1,), (0,), (2,), (0, 1)], ids=[">&-", "<&-", "2>&-", "<&- >&-"])
@pytest.mark.parametrize(
    "command",
    [["stats", str(TREE_3)], ["stats", "-"], ["play", str(TREE_3)], ["solve", "--game", "bulls:3x6", "--quiet"]],
)
def test_a_closed_standard_stream_ends_in_one_line_and_a_failure(fds, command):
    r = strategy(*command, preexec_fn=closing(*fds), stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and b"Traceback" not in r.stderr + r.stdout, r.stderr
    if 2 in fds:
        assert r.stderr == b""
    else:
        lines = r.stderr.decode().strip().splitlines()
        names = {0: "standard input", 1: "standard output"}
        assert len(lines) == 1 and all(names[fd] in lines[0] for fd in fds), lines


def test_progress_never_lands_in_a_tree_when_standard_error_is_closed(tmp_path):
    """`solve > t.json 2>&-` wrote the progress lines into the tree: the first file opened took descriptor 2."""
    out = tmp_path / "t.json"
    with open(out, "wb") as f:
        r = strategy("solve", "--game", "bulls:3x6", stdout=f, preexec_fn=closing(2))
    assert r.returncode == 2 and out.read_bytes() == b""


@pytest.mark.parametrize("redirect", ["1</dev/null", "2</dev/null", ">/dev/full"])
def test_a_stream_open_the_wrong_way_or_full_is_one_line(redirect):
    CASES.append(f"stats {redirect}")
    r = subprocess.run(
        ["bash", "-c", f'"$0" -m strategy stats "$1" {redirect}', sys.executable, str(TREE_3)],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == (0 if redirect.startswith("2") else 1), r.stderr


def test_export_to_dev_stdout_writes_into_a_pipe():
    r = strategy("export", TREE_3, "--format", "csv", "--quiet", "-o", "/dev/stdout")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(b"history,depth") and len(r.stdout.splitlines()) == 778
    reader = subprocess.run(
        [
            "bash",
            "-c",
            '"$0" -m strategy export "$1" --format csv --quiet -o /dev/stdout | head -1',
            sys.executable,
            str(TREES / "bulls-4x10-total.json"),
        ],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
    )
    CASES.append("export -o /dev/stdout | head -1")
    assert reader.stdout == "history,depth,remaining,probe,consistent,questions\n" and reader.stderr == ""


# -- signals: two Ctrl-C in a row -----------------------------------------------------------------


def test_two_ctrl_c_in_a_row_still_write_the_partial_tree(tmp_path):
    """The second Ctrl-C came while the first was being handled: the partial tree was not written and the resource
    tracker warned of leaked semaphores and shared memory. Held now until the wind-up is done."""
    CASES.append("solve --partial then SIGINT twice")
    partial = tmp_path / "partial.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "strategy",
            "solve",
            "--game",
            "mastermind:4x9",
            "--jobs",
            "2",
            "--partial",
            str(partial),
            "-o",
            str(tmp_path / "t.json"),
        ],
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        cwd=tmp_path,
    )
    seen = ""
    while "secret/s" not in seen and "secret]" not in seen:  # the progress bar: the search is under way
        char = proc.stderr.read(1)
        assert char, "the solve ended before it showed progress"
        seen = seen[-20:] + char
    proc.send_signal(signal.SIGINT)
    time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert "leaked" not in err and "resource_tracker" not in err, err
    assert f"written to {str(partial)!r}" in err and err.strip().splitlines()[-1] == "strategy: interrupted"
    from strategy.tree import format as tree_io

    assert tree_io.load(partial).objective == "partial"


# -- the compiler: turned off, or out of memory ----------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["solve", "--game", "bulls:3x6"],
        ["bound", "--game", "bulls:3x6"],
        ["build", "--game", "bulls:3x6", "--strategy", "entropy"],
        ["improve", str(TREE_3), "--exact-below", "9"],
        ["play", "--game", "bulls:3x6", "--noise", "0.1", "--self-test"],
    ],
)
def test_numba_disable_jit_is_refused_in_one_line(command):
    r = subprocess.run(
        [sys.executable, "-m", "strategy", *command],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(ENV, NUMBA_DISABLE_JIT="1"),
    )
    CASES.append(f"NUMBA_DISABLE_JIT=1 {' '.join(command)}"[:80])
    one_line(r, expect="NUMBA_DISABLE_JIT")


def test_a_compiler_out_of_memory_is_one_line(tmp_path):
    """Under `ulimit -v 400000` LLVM ran out of memory while compiling and aborted the process (exit 134, two
    lines from the C++ runtime); the compiler now runs apart under a limit, and its failure is told."""
    CASES.append("ulimit -v 400000 build (first compile)")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (400_000 * 1024, 400_000 * 1024))

    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "strategy",
            "build",
            "--game",
            "bulls:3x6",
            "--strategy",
            "entropy",
            "--quiet",
            "-o",
            str(tmp_path / "t.json"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(ENV, NUMBA_CACHE_DIR=str(tmp_path / "cache")),
        preexec_fn=limit,
    )
    one_line(r, expect="memory limit")
    assert not (tmp_path / "t.json").exists()


# -- a Dask address that never answers ------------------------------------------------------------


class Silent:
    """A TCP server on 127.0.0.1 that accepts connections and, as `http`, answers like an HTTP server, or says
    nothing at all."""

    def __init__(self, http: bool):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.address = f"tcp://127.0.0.1:{self.server.getsockname()[1]}"
        self.http, self.open = http, []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.open.append(conn)
            if self.http:
                conn.sendall(b"HTTP/1.0 400 Bad Request\r\nContent-Type: text/html\r\n\r\n<html>no</html>\r\n")

    def close(self) -> None:
        self.server.close()
        for conn in self.open:
            conn.close()


@pytest.mark.parametrize("http", [False, True], ids=["silent", "http"])
def test_a_scheduler_address_that_never_answers_is_one_line_within_the_connect_timeout(tmp_path, http):
    peer = Silent(http)
    try:
        CASES.append(f"solve --scheduler {'http' if http else 'silent'} peer")
        start = time.perf_counter()
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "strategy",
                "solve",
                "--game",
                "bulls:3x6",
                "--quiet",
                "--scheduler",
                peer.address,
                "-o",
                str(tmp_path / "t.json"),
            ],
            capture_output=True,
            text=True,
            timeout=90,
            env=dict(ENV, DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="2s"),
        )
        took = time.perf_counter() - start
    finally:
        peer.close()
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(lines) == 2, r.stderr  # what it does, then why
    assert lines[1].startswith(f"strategy: error: cannot reach the Dask scheduler at {peer.address}"), lines
    assert took < 60 and not (tmp_path / "t.json").exists()


def test_an_empty_scheduler_address_is_refused():
    one_line(capped("solve", "--game", "bulls:3x6", "--scheduler", ""), expect="--scheduler needs the address")
    one_line(capped("solve", "--game", "bulls:3x6", "--scheduler", "  "), expect="--scheduler needs the address")


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("command", [("verify",), ("stats",), ("play", "--protocol")])
def test_deeply_nested_json_is_one_line_not_a_crash(tmp_path, packed, command):
    """200,000 nested arrays (a 331-byte gzip): orjson before 3.9.15 recursed until the process died (exit 139,
    nothing said); the parser's depth limit makes it a file that is not a tree, in one line."""
    import gzip

    text = b'{"format": "strategy-tree", "tree": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    path = tmp_path / ("deep.json.gz" if packed else "deep.json")
    path.write_bytes(gzip.compress(text) if packed else text)
    r = capped(*command[:1], str(path), *command[1:])
    if command[0] == "play":  # the protocol says it in its own events, and the exit status
        assert r.returncode == 2 and "Traceback" not in r.stderr and '"error"' in r.stdout, (r.returncode, r.stdout)
    else:
        one_line(r, 2, "not valid JSON")


@pytest.mark.parametrize("content", [b"my important notes\n", TREE_3.read_bytes()], ids=["notes", "another game"])
def test_a_partial_file_that_is_not_this_searchs_tree_is_refused_not_overwritten(tmp_path, content):
    """--partial reads an earlier run's tree of the same search; a file that holds anything else (notes, a tree of
    another game) would be replaced by an interruption: refused before any work, and left as it was."""
    path = tmp_path / "victim.json"
    path.write_bytes(content)
    r = capped("solve", "--game", "mastermind:3x4", "--partial", str(path), "-o", str(tmp_path / "t.json"))
    last = r.stderr.strip().splitlines()[-1]  # after the line that names the search
    assert r.returncode == 2 and "Traceback" not in r.stderr and "not a tree of this search" in last, r.stderr
    assert path.read_bytes() == content and not (tmp_path / "t.json").exists()


@pytest.mark.parametrize("command", ["solve", "bound"])
def test_a_store_that_is_refused_is_left_byte_for_byte(tmp_path, command):
    """Another program's SQLite file given as --store is refused, and neither changed (its journal mode was switched
    to WAL before the check) nor given journal files beside it."""
    import sqlite3

    path = tmp_path / "foreign.db"
    with sqlite3.connect(path) as con:
        con.executescript("CREATE TABLE users(name TEXT); INSERT INTO users VALUES ('alice');")
    con.close()
    before = path.read_bytes()
    r = capped(
        command,
        "--game",
        "bulls:3x6",
        "--store",
        str(path),
        *(["-o", str(tmp_path / "t.json")] if command == "solve" else []),
    )
    last = r.stderr.strip().splitlines()[-1]
    assert r.returncode == 2 and "Traceback" not in r.stderr and "not a strategy store" in last, r.stderr
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["foreign.db"]


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
def test_a_signal_during_the_first_compile_stops_in_one_line(tmp_path, signum):
    """On an empty numba cache the first solve compiles for half a minute. A Ctrl-C there used to land inside LLVM:
    a KeyboardInterrupt traceback, then "internal error" (exit 70). The compiler runs in a child process now: the
    command stops at once, in one line, and leaves neither the child nor a tree behind."""
    env = dict(ENV, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "strategy", "solve", "--game", "bulls:4x10", "-o", str(tmp_path / "t.json")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:  # the compile has begun
        if line.startswith("compiling"):
            break
    time.sleep(2)
    os.killpg(proc.pid, getattr(signal, signum))  # a Ctrl-C reaches the whole foreground group
    _, err = proc.communicate(timeout=30)
    status = 130 if signum == "SIGINT" else 143
    assert proc.returncode == status and "Traceback" not in err and "internal error" not in err, err
    assert err.strip().splitlines()[-1] in ("strategy: interrupted", "strategy: terminated by SIGTERM"), err
    assert not (tmp_path / "t.json").exists()
    # the compile's own helper is ended by the kernel with its parent (an exited process waits for init to reap it:
    # not running, not counted)
    listed = subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True, text=True).stdout.split()
    left = [pid for pid in listed if running(pid)]
    assert left == [], left


def running(pid: str) -> bool:
    """Whether a process is there and not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
