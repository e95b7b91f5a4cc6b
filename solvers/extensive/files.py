"""Reading an extensive-form game from a file or text in either format."""

from __future__ import annotations

from pathlib import Path

from solvers.errors import FormatError
from solvers.files import read_text

from .efg_format import read_efg
from .model import ExtensiveGame
from .tree_format import read_tree

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


def read_game_file(path: str | Path) -> ExtensiveGame:
    file = Path(path)
    text = read_text(file)
    return read_game_text(format_of(file, text), text, filename=str(path))
