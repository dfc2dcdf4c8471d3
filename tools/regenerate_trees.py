"""Regenerate every tree shipped in strategy/trees/ with the exact engine (the one script that does it).

Usage: python tools/regenerate_trees.py solve [NAME ...] [--frontier] [--missing] [--budget SECONDS]
                                            [--jobs N | --scheduler tcp://HOST:PORT] [--incumbent FILE ...]
       python tools/regenerate_trees.py table
       python tools/regenerate_trees.py gaps
       python tools/regenerate_trees.py improve N [--budget SECONDS] [NAME ...]
       python tools/regenerate_trees.py pilot K [--budget SECONDS] [NAME ...]
       python tools/regenerate_trees.py bound K [--exact-below N] [--budget SECONDS] [NAME ...]

(Before these commands the steps were flags: `[NAME ...] [--frontier] ...` is now `solve [NAME ...] [--frontier] ...`;
`--frontier --table` is `table`; `--frontier --improve N`, `--frontier --pilot K` and `--frontier --bound K
[--exact-below N]` are `improve N`, `pilot K` and `bound K [--exact-below N]`, which always take the frontier's trees.)

solve: each tree is solved in a fresh `strategy solve` process, verified by it before writing, and written through
a temporary file (gzipped when over 150 kB). With --frontier the open games are solved too (every objective of
the frontier games, then the moonshots bulls 5x10 and Mastermind 5x8), each with a store and a task log in
stores/ (outside git), so that an interrupted run resumes where it stopped: run the same command again. The
store of an unfinished solve also ships, compacted (its exact results and its slower bounds), as
trees/progress/GAME.db.xz and then, run by run, what it gained in chunks GAME.2.db.xz, GAME.3.db.xz, ... (the
last one grows to 1 MB before the next begins); it comes back
from there, with the time spent on it, on a machine without it.
--budget interrupts a solve after that many seconds (as Ctrl-C would: the store keeps what was proven, and
the best complete tree found, with its proven lower bound and the time spent on the store, is verified and
shipped as strategy/trees/NAME-best-found.json.gz) and moves on; --missing skips trees already shipped; --scheduler
runs every solve on a Dask cluster instead of local processes (the open games need one). Every solve
is given the shipped trees of its game, best found included (as `strategy solve --incumbent`), so neither the
best tree found nor the proven bound gets worse from one run to the next, even on a machine without the
stores; --incumbent FILE gives the solves of that file's game one more tree (say, a greedy tree with exact
endgames from `strategy build --exact-below`): the best tree found takes, node by node, the cheapest of them.
At the end of every command (but a solve without --frontier) the table of unfinished solves
(tools/results/frontier-unfinished.md: bound, best tree, gap, time spent, projected time on a cluster) is
regenerated from the shipped trees, and after every command the README's tables; `table` does only that.

The three other commands work, instead of solving, on the frontier's best trees found (all of them, or the NAMEs):
improve N makes every subtree over at most N secrets of the best trees found optimal (`strategy improve`: never
deeper than the tree's worst case, for the fewest secrets at that depth when the solve stopped in a fewest-at-D
stage; --budget stops it as well), which the next run starts from; the endgames it finishes are kept in a store of
their own (stores/GAME-endgames.db, shipped like the solve's), so that the next improve searches only the others.
pilot K builds the entropy pilot's tree (`strategy build --pilot K`), gives it the best tree's exact endgames
(below as many secrets, through the same store; --budget stops them) and merges the two node by node: the cheaper
tree is kept, with a record of the pilot (the greedy levels above the endgames are where a best tree found still
gains most). bound K raises their proven bounds by lookahead (`strategy bound`, up to K levels, one more at a time
while --budget lasts; with --exact-below N, sets of at most N secrets searched exactly; the exact values and
bounds the solve's store holds are read where the lookahead meets them, and what the bound proves is kept there
and shipped with it, so a bound stopped by --budget resumes where it was on the next run). gaps says where the gap
of each unfinished least-total solve lies: for each answer to its best tree's first question, what the tree spends
there and what is proven of that set (tools/results/frontier-gaps.md).

The projection is an extrapolation, not a proof: the worker seconds spent so far divided by the share of
the search the progress bar counts as settled, run on 64 workers at the parallel efficiency that
tools/simulate_scaling.py measures on the logged tasks of the latest runs (an hour of worker time).

The folders the tool reads and writes are a `Paths` (the checkout's by default), held with the frontier's solves by
a `Regenerator`, whose methods are the steps: the tests give them temporary folders.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gzip
import lzma
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson

ROOT = Path(__file__).resolve().parent.parent  # the checkout whose code runs (`python -m strategy` from here)
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from benchlib import RESULTS, write_table  # noqa: E402
from readme import PUBLISHED, published_key  # noqa: E402
from simulate_scaling import DISPATCH, makespan, started  # noqa: E402
from simulate_scaling import load as load_log  # noqa: E402

from strategy.cli.options import MAX_LOOKAHEAD, Parser  # noqa: E402
from strategy.engine.table import game_table  # noqa: E402
from strategy.files import FileError, write_atomic  # noqa: E402
from strategy.interrupts import signals_unwrapped  # noqa: E402
from strategy.rules import GameError  # noqa: E402
from strategy.search import objectives  # noqa: E402
from strategy.search.known import merged_tree  # noqa: E402
from strategy.search.store import Store, compact, merge  # noqa: E402
from strategy.tree import format as tree_io  # noqa: E402
from strategy.tree.shipped import write_manifest  # noqa: E402
from strategy.tree.verify import verify, verify_file  # noqa: E402

GZIP_ABOVE = 150_000  # bytes: larger trees ship gzipped, so that the package stays small
SHIP_MIN_SECONDS = 0.02  # bounds quicker to prove than this are left out of a shipped store (found again at once)
SHIP_CHUNK_BYTES = 1_000_000  # a shipped store's last chunk under this size takes the next run's results in

CORE = {
    "bulls-3x10-total": ["--game", "bulls:3x10"],
    "bulls-4x10-total": ["--game", "bulls:4x10"],
    "bulls-4x10-worst-then-fewest": ["--game", "bulls:4x10", "--objective", "worst-then-fewest"],
    "bulls-4x10-nz-total": ["--game", "bulls:4x10:nz"],
    "mastermind-4x6-total": ["--game", "mastermind:4x6"],
    "mastermind-4x6-total-within-5": ["--game", "mastermind:4x6", "--max-depth", "5"],
}
FRONTIER_GAMES = [
    "mastermind:4x8",
    "mastermind:5x5",
    "mastermind:4x9",
    "bulls:5x8",
    "bulls:5x9",
    "mastermind:5x6",
    "bulls:4x10:nz",
    "mastermind:5x7",
]
FRONTIER_OBJECTIVES = {
    "total": [],
    "worst": ["--objective", "worst"],  # the minimum worst case, then the minimum total within it
    "worst-then-fewest": ["--objective", "worst-then-fewest"],
    "consistent-total": ["--consistent-only"],
}


MOONSHOTS = {
    "bulls-5x10-total": ["--game", "bulls:5x10"],
    "mastermind-5x8-total": ["--game", "mastermind:5x8"],
    "mastermind-5x8-consistent-total": ["--game", "mastermind:5x8", "--consistent-only"],
}
PROJECTED_WORKERS = 64
GAP_SEARCH_BELOW = 300  # `gaps`: a part of the first question with nothing stored is searched exactly up to this size
EFFICIENCY_SAMPLE = 3600.0  # worker seconds of the latest runs whose task logs give the efficiency on PROJECTED_WORKERS


@dataclasses.dataclass(frozen=True)
class Paths:
    """The folders the tool reads and writes."""

    trees: Path  # the shipped trees (package data), best trees found included
    stores: Path  # the frontier's stores, task logs and time records (outside git)
    partial: Path  # the best tree each solve writes as it goes (`strategy solve --partial`), before it ships
    progress: Path  # the stores of unfinished solves, compacted, so that the next machine resumes them

    @classmethod
    def under(cls, root: Path) -> Paths:
        """The folders of a checkout at `root` (or of any folder laid out like one)."""
        return cls(
            root / "strategy" / "trees", root / "stores", root / "build" / "partial", root / "trees" / "progress"
        )


CHECKOUT = Paths.under(ROOT)


def frontier_solves(stores: Path) -> dict[str, list[str]]:
    """The frontier solves in order, each with its game's store and its own task log in `stores`. The store is
    trusted (`--trust`): one restored from the shipped copies was sealed on another machine, and a proof that
    uses its bounds names it."""
    out = {}
    for game in FRONTIER_GAMES:
        stem = game.replace(":", "-")
        for name, extra in FRONTIER_OBJECTIVES.items():
            key = f"{stem}-{name}"
            if key in CORE or (game == "bulls:4x10:nz" and name == "total"):
                continue
            probes = "-consistent" if "--consistent-only" in extra else ""  # a store holds one probe rule
            out[key] = ["--game", game, *extra, *kept_in(stores / f"{stem}{probes}.db")]
    for key, args in MOONSHOTS.items():
        out[key] = [*args, *kept_in(stores / f"{key.rsplit('-total', 1)[0]}.db")]
    return {key: [*args, "--log", str(stores / f"{key}.log")] for key, args in out.items()}


def kept_in(store: Path) -> list[str]:
    """The options of a solve, bound or improve that keeps its results in the project's own `store`, trusted (a
    store restored from its shipped copy holds no seal of this installation)."""
    return ["--store", str(store), "--trust", str(store)]


def given_trees(files: list[str]) -> dict[str, list[Path]]:
    """The tree files given with --incumbent, by the game they are for (a file that is not a tree: one line)."""
    out: dict[str, list[Path]] = {}
    for file in files:
        try:
            doc = tree_io.load(file)
        except (tree_io.TreeError, FileError, GameError) as e:
            raise SystemExit(f"--incumbent: {e}") from None
        out.setdefault(doc.game.spec, []).append(Path(file).resolve())
    return out


def store_path(args: list[str]) -> Path | None:
    """The store a solve keeps its results in (None for the core trees, solved without one)."""
    return Path(args[args.index("--store") + 1]) if "--store" in args else None


def endgame_store(args: list[str]) -> Path | None:
    """Where the exact endgames of a frontier solve's best tree found are kept (improve): a store beside the
    solve's, since its sets are keyed by the tree's depth-capped objective, which the solve never reads."""
    store = store_path(args)
    return store.with_name(f"{store.stem}-endgames.db") if store is not None else None


def unpacked(chunks: list[Path], folder: Path) -> list[Path]:
    """The shipped chunks of a store decompressed into `folder`, in their order."""
    out = []
    for i, chunk in enumerate(chunks):
        try:
            data = lzma.decompress(chunk.read_bytes())
        except lzma.LZMAError as e:
            raise SystemExit(
                f"{os.path.relpath(chunk, ROOT)} is damaged ({e}): delete the store's files in "
                f"{os.path.relpath(chunk.parent, ROOT)} to start it afresh"
            ) from None
        out.append(folder / f"{i}.db")
        out[-1].write_bytes(data)
    return out


def exactly(exact_below: int | None, stored: int | None = None) -> str:
    """How a lookahead bound treated small sets, and how many exact results of its store it read, for the table
    and the log."""
    return (f" and exact search below {exact_below} secrets" if exact_below else "") + (
        f" and the {stored} exact results of its store" if stored else ""
    )


def bound_options(bound_of: str) -> list[str]:
    """The options of `strategy bound` for the stage a best tree found is bounded on."""
    if bound_of == "total":
        return []
    for prefix, option in (("total-within-", "--max-depth"), ("fewest-at-", "--fewest-at")):
        if bound_of.startswith(prefix):
            return [option, bound_of.removeprefix(prefix)]
    raise SystemExit(f"no lookahead bound for a {bound_of} stage")


def efficiency(runs: list[list[dict]]) -> float:
    """The parallel efficiency on PROJECTED_WORKERS of the latest runs (each replayed as it ran) that together
    hold EFFICIENCY_SAMPLE worker seconds: a short run's few hundred seconds of tasks cannot fill 64 workers,
    and alone it would halve the efficiency of a solve that had filled them for hours."""
    one = many = sampled = 0.0
    for rows in reversed(runs):
        one += makespan(rows, 1)
        many += makespan(rows, PROJECTED_WORKERS, DISPATCH)
        sampled += sum(r["seconds"] for r in rows)
        if sampled >= EFFICIENCY_SAMPLE:
            break
    return one / many / PROJECTED_WORKERS


def projected_hours(record: dict, progress: float) -> float:
    """The worker time so far divided by the settled share, run on the record's workers at its efficiency."""
    if progress <= 0 or record["efficiency"] <= 0:
        return float("inf")
    return record["worker_seconds"] / progress / (record["workers"] * record["efficiency"]) / 3600


