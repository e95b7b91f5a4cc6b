"""Game formats: the one registry of them, and the one loader.

``gdl`` is the lowest layer that sees every format (it sits above ``solvers``), so the
registry lives here. Each :class:`GameFormat` says:

- ``suffixes`` and ``starts``: how a file of it is recognised (its suffix, else how
  its text begins);
- ``read``: its text -> a :class:`solvers.playable.PlayableGame` (what the server
  and the agent use);
- ``solve``: the models of :mod:`solvers.registry` whose solvers apply, each with its
  ``ggp solve`` front end: a module with ``solve_main(argv)`` and ``solve_parser()``,
  imported by ``ggp_cli`` only when used; the first is the default when no
  ``--solver`` is given;
- ``policy``: ``policy(game, seconds)``, a seat's equilibrium strategy solved within
  ``seconds`` (:data:`solvers.playable.Policy`), for the server's built-in ``solver``
  player and the agent; GameError when the game does not fit.

The CLI (``ggp solve``), the server (:func:`load_game`, :func:`load_game_text`,
:func:`equilibrium_policy`) and the agent read only this module. Adding a format:
its reader, one :class:`GameFormat` in :data:`FORMATS`, and tests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gdl.playable import GdlGame
from gdl.solving.policy import gdl_policy
from solvers import registry
from solvers.errors import FormatError, GameError
from solvers.extensive.playable import ExtensivePlayable, equilibrium_strategy
from solvers.files import read_text
from solvers.playable import PlayableGame, Policy
from solvers.posg.playable import PosgPlayable
from solvers.posg.policy import equilibrium_strategy as posg_strategy

MAX_GAME_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class GameFormat:
    """One game format (see the module docstring)."""

    name: str
    summary: str
    suffixes: tuple[str, ...]
    starts: tuple[str, ...]
    read: Callable[[str, str, str], PlayableGame]    # (text, name, filename)
    solve: Mapping[str, str]                          # model -> `ggp solve` front-end module
    policy: Callable[[Any, float], Policy]


def _extensive(fmt: str) -> Callable[[str, str, str], PlayableGame]:
    def read(text: str, name: str, filename: str) -> PlayableGame:
        return ExtensivePlayable.from_text(text, fmt=fmt, name=name, filename=filename)
    return read


FORMATS: dict[str, GameFormat] = {f.name: f for f in (
    GameFormat("gdl", "GDL rules (GDL-II with sees and random)", (".kif", ".gdl"), ("(", ";"),
               read=lambda text, name, filename: GdlGame.from_text(text, name, filename),
               solve={registry.SIMULTANEOUS: "gdl.cli.solve",
                      registry.EXTENSIVE: "gdl.cli.gdl2", registry.PUZZLE: "gdl.cli.solve",
                      registry.NPLAYER: "gdl.cli.solve"},
               policy=gdl_policy),
    GameFormat("efg", "Gambit extensive form", (".efg",), ("EFG",), read=_extensive("efg"),
               solve={registry.EXTENSIVE: "solvers.cli.extensive",
                      registry.SIMULTANEOUS: "solvers.cli.simultaneous"},
               policy=lambda game, seconds: equilibrium_strategy(game, time_limit=seconds)),
    GameFormat("tree", "the node/infoset game-tree text format", (".txt",), ("node", "#"),
               read=_extensive("tree"),
               solve={registry.EXTENSIVE: "solvers.cli.extensive"},
               policy=lambda game, seconds: equilibrium_strategy(game, time_limit=seconds)),
    GameFormat("posg", "one-sided partially observable stochastic game", (".osposg",), (),
               read=lambda text, name, filename: PosgPlayable.from_text(text, name, filename),
               solve={registry.POSG: "solvers.cli.posg"},
               policy=lambda game, seconds: posg_strategy(game, time_limit=seconds)),
)}


def game_format(name: str) -> GameFormat:
    found = FORMATS.get(name)
    if found is None:
        raise FormatError(f"unknown game format {name!r} (one of {', '.join(FORMATS)})")
    return found


def format_of_suffix(path: str | Path) -> GameFormat | None:
    """The format a file's suffix names, or None."""
    suffix = Path(path).suffix.lower()
    return next((f for f in FORMATS.values() if suffix in f.suffixes), None)


def detect_format(path: str | Path, text: str | None = None) -> str:
    """The format of a game file, from its suffix, else (a file without a suffix) from
    its first words: a file of another type (``README.md``) is not read as a game."""
    by_suffix = format_of_suffix(path)
    if by_suffix is not None:
        return by_suffix.name
    suffixes = ", ".join(s for f in FORMATS.values() for s in f.suffixes)
    suffix = Path(path).suffix
    if suffix:
        raise FormatError(f"cannot tell the game format of {path}: {suffix} is no game "
                          f"format's suffix (use {suffixes})")
    head = (text or "").lstrip()[:200]
    for fmt in FORMATS.values():
        if fmt.starts and head.startswith(fmt.starts):
            return fmt.name
    raise FormatError(f"cannot tell the game format of {path} (use {suffixes})")


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
    return game_format(fmt).read(text, name, filename or name)


def equilibrium_policy(game: PlayableGame, seconds: float) -> Policy:
    """A seat's equilibrium policy for ``game``, solved within ``seconds`` by its
    format's solver (GameError when the game does not fit)."""
    return game_format(game.format).policy(game, seconds)
