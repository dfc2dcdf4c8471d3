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

        pos = position_from_secrets(gt, [text for _, text in lines], f"the secrets file {quote(args.secrets)}",
                                    [number for number, _ in lines])
    else:
        pos = position_from_history(gt, history)
    warmed_up("analyse", not args.json)  # after every check of the input: a wrong argument does not wait for it
    analyser = Analyser(gt, args.objective)
    deadline = time.perf_counter() + args.budget if args.budget else None
    if move is not None:
        grade = analyser.grade(pos, game.format_code(move), deadline)
        if args.json:
            print_json({**_where(pos, args), **grade_json(grade)})
        else:
            print(_heading(pos, args))
            for line in grade_lines(grade, args.budget):
                print(line)
        return 0
    analysis = analyser.analyse(pos, top=args.top, deadline=deadline)
    if args.json:
        print_json({**_where(pos, args), **analysis_json(analysis)})
    else:
        print(_heading(pos, args))
        print(f"{analysis.classes} inequivalent question{'s' if analysis.classes != 1 else ''}"
              + (" (under the symmetries the history keeps)" if pos.symmetric else " (no symmetry but absent symbols)")
              + (f"; the {args.top} best:" if args.top is not None and args.top < analysis.classes else ":"))
        for line in table_lines(analysis, args.budget):
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


def _where(pos, args: argparse.Namespace) -> dict:
    return {"secrets_file": args.secrets}


def _heading(pos, args: argparse.Namespace) -> str:
    game = pos.gt.game.spec
    if not pos.symmetric:
        return f"{game}: the {pos.n} secret{'s' if pos.n != 1 else ''} of {quote(args.secrets)}, no question asked yet"
    if not pos.asked:
        return f"{game}: the first question, {pos.n} secrets"
    return (f"{game} after {pos.history_text()}: {pos.n} secret{'s are' if pos.n != 1 else ' is'} still possible "
            f"({pos.d} question{'s' if pos.d != 1 else ''} asked)")


# -- text ---------------------------------------------------------------------------------------------


def _span(lo: int, hi: int | None) -> str:
    return f"{lo}" if hi == lo else f"[{lo}, {'?' if hi is None else hi}]"


def _average(lo: int, hi: int | None, n: int) -> str:
    return f"{lo / n:.4f}" if hi == lo else f"[{lo / n:.4f}, {'?' if hi is None else f'{hi / n:.4f}'}]"


def value_text(row, objective: str, n: int) -> str:
    """A question's value for a sentence: `6495 (average 4.5104)`, `worst 5, total 5626 (average 4.3410)`, or
    bounds, labelled."""
    lo, hi = row.lower, row.upper
    if objective == "total":
        if row.exact:
            return f"{lo[0]} questions in total (average {lo[0] / n:.4f})"
        return (f"between {lo[0]} and {'?' if hi is None else hi[0]} questions in total (proven bounds; average "
                f"{_average(lo[0], None if hi is None else hi[0], n)})")
    if row.exact:
        return f"worst case {lo[0]}, {lo[1]} questions in total within it (average {lo[1] / n:.4f})"
    worst = _span(lo[0], None if hi is None else hi[0])
    total = f"at least {lo[1]}" if hi is None or hi[0] != lo[0] else f"between {lo[1]} and {hi[1]}"
    return f"worst case {worst}, {total} questions in total (proven bounds)"


def line_text(line: list[tuple[str, str, int]]) -> str:
    """A best line: `1456 0,1 (378) 2578 1,1 (43) ... 9702`."""
    parts = [f"{q} {a} ({k})" for q, a, k in line if k]
    if line and line[-1][2] == 0:
        parts.append(line[-1][0])
    elif line:
        parts.append("...")
    return " ".join(parts)