def last_run_hours(record: dict) -> float | None:
    """The share still open at the rate the last run settled it (None when the record has no last run): the
    settled share grows fastest at the start, so this rate is the slower and likelier one once a run resumes."""
    run = record.get("last_run")
    if not run or record["efficiency"] <= 0:
        return None
    gained = run["settled_after"] - run["settled_before"]
    if gained <= 0:
        return float("inf")
    return (
        (1 - run["settled_after"]) * run["worker_seconds"] / gained / (record["workers"] * record["efficiency"]) / 3600
    )


def projection(record: dict, progress: float) -> str:
    """The projected proof at the average rate of every run, then at the last run's rate when it resumed a store."""
    overall = duration(projected_hours(record, progress))
    last = last_run_hours(record)
    if last is None or record["last_run"]["settled_before"] <= 0:
        return overall
    if last == float("inf"):
        return f"{overall}; unknown at the last run's rate (it settled no more)"
    return f"{overall}; {duration(last)} at the last run's rate"


def duration(hours: float) -> str:
    """A projected time, readable whatever its size."""
    if hours == float("inf"):
        return "unknown (no task finished yet)"
    return f"{hours:,.1f} h" if hours >= 1 else f"{hours * 60:.0f} min"


def at_depth(stats, bound_of: str) -> int:
    """The secrets a tree finds at the depth a fewest-at-D stage counts."""
    depth = int(bound_of.removeprefix("fewest-at-"))
    return stats.depth_counts[depth] if depth < len(stats.depth_counts) else 0


