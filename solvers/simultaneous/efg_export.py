"""Write a simultaneous-move game as Gambit ``.efg`` in its imperfect-information form.

Definition 4.1.9 (the corresponding imperfect-information form), node by node in
pre-order:

1. a decision node ``h`` becomes a node of Gambit player 1 (the thesis' player 0) in
   an information set of its own, with ``h``'s row actions;
2. each of player 1's actions leads to a node of Gambit player 2 (the thesis' player
   1); these ``|A_h^0|`` nodes form one information set (player 2 does not see the
   row chosen), with ``h``'s column actions;
3. below them, entry ``(i, j)`` is a terminal node with its payoffs as the outcome, or
   the child's subtree; a chance node becomes a Gambit chance node.

A DAG is written as the tree it unfolds to (``.efg`` has no shared nodes); the
writer refuses to unfold more than ``max_nodes`` Gambit nodes. Player 1's nodes carry
the node's label (or its history) as their name. Numbers are written positionally
(never in exponent notation), with enough digits to read back the same floats.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from solvers.errors import LimitReached
from solvers.simultaneous.model import CHANCE, SimultaneousGame, concat_ranges


def _quote(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _number(value: float) -> str:
    return np.format_float_positional(float(value), unique=True, trim="-")


def tree_size(game: SimultaneousGame) -> int:
    """Number of Gambit nodes the unfolded tree has."""
    size = np.zeros(game.num_nodes, dtype=np.float64)  # float: a DAG can unfold hugely
    own = np.where(game.node_kind == CHANCE, 1, 1 + game.num_actions[:, 0])
    for level in game.levels:
        counts = np.diff(game.entry_start)[level]
        idx = concat_ranges(game.entry_start[level], counts)
        child = game.entry_child[idx]
        below = np.where(child >= 0, size[np.maximum(child, 0)], 1.0)
        size[level] = own[level] + np.add.reduceat(below, np.cumsum(counts) - counts)
    return int(min(size[game.root], 2.0**62))


def efg_text(game: SimultaneousGame, title: str = "simultaneous-move game",
             max_nodes: int = 20_000_000) -> str:
    """The ``.efg`` text of ``game`` (see the module docstring)."""
    total = tree_size(game)
    if total > max_nodes:
        raise LimitReached(f"the .efg tree would have {total} nodes (limit {max_nodes})")
    names = game.histories() if game.node_labels is None else None
    players = " ".join(_quote(p) for p in game.player_names)
    lines = [f"EFG 2 R {_quote(title)} {{ {players} }}", '""', ""]
    counts = {"p1": 0, "chance": 0, "outcome": 0}
    # pre-order walk with an explicit stack of ("node", h) | ("payoff", e) | ("text", line)
    stack: list[tuple[str, int | str]] = [("node", game.root)]
    while stack:
        kind, item = stack.pop()
        if kind == "text":
            lines.append(str(item))
            continue
        if kind == "payoff":
            counts["outcome"] += 1
            u0, u1 = game.entry_payoff[int(item)]
            lines.append(f't "" {counts["outcome"]} "" {{ {_number(u0)}, {_number(u1)} }}')
            continue
        h = int(item)
        sl = game.entries(h)
        entries = [_entry_item(game, e) for e in range(sl.start, sl.stop)]
        if game.is_chance(h):
            counts["chance"] += 1
            outcomes = " ".join(f"{_quote(a)} {_number(p)}" for a, p in
                                zip(game.actions(h, 0), game.entry_prob[sl], strict=True))
            lines.append(f'c "" {counts["chance"]} "" {{ {outcomes} }} 0')
            stack.extend(reversed(entries))
            continue
        counts["p1"] += 1  # player 2's information set gets the same number
        m, n = game.shape(h)
        rows = " ".join(_quote(a) for a in game.actions(h, 0))
        cols = " ".join(_quote(a) for a in game.actions(h, 1))
        lines.append(f'p {_quote(game.node_name(h, names))} 1 {counts["p1"]} "" {{ {rows} }} 0')
        follow: list[tuple[str, int | str]] = []
        for i in range(m):
            follow.append(("text", f'p "" 2 {counts["p1"]} "" {{ {cols} }} 0'))
            follow.extend(entries[i * n:(i + 1) * n])
        stack.extend(reversed(follow))
    return "\n".join(lines) + "\n"


def _entry_item(game: SimultaneousGame, e: int) -> tuple[str, int | str]:
    child = int(game.entry_child[e])
    return ("node", child) if child >= 0 else ("payoff", e)


def write_efg(game: SimultaneousGame, path: str | Path, title: str | None = None) -> None:
    Path(path).write_text(efg_text(game, title or Path(path).stem), encoding="utf-8")
