"""Recognise a Gambit ``.efg`` in the form of Definition 4.1.9 and read it as a simultaneous game.

The file is read by the project's one ``.efg`` reader
(:func:`solvers.extensive.efg_format.read_efg`); this module only checks the shape of
the tree and converts it, walking from the root:

1. a node of Gambit player 1 (the thesis' player 0) must be alone in its information
   set; it is a decision node with one row per action;
2. each of its children must be a node of player 2, all in one information set that
   holds exactly these nodes (player 2 does not see the row): the columns;
3. below a player-2 node, every child is a terminal node (an entry with the payoffs
   accumulated along the path), a chance node, or the next player-1 node;
4. a chance node becomes a chance node of the model.

Anything else (three players, player 2 acting first, a player-2 information set that
spans several rows' parents or reveals the row, ...) is an
:class:`~solvers.errors.UnsupportedGame` that says which node breaks the form.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from solvers.errors import Location, UnsupportedGame
from solvers.extensive.efg_format import Progress, read_efg
from solvers.extensive.model import CHANCE, PLAYER, ExtensiveGame
from solvers.simultaneous.model import SimultaneousGame, SimultaneousGameBuilder

FORM = "not a simultaneous-move game in the form of Definition 4.1.9 (player 1 moves, " \
       "then player 2 in one information set holding all of player 1's alternatives)"


def read_simultaneous_efg(path: str | Path, max_nodes: int | None = None, *,
                          progress: Progress | None = None,
                          deadline: float | None = None) -> SimultaneousGame:
    """The simultaneous-move game stored in ``path`` (raises GameError subclasses);
    ``progress`` and ``deadline`` (``time.monotonic()``) go to the streaming reader."""
    efg = read_efg(Path(path), progress=progress, deadline=deadline)
    return from_extensive(efg, str(path), max_nodes)


def from_extensive(efg: ExtensiveGame, filename: str = "<efg>",
                   max_nodes: int | None = None) -> SimultaneousGame:
    """Convert an :class:`ExtensiveGame` of the Definition 4.1.9 shape."""
    where = Location(filename)

    def fail(node: int, why: str) -> UnsupportedGame:
        name = efg.node_names[node]
        label = f"node {node}" + (f" ({name!r})" if name else "")
        return UnsupportedGame(f"{FORM}: {label} {why}", where)

    if efg.num_players != 2:
        raise UnsupportedGame(f"{FORM}: the game has {efg.num_players} players", where)
    infoset_size = np.bincount(efg.node_infoset[efg.node_infoset >= 0], minlength=efg.num_infosets)
    builder = SimultaneousGameBuilder(efg.player_names, max_nodes=max_nodes)
    ids: dict[int, int] = {}
    order: list[int] = []
    stack = [0]
    while stack:  # first pass: create the model's nodes in pre-order
        v = stack.pop()
        kids = efg.node_children(v).tolist()
        if efg.node_kind[v] == CHANCE:
            ids[v] = builder.add_chance(efg.edge_prob[efg.child_start[v]:efg.child_start[v + 1]],
                                        labels=efg.node_actions(v), label=efg.node_names[v] or None)
            nexts = [k for k in kids if efg.node_kind[k] != 0]
        elif efg.node_kind[v] == PLAYER:
            if efg.node_player[v] != 0:
                raise fail(v, "is a move of player 2 where player 1 must move (or a chance node)")
            if infoset_size[efg.node_infoset[v]] != 1:
                raise fail(v, "is in an information set with other nodes of player 1")
            columns = _columns(efg, v, kids, infoset_size, fail)
            ids[v] = builder.add_node(len(kids), len(columns), efg.node_actions(v), columns,
                                      label=efg.node_names[v] or None)
            nexts = [k for col in kids for k in efg.node_children(col).tolist()
                     if efg.node_kind[k] != 0]
        else:
            raise fail(v, "is terminal where a move is expected")
        order.append(v)
        stack.extend(reversed(nexts))
    for v in order:  # second pass: the entries
        entries = (efg.node_children(v).tolist() if efg.node_kind[v] == CHANCE
                   else [k for col in efg.node_children(v).tolist() for k in efg.node_children(col).tolist()])
        n = 1 if efg.node_kind[v] == CHANCE else len(efg.node_children(efg.node_children(v)[0]))
        for e, k in enumerate(entries):
            i, j = divmod(e, n)
            if efg.node_kind[k] == 0:
                builder.set_terminal(ids[v], i, j, efg.node_utility[k])
            else:
                builder.set_child(ids[v], i, j, ids[k])
    return builder.build(root=ids[0])


def _columns(efg: ExtensiveGame, v: int, kids: list[int], infoset_size: np.ndarray, fail
             ) -> tuple[str, ...]:
    """Player 2's actions below player-1 node ``v``, checking the information set."""
    if not kids:
        raise fail(v, "has no actions")
    first = kids[0]
    if efg.node_kind[first] != PLAYER or efg.node_player[first] != 1:
        raise fail(v, "is a move of player 1 not followed by a move of player 2")
    infoset = efg.node_infoset[first]
    for k in kids:
        if efg.node_kind[k] != PLAYER or efg.node_player[k] != 1 or efg.node_infoset[k] != infoset:
            raise fail(k, "should be player 2's move in the same information set as its siblings")
    if infoset_size[infoset] != len(kids):
        raise fail(first, "is in a player-2 information set that also holds nodes of other "
                          "parents (it must hold exactly player 1's alternatives)")
    return efg.node_actions(first)
