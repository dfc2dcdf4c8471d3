"""The `strategy` command line. Engine modules are imported inside the commands that need them,
so that tree-only commands (verify, stats, play) start without NumPy or numba."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from . import __version__
from .rules import GameError, parse_game
from .io.tree import TreeError

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class CommandError(Exception):
    """A failure to report as one line with exit status 2."""


def _write_tree(doc, out: str | None) -> None:
    from .io import tree

    if out:
        tree.save(doc, out)
    else:
        sys.stdout.buffer.write(tree.dumps(doc))
        sys.stdout.flush()


def _log(msg: str) -> None:
    print(msg, file=sys.stderr)


def cmd_build(args: argparse.Namespace) -> int:
    from .feedback_table import game_table
    from .search.heuristics import build
    from .io.report import summary_line
    from .io.tree import TreeDoc
    from .io.verify import verify

    game = parse_game(args.game)
    gt = game_table(game)
    first = gt.index(game.parse_code(args.first)) if args.first else None
    root = build(gt, args.strategy, args.consistent_only, first, args.seed)
    generator = {"tool": f"strategy {__version__}", "strategy": args.strategy, "consistent_only": args.consistent_only}
    if args.first:
        generator["first"] = args.first
    if args.strategy == "random-consistent":
        generator["seed"] = args.seed
    doc = TreeDoc(game, root, "heuristic", generator)
    doc.stats = verify(doc).to_json()
    _write_tree(doc, args.output)
    from .io.verify import Stats

    _log(f"{game.spec} {args.strategy}: {summary_line(Stats(**doc.stats))}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from .io import tree
    from .io.report import distribution_table
    from .io.verify import verify

    game = parse_game(args.game) if args.game else None
    doc = tree.load(args.tree, game)
    stats = verify(doc)
    print(f"ok: {args.tree} solves every secret of {doc.game.spec}")
    print(distribution_table(stats))
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from .io import tree
    from .io.report import distribution_table
    from .io.verify import verify

    doc = tree.load(args.tree)
    stats = verify(doc)
    print(f"{doc.game.spec}  objective: {doc.objective}")
    print(distribution_table(stats))
    if args.plot:
        from .io.plot import plot_distribution

        if not args.plot.lower().endswith((".svg", ".png")):
            raise CommandError("--plot needs a .svg or .png file name")
        try:
            plot_distribution(stats, f"{doc.game.spec} ({doc.objective})", args.plot)
        except RuntimeError as e:
            raise CommandError(str(e)) from None
        print(f"plot written to {args.plot}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from .io import tree
    from .io.export import export

    doc = tree.load(args.tree)
    n = export(doc, args.format, args.output)
    _log(f"{n} rows written to {args.output}")
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    from .io import tree
    from .io.graph import to_graph, write_graph

    doc = tree.load(args.tree)
    g = to_graph(doc, args.max_depth)
    write_graph(g, args.format, args.output)
    _log(f"{g.number_of_nodes()} nodes, {g.number_of_edges()} edges written to {args.output}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from .io import tree
    from .io.compare import compare

    a, b = tree.load(args.tree_a), tree.load(args.tree_b)
    print(compare(a, b, (Path(args.tree_a).name, Path(args.tree_b).name)))
    return 0


def cmd_solve(args: argparse.Namespace) -> int:
    from .feedback_table import game_table
    from .search.solve import solve_game
    from .io.tree import TreeDoc
    from .io.verify import measure

    game = parse_game(args.game)
    if args.max_depth is not None and args.max_depth < 1:
        raise CommandError("--max-depth must be at least 1")
    gt = game_table(game)
    report = solve_game(gt, args.objective, args.max_depth, args.consistent_only, args.jobs, progress=not args.quiet)
    for line in report.lines:
        _log(line)
    s = report.search
    _log(f"search: {s['nodes']} nodes, {s['probes_tried']} probes tried, {s['seconds']} s, {s['jobs']} process(es)")
    if report.tree is None:
        return 1
    stats, _ = measure(game, report.tree)
    _check_proof(report, stats)
    generator = {"tool": f"strategy {__version__}", "engine": "exact", "consistent_only": args.consistent_only,
                 "proven": report.proven, "search": report.search}
    doc = TreeDoc(game, report.tree, report.objective, generator, stats.to_json())
    _write_tree(doc, args.output)
    from .io.report import summary_line

    _log(f"verified: {summary_line(stats)}")
    return 0


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


def cmd_table(args: argparse.Namespace) -> int:
    from .io import tree
    from .io.second_table import format_table, second_question_table, table_csv
    from .io.verify import verify

    doc = tree.load(args.tree)
    verify(doc)
    rows = second_question_table(doc)
    if args.csv:
        tree.write_atomic(args.csv, table_csv(doc, rows).encode())
    print(format_table(doc, rows))
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    from .play import terminal as play
    from .play.walker import Walker

    walker = Walker.load(args.tree) if args.tree else None
    game = parse_game(args.game) if args.game else (walker.game if walker else None)
    if game is None:
        raise CommandError("play needs a TREE (or --game for --defence and --self-test)")
    if walker and game != walker.game:
        raise CommandError(f"the tree is for {walker.game.spec}, not {game.spec}")
    secret = game.parse_code(args.secret) if args.secret else None
    if args.noise is not None and not 0.0 <= args.noise < 1.0:
        raise CommandError("--noise must be in [0, 1)")
    ask, say = input, lambda text: print(text, flush=True)
    try:
        if args.self_test:
            return _self_test(game, args)
        if args.defence:
            return play.defence(game, ask, say, secret, args.seed)
        if walker is None:
            raise CommandError("this mode needs a TREE")
        if args.all:
            return _play_all(walker)
        if args.race:
            return play.race(walker, ask, say, secret, args.seed)
        if secret is None:
            say(f"{game.spec}: think of a secret and answer hits and blows (1,2 or 12 or 1H2B; 4 = all hits); q quits.")
        return play.Offence(walker, ask, say, args.noise, secret).play()
    except play.Quit:
        print("bye")
        return 0


def _play_all(walker) -> int:
    from .io.report import distribution_table
    from .io.verify import verify

    stats = verify(walker.doc)
    print(f"{walker.game.spec}: every secret played through the tree")
    print(distribution_table(stats))
    return 0


def _self_test(game, args: argparse.Namespace) -> int:
    from .play.noisy import self_test

    if args.noise is None:
        raise CommandError("--self-test needs --noise Q")
    result = self_test(game, args.noise, args.games, args.seed or 0, progress=True)
    print(f"{game.spec}, answers wrong with probability {args.noise}: {result.games} games, "
          f"secret found in {result.found} ({result.found / result.games:.1%}), "
          f"average {result.average_questions:.2f} questions, longest {result.worst}")
    return 0


def _add_game(p: argparse.ArgumentParser, required: bool = True) -> None:
    p.add_argument("--game", required=required, metavar="SPEC", help="bulls:4x10, bulls:4x10:nz, mastermind:4x6, ...")


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="strategy", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"strategy {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("build", help="build a complete heuristic tree")
    _add_game(p)
    p.add_argument("--strategy", required=True, choices=["expected-size", "entropy", "minimax", "most-parts", "random-consistent"])
    p.add_argument("--consistent-only", action="store_true", help="only ask codes that may still be the secret")
    p.add_argument("--first", metavar="CODE", help="first question (default: the lowest code)")
    p.add_argument("--seed", type=int, default=0, help="seed for random-consistent (default 0)")
    p.add_argument("-o", "--output", metavar="FILE", help="tree file to write (default: standard output)")
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("solve", help="build a provably optimal tree")
    _add_game(p)
    p.add_argument("--objective", default="total", choices=["total", "worst", "worst-then-fewest"],
                   help="total: minimum total (average); worst: minimum worst case, then minimum total; "
                        "worst-then-fewest: minimum worst case, then fewest secrets needing it")
    p.add_argument("--max-depth", type=int, metavar="D", help="with total: only trees that find every secret within D questions")
    p.add_argument("--consistent-only", action="store_true", help="only ask codes that may still be the secret")
    p.add_argument("--jobs", type=int, metavar="N", help="worker processes (default: all cores; small games run in one)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("-o", "--output", metavar="FILE", help="tree file to write (default: standard output)")
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser("table", help="the second-question table of a tree")
    p.add_argument("tree", metavar="TREE")
    p.add_argument("--csv", metavar="FILE", help="also write the table as CSV")
    p.set_defaults(func=cmd_table)

    p = sub.add_parser("play", help="play from a stored tree: offence, auto, defence, race")
    p.add_argument("tree", metavar="TREE", nargs="?")
    p.add_argument("--secret", metavar="CODE", help="auto mode: answer for this secret (with --defence/--race: my secret)")
    p.add_argument("--all", action="store_true", help="play every secret and print the distribution")
    p.add_argument("--defence", action="store_true", help="I hold a secret, you ask")
    p.add_argument("--race", action="store_true", help="Numeron: we both hold a secret and ask in turn")
    _add_game(p, required=False)
    p.add_argument("--seed", type=int, help="seed for my random secret / the self-test")
    p.add_argument("--noise", type=float, metavar="Q", help="answers may be wrong with probability Q (noisy-answer mode)")
    p.add_argument("--self-test", action="store_true", help="with --noise: play a simulated liar and report")
    p.add_argument("--games", type=int, default=100, help="games for --self-test (default 100)")
    p.set_defaults(func=cmd_play)

    p = sub.add_parser("export", help="lookup table with one row per question node")
    p.add_argument("tree", metavar="TREE")
    p.add_argument("--format", required=True, choices=["csv", "jsonl", "sqlite"])
    p.add_argument("-o", "--output", required=True, metavar="OUT")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("graph", help="the tree as a graph file (networkx writers)")
    p.add_argument("tree", metavar="TREE")
    p.add_argument("--format", required=True, choices=["graphml", "dot", "gexf"])
    p.add_argument("--max-depth", type=int, metavar="D", help="keep questions 1..D, summarise the rest")
    p.add_argument("-o", "--output", required=True, metavar="OUT")
    p.set_defaults(func=cmd_graph)

    p = sub.add_parser("compare", help="compare two trees of the same game")
    p.add_argument("tree_a", metavar="TREE_A")
    p.add_argument("tree_b", metavar="TREE_B")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("verify", help="walk every secret through a tree and check its stats")
    p.add_argument("tree", metavar="TREE")
    _add_game(p, required=False)
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("stats", help="distribution of the number of questions of a tree")
    p.add_argument("tree", metavar="TREE")
    p.add_argument("--plot", metavar="FILE", help="also draw the distribution as a bar chart (.svg or .png; needs matplotlib)")
    p.set_defaults(func=cmd_stats)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (GameError, TreeError, CommandError) as e:
        print(f"strategy: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("strategy: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
