"""The extensive-form game model: one array-based tree for ``.efg`` and tree-format games.

Readers (:mod:`.efg_format`, :mod:`.tree_format`) describe a game as a
:class:`NodeTable` (flat columns, root first, every parent before its children) and
call :func:`build_game`. That returns an :class:`ExtensiveGame` whose hot data are numpy
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
from array import array
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
    """One node as the tree-format reader saw it (:meth:`NodeTable.from_raw` flattens a list).

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
class NodeTable:
    """A tree as a reader emits it, in flat columns: no Python object per node.

    Nodes come in pre-order (root 0, children in action order after their parent).
    Per node: kind, 0-based player (-1), parent (-1 for the root), and the ids of its
    information set, chance set and outcome (-1 for none). Information sets get ids in
    order of first appearance; a chance set is the actions and normalised probabilities
    of chance nodes sharing them (``.efg`` chance information sets); an outcome is a
    payoff vector, as floats, with its exact value kept in ``outcome_exact`` only where
    the float does not give it back (rationals such as 1/3).
    """

    num_players: int
    kind: array = field(default_factory=lambda: array("b"))
    player: array = field(default_factory=lambda: array("i"))
    parent: array = field(default_factory=lambda: array("q"))
    infoset: array = field(default_factory=lambda: array("q"))
    chance: array = field(default_factory=lambda: array("q"))
    outcome: array = field(default_factory=lambda: array("q"))
    names: list[str] = field(default_factory=list)
    infoset_keys: list[Hashable] = field(default_factory=list)
    infoset_player: list[int] = field(default_factory=list)
    infoset_actions: list[tuple[str, ...]] = field(default_factory=list)
    chance_actions: list[tuple[str, ...]] = field(default_factory=list)
    chance_probs: list[tuple[Fraction, ...]] = field(default_factory=list)
    chance_labels: list[str] = field(default_factory=list)
    outcome_names: list[str] = field(default_factory=list)
    outcome_payoffs: array = field(default_factory=lambda: array("d"))
    outcome_exact: dict[int, tuple[Fraction, ...]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.kind)

    def add_node(self, kind: int, parent: int, name: str, player: int = -1, infoset: int = -1,
                 chance: int = -1, outcome: int = -1) -> int:
        self.kind.append(kind)
        self.player.append(player)
        self.parent.append(parent)
        self.infoset.append(infoset)
        self.chance.append(chance)
        self.outcome.append(outcome)
        self.names.append(name)
        return len(self.kind) - 1

    def add_outcome(self, name: str, payoffs: Sequence[float],
                    exact: tuple[Fraction, ...] | None = None) -> int:
        self.outcome_names.append(name)
        self.outcome_payoffs.extend(payoffs)
        number = len(self.outcome_names) - 1
        if exact is not None:
            self.outcome_exact[number] = exact
        return number

    def add_chance_set(self, actions: tuple[str, ...], probs: tuple[Fraction, ...],
                       label: str = "") -> int:
        self.chance_actions.append(actions)
        self.chance_probs.append(probs)
        self.chance_labels.append(label)
        return len(self.chance_actions) - 1

    @classmethod
    def from_raw(cls, nodes: list[RawNode], num_players: int,
                 infoset_names: dict[Hashable, str], filename: str | None = None) -> NodeTable:
        """Flatten reader nodes; FormatError when nodes of one information set disagree
        on the player or the actions."""
        table = cls(num_players)
        parent = [-1] * len(nodes)
        for i, nd in enumerate(nodes):
            for child in nd.children:
                parent[child] = i
        key_ids: dict[Hashable, int] = {}
        for i, nd in enumerate(nodes):
            infoset = chance = outcome = -1
            if nd.kind == PLAYER:
                infoset = key_ids.setdefault(nd.infoset, len(key_ids))
                if infoset == len(table.infoset_keys):
                    table.infoset_keys.append(nd.infoset)
                    table.infoset_player.append(nd.player)
                    table.infoset_actions.append(nd.actions)
                elif table.infoset_player[infoset] != nd.player:
                    raise FormatError(f"information set {infoset_names.get(nd.infoset)!r} holds "
                                      f"nodes of players {table.infoset_player[infoset] + 1} and "
                                      f"{nd.player + 1}", nd.location or Location(filename))
                elif table.infoset_actions[infoset] != nd.actions:
                    raise FormatError(f"information set {infoset_names.get(nd.infoset)!r}: actions "
                                      f"{list(nd.actions)} differ from "
                                      f"{list(table.infoset_actions[infoset])}",
                                      nd.location or Location(filename))
            elif nd.kind == CHANCE:
                chance = table.add_chance_set(nd.actions, nd.probs, nd.chance_label)
            if nd.payoff is not None:
                outcome = table.add_outcome(nd.outcome_name, [float(x) for x in nd.payoff],
                                            nd.payoff)
            table.add_node(nd.kind, parent[i], nd.name, nd.player if nd.kind == PLAYER else -1,
                           infoset, chance, outcome)
        return table