def best_found(stats, bound_of: str, generator: dict) -> str:
    """The best tree found, led by the figure the stage minimises (and the size of its exact endgames)."""
    endgame = generator.get("exact_endgame")
    below = f", exact below {endgame['below']} secrets" if endgame else ""
    if endgame and endgame.get("unfinished"):  # a run stopped by its budget
        below += f" but for {endgame['unfinished']} of its {endgame['subtrees']} endgames"
    if generator.get("pilots"):  # merged node by node with the pilot's trees: some of its nodes are theirs
        below += f", upper levels partly by the entropy pilot ({generator['pilots'][-1]['width']})"
    if bound_of.startswith("fewest-at-"):
        return (
            f"{at_depth(stats, bound_of)} at {bound_of.removeprefix('fewest-at-')} (total {stats.total}, "
            f"average {stats.average:.4f}){below}"
        )
    return f"{stats.total} ({stats.average:.4f}), worst {stats.worst}{below}"


@dataclasses.dataclass
class Regenerator:
    """The tool's steps on one set of folders: the shipped trees, the frontier's stores and what ships of them. The
    frontier's solves are `frontier_solves(paths.stores)` unless given (a test gives a small game's); a shipped
    store's last chunk under `chunk_bytes` takes the next run's results in."""

    paths: Paths = CHECKOUT
    frontier: dict[str, list[str]] | None = None
    chunk_bytes: int = SHIP_CHUNK_BYTES

    def __post_init__(self) -> None:
        if self.frontier is None:
            self.frontier = frontier_solves(self.paths.stores)

    def shipped_path(self, name: str) -> Path | None:
        """The shipped file of a tree (plain or gzipped), if it exists."""
        trees = self.paths.trees
        return next((p for p in (trees / f"{name}.json", trees / f"{name}.json.gz") if p.exists()), None)

    def best_found_path(self, name: str) -> Path:
        """Where an unfinished solve ships its best tree found (bulls-5x8-total: trees/bulls-5x8-best-found...)."""
        return self.paths.trees / f"{name.removesuffix('-total')}-best-found.json.gz"

    def incumbents(self, name: str, args: list[str], given: dict[str, list[Path]] | None = None) -> list[str]:
        """The trees of the same game, proven or best found by an interrupted solve (its own included), and those
        `given` for its game (not to a consistent-only solve), as --incumbent options: an interrupted solve's best
        tree found is never worse than any of them, node by node (a consistent-only solve is bounded only by
        consistent-only trees). The trees this tool ships are also given --trust: a proof that uses one of their
        bounds names it, with its SHA-256; a tree given by the user is an upper bound only."""
        game = args[args.index("--game") + 1]
        stem = game.replace(":", "-")
        consistent = "--consistent-only" in args
        kinds = ["consistent-total"] if consistent else list(FRONTIER_OBJECTIVES)
        paths = [self.shipped_path(f"{stem}-{kind}") for kind in kinds if f"{stem}-{kind}" != name]
        paths += [self.best_found_path(f"{stem}-{kind}") for kind in kinds]
        options = [
            option
            for path in paths
            if path and path.exists()
            for option in ("--incumbent", str(path), "--trust", str(path))
        ]
        return options + [
            option
            for path in ([] if consistent else (given or {}).get(game, []))
            for option in ("--incumbent", str(path))
        ]

    def sharing(self, store: Path) -> list[str]:
        """The frontier solves that keep their results, or their best trees' endgames, in this store."""
        return [name for name, args in self.frontier.items() if store in (store_path(args), endgame_store(args))]

    def shipped_chunks(self, store: Path) -> list[Path]:
        """The shipped copy of a store, in the order it restores: the compacted store as first shipped
        (GAME.db.xz), then what each later run added (GAME.2.db.xz, GAME.3.db.xz, ...: a commit carries
        what its run found, not the whole store again). Empty when none ships."""
        progress = self.paths.progress
        base = progress / f"{store.stem}.db.xz"
        later = (
            re.fullmatch(rf"{re.escape(store.stem)}\.(\d+)\.db\.xz", p.name)
            for p in progress.glob(f"{store.stem}.*.db.xz")
        )
        numbered = sorted((m for m in later if m), key=lambda m: int(m.group(1)))
        if not base.exists():
            if numbered:
                raise SystemExit(f"{os.path.relpath(base, ROOT)} is missing: the later chunks of {store.stem} need it")
            return []
        for n, m in enumerate(numbered, start=2):  # each chunk holds what one run added: none may be missing
            if int(m.group(1)) != n:
                missing = progress / f"{store.stem}.{n}.db.xz"
                raise SystemExit(
                    f"{os.path.relpath(missing, ROOT)} is missing: {store.stem}'s chunks must run 2, 3, ..."
                )
        return [base] + [progress / m.group(0) for m in numbered]

    def restore(self, store: Path | None) -> None:
        """A store lost with its machine comes back from its shipped chunks, with the time spent on it so far (the
        records of the best trees found), so that the frontier moves on from one machine to the next."""
        if store is None:
            return
        chunks = self.shipped_chunks(store)
        if store.exists() or not chunks:
            return
        store.parent.mkdir(parents=True, exist_ok=True)  # a fresh clone has no stores/ (bound restores before a solve)
        with tempfile.TemporaryDirectory(dir=store.parent) as folder:
            copies = unpacked(chunks, Path(folder))
            try:
                merge(copies, store)
            except FileError as e:  # named by the chunks it came from, not by their scratch copies
                said = str(e)
                for copy, chunk in zip(copies, chunks):
                    said = said.replace(str(copy), os.path.relpath(chunk, ROOT))
                store.unlink(missing_ok=True)
                raise SystemExit(f"{os.path.relpath(store, ROOT)} cannot be restored: {said}") from None
        print(f"restored {store.name} from {', '.join(os.path.relpath(c, ROOT) for c in chunks)}", flush=True)

    def carry_over(self, name: str, record: dict) -> None:
        """The time a solve's shipped record counts (wall and worker seconds over every run, wherever it ran) that
        this machine's files for it (stores/NAME.seconds, the task log and NAME.carried) do not hold yet: a store
        restored here, or one this machine has from its own runs of other objectives of the game."""
        stores = self.paths.stores
        spent = stores / f"{name}.seconds"
        if record["wall_seconds"] > (float(spent.read_text()) if spent.exists() else 0.0):
            spent.write_text(f"{record['wall_seconds']}\n")
        missing = record["worker_seconds"] - self.task_record(name)[0]
        if missing > 0:
            carried = stores / f"{name}.carried"
            carried.write_text(f"{(float(carried.read_text()) if carried.exists() else 0.0) + missing:.1f}\n")

    def ship(self, store: Path | None) -> None:
        """Ship the store of unfinished solves compacted (exact results and the slower bounds): whole the first time,
        then only what it gained since the chunks shipped before it. A last chunk under `chunk_bytes` takes the new
        results in (it is written again, whole), a larger one is followed by a new chunk: a commit carries about a
        run's work, and the chunks stay few. Once every solve that uses the store is proven, the chunks are dropped."""
        if store is None:
            return
        chunks = self.shipped_chunks(store)
        if not any(self.best_found_path(name).exists() for name in self.sharing(store)):
            for chunk in chunks:
                chunk.unlink()
            return
        progress, stores = self.paths.progress, self.paths.stores
        progress.mkdir(parents=True, exist_ok=True)
        if len(chunks) > 1 and chunks[-1].stat().st_size < self.chunk_bytes:
            target, before = chunks[-1], chunks[:-1]
        else:
            target, before = (
                progress / (f"{store.stem}.{len(chunks) + 1}.db.xz" if chunks else f"{store.stem}.db.xz"),
                chunks,
            )
        stores.mkdir(parents=True, exist_ok=True)  # its scratch files go there (a clone has no stores/ until a solve)
        part = stores / f"{store.stem}.compact.db"
        with tempfile.TemporaryDirectory(dir=stores) as folder:
            shipped = Path(folder) / "shipped.db" if before else None
            if shipped is not None:
                merge(unpacked(before, Path(folder)), shipped)
            kept = compact(store, part, SHIP_MIN_SECONDS, shipped)
        if kept:
            write_atomic(target, lzma.compress(part.read_bytes(), preset=9))
        part.unlink()
        print(
            f"  shipped {kept} results of {store.name}"
            + (
                f" as {os.path.relpath(target, ROOT)} ({target.stat().st_size / 1e6:.1f} MB)" if kept else " (none new)"
            ),
            flush=True,
        )

    def improve(self, name: str, store: Path | None, below: int, budget: float | None) -> None:
        """Exact endgames below `below` secrets for an unfinished solve's best tree found (its record kept), for at
        most `budget` seconds: for the least total (within the tree's worst case), or for the fewest secrets at the
        worst depth when that is the stage the solve stopped in. The endgames finished go to `store`, which ships
        like a solve's: the next run, here or on another machine, searches only the others. A run that saved nothing
        and finished no more endgames than the last leaves the tree as it was (its record included)."""
        path = self.best_found_path(name)
        if self.shipped_path(name) or not path.exists():
            return
        before = tree_io.load(path).generator
        fewest = before.get("bound_of", "").startswith("fewest-at-")
        part = path.with_name(f"{path.name}.improved.json.gz")
        self.paths.stores.mkdir(exist_ok=True)
        self.restore(store)
        print(f"{name}: exact endgames below {below} secrets", flush=True)
        try:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "strategy",
                    "improve",
                    str(path),
                    "--exact-below",
                    str(below),
                    "--objective",
                    "worst-then-fewest" if fewest else "total",
                    *(["--budget", str(budget)] if budget else []),
                    *(kept_in(store) if store else []),
                    "-o",
                    str(part),
                ],
                check=True,
                cwd=ROOT,
            )
            record, last = tree_io.load(part).generator["exact_endgame"], before.get("exact_endgame")
            further = (
                last is None
                or record["below"] > last["below"]
                or (record["below"] == last["below"] and record["unfinished"] < last["unfinished"])
            )
            if record["saved"] or further:
                os.replace(part, path)
            else:
                print(
                    f"{name}: nothing saved ({record['unfinished']} of {record['subtrees']} endgames not finished); "
                    "the tree is kept as it was",
                    flush=True,
                )
            self.ship(store)
        except subprocess.CalledProcessError as e:
            raise SystemExit(f"improving {name} failed (exit {e.returncode})") from None
        finally:
            part.unlink(missing_ok=True)

    def pilot(self, name: str, store: Path | None, width: int, budget: float | None) -> None:
        """A least-total best tree found, merged node by node with the entropy pilot's tree (`strategy build --pilot`)
        given exact endgames as the best tree has them (below as many secrets, from and into the same store, within
        `budget`): the merged tree is kept when it is cheaper, with a record of the pilot, and its endgames' record is
        gathered again (improve, mostly from the store). The pilot's greedy levels are where the best tree found can
        still gain most: its endgames are exact already."""
        path = self.best_found_path(name)
        if self.shipped_path(name) or not path.exists():
            return
        doc = tree_io.load(path)
        if doc.generator.get("bound_of") != "total":
            print(
                f"{name}: the pilot builds least-total trees, and this one is bounded on its "
                f"{doc.generator.get('bound_of')} stage",
                flush=True,
            )
            return
        below = doc.generator.get("exact_endgame", {}).get("below")
        built, piloted = (path.with_name(f"{path.name}.{step}.json.gz") for step in ("pilot", "piloted"))
        self.paths.stores.mkdir(exist_ok=True)
        self.restore(store)
        print(
            f"{name}: the entropy pilot ({width})" + (f", exact endgames below {below} secrets" if below else ""),
            flush=True,
        )
        start = time.perf_counter()
        try:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "strategy",
                    "build",
                    "--game",
                    doc.game.spec,
                    "--strategy",
                    "entropy",
                    "--pilot",
                    str(width),
                    *(["--consistent-only"] if doc.generator.get("consistent_only") else []),
                    "-o",
                    str(built),
                ],
                check=True,
                cwd=ROOT,
            )
            record = tree_io.load(built).generator["pilot"]
            if below:
                subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "strategy",
                        "improve",
                        str(built),
                        "--exact-below",
                        str(below),
                        "--objective",
                        "total",
                        *(["--budget", str(budget)] if budget else []),
                        *(kept_in(store) if store else []),
                        "-o",
                        str(piloted),
                    ],
                    check=True,
                    cwd=ROOT,
                )
            else:
                os.replace(built, piloted)
            tree = tree_io.load(piloted)
            old = verify(doc).total
            gt = game_table(doc.game)
            value, merged = merged_tree(
                gt, objectives.total().array(gt.size), np.arange(gt.size, dtype=np.int32), 0, [doc.root, tree.root]
            )
            record = {
                "strategy": "entropy",
                **record,
                "total": verify(tree).total,
                "seconds": round(time.perf_counter() - start, 1),
            }
            if value >= old:
                print(
                    f"{name}: the pilot's tree ({record['total']}) does not improve the best tree found ({old})",
                    flush=True,
                )
                return
            generator = {key: item for key, item in doc.generator.items() if key != "exact_endgame"}
            generator["pilots"] = [*generator.get("pilots", []), record]
            stats = verify(tree_io.TreeDoc(doc.game, merged))
            tree_io.save(tree_io.TreeDoc(doc.game, merged, doc.objective, generator, stats.to_json()), path)
            print(f"{name}: {old} -> {value}, merged with the pilot's tree ({record['total']})", flush=True)
        except subprocess.CalledProcessError as e:
            raise SystemExit(f"the pilot of {name} failed (exit {e.returncode})") from None
        finally:
            built.unlink(missing_ok=True)
            piloted.unlink(missing_ok=True)
        if below:
            self.improve(name, store, below, budget)

    def lookahead(self, name: str, levels: int, budget: float | None, exact_below: int | None = None) -> bool:
        """Raise an unfinished solve's proven bound by lookahead (`strategy bound`, sets of at most `exact_below`
        secrets searched exactly, what the solve's store has proven read where the lookahead meets it, and what the
        bound proves kept and shipped there), one level more at a time up to `levels` while `budget` seconds last;
        the deepest finished is recorded (generator.lookahead) when it is the highest so far, and becomes the bound
        when it is higher than the search's. The next run is given that tree, so it keeps the bound. A level the
        budget stops resumes from the store on the next run: the time spent on it so far is kept in the record
        (generator.lookahead_unfinished, by levels and N) and counted when it finishes, with the exact results its
        store held when it began; a Ctrl-C stops it the same way. True when Ctrl-C stopped it."""
        path = self.best_found_path(name)
        if self.shipped_path(name) or not path.exists():
            return False
        doc = tree_io.load(path)
        generator = doc.generator
        store = store_path(self.frontier.get(name, []))
        self.restore(store)
        stored = None
        if store is not None and store.exists():
            with contextlib.closing(Store(store, doc.game, bool(generator.get("consistent_only")))) as opened:
                stored = opened.count(exact=True)
        elif store is not None:
            store.parent.mkdir(
                parents=True, exist_ok=True
            )  # the bound starts it: what it searches is kept for the next run
        args = [
            "--game",
            doc.game.spec,
            *bound_options(generator["bound_of"]),
            *(["--consistent-only"] if generator.get("consistent_only") else []),
            *(["--exact-below", str(exact_below)] if exact_below else []),
            *(kept_in(store) if store is not None else []),
        ]
        unfinished = generator.setdefault("lookahead_unfinished", {})
        start, found, stopped = time.perf_counter(), None, False
        for k in range(1, levels + 1):
            left = None if budget is None else budget - (time.perf_counter() - start)
            if left is not None and left <= 0:
                break
            setting = f"{k} levels, exact below {exact_below or 0}"
            earlier = unfinished.pop(setting, {"seconds": 0.0, "store_exact_results": stored})
            begun, cut = time.perf_counter(), False
            with subprocess.Popen(
                [sys.executable, "-m", "strategy", "bound", *args, "--levels", str(k), "--json"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=ROOT,
            ) as run:
                try:
                    out, err = run.communicate(timeout=left)
                except subprocess.TimeoutExpired:  # SIGTERM (a bound run in the background ignores SIGINT): it
                    cut = True  # stops at its next node and closes the store
                    run.send_signal(signal.SIGTERM)
                    run.communicate()
                except KeyboardInterrupt:  # the bound stops at its next node and closes its store; SIGTERM too,
                    cut = stopped = True  # for a Ctrl-C sent to this tool alone
                    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C would cut the shipping short
                    print(f"{name}: interrupted; keeping what the bound proved (the store is shipped)", file=sys.stderr)
                    run.send_signal(signal.SIGTERM)
                    run.communicate()
            if cut:
                unfinished[setting] = {**earlier, "seconds": round(earlier["seconds"] + time.perf_counter() - begun, 1)}
                break
            result = orjson.loads(out) if not run.returncode else {}
            if not result.get("feasible"):  # a tree meets the stage: never infeasible
                raise SystemExit(f"{name}: strategy bound failed: {(err.strip().splitlines() or ['?'])[-1]}")
            found = {
                **result,
                "seconds": round(earlier["seconds"] + result["seconds"], 1),
                "store_exact_results": earlier["store_exact_results"],
            }
        self.ship(
            store
        )  # what the bound searched, finished or not: the next run, here or on another machine, reads it back
        if not unfinished:
            generator.pop("lookahead_unfinished")
        if found is None:
            tree_io.save(doc, path)
            print(
                f"{name}: "
                + (
                    "interrupted; run again to resume"
                    if stopped
                    else f"no lookahead level finished within {budget:.0f} s"
                ),
                flush=True,
            )
            return stopped
        before, stored = generator["lower_bound"], found["store_exact_results"]
        # an earlier one may be higher (deeper), or as high with the time it took (a run again reads it from the store)
        if found["lower_bound"] > generator.get("lookahead", {}).get("bound", 0):
            generator["lookahead"] = {
                "levels": found["levels"],
                "bound": found["lower_bound"],
                "seconds": found["seconds"],
                **({"exact_below": exact_below} if exact_below else {}),
                **({"store_exact_results": stored} if stored else {}),
            }
        generator["lower_bound"] = max(before, found["lower_bound"])
        tree_io.save(doc, path)
        print(
            f"{name}: {found['lower_bound']} by {found['levels']} levels of lookahead{exactly(exact_below, stored)} in "
            f"{found['seconds']} s (the search's bound: {before})"
            + ("; interrupted at the next level" if stopped else ""),
            flush=True,
        )
        return stopped

    def solve(
        self,
        name: str,
        args: list[str],
        where: list[str],
        budget: float | None,
        given: dict[str, list[Path]] | None = None,
    ) -> bool:
        """Run one solve (also given the trees `given` for its game); an interrupted one ships its best tree found
        and its store. True when Ctrl-C stopped it."""
        stores, partial = self.paths.stores, self.paths.partial / f"{name}.json.gz"
        stores.mkdir(exist_ok=True)
        partial.parent.mkdir(parents=True, exist_ok=True)
        store = store_path(args)
        self.restore(store)
        best = self.best_found_path(name)
        earlier_best = tree_io.load(best) if best.exists() else None  # the best tree found by earlier runs
        found = earlier_best.generator if earlier_best is not None else {}  # its record
        resumes = store is not None and store.exists() and bool(found)
        before = float(found.get("progress", 0.0)) if resumes else 0.0
        spent_before = found.get("frontier")  # every earlier run's time
        if spent_before:
            self.carry_over(name, spent_before)
        out = self.paths.trees / f"{name}.json"
        start = time.perf_counter()
        wall_start = time.time()
        command = [
            sys.executable,
            "-m",
            "strategy",
            "solve",
            *args,
            *where,
            "--quiet",
            "-o",
            str(out),
            "--partial",
            str(partial),
            *self.incumbents(name, args, given),
        ]
        stopped = False
        with subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=ROOT) as process:
            try:
                _, err = process.communicate(timeout=budget)
            except subprocess.TimeoutExpired:  # SIGTERM: a solve started in the background ignores SIGINT
                process.send_signal(signal.SIGTERM)
                _, err = process.communicate()
            except KeyboardInterrupt:  # Ctrl-C reached the solve too (one process group): it writes its best tree
                stopped = True
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C would cut the shipping short
                try:
                    _, err = process.communicate(timeout=30)
                except subprocess.TimeoutExpired:  # the signal was sent to this tool alone (SIGTERM: a solve in the
                    process.send_signal(signal.SIGTERM)  # background ignores SIGINT)
                    _, err = process.communicate()
        spent = stores / f"{name}.seconds"  # wall time over every session of this solve
        spent.write_text(f"{float(spent.read_text() if spent.exists() else 0) + time.perf_counter() - start:.1f}\n")
        interrupted = process.returncode in (128 + signal.SIGINT, 128 + signal.SIGTERM)
        # a solve stopped by an error it survives (a lost Dask scheduler, a full disk) writes its partial tree too
        written = partial.exists() and partial.stat().st_mtime >= wall_start
        if interrupted or (process.returncode and written):
            print(
                f"{name}: {'interrupted' if interrupted else 'stopped'} after {time.perf_counter() - start:.0f} s; "
                "run again to resume",
                flush=True,
            )
            for line in err.strip().splitlines():
                print(f"  {line}", flush=True)
            # a frontier solve (the core trees have no store) ships its best tree found with its bound and time record,
            # after walking every secret
            if partial.exists() and store is not None:
                doc = tree_io.load(partial)
                verify(doc)
                earlier = found.get("lookahead")  # a lookahead bound the search has not passed keeps its record
                if (
                    earlier
                    and found.get("bound_of") == doc.generator["bound_of"]
                    and earlier["bound"] >= doc.generator["lower_bound"]
                ):
                    doc.generator["lookahead"] = earlier
                if earlier_best is not None and earlier_best.root == doc.root:  # the same tree: its endgames and pilots
                    doc.generator.update({key: found[key] for key in ("exact_endgame", "pilots") if key in found})
                work, efficiency, last = self.task_record(name)
                doc.generator["frontier"] = {
                    "wall_seconds": round(float(spent.read_text()), 1),
                    "worker_seconds": round(work, 1),
                    "efficiency": round(efficiency, 4),
                    "workers": PROJECTED_WORKERS,
                    "last_run": {
                        "worker_seconds": round(last, 1),
                        "settled_before": before,
                        "settled_after": doc.generator["progress"],
                    },
                }
                tree_io.save(doc, best)
            self.ship(store)
            if not interrupted:
                raise SystemExit(f"{name}: {(err.strip().splitlines() or ['failed'])[-1]}")
            return stopped
        if process.returncode:
            raise SystemExit(f"{name}: {err.strip()}")
        if spent_before:  # the proof took every run since the first: record their time with it
            _, _, last = self.task_record(name)
            doc = tree_io.load(out)
            doc.generator["frontier"] = {
                "wall_seconds": round(spent_before["wall_seconds"] + time.perf_counter() - start, 1),
                "worker_seconds": round(spent_before["worker_seconds"] + last, 1),
            }
            tree_io.save(doc, out)
        best.unlink(missing_ok=True)  # a proven tree replaces the best found
        self.ship(store)
        partial.unlink(missing_ok=True)
        if out.stat().st_size > GZIP_ABOVE:  # large trees ship gzipped (every command reads them)
            write_atomic(out.with_suffix(".json.gz"), gzip.compress(out.read_bytes(), compresslevel=9, mtime=0))
            out.unlink()
        print(f"{name}: {time.perf_counter() - start:.1f} s", flush=True)
        for line in err.strip().splitlines():
            if line.startswith(("proved", "settled", "verified", "search")):
                print(f"  {line}", flush=True)
        return stopped

    def task_record(self, name: str) -> tuple[float, float, float]:
        """(worker seconds over every run on this store, parallel efficiency on PROJECTED_WORKERS simulated from
        the task logs of the latest runs, worker seconds of the last run)."""
        log = self.paths.stores / f"{name}.log"
        carried = log.with_suffix(".carried")  # worker time spent on machines before the store was restored here
        work = float(carried.read_text()) if carried.exists() else 0.0
        if not log.exists() or not log.read_text().strip():
            return work, 0.0, 0.0
        runs: dict[str, list[dict]] = {}
        for row in load_log(str(log), None, every_run=True):
            runs.setdefault(row["run"], []).append(row)
        work += sum(r["seconds"] for rows in runs.values() for r in rows)
        in_order = [runs[run] for run in sorted(runs, key=started)]
        return work, efficiency(in_order), sum(r["seconds"] for r in in_order[-1])

    def least_total_bound(self, spec: str) -> int:
        """The best proven lower bound on a game's least total (its proven tree's total, else its interrupted solve's
        bound; 0 when neither ships): it bounds the least total within a depth too."""
        name = f"{spec.replace(':', '-')}-total"
        if self.shipped_path(name):
            return verify_file(self.shipped_path(name))[1].total
        found = self.best_found_path(name)
        return tree_io.load(found).generator["lower_bound"] if found.exists() else 0

    def unfinished_rows(self, names: list[str]) -> list[list[str]]:
        """The rows of the table of frontier solves not finished yet, from the best trees found that they ship; a
        total-within-D stage shows the least total's bound when that is higher."""
        rows = []
        for name in names:
            if self.shipped_path(name) or not self.best_found_path(name).exists():
                continue
            doc, stats = verify_file(self.best_found_path(name))
            n, lb, progress = doc.game.count(), doc.generator["lower_bound"], doc.generator["progress"]
            record = doc.generator.get("frontier")  # absent from trees shipped before the record was kept
            objective = doc.generator["objective_of_the_search"]
            bound_of = doc.generator.get("bound_of", objective)  # the phase of a staged objective the bound is for
            is_total = bound_of.startswith("total")
            stage = "".join(f"{key} {value} proven; " for key, value in doc.generator.get("proven_so_far", {}).items())
            borrowed = ""
            ahead = doc.generator.get("lookahead")
            how = exactly(ahead.get("exact_below"), ahead.get("store_exact_results")) if ahead else ""
            by = (
                f", by {ahead['levels']} levels of lookahead{how} in {ahead['seconds'] / 3600:.1f} h"
                if ahead and ahead["bound"] == lb
                else ""
            )
            if bound_of.startswith("total-within-"):
                least = self.least_total_bound(doc.game.spec)
                if least > lb or (least == lb and not by):  # a bound it inherited from the least total says so
                    lb, borrowed, by = least, ", the least total's bound", ""
            rows.append(
                [
                    doc.game.spec,
                    objective
                    + ("" if bound_of == objective else f" ({stage}bound on its {bound_of} stage{borrowed})")
                    + (", consistent probes" if doc.generator.get("consistent_only") else ""),
                    (f"{lb} ({lb / n:.4f})" if is_total else str(lb)) + by,
                    best_found(stats, bound_of, doc.generator),
                    f"{stats.total - lb}"
                    if is_total
                    else (f"{at_depth(stats, bound_of) - lb}" if bound_of.startswith("fewest-at-") else ""),
                    *(
                        [f"{record['wall_seconds'] / 3600:.1f} h", f"{record['worker_seconds'] / 3600:.1f} h"]
                        if record
                        else ["not recorded"] * 2
                    ),
                    f"{100 * progress:.1f}%",
                    f"{record['efficiency']:.2f}" if record else "not recorded",
                    projection(record, progress) if record else "not recorded",
                    PUBLISHED.get(
                        published_key(doc.game.spec, objective, doc.generator.get("consistent_only")), "none found"
                    ),
                ]
            )
        return rows

    def gap_rows(self, name: str) -> list[list[str]]:
        """Where the gap of an unfinished least-total solve lies: for each answer to its best tree's first question,
        the secrets, what the tree spends on them, and the most that is proven of that set after the first question:
        the solve's store's exact value or bound (its own store, trusted as a solve of the tool trusts it), else,
        here, the exact value of a set of at most GAP_SEARCH_BELOW secrets or one level of lookahead. The last row adds
        them up: a lower bound of the trees that ask that first question (the game's bound is the least over every
        first question). No rows when the solve is proven, not started or not a least total."""
        from strategy.search.known import stored_result
        from strategy.search.lookahead import Lookahead
        from strategy.search.store import set_key

        path = self.best_found_path(name)
        if self.shipped_path(name) or not path.exists():
            return []
        doc, stats = verify_file(path)
        consistent = bool(doc.generator.get("consistent_only"))
        if doc.generator.get("bound_of") != "total" or consistent:
            return []
        store = store_path(self.frontier.get(name, []))
        self.restore(store)
        gt, costs = game_table(doc.game), objectives.total()
        cost = costs.array(gt.size)
        first = gt.probe_of(doc.root)
        everything = np.arange(gt.size, dtype=np.int32)
        answers = gt.table[first, everything]
        look = Lookahead(gt, costs, exact_below=GAP_SEARCH_BELOW)
        history = np.array([first], dtype=np.int64)
        opened = Store(store, doc.game, consistent, trusted=True) if store is not None and store.exists() else None
        rows, proven_sum, tree_sum = [], int(cost[1]), int(cost[1])  # the first question, when it is the secret
        try:
            for a in range(len(gt.answers)):
                S = everything[answers == a]
                if a == gt.win or not len(S):
                    continue
                spent, _ = merged_tree(gt, cost, S, 1, [doc.root["next"][gt.answer_str(a)]])
                held = stored_result(opened, set_key(costs.key, 1, S), gt, cost, S, 1, False) if opened else None
                if held is not None and held.value > spent:  # no tree costs less than an optimum or its bound
                    raise SystemExit(
                        f"{os.path.relpath(store, ROOT)} holds {held.value} for the answer {gt.answer_str(a)} to "
                        f"{gt.code_str(first)}, above the {spent} of the verified best tree found there: the store is wrong"
                    )
                if held is not None:
                    proven, how = held.value, "exact, stored" if held.exact else "bound, stored"
                else:
                    proven = look.bound(S, 1, len(gt.answers) - 1, history, 1)
                    how = "exact, here" if len(S) <= GAP_SEARCH_BELOW else "1 level of lookahead, here"
                rows.append(
                    [doc.game.spec, gt.answer_str(a), str(len(S)), str(spent), str(proven), how, spent - proven]
                )
                proven_sum += proven
                tree_sum += spent
        finally:
            if opened is not None:
                opened.close()
        gap = tree_sum - proven_sum
        rows.sort(key=lambda row: -row[-1])
        out = [[*row[:-1], str(row[-1]), f"{100 * row[-1] / gap:.0f}%" if gap else "0%"] for row in rows]
        first_code = gt.code_str(first)
        out.append(
            [
                doc.game.spec,
                f"all, after {first_code}",
                str(gt.size),
                str(tree_sum),
                str(proven_sum),
                "",
                str(gap),
                "100%",
            ]
        )
        return out


