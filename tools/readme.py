"""Regenerate the generated blocks of the README and of the documentation site (docs/): figures come from the
code, the shipped trees and benchmark results, never from a hand.

Usage: python tools/readme.py [--check]

A block sits between `<!-- begin NAME -->` and `<!-- end NAME -->` in README.md or a page of docs/. `--check`
exits 1 (and names the file and block) when a page differs from what this script writes; the test suite runs it,
so a number typed into a generated block by hand fails CI.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import subprocess
import sys
from pathlib import Path
from unittest import mock

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from strategy import protocol  # noqa: E402
from strategy.cli import make_parser  # noqa: E402
from strategy.cli.options import Parser  # noqa: E402
from strategy.files import MAX_READ_BYTES, write_atomic  # noqa: E402
from strategy.rules import MAX_CODES, MAX_LIVE_CODES, MAX_TABLE_CODES, parse_game  # noqa: E402
from strategy.tree import format as tree_io  # noqa: E402
from strategy.tree.verify import Stats, verify_file  # noqa: E402

README = ROOT / "README.md"
DOCS = ROOT / "docs"
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


def documents() -> list[Path]:
    """The files whose blocks this script writes: the README and every page of the documentation site."""
    return [README, *sorted(DOCS.glob("*.md"))]


# -- the shipped trees -------------------------------------------------------------------------------------------


@functools.cache
def shipped_trees() -> tuple[tuple[str, tree_io.TreeDoc, Stats], ...]:
    """Every tree in strategy/trees/ but the race trees, verified over every secret: (file name, tree, stats)."""
    paths = sorted(
        p
        for p in (ROOT / "strategy" / "trees").iterdir()
        if p.name.endswith((".json", ".json.gz")) and not p.name.startswith("race-")
    )
    return tuple((p.name, *verify_file(p)) for p in paths)


def proven_trees() -> list[tuple[str, tree_io.TreeDoc, Stats]]:
    """The shipped trees with a proof (not the best trees found by an unfinished solve)."""
    return [(name, doc, stats) for name, doc, stats in shipped_trees() if doc.objective != "partial"]


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
    rows = [
        "| game | codes | objective | proven | average | worst | questions 1, 2, 3, ... | published | tree | solve time |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
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
            seconds += (
                f"; every run: {every['wall_seconds'] / 3600:.1f} h wall, "
                f"{every['worker_seconds'] / 3600:.1f} h of worker time"
            )
        key = published_key(doc.game.spec, doc.objective, doc.generator.get("consistent_only"))
        rows.append(
            f"| {doc.game.spec} | {doc.game.count()} | {objective_label(doc)} | {proven} | {stats.average:.4f} | "
            f"{stats.worst} | {', '.join(map(str, stats.depth_counts[1:]))} | {PUBLISHED.get(key, 'none found')} | "
            f"`{name}` | {seconds} |"
        )
    return "\n".join(rows)


def block_solved() -> str:
    """One row per game of the shipped trees: the least total and the least worst case proven, or, for a game whose
    solve is unfinished, its proven lower bound and the best tree found."""
    games: dict[str, list[tuple[str, tree_io.TreeDoc, Stats]]] = {}
    for item in sorted(shipped_trees(), key=result_order):
        games.setdefault(item[1].game.spec, []).append(item)
    rows = ["| game | secrets | least total (average) | least worst case | published |", "|---|---|---|---|---|"]
    for spec, items in games.items():
        any_probe = [(doc, stats) for _, doc, stats in items if not doc.generator.get("consistent_only")]
        total = next((stats for doc, stats in any_probe if doc.objective == "total"), None)
        partial = next(((doc, stats) for doc, stats in any_probe if doc.objective == "partial"), None)
        worst = next(
            (
                stats.worst
                for doc, stats in any_probe  # measured: the walk of the tree that proves it least
                if doc.objective in ("worst", "worst-then-fewest")
            ),
            None,
        )
        if total is not None:
            least = f"**{total.total}** ({total.average:.4f})"
        elif partial is not None:
            doc, stats = partial
            least = f"open: at least {doc.generator['lower_bound']}, best found {stats.total} ({stats.average:.4f})"
        else:
            least = "not solved"
        count = items[0][1].game.count()
        rows.append(
            f"| {spec} | {count:,} | {least} | {worst if worst is not None else '-'} | "
            f"{PUBLISHED.get((spec, 'total'), 'none found')} |"
        )
    return "\n".join(rows)


def block_format_example() -> str:
    doc = tree_io.load(ROOT / "strategy" / "trees" / "bulls-4x10-total.json")
    stats = orjson.dumps(doc.stats).decode().replace(",", ", ").replace(":", ": ")
    first = doc.root["guess"]
    answer, child = next(iter(doc.root["next"].items()))
    return (
        "```json\n"
        '{"format": "strategy-tree", "version": 1,\n'
        ' "game": {"name": "bulls", "length": 4, "symbols": 10, "leading_zero": true},\n'
        ' "objective": "total",\n'
        ' "generator": {"tool": "strategy 0.1.0", "...": "free-form"},\n'
        f' "stats": {stats},\n'
        f' "tree": {{"guess": "{first}", "next": {{"{answer}": {{"guess": "{child["guess"]}", "next": {{"...": "..."}}}}, "...": "..."}}}}}}\n'
        "```"
    )


# -- the game and its limits -------------------------------------------------------------------------------------

GAME_EXAMPLES = {
    "bulls:4x10": "4 distinct symbols out of 10 (`0123` is a code, `0012` is not)",
    "bulls:4x10:nz": "the same, no leading `0` (probes follow the same rule)",
    "bulls:5x10": "5 of 10",
    "mastermind:4x6": "4 pegs, 6 colours, repetition allowed",
    "mastermind:5x8": "5 pegs, 8 colours",
}


def megabytes(n: int) -> str:
    return f"{n / 1e6:,.0f} MB" if n >= 1e6 else f"{n / 1e3:,.0f} kB"


def block_games() -> str:
    """The example specs with their number of codes and the size of the N×N answer table the exact search keeps."""
    rows = ["| spec | game | codes | answer table (N×N bytes) |", "|---|---|---|---|"]
    for spec, what in GAME_EXAMPLES.items():
        n = parse_game(spec).count()
        table = megabytes(n * n) if n <= MAX_TABLE_CODES else "none (over the exact search's limit)"
        rows.append(f"| `{spec}` | {what} | {n:,} | {table} |")
    return "\n".join(rows)


def block_limits() -> str:
    return (
        f"| what | limit |\n|---|---|\n"
        f"| codes of a game played without a tree file (`play --game G`: offence, auto, defence, race, "
        f"protocol, `--all --sample N`) | {MAX_LIVE_CODES:,} |\n"
        f"| codes of a game for every other command and mode (tree files, verify, build, export) "
        f"| {MAX_CODES:,} |\n"
        f"| codes of a game for the exact search and noisy mode (they keep the N×N answer table) | {MAX_TABLE_CODES:,} |\n"
        f"| size of a tree file read (also once unpacked from gzip) | {MAX_READ_BYTES // 2**20} MB |"
    )


# -- sessions run for real ---------------------------------------------------------------------------------------


def _run(*args: str) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "strategy", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    if r.returncode:
        raise SystemExit(f"strategy {' '.join(args)} failed: {r.stderr}")
    return r.stdout + r.stderr


def block_example_session() -> str:
    tree = "mastermind:4x6"
    out = [
        "```",
        f"$ strategy stats {tree}",
        _run("stats", tree).rstrip(),
        f"$ strategy play {tree} --secret 3321",
        _run("play", tree, "--secret", "3321").rstrip(),
        "```",
    ]
    return "\n".join(out)


def block_second_table() -> str:
    tree = "bulls:4x10"
    return "\n".join(["```", f"$ strategy table {tree}", _run("table", tree).rstrip(), "```"])


def block_protocol_session() -> str:
    """A real session through the protocol: bulls 3 of 10, secret 385, with a refused and an undone answer."""
    from strategy.protocol import Player
    from strategy.rules import feedback

    game = parse_game("bulls:3x10")
    secret = game.parse_code("385")
    lines = ["$ strategy play bulls:3x10 --protocol"]
    player = Player.start("bulls:3x10", env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})

    def show(events) -> None:  # paths as the checkout names them, whichever folder it is in
        for e in events:
            lines.append("< " + orjson.dumps({"event": e.kind, **e.fields}).decode().replace(f"{ROOT}/", ""))

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


# -- the schemas ----------------------------------------------------------------------------------------------------


def schema_path(name: str) -> Path:
    """A JSON Schema shipped in the package, wherever the layout puts it."""
    found = sorted((ROOT / "strategy").rglob(name))
    if len(found) != 1:
        raise SystemExit(f"expected one {name} under strategy/, found {len(found)}")
    return found[0]


def block_tree_schema() -> str:
    path = schema_path("tree.schema.json")
    return f"`{path.relative_to(ROOT)}`:\n\n```json\n{path.read_text().rstrip()}\n```"


CODE_PATTERN = "^[0-9a-z]+(?![\\s\\S])"
ANSWER_PATTERN = "^[0-9]+,[0-9]+(?![\\s\\S])"


def json_type(schema: dict) -> str:
    """A JSON Schema fragment in words: `integer ≥ 1`, `one of "a", "b"`, `array of {number, code}`."""
    if "const" in schema:
        return f"`{orjson.dumps(schema['const']).decode()}`"
    if "enum" in schema:
        return "one of " + ", ".join(f"`{orjson.dumps(v).decode()}`" for v in schema["enum"])
    if "oneOf" in schema:
        return " or ".join(json_type(s) for s in schema["oneOf"])
    if "$ref" in schema:  # a definition shared by several events (the analysis event's row and value)
        return f"a {schema['$ref'].rsplit('/', 1)[1]} (see below)"
    if schema.get("type") == "object" and "properties" in schema:
        return "{" + ", ".join(schema["properties"]) + "}"
    kinds = schema.get("type")
    text = " or ".join(kinds) if isinstance(kinds, list) else str(kinds)
    if schema.get("pattern") == CODE_PATTERN:
        text += " (a code)"
    elif schema.get("pattern") == ANSWER_PATTERN:
        text += " (an answer `H,B`)"
    elif "pattern" in schema:
        text += f" matching `{schema['pattern']}`"
    if "minimum" in schema:
        text += f" ≥ {schema['minimum']}"
    if "maximum" in schema:
        text += f", ≤ {schema['maximum']}"
    if "exclusiveMaximum" in schema:
        text += f", < {schema['exclusiveMaximum']}"
    if kinds == "array":
        items = schema.get("items", {})
        inner = ("{" + ", ".join(items["properties"]) + "}") if "properties" in items else json_type(items)
        text = f"array of {inner}" + (f", at least {schema['minItems']}" if "minItems" in schema else "")
    return text


def block_protocol_events() -> str:
    """Every event of the play protocol, in the schema's order, with its fields' types as the schema states them."""
    path = schema_path("protocol.schema.json")
    schema = orjson.loads(path.read_bytes())
    out = [
        f"From `{path.relative_to(ROOT)}` ({schema['$id']}). Every field listed is always present unless marked "
        "optional; no other field appears. A `code` is one of the [codes](#codes) below."
    ]
    for ref in schema["oneOf"]:
        name = ref["$ref"].rsplit("/", 1)[1]
        event = schema["$defs"][name]
        out += ["", f"### `{name}`", "", event["description"], "", "| field | type | meaning |", "|---|---|---|"]
        for field, spec in event["properties"].items():
            if field == "event":
                continue
            optional = "" if field in event.get("required", ()) else " (optional)"
            kind = "a code below" if spec.get("enum") == list(protocol.CODES) else json_type(spec)
            out.append(f"| `{field}`{optional} | {kind} | {cell(spec.get('description', ''))} |")
    return "\n".join(out)


def block_protocol_codes() -> str:
    """The codes of refused, error and end events (strategy.protocol.CODES, their one home), checked against the
    schema's enums."""
    schema = orjson.loads(schema_path("protocol.schema.json").read_bytes())
    for name in ("refused", "error", "end"):
        if schema["$defs"][name]["properties"]["code"].get("enum") != list(protocol.CODES):
            raise SystemExit(f"the protocol schema's codes of {name} and strategy.protocol.CODES differ")
    rows = ["| code | meaning |", "|---|---|"]
    rows += [f"| `{code}` | {cell(meaning)} |" for code, meaning in protocol.CODES.items()]
    return "\n".join(rows)


