"""What a spectator sees of a state: a board for grid games, else facts, tree paths, POSG.

A *state view* is JSON, the same for the websocket spectator messages and the pages:

* ``{"kind": "gdl", "facts": [KIF...], "grid": GRID | null}``: a GDL state. ``grid`` is
  ``{"relation", "columns", "rows", "cells"}`` with ``cells[r][c]`` the text of the
  fact at column ``columns[c]`` and row ``rows[r]`` (``""`` when none holds); the facts
  drawn in it are left out of ``facts``.
* ``{"kind": "tree", "node": label, "path": [[actor, action]...], "to_move": role|null}``:
  an ``.efg``/tree state, the actions from the root (chance included: spectators see
  everything).
* ``{"kind": "posg", "step", "state", "partition", "last_actions", "observation",
  "reward"}``: a POSG state as it is (P2's view plus the discounted reward so far).
* ``{"kind": "text", "text": str}``: a recorded state whose game is not at hand.

Grid detection (:func:`detect_grid`), from the facts a state may hold (the game's
relaxed reachable domain when it can be grounded, plus every fact seen): the
relation of arity >= 2 whose first two arguments are atoms ranging over at most
``MAX_SIDE`` values each, with the most coordinate pairs (at least 4), is the board.
Columns are the first argument and rows the second (Cartesian: numeric rows are drawn
highest first, so connect-four's row 1 is at the bottom and chess's rank 8 at the top);
numeric coordinates fill their range (a column never seen still gets drawn).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from gdl.reasoning.ground import Budget, ground_game
from gdl.reasoning.parser import parse_kif
from solvers.errors import GameError
from solvers.playable import PlayableGame, State

MAX_SIDE = 32
MIN_CELLS = 4
MAX_CELL_TEXT = 40
GROUNDING_STEPS = 100_000  # the domain of a game's facts, if it grounds in about 0.5 s
_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def parse_kif_list(text: str) -> list[Any]:
    """The items of a KIF list ``( a (f b c) ... )`` as nested tuples of strings (a tiny
    reader for recorded states: nothing is evaluated; unbalanced text gives what parsed)."""
    stack: list[list[Any]] = [[]]
    for token in _TOKEN.findall(text):
        if token == "(":
            stack.append([])
        elif token == ")":
            if len(stack) > 1:
                done = tuple(stack.pop())
                stack[-1].append(done)
        else:
            stack[-1].append(token)
    while len(stack) > 1:  # unclosed: keep what was read
        done = tuple(stack.pop())
        stack[-1].append(done)
    items = stack[0]
    return list(items[0]) if len(items) == 1 and isinstance(items[0], tuple) else items


def to_kif(value: Any) -> str:
    if isinstance(value, tuple):
        return "(" + " ".join(to_kif(v) for v in value) + ")"
    return str(value)


@dataclass(frozen=True)
class Grid:
    """Where a board's cells come from: ``(relation column row rest...)`` facts."""

    relation: str
    arity: int
    columns: tuple[str, ...]
    rows: tuple[str, ...]

    def holds(self, fact: Any) -> bool:
        return (isinstance(fact, tuple) and len(fact) == self.arity + 1
                and fact[0] == self.relation and fact[1] in self._column_index
                and fact[2] in self._row_index)

    @cached_property
    def _column_index(self) -> dict[str, int]:
        return {c: i for i, c in enumerate(self.columns)}

    @cached_property
    def _row_index(self) -> dict[str, int]:
        return {r: i for i, r in enumerate(self.rows)}

    def cells(self, facts: Iterable[Any]) -> list[list[str]]:
        columns, rows = self._column_index, self._row_index
        out = [[""] * len(self.columns) for _ in self.rows]
        for fact in facts:
            if self.holds(fact):
                cell = out[rows[fact[2]]][columns[fact[1]]]
                text = " ".join(to_kif(v) for v in fact[3:]) or "*"
                out[rows[fact[2]]][columns[fact[1]]] = \
                    (cell + " " + text if cell else text)[:MAX_CELL_TEXT]
        return out


def _is_int(text: str) -> bool:
    return text.lstrip("-").isdigit() and len(text) < 10


def _axis(values: set[str], descending: bool) -> tuple[str, ...] | None:
    if not 1 <= len(values) <= MAX_SIDE:
        return None
    if all(_is_int(v) for v in values):
        low, high = min(map(int, values)), max(map(int, values))
        if high - low >= MAX_SIDE:
            return None
        span = range(high, low - 1, -1) if descending else range(low, high + 1)
        return tuple(str(n) for n in span)
    return tuple(sorted(values))