def table_or_none(name: str, title: str, header: list[str], rows: list[list[str]], note: str) -> None:
    """A results table (tools/results/NAME.md) with its rows, or no file when there are none."""
    if not rows:
        (RESULTS / f"{name}.md").unlink(missing_ok=True)
        return
    write_table(name, title, header, rows, note)


def write_unfinished(rows: list[list[str]]) -> None:
    """The table of frontier solves not finished yet (tools/results/frontier-unfinished.md), from
    `Regenerator.unfinished_rows`."""
    table_or_none(
        "frontier-unfinished",
        "Open on this machine: interrupted solves (tools/regenerate_trees.py solve --frontier)",
        [
            "game",
            "objective",
            "proven lower bound (average)",
            "best tree found (average)",
            "gap",
            "wall time so far",
            "worker time so far",
            "settled",
            f"efficiency on {PROJECTED_WORKERS}",
            f"projected proof on {PROJECTED_WORKERS} workers",
            "published",
        ],
        rows,
        "The lower bound is proven; the best tree found is verified over every secret and ships as "
        "`strategy/trees/*-best-found.json.gz`, with the times spent on its store. A bound found by lookahead gives "
        "the wall time of the lookahead that proved it (its runs added up, one thread per core); the time so far counts "
        "the solve's tasks only. The projection divides the worker time so far by the settled share "
        f"and runs it at the efficiency simulated from the task logs of the latest runs, at least {EFFICIENCY_SAMPLE / 3600:.0f} h of worker time (the driver spending {1000 * DISPATCH:.0f} ms "
        "on each task it sends out): an extrapolation, not a bound, "
        "and an optimistic one, since the settled share grows fastest at the start of a run (the parts of bulls' first "
        "question, solved smallest first, count by the square of their size); when the last run "
        "resumed a store, the second figure runs the share still open at that run's rate instead. "
        "Run `tools/regenerate_trees.py solve --frontier` again to resume from the stores (restored from "
        "`trees/progress/` on a new machine).",
    )