EXIT_MEANINGS = {  # the player's exit statuses (strategy.protocol, their one home), in words
    "EXIT_SOLVED": "solved (in defence: you solved; in a race: the race was decided)",
    "EXIT_BAD_INPUT": "bad input: options, files, a tree that does not cover the answers",
    "EXIT_QUIT": "quit",
    "EXIT_EOF": "end of input",
    "EXIT_CONTRADICTION": "the input ended, or you quit, while the answers contradicted each other",
    "EXIT_HANGUP": "SIGHUP stopped the player (its terminal closed)",
    "EXIT_INTERRUPTED": "SIGINT stopped the player (Ctrl-C)",
    "EXIT_TERMINATED": "SIGTERM stopped the player",
}


def block_protocol_exits() -> str:
    """The `exit` values the schema allows for the `end` event, named by the player's own constants."""
    allowed = orjson.loads(schema_path("protocol.schema.json").read_bytes())["$defs"]["end"]["properties"]["exit"][
        "enum"
    ]
    names = {getattr(protocol, name): name for name in EXIT_MEANINGS}
    missing = [code for code in allowed if code not in names]
    if missing or len(names) != len(EXIT_MEANINGS) or set(names) != set(allowed):
        raise SystemExit(f"the protocol schema's exit statuses {allowed} and the player's {sorted(names)} differ")
    rows = ["| exit | constant | meaning |", "|---|---|---|"]
    rows += [f"| {code} | `{names[code]}` | {EXIT_MEANINGS[names[code]]} |" for code in allowed]
    return "\n".join(rows)


