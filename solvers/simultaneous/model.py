"""Two-player extensive games with simultaneous moves (thesis Definition 4.1.1) as arrays.

A game is a set of *nodes*. A decision node ``h`` has ``n0 = |A_h^0|`` actions for
player 0 (rows) and ``n1 = |A_h^1|`` for player 1 (columns) and a matrix of
``n0 * n1`` *entries*; an entry is *terminal* (payoffs ``(u0, u1)``) or leads to a
*child* node. A *chance* node has ``k`` outcomes with probabilities, stored as a
``k x 1`` matrix of entries (terminal or child). Extensions of the thesis' model:

* a child may be the child of several entries (a DAG: repeated states are merged);
  solvers solve each node once, memoised, in reverse topological order;
* chance nodes (a GDL ``random`` role, dice): solvers take expected values.

Layout (CSR-like, no Python object per node):

* ``node_kind[N]`` int8: :data:`DECISION` or :data:`CHANCE`;
* ``num_actions[N, 2]`` int32: ``(n0, n1)``; a chance node is ``(k, 1)``;
* ``entry_start[N + 1]`` int64: node ``h``'s entries are ``entry_start[h]:entry_start[h+1]``
  in row-major order (entry ``(i, j)`` is ``entry_start[h] + i * n1 + j``);
* ``entry_child[E]`` int32: the child node, or :data:`TERMINAL` (-1);
* ``entry_payoff[E, 2]`` float64: payoffs of terminal entries (0 for child entries);
* ``entry_prob[E]`` float64: chance probabilities (1 for decision entries);
* ``entry_node``, ``entry_row``, ``entry_col`` [E]: the entry's node and coordinates;
* ``action_start[2, N + 1]`` int64: offsets of each node's actions in a player's flat
  strategy vector (chance nodes own no actions), so a behavioral strategy of player
  ``p`` is one float array of length ``action_start[p, -1]``; ``entry_action[p, E]`` is
  the flat index of player ``p``'s action in each entry (-1 in chance nodes);
* ``height[N]`` int32: longest path to a terminal node (0 for terminal nodes, i.e.
  nodes whose entries are all terminal); ``levels[k]`` are the nodes of height ``k``.
  Every child of a level-``k`` node lies in a lower level, so a level is a batch of
  independent nodes (the solvers vectorise over it).

Building a game (the API the GDL expansion uses)::

    from solvers.simultaneous.model import SimultaneousGameBuilder

    b = SimultaneousGameBuilder(player_names=("white", "black"), max_nodes=1_000_000)
    root = b.add_node(2, 2, labels0=("t", "b"), labels1=("L", "R"), label="start")
    leaf = b.add_node(2, 2)               # another decision node (ids are 0, 1, ...)
    b.set_child(root, 0, 0, leaf)         # entry (t, L) leads to ``leaf``
    b.set_terminal(root, 0, 1, (1.0, -1.0))
    ...                                   # every entry must be set exactly once
    b.set_entries(leaf, children, payoffs) # bulk: children[n0, n1] (-1 = terminal),
                                          # payoffs[n0, n1, 2]
    dice = b.add_chance([0.5, 0.5], labels=("odd", "even"))
    b.set_child(dice, 0, 0, leaf)         # outcome k is entry (k, 0)
    game = b.build(root=root)             # validates; raises GameError on bad input

Node labels (a history or a GDL state, any hashable or string) and action labels
(strings) are optional; without them histories and ``a1, a2, ...`` / ``b1, b2, ...``
are used. ``build`` checks: non-empty action sets, every entry set, finite payoffs,
valid child ids, no cycles, chance probabilities summing to 1; the builder raises
:class:`~solvers.errors.LimitReached` when ``max_nodes`` is exceeded.
:meth:`SimultaneousGame.from_arrays` builds a game from whole arrays (the random
generators use it) with the same checks.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np

from solvers.errors import LimitReached, ValidationError

DECISION, CHANCE = 0, 1
TERMINAL = -1
_UNSET = -2


def default_action_labels(player: int, count: int) -> tuple[str, ...]:
    """``a1, a2, ...`` for player 0 and ``b1, b2, ...`` for player 1."""
    prefix = "ab"[player]
    return tuple(f"{prefix}{k + 1}" for k in range(count))


def concat_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices ``starts[0]:starts[0]+lengths[0], starts[1]:...`` as one array."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(np.asarray(starts, dtype=np.int64) - offsets, lengths) + np.arange(total)


@dataclass(eq=False)
class SimultaneousGame:
    """A validated game as arrays (see the module docstring for the layout)."""

    node_kind: np.ndarray
    num_actions: np.ndarray
    entry_start: np.ndarray
    entry_child: np.ndarray
    entry_payoff: np.ndarray
    entry_prob: np.ndarray
    root: int = 0
    player_names: tuple[str, str] = ("player 0", "player 1")
    node_labels: list[Hashable] | None = None
    action_labels: list[tuple[tuple[str, ...], tuple[str, ...]] | None] | None = None
    # derived in __post_init__
    entry_node: np.ndarray = field(init=False)
    entry_row: np.ndarray = field(init=False)
    entry_col: np.ndarray = field(init=False)
    action_start: np.ndarray = field(init=False)
    entry_action: np.ndarray = field(init=False)
    height: np.ndarray = field(init=False)
    levels: list[np.ndarray] = field(init=False)

    def __post_init__(self) -> None:
        _validate(self)
        n = self.num_nodes
        sizes = np.diff(self.entry_start)
        self.entry_node = np.repeat(np.arange(n, dtype=np.int32), sizes)
        local = np.arange(self.num_entries, dtype=np.int64) - self.entry_start[self.entry_node]
        cols = self.num_actions[self.entry_node, 1].astype(np.int64)
        self.entry_row = (local // cols).astype(np.int32)
        self.entry_col = (local % cols).astype(np.int32)
        owned = np.where(self.node_kind[:, None] == DECISION, self.num_actions, 0)
        self.action_start = np.zeros((2, n + 1), dtype=np.int64)
        self.action_start[:, 1:] = np.cumsum(owned.T, axis=1)
        in_decision = self.node_kind[self.entry_node] == DECISION
        self.entry_action = np.where(
            in_decision, self.action_start[:, self.entry_node] + np.stack([self.entry_row, self.entry_col]), -1)
        self.height, self.levels = _heights(self)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_arrays(cls, num_actions: np.ndarray, entry_child: np.ndarray,
                    entry_payoff: np.ndarray, *, node_kind: np.ndarray | None = None,
                    entry_prob: np.ndarray | None = None, root: int = 0,
                    player_names: Sequence[str] = ("player 0", "player 1"),
                    node_labels: list[Hashable] | None = None,
                    action_labels: list | None = None) -> SimultaneousGame:
        """A game from whole arrays (entries in node order, row-major in each node)."""
        num_actions = np.asarray(num_actions, dtype=np.int32).reshape(-1, 2)
        n = len(num_actions)
        kind = (np.zeros(n, dtype=np.int8) if node_kind is None
                else np.asarray(node_kind, dtype=np.int8))
        if np.any(num_actions < 1):
            node = int(np.flatnonzero((num_actions < 1).any(axis=1))[0])
            raise ValidationError(f"node {node}: empty action set")
        start = np.zeros(n + 1, dtype=np.int64)
        start[1:] = np.cumsum(num_actions[:, 0].astype(np.int64) * num_actions[:, 1])
        child = np.asarray(entry_child, dtype=np.int32)
        payoff = np.asarray(entry_payoff, dtype=np.float64).reshape(-1, 2)
        prob = (np.ones(len(child)) if entry_prob is None
                else np.asarray(entry_prob, dtype=np.float64))
        if not (len(child) == len(payoff) == len(prob) == start[-1]):
            raise ValidationError(
                f"entry arrays have lengths {len(child)}, {len(payoff)}, {len(prob)}; "
                f"the action counts need {int(start[-1])}")
        return cls(node_kind=kind, num_actions=num_actions, entry_start=start,
                   entry_child=child, entry_payoff=payoff, entry_prob=prob, root=root,
                   player_names=(str(player_names[0]), str(player_names[1])),
                   node_labels=node_labels, action_labels=action_labels)

    # ------------------------------------------------------------------ sizes and views
    @property
    def num_nodes(self) -> int:
        return len(self.node_kind)

    @property
    def num_entries(self) -> int:
        return len(self.entry_child)

    def entries(self, node: int) -> slice:
        return slice(int(self.entry_start[node]), int(self.entry_start[node + 1]))

    def shape(self, node: int) -> tuple[int, int]:
        return int(self.num_actions[node, 0]), int(self.num_actions[node, 1])

    def is_chance(self, node: int) -> bool:
        return bool(self.node_kind[node] == CHANCE)

    def children(self, node: int) -> np.ndarray:
        """The node's children (with repeats, in entry order)."""
        child = self.entry_child[self.entries(node)]
        return child[child >= 0]

    def actions(self, node: int, player: int) -> tuple[str, ...]:
        """Action labels of ``player`` at ``node`` (chance outcomes for player 0 at chance)."""
        labels = self.action_labels[node] if self.action_labels is not None else None
        if labels is not None:
            return labels[player]
        return default_action_labels(player, int(self.num_actions[node, player]))

    def entry_values(self, node_values: np.ndarray) -> np.ndarray:
        """[E, 2]: terminal payoffs, and ``node_values`` of the child for child entries."""
        values = self.entry_payoff.copy()
        has_child = self.entry_child >= 0
        values[has_child] = node_values[self.entry_child[has_child]]
        return values

    def payoff_range(self) -> float:
        """Largest minus smallest terminal payoff (1 when there is none)."""
        terminal = self.entry_payoff[self.entry_child < 0]
        if terminal.size == 0:
            return 1.0
        spread = float(terminal.max() - terminal.min())
        return spread if spread > 0 else 1.0

    def histories(self) -> list[str]:
        """For every node, the first history (breadth first) that reaches it from the root.

        A history is ``/`` followed by the joint actions ``row,col`` (or the chance
        outcome ``chance=label``) separated by ``/``; the root's is ``/``. Unreachable
        nodes get ``""``.
        """
        out = [""] * self.num_nodes
        out[self.root] = "/"
        seen = np.zeros(self.num_nodes, dtype=bool)
        seen[self.root] = True
        frontier = np.array([self.root])
        while frontier.size:
            idx = concat_ranges(self.entry_start[frontier], np.diff(self.entry_start)[frontier])
            idx = idx[self.entry_child[idx] >= 0]
            kids, first = np.unique(self.entry_child[idx], return_index=True)
            new = ~seen[kids]
            for kid, e in zip(kids[new].tolist(), idx[first[new]].tolist(), strict=True):
                prefix = out[int(self.entry_node[e])]
                out[kid] = (prefix if prefix != "/" else "") + "/" + self.entry_label(e)
            seen[kids[new]] = True
            frontier = kids[new]
        return out

    def entry_label(self, entry: int) -> str:
        node = int(self.entry_node[entry])
        row, col = int(self.entry_row[entry]), int(self.entry_col[entry])
        if self.is_chance(node):
            return f"chance={self.actions(node, 0)[row]}"
        return f"{self.actions(node, 0)[row]},{self.actions(node, 1)[col]}"

    def node_name(self, node: int, histories: list[str] | None = None) -> str:
        """The node's label if it has one, else its history."""
        if self.node_labels is not None and self.node_labels[node] is not None:
            return str(self.node_labels[node])
        return (histories or self.histories())[node]


