"""Regenerate the README's generated blocks: figures come from the code, the shipped trees and benchmark results.

Usage: python tools/readme.py [--check]

A block sits between `<!-- begin NAME -->` and `<!-- end NAME -->`. `--check` exits 1 (and names the
block) when the README differs from what this script writes; the test suite runs it, so a number
typed into a generated block by hand fails CI.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from strategy.cli.options import Parser  # noqa: E402
from strategy.files import write_atomic  # noqa: E402
from strategy.rules import MAX_CODES, MAX_TABLE_CODES  # noqa: E402
from strategy.tree import format as tree_io  # noqa: E402
from strategy.tree.verify import Stats, verify_file  # noqa: E402

README = ROOT / "README.md"
RESULTS = ROOT / "tools" / "results"

# Published values to compare with (../shared/reference/published-results.md); keyed by (game, objective).
# "-consistent" marks trees whose probes may all be the secret.
PUBLISHED = {
    ("bulls:4x10", "total"): "26274 (Tanaka 1996)",
    ("bulls:4x10", "total-consistent"): "26688 (reference notes; mmstrat corrected)",
    ("bulls:4x10", "worst-then-fewest"): "worst 7, 50 at 7 (Slovesnov)",
    ("bulls:4x9", "total"): "14914 (mmstrat)",
    ("mastermind:4x6", "total"): "5625 (Koyama & Lai 1993)",
    ("mastermind:4x6", "total-consistent"): "5660 (supermastermind)",
    ("mastermind:4x6", "total-max-depth-5"): "5626 (Koyama & Lai 1993)",
    ("mastermind:4x6", "worst"): "worst 5 (Knuth 1977), 5626 (Koyama & Lai 1993)",
    ("mastermind:4x7", "total"): "11228 (Ville 2013)",
    ("mastermind:4x8", "total"): "20471 (arfst23, unreviewed)",
    ("mastermind:4x8", "worst"): "20473 within 6 questions (arfst23, unreviewed)",
    ("mastermind:5x8", "total-consistent"): "179929",
}


def published_key(spec: str, objective: str, consistent_only: bool) -> tuple[str, str]:
    """A game's objective as PUBLISHED names it ("-consistent" when every probe may be the secret)."""
    return spec, objective + ("-consistent" if consistent_only else "")


def proven_trees() -> list[tuple[str, tree_io.TreeDoc, Stats]]:
    """The proven trees in trees/ but the race trees, verified over every secret: (file name, tree, stats)."""
    paths = sorted(p for p in (ROOT / "trees").iterdir() if p.name.endswith((".json", ".json.gz"))
                   and not p.name.startswith("race-"))
    trees = [(p.name, *verify_file(p)) for p in paths]
    return [(name, doc, stats) for name, doc, stats in trees if doc.objective != "partial"]


def block_limits() -> str:
    return (f"| what | limit |\n|---|---|\n"
            f"| codes of any game (every command: play, verify, build, export) | {MAX_CODES:,} |\n"
            f"| codes of a game for the exact search and noisy mode (they keep the N×N answer table) | {MAX_TABLE_CODES:,} |\n"
            f"| size of a tree file read (also once unpacked from gzip) | 512 MB |")


OBJECTIVE_ORDER = ["total", "worst", "worst-then-fewest", "total-max-depth", "within"]


def objective_label(doc: tree_io.TreeDoc) -> str:
    return doc.objective + (", consistent probes" if doc.generator.get("consistent_only") else "")


def result_order(item: tuple[str, tree_io.TreeDoc, Stats]) -> tuple:
    name, doc, _ = item
    base = re.sub(r"-\d+$", "", doc.objective)
    rank = OBJECTIVE_ORDER.index(base) if base in OBJECTIVE_ORDER else len(OBJECTIVE_ORDER)
    return doc.game.count(), doc.game.spec, bool(doc.generator.get("consistent_only")), rank, name


def block_results() -> str:
    """Every shipped proven tree but the race trees: its proven figures, measured again by walking every secret."""
    rows = ["| game | codes | objective | proven | average | worst | questions 1, 2, 3, ... | published | tree | solve time |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for name, doc, stats in sorted(proven_trees(), key=result_order):
        run = doc.generator.get("run", {})
        proven = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in doc.generator.get("proven", {}).items())
        seconds = f"{run['seconds']:,.1f} s, {run['executor']}" if run else ""
        if run.get("reused_from_store"):  # the last run only: earlier runs left their work in the store
            seconds += f", the last run of a resumed solve ({run['reused_from_store']} subproblems read back)"
        if run.get("settled_by_a_given_tree"):  # stages a shipped tree met the proven bound of (no search)
            seconds += f"; {', '.join(run['settled_by_a_given_tree'])} settled by a given tree"
        every = doc.generator.get("frontier")
        if every:  # a frontier proof over several runs (the engine may have changed between them)
            seconds += (f"; every run: {every['wall_seconds'] / 3600:.1f} h wall, "
                        f"{every['worker_seconds'] / 3600:.1f} h of worker time")
        key = published_key(doc.game.spec, doc.objective, doc.generator.get("consistent_only"))
        rows.append(f"| {doc.game.spec} | {doc.game.count()} | {objective_label(doc)} | {proven} | {stats.average:.4f} | "
                    f"{stats.worst} | {', '.join(map(str, stats.depth_counts[1:]))} | {PUBLISHED.get(key, 'none found')} | "
                    f"`{name}` | {seconds} |")
    return "\n".join(rows)


