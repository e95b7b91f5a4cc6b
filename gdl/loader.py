"""The one game loader: a game file of any supported format -> a playable game.

``gdl`` is the lowest layer that sees every format (it sits above ``solvers``), so the
loader lives here; the server and the agent call only :func:`load_game` and
:func:`load_game_text` and then use the :class:`solvers.playable.PlayableGame` API.

Formats: ``gdl`` (``.kif``/``.gdl``), ``efg`` (Gambit ``.efg``), ``tree`` (the
node/infoset game-tree text format, usually ``.txt``), ``posg`` (``.osposg``).
"""

from __future__ import annotations

from pathlib import Path

from solvers.errors import FormatError, GameError
from solvers.files import read_text
from solvers.playable import PlayableGame

FORMATS = ("gdl", "efg", "tree", "posg")
_SUFFIXES = {".kif": "gdl", ".gdl": "gdl", ".efg": "efg", ".osposg": "posg", ".txt": "tree"}
MAX_GAME_BYTES = 64 * 1024 * 1024


def detect_format(path: str | Path, text: str | None = None) -> str:
    """The format of a game file, from its suffix, else from its first words."""
    suffix = Path(path).suffix.lower()
    if suffix in _SUFFIXES:
        return _SUFFIXES[suffix]
    head = (text or "").lstrip()[:200]
    if head.startswith("EFG"):
        return "efg"
    if head.startswith(("(", ";")):
        return "gdl"
    if head.startswith(("node", "#")):
        return "tree"
    raise FormatError(f"cannot tell the game format of {path} (use .kif, .efg, .txt or .osposg)")


def load_game(path: str | Path, allowed_dirs: list[Path] | None = None) -> PlayableGame:
    """Read a game file and return it as a playable game.

    ``allowed_dirs``, when given, is the list of folders game files may come from
    (the server passes its game folders): anything else is refused.
    """
    file = Path(path)
    if allowed_dirs is not None:
        real = file.resolve()
        if not any(real.is_relative_to(d.resolve()) for d in allowed_dirs):
            raise GameError(f"{path}: game files may only come from: "
                            + ", ".join(str(d) for d in allowed_dirs))
    if file.is_file() and file.stat().st_size > MAX_GAME_BYTES:
        raise GameError(f"{path}: game file larger than {MAX_GAME_BYTES} bytes")
    text = read_text(file)
    return load_game_text(detect_format(file, text), text, name=file.stem, filename=str(path))


def load_game_text(fmt: str, text: str, name: str = "game",
                   filename: str | None = None) -> PlayableGame:
    """Build a playable game from a file's text in the given format."""
    source = filename or name
    if fmt == "gdl":
        from gdl.playable import GdlGame

        return GdlGame.from_text(text, name=name, filename=source)
    if fmt in ("efg", "tree"):
        from solvers.extensive.playable import ExtensivePlayable

        return ExtensivePlayable.from_text(text, fmt=fmt, name=name, filename=source)
    if fmt == "posg":
        from solvers.posg.playable import PosgPlayable

        return PosgPlayable.from_text(text, name=name, filename=source)
    raise FormatError(f"unknown game format {fmt!r} (one of {', '.join(FORMATS)})")