def detect_grid(facts: Iterable[Any]) -> Grid | None:
    """The board among these facts (see the module docstring), or None."""
    by_relation: dict[tuple[str, int], tuple[set[str], set[str], set[tuple[str, str]]]] = {}
    for fact in facts:
        if not (isinstance(fact, tuple) and len(fact) >= 3 and isinstance(fact[0], str)
                and isinstance(fact[1], str) and isinstance(fact[2], str)):
            continue
        xs, ys, pairs = by_relation.setdefault((fact[0], len(fact) - 1), (set(), set(), set()))
        xs.add(fact[1])
        ys.add(fact[2])
        pairs.add((fact[1], fact[2]))
    best: Grid | None = None
    best_pairs = MIN_CELLS - 1
    for (relation, arity), (xs, ys, pairs) in sorted(by_relation.items()):
        columns, rows = _axis(xs, descending=False), _axis(ys, descending=True)
        if columns is None or rows is None or len(pairs) <= best_pairs:
            continue
        if len(columns) * len(rows) < MIN_CELLS:
            continue
        best, best_pairs = Grid(relation, arity, columns, rows), len(pairs)
    return best


def gdl_view(facts: Sequence[Any], grid: Grid | None) -> dict[str, Any]:
    if grid is None:
        return {"kind": "gdl", "facts": [to_kif(f) for f in facts], "grid": None}
    return {"kind": "gdl", "facts": [to_kif(f) for f in facts if not grid.holds(f)],
            "grid": {"relation": grid.relation, "columns": list(grid.columns),
                     "rows": list(grid.rows), "cells": grid.cells(facts)}}


def text_view(text: str | None) -> dict[str, Any]:
    return {"kind": "text", "text": text or ""}


_GRIDS: weakref.WeakKeyDictionary[Any, Grid | None] = weakref.WeakKeyDictionary()


def game_grid(game: PlayableGame, seen: Iterable[Any] = ()) -> Grid | None:
    """The board of a GDL game, from its reachable facts (cached per game) and ``seen``."""
    if game.format != "gdl":
        return None
    try:
        return _GRIDS[game]
    except (KeyError, TypeError):
        pass
    domain: list[Any] = list(seen)
    text = getattr(game, "text", None)
    if isinstance(text, str):
        try:
            grounded = ground_game(parse_kif(text), Budget(max_steps=GROUNDING_STEPS,
                                                           max_seconds=2.0))
            table = grounded.tables.get(("true", 1))
            domain += [_atoms(row[1]) for row in (table.rows if table else ())]
        except (GameError, RecursionError, MemoryError):
            pass  # too big to ground: the facts seen so far decide
    grid = detect_grid(domain)
    try:
        _GRIDS[game] = grid
    except TypeError:
        pass
    return grid


def _atoms(value: Any) -> Any:
    return tuple(_atoms(v) for v in value) if isinstance(value, tuple) else str(value)


def state_view(game: PlayableGame, state: State, grid: Grid | None = None) -> dict[str, Any]:
    """The view of a live state (module docstring); ``grid`` from :func:`game_grid`."""
    if game.format == "gdl":
        return gdl_view(parse_kif_list(game.state_text(state)), grid)
    model = getattr(game, "game", None)
    if game.format in ("efg", "tree") and model is not None and isinstance(state, int):
        return tree_view(model, state, list(game.roles))
    posg = getattr(game, "model", None)
    if game.format == "posg" and posg is not None and isinstance(state, tuple):
        return posg_view(game, state)
    return text_view(str(state))


def tree_view(model: Any, node: int, roles: list[str]) -> dict[str, Any]:
    path: list[list[str]] = []
    here = node
    while model.node_parent[here] >= 0:
        parent = int(model.node_parent[here])
        actor = (roles[int(model.node_player[parent])] if model.node_player[parent] >= 0
                 else "chance")
        path.append([actor, model.node_actions(parent)[int(model.node_action[here])]])
        here = parent
    player = int(model.node_player[node])
    return {"kind": "tree", "node": model.node_names[node] or f"node {node}",
            "path": path[::-1], "to_move": roles[player] if player >= 0 else None}


def posg_view(game: Any, state: tuple) -> dict[str, Any]:
    step, s, a1, a2, o, total = state
    m = game.model
    return {"kind": "posg", "step": step, "state": m.state_names[s],
            "partition": int(m.partition_of[s]),
            "last_actions": [game.a1_labels[a1], game.a2_labels[a2]] if a1 >= 0 else None,
            "observation": m.obs_names[o] if o >= 0 else None, "reward": round(total, 6)}


def recorded_view(fmt: str, text: str | None, grid: Grid | None) -> dict[str, Any]:
    """The view of a state as the records hold it (the game itself may be gone)."""
    if fmt == "gdl" and text:
        return gdl_view(parse_kif_list(text), grid)
    return text_view(text)
