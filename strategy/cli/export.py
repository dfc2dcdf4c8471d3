"""`strategy table`, `html`, `export` and `graph`: a verified tree rendered for people and programs."""

from __future__ import annotations

import argparse

from ..files import check_output, quote
from .options import (
    MAX_DEPTH_OPTION,
    TREE_HELP,
    CommandError,
    command,
    int_in,
    load_checked,
    log,
    print_json,
    tree_argument,
)


def cmd_table(args: argparse.Namespace) -> int:
    from ..export.second_table import format_table, second_question_table, table_csv, table_json
    from ..files import write_atomic

    check_output(args.csv, "CSV table", inputs=(args.tree,))
    doc, _ = load_checked(args.tree)
    rows = second_question_table(doc)
    if args.csv:
        write_atomic(args.csv, table_csv(doc, rows).encode(), "CSV table")
    if args.json:
        print_json(table_json(doc, rows))
    elif args.csv != "-":  # the CSV on standard output is the whole output
        print(format_table(doc, rows))
    return 0


def cmd_html(args: argparse.Namespace) -> int:
    from ..export.page import render
    from ..files import write_atomic

    check_output(args.output, "page", inputs=(args.tree,))
    doc, stats = load_checked(args.tree)
    page = render(doc).encode()
    write_atomic(args.output, page, "page")
    log(
        f"{quote(args.output)}: {len(page) // 1024} kB page for {doc.game.spec} ({stats.secrets} secrets); "
        f"open it in any browser, no network needed"
    )
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from ..export.tables import export, sidecar

    if args.output == "-":  # a CSV table has its metadata beside it, a database is a file
        raise CommandError("export writes a file (and a CSV table its metadata beside it): -o needs a file name")
    check_output(args.output, "export", inputs=(args.tree,), regular=args.format == "sqlite")
    beside = sidecar(args.output) if args.format == "csv" else None
    check_output(beside, "export metadata", inputs=(args.tree,))
    doc, _ = load_checked(args.tree)
    n = export(doc, args.format, args.output, progress=not args.quiet)
    log(
        f"{n} rows written to {quote(args.output)}"
        + (f" (game, objective and total in {quote(beside)})" if beside else "")
    )
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    from ..export.graph import to_graph, write_graph

    check_output(args.output, "graph", inputs=(args.tree,))
    doc, _ = load_checked(args.tree)
    g = to_graph(doc, args.max_depth)
    write_graph(g, args.format, args.output)
    log(f"{g.number_of_nodes()} nodes, {g.number_of_edges()} edges written to {quote(args.output)}")
    return 0


def add_commands(sub) -> None:
    """Register table, html, export, graph."""
    p = command(
        sub,
        "table",
        "the second-question table of a tree",
        "For each answer to the first question: the second question, whether it may be the secret, the "
        "secrets left and the questions they still need (Tanaka's table for 4 digits).",
        cmd_table,
    )
    p.add_argument("tree", type=tree_argument, metavar="TREE", help=TREE_HELP)
    p.add_argument(
        "--csv", metavar="FILE", help="also write the table as CSV (- for standard output, instead of the table)"
    )
    p.add_argument("--json", action="store_true", help="print the table as one JSON document")

    p = command(
        sub,
        "html",
        "a web page to explore and play a tree",
        "Write one self-contained HTML page for a verified tree: play it (the page asks, you ask, a race) and "
        "explore it (outline, second-question table, histogram). No server and no network: open the file.",
        cmd_html,
    )
    p.add_argument("tree", type=tree_argument, metavar="TREE", help=TREE_HELP)
    p.add_argument(
        "-o", "--output", required=True, metavar="PAGE", help="the .html file to write (- for standard output)"
    )

    p = command(
        sub,
        "export",
        "lookup table with one row per question node",
        "Write a flat lookup table of a verified tree: one row per question node, keyed by the history "
        "'probe:H-B;probe:H-B'. The game, objective and total come with it: the first line of jsonl, the "
        "metadata table of sqlite, and for csv a sidecar OUT.meta.json.",
        cmd_export,
    )
    p.add_argument("tree", type=tree_argument, metavar="TREE", help=TREE_HELP)
    p.add_argument(
        "--format",
        required=True,
        choices=["csv", "jsonl", "sqlite"],
        help="csv, jsonl (one JSON object per row) or sqlite",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "-o", "--output", required=True, metavar="OUT", help="the file to write (written whole or not at all)"
    )

    p = command(
        sub,
        "graph",
        "the tree as a graph file (networkx writers)",
        "Write a verified tree as a graph: GraphML or GEXF for graph tools, DOT for Graphviz "
        "(render with: dot -Tsvg OUT -o tree.svg; Graphviz is not installed by this package).",
        cmd_graph,
    )
    p.add_argument("tree", type=tree_argument, metavar="TREE", help=TREE_HELP)
    p.add_argument("--format", required=True, choices=["graphml", "dot", "gexf"], help="graphml, gexf or dot")
    p.add_argument(
        "--max-depth",
        type=int_in(1, MAX_DEPTH_OPTION, "--max-depth"),
        metavar="D",
        help="keep questions 1..D, summarise the rest",
    )
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="the file to write (- for standard output)")