class ExactPayoffs(Sequence):
    """Each node's own outcome as exact numbers (``None`` for none), made on demand.

    A float from a decimal of at most 15 significant digits (or printed by ``repr``)
    gives that decimal back through ``repr``; other values are kept exactly by the reader.
    """

    def __init__(self, node_outcome: np.ndarray, payoffs: np.ndarray,
                 exact: dict[int, tuple[Fraction, ...]]) -> None:
        self._outcome, self._payoffs, self._exact = node_outcome, payoffs, exact

    def __len__(self) -> int:
        return len(self._outcome)

    def __getitem__(self, node):  # type: ignore[override]
        if isinstance(node, slice):
            return [self[i] for i in range(*node.indices(len(self)))]
        number = int(self._outcome[node])
        if number < 0:
            return None
        exact = self._exact.get(number)
        if exact is None:
            exact = tuple(Fraction(repr(x)) for x in self._payoffs[number].tolist())
        return exact

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


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
    exact_payoffs: Sequence[tuple[Fraction, ...] | None]
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


def build_game(title: str, player_names: Sequence[str], table: NodeTable,
               infoset_names: Sequence[str], filename: str | None = None,
               comment: str = "") -> ExtensiveGame:
    """Arrays, information sets, sequences and the perfect-recall check for a tree.

    ``table`` holds the nodes in pre-order (see :class:`NodeTable`); ``infoset_names``
    are the display names of its information sets, by id.
    """
    del filename  # the readers locate their own errors; kept for a uniform call
    num_players = len(player_names)
    n = len(table)
    # views of the table's columns (no copies: big games); only node_set is rewritten
    kind = np.frombuffer(table.kind, dtype=np.int8)
    player = np.frombuffer(table.player, dtype=np.int32)
    parent = np.frombuffer(table.parent, dtype=np.int64)
    node_set = np.frombuffer(table.infoset, dtype=np.int64).copy()
    node_chance = np.frombuffer(table.chance, dtype=np.int64)
    node_outcome = np.frombuffer(table.outcome, dtype=np.int64)
    # pre-order: a parent's children, in action order, are the nodes naming it as parent
    children = np.argsort(parent[1:], kind="stable") + 1
    child_counts = np.bincount(parent[1:], minlength=n) if n > 1 else np.zeros(n, np.int64)
    child_start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(child_counts, out=child_start[1:])
    action = np.zeros(n, dtype=np.int64)
    action[children] = np.arange(len(children)) - np.repeat(child_start[:-1], child_counts)

    chance_start = np.zeros(len(table.chance_probs) + 1, dtype=np.int64)
    np.cumsum([len(p) for p in table.chance_probs], out=chance_start[1:])
    chance_flat = np.array([float(p) for probs in table.chance_probs for p in probs])
    edge_prob = np.ones(len(children))
    under_chance = node_chance[parent[children]] >= 0
    edges = np.flatnonzero(under_chance)
    edge_prob[edges] = chance_flat[chance_start[node_chance[parent[children[edges]]]]
                                   + action[children[edges]]]
    outcome_payoffs = np.frombuffer(table.outcome_payoffs, dtype=np.float64).reshape(
        -1, num_players).copy()
    payoff = np.zeros((n, num_players))
    has_outcome = node_outcome >= 0
    payoff[has_outcome] = outcome_payoffs[node_outcome[has_outcome]]

    num_sets = len(table.infoset_keys)
    members = np.flatnonzero(node_set >= 0)
    first_node_arr = np.full(num_sets, n, dtype=np.int64)
    np.minimum.at(first_node_arr, node_set[members], members)
    first_node = first_node_arr.tolist()
    set_player = np.array(table.infoset_player, dtype=np.int64)

    depth, order = _depths(parent, children, child_start, n)
    counts = np.array([len(a) for a in table.infoset_actions], dtype=np.int64)
    old_start = np.zeros(num_sets + 1, dtype=np.int64)
    np.cumsum(counts, out=old_start[1:])
    old_last_seq = _last_sequences(player, node_set, parent, action, depth, order,
                                   old_start, num_players)
    level = _levels(old_last_seq, first_node, player, node_set, depth, counts, num_players)
    recall_problem = _recall_problem(old_last_seq, first_node, player, node_set,
                                     list(infoset_names))

    # final information-set order: by player, then level, then first appearance
    perm = np.lexsort((np.arange(num_sets), level, set_player)) if num_sets else \
        np.zeros(0, dtype=np.int64)
    new_id = np.empty(num_sets, dtype=np.int64)
    new_id[perm] = np.arange(num_sets)
    counts = counts[perm]
    action_start = np.zeros(num_sets + 1, dtype=np.int64)
    np.cumsum(counts, out=action_start[1:])
    # map a provisional global action to the final one
    old_counts = np.diff(old_start)
    offset_in_set = np.arange(int(old_start[-1])) - np.repeat(old_start[:-1], old_counts)
    remap = action_start[np.repeat(new_id, old_counts)] + offset_in_set
    seq_map = np.concatenate([np.arange(num_players), num_players + remap])

    last_seq = seq_map[old_last_seq]
    has_set = node_set >= 0
    node_set[has_set] = new_id[node_set[has_set]]
    perm_first = first_node_arr[perm]
    infoset_parent_seq = last_seq[perm_first, set_player[perm]] if num_sets else \
        np.zeros(0, dtype=np.int64)

    terminal_nodes = np.flatnonzero(kind == TERMINAL)
    reach, utility = _chance_reach_and_utility(order, depth, parent, child_start, action,
                                               edge_prob, payoff)
    chance_nodes = np.flatnonzero(node_chance >= 0).tolist()
    no_probs: tuple[Fraction, ...] = ()
    exact_probs = [no_probs] * n
    chance_labels = [""] * n
    for i in chance_nodes:
        c = int(node_chance[i])
        exact_probs[i] = table.chance_probs[c]
        chance_labels[i] = table.chance_labels[c]
    outcome_names = [""] * n
    for i in np.flatnonzero(has_outcome).tolist():
        outcome_names[i] = table.outcome_names[int(node_outcome[i])]
    perm_list = perm.tolist()
    return ExtensiveGame(
        title=title, player_names=list(player_names),
        node_kind=kind, node_player=player, node_infoset=node_set, node_parent=parent,
        node_action=action, node_depth=depth, child_start=child_start, children=children,
        edge_prob=edge_prob, node_payoff=payoff, node_utility=utility,
        infoset_player=set_player[perm],
        infoset_level=level[perm],
        infoset_action_start=action_start, infoset_parent_seq=infoset_parent_seq,
        infoset_names=[infoset_names[j] for j in perm_list],
        infoset_actions=[table.infoset_actions[j] for j in perm_list],
        action_infoset=np.repeat(np.arange(num_sets), counts),
        terminal_nodes=terminal_nodes, terminal_chance=reach[terminal_nodes],
        terminal_seq=np.ascontiguousarray(last_seq[terminal_nodes].T),
        terminal_utility=utility[terminal_nodes],
        node_names=table.names,
        node_outcome_names=outcome_names,
        node_chance_labels=chance_labels,
        exact_probs=exact_probs,
        exact_payoffs=ExactPayoffs(node_outcome, outcome_payoffs, table.outcome_exact),
        comment=comment, recall_problem=recall_problem,
        chance_actions={i: table.chance_actions[int(node_chance[i])] for i in chance_nodes},
    )


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
    for lo, hi in equal_runs(depth[rest]):
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
    for lo, hi in equal_runs(depth[rest]):
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


def equal_runs(values: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) of runs of equal values in a sorted array (none when empty)."""
    if not len(values):
        return []
    cuts = np.flatnonzero(np.diff(values)) + 1
    bounds = [0, *cuts.tolist(), len(values)]
    return list(zip(bounds[:-1], bounds[1:], strict=True))
