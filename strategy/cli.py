"""The `strategy` command line: compute, prove, store and play optimal strategies for Bulls and Cows
and Mastermind.

Engine modules are imported inside the commands that need them, so that tree-only commands
(verify, stats, play) start without NumPy or numba. Every failure ends in one line on standard
error and a non-zero exit status; SIGTERM and SIGHUP stop the work like Ctrl-C, removing
temporary files and worker processes.
"""
from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import threading
import traceback
from contextlib import contextmanager
from typing import Callable, Iterator, NoReturn, Sequence

import orjson

from . import __version__
from .io.files import FileError, check_output, quote
from .io.tree import TreeError
from .rules import MAX_CODES, GameError, parse_game

EXIT_IMPOSSIBLE = 1  # solve: no tree meets the depth bound
EXIT_USAGE = 2
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130
MAX_JOBS = os.cpu_count() or 1
WARM_UP_GAME = "bulls:3x8"  # the first run after install compiles on this game (336 codes: the driver splits it)
MAX_DEPTH_OPTION = 999  # the engine's depth bounds (1000 means none)
MAX_SEED = 2**63 - 1
MAX_GAMES = 10_000_000
MAX_LOOKAHEAD = 12  # levels of lookahead of `bound` (each costs far more than the one before)
MAX_EXACT_BELOW = 50_000  # feedback_table.MAX_TABLE_CODES, checked by the tests (importing it would load numba everywhere)
MAX_PILOT = 10_000  # probes a pilot tries at a node besides the rule's own
PILOT_ABOVE = 100  # the smallest node a pilot looks ahead at by default


class CommandError(Exception):
    """A failure to report as one line with exit status 2."""


class Terminated(BaseException):
    """SIGTERM or SIGHUP: unwinds like KeyboardInterrupt, so every cleanup runs."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _on_signal(signum, frame) -> NoReturn:
    raise Terminated(signum)


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (`strategy: error: ...`, exit 2); the tools under tools/ use it too, and their
    errors begin with the tool's name."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog.split()[0]}: error: {message.splitlines()[0]} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def int_in(lo: int, hi: int, what: str) -> Callable[[str], int]:
    """An argparse type: an integer in [lo, hi], with a one-line message otherwise."""

    def parse(text: str) -> int:
        t = text.strip()
        body = t[1:] if t[:1] in "+-" else t
        if not (body.isascii() and body.isdigit()) or len(body) > 20 or not lo <= int(t) <= hi:
            raise argparse.ArgumentTypeError(f"{what} must be an integer from {lo} to {hi}, got {text[:30]!r}")
        return int(t)

    parse.__name__ = what
    return parse


def probability(text: str) -> float:
    try:
        q = float(text[:30])
    except ValueError:
        raise argparse.ArgumentTypeError(f"the noise must be a number in [0, 1), got {text[:30]!r}") from None
    if not 0.0 <= q < 1.0:
        raise argparse.ArgumentTypeError(f"the noise must be in [0, 1), got {text[:30]!r}")
    return q


def positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above 0, with a one-line message otherwise."""
    try:
        t = float(text[:30])
    except ValueError:
        t = float("nan")
    if not 0.0 < t < float("inf"):
        raise argparse.ArgumentTypeError(f"--budget must be a positive number of seconds, got {text[:30]!r}")
    return t


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@contextmanager
def _compiling(what: str, show: bool) -> Iterator[None]:
    """numba compiles in silence (a minute or more on a slow machine): say so, and on a terminal count the
    seconds until the body returns."""
    if not show:
        yield
        return
    if not sys.stderr.isatty():
        _log(f"compiling {what} (once after install)")
        yield
        return
    from tqdm import tqdm

    bar = tqdm(desc=f"compiling {what} (once after install)", bar_format="{desc}: {elapsed}", file=sys.stderr)
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(1.0):
            bar.refresh()

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        yield
    finally:
        stop.set()
        ticker.join()
        bar.close()


def _print_json(obj: object) -> None:
    sys.stdout.write(orjson.dumps(obj, option=orjson.OPT_INDENT_2).decode() + "\n")
    sys.stdout.flush()


def _load_checked(path: str):
    """A tree file, loaded and verified over every secret (so nothing is made from a false tree)."""
    from .io import tree
    from .io.verify import verify

    doc = tree.load(path)
    return doc, verify(doc)


def _needs_output_for_json(args: argparse.Namespace) -> None:
    if args.json and args.output in (None, "-"):
        raise CommandError("--json prints the report on standard output, so the tree needs -o FILE")


# -- commands ------------------------------------------------------------------------------------


def cmd_build(args: argparse.Namespace) -> int:
    from .io.report import stats_json, summary_line
    from .io.tree import TreeDoc, save
    from .search.heuristics import build_checked, warm_up

    from .engine import compiled, greedy
    from .feedback_table import game_table

    game = parse_game(args.game)
    _needs_output_for_json(args)
    for given, option in ((args.budget, "--budget"), (args.store, "--store")):
        if given is not None and not args.exact_below:
            raise CommandError(f"{option} applies to --exact-below only")
    if args.pilot and args.strategy == "random-consistent":
        raise CommandError("--pilot needs a scoring rule: random-consistent has none")
    check_output(args.output if args.output != "-" else None, "tree file")
    check_writable(args.store, "store")
    first_code = game.parse_code(args.first) if args.first else None
    if not all(compiled(greedy, kernel) for kernel in ("build_steps", "probe_scores")):
        with _compiling("the tree builder", not args.quiet and not args.json):
            warm_up(WARM_UP_GAME, args.strategy)
    first = game.codes().index(first_code) if first_code else None
    gt = game_table(game) if args.exact_below else None  # before the build: a game too large says so at once
    generator = {"tool": f"strategy {__version__}", "strategy": args.strategy, "consistent_only": args.consistent_only}
    show = not args.quiet and not args.json
    if args.pilot:
        from .search.pilot import build_pilot

        root, stats, rollouts = build_pilot(game, args.strategy, args.pilot, args.pilot_above, args.consistent_only,
                                            first, progress=show)
        generator["pilot"] = {"width": args.pilot, "above": args.pilot_above, "rollouts": rollouts}
    else:
        root, stats = build_checked(game, args.strategy, args.consistent_only, first, args.seed, progress=show)
    if args.first:
        generator["first"] = game.format_code(first_code)
    if args.strategy == "random-consistent":
        generator["seed"] = args.seed
    if gt is not None:
        root, stats, generator["exact_endgame"] = _exact_endgame(gt, root, stats, args, args.consistent_only)
    doc = TreeDoc(game, root, "heuristic", generator, stats.to_json())
    save(doc, args.output)
    if args.json:
        _print_json({"game": game.spec, "strategy": args.strategy, "output": args.output, "stats": stats_json(stats),
                     **({"pilot": generator["pilot"]} if args.pilot else {})})
    else:
        _log(f"{game.spec} {args.strategy}{f' pilot {args.pilot}' if args.pilot else ''}: {summary_line(stats)}")
    return 0


