"""One self-contained web page per tree: explore it and play it in a browser, with no server and no network.

The page (`page.html`, plain JavaScript and CSS) gets the tree document and the game's answers inline as
JSON; its Content-Security-Policy forbids every request, so it works from file:// or any static host.
The JavaScript repeats the rules (`rules.feedback`) and the walker's rules; the tests compare both.
"""

from __future__ import annotations

import html
import re
from importlib import resources

import orjson

from ..tree.format import TreeDoc

# The template's two slots, filled in one pass: text put into one slot is never searched for the other.
SLOT = re.compile(r"/\*(TITLE|DATA)\*/")
# Inside <script> the HTML parser ends the element at "</script" and changes state at "<!--" and "<script";
# JSON may spell any character as \uXXXX, so these never appear as such (and U+2028/9, line ends to old JavaScript).
SCRIPT_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def template() -> str:
    """page.html, read as the UTF-8 it is whatever the locale."""
    return resources.files(__package__).joinpath("page.html").read_text(encoding="utf-8")


def script_json(value: object) -> str:
    """JSON text that can sit inside a <script> element whatever its strings hold."""
    return orjson.dumps(value).decode().translate(SCRIPT_SAFE)


def render(doc: TreeDoc) -> str:
    """The page for a (verified) tree document; the caller writes it as UTF-8 (the page declares it)."""
    data = {"doc": doc.to_json(), "answers": doc.game.answers(), "spec": doc.game.spec}
    slots = {"TITLE": html.escape(f"{doc.game.spec} — {doc.objective} tree"), "DATA": script_json(data)}
    page = template()
    if sorted(SLOT.findall(page)) != sorted(slots):
        raise RuntimeError("page.html must hold /*TITLE*/ and /*DATA*/ once each")
    return SLOT.sub(lambda m: slots[m[1]], page)