def _validate(game: SimultaneousGame) -> None:
    n = len(game.node_kind)
    if n == 0:
        raise ValidationError("the game has no nodes")
    if not 0 <= game.root < n:
        raise ValidationError(f"root {game.root} is not a node")
    if np.any(game.num_actions < 1):
        node = int(np.flatnonzero((game.num_actions < 1).any(axis=1))[0])
        raise ValidationError(f"node {node}: empty action set")
    chance = game.node_kind == CHANCE
    if np.any(game.num_actions[chance, 1] != 1):
        raise ValidationError("a chance node's outcomes must form a k x 1 matrix")
    child = game.entry_child
    if np.any(child == _UNSET):
        entry = int(np.flatnonzero(child == _UNSET)[0])
        node = int(np.searchsorted(game.entry_start, entry, side="right") - 1)
        raise ValidationError(f"node {node}: entry {entry - int(game.entry_start[node])} "
                              "is neither terminal nor a child")
    if np.any((child < TERMINAL) | (child >= n)):
        raise ValidationError(f"a child id is not a node (there are {n} nodes)")
    terminal = child == TERMINAL
    bad = terminal & ~np.isfinite(game.entry_payoff).all(axis=1)
    if np.any(bad):
        entry = int(np.flatnonzero(bad)[0])
        node = int(np.searchsorted(game.entry_start, entry, side="right") - 1)
        raise ValidationError(f"node {node}: payoff {game.entry_payoff[entry].tolist()} "
                              "is not a finite number")
    game.entry_payoff[~terminal] = 0.0
    if np.any(chance):
        node_of = np.repeat(np.arange(n), np.diff(game.entry_start))
        in_chance = chance[node_of]
        probs = game.entry_prob[in_chance]
        if np.any(~np.isfinite(probs)) or np.any(probs < 0):
            raise ValidationError("chance probabilities must be finite and non-negative")
        sums = np.bincount(node_of[in_chance], weights=probs, minlength=n)[chance]
        if np.any(np.abs(sums - 1.0) > 1e-9):
            node = int(np.flatnonzero(chance)[np.argmax(np.abs(sums - 1.0) > 1e-9)])
            raise ValidationError(f"chance node {node}: probabilities sum to "
                                  f"{float(sums[np.abs(sums - 1.0) > 1e-9][0])}, not 1")
        game.entry_prob[~in_chance] = 1.0
    else:
        game.entry_prob[:] = 1.0


