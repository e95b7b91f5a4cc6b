"""Pre-solved GDL games: save a solution, find it again from the game's rules.

``ggp solve GAME.kif --save FILE`` writes the solution of a game (every solved
state -> each player's strategy and the state's values) keyed by
:func:`gdl.reasoning.machine.rules_hash`, so the agent given ``--solutions DIR`` recognises
the same game however its rules are ordered or its variables named:

    solution = find_solution(directory, rules)        # None when not pre-solved
    if solution is not None:
        probs = solution.strategy(machine.state_to_kif(state))  # {role: {move: p}}

File format: JSON lines (gzip-compressed when the name ends in ``.gz``). The
first line is the header ``{"format": "ggp-gdl-solution", "version": 1,
"rules_hash", "game", "roles", "solver", "values"}``; every other line
is one state as the ``--strategy`` file writes it: ``{"node": [KIF facts],
"strategy": {role: {move KIF: probability}}, "values": {role: value}}``.
A baseline solution holds every non-terminal state, an IH solution the states
of its partial behavioral strategy.

Files named ``.npz`` are the compact binary format of :mod:`gdl.solving.store_npz`
(the same header, arrays instead of lines); :func:`find_solution` finds both and
returns an object with the same ``strategy`` / ``state_values`` methods.
"""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from gdl.reasoning.terms import Rule
from gdl.solving.store_header import FORMAT, VERSION, Strategies, hash_of
from gdl.solving.store_npz import NpzSolution, read_header
from solvers.errors import FormatError, GameError, Location

SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".json.gz", ".npz")
#: ``ggp solve --save`` on the DAG path writes the compact format above this many states
NPZ_ABOVE_STATES = 200_000


@dataclass
class GdlSolution:
    """A stored solution: per state (a set of KIF facts) strategies and values."""

    rules_hash: str
    game: str
    roles: tuple[str, ...]
    solver: str
    values: dict[str, float]
    path: Path | None = None
    entries: dict[frozenset[str], tuple[Strategies, dict[str, float]]] = field(
        default_factory=dict, repr=False)

    def strategy(self, state: Iterable[str]) -> Strategies | None:
        """``{role: {move KIF: probability}}`` at a state given as its KIF facts."""
        entry = self.entries.get(frozenset(state))
        return None if entry is None else entry[0]

    def state_values(self, state: Iterable[str]) -> dict[str, float] | None:
        """``{role: value}`` of a solved state, or None."""
        entry = self.entries.get(frozenset(state))
        return None if entry is None else entry[1]

    def __len__(self) -> int:
        return len(self.entries)


def node_line(facts: Sequence[str], strategies: Strategies, values: dict[str, float]) -> dict:
    """One state as a line of the ``--strategy`` and ``--save`` files."""
    return {"node": list(facts), "strategy": strategies, "values": values}


def save_solution(path: str | Path, *, rules: Sequence[Rule] | str, game: str,
                  roles: Sequence[str], solver: str, values: dict[str, float],
                  lines: Iterable[dict]) -> int:
    """Write a solution file (see the module docstring); returns the number of states."""
    header = {"format": FORMAT, "version": VERSION, "rules_hash": hash_of(rules),
              "game": game, "roles": list(roles), "solver": solver, "values": values}
    count = 0
    target = Path(path)
    try:
        with _open(target, "wt") as out:
            out.write(json.dumps(header) + "\n")
            for line in lines:
                out.write(json.dumps(line, separators=(",", ":")) + "\n")
                count += 1
    except OSError as exc:
        raise GameError(f"{path}: cannot write: {exc.strerror or exc}") from None
    return count


