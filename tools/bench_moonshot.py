"""Benchmark the engine on the moonshots' own work: worker-seconds per set, this checkout against a baseline.

Usage: python tools/bench_moonshot.py --against DIR [--only KIND ...] [--cases FILE] [--write]
       python tools/bench_moonshot.py --make [--cases FILE]

The cases (tools/bench_moonshot.json, made once by --make and committed, so that every run times the same work)
are drawn from the moonshots' stores (stores/GAME.db, restored from trees/progress/ as tools/regenerate_trees.py
does) and their best trees found (strategy/trees/*-best-found.json.gz), for bulls 5 of 10 and Mastermind 5x8:

- part: a part of the first question bounded by the lookahead as `regenerate_trees.py bound` bounds it (two
  more levels, sets of at most N secrets searched exactly with the cut-off left there);
- solve: a set two questions deep on the best tree's path that the store proves exactly (Mastermind 5x8, whose store
  proves few of those, also sets of 300 to 700 secrets that --make solves), solved with its value + 1 as the
  cut-off (the window a solve with a good incumbent has); its value must come out as the store has it;
- refute: questions of such a set that are not its best, each refuted as a worker's probe task at the set's
  value (the refutations that fill the task logs of the frontier solves).

Each case runs in two worker processes, one importing the strategy package of DIR (a checkout of the baseline
commit, `git worktree add --detach DIR COMMIT`) and one this checkout's, alternately case by case, so that the
machine's load weighs on both alike. The time is the worker process's CPU time for the case (worker-seconds: a
busy machine slows the wall clock, not this), after the kernels are compiled or loaded from numba's cache, with an
empty transposition table. Both must reach the same values (a bound may only rise); a case where they differ is
reported and the run fails. --write saves the table in tools/results/moonshot-bench.md.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tools" / "bench_moonshot.json"
GAMES = {"bulls:5x10": "bulls-5x10", "mastermind:5x8": "mastermind-5x8"}
KINDS = ("part", "solve", "refute")  # of case
# below the frontier bounds' settings (bulls 500-600, Mastermind 300), so that a baseline run takes minutes
PART_EXACT_BELOW = {"bulls:5x10": 400, "mastermind:5x8": 250}
PART_SIZES = (1000, 1500)  # the first question's parts that are bounded in a case: of 1000 to 1500 secrets
SOLVE_SECONDS = (1.0, 40.0)  # sets two deep whose store record took this long (the store's work, its machine)
SOLVE_PER_GAME = 4
UNSTORED_SIZES = (300, 700)  # a game whose store proves too few of the tree's sets two deep: these are solved here
REFUTE_SETS = 2  # per game: of the solve cases, the first ones also give refutation cases
REFUTE_EVERY = 24  # every K-th of a set's questions (in the canonical order) but its best


# -- making the cases (this checkout's package) ----------------------------------------------------------


def make_cases() -> list[dict]:
    """The benchmark's cases from the restored stores and the best trees found."""
    import sqlite3

    import numpy as np

    sys.path.insert(0, str(ROOT))
    from strategy.rules import parse_game
    from strategy.search import objectives
    from strategy.search.known import tree_cost
    from strategy.search.lookahead import Lookahead
    from strategy.search.store import set_key
    from strategy.search.worker import Engine, Spec

    table_module = _table_module()
    cases = []
    for spec, stem in GAMES.items():
        store = ROOT / "stores" / f"{stem}.db"
        if not store.exists():
            raise SystemExit(
                f"{store.relative_to(ROOT)} is missing: restore it first "
                f"(python tools/regenerate_trees.py bound 1 {stem}-total restores it)"
            )
        con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
        gt = table_module.game_table(parse_game(spec))
        costs = objectives.total()
        engine = Engine(gt, Spec(gt.game, costs, False, 20))
        look = Lookahead(gt, costs)
        found = next(
            p for p in (ROOT / "strategy" / "trees", ROOT / "trees") if (p / f"{stem}-best-found.json.gz").exists()
        )
        tree = orjson.loads(gzip.open(found / f"{stem}-best-found.json.gz").read())["tree"]
        S = np.arange(gt.size, dtype=np.int32)
        g1 = gt.index(gt.game.read_code(tree["guess"]))
        b0 = len(gt.answers) - 1
        _, _, b1 = look.probes(S, 0, b0, np.zeros(0, dtype=np.int64))
        solves, unstored = [], []
        for X, answer in parts_of(gt, table_module, S, g1):
            node = tree["next"][answer]
            h1 = [g1]
            if PART_SIZES[0] <= len(X) <= PART_SIZES[1]:
                cases.append(
                    {
                        "kind": "part",
                        "game": spec,
                        "name": f"{answer}",
                        "S": X.tolist(),
                        "d": 1,
                        "history": h1,
                        "b": b1,
                        "levels": 2,
                        "exact_below": PART_EXACT_BELOW[spec],
                        "tree": tree_cost(gt, node, costs, X, 1),
                    }
                )
            if "next" not in node:
                continue
            g2 = gt.index(gt.game.read_code(node["guess"]))
            _, _, b2 = look.probes(X, 1, b1, np.array(h1, dtype=np.int64))
            for Y, answer2 in parts_of(gt, table_module, X, g2):
                row = con.execute(
                    "SELECT value, exact, seconds FROM results WHERE key = ?", (set_key(costs.key, 2, Y),)
                ).fetchone()
                case = {
                    "kind": "solve",
                    "game": spec,
                    "name": f"{answer}/{answer2}",
                    "S": Y.tolist(),
                    "d": 2,
                    "history": [g1, g2],
                    "b": b2,
                }
                if row and row[1] and SOLVE_SECONDS[0] <= row[2] <= SOLVE_SECONDS[1]:
                    solves.append({**case, "beta": row[0] + 1, "value": row[0], "store_seconds": round(row[2], 1)})
                elif not row and UNSTORED_SIZES[0] <= len(Y) <= UNSTORED_SIZES[1]:
                    unstored.append(case)
        if len(solves) < SOLVE_PER_GAME:  # the store proves too few of the tree's sets two deep: solve some here
            unstored.sort(key=lambda c: -len(c["S"]))
            for case in unstored[:: max(1, len(unstored) // (SOLVE_PER_GAME - len(solves)))][
                : SOLVE_PER_GAME - len(solves)
            ]:
                start = time.perf_counter()
                value, _ = engine.solve(
                    np.array(case["S"], dtype=np.int32),
                    2,
                    1 << 40,
                    np.array(case["history"], dtype=np.int64),
                    case["b"],
                    threaded=False,
                )
                solves.append(
                    {
                        **case,
                        "beta": int(value) + 1,
                        "value": int(value),
                        "store_seconds": round(time.perf_counter() - start, 1),
                        "solved_here": True,
                    }
                )
        solves.sort(key=lambda c: c["store_seconds"])
        picked = (
            [solves[round(i * (len(solves) - 1) / max(1, SOLVE_PER_GAME - 1))] for i in range(SOLVE_PER_GAME)]
            if len(solves) > SOLVE_PER_GAME
            else solves
        )
        cases += picked
        for case in picked[:REFUTE_SETS]:
            Y = np.array(case["S"], dtype=np.int32)
            probes, lb, _, _, _, _, _ = engine_probes(engine, Y, case)
            best = first_optimal(engine, Y, case)
            sample = [int(p) for p in probes[::REFUTE_EVERY] if int(p) != best]
            cases.append(
                {
                    **{k: case[k] for k in ("game", "S", "d", "history", "b")},
                    "kind": "refute",
                    "name": case["name"],
                    "beta": case["value"],
                    "probes": sample,
                }
            )
        con.close()
    return cases


def _table_module():
    """The module of the feedback table (strategy.feedback_table, or strategy.engine.table after the layout move)."""
    try:
        from strategy.engine import table
    except ImportError:
        from strategy import feedback_table as table
    return table


def parts_of(gt, table_module, S, probe):
    """The non-winning parts of S under `probe`, each with its answer."""
    members, starts = table_module.split(gt.table, S, probe, len(gt.answers))
    return [
        (members[starts[c] : starts[c + 1]].copy(), gt.answer_str(c))
        for c in range(len(gt.answers))
        if c != gt.win and starts[c + 1] > starts[c]
    ]


def engine_probes(engine, S, case):
    """A set's canonical probes (bound below INF) in the canonical order: (probes, bounds, ...)."""
    import numpy as np

    from strategy.engine import exact

    a = engine._args()
    probes, lb, sq, ex, b_here, stop, fail = exact.probe_bounds(
        a[0],
        a[1],
        a[2],
        a[3],
        a[4],
        a[5],
        a[7],
        a[10],
        a[9],
        S,
        np.int64(case["d"]),
        np.int64(case["b"]),
        a[6],
        np.array(case["history"], dtype=np.int64),
        exact.INF,
        np.int64(-1),
        a[11],
    )
    order = np.lexsort((sq, lb))
    return probes[order], lb[order], sq[order], ex[order], b_here, stop, fail


def first_optimal(engine, S, case) -> int:
    """The question the engine solves the set with (the one left out of its refutation cases)."""
    import numpy as np

    value, probe = engine.solve(
        S, case["d"], case["beta"], np.array(case["history"], dtype=np.int64), case["b"], threaded=False
    )
    if value != case["value"]:
        raise SystemExit(f"{case['game']} {case['name']}: the engine finds {value}, the store holds {case['value']}")
    return int(probe)


# -- running them (whichever package is on the path) -------------------------------------------------------


class Worker:
    """One game's engines in this process, timing cases in CPU seconds."""

    def __init__(self):
        self.engines = {}

    def engine(self, spec: str):
        from strategy.rules import parse_game
        from strategy.search import objectives
        from strategy.search.solve import tt_bits_for
        from strategy.search.worker import Engine, Spec

        if spec not in self.engines:
            gt = _table_module().game_table(parse_game(spec))
            self.engines.clear()
            self.engines[spec] = Engine(gt, Spec(gt.game, objectives.total(), False, tt_bits_for(gt.size)))
        return self.engines[spec]

    def run(self, case: dict) -> dict:
        import numpy as np

        from strategy.engine import exact
        from strategy.search import objectives
        from strategy.search.lookahead import Lookahead
        from strategy.search.worker import Task, run_on

        S = np.array(case["S"], dtype=np.int32)
        history = np.array(case["history"], dtype=np.int64)
        if case["kind"] == "part":
            engine = self.engine(case["game"])
            look = Lookahead(engine.gt, objectives.total(), exact_below=case["exact_below"])
            look.bound(S[:40], case["d"], case["b"], history, 1)  # compiled (or loaded) before the clock starts
            look.engine.tt[:] = 0
            start = time.process_time()
            value = look.bound(S, case["d"], case["b"], history, case["levels"])
            return {
                "seconds": time.process_time() - start,
                "values": [int(value)],
                "nodes": int(look.engine.counters[exact.C_NODES]),
            }
        engine = self.engine(case["game"])
        self.warm(engine, S, case)
        engine.tt[:] = 0
        before = engine.counters.copy()
        start = time.process_time()
        if case["kind"] == "solve":
            value, _ = engine.solve(S, case["d"], case["beta"], history, case["b"], threaded=False)
            values = [int(value)]
        else:
            values = []
            for p in case["probes"]:
                r = run_on(
                    engine, Task(str(p), S, case["d"], history, case["b"], case["beta"], probe=p), None, threaded=False
                )
                values.append(min(r.value, case["beta"]) if not r.exact else -r.value)  # refuted: beta
        seconds = time.process_time() - start
        return {"seconds": seconds, "values": values, "nodes": int((engine.counters - before)[exact.C_NODES])}

    @staticmethod
    def warm(engine, S, case) -> None:
        """Compile (or load from numba's cache) the search's kernels on a small part of the set."""
        import numpy as np

        engine.solve(S[:60], case["d"], 1 << 40, np.array(case["history"], dtype=np.int64), case["b"], threaded=False)


def serve() -> None:
    """Worker mode: read case numbers from stdin, answer one JSON line each."""
    import strategy

    cases = orjson.loads(Path(os.environ["MOONSHOT_CASES"]).read_bytes())
    worker = Worker()
    package = str(Path(strategy.__file__).resolve().parent.parent)
    print(orjson.dumps({"ready": True, "package": package}).decode(), flush=True)
    for line in sys.stdin:
        print(orjson.dumps(worker.run(cases[int(line)])).decode(), flush=True)


class Process:
    """A worker process importing the strategy package of `path`."""

    def __init__(self, path: Path, cases: Path):
        env = dict(os.environ, PYTHONPATH=str(path), MOONSHOT_CASES=str(cases))
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=path,
        )
        package = self.read()["package"]
        if Path(package) != path.resolve():  # both sides timing one package would print a ratio of nothing
            self.close()
            raise SystemExit(f"a benchmark process imported the strategy package of {package}, not of {path}")

    def read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"a benchmark process failed (exit {self.proc.wait()})")
        return orjson.loads(line)

    def run(self, i: int) -> dict:
        self.proc.stdin.write(f"{i}\n")
        self.proc.stdin.flush()
        return self.read()

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def label(case: dict) -> str:
    game = "bulls 5x10" if case["game"].startswith("bulls") else "MM 5x8"
    what = {"part": "first question's part", "solve": "set two deep", "refute": "refutations"}[case["kind"]]
    extra = (
        f", {len(case['probes'])} questions at {case['beta']}"
        if case["kind"] == "refute"
        else f", 2 levels, exact below {case['exact_below']}"
        if case["kind"] == "part"
        else f", value {case['value']}"
    )
    return f"{game} {case['name']}: {what} of {len(case['S'])}{extra}"


