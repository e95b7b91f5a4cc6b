"""Reading input files with one clear error instead of an OSError traceback."""

from __future__ import annotations

from pathlib import Path

from solvers.errors import GameError


def read_text(path: str | Path) -> str:
    """The file's text (UTF-8, undecodable bytes replaced); GameError when unreadable."""
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise GameError(f"{path}: cannot read: {exc.strerror or exc}") from None
