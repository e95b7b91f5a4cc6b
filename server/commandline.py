"""What the server's command-line front ends share (``server/cli``: ``ggp serve``,
``match``, ``tournament``, ``matches``, ``client``, ``ratings``; the server benches):
the default database, argument types and checks, and text tables.

A library module: the front ends import it, never each other. An argument type raises
``argparse.ArgumentTypeError`` (argparse exits 2 with the message); a check raises
:class:`solvers.errors.GameError`, which the ``ggp`` dispatcher prints as one line.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from server.players.spec import parse_spec
from server.protocol import MAX_SEED
from solvers.errors import GameError

DEFAULT_DB = "matches.sqlite"
MAX_SECONDS = 86400  # the longest clock or timeout a command takes


def positive_seconds(text: str) -> float:
    """An argparse type: seconds in (0, 86400]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"must be in (0, {MAX_SECONDS}] seconds")
    return value


def bounded_int(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an integer in [low, high] (argparse exits 2 with the message)."""
    def check(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text[:40]!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be an integer in [{low}, {high}]")
        return value
    return check


SEED = bounded_int(0, MAX_SEED)
PORT = bounded_int(0, 65535)


def check_specs(specs: Sequence[str]) -> None:
    for spec in specs:
        parse_spec(spec)  # raises GameError on a malformed spec, before anything starts


def game_after_players(args: argparse.Namespace, prog: str = "ggp match",
                       field: str = "game") -> None:
    """``--players A B GAME``: the list took the game; give it back (a game is no spec).
    ``field``: the attribute that holds the game."""
    if getattr(args, field) is not None:
        return
    usage = f"{prog} GAME --players SPEC..."
    try:
        parse_spec(args.players[-1])
    except GameError:
        if len(args.players) == 1:
            raise GameError(f"{prog}: no player specs before {args.players[0]!r} "
                            f"({usage})") from None
        setattr(args, field, args.players.pop())
        return
    raise GameError(f"{prog}: no game file given (write it first: {prog} GAME --players "
                    f"{' '.join(args.players)}); {args.players[-1]!r} is a player spec")


def columns(table: list[tuple[str, ...]]) -> str:
    """Rows as left-aligned columns two spaces apart (the last one not padded)."""
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]) - 1)]
    return "\n".join("  ".join([cell.ljust(w) for cell, w in zip(row, widths, strict=False)]
                               + [row[-1]]).rstrip() for row in table)
