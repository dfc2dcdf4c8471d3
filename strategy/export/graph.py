"""The tree as a networkx graph, written with networkx's own writers (GraphML, GEXF, DOT via pydot).

Nodes are numbered in depth-first order (0 is the root) and carry `probe`, `remaining` and `depth`;
edges carry the `answer`; the graph carries the game and the tree's objective (its control characters written
as escapes, which XML cannot hold). Cut at a depth, each cut branch ends in a node labelled with the number
of secrets below it, so the DOT file renders as a readable picture of the top of the tree.
"""

from __future__ import annotations

import io
import os

import networkx as nx

from ..files import printable, write_atomic
from ..tree.format import TreeDoc, walk_secrets

FORMATS = ("graphml", "gexf", "dot")


def to_graph(doc: TreeDoc, max_depth: int | None = None) -> nx.DiGraph:
    """A directed tree: question nodes (and, when cut, `more` nodes) with answer-labelled edges."""
    g = nx.DiGraph(game=doc.game.spec, objective=printable(doc.objective))  # XML takes no control characters
    last_at_depth: list[int] = []  # depth first: a node's parent is the latest node one level up
    for node, path, secrets in walk_secrets(doc.root, doc.game):
        depth = len(path) + 1
        if max_depth is not None and depth > max_depth + 1:
            continue
        nid = g.number_of_nodes()
        if max_depth is not None and depth > max_depth:
            g.add_node(nid, probe="", remaining=len(secrets), depth=depth, label=f"{len(secrets)} more")
        else:
            guess = node["guess"]
            g.add_node(nid, probe=guess, remaining=len(secrets), depth=depth, label=f"{guess}\n({len(secrets)})")
        del last_at_depth[depth - 1 :]
        last_at_depth.append(nid)
        if path:
            answer = path[-1][1]
            g.add_edge(last_at_depth[depth - 2], nid, answer=answer, label=answer)
    return g


def write_graph(g: nx.DiGraph, fmt: str, path: str | os.PathLike) -> None:
    """Write with networkx's writer for `fmt`, through a temporary file."""
    if fmt == "graphml":
        buf = io.BytesIO()
        nx.write_graphml(g, buf)
        data = buf.getvalue()
    elif fmt == "gexf":
        buf = io.BytesIO()
        nx.write_gexf(g, buf)
        data = buf.getvalue()
    elif fmt == "dot":
        g = g.copy()
        for _, data in g.nodes(data=True):  # DOT writes a line break inside a label as the escape \n
            data["label"] = data["label"].replace("\n", "\\n")
        g.graph = {"graph": {"rankdir": "LR"}, "node": {"shape": "box", "fontsize": "10"}, "edge": {"fontsize": "9"}}
        text = io.StringIO()
        nx.nx_pydot.write_dot(g, text)
        data = text.getvalue().encode()
    else:
        raise ValueError(f"unknown graph format {fmt!r}")
    write_atomic(path, data)


def tree_from_graph(g: nx.DiGraph) -> dict:
    """Rebuild the nested tree from a graph read back (question nodes only), for checks."""
    root = next(n for n, d in g.in_degree() if d == 0)

    def build(n) -> dict:
        node = {"guess": g.nodes[n]["probe"]}
        kids = {g.edges[n, c]["answer"]: build(c) for c in g.successors(n)}
        if kids:
            node["next"] = kids
        return node

    return build(root)
