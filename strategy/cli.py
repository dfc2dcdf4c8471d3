"""The `strategy` command line. Engine modules are imported inside the commands that need them,
so that tree-only commands (verify, stats, play) start without NumPy or numba."""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from . import __version__
from .rules import GameError, parse_game
from .tree import TreeError

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class CommandError(Exception):
    """A failure to report as one line with exit status 2."""


def _write_tree(doc, out: str | None) -> None:
    from . import tree

    if out:
        tree.save(doc, out)
    else:
        sys.stdout.buffer.write(tree.dumps(doc))
        sys.stdout.flush()


def _log(msg: str) -> None:
    print(msg, file=sys.stderr)


def cmd_build(args: argparse.Namespace) -> int:
    from .feedback_table import game_table
    from .heuristics import build
    from .report import summary_line
    from .tree import TreeDoc
    from .verify import verify

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
    from .verify import Stats

    _log(f"{game.spec} {args.strategy}: {summary_line(Stats(**doc.stats))}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from . import tree
    from .report import distribution_table
    from .verify import verify

    game = parse_game(args.game) if args.game else None
    doc = tree.load(args.tree, game)
    stats = verify(doc)
    print(f"ok: {args.tree} solves every secret of {doc.game.spec}")
    print(distribution_table(stats))
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from . import tree
    from .report import distribution_table
    from .verify import verify

    doc = tree.load(args.tree)
    stats = verify(doc)
    print(f"{doc.game.spec}  objective: {doc.objective}")
    print(distribution_table(stats))
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

    p = sub.add_parser("verify", help="walk every secret through a tree and check its stats")
    p.add_argument("tree", metavar="TREE")
    _add_game(p, required=False)
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("stats", help="distribution of the number of questions of a tree")
    p.add_argument("tree", metavar="TREE")
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
