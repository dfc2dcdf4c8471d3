"""One self-contained web page per tree: explore it and play it in a browser, with no server and no network.

The page (`page.html`, plain JavaScript and CSS) gets the tree document and the game's answers inline as
JSON; its Content-Security-Policy forbids every request, so it works from file:// or any static host.
The JavaScript repeats the rules (`rules.feedback`) and the walker's rules; the tests compare both.
"""
from __future__ import annotations

import html
from pathlib import Path

import orjson

from ..tree.format import TreeDoc

TEMPLATE = Path(__file__).with_name("page.html")


def render(doc: TreeDoc) -> str:
    """The page for a (verified) tree document."""
    data = {"doc": doc.to_json(), "answers": doc.game.answers(), "spec": doc.game.spec}
    text = orjson.dumps(data).decode()
    # inside <script>: keep "</script>" and "<!--" from closing or confusing the element
    text = text.replace("</", "<\\/").replace("<!--", "<\\!--")
    page = TEMPLATE.read_text()
    title = html.escape(f"{doc.game.spec} — {doc.objective} tree")
    return page.replace("/*TITLE*/", title, 1).replace("/*DATA*/", text, 1)