def load_solution(path: str | Path) -> GdlSolution:
    """Read a solution file; FormatError (with the line) when it is not one."""
    target = Path(path)
    try:
        with _open(target, "rt") as source:
            lines = iter(source)
            header = _header(target, next(lines, ""))
            solution = GdlSolution(header["rules_hash"], str(header.get("game", "")),
                                   tuple(header["roles"]), str(header.get("solver", "")),
                                   dict(header.get("values") or {}), target)
            for number, text in enumerate(lines, start=2):
                facts, strategies, values = _entry(target, number, text)
                solution.entries[facts] = (strategies, values)
    except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError) as exc:
        raise GameError(f"{path}: cannot read solution: {exc}") from None
    return solution


def solution_in_memory(lines: Iterable[dict], *, rules: Sequence[Rule] | str, game: str,
                       roles: Sequence[str], solver: str, values: dict[str, float],
                       until: float | None = None) -> GdlSolution:
    """A solution held in memory from its strategy lines (what ``--save`` would write),
    read until the ``time.monotonic()`` deadline ``until``: the states read by then
    (the lines come breadth first, so those nearest the root)."""
    solution = GdlSolution(hash_of(rules), game, tuple(roles), solver, dict(values))
    for count, line in enumerate(lines):
        if until is not None and count % 256 == 0 and time.monotonic() >= until:
            break
        solution.entries[frozenset(line["node"])] = (line["strategy"], line["values"])
    return solution


def find_solution(directory: str | Path, rules: Sequence[Rule] | str
                  ) -> GdlSolution | NpzSolution | None:
    """The stored solution of this game in ``directory`` (by rules hash), or None.

    ``rules`` are parsed rules, the game's KIF text, or its rules hash.
    Only headers are read until one matches; a baseline solution (every state) is
    preferred to an IH one (the states of a partial strategy).
    """
    wanted = hash_of(rules)
    matches = [path for path, header in _headers(Path(directory))
               if header.get("rules_hash") == wanted]
    if not matches:
        return None
    solutions = [NpzSolution(path) if path.suffix == ".npz" else load_solution(path)
                 for path in matches]
    return max(solutions, key=lambda s: (s.solver == "baseline", len(s)))


def _headers(directory: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    if not directory.is_dir():
        raise GameError(f"{directory}: not a directory of solutions")
    for path in sorted(directory.iterdir()):
        if not path.name.endswith(SUFFIXES) or not path.is_file():
            continue
        if path.suffix == ".npz":
            try:
                yield path, read_header(path)
            except FormatError:
                pass   # not a solution file
            continue
        try:
            with _open(path, "rt") as source:
                yield path, _header(path, source.readline())
        except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError, FormatError):
            continue  # not a solution file: other files may share the folder


def _header(path: Path, text: str) -> dict[str, Any]:
    try:
        header = json.loads(text)
    except json.JSONDecodeError:
        header = None
    if (not isinstance(header, dict) or header.get("format") != FORMAT
            or not isinstance(header.get("rules_hash"), str)
            or not isinstance(header.get("roles"), list)):
        raise FormatError(f"not a GDL solution file (its first line must be a {FORMAT} header)",
                          _location(path, 1))
    if header.get("version") != VERSION:
        raise FormatError(f"solution file version {header.get('version')!r} "
                          f"(this program reads version {VERSION})", _location(path, 1))
    return header


def _entry(path: Path, number: int, text: str) -> tuple[frozenset[str], Strategies,
                                                        dict[str, float]]:
    try:
        line = json.loads(text)
        facts = frozenset(line["node"])
        strategies = {str(role): {str(move): float(p) for move, p in probs.items()}
                      for role, probs in line["strategy"].items()}
        values = {str(role): float(v) for role, v in line["values"].items()}
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError):
        raise FormatError("expected a state line {\"node\": [facts], \"strategy\": "
                          "{role: {move: p}}, \"values\": {role: v}}",
                          _location(path, number)) from None
    return facts, strategies, values


def _location(path: Path, line: int) -> Location:
    return Location(str(path), line)


def _open(path: Path, mode: str) -> IO[str]:
    if path.name.endswith(".gz"):
        return gzip.open(path, mode, encoding="utf-8")  # type: ignore[return-value]
    return open(path, mode.replace("t", ""), encoding="utf-8")
