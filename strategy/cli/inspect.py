"""`strategy verify`, `stats`, `compare` and `race`: what a tree does, alone or against another."""

from __future__ import annotations

import argparse
import os

from ..files import check_output, printable, quote
from ..rules import parse_game
from ..tree.format import TreeError
from .options import (
    EXIT_FALSE_TREE,
    TREE_HELP,
    CommandError,
    add_game,
    command,
    load_checked,
    log,
    print_json,
    tree_argument,
)


def cmd_verify(args: argparse.Namespace) -> int:
    """Exit 0 when the tree solves every secret as its file claims, 1 when it does not (with --json, what failed
    as data), 2 when the file is not a tree of the game (also told as data with --json) or cannot be read."""
    from ..tree import format as tree
    from ..tree.report import distribution_table, stats_json
    from ..tree.verify import VerifyError, verify

    game = parse_game(args.game) if args.game is not None else None
    try:
        doc = tree.load(args.tree, game)
    except TreeError as e:
        if args.json:
            print_json({"ok": False, "tree": args.tree, "failure": {"kind": "format", "message": str(e)}})
        raise
    try:
        stats = verify(doc)
    except VerifyError as e:
        if args.json:
            print_json(
                {
                    "ok": False,
                    "tree": args.tree,
                    "game": doc.game.spec,
                    "objective": doc.objective,
                    "failure": e.to_json(),
                }
            )
        log(printable(f"strategy: error: {quote(args.tree)} fails verification: {e}"))  # the file's text, escaped
        return EXIT_FALSE_TREE
    if args.json:
        print_json(
            {
                "ok": True,
                "tree": args.tree,
                "game": doc.game.spec,
                "objective": doc.objective,
                "stats": stats_json(stats),
            }
        )
    else:
        print(f"ok: {quote(args.tree)} solves every secret of {doc.game.spec}")
        print(distribution_table(stats))
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from ..tree.report import distribution_table, stats_json

    check_output(args.plot, "plot", inputs=(args.tree,))
    if args.plot and not args.plot.lower().endswith((".svg", ".png")):
        raise CommandError("--plot needs a .svg or .png file name")
    doc, stats = load_checked(args.tree)
    if args.json:
        print_json({"tree": args.tree, "game": doc.game.spec, "objective": doc.objective, "stats": stats_json(stats)})
    else:
        print(f"{doc.game.spec}  objective: {printable(doc.objective)}")
        print(distribution_table(stats))
    if args.plot:
        from ..export.plot import plot_distribution

        try:
            plot_distribution(stats, f"{doc.game.spec} ({printable(doc.objective)})", args.plot)  # SVG is XML
        except RuntimeError as e:
            raise CommandError(str(e)) from None
        log(f"plot written to {quote(args.plot)}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from ..tree import format as tree
    from ..tree.compare import compare, compare_json

    if args.tree_a == "-" and args.tree_b == "-":
        raise CommandError("only one of the two trees can come from standard input")
    a, b = tree.load(args.tree_a), tree.load(args.tree_b)
    if args.json:
        print_json(compare_json(a, b, (args.tree_a, args.tree_b)))
    else:
        print(compare(a, b, (os.path.basename(args.tree_a), os.path.basename(args.tree_b))))
    return 0


def cmd_race(args: argparse.Namespace) -> int:
    from ..tree import format as tree
    from ..tree.race import outcome
    from ..tree.verify import verify

    a, b = tree.load(args.tree_a), tree.load(args.tree_b)
    if a.game != b.game:
        raise CommandError(f"the trees are for different games: {a.game.spec} and {b.game.spec}")
    result = outcome(verify(a).depth_counts, verify(b).depth_counts, args.rule)
    if args.json:
        print_json({"game": a.game.spec, "rule": args.rule, "a": args.tree_a, "b": args.tree_b, **result.to_json()})
        return 0
    print(f"{a.game.spec}, rule {args.rule}: A = {quote(args.tree_a)}, B = {quote(args.tree_b)}")
    for label, value in (
        ("P(A wins)", result.a_wins),
        ("P(draw)", result.draw),
        ("P(B wins)", result.b_wins),
        ("A's score", result.score),
    ):
        print(f"{label:10} {float(value):.6f}  = {value}")
    return 0


def cmd_trees(args: argparse.Namespace) -> int:
    from ..tree.shipped import listing

    rows = listing()
    if args.json:
        print_json({"trees": [row.to_json() for row in rows]})
        return 0
    print(f"{'name':34} {'game':14} {'objective':18} {'average':>7} {'worst':>5}  proven")
    for row in rows:
        line = f"{row.name:34} {row.game:14} {row.objective:18} {row.average:7.4f} {row.worst:5}  {row.proven}"
        print(printable(line))  # a record's text, escaped (a package folder can be written to)
    print("\nany command that takes a TREE takes a name above, or a game naming one: strategy play bulls:4x10")
    return 0


def add_commands(sub) -> None:
    """Register trees, verify, stats, compare, race."""
    p = command(
        sub,
        "trees",
        "list the trees that ship with strategy",
        "The shipped trees (proven optimal, or the best found for the open games), by name: any command that "
        "takes a TREE takes such a name, or a game that names one (bulls:4x10 is bulls-4x10-total, "
        "bulls:4x10/worst is bulls-4x10-worst).",
        cmd_trees,
    )
    p.add_argument("--json", action="store_true", help="print the list as one JSON document")

    p = command(
        sub,
        "verify",
        "walk every secret through a tree and check its stats",
        "Walk every secret of the game through the tree with the game's own rules; check every branch is "
        "reached and the stored figures are true. Exit status 1 when the tree fails (a secret not found, a "
        "branch never reached, a stored figure false; with --json, what failed as data), 2 when the file is "
        "missing or not a tree of the game.",
        cmd_verify,
    )
    p.add_argument("tree", type=tree_argument, metavar="TREE", help=TREE_HELP)
    add_game(p, required=False)
    p.add_argument("--json", action="store_true", help="print the report as one JSON document")

    p = command(
        sub,
        "stats",
        "distribution of the number of questions of a tree",
        "Verify a tree and print how many secrets need each number of questions.",
        cmd_stats,
    )
    p.add_argument("tree", type=tree_argument, metavar="TREE", help=TREE_HELP)
    p.add_argument(
        "--plot", metavar="FILE", help="also draw the distribution as a bar chart (.svg or .png; needs matplotlib)"
    )
    p.add_argument("--json", action="store_true", help="print the report as one JSON document")

    p = command(
        sub,
        "compare",
        "compare two trees of the same game",
        "Verify two trees of the same game and print their figures side by side and the first node where they differ.",
        cmd_compare,
    )
    p.add_argument("tree_a", type=tree_argument, metavar="TREE_A", help=TREE_HELP)
    p.add_argument("tree_b", type=tree_argument, metavar="TREE_B", help=TREE_HELP)
    p.add_argument("--json", action="store_true", help="print the comparison as one JSON document")

    p = command(
        sub,
        "race",
        "who wins a race between two fixed trees",
        "The exact chances of a race between two trees of one game, each secret drawn uniformly: rule tie "
        "(fewer questions wins, equal draws: the equalising turn of play --race) or first (A asks first, the "
        "first to find wins).",
        cmd_race,
    )
    p.add_argument("tree_a", type=tree_argument, metavar="TREE_A", help=TREE_HELP)
    p.add_argument("tree_b", type=tree_argument, metavar="TREE_B", help=TREE_HELP)
    p.add_argument("--rule", choices=["tie", "first"], default="tie", help="tie (default) or first")
    p.add_argument("--json", action="store_true", help="print the result as one JSON document")
