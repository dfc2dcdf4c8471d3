"""`strategy analyse`: the exact value of every question at a position, best first, or the grade of one question."""

from __future__ import annotations

import argparse
import time

from ..files import FileError, quote, read_bytes
from ..rules import parse_game
from .options import CommandError, add_game, command, int_in, positive_seconds, print_json, warmed_up

MAX_SECRETS_FILE = 64 * 1024 * 1024  # a file of secrets, one per line: the largest game's codes fit many times


def cmd_analyse(args: argparse.Namespace) -> int:
    from ..engine.table import game_table
    from ..play.advice import grade_lines, table_lines
    from ..search.analyse import Analyser, analysis_json, grade_json, parse_history, position_from_history

    game = parse_game(args.game)
    if args.move is not None and args.top is not None:
        raise CommandError("--move grades one question: --top does not apply to it")
    history = parse_history(args.history) if args.history else []
    move = game.parse_code(args.move) if args.move is not None else None
    lines = _read_secrets(args.secrets) if args.secrets else None
    gt = game_table(game)  # a game too large for the exact engine says so here
    if lines is not None:
        from ..search.analyse import position_from_secrets

        pos = position_from_secrets(
            gt, [text for _, text in lines], f"the secrets file {quote(args.secrets)}", [number for number, _ in lines]
        )
    else:
        pos = position_from_history(gt, history)
    warmed_up("analyse", not args.json)  # after every check of the input: a wrong argument does not wait for it
    analyser = Analyser(gt, args.objective)
    deadline = time.perf_counter() + args.budget if args.budget else None
    if move is not None:
        doc = {
            "game": game.spec,
            "secrets_file": args.secrets,
            "candidates": pos.n,
            **grade_json(analyser.grade(pos, game.format_code(move), deadline)),
        }
        if args.json:
            print_json(doc)
        else:
            print(_heading(pos, args))
            for line in grade_lines(doc, args.budget):
                print(line)
        return 0
    doc = {"secrets_file": args.secrets, **analysis_json(analyser.analyse(pos, top=args.top, deadline=deadline))}
    if args.json:
        print_json(doc)
    else:
        print(_heading(pos, args))
        classes = doc["classes"]
        keeps = (
            ("the game's symmetries" if not pos.asked else "the symmetries the history keeps")
            if pos.symmetric
            else "no symmetry but that of absent symbols"
        )
        print(
            f"{classes} inequivalent question{'s' if classes != 1 else ''} (under {keeps})"
            + (f"; the {args.top} best:" if args.top is not None and args.top < classes else ":")
        )
        for line in table_lines(doc, args.budget):
            print(line)
    return 0


def _read_secrets(path: str) -> list[tuple[int, str]]:
    """The codes of a secrets file, one per line, with their line numbers (blank lines and # comments skipped)."""
    data = read_bytes(path, "secrets file", MAX_SECRETS_FILE)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise FileError(f"the secrets file {quote(path)} is not UTF-8 text") from None
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        code = line.split("#", 1)[0].strip()
        if code:
            out.append((number, code))
    return out


def _heading(pos, args: argparse.Namespace) -> str:
    game = pos.gt.game.spec
    if not pos.symmetric:
        return f"{game}: the {pos.n} secret{'s' if pos.n != 1 else ''} of {quote(args.secrets)}, no question asked yet"
    if not pos.asked:
        return f"{game}: the first question, {pos.n} secrets"
    return (
        f"{game} after {pos.history_text()}: {pos.n} secret{'s are' if pos.n != 1 else ' is'} still possible "
        f"({pos.d} question{'s' if pos.d != 1 else ''} asked)"
    )


def add_commands(sub) -> None:
    """Register analyse."""
    p = command(
        sub,
        "analyse",
        "the exact value of every question at a position",
        "List every inequivalent question of a position (after --history, or a set of --secrets), best "
        "first, each with its exact value: the least total number of further questions, this one and the "
        "last included, over the secrets still possible (the average per secret beside it). With no "
        "history, the table of first questions. --move grades one question against the best. Under "
        "--budget, a question whose search does not finish gets proven lower and upper bounds, labelled.",
        cmd_analyse,
    )
    add_game(p)
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--history",
        metavar="PAIRS",
        help="the questions so far with their answers, e.g. "
        '"0123:1,2 4567:0,1" (any answer notation; ; between pairs also works)',
    )
    where.add_argument(
        "--secrets",
        metavar="FILE",
        help="the secrets still possible, one per line (# comments), "
        "any set: no symmetry is assumed but that of the symbols none of them holds",
    )
    p.add_argument(
        "--objective",
        default="total",
        choices=["total", "worst"],
        help="total: the least total (average); worst: the fewest questions in the worst case, then the "
        "least total within it",
    )
    p.add_argument(
        "--top",
        type=int_in(1, 1_000_000, "--top"),
        metavar="K",
        help="only the K best questions (the others are proven no better, which is quicker)",
    )
    p.add_argument("--move", metavar="CODE", help="grade this question: its value and its cost against the best")
    p.add_argument(
        "--budget",
        type=positive_seconds,
        metavar="SECONDS",
        help="stop the searches after this long: what did not finish gets proven bounds",
    )
    p.add_argument("--json", action="store_true", help="print the analysis as one JSON document")