# -- the command-line reference ---------------------------------------------------------------------------------


def invocation(action: argparse.Action) -> str:
    """How an argument is written: `--levels K`, `-o, --output FILE`, `--rule {tie,first}`, `TREE`."""
    if not action.option_strings:
        name = action.metavar or action.dest
        return f"[{name}]" if action.nargs == "?" else name
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    value = action.metavar or (
        "{" + ",".join(map(str, action.choices)) + "}" if action.choices else action.dest.upper()
    )
    return ", ".join(action.option_strings) + f" {value}"


def machine_free(action: argparse.Action) -> str:
    """An argument's help as on any machine: `--jobs` takes 1 to this machine's number of cores, which the page
    names in words (the same page is checked on machines with other numbers of cores)."""
    text = action.help or ""
    if action.dest == "jobs":
        text = text.replace(f"1 to {os.cpu_count() or 1} ", "1 to the number of cores ")
    return text


def cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def command_reference(parser: argparse.ArgumentParser) -> list[str]:
    """One command: its description, usage line as argparse prints it, and a table of its arguments."""
    with mock.patch.dict(os.environ, {"COLUMNS": "100"}):  # argparse wraps the usage at the terminal's width
        usage = parser.format_usage().strip()
    out = [
        f"### {parser.prog}",
        "",
        cell(parser.description or ""),
        "",
        "```text",
        usage,
        "```",
        "",
        "| argument | meaning |",
        "|---|---|",
    ]
    exclusive = {id(a) for group in parser._mutually_exclusive_groups for a in group._group_actions}
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        notes = []
        if action.required and action.option_strings:
            notes.append("required")
        if id(action) in exclusive:
            notes.append("not with the others of its group")
        if action.choices and action.metavar:
            notes.append("one of " + ", ".join(f"`{c}`" for c in action.choices))
        if (
            action.default not in (None, False, [], argparse.SUPPRESS)
            and action.nargs != 0
            and "default" not in (action.help or "")
        ):
            notes.append(f"default `{action.default}`")
        if isinstance(action, argparse._AppendAction) and "repeatable" not in (action.help or ""):
            notes.append("repeatable")
        meaning = cell(machine_free(action)) + (f" ({'; '.join(notes)})" if notes else "")
        out.append(f"| `{invocation(action)}` | {meaning} |")
    if parser.epilog:
        out += ["", "```text", parser.epilog.rstrip(), "```"]
    return out


