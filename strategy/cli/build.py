"""`strategy build` and `strategy improve`: greedy trees, and exact endgames on a tree."""

from __future__ import annotations

import argparse

from ..files import check_distinct, check_output, store_files
from ..rules import MAX_CODES, parse_game
from .options import (
    MAX_PILOT,
    MAX_SEED,
    OUTPUT_HELP,
    PILOT_ABOVE,
    TREE_HELP,
    CommandError,
    add_endgame_options,
    add_game,
    check_writable,
    command,
    int_in,
    log,
    needs_output_for_json,
    print_json,
    tree_argument,
    tree_output,
    trusted_files,
    warmed_up,
)

STRATEGY_HELP = (
    "expected-size: smallest sum of squared part sizes; entropy: most information; "
    "minimax: smallest largest part (Knuth); most-parts: most answers (Kooi); "
    "random-consistent: a random code that may be the secret (--seed)"
)


def cmd_build(args: argparse.Namespace) -> int:
    from ..build.greedy import build_checked
    from ..engine.table import game_table
    from ..tree import record
    from ..tree.format import TreeDoc, save
    from ..tree.report import stats_json, summary_line

    game = parse_game(args.game)
    needs_output_for_json(args)
    tree_output(args)
    for given, option in ((args.budget, "--budget"), (args.store, "--store")):
        if given is not None and not args.exact_below:
            raise CommandError(f"{option} applies to --exact-below only")
    if args.pilot and args.strategy == "random-consistent":
        raise CommandError("--pilot needs a scoring rule: random-consistent has none")
    check_distinct([("-o", args.output), *store_files("--store", args.store)])
    check_output(args.output if args.output != "-" else None, "tree file")
    check_writable(args.store, "store")
    first_code = game.parse_code(args.first) if args.first else None
    show = not args.quiet and not args.json
    warmed_up("builder", show, args.strategy)
    first = game.codes().index(first_code) if first_code else None
    gt = game_table(game) if args.exact_below else None  # before the build: a game too large says so at once
    pilot = None
    if args.pilot:
        from ..build.pilot import build_pilot

        root, stats, rollouts = build_pilot(
            game, args.strategy, args.pilot, args.pilot_above, args.consistent_only, first, progress=show
        )
        pilot = {"width": args.pilot, "above": args.pilot_above, "rollouts": rollouts}
    else:
        root, stats = build_checked(game, args.strategy, args.consistent_only, first, args.seed, progress=show)
    generator = record.built(
        args.strategy,
        args.consistent_only,
        pilot=pilot,
        first=game.format_code(first_code) if first_code else None,
        seed=args.seed if args.strategy == "random-consistent" else None,
    )
    if gt is not None:
        root, stats, generator["exact_endgame"] = _exact_endgames(gt, root, stats, args, args.consistent_only)
    save(TreeDoc(game, root, "heuristic", generator, stats.to_json()), args.output)
    if args.json:
        print_json(
            {
                "game": game.spec,
                "strategy": args.strategy,
                "output": args.output,
                "stats": stats_json(stats),
                **({"pilot": pilot} if pilot else {}),
                **({"exact_endgame": generator["exact_endgame"]} if "exact_endgame" in generator else {}),
            }
        )
    else:
        log(f"{game.spec} {args.strategy}{f' pilot {args.pilot}' if args.pilot else ''}: {summary_line(stats)}")
    return 0


def _exact_endgames(gt, root: dict, before, args: argparse.Namespace, consistent_only: bool, costs=None):
    """The tree with exact endgames below --exact-below secrets (for `costs`: the least total by default), its
    measured stats and the record of the change (with the total `before` them), with the store of --store."""
    from ..search.endgame import exact_endgames
    from ..search.known import store_trust
    from ..search.store import Store

    show = not args.quiet and not args.json
    trust_store = bool(trusted_files(args, [args.store], "--store"))
    warmed_up("search", show)
    store = Store(args.store, gt.game, consistent_only, trust_store) if args.store is not None else None
    try:
        root, stats, endgames = exact_endgames(
            gt, root, before, args.exact_below, consistent_only, costs, args.budget, show, store
        )
    finally:
        if store is not None:
            store.close()
            if store.unsealed and show:
                log(store.unsealed_line())
    relied_on = store_trust(store)
    if relied_on:  # the endgames taken from the store are the least only if the store is what it says
        endgames["relies_on"] = [t.record() for t in relied_on]
        if show:
            log(f"the endgames rely on {relied_on[0].said()}, trusted with --trust")
    return root, stats, endgames


