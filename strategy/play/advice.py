"""Advice in play, from the exact engine: the best question from a position (`hint`), the grade of a question
(`grade CODE`, and after every question in defence), the analysis of a position (`analyse [K]`), and the walker's
question once a history leaves its tree's path. Values are those of `search.analyse`: the least total of further
questions, this one and the last included, over the secrets still possible; exact where the search finishes within
a short budget, proven bounds otherwise, labelled so.

Standard library only until advice is asked: the engine (NumPy, numba, the game's feedback table) is loaded then,
once per game, and kept. The text of the advice events (also `strategy analyse`'s) is rendered here too.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

from ..rules import Game, GameError

ADVICE_SECONDS = 1.0  # a hint, a grade or an off-tree question: exact when the search finishes within it
ANALYSE_TIMES = 5  # `analyse` in play gets this many times an advice's time (every question valued, and asked for)
HINT_SHARE = 0.5  # of a hint's time, what the search may take: the rest prices what it did not finish
HINT_MARGIN = 0.9  # a hint's time: this share of its budget (the rest absorbs a loaded machine's delays)
COACH_MAX_CODES = 10_000  # defence grades every question unasked in games up to this size (a feedback table of
# 100 MB at most, built while the person types); larger ones (up to the engine's limit) on request only
ADVICE_COMMANDS = ("hint", "analyse", "analyze", "grade")
MAX_TOP = 1_000_000  # analyse K: at most this K (no position has more questions than that worth listing)
_ADVISORS: dict[Game, "Advisor"] = {}
_ADVISORS_LOCK = threading.Lock()


class Advisor:
    """One game's analyser (its engines and their tables), made when first needed and kept."""

    def __init__(self, game: Game):
        self.game = game
        self.seconds = ADVICE_SECONDS  # each advice's search time (play --budget sets it)
        self._analyser = None
        self._lock = threading.Lock()

    def analyser(self):
        """The total objective's `search.analyse.Analyser` (loading NumPy, numba and the feedback table)."""
        with self._lock:
            if self._analyser is None:
                from ..engine.table import game_table
                from ..search.analyse import Analyser

                self._analyser = Analyser(game_table(self.game))
            return self._analyser

    def preload(self) -> None:
        """Load the engine in a background thread (a person reads and types meanwhile); a failure there is told
        when advice is asked."""

        def load() -> None:
            try:
                self.analyser()
            except Exception:
                pass

        threading.Thread(target=load, daemon=True, name="advice-engine").start()

    def position(self, history: list[tuple[str, str]]):
        from ..search.analyse import position_from_history

        return position_from_history(self.analyser().gt, history)

    # -- advice ---------------------------------------------------------------------------------
    def hint(
        self,
        history: list[tuple[str, str]],
        alternative: Callable[[], tuple[str, int] | None] | None = None,
    ) -> dict:
        """The best question from the position: the engine's, proven best when its search finishes in `seconds`;
        else the question with the least proven upper bound of the engine's best candidate and `alternative`
        (a complete strategy's first question and total, such as a tree's), with bounds. Row fields (as
        `search.analyse.row_json`) plus `proven_best` and the position's lower bound."""
        from ..search.analyse import row_json

        pos = self.position(history)
        deadline = time.perf_counter() + HINT_MARGIN * self.seconds
        gt = self.analyser().gt

        def incumbent() -> tuple[int, int] | None:
            other = alternative() if alternative is not None else None
            return None if other is None else (gt.index(self.game.read_code(other[0])), other[1])

        analysis = self.analyser().analyse(
            pos, top=1, deadline=deadline, lines=False, quick=True, share=HINT_SHARE, incumbent=incumbent, classes=False
        )
        best, lower = analysis.rows[0], analysis.best_lower[0]
        known = analysis.incumbent
        if (
            analysis.best is None
            and known is not None
            and analysis.incumbent_class != best.probe
            and (best.upper is None or known[1] < best.upper[0])
        ):  # the caller's strategy is the better bet
            return self._hint_of(pos, self._row_of(pos, gt.code_str(known[0]), lower, known[1]), False, lower)
        return self._hint_of(pos, row_json(best, "total", pos.n), analysis.best is not None, lower)

    def _hint_of(self, pos, row: dict, proven: bool, lower: int) -> dict:
        from ..search.analyse import value_fields

        proven = proven or (row["exact"] and row["total"] == lower)
        return {**row, "candidates": pos.n, "proven_best": proven, "position_lower": value_fields("total", (lower,))}

    def _row_of(self, pos, code: str, lower: int, upper: int) -> dict:
        """The row of a question known by a complete strategy's total only: the position's bound below it."""
        from ..search.analyse import row_json

        analyser = self.analyser()
        row = analyser.row(pos, analyser.gt.index(self.game.read_code(code)))
        row.lower, row.upper = (lower,), (upper,)
        row.class_size = None
        return row_json(row, "total", pos.n)

    def grade(self, history: list[tuple[str, str]], code: str) -> dict:
        """A question graded against the best (`search.analyse.grade_json`), with the secrets it applies to."""
        from ..search.analyse import grade_json

        pos = self.position(history)
        grade = self.analyser().grade(pos, code, time.perf_counter() + self.seconds, quick=True)
        return {"candidates": pos.n, **grade_json(grade)}

    def analyse(self, history: list[tuple[str, str]], top: int | None) -> dict:
        """The position's questions valued (`search.analyse.analysis_json`), the `top` best or all."""
        from ..search.analyse import analysis_json

        pos = self.position(history)
        deadline = time.perf_counter() + ANALYSE_TIMES * self.seconds
        doc = analysis_json(self.analyser().analyse(pos, top=top, deadline=deadline))
        return {k: v for k, v in doc.items() if k not in ("game", "history")}


