"""The agent's search over a graph of states held in arrays (enhancement ``graph``).

The same SM-MCTS as :class:`agent.search.mcts.AgentSearch` (UCT where one role
chooses, decoupled UCT where several do, chance uniform, pending visits at the
move's mean (``vmean``), MAST playouts, MCTS-Solver, tree reuse, ``timing``), with
what a champion's search has (Sancho's: an MCTS graph whose transposed states share
nodes, a bounded node pool, complete values propagated up):

- nodes in flat arrays (:mod:`agent.search.graph_kernels`), keyed by packed state in
  an open-addressing table: a state reached by several lines is one node;
- a round's descents, expansions and backups run as compiled loops; the round's
  new states are evaluated together by the batched engine
  (:class:`gdl.reasoning.batch_machine.BatchMachine`: terminal, legal moves, goals,
  what their transitions need), their children computed together, and the round's
  playouts run together (:meth:`agent.search.playouts.BatchPlayouts.run_packed`);
- the pool holds at most ``graph_nodes`` nodes, and its arrays stay under
  ``GRAPH_BYTES``: when a search starts with it over half full, the nodes not
  reachable from the new root are dropped and the rest renumbered
  (:meth:`Graph.compact`), and the pool is sized again by the mean width of the nodes
  it held (the root's width was the first guess: nineBoard's 81 moves, 9 after);
  within a move a full pool keeps its most visited half (:meth:`Graph.recycle`, as
  Sancho frees its least visited leaves) and goes on expanding, so a long match
  never runs out of memory and a long move never stops growing its tree;
- MCTS-Solver (:func:`agent.search.graph_kernels.prove`): terminal values and
  proofs propagate up, draws included; at simultaneous nodes a pure saddle point of
  a two-player constant-sum matrix of exact children proves the node;
- ``serial``: where our role and one other choose at once, the other answers our move
  (UCB1 over its joint moves' own statistics), as Sancho orders simultaneous moves;
- ``material``: a new edge that changes the material balance (Sancho's piece
  heuristic, :mod:`agent.search.material`) starts with a few visits at a value
  moved from its reference node's by the change;
- ``factor``: a search of one factor's game (:mod:`gdl.reasoning.factors`), the
  other factors' move-decided facts standing still (the agent keeps one per factor);
- ``grave``: GRAVE (Cazenave 2015) on AMAF statistics kept per move slot (a move's
  mean blended with its AMAF mean at the deepest node of the descent with enough
  visits where its role chooses), as Sancho turns RAVE on in breakthrough-like games.

It needs the compiled engine with a batched machine; :func:`make_search` falls back
to :class:`~agent.search.mcts.AgentSearch` otherwise, and for the enhancements it
does not have (``leaf``, ``repeat``, ``decisive``) and the ``rm``/``exp3``
simultaneous policies.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from agent.search.material import PIECE_SCALE, REFERENCE_VISITS, Material
from agent.search.mcts import CLOSE, AgentConfig, AgentSearch
from agent.search.playouts import BatchPlayouts, keep_facts
from gdl.reasoning.batch_machine import batch_machine_of, pack_ints, unpack_int
from gdl.reasoning.factors import Factor, moving_facts
from solvers.errors import GameError
from solvers.numba_switch import LazyKernels
from solvers.search import SearchResult
from solvers.search.matrix_game import solve_matrix_game

UNSUPPORTED = ("leaf", "repeat", "decisive")
# The graph's compiled rounds (agent.search.graph_kernels): imported with numba and
# warmed (a cold compile takes 10-30 s, a cached load under a second) only by
# KERNELS.load(), which the agent's spare worker runs while idle; a search is a
# graph search only once they are in.
KERNELS = LazyKernels("agent.search.graph_kernels", 0)
MAX_DEPTH = 1024       # a descent this deep plays out from where it is
PROOF_NODES = 20_000   # nodes a proven root's proof lengths may visit (~20 us each)
PENDING = -1.0         # a proof length being computed (a loop when met again)
SLOTS_PER_NODE = 8     # first guess of the slot and child pools' size, grown as needed
# the pool's arrays stay under this: the worker's address space is 4 GB (--memory-mb),
# and connectFourSimultaneous' million nodes (16 move slots, 64 joint moves each) took
# 1.7 GB when the slot and child pools grew together
GRAPH_BYTES = 768 << 20
# one entry a move slot; "slot_rave" (AMAF visits and reward total) kept under "grave"
SLOT_ARRAYS = ("slot_move", "slot_visits", "slot_total", "slot_rave")
SLOT_BYTES = 4 + 8 + 8     # their int32, float64, float64
RAVE_BYTES = 4 + 4         # and float32 pairs under "grave"
CHILD_BYTES = 4
# "serial": a joint move's visits and its answering role's reward total (int32, float32)
JOINT_ARRAYS = ("joint_visits", "joint_total")
JOINT_BYTES = 4 + 4
CHILD_ARRAYS = ("child", *JOINT_ARRAYS)   # an entry a joint move
NODE_ARRAYS = ("state", "outer", "free", "terminal", "proven", "value", "heur", "count", "rsum",
               "size", "slot_base", "child_base")   # a row a node


@dataclass
class _Parents:
    """The read-out :meth:`BatchMachine.next_states` needs of the parent states."""

    next_free: np.ndarray
    outer: np.ndarray


class Graph:
    """The node pool (see :mod:`agent.search.graph_kernels` for the layout)."""

    def __init__(self, kern: ModuleType, capacity: int, n_roles: int, n_words: int,
                 outer_words: int, serial: bool = False, rave: bool = False) -> None:
        self.kern = kern
        self.capacity = capacity
        self.meta = np.zeros(4, dtype=np.int64)   # nodes, slots, children in use
        self.state = np.zeros((capacity, n_words), dtype=np.uint64)
        self.outer = np.zeros((capacity, max(1, outer_words)), dtype=np.uint64)
        self.free = np.zeros((capacity, n_words), dtype=np.uint64)
        self.table = np.full(_table_size(capacity), -1, dtype=np.int32)
        self.terminal = np.zeros(capacity, dtype=np.bool_)
        self.proven = np.zeros(capacity, dtype=np.bool_)
        self.value = np.zeros((capacity, n_roles))
        self.heur = np.zeros(capacity)   # "minimax": role 0's implicit minimax value
        self.count = np.zeros(capacity)
        self.rsum = np.zeros((capacity, n_roles))
        self.size = np.zeros((capacity, n_roles), dtype=np.int32)
        self.slot_base = np.zeros(capacity, dtype=np.int64)
        self.child_base = np.zeros(capacity, dtype=np.int64)
        slots = min(capacity, 1 << 16) * SLOTS_PER_NODE
        self.slot_move = np.zeros(slots, dtype=np.int32)
        self.slot_visits = np.zeros(slots)
        self.slot_total = np.zeros(slots)
        self.slot_rave = np.zeros((slots if rave else 0, 2), dtype=np.float32)
        self.child = np.full(slots, -1, dtype=np.int32)
        joints = slots if serial else 0   # kept under "serial" only
        self.joint_visits = np.zeros(joints, dtype=np.int32)
        self.joint_total = np.zeros(joints, dtype=np.float32)

    @property
    def nodes(self) -> int:
        return int(self.meta[0])

    def recycle(self, root: int) -> int:
        """Within a move, when the pool is full: keep at most half of it, the nodes
        with the most visits that ``root`` reaches through such nodes (and exact
        children), as Sancho frees its least visited leaves; the new root."""
        n, keep = self.nodes, self.capacity // 2
        counts = self.count[:n]
        least = np.partition(counts, n - keep)[n - keep] if n > keep else 0.0
        # ties at that count (the many leaves visited once or never) are dropped too
        min_count = least + 1.0 if np.count_nonzero(counts >= least) > keep else least
        return self.compact(root, min_count)

    def pool_bytes(self) -> int:
        """The bytes the pool's arrays hold."""
        return sum(a.nbytes for a in vars(self).values() if isinstance(a, np.ndarray))

    def growth(self, nodes: int, slots: float, joints: float) -> int:
        """The bytes the slot and child pools' doublings would add for ``nodes`` new
        nodes of up to ``slots`` move slots and ``joints`` joint moves each (0: they
        have room)."""
        grown = 0   # a doubling adds the arrays' bytes again
        if self.meta[1] + nodes * slots > len(self.slot_move):
            grown += sum(getattr(self, name).nbytes for name in SLOT_ARRAYS)
        if self.meta[2] + nodes * joints > len(self.child):
            grown += sum(getattr(self, name).nbytes for name in CHILD_ARRAYS)
        return grown

    def lacks_room(self, nodes: int, slots: int, joints: int) -> bool:
        """Whether ``nodes`` new nodes of up to ``slots`` move slots and ``joints``
        joint moves each could fill the node pool, or need the slot or child pools
        grown past ``GRAPH_BYTES``."""
        if self.meta[0] + nodes > self.capacity:
            return True
        grown = self.growth(nodes, slots, joints)
        return grown > 0 and self.pool_bytes() + grown > GRAPH_BYTES

    def resize(self, capacity: int) -> None:
        """A node pool of ``capacity`` (at least the nodes in use), the slot and child
        pools cut to twice their use: a game whose nodes are narrower than its root
        (nineBoard's 81 first moves, 9 at most after) holds more of them."""
        for name in NODE_ARRAYS:
            setattr(self, name, _resized(getattr(self, name), capacity, 0))
        self.capacity = capacity
        self.table = np.full(_table_size(capacity), -1, dtype=np.int32)
        self.kern.rebuild_table(self.table, self.state, self.nodes)
        for names, used in ((SLOT_ARRAYS, self.meta[1]), (CHILD_ARRAYS, self.meta[2])):
            for name in names:
                array = getattr(self, name)
                if len(array) > 2 * used:
                    setattr(self, name, _resized(array, max(2 * int(used), 1 << 10), _fill(name)))

    def grow(self) -> int:
        """Twice the fuller of the slot and child pools (the node pool itself never
        grows; the caller asks again while the other lacks room too). Apart, since
        their needs differ: a simultaneous node has a child per joint move. The bytes
        added."""
        fuller = (SLOT_ARRAYS if self.meta[1] / len(self.slot_move) >= self.meta[2] / len(self.child)
                  else CHILD_ARRAYS)
        added = 0
        for name in fuller:
            array = getattr(self, name)
            added += array.nbytes
            setattr(self, name, _resized(array, 2 * len(array), _fill(name)))
        return added

    @staticmethod
    def node_bytes(n_roles: int, n_words: int, outer_words: int) -> int:
        """A node's own bytes in the arrays ``__init__`` makes, the table's share counted
        as two int32 entries (it is two to four: the table is a power of two)."""
        return (8 * (2 * n_words + max(1, outer_words))   # the state, free and outer rows
                + 8 + 2                                    # table share, terminal, proven
                + 8 * (2 * n_roles + 2) + 4 * n_roles      # value, rsum, count, heur, size
                + 16)                                      # slot_base, child_base

    @staticmethod
    def capacity_for(nodes: int, n_roles: int, n_words: int, outer_words: int,
                     slots: float, joint: float, serial: bool = False,
                     rave: bool = False) -> int:
        """At most ``nodes`` nodes, fewer when nodes of ``slots`` move slots and ``joint``
        joint moves (the root's at first, then the pool's mean) would take the arrays
        past ``GRAPH_BYTES`` (the slot and child pools grow by doubling: up to twice
        their use)."""
        per_joint = CHILD_BYTES + (JOINT_BYTES if serial else 0)
        per_slot = SLOT_BYTES + (RAVE_BYTES if rave else 0)
        per_node = (Graph.node_bytes(n_roles, n_words, outer_words)
                    + 2 * (per_slot * slots + per_joint * joint))
        return int(max(16, min(nodes, GRAPH_BYTES // per_node)))

    def compact(self, root: int, min_count: float = 0.0) -> int:
        """Keep the nodes reachable from ``root`` (through nodes with ``min_count``
        visits, exact ones whatever theirs: :func:`~agent.search.graph_kernels.reachable`),
        renumbered in order; the new root. A parent's pointer to a dropped child is
        unknown again (its edge statistics stay): a descent there adds it anew."""
        n = self.nodes
        keep = self.kern.reachable(root, n, self.terminal, self.proven, self.count, min_count,
                                   self.size, self.child_base, self.child)
        number = np.cumsum(keep, dtype=np.int64) - 1
        number[~keep] = -1
        self.kern.compact(number, self.meta, self.state, self.outer, self.free,
                          self.terminal, self.proven, self.value, self.heur, self.count, self.rsum,
                          self.size, self.slot_base, self.slot_move, self.slot_visits,
                          self.slot_total, self.child_base, self.child, self.joint_visits,
                          self.joint_total, self.slot_rave)
        self.table.fill(-1)
        self.kern.rebuild_table(self.table, self.state, self.nodes)
        return int(number[root])


def _table_size(capacity: int) -> int:
    return 1 << max(4, (2 * capacity - 1).bit_length())


def _fill(name: str) -> int:
    """What a new entry of pool array ``name`` holds: -1 (unknown) for a child pointer."""
    return -1 if name == "child" else 0


def _resized(array: np.ndarray, length: int, fill: float) -> np.ndarray:
    """``array`` with ``length`` rows: its first rows, then ``fill``."""
    shape = (length,) + array.shape[1:]
    # zeros come as untouched pages, faulted in as the pool fills (a doubling's cost
    # is then the copy alone)
    out = np.zeros(shape, array.dtype) if fill == 0 else np.full(shape, fill, array.dtype)
    rows = min(length, len(array))
    out[:rows] = array[:rows]
    return out


class GraphSearch:
    """SM-MCTS over the array graph (see the module docstring); the search interface
    of :class:`~agent.search.mcts.AgentSearch` (``search``, ``critical``)."""

    batched = True

    def __init__(self, machine, config: AgentConfig, *, chance_roles: Sequence[int] = (),
                 role: int = 0, factor: Factor | None = None) -> None:
        """``factor``: search that factor's game alone (:mod:`gdl.reasoning.factors`):
        a role plays its moves in the factor where it has some, else one of its moves
        as a pass, and the other facts a move decides stand still
        (:func:`~gdl.reasoning.factors.moving_facts`)."""
        self.machine = machine
        self.agent = self.config = config
        kern = KERNELS.loaded
        if kern is None:
            raise GameError("the graph search's compiled kernels are not loaded")
        self.kern = kern
        self.bm = batch_machine_of(machine)
        self.chance_roles = tuple(chance_roles)
        self._rng = random.Random(config.seed)
        self.factor = factor
        keep = None
        if factor is not None:
            keep = moving_facts(self.bm, factor)
            self._base: int | None = None
            self.factor_moves = np.zeros(self.bm.n_moves, dtype=np.bool_)
            self.factor_moves[list(factor.moves)] = True
        # "grave": the playouts' moves feed the AMAF statistics
        self.grave = config.on("grave")
        self.playouts = BatchPlayouts(machine, config.playout_policy(record=self.grave),
                                      self.chance_roles, self._rng, keep=keep)
        if keep is not None:   # the facts that change in the factor's game, as an int state
            self._moving = unpack_int(self.playouts.keep)
        n_roles = len(machine.roles)
        root = machine.initial_state()
        widths = [len(machine.legal_moves(root, r)) for r in range(n_roles)]
        serial = config.on("serial")
        # "serial": where our role and one other choose at once, we choose first
        self.lead = role if serial else -1
        # the widest node yet (move slots, joint moves): what a round's new nodes may need
        self._widest = (sum(widths), math.prod(widths))
        self.graph = Graph(kern, self._capacity(*self._widest), n_roles, self.bm.n_words,
                           self.bm.outer_words, serial, self.grave)
        self._recycle_seconds = 0.1   # the last recycling's
        # seconds a byte a doubling of the slot or child pool adds takes, as last
        # measured; first the rate of breakthrough's 8 M slots (160 MB) when the new
        # pages were written too, 0.64 s (untouched zero pages since: 0.12 s)
        self._grow_rate = 4e-9
        self.chance = np.array([r in self.chance_roles for r in range(n_roles)], dtype=np.bool_)
        self.move_role = self.bm.move_role.astype(np.int64)
        self.role_max = np.array([np.nanmax(np.append(self.playouts.goal_scaled[r], 0.0))
                                  for r in range(n_roles)])
        self.rng = np.array([self._rng.randrange(1, 1 << 63)], dtype=np.uint64)
        self.mark = np.full(self.bm.n_moves, -1, dtype=np.int64)
        self.stamp = 0
        self.vmean = config.on("vmean")
        self.round_size = min(config.batch, self.playouts.chunk)
        self._paths = self._path_arrays(self.round_size)
        moves = self.bm.n_moves
        # "grave": a round's playout moves, and the kernels' scratch
        self._played = np.zeros((self.round_size if self.grave else 0, moves), dtype=np.bool_)
        self._amaf_scratch = (np.full(n_roles, -1, dtype=np.int64),
                              np.full(moves, -1, dtype=np.int64), np.zeros(moves, dtype=np.int64))
        self._seen = np.zeros(moves, dtype=np.bool_)
        self.role = role
        # "material" (agent.search.material): set by the agent on the start clock
        self._material: Material | None = None
        # UCB1's constant where one role chooses ("explore": set on the start clock)
        self.exploration = config.exploration
        self._seed_weight = 0.0

    @property
    def nodes(self) -> int:
        return self.graph.nodes

    @property
    def material(self) -> Material | None:
        return self._material

    @material.setter
    def material(self, found: Material | None) -> None:
        """The game's material; under ``minimax`` the nodes already in the pool are
        evaluated by it (new ones are as they come), under ``cutoff`` the playouts cut
        at ``AgentConfig.cutoff`` steps."""
        self._material = found
        # "cutoff": a cut playout is worth the logistic of the pieces ahead, not its goals
        # (breakthrough's say 0 to both roles until the end)
        cut = found is not None and self.agent.on("cutoff") and len(found.masks) == 2
        self.playouts.pieces = (*found.pieces(), PIECE_SCALE) if cut else None
        if self._alpha > 0:
            for low in range(0, self.graph.nodes, self.bm.state_chunk):
                self._evaluate(np.arange(low, min(low + self.bm.state_chunk, self.graph.nodes)))

    def _evaluate(self, nodes: np.ndarray) -> None:
        """``minimax``: the implicit minimax values of ``nodes`` start at their exact
        values, else at the material's evaluation."""
        g = self.graph
        g.heur[nodes] = np.where(g.terminal[nodes], g.value[nodes, 0],
                                 self._material.evaluate(g.state[nodes]))

    @property
    def _alpha(self) -> float:
        """``minimax``: the weight of a child's implicit minimax value in its move's
        mean, where the game has material to evaluate states by (else 0: off)."""
        on = self.material is not None and self.agent.on("minimax")
        return self.agent.minimax_weight if on else 0.0

    def _capacity(self, slots: float, joints: float) -> int:
        """The node pool for nodes of ``slots`` move slots and ``joints`` joint moves."""
        return Graph.capacity_for(self.agent.graph_nodes, len(self.machine.roles),
                                  self.bm.n_words, self.bm.outer_words, slots, joints,
                                  self.lead >= 0, self.grave)

    def _path_arrays(self, size: int) -> tuple[np.ndarray, ...]:
        roles = len(self.machine.roles)
        return (np.zeros((size, MAX_DEPTH), dtype=np.int64),
                np.zeros((size, MAX_DEPTH), dtype=np.int64),
                np.zeros((size, MAX_DEPTH, roles)), np.zeros(size, dtype=np.int64),
                np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64))

    # -- the search ---------------------------------------------------------------

    def search(self, state: Hashable, *, deadline: float | None = None,
               playouts: int | None = None, soft_deadline: float | None = None
               ) -> SearchResult:
        """Search from ``state`` (the engine's int state) until ``deadline``
        (``time.monotonic()``), ``playouts`` simulations or a proven root; with
        ``timing``, a clear decision stops at ``soft_deadline``."""
        if deadline is None and playouts is None:
            raise ValueError("search needs a deadline or a playout count")
        started = time.monotonic()
        graph = self.graph
        if not self.agent.on("reuse"):
            graph.meta[:3] = 0
            graph.table.fill(-1)
        root = self._root(self.in_factor(state))
        if graph.terminal[root]:
            raise GameError("search from a terminal state: there is no move to choose")
        if self.material is not None:
            self._seed_weight = self.material.weight(graph.state[root], self.role)
        soft = soft_deadline if self.agent.on("timing") else None
        done = recycled = 0
        recycling = True   # off for the rest of the move where recycling frees too little
        while not graph.proven[root] and (playouts is None or done < playouts):
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                break
            if soft is not None and now >= soft and not self.critical(root):
                break
            size = max(1, min(self.round_size, int(graph.count[root]) // 8))
            if playouts is not None:
                size = min(size, playouts - done)
            # (not in the last moments before the deadline, which it could pass)
            if (recycling and graph.lacks_room(size, *self._widest)
                    and (deadline is None or deadline - now > 4 * self._recycle_seconds)):
                root = graph.recycle(root)
                recycled += 1
                self._recycle_seconds = time.monotonic() - now
                # nodes exact or visited enough fill it: the pool stays full this move
                recycling = graph.nodes <= graph.capacity * 3 // 4
            # a doubling that could pass the deadline waits for the next move's first
            # round (which has the whole move before it: twice the margin here)
            grown = graph.growth(size, *self._widest)
            margin = grown * self._grow_rate * (1 if done == 0 else 2)
            if grown and deadline is not None and deadline - now < margin:
                break
            done += self._round(root, size, deadline)
        return self._result(root, done, time.monotonic() - started, deadline, recycled)

    def _root(self, state: Hashable) -> int:
        """The root's node: found, else added; the pool compacted first when over half
        full (the nodes the game has left behind are dropped)."""
        graph = self.graph
        packed = pack_ints([state], self.bm.n_words)
        node = self.kern.find(graph.table, graph.state, packed[0])
        if graph.nodes > graph.capacity // 2:
            n = graph.nodes
            # the nodes' mean widths so far size the pool (the root's were a guess)
            capacity = self._capacity(graph.meta[1] / n, graph.meta[2] / n)
            if node >= 0:
                node = graph.compact(node)
            else:
                graph.meta[:3] = 0
                graph.table.fill(-1)
            if capacity > graph.capacity * 5 // 4:
                graph.resize(capacity)
        if node < 0:
            node = self._add(packed, np.array([-1]), np.array([0]))[0]
        return int(node)

    def _round(self, root: int, size: int, deadline: float | None) -> int:
        """``size`` descents, their new nodes, playouts and backups; the simulations."""
        graph = g = self.graph
        path_node, path_joint, path_virtual, path_len, kind, leaf = self._paths
        self.kern.select(root, size, self.exploration, self.agent.simultaneous_exploration,
                         self.vmean, self.lead, self._alpha, g.heur, self.rng, self.chance,
                         g.terminal, g.proven,
                         g.count, g.rsum, g.size, g.slot_base, g.slot_visits, g.slot_total,
                         g.child_base, g.child, g.joint_visits, g.joint_total,
                         path_node, path_joint, path_virtual, path_len, kind, leaf,
                         g.slot_move, g.slot_rave, float(self.agent.grave_ref),
                         self.agent.grave_bias, *self._amaf_scratch)
        kind, leaf = kind[:size], leaf[:size]
        start = graph.state[leaf].copy()     # where each descent plays out from
        edges = np.flatnonzero(kind == self.kern.NEW_EDGE)
        if len(edges):
            joints = path_joint[edges, path_len[edges] - 1]
            rows = self._children(leaf[edges], joints)
            nodes = self._add(rows, leaf[edges], joints)
            start[edges] = rows
            if self.material is not None:
                self.kern.seed(edges, rows, nodes, self.material.masks, self._seed_weight,
                               REFERENCE_VISITS, self.chance, g.state, g.count, g.rsum, g.size,
                               g.slot_base, g.slot_visits, g.slot_total, path_node, path_joint,
                               path_len)
            known = nodes >= 0
            leaf[edges[known]] = nodes[known]
            kind[edges[known]] = np.where(
                graph.terminal[nodes[known]] | graph.proven[nodes[known]],
                self.kern.SETTLED, self.kern.PLAYOUT)
        settled = kind == self.kern.SETTLED
        rewards = graph.value[leaf].copy()
        played = self._played[:size]
        played[:] = False
        play = np.flatnonzero(~settled)
        if len(play):
            outcome = self.playouts.run_packed(start[play], deadline)
            if outcome is None:   # out of time: the pending visits are taken back
                self.kern.undo(size, self.vmean, self.lead, self.chance, path_node, path_joint,
                               path_virtual, path_len, g.count, g.size, g.slot_base,
                               g.slot_visits, g.slot_total, g.child_base, g.joint_visits,
                               g.joint_total)
                return 0
            rewards[play] = outcome[0]
            if self.grave:
                played[play] = outcome[1]
        self.kern.backup(size, rewards, settled, self.vmean, self.agent.on("solver"), self.lead,
                         self._alpha, g.heur, self.chance, self.role_max, self.move_role,
                         path_node, path_joint,
                         path_virtual, path_len, g.terminal, g.proven, g.value, g.rsum, g.size,
                         g.slot_base, g.slot_move, g.slot_total, g.child_base, g.child,
                         g.joint_total, self.playouts.mast.sums, self.playouts.mast.counts,
                         self.mark, self.stamp, g.slot_rave, played, self._seen)
        self.stamp += size
        self.playouts.mast.learned += size
        return size

    def _children(self, parents: np.ndarray, joints: np.ndarray) -> np.ndarray:
        """The packed states after joint move ``joints[i]`` at node ``parents[i]``."""
        g = self.graph
        sizes = g.size[parents].astype(np.int64)
        offsets = np.cumsum(sizes, axis=1) - sizes
        rest = joints.copy()
        moves: list[np.ndarray] = [np.empty(0)] * sizes.shape[1]
        for r in range(sizes.shape[1] - 1, -1, -1):
            index = rest % sizes[:, r]
            rest //= sizes[:, r]
            moves[r] = g.slot_move[g.slot_base[parents] + offsets[:, r] + index].astype(np.int64)
        parent = _Parents(g.free[parents], g.outer[parents])
        out = np.empty((len(parents), self.bm.n_words), dtype=np.uint64)
        chunk = self.bm.transition_chunk
        for low in range(0, len(parents), chunk):
            part = np.arange(low, min(low + chunk, len(parents)))
            out[part] = self.bm.next_states(parent, part, [m[part] for m in moves])
        if self.playouts.keep is not None:   # a factor's game: the other facts stand still
            out = keep_facts(out, g.state[parents], self.playouts.keep)
        return out

    def _add(self, rows: np.ndarray, parents: np.ndarray, joints: np.ndarray) -> np.ndarray:
        """The nodes of the packed states ``rows`` (-1 where the pool is full), new
        ones evaluated and filled; the parents' child pointers linked."""
        g = self.graph
        nodes = np.empty(len(rows), dtype=np.int64)
        new = np.empty(len(rows), dtype=np.bool_)
        self.kern.lookup(rows, parents, joints, g.meta, g.table, g.state, g.child_base, g.child,
                    nodes, new)
        fresh = nodes[new]
        chunk = self.bm.state_chunk
        for low in range(0, len(fresh), chunk):
            part = fresh[low:low + chunk]
            batch = self.bm.evaluate_states(g.state[part])
            g.outer[part, :batch.outer.shape[1]] = batch.outer
            g.free[part] = batch.next_free
            goals = self.playouts._goals(batch, np.arange(len(part)), terminal=True)
            legal = batch.legal if self.factor is None else self._in_factor(batch.legal)
            while not self.kern.fill(part, batch.terminal, legal, goals, self.move_role,
                                g.meta, g.terminal, g.proven, g.value, g.count, g.rsum, g.size,
                                g.slot_base, g.slot_move, g.slot_visits, g.slot_total,
                                g.child_base, g.child, g.joint_visits, g.joint_total,
                                g.slot_rave):
                began = time.monotonic()
                added = g.grow()
                self._grow_rate = (time.monotonic() - began) / max(added, 1)
            if self._alpha > 0:
                self._evaluate(part)
            sizes = g.size[part].astype(np.int64)
            self._widest = (max(self._widest[0], int(sizes.sum(axis=1).max())),
                            max(self._widest[1], int(sizes.prod(axis=1).max())))
        return nodes

    def _in_factor(self, legal: np.ndarray) -> np.ndarray:
        """``legal`` [n, moves] narrowed to the factor's game: a role's moves in the
        factor where it has some, else its first legal move (a pass: its other
        moves change nothing the factor's game keeps, so they are one child)."""
        out = np.zeros_like(legal)
        for columns in self.playouts.columns:
            mine = legal[:, columns]
            inside = mine & self.factor_moves[columns]
            has = inside.any(axis=1)
            out[np.ix_(has, columns)] = inside[has]
            rows = np.flatnonzero(~has & mine.any(axis=1))
            out[rows, columns[mine[rows].argmax(axis=1)]] = True
        return out

    # -- decisions ------------------------------------------------------------------

    def critical(self, root: int) -> bool:
        """As :meth:`AgentSearch.critical`: the decision may still change and matters."""
        for r in self._choosers(root):
            visits, totals = self.slots(root, r)
            if (visits == 0).any():
                return True
            means = totals / visits
            first, second = np.argsort(-visits, kind="stable")[:2]
            if means[second] > means[first]:
                return True
            if visits[second] >= 0.8 * visits[first] and means[first] - means[second] > CLOSE:
                return True
        return False

    def in_factor(self, state: Hashable) -> Hashable:
        """``state`` as this factor's game keeps it: the facts that stand still there as
        they stood at its first search, so that the roots of later moves are in the
        graph (the other boards' cells change between our moves on this one, and each
        move on it would start an empty tree); the whole game's search: ``state``."""
        if self.factor is None:
            return state
        if self._base is None:
            self._base = int(state)
        return (int(state) & self._moving) | (self._base & ~self._moving)

    def node_of(self, state: Hashable) -> int:
        """The node of the engine's state ``state`` (-1: not in the graph)."""
        return int(self.kern.find(self.graph.table, self.graph.state,
                             pack_ints([state], self.bm.n_words)[0]))

    def state_of(self, node: int) -> int:
        """The engine's state of ``node``."""
        return unpack_int(self.graph.state[node])

    def _choosers(self, node: int) -> list[int]:
        size = self.graph.size[node]
        return [r for r in range(len(size)) if size[r] > 1 and not self.chance[r]]

    def slots(self, node: int, role: int) -> tuple[np.ndarray, np.ndarray]:
        """The visits and reward totals of ``role``'s moves at ``node``."""
        g = self.graph
        start = int(g.slot_base[node] + g.size[node, :role].sum())
        stop = start + int(g.size[node, role])
        return g.slot_visits[start:stop].copy(), g.slot_total[start:stop].copy()

    def _moves(self, node: int, role: int) -> tuple[int, ...]:
        g = self.graph
        start = int(g.slot_base[node] + g.size[node, :role].sum())
        columns = g.slot_move[start:start + int(g.size[node, role])]
        return tuple(1 << int(c) for c in columns)

    def _result(self, root: int, playouts: int, elapsed: float, deadline: float | None,
                recycled: int) -> SearchResult:
        g = self.graph
        roles = len(self.machine.roles)
        moves, strategies, visits, means = [], [], [], []
        for r in range(roles):
            moves.append(self._moves(root, r))
            v, t = self.slots(root, r)
            visits.append(v)
            with np.errstate(invalid="ignore", divide="ignore"):
                means.append(np.where(v > 0, 100.0 * t / v, np.nan))
            strategies.append(v / v.sum() if v.sum() > 0 else np.full(len(v), 1.0 / len(v)))
        proven = bool(g.proven[root])
        if proven:
            value = g.value[root] * 100.0
            self._proven_strategies(root, strategies, visits, deadline)
        elif g.count[root]:
            value = g.rsum[root] / g.count[root] * 100.0
        else:
            value = np.full(roles, np.nan)
        return SearchResult(tuple(moves), tuple(strategies), value, proven, playouts, elapsed,
                            g.nodes, tuple(visits), tuple(means), recycled)

    def _proven_strategies(self, root: int, strategies: list, visits: list,
                           deadline: float | None) -> None:
        """At a proven root: each chooser's strategy of the proof. One chooser: of the
        moves keeping the exact value, the quickest proof of a win or the longest of a
        loss (:meth:`_hurry`), then the most visited; two: the matrix game's
        equilibrium (:func:`solvers.search.matrix_game.solve_matrix_game`)."""
        g = self.graph
        choosers = self._choosers(root)
        size = g.size[root].astype(np.int64)
        children = self._child_nodes(root)
        if self._chance_chooses(root) or not choosers:
            return
        shape = tuple(int(s) for s in size)
        exact = np.full(shape + (len(size),), np.nan)
        for j, c in enumerate(children.tolist()):
            if c >= 0 and (g.terminal[c] or g.proven[c]):
                exact[np.unravel_index(j, shape)] = g.value[c]
        target = g.value[root]
        if len(choosers) == 1:
            r = choosers[0]
            values = exact.reshape(-1, len(size))[:, r]
            keep = [i for i in range(shape[r])
                    if values[i] >= target[r] - 1e-9]
            if keep:
                hurry = self._hurry(root, r, [int(children[i]) for i in keep], deadline)
                best = min(keep, key=lambda i: (hurry.get(int(children[i]), 0.0),
                                                -visits[r][i]))
                strategies[r] = np.eye(shape[r])[best]
            return
        x, y, _ = solve_matrix_game(exact[..., 0])
        strategies[0], strategies[1] = x, y

    def _chance_chooses(self, node: int) -> bool:
        return bool((self.chance & (self.graph.size[node] > 1)).any())

    def _child_nodes(self, node: int) -> np.ndarray:
        """``node``'s children by joint move (-1: not in the graph)."""
        g = self.graph
        joints = int(np.prod(g.size[node].astype(np.int64)))
        return g.child[g.child_base[node]:g.child_base[node] + joints]

    def _hurry(self, root: int, me: int, children: list[int], deadline: float | None
               ) -> dict[int, float]:
        """Sort keys of a proven root's value-keeping children (lower first) by the
        length of their proofs: a win the shortest, a loss the longest (a race between
        factors, or an opponent that errs, turns on it; the visits alone chose
        dawdling wins). Empty at an even value or when the proofs are too big."""
        value = self.graph.value[root, me]
        if abs(value - 0.5) < 1e-9:
            return {}
        winning = bool(value > 0.5)
        memo: dict[int, float] = {}
        lengths = {c: self._proof_length(c, me, winning, memo, deadline) for c in children}
        if None in lengths.values():
            return {}
        return {c: length if winning else -length for c, length in lengths.items()}

    def _proof_length(self, node: int, me: int, winning: bool, memo: dict[int, float],
                      deadline: float | None) -> float | None:
        """Plies from exact ``node`` to the end when the side its value favours
        (``me`` if ``winning``) hurries and the other delays, each keeping the value;
        where several roles choose, or chance does, the length worst for ``me``. inf
        where the proof loops; None past :data:`PROOF_NODES` nodes in ``memo`` or
        ``deadline`` (the move is due: its proven root answers at once)."""
        g = self.graph
        stack, steps = [node], 0
        waiting: dict[int, list[int]] = {}   # a pending node's exact children
        while stack:
            steps += 1
            if len(memo) > PROOF_NODES or (
                    steps & 0xFF == 0 and deadline is not None and time.monotonic() > deadline):
                return None
            n = stack[-1]
            if g.terminal[n]:
                memo[n] = 0.0
            if memo.get(n, PENDING) != PENDING:
                stack.pop()
                continue
            if n not in memo:
                memo[n] = PENDING
                waiting[n] = [int(c) for c in self._child_nodes(n)
                              if c >= 0 and (g.terminal[c] or g.proven[c])]
                stack.extend(c for c in waiting[n] if c not in memo)
                continue
            stack.pop()
            kids = waiting.pop(n)
            choosers = self._choosers(n)
            if len(choosers) == 1 and not self._chance_chooses(n):
                c = choosers[0]
                kids = [k for k in kids if g.value[k, c] >= g.value[n, c] - 1e-9]
                shortest = (c == me) == winning
            else:
                shortest = not winning
            lengths = [math.inf if memo[k] == PENDING else memo[k] for k in kids]
            memo[n] = 1.0 + ((min if shortest else max)(lengths) if lengths else math.inf)
        return memo.get(node, math.inf)


def make_search(machine, config: AgentConfig, chance_roles: Sequence[int] = (),
                role: int = 0):  # -> GraphSearch | AgentSearch
    """The graph search when ``graph`` is on, it applies (module docstring) and its
    compiled kernels are in (:data:`KERNELS`), else :class:`AgentSearch`. ``role``:
    the searching player's (``serial`` lets it choose first)."""
    if (config.on("graph") and config.simultaneous == "duct"
            and not any(config.on(e) for e in UNSUPPORTED)
            and getattr(machine, "engine_name", "") == "compiled"):
        try:
            return GraphSearch(machine, config, chance_roles=chance_roles, role=role)
        except GameError:   # kernels not in, or LimitReached: no move network
            pass
    return AgentSearch(machine, config, chance_roles=chance_roles)