def block_cli() -> str:
    """The reference of every command, generated from the parsers `strategy.cli.make_parser()` builds: what
    `strategy COMMAND --help` says, so that it cannot drift from it."""
    parser = make_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = ["| command | what it does |", "|---|---|"]
    out += [f"| [`strategy {c.dest}`](#strategy-{c.dest}) | {cell(c.help or '')} |" for c in commands._choices_actions]
    for name, sub in commands.choices.items():
        out += [""] + command_reference(sub)
    return "\n".join(out)


# -- layout -------------------------------------------------------------------------------------------------------


def first_line(path: Path) -> str:
    """The first line of a Python file's module docstring."""
    import ast

    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    return cell(doc.split("\n\n")[0])


def block_layout() -> str:
    """Every module of the package, script of tools/ and test file, with the first paragraph of its docstring."""
    paths = [
        *sorted((ROOT / "strategy").rglob("*.py")),
        *sorted((ROOT / "tools").glob("*.py")),
        *sorted((ROOT / "tests").rglob("test_*.py")),
    ]
    rows = ["| file | what it is |", "|---|---|"]
    rows += [f"| `{p.relative_to(ROOT)}` | {first_line(p)} |" for p in paths if p.name != "__main__.py"]
    data = sorted(p for p in (ROOT / "strategy").rglob("*.*") if p.suffix in (".json", ".html"))
    rows.append("| package data | " + ", ".join(f"`{p.relative_to(ROOT)}`" for p in data) + " |")
    return "\n".join(rows)