def agree(case: dict, old: list[int], new: list[int]) -> bool:
    """Whether the new engine's results are the baseline's (a lookahead bound may only rise)."""
    if case["kind"] == "part":
        return new[0] >= old[0]
    if case["kind"] == "solve":
        return new == old == [case["value"]]
    return new == old


def main() -> None:
    if sys.argv[1:] == ["--worker"]:  # the package on PYTHONPATH (this checkout's or the baseline's), not ROOT's
        serve()
        return
    sys.path.insert(0, str(ROOT))
    from strategy.cli.options import Parser  # errors in one line, as every tool and command

    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", type=Path, metavar="DIR", help="a checkout of the baseline commit")
    parser.add_argument("--cases", type=Path, default=CASES, help="the cases file (default %(default)s)")
    parser.add_argument("--only", nargs="+", choices=KINDS, help="these kinds of case only")
    parser.add_argument("--make", action="store_true", help="make the cases file from the stores")
    parser.add_argument("--write", action="store_true", help="save the table in tools/results/moonshot-bench.md")
    args = parser.parse_args()
    if args.make:
        cases = make_cases()
        args.cases.write_bytes(orjson.dumps(cases))
        print(f"{len(cases)} cases written to {args.cases}")
        return
    if args.against is None or not (args.against / "strategy" / "engine" / "exact.py").is_file():
        parser.error("--against DIR: a directory holding the baseline's strategy package")
    if not args.cases.is_file():
        parser.error(f"no cases file {args.cases} (make it with --make)")
    try:
        cases = orjson.loads(args.cases.read_bytes())
    except (OSError, orjson.JSONDecodeError) as e:
        parser.error(f"--cases {args.cases}: {e}")
    if not isinstance(cases, list) or not all(isinstance(c, dict) and c.get("kind") in KINDS for c in cases):
        parser.error(f"--cases {args.cases}: not a list of cases (made by --make)")
    chosen = [i for i, c in enumerate(cases) if not args.only or c["kind"] in args.only]
    old, new = Process(args.against.resolve(), args.cases.resolve()), Process(ROOT, args.cases.resolve())
    rows, totals, failed = [], [0.0, 0.0], False
    try:
        for i in chosen:
            a, b = old.run(i), new.run(i)
            ok = agree(cases[i], a["values"], b["values"])
            failed |= not ok
            totals[0] += a["seconds"]
            totals[1] += b["seconds"]
            ratio = a["seconds"] / max(b["seconds"], 1e-9)
            value = "" if cases[i]["kind"] == "refute" else f" {a['values'][0]} -> {b['values'][0]}"
            rows.append((label(cases[i]), a, b, ratio, ok, value))
            print(
                f"{label(cases[i])}: {a['seconds']:8.2f} s -> {b['seconds']:8.2f} s  {ratio:6.2f}x  nodes "
                f"{a['nodes']} -> {b['nodes']}{value}{'' if ok else '  RESULTS DIFFER'}",
                flush=True,
            )
    finally:
        old.close()
        new.close()
    print(f"total: {totals[0]:.1f} -> {totals[1]:.1f} worker-seconds, {totals[0] / max(totals[1], 1e-9):.2f}x")
    if args.write:
        write(rows, totals, args.against)
    if failed:
        raise SystemExit("the engines disagree on some case")