def check_writable(name: str | None, what: str) -> None:
    """Refuse, before any work, a store or log (files written as the work goes) that is a folder or has none."""
    if name and os.path.isdir(name):
        raise CommandError(f"the {what} {quote(name)} is a directory")
    if name and not os.path.isdir(os.path.dirname(os.path.abspath(name))):
        raise CommandError(f"the folder of the {what} {quote(name)} does not exist")


def _exact_endgame(gt, root: dict, before, args: argparse.Namespace, consistent_only: bool, costs=None):
    """The tree with exact endgames below --exact-below secrets (for `costs`: the least total by default), its
    measured stats and the record of the change (with the total `before` them)."""
    from .io.verify import measure
    from .search.endgame import exact_endgame
    from .search.solve import warm_up, warmed_up

    show = not args.quiet and not args.json
    if not warmed_up():
        with _compiling("the search engine", show):
            warm_up(WARM_UP_GAME)
    store = None
    if args.store is not None:
        from .search.store import Store

        store = Store(args.store, gt.game, consistent_only)
    try:
        root, record = exact_endgame(gt, root, args.exact_below, consistent_only, costs, args.budget, progress=show,
                                     store=store)
    finally:
        if store is not None:
            store.close()
    return root, measure(gt.game, root)[0], {**record, "total_before": before.total}


def cmd_improve(args: argparse.Namespace) -> int:
    from .feedback_table import game_table
    from .io.report import stats_json, summary_line
    from .io.tree import TreeDoc, load, save
    from .io.verify import verify
    from .search import objectives

    _needs_output_for_json(args)
    check_output(args.output if args.output != "-" else None, "tree file", inputs=(args.tree,))
    check_writable(args.store, "store")
    doc = load(args.tree)
    gt = game_table(doc.game)  # before the walk: a game too large for the exact engine says so at once
    before = verify(doc)
    consistent_only = bool(doc.generator.get("consistent_only"))  # a consistent-only tree stays one
    costs = (objectives.total(before.worst) if args.objective == "total" else objectives.at_last_level(before.worst))
    root, stats, record = _exact_endgame(gt, doc.root, before, args, consistent_only, costs)
    objective, generator = doc.objective, {**doc.generator, "exact_endgame": record}
    if record["improved"] and objective not in ("heuristic", "partial"):  # what its proof says of it may not hold
        objective, generator["improved_from"] = "heuristic", objective  # now (its bound on the game still does)
        for claim in ("proven", "proven_optimal"):
            generator.pop(claim, None)
    out = TreeDoc(doc.game, root, objective, generator, stats.to_json())
    save(out, args.output)
    if args.json:
        _print_json({"tree": args.tree, "game": doc.game.spec, "output": args.output, "before": stats_json(before),
                     "stats": stats_json(stats)})
    else:
        _log(f"{doc.game.spec}: total {before.total} -> {stats.total}; {summary_line(stats)}")
    return 0


def cmd_bound(args: argparse.Namespace) -> int:
    import time

    from tqdm import tqdm

    from .engine import compiled, exact
    from .feedback_table import game_table
    from .search import objectives
    from .search.lookahead import lookahead_bound
    from .search.store import Store

    game = parse_game(args.game)
    gt = game_table(game)  # a game too large for the exact engine's table says so here
    costs = objectives.at_last_level(args.fewest_at) if args.fewest_at else objectives.total(args.max_depth)
    store = Store(args.store, game, args.consistent_only) if args.store is not None else None
    show = not args.quiet and not args.json
    if not compiled(exact, "probe_bounds") or (args.exact_below and not compiled(exact, "solve")):
        with _compiling("the bound kernels", show):
            lookahead_bound(game_table(parse_game(WARM_UP_GAME)), objectives.total(), 2, exact_below=10)
    bar = tqdm(unit="node", delay=0.5, disable=not show, desc=f"{args.levels} levels", leave=False)
    start = time.perf_counter()
    try:
        value = lookahead_bound(gt, costs, args.levels, args.consistent_only, bar.update, args.exact_below, store)
    finally:
        bar.close()
        if store is not None:
            store.close()
    seconds = round(time.perf_counter() - start, 1)
    feasible = bool(value < exact.INF)
    probes = ", consistent probes" if args.consistent_only else ""
    exactly = f", sets of at most {args.exact_below} secrets searched exactly" if args.exact_below else ""
    stored = f", what {quote(args.store)} has proven" if args.store else ""
    how = f"proven by {args.levels} levels of lookahead{exactly}{stored}, {seconds} s"
    if args.json:
        _print_json({"game": game.spec, "objective": costs.name, "consistent_only": args.consistent_only,
                     "levels": args.levels, "exact_below": args.exact_below or None, "store": args.store,
                     "feasible": feasible,
                     "lower_bound": int(value) if feasible else None,
                     "average": round(value / gt.size, 4) if feasible and not args.fewest_at else None,
                     "seconds": seconds})
    elif not feasible:
        print(f"{game.spec}{probes}: no tree finds every secret within {args.fewest_at or args.max_depth} questions "
              f"({how})")
    elif args.fewest_at:
        print(f"{game.spec}{probes}: within {args.fewest_at} questions, at least {value} secrets need all of them "
              f"({how})")
    else:
        print(f"{game.spec} {costs.name}{probes}: at least {value} questions, average {value / gt.size:.4f} "
              f"({how})")
    return 0 if feasible else EXIT_IMPOSSIBLE


