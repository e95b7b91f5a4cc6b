"""Results files of long benchmarks: one JSON object a line, appended as each item
finishes, so a run killed at any point loses at most the item in flight and
``--resume`` goes on from what the file holds."""

from __future__ import annotations

import argparse
import json
from collections.abc import Collection
from pathlib import Path

from solvers.errors import GameError


def read_json_lines(path: Path, keys: Collection[str], what: str) -> list[dict]:
    """The rows of ``path`` (none if it does not exist); a torn last line, from a kill
    mid-write, is skipped; any other bad line is a GameError naming it."""
    if not path.exists():
        return []
    rows = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            if number < len(lines):
                raise GameError(f"{path}:{number}: not a JSON line") from None
            continue
        if not isinstance(row, dict) or not set(keys) <= row.keys():
            raise GameError(f"{path}:{number}: not {what}")
        rows.append(row)
    return rows


def drop_torn_line(path: Path) -> None:
    """Cut a last line without its newline (a kill mid-write): appends start clean."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with path.open("r+b") as out:
            out.truncate(data.rfind(b"\n") + 1)


def add_results_arguments(parser: argparse.ArgumentParser, default: str, when: str = "") -> None:
    """A resumable bench's options: ``--results FILE``, ``--resume`` and ``--summary``
    (``when``: the mode they belong to, for the help)."""
    scope = f"with {when}: " if when else ""
    parser.add_argument("--results", default=default, metavar="FILE",
                        help=f"{scope}JSON lines, one a match (default {default})")
    parser.add_argument("--resume", action="store_true",
                        help=f"{scope}skip the matches --results already has")
    parser.add_argument("--summary", action="store_true",
                        help=f"{scope}print the summary of --results, play nothing")