# -- result tables the tools write ---------------------------------------------------------------------------------


def result_tables(prefixes: tuple[str, ...], exclude: tuple[str, ...] = ()) -> str:
    """Tables written by the tools (tools/results/*.md) whose names start with a prefix, in name order."""
    paths = sorted(p for p in RESULTS.glob("*.md") if p.name.startswith(prefixes) and not p.name.startswith(exclude))
    return "\n\n".join(p.read_text().rstrip() for p in paths) or "(not run yet)"


TABLES = ("race-", "league-", "frontier-", "first-", "vs-", "live")


def block_benchmarks() -> str:
    return result_tables(("",), exclude=TABLES)


def block_first_questions() -> str:
    """The first-question tables the tools have written (tools/results/first-*.md), and which they are."""
    paths = sorted(RESULTS.glob("first-*.md"))
    if not paths:
        return "No first-question table has been written yet (`tools/results/first-*.md` holds none)."
    names = ", ".join(f"`{p.name}`" for p in paths)
    return f"Written so far: {names}.\n\n" + result_tables(("first-",))


BLOCKS = {
    "solved": block_solved,
    "games": block_games,
    "limits": block_limits,
    "results": block_results,
    "first-questions": block_first_questions,
    "second-table": block_second_table,
    "format-example": block_format_example,
    "tree-schema": block_tree_schema,
    "example-session": block_example_session,
    "protocol-events": block_protocol_events,
    "protocol-exits": block_protocol_exits,
    "protocol-codes": block_protocol_codes,
    "protocol-session": block_protocol_session,
    "cli": block_cli,
    "layout": block_layout,
    "benchmarks": block_benchmarks,
    "race": lambda: result_tables(("race-",)),
    "league": lambda: result_tables(("league-",)),
    "frontier": lambda: result_tables(("frontier-",)),
    "live": lambda: result_tables(("vs-", "live")),
}
PATTERN = re.compile(r"(<!-- begin (?P<name>[\w-]+) -->)(?P<body>.*?)(<!-- end (?P=name) -->)", re.S)


@functools.cache
def generated(name: str) -> str:
    """A block's text, made once per process (a block may appear in several files)."""
    if name not in BLOCKS:
        raise SystemExit(f"block {name!r} has no generator in tools/readme.py")
    return BLOCKS[name]()


def regenerate(text: str) -> tuple[str, list[str]]:
    """The text with every block rewritten, and the names of the blocks that changed."""
    changed: list[str] = []

    def sub(m: re.Match) -> str:
        body = "\n" + generated(m.group("name")) + "\n"
        if body != m.group("body"):
            changed.append(m.group("name"))
        return m.group(1) + body + m.group(4)

    return PATTERN.sub(sub, text), changed


def blocks_in(path: Path) -> list[str]:
    return [m.group("name") for m in PATTERN.finditer(path.read_text())]


def unused_blocks() -> list[str]:
    """Generators no page uses: a block that was dropped from its page by mistake."""
    used = {name for path in documents() for name in blocks_in(path)}
    return sorted(set(BLOCKS) - used)


def out_of_date() -> list[str]:
    """`file: block` for every generated block that differs from what this script writes."""
    stale = []
    for path in documents():
        _, changed = regenerate(path.read_text())
        stale += [f"{path.relative_to(ROOT)}: {name}" for name in changed]
    return stale


def main() -> int:
    parser = Parser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument(
        "--check", action="store_true", help="only check that every block is up to date (exit 1 if not)"
    )
    args = parser.parse_args()
    if unused := unused_blocks():
        print(f"blocks no page uses: {', '.join(unused)}")
        return 1
    if args.check:
        if stale := out_of_date():
            print(f"generated blocks out of date: {'; '.join(stale)} (run python tools/readme.py)")
            return 1
        print("generated blocks up to date")
        return 0
    rewritten = [(path, *regenerate(path.read_text())) for path in documents()]  # every block made before any write
    for path, new, changed in rewritten:
        if changed:
            write_atomic(path, new.encode())
            print(f"{path.relative_to(ROOT)}: rewrote {', '.join(changed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