def advisor_for(game: Game) -> Advisor:
    """The game's advisor, shared by every walker and session of this process."""
    with _ADVISORS_LOCK:
        if game not in _ADVISORS:
            _ADVISORS[game] = Advisor(game)
        return _ADVISORS[game]


def off_tree_question(
    game: Game,
    history: list[tuple[str, str]],
    tree: Callable[[], tuple[str, int] | None],
) -> str:
    """The walker's question once the history has left its tree's path: the engine's best question, proven best
    when its search finishes within the advisor's `seconds`; otherwise whichever of the engine's best candidate
    and the tree's own continuation (`tree()`: its question and total, or None) has the least proven total."""
    return advisor_for(game).hint(history, alternative=tree)["code"]


def command(
    advisor: Advisor,
    history: list[tuple[str, str]],
    text: str,
    number: int,
    alternative: Callable[[], tuple[str, int] | None] | None = None,
) -> list[dict] | None:
    """The events answering an advice command (`hint`, `analyse [K]`, `grade CODE`) at the position `history`,
    whose next question is `number`; None when the line is no advice command."""
    words = text.split()
    if not words or words[0].lower() not in ADVICE_COMMANDS:
        return None
    verb = words[0].lower()
    try:
        if verb == "hint" and len(words) == 1:
            return [{"event": "hint", "number": number, **advisor.hint(history, alternative=alternative)}]
        if verb in ("analyse", "analyze") and len(words) <= 2:
            top = None
            if len(words) == 2:
                k = words[1]
                if not (k.isascii() and k.isdigit() and len(k) <= len(str(MAX_TOP)) and 0 < int(k) <= MAX_TOP):
                    why = f"write analyse, or analyse K for the K best questions (K from 1 to {MAX_TOP:,})"
                    return [_refused(text, why, "bad_command")]
                top = int(k)
            return [{"event": "analysis", "number": number, **advisor.analyse(history, top)}]
        if verb == "grade" and len(words) == 2:
            try:
                code = advisor.game.format_code(advisor.game.parse_code(words[1]))
            except GameError as e:
                return [_refused(text, str(e), "bad_code")]
            return [{"event": "grade", "number": number, "code": code, **advisor.grade(history, code)}]
    except GameError as e:
        return [_refused(text, str(e), "unavailable")]
    example = advisor.game.format_code(advisor.game.code_at(0))
    usage = {"hint": "write hint", "grade": f"write grade CODE, e.g. grade {example}"}.get(verb, "")
    return [_refused(text, usage or "write analyse, or analyse K", "bad_command")]


