"""The extensive-form game model: one array-based tree for ``.efg`` and tree-format games.

Readers (:mod:`.efg_format`, :mod:`.tree_format`) describe a game as a list of
:class:`RawNode` (root first, every parent before its children) and call
:func:`build_game`. That returns an :class:`ExtensiveGame` whose hot data are numpy
arrays; the solvers work on the *sequence form* views of it:

* nodes in pre-order (root = 0): kind, acting player, information set, parent, the
  action taken at the parent, children in CSR form (``child_start``/``children``), the
  chance probability of every edge, the payoff of the node's own outcome;
* information sets sorted by (player, level), where the level of an information set
  is the number of the player's own earlier decisions (so one player's sets at one
  level are a contiguous block, and so are their actions);
* sequences in one global index space: ``p`` (< ``num_players``) is player ``p``'s
  empty sequence, ``num_players + k`` is the sequence ending with global action ``k``;
* terminals: node ids, the chance probability of reaching each, each player's last
  sequence on the way there, and the accumulated utility (outcomes on non-terminal
  nodes add up along the path, as in Gambit).

Perfect recall (every node of an information set has the same own sequence) is
checked on construction; games without it are still playable, but the sequence-form
solvers refuse them (:meth:`ExtensiveGame.require_perfect_recall`).

Exact numbers (``fractions.Fraction``) are kept for payoffs and chance probabilities at
the API edge so that :func:`efg_format.write_efg` reproduces rationals; solvers use the
float arrays.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from solvers.errors import FormatError, Location, UnsupportedGame

TERMINAL, CHANCE, PLAYER = 0, 1, 2

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?(\d+))?|[+-]?\d+/\d+")


def exact_number(text: str) -> Fraction:
    """An integer, decimal (with exponent) or rational as an exact fraction.

    Raises ``ValueError`` for anything else, and for numbers a float cannot hold
    (so a hostile ``1e999999999`` never builds a huge integer).
    """
    match = _NUMBER.fullmatch(text)
    if match is None or len(text) > 100 or (match.group(1) and len(match.group(1)) > 4):
        raise ValueError(text)
    try:
        value = Fraction(text)
        float(value)
    except (ZeroDivisionError, OverflowError):
        raise ValueError(text) from None
    return value


@dataclass
class RawNode:
    """One node as a reader saw it (the builder turns a list of these into arrays).

    ``player`` is 0-based for player nodes; ``infoset`` is a hashable key shared by
    the nodes of one information set (``None`` for chance and terminal nodes);
    ``probs`` are the normalised chance probabilities; ``payoff`` is the node's own
    outcome (``None`` for no outcome); ``children`` are node indices, in action order.
    """

    kind: int
    player: int = -1
    infoset: Hashable | None = None
    actions: tuple[str, ...] = ()
    probs: tuple[Fraction, ...] = ()
    payoff: tuple[Fraction, ...] | None = None
    name: str = ""
    outcome_name: str = ""
    chance_label: str = ""
    children: list[int] = field(default_factory=list)
    location: Location | None = None


@dataclass
class ExtensiveGame:
    """An extensive-form game as arrays (see the module docstring for the layout)."""

    title: str
    player_names: list[str]
    # nodes (pre-order)
    node_kind: np.ndarray
    node_player: np.ndarray
    node_infoset: np.ndarray
    node_parent: np.ndarray
    node_action: np.ndarray
    node_depth: np.ndarray
    child_start: np.ndarray
    children: np.ndarray
    edge_prob: np.ndarray
    node_payoff: np.ndarray
    node_utility: np.ndarray
    # information sets (sorted by player, level)
    infoset_player: np.ndarray
    infoset_level: np.ndarray
    infoset_action_start: np.ndarray
    infoset_parent_seq: np.ndarray
    infoset_names: list[str]
    infoset_actions: list[tuple[str, ...]]
    action_infoset: np.ndarray
    # terminals
    terminal_nodes: np.ndarray
    terminal_chance: np.ndarray
    terminal_seq: np.ndarray
    terminal_utility: np.ndarray
    # exact data and labels at the API edge
    node_names: list[str]
    node_outcome_names: list[str]
    node_chance_labels: list[str]
    exact_probs: list[tuple[Fraction, ...]]
    exact_payoffs: list[tuple[Fraction, ...] | None]
    comment: str = ""
    recall_problem: str | None = None
    # per-node labels of chance edges, kept for writers and the playable game
    chance_actions: dict[int, tuple[str, ...]] = field(default_factory=dict)

    # ----------------------------------------------------------------- sizes
    @property
    def num_players(self) -> int:
        return len(self.player_names)

    @property
    def num_nodes(self) -> int:
        return len(self.node_kind)

    @property
    def num_infosets(self) -> int:
        return len(self.infoset_player)

    @property
    def num_actions(self) -> int:
        """Total number of (information set, action) pairs over all players."""
        return len(self.action_infoset)

    @property
    def num_sequences(self) -> int:
        return self.num_players + self.num_actions

    @property
    def perfect_recall(self) -> bool:
        return self.recall_problem is None

    def require_perfect_recall(self, solver: str) -> None:
        if self.recall_problem is not None:
            raise UnsupportedGame(f"{solver} needs perfect recall: {self.recall_problem}")

    def node_children(self, node: int) -> np.ndarray:
        return self.children[self.child_start[node]:self.child_start[node + 1]]

    def node_actions(self, node: int) -> tuple[str, ...]:
        """Action labels at a node (a chance node's labels come from its edges)."""
        if self.node_kind[node] == PLAYER:
            return self.infoset_actions[self.node_infoset[node]]
        return self.chance_actions[node]

    def player_infosets(self, player: int) -> range:
        """The block of information-set ids that belong to ``player``."""
        ids = np.flatnonzero(self.infoset_player == player)
        return range(int(ids[0]), int(ids[-1]) + 1) if len(ids) else range(0)

    def player_actions(self, player: int) -> range:
        """The block of global action ids of ``player``'s information sets."""
        sets = self.player_infosets(player)
        if not sets:
            return range(0)
        return range(int(self.infoset_action_start[sets.start]),
                     int(self.infoset_action_start[sets.stop]))

    def is_zero_sum(self, tolerance: float = 1e-9) -> bool:
        """Utilities add up to the same constant at every terminal (constant-sum)."""
        totals = self.terminal_utility.sum(axis=1)
        return bool(len(totals) == 0 or np.ptp(totals) <= tolerance * max(1.0, np.abs(totals).max()))

    def uniform_strategy(self) -> np.ndarray:
        """The behavioural strategy playing every action uniformly, per global action."""
        counts = np.diff(self.infoset_action_start)
        return 1.0 / counts[self.action_infoset]


def build_game(title: str, player_names: Sequence[str], nodes: list[RawNode],
               infoset_names: dict[Hashable, str], filename: str | None = None,
               comment: str = "") -> ExtensiveGame:
    """Arrays, information sets, sequences and the perfect-recall check for a tree.

    ``nodes[0]`` is the root and every node's children have larger indices (the
    readers emit pre-order). ``infoset_names`` maps infoset keys to display names.
    Raises :class:`FormatError` when nodes of one information set disagree on the
    player or the actions.
    """
    num_players = len(player_names)
    n = len(nodes)
    kind = np.array([nd.kind for nd in nodes], dtype=np.int8)
    player = np.array([nd.player if nd.kind == PLAYER else -1 for nd in nodes], dtype=np.int32)
    child_counts = np.array([len(nd.children) for nd in nodes], dtype=np.int64)
    child_start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(child_counts, out=child_start[1:])
    children = np.fromiter((c for nd in nodes for c in nd.children), dtype=np.int64,
                           count=int(child_start[-1]))
    parent = np.full(n, -1, dtype=np.int64)
    parent[children] = np.repeat(np.arange(n), child_counts)
    action = np.zeros(n, dtype=np.int64)
    action[children] = np.arange(len(children)) - np.repeat(child_start[:-1], child_counts)
    edge_prob = np.ones(len(children))
    for i, nd in enumerate(nodes):
        if nd.kind == CHANCE:
            edge_prob[child_start[i]:child_start[i + 1]] = [float(p) for p in nd.probs]
    payoff = np.zeros((n, num_players))
    for i, nd in enumerate(nodes):
        if nd.payoff is not None:
            payoff[i] = [float(x) for x in nd.payoff]

    # provisional information sets in order of first appearance
    key_ids: dict[Hashable, int] = {}
    node_infoset = np.full(n, -1, dtype=np.int64)
    first_node: list[int] = []
    for i, nd in enumerate(nodes):
        if nd.kind != PLAYER:
            continue
        iid = key_ids.get(nd.infoset)
        if iid is None:
            iid = key_ids[nd.infoset] = len(first_node)
            first_node.append(i)
        else:
            first = nodes[first_node[iid]]
            if first.player != nd.player:
                raise FormatError(f"information set {infoset_names.get(nd.infoset)!r} holds nodes "
                                  f"of players {first.player + 1} and {nd.player + 1}",
                                  nd.location or Location(filename))
            if first.actions != nd.actions:
                raise FormatError(f"information set {infoset_names.get(nd.infoset)!r}: actions "
                                  f"{list(nd.actions)} differ from {list(first.actions)}",
                                  nd.location or Location(filename))
        node_infoset[i] = iid
    keys = list(key_ids)

    depth, order = _depths(parent, children, child_start, n)
    counts = np.array([len(nodes[i].actions) for i in first_node], dtype=np.int64)
    old_start = np.zeros(len(first_node) + 1, dtype=np.int64)
    np.cumsum(counts, out=old_start[1:])
    old_last_seq = _last_sequences(player, node_infoset, parent, action, depth, order,
                                   old_start, num_players)
    level = _levels(old_last_seq, first_node, player, node_infoset, depth, counts, num_players)
    recall_problem = _recall_problem(old_last_seq, first_node, player, node_infoset,
                                     [infoset_names.get(k, str(k)) for k in keys])

    # final information-set order: by player, then level, then first appearance
    perm = sorted(range(len(keys)), key=lambda j: (nodes[first_node[j]].player, level[j], j))
    new_id = np.empty(len(keys), dtype=np.int64)
    new_id[perm] = np.arange(len(keys))
    counts = counts[perm]
    action_start = np.zeros(len(perm) + 1, dtype=np.int64)
    np.cumsum(counts, out=action_start[1:])
    # map a provisional global action to the final one
    remap = np.empty(int(old_start[-1]), dtype=np.int64)
    for j in range(len(keys)):
        nj = new_id[j]
        remap[old_start[j]:old_start[j + 1]] = np.arange(action_start[nj], action_start[nj + 1])
    seq_map = np.concatenate([np.arange(num_players), num_players + remap])

    last_seq = seq_map[old_last_seq]
    has_set = node_infoset >= 0
    node_infoset[has_set] = new_id[node_infoset[has_set]]
    infoset_parent_seq = np.array([last_seq[first_node[j], nodes[first_node[j]].player]
                                   for j in perm], dtype=np.int64)

    terminal_nodes = np.flatnonzero(kind == TERMINAL)
    reach, utility = _chance_reach_and_utility(order, depth, parent, child_start, action,
                                               edge_prob, payoff)
    game = ExtensiveGame(
        title=title, player_names=list(player_names),
        node_kind=kind, node_player=player, node_infoset=node_infoset, node_parent=parent,
        node_action=action, node_depth=depth, child_start=child_start, children=children,
        edge_prob=edge_prob, node_payoff=payoff, node_utility=utility,
        infoset_player=np.array([nodes[first_node[j]].player for j in perm], dtype=np.int64),
        infoset_level=level[perm],
        infoset_action_start=action_start, infoset_parent_seq=infoset_parent_seq,
        infoset_names=[infoset_names.get(keys[j], str(keys[j])) for j in perm],
        infoset_actions=[nodes[first_node[j]].actions for j in perm],
        action_infoset=np.repeat(np.arange(len(perm)), counts),
        terminal_nodes=terminal_nodes, terminal_chance=reach[terminal_nodes],
        terminal_seq=np.ascontiguousarray(last_seq[terminal_nodes].T),
        terminal_utility=utility[terminal_nodes],
        node_names=[nd.name for nd in nodes],
        node_outcome_names=[nd.outcome_name for nd in nodes],
        node_chance_labels=[nd.chance_label for nd in nodes],
        exact_probs=[nd.probs for nd in nodes],
        exact_payoffs=[nd.payoff for nd in nodes],
        comment=comment, recall_problem=recall_problem,
        chance_actions={i: nd.actions for i, nd in enumerate(nodes) if nd.kind == CHANCE},
    )
    return game


def _depths(parent: np.ndarray, children: np.ndarray, child_start: np.ndarray,
            n: int) -> tuple[np.ndarray, np.ndarray]:
    """Depth of every node and the node order by depth (parents before children)."""
    depth = np.zeros(n, dtype=np.int64)
    frontier = np.array([0], dtype=np.int64)
    levels = [frontier]
    d = 0
    while True:
        starts, stops = child_start[frontier], child_start[frontier + 1]
        counts = stops - starts
        if counts.sum() == 0:
            break
        idx = np.repeat(starts - np.cumsum(np.concatenate([[0], counts[:-1]])), counts) \
            + np.arange(counts.sum())
        frontier = children[idx]
        d += 1
        depth[frontier] = d
        levels.append(frontier)
    order = np.concatenate(levels)
    if len(order) != n:
        raise FormatError("the tree has nodes that are not reachable from the root")
    return depth, order


def _chance_reach_and_utility(order: np.ndarray, depth: np.ndarray, parent: np.ndarray,
                              child_start: np.ndarray, action: np.ndarray, edge_prob: np.ndarray,
                              payoff: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Chance probability of reaching each node, and payoffs summed along each path."""
    reach = np.ones(len(parent))
    utility = payoff.copy()
    rest = order[1:]
    for lo, hi in _depth_blocks(depth[rest]):
        kids = rest[lo:hi]
        par = parent[kids]
        reach[kids] = reach[par] * edge_prob[child_start[par] + action[kids]]
        utility[kids] += utility[par]
    return reach, utility


def _last_sequences(player: np.ndarray, node_infoset: np.ndarray, parent: np.ndarray,
                    action: np.ndarray, depth: np.ndarray, order: np.ndarray,
                    action_start: np.ndarray, num_players: int) -> np.ndarray:
    """(nodes x players): each player's last own sequence on the path to each node.

    Sequence ids are global (``p`` = empty, ``num_players + action_start[I] + a``) in
    the numbering of ``node_infoset``/``action_start``.
    """
    last = np.empty((len(player), num_players), dtype=np.int64)
    last[0] = np.arange(num_players)
    rest = order[1:]
    for lo, hi in _depth_blocks(depth[rest]):
        kids = rest[lo:hi]
        par = parent[kids]
        # copy each parent's row, then overwrite the acting player's column
        last[kids] = last[par]
        acted = player[par] >= 0
        kids, par = kids[acted], par[acted]
        last[kids, player[par]] = num_players + action_start[node_infoset[par]] + action[kids]
    return last


def _levels(last: np.ndarray, first_node: list[int], player: np.ndarray,
            node_infoset: np.ndarray, depth: np.ndarray, counts: np.ndarray,
            num_players: int) -> np.ndarray:
    """Number of own earlier decisions before each information set.

    With perfect recall every node of a set lies below a node of its parent set, so
    visiting sets by their shallowest node sees parents first.
    """
    level = np.zeros(len(first_node), dtype=np.int64)
    if not len(first_node):
        return level
    shallowest = np.full(len(first_node), np.iinfo(np.int64).max)
    members = np.flatnonzero(node_infoset >= 0)
    np.minimum.at(shallowest, node_infoset[members], depth[members])
    seq_infoset = np.repeat(np.arange(len(first_node)), counts)
    for j in np.argsort(shallowest, kind="stable").tolist():
        own = last[first_node[j], player[first_node[j]]]
        level[j] = 0 if own < num_players else level[seq_infoset[own - num_players]] + 1
    return level


def _recall_problem(last: np.ndarray, first_node: list[int], player: np.ndarray,
                    node_infoset: np.ndarray, names: list[str]) -> str | None:
    """The first information set whose nodes follow different own histories, if any."""
    members = np.flatnonzero(player >= 0)
    mine = last[members, player[members]]
    expected = np.array([last[i, player[i]] for i in first_node], dtype=np.int64)
    bad = members[mine != expected[node_infoset[members]]]
    if not len(bad):
        return None
    return (f"information set {names[int(node_infoset[bad[0]])]!r} of player "
            f"{int(player[bad[0]]) + 1} is reached after different own histories")


def _depth_blocks(depths: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) of runs of equal values in a sorted array."""
    cuts = np.flatnonzero(np.diff(depths)) + 1
    bounds = [0, *cuts.tolist(), len(depths)]
    return list(zip(bounds[:-1], bounds[1:], strict=True))
