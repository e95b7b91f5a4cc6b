"""Batched evaluation of a grounded GDL game with numpy: many states at once.

A :class:`BatchMachine` is built from a :class:`~gdl.reasoning.compile.CompiledMachine` (the
ground program of :mod:`gdl.reasoning.ground`) and answers the state machine's queries for a
whole batch of states, or of (state, joint move) transitions, in a few numpy calls.

States are packed bit vectors: ``uint64`` rows of ``n_words`` words where bit ``i``
(word ``i // 64``, bit ``i % 64``) is the compiled engine's fact ``i``, so a packed
state and the engine's ``int`` state convert into each other with
:func:`pack_ints` / :func:`unpack_int` (the per-state engine tests this one).

Algorithm (bit-sliced evaluation of the rule network):

1. Two networks of ground rules over atom ids. The *state network* holds the
   rules that do not depend on moves (views, ``legal``, ``goal``, ``terminal`` and
   the ``next`` rules without ``does``), the compiled engine's own. The *move
   network* holds the move-dependent rules (``next`` rules that mention ``does``
   and their helpers), ground once over the reachable domain with the ``does``
   literals kept as atoms, so one network serves every joint move (the per-state
   engine grounds per move or per joint move instead); move arguments a rule does
   not read are projected out first (:mod:`gdl.reasoning.move_projection`).
2. Each network is cut to the cone of its targets and ordered: strongly connected
   groups of atoms in dependency order, each given a level (1 + the highest level
   it depends on; atoms without rules are the leaves, level 0). Atoms of one level
   form one *layer*; a recursive group is a layer of its own, iterated from
   all-false to its fixpoint.
3. Bit slicing: every atom is a row of ``uint64`` words over the batch, 64 states
   (or transitions) per word; row 0 is constant false, row 1 constant true, then
   the leaves, then the derived atoms. A layer is evaluated in four calls: gather
   its rules' literal rows (fancy indexing), complement the negative ones (XOR
   with all-ones), AND-reduce each body (``np.bitwise_and.reduceat`` over the
   literals, grouped by body) and OR-reduce the bodies of each head
   (``np.bitwise_or.reduceat``, bodies sorted by head).
4. A batch of states: the packed states are transposed into fact rows
   (64 x 64 bit-block transposes), the state network is evaluated, and ``terminal``,
   ``legal(r, m)``, ``goal(r, v)``, the move-free ``next`` facts and the state atoms
   the move network reads are read out per state (transposed back).
5. A batch of transitions (state, joint move): the move network's leaves are the
   ``does`` atoms (set from the joint moves) and the state atoms of step 4, copied
   from each transition's state; the next state is the move network's ``next``
   rows OR the state's move-free ``next`` facts, transposed into packed vectors.

With the compiled kernels (:mod:`gdl.reasoning.kernels` decides, :mod:`gdl.reasoning.batch_kernels`
has them) the transposes and each network's layers run as compiled loops with
the same results, and :meth:`BatchMachine.chunk_next_states` enumerates joint
moves straight into the move network's leaves.

Callers chunk their batches (:attr:`BatchMachine.state_chunk`,
:attr:`BatchMachine.transition_chunk`, sized from the networks so that one batch's
rows stay within about :data:`ROW_BYTES`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from gdl.budget import Budget
from gdl.reasoning import kernels
from gdl.reasoning.compile import CompiledMachine
from gdl.reasoning.ground import Value, sccs
from gdl.reasoning.move_projection import ground_move_rules
from solvers.errors import GameRuntimeError

Bodies = list[tuple[tuple[int, ...], tuple[int, ...]]]
MOVE_GROUNDING_STEPS = 2_000_000   # join steps to ground the move network
ROW_BYTES = 48 * 2**20             # target size of one network's rows per batch
ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
FALSE_ROW, TRUE_ROW = 0, 1


@dataclass(frozen=True)
class _Layer:
    """Rules of atoms that do not depend on each other (step 3's four calls)."""

    literal_rows: np.ndarray    # [L] rows of the literals, body by body
    negate: np.ndarray          # [L] uint64 all-ones for negative literals, else 0
    any_negative: bool
    body_start: np.ndarray      # [B] first literal of each body
    head_start: np.ndarray      # [H] first body of each head
    head_rows: np.ndarray       # [H] rows written
    recursive: bool             # iterate to the fixpoint


class Network:
    """A cone of ground rules compiled into layers (steps 2-3)."""

    def __init__(self, rules: Mapping[int, Bodies], targets: Sequence[int]) -> None:
        derived: list[int] = []
        leaves: list[int] = []
        edges: dict[int, set[int]] = {}
        seen: set[int] = set()
        stack = list(dict.fromkeys(targets))
        while stack:
            atom = stack.pop()
            if atom in seen:
                continue
            seen.add(atom)
            if atom not in rules:
                leaves.append(atom)
                continue
            derived.append(atom)
            deps = {d for pos, neg in rules[atom] for d in (*pos, *neg)}
            edges[atom] = {d for d in deps if d in rules}
            stack.extend(deps - seen)
        self.leaves = sorted(leaves)
        self.row: dict[int, int] = {a: 2 + i for i, a in enumerate(self.leaves)}
        components = sccs(sorted(derived), edges) if derived else []
        level: dict[int, int] = {}
        grouped: dict[int, list[int]] = {}
        recursive: list[tuple[int, list[int]]] = []
        for comp in components:
            members = set(comp)
            depth = 1 + max((level[d] for a in comp for d in edges[a] if d not in members),
                            default=0)
            for a in comp:
                level[a] = depth
            if len(comp) > 1 or comp[0] in edges[comp[0]]:
                recursive.append((depth, sorted(comp)))
            else:
                grouped.setdefault(depth, []).append(comp[0])
        order: list[tuple[int, bool, list[int]]] = [(d, False, sorted(a)) for d, a in grouped.items()]
        order += [(d, True, comp) for d, comp in recursive]
        order.sort(key=lambda item: (item[0], item[1]))
        for _, _, atoms in order:
            for a in atoms:
                self.row[a] = len(self.row) + 2
        self.n_rows = len(self.row) + 2
        self.layers = [self._layer(rules, atoms, rec) for _, rec, atoms in order]
        self._flat = _flatten(self.layers)

    def _layer(self, rules: Mapping[int, Bodies], atoms: list[int], recursive: bool) -> _Layer:
        rows: list[int] = []
        negate: list[bool] = []
        body_start: list[int] = []
        head_start: list[int] = []
        for atom in atoms:
            head_start.append(len(body_start))
            for pos, neg in rules[atom]:
                body_start.append(len(rows))
                rows += [self.row[a] for a in pos] + [self.row[a] for a in neg]
                negate += [False] * len(pos) + [True] * len(neg)
                if not pos and not neg:
                    rows.append(TRUE_ROW)
                    negate.append(False)
        flags = np.array(negate, dtype=bool)
        return _Layer(np.array(rows, dtype=np.int64),
                      np.where(flags, ALL_ONES, np.uint64(0)).astype(np.uint64),
                      bool(flags.any()), np.array(body_start, dtype=np.int64),
                      np.array(head_start, dtype=np.int64),
                      np.array([self.row[a] for a in atoms], dtype=np.int64), recursive)

    def evaluate(self, leaf_rows: np.ndarray) -> np.ndarray:
        """[n_rows, W] rows of every atom given the leaves' rows ``[len(leaves), W]``."""
        words = leaf_rows.shape[1]
        rows = np.zeros((self.n_rows, words), dtype=np.uint64)
        rows[TRUE_ROW] = ALL_ONES
        rows[2:2 + len(self.leaves)] = leaf_rows
        compiled = kernels.compiled(words * 64)
        if compiled is not None:
            compiled.evaluate_network(rows, *self._flat)
            return rows
        for layer in self.layers:
            if not layer.recursive:
                rows[layer.head_rows] = _apply(layer, rows)
                continue
            for _ in range(len(layer.head_rows) + 1):  # Jacobi from all-false
                heads = _apply(layer, rows)
                if np.array_equal(heads, rows[layer.head_rows]):
                    break
                rows[layer.head_rows] = heads
        return rows


def rules_of(network: Network) -> dict[int, Bodies]:
    """The ground rules of a network, read back from its layers (atom ids)."""
    atom_of = np.zeros(network.n_rows, dtype=np.int64)
    for atom, row in network.row.items():
        atom_of[row] = atom
    rules: dict[int, Bodies] = {}
    for layer in network.layers:
        atoms = atom_of[layer.literal_rows].tolist()
        keep = (layer.literal_rows != TRUE_ROW).tolist()
        negated = layer.negate.astype(bool).tolist()
        bounds = [*layer.body_start.tolist(), len(atoms)]
        head_bounds = [*layer.head_start.tolist(), len(bounds) - 1]
        heads = atom_of[layer.head_rows].tolist()
        for h, head in enumerate(heads):
            bodies: Bodies = []
            for b in range(head_bounds[h], head_bounds[h + 1]):
                part = range(bounds[b], bounds[b + 1])
                bodies.append((tuple(atoms[k] for k in part if keep[k] and not negated[k]),
                               tuple(atoms[k] for k in part if negated[k])))
            rules[head] = bodies
    return rules


def _flatten(layers: list[_Layer]) -> tuple[np.ndarray, ...]:
    """The layers as the flat arrays of :func:`gdl.reasoning.batch_kernels.evaluate_network`."""
    literals = np.cumsum([0] + [len(x.literal_rows) for x in layers])
    bodies = np.cumsum([0] + [len(x.body_start) for x in layers])
    heads = np.cumsum([0] + [len(x.head_rows) for x in layers])

    def joined(parts: list[np.ndarray], dtype: type = np.int64) -> np.ndarray:
        return np.concatenate(parts).astype(dtype) if parts else np.empty(0, dtype=dtype)

    return (joined([x.literal_rows for x in layers]), joined([x.negate for x in layers], np.uint64),
            np.append(joined([x.body_start + o for x, o in zip(layers, literals, strict=False)]),
                      literals[-1]),
            np.append(joined([x.head_start + o for x, o in zip(layers, bodies, strict=False)]),
                      bodies[-1]),
            joined([x.head_rows for x in layers]), heads.astype(np.int64),
            np.array([x.recursive for x in layers], dtype=np.bool_))


def _apply(layer: _Layer, rows: np.ndarray) -> np.ndarray:
    gathered = rows[layer.literal_rows]
    if layer.any_negative:
        gathered ^= layer.negate[:, None]
    bodies = np.bitwise_and.reduceat(gathered, layer.body_start, axis=0)
    return np.bitwise_or.reduceat(bodies, layer.head_start, axis=0)


# ------------------------------------------------------------------ bit matrices

_SWAP_MASKS = tuple((np.uint64(k), np.uint64(sum(1 << b for b in range(64) if not b & k)))
                    for k in (32, 16, 8, 4, 2, 1))


def transpose_bits(matrix: np.ndarray) -> np.ndarray:
    """The transpose of a bit matrix: [R, C / 64] uint64 rows (R a multiple of 64)
    -> [C, R / 64] (items: the longer side in bits)."""
    compiled = kernels.compiled(max(matrix.shape[0], matrix.shape[1] * 64))
    if compiled is not None:
        return compiled.transpose_bits(np.ascontiguousarray(matrix))
    return _transpose_numpy(matrix)


def _transpose_numpy(matrix: np.ndarray) -> np.ndarray:
    """Each block of 64 x 64 bits (64 words) is transposed in place
    by six delta swaps (words ``i`` and ``i + k`` exchange the bits ``j + k`` /
    ``j`` their halves disagree on, for k = 32 ... 1), vectorised over all blocks;
    several times faster than unpacking to bools and transposing those."""
    r, w = matrix.shape
    blocks = r // 64
    x = np.ascontiguousarray(np.asarray(matrix).reshape(blocks, 64, w).transpose(0, 2, 1))
    for shift, mask in _SWAP_MASKS:
        k = int(shift)
        pairs = x.reshape(blocks, w, 32 // k, 2, k)
        low, high = pairs[..., 0, :], pairs[..., 1, :]
        t = ((low >> shift) ^ high) & mask
        high ^= t
        low ^= t << shift
    return np.ascontiguousarray(x.transpose(1, 2, 0)).reshape(w * 64, blocks)


def rows_to_packed(rows: np.ndarray, n: int) -> np.ndarray:
    """[k, W] bit-sliced rows -> [n, ceil(k / 64)] packed per item."""
    k = len(rows)
    full = np.zeros((max(64, padded(k)), rows.shape[1]), dtype=np.uint64)
    full[:k] = rows
    return transpose_bits(full)[:n]


def packed_to_bits(packed: np.ndarray, k: int) -> np.ndarray:
    """[n, w] packed -> [n, k] bool (the first k bits of each item)."""
    return np.unpackbits(np.ascontiguousarray(packed).view(np.uint8), axis=1,
                         bitorder="little", count=k).view(bool)


def padded(n: int) -> int:
    return max(64, (n + 63) // 64 * 64)


def pack_ints(states: Sequence[int], n_words: int) -> np.ndarray:
    """Engine ``int`` states -> [n, n_words] uint64 packed vectors."""
    data = b"".join(s.to_bytes(8 * n_words, "little") for s in states)
    return np.frombuffer(data, dtype="<u8").reshape(len(states), n_words).astype(np.uint64)


def unpack_int(vector: np.ndarray) -> int:
    """One packed vector -> the engine's ``int`` state."""
    return int.from_bytes(np.ascontiguousarray(vector, dtype="<u8").tobytes(), "little")


# ------------------------------------------------------------------- the machine


@dataclass
class StateBatch:
    """Step 4's read-out for ``n`` states (bool arrays, one row per state)."""

    terminal: np.ndarray        # [n] bool
    legal: np.ndarray           # [n, n_moves] bool, in the engine's move bit order
    legal_packed: np.ndarray    # the same packed, [n, ceil(n_moves / 64)] uint64
    goal: np.ndarray            # [n, n_goals] bool, in the engine's goal atom order
    next_free: np.ndarray       # [n, n_words] packed: the move-free ``next`` facts
    outer: np.ndarray           # [n, ceil(n_outer / 64)] packed: state atoms the move
    #                             network reads


class BatchMachine:
    """The batched queries of a compiled game (see the module docstring).

    Raises :class:`~solvers.errors.LimitReached` when the move network does not
    ground within :data:`MOVE_GROUNDING_STEPS` join steps (callers then expand
    state by state).
    """

    def __init__(self, machine: CompiledMachine, seconds: float | None = None) -> None:
        """``seconds`` bounds the move rules' grounding (LimitReached past it), the
        seconds of the build on bigger games (knightThrough: 1.5 s, more on a loaded
        machine, where it ran a start clock's pre-solve 5 s past its time)."""
        self.machine = machine
        self.roles = machine.roles
        self.n_facts = len(machine._facts)
        self.n_words = max(1, (self.n_facts + 63) // 64)
        moves = list(machine._move_atoms)
        self.n_moves = len(moves)
        role_index = machine._role_index
        self.move_role = np.array([role_index[a[1]] for a in moves], dtype=np.int64)
        goal_atoms = machine._goal_atoms
        self.goal_role = np.array([role_index[a[1]] for a in goal_atoms], dtype=np.int64)
        self.goal_value = np.array([_goal_number(a) for a in goal_atoms], dtype=np.float64)
        self.goal_text = [str(a[2]) for a in goal_atoms]
        ids = dict(machine._atom_ids)

        def atom(value: Value) -> int:
            return ids.setdefault(value, len(ids))

        state_rules: Mapping[int, Bodies] = machine._state_rules
        self._legal_atoms = [atom(("legal", a[1], a[2])) for a in moves]
        self._goal_atoms = [atom(a) for a in goal_atoms]
        self._terminal_atom = atom("terminal")
        self._next_atoms = [atom(("next", f)) for f in machine._facts]
        self._does_atoms = [atom(a) for a in moves]

        limits = Budget(max_steps=MOVE_GROUNDING_STEPS)
        if seconds is not None:
            limits.max_seconds = seconds
        move_ground = ground_move_rules(machine._game, limits)
        move_rules: dict[int, Bodies] = {}
        for g in move_ground:
            body = (tuple(atom(a) for a in g.pos), tuple(atom(a) for a in g.neg))
            move_rules.setdefault(atom(g.head), []).append(body)
        self.move_net = Network(move_rules, [a for a in self._next_atoms if a in move_rules])
        does_set = set(self._does_atoms)
        self._outer_atoms = [a for a in self.move_net.leaves if a not in does_set]
        # A transition's leaves as one packed vector: the outer atoms in bits
        # 0.., then from word ``outer_words`` the does atoms the network reads.
        self.outer_words = (len(self._outer_atoms) + 63) // 64
        used_does = [a for a in self._does_atoms if a in self.move_net.row]
        self.leaf_words = self.outer_words + (len(used_does) + 63) // 64
        self._leaf_width = max(self.leaf_words, self.outer_words + 1)  # a word for does bits
        bit = {a: i for i, a in enumerate(self._outer_atoms)}
        bit.update({a: self.outer_words * 64 + i for i, a in enumerate(used_does)})
        self._leaf_bit = np.array([bit[a] for a in self.move_net.leaves], dtype=np.int64)
        # per move: the word of the leaf vector its does bit is in and the bit as a
        # mask; a move no rule reads sets nothing (mask 0)
        does_bit = np.array([bit.get(a, -1) for a in self._does_atoms], dtype=np.int64)
        self._does_word = np.where(does_bit >= 0, does_bit // 64, self.outer_words)
        self._does_mask = np.where(does_bit >= 0, np.left_shift(
            np.uint64(1), (does_bit % 64).astype(np.uint64)), np.uint64(0)).astype(np.uint64)
        self._move_next_facts = np.array([i for i, a in enumerate(self._next_atoms)
                                          if a in move_rules], dtype=np.int64)
        self._move_next_rows = np.array([self.move_net.row[a] for a in self._next_atoms
                                         if a in move_rules], dtype=np.int64)

        free_next = [a for a in self._next_atoms if a in state_rules]
        targets = (self._legal_atoms + self._goal_atoms + [self._terminal_atom]
                   + free_next + self._outer_atoms)
        self.state_net = Network(state_rules, targets)
        true_bits = machine._true_bits
        self._state_leaf_fact = np.array([true_bits.get(a, -1) for a in self.state_net.leaves],
                                         dtype=np.int64)
        row = self.state_net.row
        self._legal_rows = np.array([row.get(a, FALSE_ROW) for a in self._legal_atoms], dtype=np.int64)
        self._goal_rows = np.array([row.get(a, FALSE_ROW) for a in self._goal_atoms], dtype=np.int64)
        self._terminal_row = row.get(self._terminal_atom, FALSE_ROW)
        self._free_next_rows = np.array([row.get(a, FALSE_ROW) for a in self._next_atoms],
                                        dtype=np.int64)
        self._outer_rows = np.array([row.get(a, FALSE_ROW) for a in self._outer_atoms],
                                    dtype=np.int64)
        self._leaf_buffer = self._child_buffer = np.empty((0, 1), dtype=np.uint64)
        self.state_chunk = _chunk(self.state_net.n_rows)
        self.transition_chunk = _chunk(self.move_net.n_rows + self.n_facts)

    # -- conversions
    def initial_state(self) -> np.ndarray:
        return pack_ints([self.machine.initial_state()], self.n_words)[0]

    # -- step 4
    def evaluate_states(self, packed: np.ndarray) -> StateBatch:
        """Terminal, legal, goals and what transitions need, for [n, n_words] states
        (at most :attr:`state_chunk` of them)."""
        n = len(packed)
        states = np.zeros((padded(n), self.n_words), dtype=np.uint64)
        states[:n] = packed
        fact_rows = transpose_bits(states)
        leaf = self._state_leaf_fact
        leaf_rows = np.zeros((len(leaf), len(fact_rows[0])), dtype=np.uint64)
        known = leaf >= 0
        leaf_rows[known] = fact_rows[leaf[known]]
        rows = self.state_net.evaluate(leaf_rows)
        legal = rows_to_packed(rows[self._legal_rows], n)
        return StateBatch(
            terminal=packed_to_bits(rows_to_packed(rows[[self._terminal_row]], n), 1)[:, 0],
            legal=packed_to_bits(legal, self.n_moves), legal_packed=legal,
            goal=packed_to_bits(rows_to_packed(rows[self._goal_rows], n), len(self._goal_rows)),
            next_free=np.ascontiguousarray(rows_to_packed(rows[self._free_next_rows], n)
                                           [:, :self.n_words]),
            outer=np.ascontiguousarray(rows_to_packed(rows[self._outer_rows], n)
                                       [:, :self.outer_words]))

    # -- step 5
    def next_states(self, batch: StateBatch, parent: np.ndarray,
                    moves: Sequence[np.ndarray]) -> np.ndarray:
        """[T, n_words] packed next states of the transitions (``parent[t]``, a row of
        ``batch``, with the move bits ``moves[r][t]``, one array per role or slot)."""
        t = len(parent)
        children = batch.next_free[parent]
        if not len(self._move_next_rows):
            return children
        leaves = self._leaves(t)
        leaves[:t, :self.outer_words] = batch.outer[parent]
        if self.leaf_words - self.outer_words <= 1:  # one word of moves: OR the masks
            for move in moves:
                leaves[:t, self.outer_words] |= self._does_mask[move]
        else:
            columns = np.arange(t)
            for move in moves:
                leaves[columns, self._does_word[move]] |= self._does_mask[move]
        return self._add_move_facts(leaves, children)

    def chunk_next_states(self, compiled: ModuleType, batch: StateBatch, counts: np.ndarray,
                          low: int, high: int, total: int, legal: np.ndarray,
                          start: np.ndarray) -> np.ndarray:
        """:meth:`next_states` of the ``total`` joint moves of batch rows ``low:high``
        in the expansion's order, enumerated by the compiled
        :func:`~gdl.reasoning.batch_kernels.chunk_transitions` (``counts``, ``legal``,
        ``start``: as there). The result is a buffer reused by the next call."""
        width = padded(total)
        if len(self._leaf_buffer) < width:  # reused: fresh pages cost more than the loop
            self._leaf_buffer = np.empty((width, self._leaf_width), dtype=np.uint64)
            self._child_buffer = np.empty((width, self.n_words), dtype=np.uint64)
        leaves, children = self._leaf_buffer[:width], self._child_buffer[:total]
        compiled.chunk_transitions(counts, low, high, legal, start, batch.outer,
                                   batch.next_free, self._does_word, self._does_mask, leaves,
                                   children)
        if not len(self._move_next_rows):
            return children
        return self._add_move_facts(leaves, children)

    def _leaves(self, t: int) -> np.ndarray:
        """Zero packed leaves for ``t`` transitions (padded to a multiple of 64)."""
        return np.zeros((padded(t), self._leaf_width), dtype=np.uint64)

    def _add_move_facts(self, leaves: np.ndarray, children: np.ndarray) -> np.ndarray:
        """``children`` OR the ``next`` facts the move network derives from ``leaves``."""
        rows = self.move_net.evaluate(transpose_bits(leaves)[self._leaf_bit])
        facts = np.zeros((self.n_words * 64, len(leaves) // 64), dtype=np.uint64)
        facts[self._move_next_facts] = rows[self._move_next_rows]
        children |= transpose_bits(facts)[:len(children)]
        return children

    # -- helpers for the expansion
    def role_moves(self, role: int) -> np.ndarray:
        """The move bits of a role, ascending (the engine's legal move order)."""
        return np.flatnonzero(self.move_role == role)

    def goals_of(self, batch: StateBatch, rows: np.ndarray, role: int,
                 states: Sequence[int]) -> np.ndarray:
        """[len(rows)] goal values of ``role`` at the given batch rows; exactly one
        value each, as the engine requires (``states`` name them in the error)."""
        columns = np.flatnonzero(self.goal_role == role)
        held = batch.goal[np.ix_(rows, columns)]
        counts = held.sum(axis=1)
        bad = np.flatnonzero(counts != 1)
        if len(bad):
            state = self.machine.describe(states[bad[0]])
            raise GameRuntimeError(f"role {self.roles[role]} has {counts[bad[0]]} goal values "
                                   f"in state {state}")
        values = self.goal_value[columns]
        if np.isnan(values[held.argmax(axis=1)]).any():
            raise GameRuntimeError(f"role {self.roles[role]} has a non-numeric goal value")
        return values[held.argmax(axis=1)]


def _goal_number(atom: Value) -> float:
    value = atom[2]
    return float(value) if isinstance(value, str) and value.isdigit() else float("nan")


def _chunk(n_rows: int) -> int:
    """Batch size (a multiple of 64) whose bool leaves (a byte per atom and item,
    8 times the bit rows) take about :data:`ROW_BYTES`."""
    return max(64, min(1 << 17, ROW_BYTES // max(1, n_rows) // 64 * 64))


def batch_machine_of(machine: CompiledMachine, seconds: float | None = None) -> BatchMachine:
    """``machine``'s BatchMachine, built once and kept on it (the agent's batched
    playouts and its subgame expansions share it; the build grounds the move rules:
    knightThrough 1.5 s on a loaded machine), the grounding within ``seconds``
    (LimitReached past it, or when the move network does not ground)."""
    if machine.batch_machine is None:
        machine.batch_machine = BatchMachine(machine, seconds=seconds)
    return machine.batch_machine