def write(rows: list, totals: list[float], against: Path) -> None:
    """The table of one run, in tools/results/moonshot-bench.md."""
    commit = (
        subprocess.run(
            ["git", "-C", str(against), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        or "?"
    )
    lines = [
        "**The engine on the moonshots' own work (tools/bench_moonshot.py)**",
        "",
        f"| case | baseline ({commit}) | this engine | ratio | result |",
        "|---|---|---|---|---|",
    ]
    for name, a, b, ratio, ok, value in rows:
        lines.append(
            f"| {name} | {a['seconds']:.2f} s | {b['seconds']:.2f} s | {ratio:.2f}x | "
            f"{'same' if ok else 'DIFFERENT'}{value} |"
        )
    lines.append(
        f"| **total** | **{totals[0]:.1f} s** | **{totals[1]:.1f} s** | **{totals[0] / max(totals[1], 1e-9):.2f}x** | |"
    )
    lines += [
        "",
        "Worker-seconds: each process's CPU time for the case, both processes alternating case by case in one "
        "run, kernels compiled before the clock starts, empty transposition tables. A part's result is its "
        "lookahead bound (it may only rise); the others' are exact values or refutations, equal.",
    ]
    out = ROOT / "tools" / "results" / "moonshot-bench.md"
    tmp = out.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n")
    os.replace(tmp, out)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("interrupted")
