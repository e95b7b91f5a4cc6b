"""Names as the whitespace-free words of the tree and strategy formats (``../shared/seeds/000_*``).

Both formats split their lines on whitespace, so a name (an action, an information
set) is written as one word: each whitespace character and each ``%`` as ``%XX``, the
hex of its UTF-8 bytes (``first: noop [(your_card jack)]`` is written
``first:%20noop%20[(your_card%20jack)]``), every other character as itself. Reading
turns each ``%XX`` back into its character, so names round-trip; a file without ``%``
reads as before (``_`` stays ``_``; a ``%`` not followed by hex digits that spell UTF-8
stays ``%``), and every program shows the real name. Files
written before this rule spelled whitespace ``_``: :func:`legacy_token` is that
spelling, which the strategy reader still accepts.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

_ESCAPED = re.compile(r"[\s%]")
_WS = re.compile(r"\s+")


def token(name: str) -> str:
    """``name`` as one whitespace-free word (``_`` for the empty name)."""
    if not name:
        return "_"
    return _ESCAPED.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), name)


def from_token(word: str) -> str:
    """The name a word of a file stands for (the inverse of :func:`token`); a word whose
    ``%`` escapes do not spell UTF-8 is read as itself."""
    if "%" not in word:
        return word
    try:
        return unquote(word, errors="strict")
    except UnicodeDecodeError:
        return word


def legacy_token(name: str) -> str:
    """The spelling of files written before the ``%XX`` rule: whitespace as ``_``."""
    return _WS.sub("_", name) or "_"


def token_index(names: list[str] | tuple[str, ...]) -> dict[str, int]:
    """Each name's index by its word in a file: :func:`token` and, where no other name
    is spelled so, :func:`legacy_token`."""
    index = {legacy_token(name): i for i, name in enumerate(names)}
    index.update({token(name): i for i, name in enumerate(names)})
    return index