def _heights(game: SimultaneousGame) -> tuple[np.ndarray, list[np.ndarray]]:
    """Longest distance to a terminal node, by Kahn's algorithm one level at a time."""
    n = game.num_nodes
    node_of = np.repeat(np.arange(n, dtype=np.int64), np.diff(game.entry_start))
    has_child = game.entry_child >= 0
    parents = node_of[has_child]
    kids = game.entry_child[has_child].astype(np.int64)
    if np.any(parents == kids):
        raise ValidationError(f"node {int(parents[parents == kids][0])} is its own child")
    remaining = np.bincount(parents, minlength=n)
    order = np.argsort(kids, kind="stable")
    rev_parent = parents[order]
    rev_start = np.searchsorted(kids[order], np.arange(n + 1))
    height = np.full(n, -1, dtype=np.int32)
    levels: list[np.ndarray] = []
    frontier = np.flatnonzero(remaining == 0)
    level = 0
    while frontier.size:
        height[frontier] = level
        levels.append(frontier.astype(np.int64))
        idx = concat_ranges(rev_start[frontier], rev_start[frontier + 1] - rev_start[frontier])
        touched = rev_parent[idx]
        remaining -= np.bincount(touched, minlength=n)
        cand = np.unique(touched)
        frontier = cand[remaining[cand] == 0]
        level += 1
    if np.any(height < 0):
        raise ValidationError(f"the game has a cycle through node {int(np.flatnonzero(height < 0)[0])}")
    return height, levels


