"""What the benchmarks share: running a whole process and measuring it, and the peer's game names.

Each measurement is one process from start to exit (wall time and peak resident memory), because that
is what a user waits for: interpreter and import time included. Linux carries the launching process's
memory high-water mark across fork and exec, so a process started from this Python would report at least
this Python's peak; GNU time (Debian package `time`) starts it from a small process and reports its own
peak. Without GNU time, wait4's figure is used: an upper bound.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the tools import the package of this checkout, as their children run it
RESULTS = ROOT / "tools" / "results"
GNU_TIME = shutil.which("time", path="/usr/bin:/bin")
# a LocalCluster of one-thread workers on this machine only; its scheduler's HTTP server (health and metrics
# routes, started even with no dashboard) takes a free port, not 8787: a second cluster then starts silently
LOCAL_CLUSTER = {
    "threads_per_worker": 1,
    "processes": True,
    "host": "127.0.0.1",
    "dashboard_address": None,
    "scheduler_kwargs": {"dashboard_address": "127.0.0.1:0"},
}


@dataclass
class Run:
    seconds: float
    peak_mb: float
    stdout: str
    stderr: str
    status: int


def measure(argv: list[str], env: dict | None = None) -> Run:
    """Run a command to completion: its wall time and its own peak resident memory."""
    with (
        tempfile.TemporaryFile("w+") as out,
        tempfile.TemporaryFile("w+") as err,
        tempfile.NamedTemporaryFile("r") as peak,
    ):
        launcher = [GNU_TIME, "-q", "-f", "%M", "-o", peak.name] if GNU_TIME else []
        start = time.perf_counter()
        proc = subprocess.Popen(
            launcher + argv, stdout=out, stderr=err, text=True, env=env or dict(os.environ, PYTHONPATH=str(ROOT))
        )
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        kb = int(peak.read().split()[-1]) if GNU_TIME else usage.ru_maxrss
        out.seek(0)
        err.seek(0)
        return Run(seconds, kb / 1024, out.read(), err.read(), proc.returncode)


def strategy(*args: str) -> list[str]:
    return [sys.executable, "-m", "strategy", *args]


def check_peer(path: str | None) -> None:
    """Exit with one line unless `path` (the --peer option) is absent or an executable file."""
    if path is not None and not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise SystemExit(f"--peer {path}: not an executable file (build mmstrat with ../shared/tools/build-mmstrat.sh)")


def peer_rules(spec: str) -> str | None:
    """mmstrat's name of a game (-r), or None when it has no such game (no leading zero)."""
    name, size, *rest = spec.split(":")
    if rest:
        return None
    n, k = size.split("x")
    return f"p{n}c{k}{'n' if name == 'bulls' else 'r'}"


PEER_STRATEGY = {
    "expected-size": "minavg",
    "entropy": "entropy",
    "minimax": "minmax",
    "most-parts": "parts",
    "optimal": "optimal",
}


def peer_total(out: str) -> int | None:
    """The total from `mmstrat -S -q` output (total:worst:count)."""
    for line in reversed(out.strip().splitlines()):
        head = line.strip().split(":")[0]
        if head.isdigit():
            return int(head)
    return None


def saved_rows(name: str) -> list[list[str]]:
    """The cells of each row of the saved table `name` (none when it was never written)."""
    path = RESULTS / f"{name}.md"
    rows = []
    if path.exists():
        for line in path.read_text().splitlines()[4:]:  # after write_table's title, blank line, header, rule
            if not line.startswith("| "):
                break
            rows.append([cell.strip() for cell in line.strip()[1:-1].split("|")])
    return rows


def merged_rows(name: str, rows: list[list[str]], key: int) -> tuple[list[list[str]], str]:
    """`rows`, plus the rows of the saved table `name` that this run did not measure (matched on the first
    `key` columns) in their old places: a run of the quick cases does not erase the long ones measured before.
    Also a sentence for the table's note naming the kept rows, or the measured ones when they are fewer (empty
    when no row is kept)."""
    fresh = {tuple(row[:key]): row for row in rows}
    measured = [" ".join(k) for k in fresh]
    out, kept = [], []
    for row in saved_rows(name):
        if tuple(row[:key]) not in fresh:
            kept.append(" ".join(row[:key]))
        out.append(fresh.pop(tuple(row[:key]), row))
    out += fresh.values()
    if not kept:
        return out, ""
    print(f"kept {len(kept)} rows of the saved table {name!r}, not measured by this run")
    if len(kept) <= len(measured):
        return out, f" Kept from an earlier run, not measured by the last one: {'; '.join(kept)}."
    return out, f" Measured by the last run: {'; '.join(measured)}; the other rows are kept from earlier runs."


def write_table(name: str, title: str, header: list[str], rows: list[list[str]], note: str) -> Path:
    """A Markdown table for the README's benchmarks block (tools/readme.py includes every results file)."""
    RESULTS.mkdir(exist_ok=True)
    lines = [f"**{title}**", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += ["", note]
    path = RESULTS / f"{name}.md"
    path.write_text("\n".join(lines) + "\n")
    return path


IMPORT_PROBE = """import os, sys
sys.modules.setdefault("scipy.linalg.cython_blas", None)  # as strategy does: no SciPy BLAS probe
import numba
os._exit(0)  # as strategy does: no interpreter teardown
"""
CALL_PROBE = IMPORT_PROBE.replace(
    "import numba\n",
    """import numba


@numba.njit(cache=True)
def f(x):
    return x


f(1)
""",
)


def startup() -> str:
    """The fixed cost every process pays before any search: Python, NumPy and numba, measured here (the best
    of three runs of each probe, which exits as strategy does)."""

    def best(command: list[str]) -> float:
        runs = [measure(command) for _ in range(3)]
        if any(r.status for r in runs):
            raise SystemExit(f"the start-up probe failed: {runs[0].stderr}")
        return min(r.seconds for r in runs)

    with tempfile.TemporaryDirectory() as tmp:
        for name, text in (("imports.py", IMPORT_PROBE), ("calls.py", CALL_PROBE)):
            (Path(tmp) / name).write_text(text)
        measure([sys.executable, str(Path(tmp) / "calls.py")])  # compiles and caches
        bare = best([sys.executable, "-c", "pass"])
        numba_import = best([sys.executable, str(Path(tmp) / "imports.py")])
        first_call = best([sys.executable, str(Path(tmp) / "calls.py")])
    return (
        f"A bare Python process takes {bare:.2f} s here, one that imports numba {numba_import:.2f} s, and one that "
        f"also calls a cached one-line compiled function {first_call:.2f} s (numba loads its type registries at "
        f"the first call; both skip SciPy's BLAS probe and the teardown, as strategy does): the floor under every "
        f"row."
    )