def cmd_improve(args: argparse.Namespace) -> int:
    from ..engine.table import game_table
    from ..search.endgame import objective_of
    from ..tree import record
    from ..tree.format import TreeDoc, load, save
    from ..tree.report import stats_json, summary_line
    from ..tree.verify import verify

    needs_output_for_json(args)
    tree_output(args)
    check_distinct([("TREE", args.tree), ("-o", args.output), *store_files("--store", args.store)])
    check_output(args.output if args.output != "-" else None, "tree file", inputs=(args.tree,))
    check_writable(args.store, "store")
    doc = load(args.tree)
    gt = game_table(doc.game)  # before the walk: a game too large for the exact engine says so at once
    before = verify(doc)
    consistent_only = bool(doc.generator.get("consistent_only"))  # a consistent-only tree stays one
    root, stats, endgames = _exact_endgames(
        gt, doc.root, before, args, consistent_only, objective_of(args.objective, before.worst)
    )
    objective, generator = record.improved(doc.objective, doc.generator, endgames)
    save(TreeDoc(doc.game, root, objective, generator, stats.to_json()), args.output)
    if args.json:
        print_json(
            {
                "tree": args.tree,
                "game": doc.game.spec,
                "output": args.output,
                "before": stats_json(before),
                "stats": stats_json(stats),
                "exact_endgame": endgames,  # what the endgames saved, and the store they relied on
            }
        )
    else:
        log(f"{doc.game.spec}: {_improved(args.objective, before, stats)}; {summary_line(stats)}")
        if endgames["unfinished"]:
            log(
                f"{endgames['unfinished']} of {endgames['subtrees']} endgames left unfinished by --budget"
                f"{' (kept in the store: run again to go on)' if args.store else ''}"
            )
    return 0


def _improved(objective: str, before, after) -> str:
    """What improve changed, in its own objective first: the total, or the secrets at the worst depth."""
    if objective == "total":
        return f"total {before.total} -> {after.total}"
    worst = before.worst
    at_worst = [s.depth_counts[worst] if len(s.depth_counts) > worst else 0 for s in (before, after)]
    return f"secrets at depth {worst}: {at_worst[0]} -> {at_worst[1]} (total {before.total} -> {after.total})"


def add_commands(sub) -> None:
    """Register build, improve."""
    p = command(
        sub,
        "build",
        "build a complete heuristic tree",
        "Build a complete greedy decision tree for every secret of a game, verify it and write it.",
        cmd_build,
        compiled=True,
    )
    add_game(p)
    p.add_argument(
        "--strategy",
        required=True,
        metavar="NAME",
        choices=["expected-size", "entropy", "minimax", "most-parts", "random-consistent"],
        help=STRATEGY_HELP,
    )
    p.add_argument("--consistent-only", action="store_true", help="only ask codes that may still be the secret")
    p.add_argument("--first", metavar="CODE", help="first question (default: the rule's choice)")
    p.add_argument(
        "--seed", type=int_in(0, MAX_SEED, "--seed"), default=0, help="seed for random-consistent (default 0)"
    )
    p.add_argument(
        "--pilot",
        type=int_in(1, MAX_PILOT, "--pilot"),
        metavar="K",
        help="look ahead: at every node of at least --pilot-above secrets, try the rule's K next best "
        "probes besides its own, each by the total of the greedy tree it leads to, and keep the "
        "least (never worse than the plain rule; about K times slower per level)",
    )
    p.add_argument(
        "--pilot-above",
        type=int_in(2, MAX_CODES, "--pilot-above"),
        default=PILOT_ABOVE,
        metavar="N",
        help=f"the smallest node the pilot looks ahead at (default {PILOT_ABOVE})",
    )
    add_endgame_options(p, "then make every largest subtree over at most N secrets a proven minimum-total one")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the report as one JSON document (needs -o)")
    p.add_argument("-o", "--output", metavar="FILE", help=OUTPUT_HELP)

    p = command(
        sub,
        "improve",
        "make a tree's small subtrees optimal with the exact engine",
        "Replace every largest subtree over at most N secrets of a tree by a subtree proven optimal by "
        "the exact engine, never deeper than the tree's worst case (a consistent-only tree stays one); "
        "verify the result and write it.",
        cmd_improve,
        compiled=True,
    )
    p.add_argument("tree", type=tree_argument, metavar="TREE", help=TREE_HELP)
    p.add_argument(
        "--objective",
        default="total",
        choices=["total", "worst-then-fewest"],
        help="total: the least total; worst-then-fewest: the fewest secrets at the tree's worst depth",
    )
    add_endgame_options(p, "the largest sets solved exactly", required=True)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the report as one JSON document (needs -o)")
    p.add_argument("-o", "--output", metavar="FILE", help=OUTPUT_HELP)
