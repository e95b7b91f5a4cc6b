"""Building HTML safely: every text goes through :func:`esc`; markup is only ever ours.

Pages are plain strings put together from small functions. A value from a game, a
move, a player's name or a message is always text (:func:`esc` escapes ``& < > " '``),
never markup, so nothing from outside can add an element or an attribute. The page
shell links one stylesheet and (optionally) one script from ``/static/``; there is no
inline script or style, so the Content-Security-Policy can forbid both.
"""

from __future__ import annotations

import html
import math
import time
from collections.abc import Iterable, Sequence
from typing import Any

BLANKS = frozenset({"", "b", "blank", "empty", "e", "0", "none", "nil", "dirt"})
PALETTE = 8  # cell colour classes v0..v7 (style.css)


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def tag(name: str, body: str = "", /, **attrs: Any) -> str:
    """``<name attrs>body</name>``: ``body`` is markup (build it with :func:`esc`);
    attribute values are escaped (``class_`` for ``class``, ``data_x`` for ``data-x``)."""
    rendered = "".join(f' {k.rstrip("_").replace("_", "-")}="{esc(v)}"'
                       for k, v in attrs.items() if v is not None)
    return f"<{name}{rendered}>{body}</{name}>"


def void(name: str, /, **attrs: Any) -> str:
    """An element without content (``<input ...>``), attributes as in :func:`tag`."""
    return tag(name, **attrs)[:-len(f"</{name}>")]


# a colour's name gets that colour; x and o, the usual two marks, red and blue (by the
# hash they came out red and rose: alike at a glance)
COLOUR_WORDS = {"red": "v0", "yellow": "v1", "green": "v2", "purple": "v3", "black": "v4",
                "orange": "v5", "blue": "v6", "pink": "v7", "white": "vw",
                "x": "v0", "o": "v6"}


def colour_class(text: str) -> str:
    """The colour of a cell's content: blanks none, a colour's name that colour, else
    one of the palette by a hash that ``match.js`` computes the same way (so live
    updates keep the colours)."""
    word = text.strip().lower()
    if word in BLANKS:
        return ""
    if word in COLOUR_WORDS:
        return COLOUR_WORDS[word]
    code = 0
    for ch in text:
        code = (code * 31 + ord(ch)) % 1_000_003
    return f"v{code % PALETTE}"


def cell_text(text: str) -> str:
    """What a board cell shows: nothing for a blank (``b``, ``blank`` ...: ``BLANKS``)."""
    return "" if text.strip().lower() in BLANKS else text


def number(value: float | None, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.{digits}f}"


def when(epoch: float | None) -> str:
    if not epoch:
        return "–"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


def table(headers: Sequence[str], rows: Iterable[Sequence[str]] = (), *, body: str = "",
          **attrs: Any) -> str:
    """A table; ``headers`` are text, row cells markup (or ``body``: the rows' markup)."""
    head = "".join(tag("th", esc(h)) for h in headers)
    body += "".join(tag("tr", "".join(tag("td", c) for c in row)) for row in rows)
    return tag("table", tag("thead", tag("tr", head)) + tag("tbody", body), **attrs)


def page(title: str, body: str, *, status: str | None = None, script: str | None = None,
         refresh: int | None = None, data: dict[str, str] | None = None) -> str:
    """A whole page: ``body`` is markup, everything else text."""
    head = [
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        tag("title", esc(title)),
        '<link rel="stylesheet" href="/static/style.css">',
        '<link rel="icon" type="image/png" href="/static/favicon.png">',
    ]
    if refresh:  # pages of running things stay fresh without JavaScript
        head.append(f'<meta http-equiv="refresh" content="{int(refresh)}">')
    if script:
        head.append(f'<script src="/static/{esc(script)}" defer></script>')
    attrs = {f"data_{k}": v for k, v in (data or {}).items()}
    nav = tag("nav", tag("a", "ggp serve", href="/") + " " + tag("span", esc(title)))
    return ("<!doctype html>\n" + tag("html", tag("head", "".join(head))
                                      + tag("body", nav + tag("main", body),
                                            data_status=status, **attrs), lang="en"))
