"""`strategy solve` and `strategy bound`: proofs by exact search, and lower bounds by lookahead."""

from __future__ import annotations

import argparse
import os

from ..files import FileError, check_distinct, check_output, quote, store_files
from ..interrupts import Interrupted, signals_held
from ..rules import MAX_TABLE_CODES, parse_game
from .options import (
    EXIT_IMPOSSIBLE,
    MAX_DEPTH_OPTION,
    MAX_JOBS,
    MAX_LOOKAHEAD,
    OUTPUT_HELP,
    CommandError,
    add_game,
    check_writable,
    command,
    int_in,
    log,
    needs_output_for_json,
    print_json,
    tree_argument,
    tree_output,
    trust_argument,
    trusted_files,
    warmed_up,
)


def scheduler_address(text: str) -> str:
    """An argparse type: a Dask scheduler's address, not empty (an empty one would quietly run here instead)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("--scheduler needs the address of a Dask scheduler, e.g. tcp://HOST:8786")
    return text


def cmd_solve(args: argparse.Namespace) -> int:
    from ..engine.table import game_table
    from ..search.known import Trusted, given_tree, trusted_bounds
    from ..search.solve import Objective, Resources, check_proof, describe, solve_game
    from ..tree import record
    from ..tree.format import TreeDoc, TreeError, load, save
    from ..tree.report import stats_json, summary_line
    from ..tree.verify import measure, verify
    from ..warmup import in_background

    game = parse_game(args.game)
    needs_output_for_json(args)
    tree_output(args)
    check_distinct(
        [
            ("-o", args.output),
            *store_files("--store", args.store),
            ("--partial", args.partial),
            ("--log", args.log),
            *(("--incumbent", path) for path in args.incumbent),
            ("--against", args.against),
        ],
        read_only=("--incumbent", "--against"),
    )  # --trust names one of these: a qualifier, not a job
    check_output(args.output if args.output != "-" else None, "tree file")
    check_output(args.partial, "partial tree")
    for name, what in ((args.store, "store"), (args.log, "log")):
        check_writable(name, what)
    against = tuple(verify(load(args.against, game)).depth_counts) if args.against else None
    objective = Objective(args.objective, args.max_depth, args.consistent_only, against, args.rule, args.seat)
    if args.scheduler and args.jobs:
        raise CommandError("--jobs applies to local processes; a Dask cluster uses its own workers")
    trusted = trusted_files(args, [*args.incumbent, args.partial, args.store], "--incumbent, --partial or --store")
    trust_store = args.store is not None and os.path.realpath(args.store) in trusted
    resources = Resources(args.jobs, args.scheduler, args.store, args.log, args.plan, trust_store=trust_store)
    if not args.json:
        log(describe(game, objective, resources))
    gt = game_table(game)
    given = [(path, given_tree(path, game, args.consistent_only)) for path in args.incumbent]
    if args.partial and os.path.isfile(args.partial):  # an earlier run's best tree: a resumed run is never worse
        try:
            given.append((args.partial, given_tree(args.partial, game, args.consistent_only)))
        except (TreeError, FileError) as e:  # something else would be lost when an interruption writes the file
            raise CommandError(
                f"--partial {e}: not a tree of this search, which an interruption would overwrite: "
                "name a new file, or remove it"
            ) from None
    known_bounds: dict[str, Trusted] = {}
    for path, doc in given:
        if os.path.realpath(path) in trusted:  # only a file the user vouches for brings the bound it claims
            for stage, bound in trusted_bounds(path, doc, gt, args.consistent_only).items():
                if stage not in known_bounds or bound.value > known_bounds[stage].value:
                    known_bounds[stage] = bound
    # after every check of the input (a wrong argument does not wait for it); an interruption's greedy fallback is
    # compiled on the other core meanwhile, so that a stop soon after the start need not compile it
    in_background("fallback")
    warmed_up("search", not args.json)
    try:
        report = solve_game(
            gt,
            objective,
            resources,
            progress=not args.quiet and not args.json,
            on_start=None if args.json else log,
            incumbents=[doc.root for _, doc in given],
            known_bounds=known_bounds,
        )
    except Interrupted as e:
        with signals_held():  # the search has stopped: a second Ctrl-C does not cut the partial tree's writing
            _report_partial(e.partial, game, args)
        if isinstance(e.__cause__, ConnectionError):  # a lost cluster, or tasks no worker can run
            raise CommandError(str(e.__cause__)) from None
        raise
    except ConnectionError as e:  # an unreachable scheduler
        raise CommandError(str(e)) from None
    run = report.run
    if not args.json:
        for line in report.lines:
            log(line)
        reused = f", {run['reused_from_store']} read from the store" if run["reused_from_store"] else ""
        tasks = f"{run['tasks']} task{'s' if run['tasks'] != 1 else ''}"
        log(
            f"search: {run['nodes']} nodes, {run['probes_tried']} probes tried, {tasks}{reused}, {run['seconds']} s, "
            f"{run['executor']}"
        )
    if report.tree is None:
        if args.json:
            print_json(
                {
                    "game": game.spec,
                    "objective": report.objective,
                    "proven": report.proven,
                    "run": report.run,
                    "output": None,
                }
            )
        return EXIT_IMPOSSIBLE
    stats, _ = measure(game, report.tree)
    check_proof(report.proven, stats)
    doc = TreeDoc(
        game,
        report.tree,
        report.objective,
        record.solved(args.consistent_only, report.proven, report.run),
        stats.to_json(),
    )
    save(doc, args.output)
    if args.json:
        print_json(
            {
                "game": game.spec,
                "objective": report.objective,
                "proven": report.proven,
                "run": report.run,
                "output": args.output,
                "stats": stats_json(stats),
            }
        )
    else:
        log(f"verified: {summary_line(stats)}")
    return 0


def _report_partial(partial, game, args: argparse.Namespace) -> None:
    """On an interruption: say what is proven, and write the best complete tree found with --partial."""
    from ..search.known import Trusted
    from ..tree import record
    from ..tree.format import TreeDoc, save
    from ..tree.report import summary_line
    from ..tree.verify import measure

    for line in partial.lines:  # the stages finished before the interruption
        log(line)
    average = f" (average {partial.lower_bound / game.count():.4f})" if partial.costs.name.startswith("total") else ""
    log(
        f"interrupted {partial.objective}: proven lower bound {partial.lower_bound}{average}"
        f"; {100 * partial.progress:.1f}% of the search settled"
        + "".join(f"; relies on {Trusted(0, **t).said()}" for t in partial.relies_on)
    )
    if partial.tree is None:
        return
    stats, _ = measure(game, partial.tree)
    log(f"best complete tree found: {summary_line(stats)} (not proven optimal)")
    if args.partial:
        generator = record.interrupted(
            partial.lower_bound,
            partial.objective,
            partial.costs.name,
            partial.proven,
            args.consistent_only,
            partial.progress,
            partial.relies_on,
        )
        save(TreeDoc(game, partial.tree, "partial", generator, stats.to_json()), args.partial)
        log(f"written to {quote(args.partial)}")


def cmd_bound(args: argparse.Namespace) -> int:
    import time

    from tqdm import tqdm

    from ..engine import exact
    from ..engine.table import game_table
    from ..search import objectives
    from ..search.known import store_trust
    from ..search.lookahead import lookahead_bound
    from ..search.store import Store

    game = parse_game(args.game)
    check_writable(args.store, "store")
    gt = game_table(game)  # a game too large for the exact engine's table says so here
    costs = objectives.at_last_level(args.fewest_at) if args.fewest_at else objectives.total(args.max_depth)
    trust_store = bool(trusted_files(args, [args.store], "--store"))
    store = Store(args.store, game, args.consistent_only, trust_store) if args.store is not None else None
    show = not args.quiet and not args.json
    warmed_up("bound", show)
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
    relied_on = store_trust(store)
    if relied_on:
        stored = f", relying on {relied_on[0].said()}, trusted with --trust"
    if store is not None and store.unsealed and not args.json:
        log(store.unsealed_line())
    how = f"proven by {args.levels} levels of lookahead{exactly}{stored}, {seconds} s"
    if args.json:
        print_json(
            {
                "game": game.spec,
                "objective": costs.name,
                "consistent_only": args.consistent_only,
                "levels": args.levels,
                "exact_below": args.exact_below or None,
                "store": args.store,
                "relies_on": [t.record() for t in relied_on],
                "not_believed": len(store.unsealed) if store is not None else 0,
                "feasible": feasible,
                "lower_bound": int(value) if feasible else None,
                "average": round(value / gt.size, 4) if feasible and not args.fewest_at else None,
                "seconds": seconds,
            }
        )
    elif not feasible:
        print(
            f"{game.spec}{probes}: no tree finds every secret within {args.fewest_at or args.max_depth} questions "
            f"({how})"
        )
    elif args.fewest_at:
        print(
            f"{game.spec}{probes}: within {args.fewest_at} questions, at least {value} secrets need all of them ({how})"
        )
    else:
        print(f"{game.spec} {costs.name}{probes}: at least {value} questions, average {value / gt.size:.4f} ({how})")
    return 0 if feasible else EXIT_IMPOSSIBLE


def add_commands(sub) -> None:
    """Register solve, bound."""
    p = command(
        sub,
        "solve",
        "build a provably optimal tree",
        "Prove the optimal strategy of a game by exhaustive branch and bound, verify the tree over every "
        "secret and write it with its proof record.",
        cmd_solve,
        compiled=True,
    )
    add_game(p)
    p.add_argument(
        "--objective",
        default="total",
        choices=["total", "worst", "worst-then-fewest", "win", "within"],
        help="total: minimum total (average); worst: minimum worst case, then minimum total; "
        "worst-then-fewest: minimum worst case, then fewest secrets needing it; win: the best "
        "response in a race against --against TREE; within: the most secrets found within --max-depth K",
    )
    p.add_argument(
        "--max-depth",
        type=int_in(1, MAX_DEPTH_OPTION, "--max-depth"),
        metavar="D",
        help="with total: only trees that find every secret within D questions; with within: K",
    )
    p.add_argument(
        "--against",
        type=tree_argument,
        metavar="TREE",
        help="with win: the fixed tree to beat (only its depth counts matter)",
    )
    p.add_argument(
        "--rule",
        choices=["tie", "first"],
        help="with win: tie (fewer questions wins, equal draws) or first (first to find wins)",
    )
    p.add_argument(
        "--seat", choices=["first", "second"], help="with win and rule first: who asks first (default first)"
    )
    p.add_argument("--consistent-only", action="store_true", help="only ask codes that may still be the secret")
    p.add_argument(
        "--jobs",
        type=int_in(1, MAX_JOBS, "--jobs"),
        metavar="N",
        help=f"worker processes, 1 to {MAX_JOBS} (default: all cores; small games run in one)",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        type=scheduler_address,
        help="run the tasks on a Dask cluster (tcp://HOST:PORT of `dask scheduler`)",
    )
    p.add_argument(
        "--store",
        metavar="FILE",
        help="SQLite store of finished subproblems: a rerun resumes from it (what another installation wrote, or "
        "anyone altered, is searched again unless --trust names the store)",
    )
    p.add_argument(
        "--log",
        metavar="FILE",
        help="append one JSON line per finished task, or per probe of a batch (for tools/simulate_scaling.py)",
    )
    p.add_argument(
        "--partial",
        metavar="FILE",
        help="if interrupted, write the best complete tree found (not proven "
        "optimal); a better tree and a higher bound that FILE holds from an earlier run are kept",
    )
    p.add_argument(
        "--incumbent",
        type=tree_argument,
        metavar="TREE",
        action="append",
        default=[],
        help="a complete tree of the game known beforehand (e.g. the consistent-only optimum), an upper "
        "bound and nothing more: if interrupted, the best tree found is never worse, and the search "
        "cuts anything worse (repeatable)",
    )
    p.add_argument(
        "--trust",
        type=trust_argument,
        metavar="FILE",
        action="append",
        default=[],
        help="take the lower bound that the proof record of FILE (given with --incumbent or --partial) "
        "claims, unchecked: a stage that a given tree meets is then settled with no search, and "
        "the proof says it relies on FILE, with its SHA-256 (repeatable); naming the --store believes "
        "the bounds it holds from another installation, and the proof names the store",
    )
    p.add_argument(
        "--plan",
        choices=["coarse", "fine"],
        help="task granularity (default: coarse below 8 workers, "
        "fine from 8: large refutations split too, more work but no long task; probes sent in batches)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the final report as one JSON document (needs -o)")
    p.add_argument("-o", "--output", metavar="FILE", help=OUTPUT_HELP)

    p = command(
        sub,
        "bound",
        "a proven lower bound, with no search for a tree",
        "Prove a lower bound of a game's optimum by looking a few levels ahead: at each of them every "
        "question is considered (one per symmetry class), and beyond the last the sets left are bounded by "
        "level filling. Seconds or minutes for bounds far above what the search proves in hours on the "
        "open games; each level costs far more than the one before.",
        cmd_bound,
        compiled=True,
    )
    add_game(p)
    depth = p.add_mutually_exclusive_group()
    depth.add_argument(
        "--max-depth",
        type=int_in(1, MAX_DEPTH_OPTION, "--max-depth"),
        metavar="D",
        help="the least total of the trees that find every secret within D questions",
    )
    depth.add_argument(
        "--fewest-at",
        type=int_in(1, MAX_DEPTH_OPTION, "--fewest-at"),
        metavar="D",
        help="the fewest secrets that need all D questions, in the trees within D questions (default: the least total)",
    )
    p.add_argument("--consistent-only", action="store_true", help="only ask codes that may still be the secret")
    p.add_argument(
        "--levels",
        type=int_in(1, MAX_LOOKAHEAD, "--levels"),
        default=3,
        metavar="K",
        help=f"levels of lookahead, 1 to {MAX_LOOKAHEAD} (default 3)",
    )
    p.add_argument(
        "--exact-below",
        type=int_in(3, MAX_TABLE_CODES, "--exact-below"),
        default=0,
        metavar="N",
        help="search the sets of at most N secrets exactly (at any level) instead of bounding them: "
        "a higher bound for a little more time (default: none)",
    )
    p.add_argument(
        "--store",
        metavar="FILE",
        help="SQLite store of this game (a solve's, strategy solve --store, or a new file): the exact "
        "values and bounds it holds are used where the lookahead meets them, and what the bound "
        "proves is kept there, so a rerun resumes from it",
    )
    p.add_argument(
        "--trust",
        metavar="FILE",
        action="append",
        default=[],
        help="believe the bounds that the --store FILE holds from another installation (or altered), "
        "unchecked: the result then says it relies on FILE, with its SHA-256",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the result as one JSON document")