def block_format_example() -> str:
    doc = tree_io.load(ROOT / "trees" / "bulls-4x10-total.json")
    stats = orjson.dumps(doc.stats).decode().replace(",", ", ").replace(":", ": ")
    first = doc.root["guess"]
    answer, child = next(iter(doc.root["next"].items()))
    return ("```json\n"
            '{"format": "strategy-tree", "version": 1,\n'
            ' "game": {"name": "bulls", "length": 4, "symbols": 10, "leading_zero": true},\n'
            ' "objective": "total",\n'
            ' "generator": {"tool": "strategy 0.1.0", "...": "free-form"},\n'
            f' "stats": {stats},\n'
            f' "tree": {{"guess": "{first}", "next": {{"{answer}": {{"guess": "{child["guess"]}", "next": {{"...": "..."}}}}, "...": "..."}}}}}}\n'
            "```")


def _run(*args: str) -> str:
    r = subprocess.run([sys.executable, "-m", "strategy", *args], capture_output=True, text=True, cwd=ROOT,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    if r.returncode:
        raise SystemExit(f"strategy {' '.join(args)} failed: {r.stderr}")
    return r.stdout + r.stderr


def block_example_session() -> str:
    tree = "trees/mastermind-4x6-total.json"
    out = ["```", f"$ strategy stats {tree}", _run("stats", tree).rstrip(),
           f"$ strategy play {tree} --secret 3321", _run("play", tree, "--secret", "3321").rstrip(), "```"]
    return "\n".join(out)


def block_protocol_session() -> str:
    """A real session through the protocol: bulls 3 of 10, secret 385, with a refused and an undone answer."""
    from strategy.protocol import Player
    from strategy.rules import feedback, parse_game

    game = parse_game("bulls:3x10")
    secret = game.parse_code("385")
    lines = ["$ strategy play trees/bulls-3x10-total.json --protocol"]
    player = Player.start("trees/bulls-3x10-total.json", env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})

    def show(events) -> None:
        for e in events:
            lines.append("< " + orjson.dumps({"event": e.kind, **e.fields}).decode())

    show([player.ready])
    events = player.until_await()
    show(events)
    script = ["3,1", None, "undo", None]
    while True:
        command = script.pop(0) if script else None
        if command is None:
            q = [e for e in player.log if e.kind == "question"][-1]
            command = game.format_answer(feedback(secret, game.parse_code(q.code)))
        lines.append(f"> {command}")
        events = player.send(command)
        show(events)
        if any(e.kind == "solved" for e in events):
            break
    lines.append("> quit")
    player.quit()
    return "```\n" + "\n".join(lines) + "\n```"


def result_tables(prefixes: tuple[str, ...], exclude: tuple[str, ...] = ()) -> str:
    """Tables written by the tools (tools/results/*.md) whose names start with a prefix, in name order."""
    paths = sorted(p for p in RESULTS.glob("*.md") if p.name.startswith(prefixes) and not p.name.startswith(exclude))
    return "\n\n".join(p.read_text().rstrip() for p in paths) or "(not run yet)"


TABLES = ("race-", "league-", "frontier-", "first-")


def block_benchmarks() -> str:
    return result_tables(("",), exclude=TABLES)


BLOCKS = {
    "limits": block_limits,
    "results": block_results,
    "format-example": block_format_example,
    "example-session": block_example_session,
    "protocol-session": block_protocol_session,
    "benchmarks": block_benchmarks,
    "race": lambda: result_tables(("race-",)),
    "league": lambda: result_tables(("league-",)),
    "frontier": lambda: result_tables(("frontier-",)),
    "first-questions": lambda: result_tables(("first-",)),
}
PATTERN = re.compile(r"(<!-- begin (?P<name>[\w-]+) -->)(?P<body>.*?)(<!-- end (?P=name) -->)", re.S)


def regenerate(text: str) -> tuple[str, list[str]]:
    """The README with every block rewritten, and the names of the blocks that changed."""
    changed: list[str] = []

    def sub(m: re.Match) -> str:
        name = m.group("name")
        if name not in BLOCKS:
            raise SystemExit(f"README block {name!r} has no generator")
        body = "\n" + BLOCKS[name]() + "\n"
        if body != m.group("body"):
            changed.append(name)
        return m.group(1) + body + m.group(4)

    return PATTERN.sub(sub, text), changed


def main() -> int:
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that the README is up to date (exit 1 if not)")
    args = parser.parse_args()
    text = README.read_text()
    new, changed = regenerate(text)
    if args.check:
        if changed:
            print(f"README blocks out of date: {', '.join(changed)} (run python tools/readme.py)")
            return 1
        print("README blocks up to date")
        return 0
    write_atomic(README, new.encode())
    print(f"rewrote {', '.join(changed) or 'nothing'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