def cmd_verify(args: argparse.Namespace) -> int:
    from .io import tree
    from .io.report import distribution_table, stats_json
    from .io.verify import verify

    game = parse_game(args.game) if args.game else None
    doc = tree.load(args.tree, game)
    stats = verify(doc)
    if args.json:
        _print_json({"ok": True, "tree": args.tree, "game": doc.game.spec, "objective": doc.objective,
                     "stats": stats_json(stats)})
    else:
        print(f"ok: {quote(args.tree)} solves every secret of {doc.game.spec}")
        print(distribution_table(stats))
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from .io.report import distribution_table, stats_json

    check_output(args.plot, "plot", inputs=(args.tree,))
    if args.plot and not args.plot.lower().endswith((".svg", ".png")):
        raise CommandError("--plot needs a .svg or .png file name")
    doc, stats = _load_checked(args.tree)
    if args.json:
        _print_json({"tree": args.tree, "game": doc.game.spec, "objective": doc.objective, "stats": stats_json(stats)})
    else:
        print(f"{doc.game.spec}  objective: {doc.objective}")
        print(distribution_table(stats))
    if args.plot:
        from .io.plot import plot_distribution

        try:
            plot_distribution(stats, f"{doc.game.spec} ({doc.objective})", args.plot)
        except RuntimeError as e:
            raise CommandError(str(e)) from None
        _log(f"plot written to {quote(args.plot)}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from .io.export import export

    check_output(args.output, "export", inputs=(args.tree,), regular=args.format == "sqlite")
    doc, _ = _load_checked(args.tree)
    n = export(doc, args.format, args.output, progress=not args.quiet)
    _log(f"{n} rows written to {quote(args.output)}")
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    from .io.graph import to_graph, write_graph

    check_output(args.output, "graph", inputs=(args.tree,))
    doc, _ = _load_checked(args.tree)
    g = to_graph(doc, args.max_depth)
    write_graph(g, args.format, args.output)
    _log(f"{g.number_of_nodes()} nodes, {g.number_of_edges()} edges written to {quote(args.output)}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from .io import tree
    from .io.compare import compare, compare_json

    if args.tree_a == "-" and args.tree_b == "-":
        raise CommandError("only one of the two trees can come from standard input")
    a, b = tree.load(args.tree_a), tree.load(args.tree_b)
    if args.json:
        _print_json(compare_json(a, b, (args.tree_a, args.tree_b)))
    else:
        print(compare(a, b, (os.path.basename(args.tree_a), os.path.basename(args.tree_b))))
    return 0


def cmd_solve(args: argparse.Namespace) -> int:
    from .feedback_table import game_table
    from .io.report import stats_json, summary_line
    from .io.tree import TreeDoc, save
    from .io.verify import measure
    from .search.solve import Trusted, describe, solve_game, validate, warm_up, warmed_up

    game = parse_game(args.game)
    _needs_output_for_json(args)
    check_output(args.output if args.output != "-" else None, "tree file")
    check_output(args.partial, "partial tree")
    for name, what in ((args.store, "store"), (args.log, "log")):
        check_writable(name, what)
    against = None
    if args.against:
        from .io.tree import load
        from .io.verify import verify

        b = load(args.against, game)
        against = verify(b).depth_counts
    validate(args.objective, args.max_depth, against)
    if args.scheduler and args.jobs:
        raise CommandError("--jobs applies to local processes; a Dask cluster uses its own workers")
    if not args.json:
        _log(describe(game, args.objective, args.max_depth, args.consistent_only, args.jobs, args.scheduler))
    trusted = _trusted_files(args)
    gt = game_table(game)
    known = [_known_tree(path, game, args.consistent_only) for path in args.incumbent]
    incumbents = [doc.root for doc in known]
    earlier = _earlier_partial(args.partial, game, args.consistent_only)
    if earlier is not None:
        incumbents.append(earlier.root)
    known_bounds: dict[str, Trusted] = {}
    for path, doc in [*zip(args.incumbent, known), *([(args.partial, earlier)] if earlier is not None else [])]:
        if os.path.realpath(path) in trusted:  # only a file the user vouches for brings the bound it claims
            for stage, bound in _trusted_bounds(path, doc, gt, args.consistent_only).items():
                if bound.value > known_bounds.get(stage, Trusted(-1, "", "")).value:
                    known_bounds[stage] = bound
    if not warmed_up():  # after every check of the input: a wrong argument does not wait for it
        with _compiling("the search engine", not args.json):
            warm_up(WARM_UP_GAME)
    try:
        report = solve_game(gt, args.objective, args.max_depth, args.consistent_only, args.jobs,
                            progress=not args.quiet and not args.json, scheduler=args.scheduler, store=args.store,
                            log=args.log, plan=args.plan, on_start=None if args.json else _log, against=against,
                            rule=args.rule, seat=args.seat, incumbents=incumbents, known_bounds=known_bounds)
    except ConnectionError as e:  # an unreachable scheduler, or tasks no worker can run
        _report_partial(getattr(e, "partial", None), game, args)
        raise CommandError(str(e)) from None
    except BaseException as e:
        _report_partial(getattr(e, "partial", None), game, args)
        raise
    run = report.run
    if not args.json:
        for line in report.lines:
            _log(line)
        reused = f", {run['reused_from_store']} read from the store" if run["reused_from_store"] else ""
        _log(f"search: {run['nodes']} nodes, {run['probes_tried']} probes tried, {run['tasks']} task{'s' if run['tasks'] != 1 else ''}{reused}, "
             f"{run['seconds']} s, {run['executor']}")
    if report.tree is None:
        if args.json:
            _print_json({"game": game.spec, "objective": report.objective, "proven": report.proven,
                         "run": report.run, "output": None})
        return EXIT_IMPOSSIBLE
    stats, _ = measure(game, report.tree)
    _check_proof(report, stats)
    generator = {"tool": f"strategy {__version__}", "engine": "exact", "consistent_only": args.consistent_only,
                 "proven": report.proven, "run": report.run}
    doc = TreeDoc(game, report.tree, report.objective, generator, stats.to_json())
    save(doc, args.output)
    if args.json:
        _print_json({"game": game.spec, "objective": report.objective, "proven": report.proven,
                     "run": report.run, "output": args.output, "stats": stats_json(stats)})
    else:
        _log(f"verified: {summary_line(stats)}")
    return 0


def _known_tree(path: str, game, consistent_only: bool):
    """A complete tree of `game` given as an incumbent, verified; under --consistent-only it must ask
    only codes that may still be the secret, or it bounds a different search."""
    from .io.tree import load
    from .io.verify import impossible_question, verify

    doc = load(path, game)
    verify(doc)
    if consistent_only:
        where = impossible_question(game, doc.root)
        if where:
            raise CommandError(f"{quote(path)}: {where} (--consistent-only compares only trees that ask possible secrets)")
    return doc


def _earlier_partial(path: str | None, game, consistent_only: bool):
    """The tree the --partial file holds from an earlier interrupted run of this search (None if none), so that a
    resumed run never writes a worse tree."""
    if not path or not os.path.isfile(path):
        return None
    try:
        return _known_tree(path, game, consistent_only)
    except (TreeError, FileError, CommandError):
        return None  # not a tree of this search: overwritten if interrupted, as any other file


def _trusted_files(args: argparse.Namespace) -> set[str]:
    """The files named by --trust, resolved: each must be one given with --incumbent or --partial."""
    given = {os.path.realpath(p) for p in [*args.incumbent, *([args.partial] if args.partial else [])]}
    trusted = set()
    for path in args.trust:
        where = os.path.realpath(path)
        if where not in given:
            raise CommandError(f"--trust {quote(path)}: name a file given with --incumbent or --partial")
        trusted.add(where)
    return trusted


def _trusted_bounds(path: str, doc, gt, consistent_only: bool) -> dict:
    """{objective stage: Trusted bound} that a trusted file's proof record claims (see `_proven_bound`), each
    with the file's SHA-256; a claim above what the file's own tree costs under that stage is refused."""
    import hashlib

    from .search import objectives
    from .search.known import tree_cost
    from .search.solve import Trusted

    try:
        bounds = _proven_bound(doc, consistent_only)
    except (KeyError, TypeError, ValueError):
        raise CommandError(f"{quote(path)}: a partial or proven tree without a valid bound in its generator") from None
    h = hashlib.sha256()
    with open(path, "rb") as f:  # the file as given (gzipped or not), read in full by `_known_tree` already
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    digest = h.hexdigest()
    out = {}
    for stage, bound in bounds.items():
        costs = objectives.from_name(stage)
        own = tree_cost(gt, doc.root, costs) if costs is not None else None
        if own is not None and bound > own:
            raise CommandError(f"{quote(path)} claims a lower bound of {bound} on {stage}, above its own tree's "
                               f"{own}: not a proof")
        out[stage] = Trusted(bound, os.path.basename(path), digest)
    return out


def _proven_bound(doc, consistent_only: bool) -> dict[str, int]:
    """{objective stage: proven lower bound} of an interrupted solve's partial tree, or the proven values of
    a solved tree (least total; least total within, or fewest at, its proven worst case), when they bound
    this search: a bound proven with any probe also bounds a consistent-only search, not the other way
    round. A race's costs are not in its stage name, so its bound is never carried over."""
    g = doc.generator
    if not (consistent_only or not g.get("consistent_only")):
        return {}
    if doc.objective == "partial":
        stage = str(g.get("bound_of") or g.get("objective_of_the_search") or "")
        if not stage or stage.startswith("win"):
            return {}
        bounds = {stage: g["lower_bound"]}
    else:
        proven = g.get("proven") or {}
        if doc.objective == "total" and "total" in proven:
            bounds = {"total": proven["total"]}
        elif doc.objective.startswith("total-max-depth-") and "total" in proven:
            bounds = {f"total-within-{proven['max_depth']}": proven["total"]}
        elif doc.objective == "worst" and "worst" in proven:
            bounds = {f"total-within-{proven['worst']}": proven["total"]}
        elif doc.objective == "worst-then-fewest" and "worst" in proven:
            bounds = {f"fewest-at-{proven['worst']}": proven["fewest_at_worst"]}
        else:
            return {}
    for bound in bounds.values():
        if not isinstance(bound, int) or isinstance(bound, bool) or bound < 0:
            raise ValueError(f"lower_bound {bound!r}")
    return bounds


def _report_partial(partial, game, args: argparse.Namespace) -> None:
    """On an interruption: say what is proven, and write the best complete tree found with --partial."""
    if partial is None:
        return
    from .io.report import summary_line
    from .io.tree import TreeDoc, save
    from .io.verify import measure

    for line in partial.lines:  # the stages finished before the interruption
        _log(line)
    _log(f"interrupted {partial.objective}: proven lower bound {partial.lower_bound}"
         f"{f' (average {partial.lower_bound / game.count():.4f})' if partial.costs.name.startswith('total') else ''}"
         f"; {100 * partial.progress:.1f}% of the search settled"
         + "".join(f"; relies on {quote(t['file'])} (sha256 {t['sha256']})" for t in partial.relies_on))
    if partial.tree is None:
        return
    stats, _ = measure(game, partial.tree)
    _log(f"best complete tree found: {summary_line(stats)} (not proven optimal)")
    if args.partial:
        generator = {"tool": f"strategy {__version__}", "engine": "exact, interrupted", "proven_optimal": False,
                     "lower_bound": partial.lower_bound, "objective_of_the_search": partial.objective,
                     "bound_of": partial.costs.name, "proven_so_far": partial.proven,
                     "consistent_only": args.consistent_only, "progress": round(partial.progress, 6),
                     **({"relies_on": partial.relies_on} if partial.relies_on else {})}
        save(TreeDoc(game, partial.tree, "partial", generator, stats.to_json()), args.partial)
        _log(f"written to {quote(args.partial)}")


def _check_proof(report, stats) -> None:
    """The written tree must show exactly the proven figures, or nothing is written."""
    p = report.proven
    claims = []
    if "total" in p:
        claims.append(("total", stats.total, p["total"]))
    if "worst" in p:
        claims.append(("worst case", stats.worst, p["worst"]))
    if "max_depth" in p:
        claims.append(("worst case within bound", stats.worst <= p["max_depth"], True))
    if "fewest_at_worst" in p:
        claims.append(("secrets at the worst depth", stats.depth_counts[p["worst"]] if len(stats.depth_counts) > p["worst"] else 0,
                       p["fewest_at_worst"]))
    for what, measured, proved in claims:
        if measured != proved:
            raise CommandError(f"internal error: the tree's {what} is {measured}, the search proved {proved}")


def cmd_html(args: argparse.Namespace) -> int:
    from .io.files import write_atomic
    from .io.html import render

    check_output(args.output, "page", inputs=(args.tree,))
    doc, stats = _load_checked(args.tree)
    page = render(doc).encode()
    write_atomic(args.output, page, "page")
    _log(f"{quote(args.output)}: {len(page) // 1024} kB page for {doc.game.spec} ({stats.secrets} secrets); "
         f"open it in any browser, no network needed")
    return 0


def cmd_race(args: argparse.Namespace) -> int:
    from .io import tree
    from .io.verify import verify
    from .play.race import outcome

    a, b = tree.load(args.tree_a), tree.load(args.tree_b)
    if a.game != b.game:
        raise CommandError(f"the trees are for different games: {a.game.spec} and {b.game.spec}")
    result = outcome(verify(a).depth_counts, verify(b).depth_counts, args.rule)
    if args.json:
        _print_json({"game": a.game.spec, "rule": args.rule, "a": args.tree_a, "b": args.tree_b, **result.to_json()})
        return 0
    print(f"{a.game.spec}, rule {args.rule}: A = {quote(args.tree_a)}, B = {quote(args.tree_b)}")
    for label, value in (("P(A wins)", result.a_wins), ("P(draw)", result.draw), ("P(B wins)", result.b_wins),
                         ("A's score", result.score)):
        print(f"{label:10} {float(value):.6f}  = {value}")
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    from .io.files import write_atomic
    from .io.second_table import format_table, second_question_table, table_csv, table_json

    check_output(args.csv, "CSV table", inputs=(args.tree,))
    doc, _ = _load_checked(args.tree)
    rows = second_question_table(doc)
    if args.csv:
        write_atomic(args.csv, table_csv(doc, rows).encode(), "CSV table")
    if args.json:
        _print_json(table_json(doc, rows))
    else:
        print(format_table(doc, rows))
    return 0


PLAY_MODES = ("all", "defence", "race", "self_test")


def cmd_play(args: argparse.Namespace) -> int:
    from .play import session
    from .play.channels import JsonChannel, TextChannel
    from .play.walker import Walker

    modes = [m for m in PLAY_MODES if getattr(args, m)]
    if len(modes) > 1:
        raise CommandError(f"choose one mode: --{modes[0].replace('_', '-')} and --{modes[1].replace('_', '-')} exclude each other")
    mode = modes[0] if modes else "offence"
    _play_option_conflicts(args, mode)
    walker = Walker.load(args.tree) if args.tree else None
    game = parse_game(args.game) if args.game else (walker.game if walker else None)
    if game is None:
        raise CommandError("play needs a TREE (or --game for --defence and --self-test)")
    if walker and game != walker.game:
        raise CommandError(f"the tree is for {walker.game.spec}, not {game.spec}")
    if walker is None and mode not in ("defence", "self_test"):
        raise CommandError("this mode needs a TREE")
    secret = game.parse_code(args.secret) if args.secret else None
    if mode == "self_test":
        return _self_test(game, args)
    if mode == "all":
        return _play_all(walker, args)
    channel = JsonChannel() if args.protocol else TextChannel(game)
    rng = random.Random(args.seed)
    if mode == "defence":
        def play(code): return session.defence(game, channel, code or rng.choice(game.codes()))
    elif mode == "race":
        def play(code): return session.race(walker, channel, code or rng.choice(game.codes()), tree=args.tree,
                                            model=args.opponent or "tree")
    else:
        def play(code): return session.offence(walker, channel, code, args.noise, tree=args.tree)
    if args.protocol:  # programs may play many games in one process
        return session.serve(channel, game, play, secret)
    return play(secret)


def _play_option_conflicts(args: argparse.Namespace, mode: str) -> None:
    """Refuse options that the chosen mode would silently ignore."""
    allowed = {
        "offence": {"secret", "noise", "protocol"},
        "defence": {"secret", "seed", "protocol", "game"},
        "race": {"secret", "seed", "protocol", "opponent"},
        "all": {"json"},
        "self_test": {"noise", "seed", "games", "json", "game"},
    }[mode] | {"game"}
    given = {"secret": args.secret is not None, "noise": args.noise is not None, "seed": args.seed is not None,
             "games": args.games is not None, "protocol": args.protocol, "json": args.json,
             "opponent": args.opponent is not None}
    for option, present in given.items():
        if present and option not in allowed:
            name = "offence" if mode == "offence" else "--" + mode.replace("_", "-")
            raise CommandError(f"--{option} does not apply to {name}")
    if mode == "self_test" and args.noise is None:
        raise CommandError("--self-test needs --noise Q")


def _play_all(walker, args: argparse.Namespace) -> int:
    from .io.report import distribution_table, stats_json
    from .io.verify import verify

    stats = verify(walker.doc)
    if args.json:
        _print_json({"tree": args.tree, "game": walker.game.spec, "objective": walker.doc.objective,
                     "stats": stats_json(stats)})
    else:
        print(f"{walker.game.spec}: every secret played through the tree")
        print(distribution_table(stats))
    return 0


def _self_test(game, args: argparse.Namespace) -> int:
    from .play.noisy import self_test

    games = args.games if args.games is not None else 100
    result = self_test(game, args.noise, games, args.seed or 0, progress=not args.json)
    if args.json:
        _print_json({"game": game.spec, "noise": args.noise, "games": result.games, "found": result.found,
                     "average_questions": round(result.average_questions, 4), "longest": result.worst})
    else:
        print(f"{game.spec}, answers wrong with probability {args.noise}: {result.games} games, "
              f"secret found in {result.found} ({result.found / result.games:.1%}), "
              f"average {result.average_questions:.2f} questions, longest {result.worst}")
    return 0


# -- the parser ----------------------------------------------------------------------------------

GAME_HELP = ("the game: bulls:4x10 (4 distinct symbols of 10), bulls:4x10:nz (no leading 0), "
             "mastermind:4x6 (4 pegs, 6 colours); up to 1,000,000 codes")
TREE_HELP = "a tree file (JSON, or gzipped JSON; - reads standard input)"
OUTPUT_HELP = "the tree file to write (default: standard output)"
STRATEGY_HELP = ("expected-size: smallest sum of squared part sizes; entropy: most information; "
                 "minimax: smallest largest part (Knuth); most-parts: most answers (Kooi); "
                 "random-consistent: a random code that may be the secret (--seed)")
PLAY_EPILOG = """answers may be typed in any common notation: 1,2  1 2  12  1H2B  1A2B  '1 hit, 2 blows'
'Hit = 1, Blow = 2'  '1 bull 2 cows'  1B2C  '1 black 2 white'  1B2W, or the code length alone (4)
for all hits. While playing: undo, correct NUMBER ANSWER, noisy [Q], q.
exit status: 0 solved (or the race decided), 2 bad input, 3 quit, 4 end of input,
5 ended while the answers contradicted each other."""


def _add_game(p: argparse.ArgumentParser, required: bool = True) -> None:
    p.add_argument("--game", required=required, metavar="SPEC", help=GAME_HELP)


def _add_endgame_options(p: argparse.ArgumentParser, what: str, required: bool = False) -> None:
    """--exact-below N and its --budget, for build and improve."""
    p.add_argument("--exact-below", type=int_in(3, MAX_EXACT_BELOW, "--exact-below"), metavar="N", required=required,
                   help=f"{what} (the exact engine; games up to {MAX_EXACT_BELOW:,} codes)")
    p.add_argument("--budget", type=positive_seconds, metavar="SECONDS",
                   help="stop the exact searches after this long (the subtrees not solved by then stay as they were)")
    p.add_argument("--store", metavar="FILE", help="SQLite store (as strategy solve's) of the endgames finished: a "
                   "rerun after a budget or a Ctrl-C takes them from it and searches only the others")


def make_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="strategy", description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("--version", action="version", version=f"strategy {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)

    def command(name: str, summary: str, description: str, func, epilog: str | None = None):
        p = sub.add_parser(name, help=summary, description=description, epilog=epilog,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.set_defaults(func=func)
        return p

    p = command("build", "build a complete heuristic tree",
                "Build a complete greedy decision tree for every secret of a game, verify it and write it.", cmd_build)
    _add_game(p)
    p.add_argument("--strategy", required=True, metavar="NAME",
                   choices=["expected-size", "entropy", "minimax", "most-parts", "random-consistent"], help=STRATEGY_HELP)
    p.add_argument("--consistent-only", action="store_true", help="only ask codes that may still be the secret")
    p.add_argument("--first", metavar="CODE", help="first question (default: the rule's choice)")
    p.add_argument("--seed", type=int_in(0, MAX_SEED, "--seed"), default=0, help="seed for random-consistent (default 0)")
    p.add_argument("--pilot", type=int_in(1, MAX_PILOT, "--pilot"), metavar="K",
                   help="look ahead: at every node of at least --pilot-above secrets, try the rule's K next best "
                        "probes besides its own, each by the total of the greedy tree it leads to, and keep the "
                        "least (never worse than the plain rule; about K times slower per level)")
    p.add_argument("--pilot-above", type=int_in(2, MAX_CODES, "--pilot-above"), default=PILOT_ABOVE, metavar="N",
                   help=f"the smallest node the pilot looks ahead at (default {PILOT_ABOVE})")
    _add_endgame_options(p, "then make every largest subtree over at most N secrets a proven minimum-total one")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the report as one JSON document (needs -o)")
    p.add_argument("-o", "--output", metavar="FILE", help=OUTPUT_HELP)

    p = command("solve", "build a provably optimal tree",
                "Prove the optimal strategy of a game by exhaustive branch and bound, verify the tree over every "
                "secret and write it with its proof record.", cmd_solve)
    _add_game(p)
    p.add_argument("--objective", default="total", choices=["total", "worst", "worst-then-fewest", "win", "within"],
                   help="total: minimum total (average); worst: minimum worst case, then minimum total; "
                        "worst-then-fewest: minimum worst case, then fewest secrets needing it; win: the best "
                        "response in a race against --against TREE; within: the most secrets found within --max-depth K")
    p.add_argument("--max-depth", type=int_in(1, MAX_DEPTH_OPTION, "--max-depth"), metavar="D",
                   help="with total: only trees that find every secret within D questions; with within: K")
    p.add_argument("--against", metavar="TREE", help="with win: the fixed tree to beat (only its depth counts matter)")
    p.add_argument("--rule", choices=["tie", "first"], default="tie",
                   help="with win: tie (fewer questions wins, equal draws) or first (first to find wins)")
    p.add_argument("--seat", choices=["first", "second"], default="first", help="with win and rule first: who asks first")
    p.add_argument("--consistent-only", action="store_true", help="only ask codes that may still be the secret")
    p.add_argument("--jobs", type=int_in(1, MAX_JOBS, "--jobs"), metavar="N",
                   help=f"worker processes, 1 to {MAX_JOBS} (default: all cores; small games run in one)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="run the tasks on a Dask cluster (tcp://HOST:PORT of `dask scheduler`)")
    p.add_argument("--store", metavar="FILE", help="SQLite store of finished subproblems: a rerun resumes from it")
    p.add_argument("--log", metavar="FILE", help="append one JSON line per finished task, or per probe of a batch "
                   "(for tools/simulate_scaling.py)")
    p.add_argument("--partial", metavar="FILE", help="if interrupted, write the best complete tree found (not proven "
                   "optimal); a better tree and a higher bound that FILE holds from an earlier run are kept")
    p.add_argument("--incumbent", metavar="TREE", action="append", default=[],
                   help="a complete tree of the game known beforehand (e.g. the consistent-only optimum), an upper "
                        "bound and nothing more: if interrupted, the best tree found is never worse, and the search "
                        "cuts anything worse (repeatable)")
    p.add_argument("--trust", metavar="FILE", action="append", default=[],
                   help="take the lower bound that the proof record of FILE (given with --incumbent or --partial) "
                        "claims, unchecked: a stage that a given tree meets is then settled with no search, and "
                        "the proof says it relies on FILE, with its SHA-256 (repeatable)")
    p.add_argument("--plan", choices=["coarse", "fine"], help="task granularity (default: coarse below 8 workers, "
                   "fine from 8: large refutations split too, more work but no long task; probes sent in batches)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the final report as one JSON document (needs -o)")
    p.add_argument("-o", "--output", metavar="FILE", help=OUTPUT_HELP)

    p = command("bound", "a proven lower bound, with no search for a tree",
                "Prove a lower bound of a game's optimum by looking a few levels ahead: at each of them every "
                "question is considered (one per symmetry class), and beyond the last the sets left are bounded by "
                "level filling. Seconds or minutes for bounds far above what the search proves in hours on the "
                "open games; each level costs far more than the one before.", cmd_bound)
    _add_game(p)
    depth = p.add_mutually_exclusive_group()
    depth.add_argument("--max-depth", type=int_in(1, MAX_DEPTH_OPTION, "--max-depth"), metavar="D",
                       help="the least total of the trees that find every secret within D questions")
    depth.add_argument("--fewest-at", type=int_in(1, MAX_DEPTH_OPTION, "--fewest-at"), metavar="D",
                       help="the fewest secrets that need all D questions, in the trees within D questions "
                            "(default: the least total)")
    p.add_argument("--consistent-only", action="store_true", help="only ask codes that may still be the secret")
    p.add_argument("--levels", type=int_in(1, MAX_LOOKAHEAD, "--levels"), default=3, metavar="K",
                   help=f"levels of lookahead, 1 to {MAX_LOOKAHEAD} (default 3)")
    p.add_argument("--exact-below", type=int_in(3, MAX_EXACT_BELOW, "--exact-below"), default=0, metavar="N",
                   help="search the sets of at most N secrets exactly (at any level) instead of bounding them: "
                        "a higher bound for a little more time (default: none)")
    p.add_argument("--store", metavar="FILE",
                   help="SQLite store of this game (a solve's, strategy solve --store, or a new file): the exact "
                        "values and bounds it holds are used where the lookahead meets them, and what the bound "
                        "proves is kept there, so a rerun resumes from it")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the result as one JSON document")

    p = command("html", "a web page to explore and play a tree",
                "Write one self-contained HTML page for a verified tree: play it (the page asks, you ask, a race) and "
                "explore it (outline, second-question table, histogram). No server and no network: open the file.",
                cmd_html)
    p.add_argument("tree", metavar="TREE", help=TREE_HELP)
    p.add_argument("-o", "--output", required=True, metavar="PAGE", help="the .html file to write")

    p = command("race", "who wins a race between two fixed trees",
                "The exact chances of a race between two trees of one game, each secret drawn uniformly: rule tie "
                "(fewer questions wins, equal draws: the equalising turn of play --race) or first (A asks first, the "
                "first to find wins).", cmd_race)
    p.add_argument("tree_a", metavar="TREE_A", help=TREE_HELP)
    p.add_argument("tree_b", metavar="TREE_B", help=TREE_HELP)
    p.add_argument("--rule", choices=["tie", "first"], default="tie", help="tie (default) or first")
    p.add_argument("--json", action="store_true", help="print the result as one JSON document")

    p = command("table", "the second-question table of a tree",
                "For each answer to the first question: the second question, whether it may be the secret, the "
                "secrets left and the questions they still need (Tanaka's table for 4 digits).", cmd_table)
    p.add_argument("tree", metavar="TREE", help=TREE_HELP)
    p.add_argument("--csv", metavar="FILE", help="also write the table as CSV")
    p.add_argument("--json", action="store_true", help="print the table as one JSON document")

    p = command("play", "play from a stored tree: offence, auto, defence, race",
                "Play a game with a person or a program. Offence: I ask from the tree, you answer. With --secret: "
                "I answer for that secret too. --defence: I hold a secret, you ask. --race: we both ask in turn. "
                "--protocol: one JSON object per line for programs (see the README).", cmd_play, epilog=PLAY_EPILOG)
    p.add_argument("tree", metavar="TREE", nargs="?", help=TREE_HELP)
    p.add_argument("--secret", metavar="CODE", help="auto mode: answer for this secret (with --defence/--race: my secret)")
    p.add_argument("--all", action="store_true", help="play every secret and print the distribution")
    p.add_argument("--defence", action="store_true", help="I hold a secret, you ask")
    p.add_argument("--race", action="store_true", help="Numeron: we both hold a secret and ask in turn")
    _add_game(p, required=False)
    p.add_argument("--seed", type=int_in(0, MAX_SEED, "--seed"), help="seed for my random secret / the self-test")
    p.add_argument("--noise", type=probability, metavar="Q", help="answers may be wrong with probability Q (noisy-answer mode)")
    p.add_argument("--self-test", action="store_true", help="with --noise: play a simulated liar and report")
    p.add_argument("--games", type=int_in(1, MAX_GAMES, "--games"), help="games for --self-test (default 100)")
    p.add_argument("--opponent", choices=["tree", "random-consistent"],
                   help="race: how I expect you to play (default: as my tree would, from what you know)")
    p.add_argument("--protocol", action="store_true", help="speak the JSON-lines protocol on standard input and output")
    p.add_argument("--json", action="store_true", help="with --all or --self-test: print the report as JSON")

    p = command("export", "lookup table with one row per question node",
                "Write a flat lookup table of a verified tree: one row per question node, keyed by the history "
                "'probe:H,B;probe:H,B'.", cmd_export)
    p.add_argument("tree", metavar="TREE", help=TREE_HELP)
    p.add_argument("--format", required=True, choices=["csv", "jsonl", "sqlite"], help="csv, jsonl (one JSON object per row) or sqlite")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="the file to write (written whole or not at all)")

    p = command("graph", "the tree as a graph file (networkx writers)",
                "Write a verified tree as a graph: GraphML or GEXF for graph tools, DOT for Graphviz "
                "(render with: dot -Tsvg OUT -o tree.svg; Graphviz is not installed by this package).", cmd_graph)
    p.add_argument("tree", metavar="TREE", help=TREE_HELP)
    p.add_argument("--format", required=True, choices=["graphml", "dot", "gexf"], help="graphml, gexf or dot")
    p.add_argument("--max-depth", type=int_in(1, MAX_DEPTH_OPTION, "--max-depth"), metavar="D",
                   help="keep questions 1..D, summarise the rest")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="the file to write")

    p = command("compare", "compare two trees of the same game",
                "Verify two trees of the same game and print their figures side by side and the first node where "
                "they differ.", cmd_compare)
    p.add_argument("tree_a", metavar="TREE_A", help=TREE_HELP)
    p.add_argument("tree_b", metavar="TREE_B", help=TREE_HELP)
    p.add_argument("--json", action="store_true", help="print the comparison as one JSON document")

    p = command("improve", "make a tree's small subtrees optimal with the exact engine",
                "Replace every largest subtree over at most N secrets of a tree by a subtree proven optimal by "
                "the exact engine, never deeper than the tree's worst case (a consistent-only tree stays one); "
                "verify the result and write it.", cmd_improve)
    p.add_argument("tree", metavar="TREE", help=TREE_HELP)
    p.add_argument("--objective", default="total", choices=["total", "worst-then-fewest"],
                   help="total: the least total; worst-then-fewest: the fewest secrets at the tree's worst depth")
    _add_endgame_options(p, "the largest sets solved exactly", required=True)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the report as one JSON document (needs -o)")
    p.add_argument("-o", "--output", metavar="FILE", help=OUTPUT_HELP)

    p = command("verify", "walk every secret through a tree and check its stats",
                "Walk every secret of the game through the tree with the game's own rules; check every branch is "
                "reached and the stored figures are true.", cmd_verify)
    p.add_argument("tree", metavar="TREE", help=TREE_HELP)
    _add_game(p, required=False)
    p.add_argument("--json", action="store_true", help="print the report as one JSON document")

    p = command("stats", "distribution of the number of questions of a tree",
                "Verify a tree and print how many secrets need each number of questions.", cmd_stats)
    p.add_argument("tree", metavar="TREE", help=TREE_HELP)
    p.add_argument("--plot", metavar="FILE", help="also draw the distribution as a bar chart (.svg or .png; needs matplotlib)")
    p.add_argument("--json", action="store_true", help="print the report as one JSON document")
    return parser


def _skip_blas_probe() -> None:
    """numba's first compiled call imports SciPy's BLAS, if SciPy is installed, only to know whether
    np.dot may be compiled (0.3 s); no compiled code here uses it, so this process declares it absent."""
    if "scipy" not in sys.modules:
        sys.modules.setdefault("scipy.linalg.cython_blas", None)


@contextmanager
def signals_unwrapped() -> Iterator[None]:
    """Raise the KeyboardInterrupt (or Terminated) behind a SystemError as itself: a compiled function that calls
    back into Python (numba does, to build some of its results) when a signal arrives returns with the handler's
    exception set, and numba raises a SystemError caused by it. Any other SystemError goes on as it is."""
    try:
        yield
    except SystemError as error:
        seen: BaseException | None = error
        while seen is not None and not isinstance(seen, (KeyboardInterrupt, Terminated)):
            seen = seen.__cause__ or seen.__context__
        if seen is None:
            raise
        raise seen from None


def main(argv: Sequence[str] | None = None) -> int:
    _skip_blas_probe()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    try:
        args = make_parser().parse_args(argv)
        with signals_unwrapped():
            return args.func(args)
    except (GameError, TreeError, FileError, CommandError) as e:
        _log(f"strategy: error: {e}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        _log("strategy: interrupted")
        return EXIT_INTERRUPTED
    except Terminated as e:
        _log(f"strategy: terminated by {signal.Signals(e.signum).name}")
        return 128 + e.signum
    except BrokenPipeError:  # a reader such as `head` left: stop quietly, silencing the final flush too
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except MemoryError:
        _log("strategy: error: out of memory")
        return EXIT_USAGE
    except OSError as e:
        name = f" {quote(e.filename)}" if e.filename else ""
        _log(f"strategy: error:{name} {e.strerror or e}")
        return EXIT_USAGE
    except Exception as e:  # a bug: still one line, the traceback on request
        if os.environ.get("STRATEGY_DEBUG"):
            traceback.print_exc()
        _log(f"strategy: internal error: {type(e).__name__}: {str(e)[:200]} (STRATEGY_DEBUG=1 shows the traceback)")
        return EXIT_INTERNAL


def run() -> None:
    """The `strategy` command: main(), then a quick exit. Everything main opens (files, stores, worker
    processes, clusters) is closed before it returns, so the interpreter's teardown, which spends about
    0.2 s freeing numba's and LLVM's objects, is skipped (argparse's own exits still go through SystemExit)."""
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        pass
    os._exit(code)


if __name__ == "__main__":
    run()