class SimultaneousGameBuilder:
    """Incremental construction of a :class:`SimultaneousGame` (see the module docstring)."""

    def __init__(self, player_names: Sequence[str] = ("player 0", "player 1"),
                 max_nodes: int | None = None) -> None:
        self.player_names = (str(player_names[0]), str(player_names[1]))
        self.max_nodes = max_nodes
        self._kind: list[int] = []
        self._shape: list[tuple[int, int]] = []
        self._start: list[int] = [0]
        self._child: list[int] = []
        self._payoff: list[float] = []
        self._prob: list[float] = []
        self._labels: list[Hashable] = []
        self._action_labels: list[tuple[tuple[str, ...], tuple[str, ...]] | None] = []

    @property
    def num_nodes(self) -> int:
        return len(self._kind)

    def add_node(self, n0: int, n1: int, labels0: Sequence[str] | None = None,
                 labels1: Sequence[str] | None = None, label: Hashable = None) -> int:
        """A decision node with ``n0`` x ``n1`` entries (all still unset); returns its id."""
        if n0 < 1 or n1 < 1:
            raise ValidationError(f"node {self.num_nodes}"
                                  f"{'' if label is None else f' ({label})'}: empty action set")
        labels = None
        if labels0 is not None or labels1 is not None:
            labels = (self._labels_for(0, n0, labels0), self._labels_for(1, n1, labels1))
        return self._add(DECISION, n0, n1, [1.0] * (n0 * n1), label, labels)

    def add_chance(self, probabilities: Sequence[float], labels: Sequence[str] | None = None,
                   label: Hashable = None) -> int:
        """A chance node; outcome ``k`` is entry ``(k, 0)`` (set it like any entry)."""
        probs = [float(p) for p in probabilities]
        if not probs:
            raise ValidationError(f"chance node {self.num_nodes}: no outcomes")
        names = None if labels is None else (self._labels_for(0, len(probs), labels), ("",))
        return self._add(CHANCE, len(probs), 1, probs, label, names)

    def set_terminal(self, node: int, i: int, j: int, payoffs: Sequence[float]) -> None:
        e = self._entry(node, i, j)
        u0, u1 = (float(v) for v in payoffs)
        if not (math.isfinite(u0) and math.isfinite(u1)):
            raise ValidationError(f"node {node} entry ({i}, {j}): payoff ({u0}, {u1}) "
                                  "is not a finite number")
        self._child[e] = TERMINAL
        self._payoff[2 * e:2 * e + 2] = [u0, u1]

    def set_child(self, node: int, i: int, j: int, child: int) -> None:
        e = self._entry(node, i, j)
        self._child[e] = int(child)

    def set_entries(self, node: int, children: np.ndarray, payoffs: np.ndarray | None = None) -> None:
        """Set all entries of ``node``: ``children[n0, n1]`` (-1 = terminal), ``payoffs[n0, n1, 2]``."""
        n0, n1 = self._shape[node]
        kids = np.asarray(children, dtype=np.int64).reshape(n0 * n1)
        pay = (np.zeros((n0 * n1, 2)) if payoffs is None
               else np.asarray(payoffs, dtype=np.float64).reshape(n0 * n1, 2))
        start = self._start[node]
        self._child[start:start + n0 * n1] = kids.tolist()
        self._payoff[2 * start:2 * (start + n0 * n1)] = pay.reshape(-1).tolist()

    def build(self, root: int = 0) -> SimultaneousGame:
        labels = self._labels if any(v is not None for v in self._labels) else None
        action_labels = (self._action_labels
                         if any(v is not None for v in self._action_labels) else None)
        if not self._kind:
            raise ValidationError("the game has no nodes")
        return SimultaneousGame(
            node_kind=np.array(self._kind, dtype=np.int8),
            num_actions=np.array(self._shape, dtype=np.int32).reshape(-1, 2),
            entry_start=np.array(self._start, dtype=np.int64),
            entry_child=np.array(self._child, dtype=np.int32),
            entry_payoff=np.array(self._payoff, dtype=np.float64).reshape(-1, 2),
            entry_prob=np.array(self._prob, dtype=np.float64),
            root=root, player_names=self.player_names, node_labels=labels,
            action_labels=action_labels)

    # ------------------------------------------------------------------ helpers
    def _add(self, kind: int, n0: int, n1: int, probs: list[float], label: Hashable,
             action_labels: tuple[tuple[str, ...], tuple[str, ...]] | None) -> int:
        if self.max_nodes is not None and self.num_nodes >= self.max_nodes:
            raise LimitReached(f"the game has more than {self.max_nodes} nodes (node budget)")
        node = self.num_nodes
        self._kind.append(kind)
        self._shape.append((n0, n1))
        size = n0 * n1
        self._start.append(self._start[-1] + size)
        self._child.extend([_UNSET] * size)
        self._payoff.extend([0.0] * (2 * size))
        self._prob.extend(probs)
        self._labels.append(label)
        self._action_labels.append(action_labels)
        return node

    def _entry(self, node: int, i: int, j: int) -> int:
        if not 0 <= node < self.num_nodes:
            raise ValidationError(f"{node} is not a node")
        n0, n1 = self._shape[node]
        if not (0 <= i < n0 and 0 <= j < n1):
            raise ValidationError(f"node {node}: entry ({i}, {j}) is outside its {n0} x {n1} matrix")
        return self._start[node] + i * n1 + j

    @staticmethod
    def _labels_for(player: int, count: int, labels: Sequence[str] | None) -> tuple[str, ...]:
        if labels is None:
            return default_action_labels(player, count)
        if len(labels) != count:
            raise ValidationError(f"{len(labels)} action labels for {count} actions")
        return tuple(str(v) for v in labels)


def require_budget(game: SimultaneousGame, max_nodes: int | None) -> None:
    """Raise :class:`LimitReached` when the game has more nodes than the budget."""
    if max_nodes is not None and game.num_nodes > max_nodes:
        raise LimitReached(f"the game has {game.num_nodes} nodes, over the budget of {max_nodes}")


__all__ = ["CHANCE", "DECISION", "TERMINAL", "SimultaneousGame",
           "SimultaneousGameBuilder", "concat_ranges", "default_action_labels", "require_budget"]
