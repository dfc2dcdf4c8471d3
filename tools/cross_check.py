"""Second route for shipped trees: solve them again on a Dask LocalCluster and compare with the shipped file.

Usage: python tools/cross_check.py NAME ... [--workers 2] [--write]

Each NAME is a tree of tools/regenerate_trees.py (core or frontier). The same `strategy solve` runs with
--scheduler on a fresh LocalCluster (127.0.0.1, one thread per worker, no store, no task log), and its proven figures
and tree must equal the shipped file's: a different executor, task order and process layout give the same
canonical tree. The outcome of each check is printed (and saved for the README with --write, beside the
checks of earlier runs).
"""

from __future__ import annotations

import codecs
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from benchlib import LOCAL_CLUSTER, merged_rows, write_table  # noqa: E402
from regenerate_trees import CORE, Regenerator  # noqa: E402

from strategy.cli.options import Parser, int_in  # noqa: E402
from strategy.interrupts import signals_unwrapped  # noqa: E402
from strategy.tree import format as tree_io  # noqa: E402

CHECKOUT = Regenerator()  # the checkout's shipped trees and frontier solves


def from_nothing(args: list[str]) -> list[str]:
    """The solve's arguments without its store (trusted) and task log: the check starts from nothing and leaves the
    frontier's files (and a fresh clone, which has no stores/ folder) as they are."""
    store = args[args.index("--store") + 1] if "--store" in args else None
    out, skip = [], False
    for i, a in enumerate(args):
        if skip:
            skip = False
        elif a in ("--store", "--log") or (a == "--trust" and args[i + 1] == store):
            skip = True
        else:
            out.append(a)
    return out


def label(name: str) -> str:
    """A shipped tree as the table names it."""
    return f"`{CHECKOUT.shipped_path(name).name}`"


def proven_text(proven: dict) -> str:
    """A proof record as the table shows it: `total 20471` or `worst 6, fewest_at_worst 767`."""
    return ", ".join(f"{k} {v}" for k, v in proven.items())


def relayed(pipe: int) -> str:
    """Read the solve's standard error to its end: its progress bar (redrawn after each carriage return) goes on to
    this terminal as it comes, its lines are returned (a failed solve's message, named after the tree by check)."""
    held, rest = [], ""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")  # a bar's block may span two reads
    while chunk := os.read(pipe, 65536):
        rest += decoder.decode(chunk)
        while (cut := min((i for i in (rest.find("\r"), rest.find("\n")) if i >= 0), default=-1)) >= 0:
            piece, rest = rest[: cut + 1], rest[cut + 1 :]
            if piece.endswith("\r"):
                sys.stderr.write(piece)
                sys.stderr.flush()
            else:
                held.append(piece)
    return "".join(held) + rest


def check(name: str, args: list[str], address: str) -> tuple[bool, float, dict]:
    """Solve `name` again on the cluster at `address`: whether tree and proof equal the shipped file's, the
    seconds taken, the proof. On a terminal the solve's progress bar shows (a check can take an hour)."""
    shipped = tree_io.load(CHECKOUT.shipped_path(name))
    show = sys.stderr.isatty()
    env = dict(os.environ, COLUMNS=str(os.get_terminal_size(sys.stderr.fileno()).columns)) if show else None
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "again.json"
        start = time.perf_counter()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "strategy",
                "solve",
                *from_nothing(args),
                "--scheduler",
                address,
                *([] if show else ["--quiet"]),
                "-o",
                str(out),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=ROOT,
            env=env,
        )
        try:
            message = relayed(proc.stderr.fileno())
            proc.wait()
        except BaseException:  # a Ctrl-C: the solve, in the same process group, has it too; it writes nothing, so
            proc.kill()  # what it would still do (say what it had proven) is not waited for, but it ends with this tool
            proc.wait()
            raise
        took = time.perf_counter() - start
        if proc.returncode:
            raise SystemExit(f"{name}: {(message.strip().splitlines() or ['the solve failed'])[-1]}")
        again = tree_io.load(out)
    same = again.root == shipped.root and again.generator["proven"] == shipped.generator["proven"]
    return same, took, again.generator["proven"]


def not_a_failed_gather(record: logging.LogRecord) -> bool:
    """False for the scheduler's error on a gather whose key went back to the queue as a Ctrl-C came: the client
    that asked waits for the task again (or is gone), so it is not news, and a Ctrl-C must end in one line."""
    return not record.getMessage().startswith("Couldn't gather keys")


logging.getLogger("distributed.scheduler").addFilter(not_a_failed_gather)  # the scheduler runs in this process


def main() -> None:
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="+", metavar="NAME")
    parser.add_argument("--workers", type=int_in(1, 256, "--workers"), default=2)  # none would wait forever
    parser.add_argument("--write", action="store_true", help="save the table in tools/results/")
    args = parser.parse_args()
    table = dict(CORE, **CHECKOUT.frontier)
    unknown = [n for n in args.names if n not in table or CHECKOUT.shipped_path(n) is None]
    if unknown:
        raise SystemExit(f"{unknown[0]!r} is not a shipped tree of tools/regenerate_trees.py")
    # the cluster's notes as it closes (the workers' on the tasks a Ctrl-C cancelled, the scheduler's on the workers it
    # loses) are not news: a worker lost in a check is reported by the solve, whose tasks it held. Dask reads this at
    # import, here and in each worker process
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "error")
    from distributed import LocalCluster

    rows = []
    # the worker processes inherit an ignored SIGINT: a Ctrl-C stops the solve and this process, which closes the
    # cluster, instead of every worker printing its own KeyboardInterrupt traceback
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        cluster = LocalCluster(n_workers=args.workers, **LOCAL_CLUSTER)
    finally:
        signal.signal(signal.SIGINT, previous)
    with cluster:
        for name in args.names:
            same, took, proven = check(name, table[name], cluster.scheduler_address)
            verdict = "identical tree and proof" if same else "DIFFERENT"
            timing = f"{took:.1f} s, load {os.getloadavg()[1]:.1f}"
            print(
                f"{name}: {verdict} on a Dask LocalCluster of {args.workers} workers ({timing}); proven {proven}",
                flush=True,
            )
            rows.append([label(name), proven_text(proven), verdict, timing])
            if not same:
                raise SystemExit(1)
    if args.write:
        rows, note = merged_rows("frontier-cross-check", rows, 1)
        checked = {row[0] for row in rows}
        unchecked = [label(name) for name in table if CHECKOUT.shipped_path(name) and label(name) not in checked]
        if unchecked:
            note += f" Not solved again by this route yet: {'; '.join(unchecked)}."
        write_table(
            "frontier-cross-check",
            "Shipped trees solved again on a Dask LocalCluster (tools/cross_check.py)",
            ["tree", "proven again", "compared with the shipped file", "time, load"],
            rows,
            f"{args.workers} worker processes, one thread each, on 127.0.0.1; no store. The load is the "
            "machine's 5-minute load average as the check ended; the cluster's workers and scheduler and the "
            "solve's driver count in it, so a check alone on 2 cores shows more than 2." + note,
        )


if __name__ == "__main__":
    try:
        with signals_unwrapped():
            sys.exit(main())
    except KeyboardInterrupt:  # the solve and the cluster share the process group: they stop too
        sys.exit("cross_check.py: interrupted (nothing written)")