def write_gaps(rows: list[list[str]]) -> None:
    """Where the gaps of the unfinished least-total solves lie (tools/results/frontier-gaps.md), from
    `Regenerator.gap_rows`."""
    table_or_none(
        "frontier-gaps",
        "Where the gaps lie: the parts of the best tree's first question (tools/regenerate_trees.py gaps)",
        ["game", "answer", "secrets", "best tree found", "proven", "how", "gap", "share of the gap"],
        rows,
        "Each row is the set of secrets that give one answer to the best tree's first question: what the best tree "
        "found spends on them (every question counted, the first included), and the most that is proven of that set "
        "after the first question (the solve's store's exact value or bound; else, found by this step, the exact value "
        f"of a set of at most {GAP_SEARCH_BELOW} secrets or one level of lookahead). A part whose gap is 0 is solved: "
        "no tree that asks that first question does better there. The last row adds them up: a lower bound of the "
        "trees that ask that first question: above the game's bound where another first question may do better, below it "
        "where the store holds less of a part than the lookahead that proved the game's bound found there. The solve's "
        "store is the tool's own, trusted as its solves trust it.",
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command and its options (one line and exit status 2 for a wrong one)."""
    parser = Parser(
        prog="regenerate_trees.py",
        description=__doc__.split("\n")[0],
        epilog=__doc__.split("\n\n")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    budget = {"type": float, "metavar": "SECONDS"}
    names = {
        "nargs": "*",
        "default": [],
        "metavar": "NAME",  # a default, or intermixed parsing asks for a NAME
        "help": "best trees found to work on (default: every unfinished solve's)",
    }

    solve = sub.add_parser(
        "solve",
        help="rebuild the shipped trees (with --frontier, the open games too)",
        description="Solve each tree in a fresh `strategy solve` process and ship it (an "
        "unfinished frontier solve ships its best tree found and its store).",
    )
    solve.add_argument("names", **{**names, "help": "trees to rebuild (default: all of the chosen set)"})
    solve.add_argument("--frontier", action="store_true", help="the open games too (long: hours on 2 cores)")
    where = solve.add_mutually_exclusive_group()
    where.add_argument("--jobs", metavar="N", help="worker processes for each solve (default: the solver's choice)")
    where.add_argument("--scheduler", metavar="ADDRESS", help="run each solve on this Dask cluster (tcp://HOST:PORT)")
    solve.add_argument("--missing", action="store_true", help="only the trees not yet in strategy/trees/")
    solve.add_argument("--budget", **budget, help="interrupt each solve after this long")
    solve.add_argument(
        "--incumbent",
        action="append",
        default=[],
        metavar="FILE",
        help="a tree to give the solves of its game besides the shipped ones (e.g. one made by "
        "strategy build --exact-below); repeatable",
    )

    sub.add_parser(
        "table",
        help="only rewrite the table of unfinished solves (and the README's tables)",
        description="Rewrite tools/results/frontier-unfinished.md from the shipped best trees found, "
        "then the generated blocks of the README and the docs.",
    )

    sub.add_parser(
        "gaps",
        help="say where the gaps of the unfinished least-total solves lie",
        description="For each answer to the first question of the best trees found, what the tree spends and what "
        "is proven (tools/results/frontier-gaps.md), then the README's tables.",
    )

    improve = sub.add_parser(
        "improve",
        help="give the best trees found exact endgames below N secrets",
        description="Make every subtree over at most N secrets of the best trees found optimal "
        "(strategy improve), keeping the endgames it finishes in a store that ships.",
    )
    improve.add_argument("below", type=int, metavar="N", help="the largest endgame, in secrets (at least 3)")
    improve.add_argument("--budget", **budget, help="stop each tree's endgames after this long")
    improve.add_argument("names", **names)

    pilot = sub.add_parser(
        "pilot",
        help="merge the best trees found with the entropy pilot's, where that is cheaper",
        description="Build the entropy pilot's tree (strategy build --pilot K), give it the best "
        "tree's exact endgames and keep the merge of the two when it is cheaper.",
    )
    pilot.add_argument("width", type=int, metavar="K", help="the probes the pilot tries at a node (at least 1)")
    pilot.add_argument("--budget", **budget, help="stop each tree's endgames after this long")
    pilot.add_argument("names", **names)

    bound = sub.add_parser(
        "bound",
        help="raise the bounds of the unfinished solves by lookahead",
        description="Raise the proven bounds of the unfinished solves by up to K levels of "
        "lookahead (strategy bound), one more at a time while --budget lasts.",
    )
    bound.add_argument("levels", type=int, metavar="K", help=f"levels of lookahead (1 to {MAX_LOOKAHEAD})")
    bound.add_argument(
        "--exact-below",
        type=int,
        metavar="N",
        help="search the sets of at most N secrets exactly (strategy bound --exact-below; at least 3)",
    )
    bound.add_argument("--budget", **budget, help="the time for each tree")
    bound.add_argument("names", **names)

    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in sub.choices:  # NAMEs may follow the options too, which argparse's subcommands do not allow
        args = sub.choices[argv[0]].parse_intermixed_args(argv[1:], argparse.Namespace(command=argv[0]))
    else:  # the help, or the one line for a command missing or unknown
        args = parser.parse_args(argv)
    error = sub.choices[args.command].error
    if args.command not in ("table", "gaps") and args.budget is not None and args.budget <= 0:
        error("--budget must be a positive number of seconds")
    if args.command == "improve" and args.below < 3:
        error("N must be at least 3 secrets")
    if args.command == "pilot" and args.width < 1:
        error("K must be at least 1 probe")
    if args.command == "bound" and not 1 <= args.levels <= MAX_LOOKAHEAD:
        error(f"K must be from 1 to {MAX_LOOKAHEAD} levels")
    if args.command == "bound" and args.exact_below is not None and args.exact_below < 3:
        error("--exact-below must be at least 3 secrets")
    return args


def placement(args: argparse.Namespace) -> list[str]:
    """Where each solve runs: the options given to `strategy solve`."""
    if args.scheduler:
        return ["--scheduler", args.scheduler]
    return ["--jobs", args.jobs] if args.jobs else []


def main(argv: list[str] | None = None) -> None:
    """Run the command on the checkout's folders, then rewrite the tables that follow them."""
    if not (sys.argv[1:] if argv is None else argv):  # the tool alone: what it can do
        parse_args(["--help"])
    args = parse_args(argv)
    work = Regenerator()
    frontier = args.command != "solve" or args.frontier  # the other commands work on the frontier's trees
    table = dict(CORE, **(work.frontier if frontier else {}))
    unknown = [n for n in getattr(args, "names", []) if n not in table]
    if unknown:
        hint = "; a frontier solve needs --frontier" if unknown[0] in work.frontier else ""
        raise SystemExit(f"unknown tree {unknown[0]!r}; choose from {', '.join(table)}{hint}")
    where = placement(args) if args.command == "solve" else []
    given = given_trees(args.incumbent) if args.command == "solve" else {}
    stopped = False
    failed: SystemExit | None = None
    gaps: list[list[str]] | None = None
    steps = [] if args.command == "table" else ["gaps"] if args.command == "gaps" else args.names or table
    for name in steps:
        try:
            if args.command == "gaps":  # every open solve's rows, or none: the table is written whole
                gaps = [row for every in work.frontier for row in work.gap_rows(every)]
            elif args.command == "improve":
                work.improve(name, endgame_store(table[name]), args.below, args.budget)
            elif args.command == "pilot":
                work.pilot(name, endgame_store(table[name]), args.width, args.budget)
            elif args.command == "bound":
                if work.lookahead(name, args.levels, args.budget, args.exact_below):
                    stopped = True
                    break  # Ctrl-C: the tables still follow the record it saved
            elif not (args.missing and work.shipped_path(name)) and work.solve(
                name, table[name], where, args.budget, given
            ):
                stopped = True
                break  # Ctrl-C: the tables still follow the tree it shipped
        except SystemExit as e:  # a step that failed: the tables still follow what it shipped
            failed = e
            break
        except (FileError, OSError) as e:  # a store or tree file it could not read or write: one line
            failed = SystemExit(f"{name}: {e}")
            break
    write_manifest(work.paths.trees)  # the digests of the trees as shipped now, which the tests verify
    if frontier:
        write_unfinished(work.unfinished_rows(list(work.frontier)))
    if gaps is not None:
        write_gaps(gaps)
    subprocess.run([sys.executable, str(ROOT / "tools" / "readme.py")], check=True)  # the results table follows
    if failed is not None:
        raise failed
    if stopped:
        raise SystemExit(128 + signal.SIGINT)


def interrupt(signum: int, frame) -> None:
    """SIGTERM stops the tool as Ctrl-C does (run in the background, it ignores SIGINT): the step under way stops its
    subprocess, keeps what it found and ships it."""
    raise KeyboardInterrupt


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, interrupt)
    try:
        with signals_unwrapped():
            main()
    except KeyboardInterrupt:  # outside a solve (restoring, shipping, the tables): files are written atomically
        print("interrupted", file=sys.stderr)
        sys.exit(128 + signal.SIGINT)
