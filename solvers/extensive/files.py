"""Reading an extensive-form game from a file or text in either format."""

from __future__ import annotations

import time
from pathlib import Path

from solvers.errors import FormatError, GameError, LimitReached
from solvers.extensive.efg_format import Progress, read_efg
from solvers.extensive.model import ExtensiveGame
from solvers.extensive.tree_format import read_tree
from solvers.files import read_text

FORMATS = ("efg", "tree")


def read_game_text(fmt: str, text: str, filename: str | None = None) -> ExtensiveGame:
    """``fmt`` is ``efg`` (Gambit) or ``tree`` (the node/infoset text format)."""
    if fmt == "efg":
        return read_efg(text, filename=filename)
    if fmt == "tree":
        return read_tree(text, filename=filename)
    raise FormatError(f"unknown extensive-form format {fmt!r} (efg or tree)")


def format_of(path: Path, text: str) -> str:
    """``efg`` for ``.efg`` files or text starting with ``EFG``, else ``tree``."""
    if path.suffix.lower() == ".efg" or text.lstrip().startswith("EFG"):
        return "efg"
    return "tree"


def read_game_file(path: str | Path, progress: Progress | None = None,
                   deadline: float | None = None) -> ExtensiveGame:
    """The game in a file; ``.efg`` streams in chunks, with progress lines for a long read
    and :class:`LimitReached` past ``deadline`` (``time.monotonic()``)."""
    file = Path(path)
    if _starts_with_efg(file):
        return read_efg(file, filename=str(path), progress=progress, deadline=deadline)
    game = read_tree(read_text(file), filename=str(path))
    if deadline is not None and time.monotonic() >= deadline:
        raise LimitReached(f"the time limit was reached while reading {path}")
    return game


def _starts_with_efg(file: Path) -> bool:
    """Is it an ``.efg`` (by its suffix, else by its first word)?"""
    if file.suffix.lower() == ".efg":
        return True
    try:
        with open(file, encoding="utf-8", errors="replace") as source:
            return source.read(4096).removeprefix("\ufeff").lstrip().startswith("EFG")
    except OSError as exc:
        raise GameError(f"{file}: cannot read: {exc.strerror or exc}") from None