def _refused(text: str, reason: str, code: str) -> dict:
    return {"event": "refused", "input": text[:80], "reason": reason, "code": code}


# -- text ---------------------------------------------------------------------------------------------


def _span(lo, hi) -> str:
    return f"{lo}" if hi == lo else f"[{lo}, {'?' if hi is None else hi}]"


def _average(lo: int, hi: int | None, n: int) -> str:
    return f"{lo / n:.4f}" if hi == lo else f"[{lo / n:.4f}, {'?' if hi is None else f'{hi / n:.4f}'}]"


def value_text(row: dict, n: int) -> str:
    """A question's value in words: `6495 questions in total (average 4.5104)`, the worst case first with the
    worst objective, or proven bounds, labelled."""
    lo, hi = row["lower"], row["upper"]
    if "worst" not in lo:
        if row["exact"]:
            return f"{lo['total']} question{'s' if lo['total'] != 1 else ''} in total (average {lo['total'] / n:.4f})"
        top = "?" if hi is None else hi["total"]
        return (
            f"between {lo['total']} and {top} questions in total (average "
            f"{_average(lo['total'], None if hi is None else hi['total'], n)}; proven bounds)"
        )
    if row["exact"]:
        return f"worst case {lo['worst']}, {lo['total']} questions in total within it (average {lo['total'] / n:.4f})"
    worst = _span(lo["worst"], None if hi is None else hi["worst"])
    total = (
        f"at least {lo['total']}"
        if hi is None or hi["worst"] != lo["worst"]
        else f"between {lo['total']} and {hi['total']}"
    )
    return f"worst case {worst}, {total} questions in total (proven bounds)"


def line_text(line: list[dict]) -> str:
    """A best line: `1456 0,1 (378) 4278 0,2 (94) ... 5093`: question, answer, secrets left."""
    parts = [f"{s['question']} {s['answer']} ({s['secrets']})" for s in line if s["secrets"]]
    if line and line[-1]["secrets"] == 0:
        parts.append(line[-1]["question"])
    elif line:
        parts.append("...")
    return " ".join(parts)