def table_lines(analysis, budget: float | None) -> list[str]:
    """The listing as a table: rank, question, class size, may be the secret, value(s), average, above the best,
    parts, best line; bounds as [lower, upper]."""
    pos, objective = analysis.position, analysis.objective
    n = pos.n
    best_total = analysis.best_lower[-1]
    head = ["#", "question", "class", "secret?"] + (["worst"] if objective == "worst" else []) + \
        ["total", "average", "vs best", "parts", "best line"]
    rows = []
    for i, row in enumerate(analysis.rows, 1):
        lo, hi = row.lower, row.upper
        cells = [str(i), row.code, str(row.class_size), "yes" if row.may_be_secret else "no"]
        if objective == "worst":
            cells.append(_span(lo[0], None if hi is None else hi[0]))
            total_hi = None if hi is None or (hi[0] != lo[0]) else hi[1]
        else:
            total_hi = None if hi is None else hi[0]
        cells.append(_span(lo[-1], total_hi) if not (row.exact) else str(lo[-1]))
        cells.append(_average(lo[-1], lo[-1] if row.exact else total_hi, n))
        if row.exact and analysis.best is not None and (objective == "total" or lo[0] == analysis.best_lower[0]):
            cells.append(f"+{lo[-1] - best_total}")
        else:
            cells.append("")
        sizes = [k for _, k in row.parts]
        cells.append(f"{len(sizes)} part{'s' if len(sizes) != 1 else ''}, largest {sizes[0]}" if sizes else "—")
        cells.append(line_text(row.line))
        rows.append(cells)
    widths = [max(len(r[j]) for r in [head] + rows) for j in range(len(head))]
    right = {0, 2} | set(range(4, len(head) - 2))
    out = []
    for r in [head] + rows:
        out.append("  ".join(c.rjust(widths[j]) if j in right else c.ljust(widths[j])
                             for j, c in enumerate(r)).rstrip())
    unit = "further questions, this one and the last included"
    what = "the fewest in the worst case, then the least total within it" if objective == "worst" else "the least total"
    out.append(f"value: {what}, in {unit}, over the {n} secret{'s' if n != 1 else ''} (average: per secret); "
               "class: the questions equivalent to it")
    if not all(r.exact for r in analysis.rows):
        why = f"the search did not finish within the budget of {budget:g} s" if budget else "no search finished"
        out.append(f"[lower, upper]: proven bounds, not values ({why}); ? no complete tree priced in time")
    if analysis.best is not None:
        out.append(f"proven best: {analysis.best.code}, {value_text(analysis.best, objective, n)}")
    else:
        out.append(f"the position's value is at least {analysis.best_lower[-1] if objective == 'total' else analysis.best_lower} "
                   "(not every question was valued within the budget)")
    return out


def grade_lines(grade, budget: float | None) -> list[str]:
    """A graded question, the best one, and what it costs more, in sentences."""
    analysis = grade.best
    pos, objective = analysis.position, analysis.objective
    n = pos.n
    row = grade.row
    like = f" (equivalent to {row.canonical})" if row.canonical else ""
    sizes = " ".join(str(k) for _, k in row.parts) or "none"
    out = [f"{row.code}{like}: {value_text(row, objective, n)}; "
           f"{'it may be the secret' if row.may_be_secret else 'it cannot be the secret'}; parts {sizes}"]
    if analysis.rows:
        best = analysis.rows[0]
        label = "the best question" if analysis.best is not None else "the best question found (not proven best)"
        out.append(f"{label}: {best.code}, {value_text(best, objective, n)}")
    low, high = grade.cost()
    if grade.exact:
        if objective == "total":
            out.append(f"{row.code} costs {low[0]} question{'s' if low[0] != 1 else ''} more in total than the best "
                       f"({low[0] / n:.4f} per secret)" if low[0] else f"{row.code} is a best question")
        else:
            out.append(f"{row.code} is a best question" if low == (0, 0) else
                       f"{row.code} costs {low[0]} more in the worst case and {row.lower[1] - analysis.best.lower[1]} "
                       "more questions in total")
    else:
        hi = "?" if high is None else (high[-1] if objective == "total" else high[0])
        what = "questions in total" if objective == "total" else "questions in the worst case"
        lo = low[-1] if objective == "total" else low[0]
        why = f" within the budget of {budget:g} s" if budget else ""
        out.append(f"{row.code} costs between {lo} and {hi} more {what} than the best (proven bounds: not every "
                   f"search finished{why})")
    return out


def add_commands(sub) -> None:
    """Register analyse."""
    p = command(sub, "analyse", "the exact value of every question at a position",
                "List every inequivalent question of a position (after --history, or a set of --secrets), best "
                "first, each with its exact value: the least total number of further questions, this one and the "
                "last included, over the secrets still possible (the average per secret beside it). With no "
                "history, the table of first questions. --move grades one question against the best. Under "
                "--budget, a question whose search does not finish gets proven lower and upper bounds, labelled.",
                cmd_analyse)
    add_game(p)
    where = p.add_mutually_exclusive_group()
    where.add_argument("--history", metavar="PAIRS", help="the questions so far with their answers, e.g. "
                       "\"0123:1,2 4567:0,1\" (any answer notation; ; between pairs also works)")
    where.add_argument("--secrets", metavar="FILE", help="the secrets still possible, one per line (# comments), "
                       "any set: no symmetry is assumed but that of the symbols none of them holds")
    p.add_argument("--objective", default="total", choices=["total", "worst"],
                   help="total: the least total (average); worst: the fewest questions in the worst case, then the "
                        "least total within it")
    p.add_argument("--top", type=int_in(1, 1_000_000, "--top"), metavar="K",
                   help="only the K best questions (the others are proven no better, which is quicker)")
    p.add_argument("--move", metavar="CODE", help="grade this question: its value and its cost against the best")
    p.add_argument("--budget", type=positive_seconds, metavar="SECONDS",
                   help="stop the searches after this long: what did not finish gets proven bounds")
    p.add_argument("--json", action="store_true", help="print the analysis as one JSON document")
