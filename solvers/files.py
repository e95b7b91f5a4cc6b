"""Reading input files, and checking output files before the work, with one clear error
instead of an OSError traceback."""

from __future__ import annotations

import tempfile
from pathlib import Path

from solvers.errors import GameError

MAX_UNDECODABLE = 0.01  # share of a file's bytes that may be undecodable in a text file


def read_text(path: str | Path) -> str:
    """The file's text (UTF-8, a few undecodable bytes replaced: a Latin-1 comment);
    GameError when unreadable or binary (a NUL byte, or undecodable bytes past
    :data:`MAX_UNDECODABLE` of it)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise GameError(f"{path}: cannot read: {exc.strerror or exc}") from None
    text = data.decode("utf-8", errors="replace")
    if b"\0" in data or text.count("\ufffd") > max(8, len(data) * MAX_UNDECODABLE):
        raise GameError(f"{path}: not a text file: its bytes are not UTF-8 (binary?)")
    return text.replace("\r\n", "\n").replace("\r", "\n")   # universal newlines, as text mode


def prepare_output(path: str | Path, option: str) -> Path:
    """Make sure ``path`` can be written before any long work starts.

    Creates the missing parent folders, refuses a folder or an unwritable place with one
    GameError naming ``option``, and returns the absolute path (for "wrote ... to PATH").
    Writability is tried with a temporary file, since permission bits do not tell root
    about read-only file systems.
    """
    target = Path(path).expanduser().absolute()
    try:
        if target.is_dir():
            raise GameError(f"{option} {path}: is a folder, not a file")
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            with open(target, "a"):
                pass
        else:
            with tempfile.NamedTemporaryFile(dir=target.parent, prefix=".ggp-write-test-"):
                pass
    except OSError as exc:
        raise GameError(f"{option} {path}: cannot write there: {exc.strerror or exc}") from None
    return target