def table_lines(doc: dict, budget: float | None) -> list[str]:
    """An analysis (`search.analyse.analysis_json`) as a table: rank, question, class size, may be the secret,
    value(s), average, above the best, parts, best line; bounds as [lower, upper]."""
    n, rows = doc["secrets"], doc["questions"]
    worst = doc["objective"] == "worst"
    best = doc["value"]
    head = (
        ["#", "question", "class", "secret?"]
        + (["worst"] if worst else [])
        + ["total", "average", "vs best", "parts", "best line"]
    )
    table = []
    for i, row in enumerate(rows, 1):
        lo, hi = row["lower"], row["upper"]
        cells = [str(i), row["code"], str(row["class_size"]), "yes" if row["may_be_secret"] else "no"]
        total_hi = None if hi is None else hi["total"]
        if worst:
            cells.append(_span(lo["worst"], None if hi is None else hi["worst"]))
            if hi is not None and hi["worst"] != lo["worst"]:
                total_hi = None
        cells.append(str(lo["total"]) if row["exact"] else _span(lo["total"], total_hi))
        cells.append(_average(lo["total"], lo["total"] if row["exact"] else total_hi, n))
        same_worst = not worst or (best is not None and lo["worst"] == best["worst"])
        cells.append(f"+{lo['total'] - best['total']}" if row["exact"] and best is not None and same_worst else "")
        sizes = [p["secrets"] for p in row["parts"]]
        cells.append(f"{len(sizes)} part{'s' if len(sizes) != 1 else ''}, largest {sizes[0]}" if sizes else "—")
        cells.append(line_text(row["line"]))
        table.append(cells)
    widths = [max(len(r[j]) for r in [head] + table) for j in range(len(head))]
    right = {0, 2} | set(range(4, len(head) - 2))
    out = [
        "  ".join(c.rjust(widths[j]) if j in right else c.ljust(widths[j]) for j, c in enumerate(r)).rstrip()
        for r in [head] + table
    ]
    what = "the fewest in the worst case, then the least total within it" if worst else "the least total"
    out.append(
        f"value: {what}, in further questions (this one and the last included) over the {n} "
        f"secret{'s' if n != 1 else ''}; average: per secret; class: the questions equivalent to it"
    )
    if not all(r["exact"] for r in rows):
        why = f"the search did not finish within the budget of {budget:g} s" if budget else "no search finished"
        out.append(f"[lower, upper]: proven bounds, not values ({why}); ?: no complete tree priced in time")
    if doc["best"] is not None:
        out.append(f"proven best: {doc['best']}, {value_text(rows[0], n)}")
    else:
        low = doc["lower"]
        bound = f"worst case {low['worst']}, total {low['total']}" if worst else f"{low['total']} questions in total"
        out.append(f"no question is proven best within the budget; none can do better than {bound}")
    return out


def grade_lines(doc: dict, budget: float | None = None) -> list[str]:
    """A graded question (`search.analyse.grade_json`), the best one, and what it costs more, in sentences."""
    n, row, best = doc["candidates"], doc["question"], doc["best"]
    like = f" (equivalent to {row['equivalent_to']})" if row["equivalent_to"] else ""
    sizes = " ".join(str(p["secrets"]) for p in row["parts"]) or "none"
    out = [
        f"{row['code']}{like}: {value_text(row, n)}; "
        f"{'it may be the secret' if row['may_be_secret'] else 'it cannot be the secret'}; parts {sizes}"
    ]
    if best is not None and best["code"] != row["code"]:
        label = "the best question" if doc["best_proven"] else "the best question found (not proven best)"
        out.append(f"{label}: {best['code']}, {value_text(best, n)}")
    cost = doc["cost"]
    low, high = cost["lower"], cost["upper"]
    if cost["exact"]:
        if "worst" in low and (low["worst"] or low["total"]):
            out.append(
                f"{row['code']} costs {low['worst']} more in the worst case and {low['total']} more questions in total"
            )
        elif low["total"]:
            out.append(
                f"{row['code']} costs {low['total']} question{'s' if low['total'] != 1 else ''} more in "
                f"total than the best ({low['total'] / n:.4f} per secret)"
            )
        else:
            out.append(f"{row['code']} is a best question")
    else:
        key = "worst" if "worst" in low else "total"
        top = "?" if high is None or high.get(key) is None else high[key]
        what = "questions in the worst case" if key == "worst" else "questions in total"
        why = f" within the budget of {budget:g} s" if budget else ""
        out.append(
            f"{row['code']} costs between {low[key]} and {top} more {what} than the best (proven bounds: "
            f"not every search finished{why})"
        )
    return out


def hint_lines(e: dict, budget: float) -> list[str]:
    """The hint event in words (`budget`: the seconds its search had)."""
    n = e["candidates"]
    secret = "it may be the secret" if e["may_be_secret"] else "it cannot be the secret"
    if e["proven_best"]:
        return [f"hint: ask {e['code']} ({secret}): the best question, {value_text(e, n)}"]
    low = e["position_lower"]["total"]
    return [
        f"hint: ask {e['code']} ({secret}): {value_text(e, n)}; not proven best within {budget:g} s, "
        f"and no question can do better than {low} ({low / n:.4f} on average)"
    ]
