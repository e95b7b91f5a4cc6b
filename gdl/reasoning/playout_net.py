"""Whole random playouts of a grounded game in compiled code (no Python per step).

A :class:`PlayoutNet` is built from a :class:`~gdl.reasoning.batch_machine.BatchMachine`
(its state network and its move network of ground rules over atom ids, in layers)
and runs playouts with :func:`gdl.reasoning.playout_kernels.play`: many at once,
bit-sliced over lanes (64 playouts a ``uint64`` word), every step inside one
compiled loop (the kernels' docstring has the step). The same networks answer
given transitions (:meth:`PlayoutNet.step`: legal moves, terminal, goals, next
state), which the tests compare with the per-state engine.

The build:

1. One row space for both networks: the state network's rows as they are (row 0
   false, row 1 true, its leaves, its derived atoms), a row for each fact the state
   network does not read, then the move network's ``does`` leaves and derived
   atoms; the move network's other leaves (the state atoms it reads) are the state
   network's rows of those atoms, so nothing is copied between the two.
2. The move network is re-factored for playouts, where every role plays exactly
   one move: the bodies of a head that differ only in one *move literal* (a
   ``does`` atom, or an atom that is an OR of ``does`` atoms, such as the
   projections of :mod:`gdl.reasoning.move_projection`) become one body with a
   *move-set atom* ``D(S) = OR of does(m), m in S``, and ``D(S)`` is written per
   role ``r`` as the OR of its moves in ``S``, or, when shorter, as NOT the OR of
   the role's other moves (exactly one move of ``r`` is played). breakthrough's
   frame rule ``next(cell x y p) <= true(cell x y p), does(?r, move x1 y1 x2 y2),
   distinct cells`` has one body per (cell, move) pair: 76,804 literals in its move
   network; after: 1,420 (a cell stays unless one of the ~10 moves into or out of it
   is played). A group is rewritten only when that makes it shorter.
3. Each network becomes a stream of literals, a body's after another and a head's
   bodies after another, each entry with its row, its sign, whether it closes its
   body and its head, and its head's row (the kernels evaluate a layer without a
   branch: :func:`gdl.reasoning.playout_kernels._evaluate`).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gdl.reasoning.batch_machine import (
    ALL_ONES,
    FALSE_ROW,
    TRUE_ROW,
    BatchMachine,
    Bodies,
    Network,
    rules_of,
)
from gdl.reasoning.literal_stream import ROW_BITS
from gdl.reasoning.win_moves import winning_moves_of
from solvers.errors import LimitReached

MAX_WORDS = 8           # lanes of a playout call: at most 8 x 64
PLAYOUTS_PER_LANE = 1   # lanes for every playout of a call (up to MAX_WORDS words)
STEP_WORDS = 4          # words of lanes of the step mode


@dataclass
class PlayoutResult:
    """What :meth:`PlayoutNet.play` returns, one row per playout."""

    rewards: np.ndarray   # [K, roles] float: goals / 100 (see the kernel for ill-defined ones)
    played: np.ndarray    # [K, n_moves] bool when recorded, else [0, 0]
    steps: np.ndarray     # [K] int: joint moves played
    trace: np.ndarray     # [K, trace_steps, roles] int: the moves of the first steps
    work: int             # word-steps the kernel evaluated


@dataclass
class StepResult:
    """What :meth:`PlayoutNet.step` returns, one row per transition."""

    terminal: np.ndarray  # [T] bool
    legal: np.ndarray     # [T, n_moves] bool
    goal: np.ndarray      # [T, n_goals] bool (the BatchMachine's goal atom order)
    children: np.ndarray  # [T, n_words] uint64 packed next states


def factor_move_rules(rules: dict[int, Bodies], does_role: dict[int, int],
                      role_does: Sequence[Sequence[int]], first_id: int) -> dict[int, Bodies]:
    """Step 2: ``rules`` with the bodies that differ in one move literal grouped over a
    move-set atom (ids from ``first_id``). ``does_role``: each ``does`` atom's role;
    ``role_does[r]``: every ``does`` atom of role ``r`` (its complement is taken
    within them)."""
    move_sets: dict[int, frozenset[int] | None] = {a: frozenset((a,)) for a in does_role}

    def move_set(atom: int) -> frozenset[int] | None:
        """The does atoms ``atom`` is the OR of (None when it is not such an OR)."""
        if atom in move_sets:
            return move_sets[atom]
        move_sets[atom] = None   # (a cycle is not an OR of does atoms)
        bodies = rules.get(atom)
        found: set[int] = set()
        for pos, neg in bodies or [((), ())]:
            sub = move_set(pos[0]) if len(pos) == 1 and not neg else None
            if sub is None:
                return None
            found |= sub
        move_sets[atom] = frozenset(found)
        return move_sets[atom]

    out: dict[int, Bodies] = {}
    groups: dict[tuple[int, tuple[int, ...], tuple[int, ...]], list[int]] = {}
    for head, bodies in rules.items():
        for pos, neg in bodies:
            movers = [a for a in pos if move_set(a) is not None]
            if len(movers) == 1 and all(move_set(a) is None for a in neg):
                rest = tuple(a for a in pos if a != movers[0])
                groups.setdefault((head, rest, neg), []).append(movers[0])
            else:
                out.setdefault(head, []).append((pos, neg))
    made: dict[frozenset[int], int] = {}
    for (head, rest, neg), literals in groups.items():
        members = frozenset().union(*(move_set(a) for a in literals))
        by_role: dict[int, set[int]] = {}
        for a in members:
            by_role.setdefault(does_role[a], set()).add(a)
        sizes = {r: (len(s), len(role_does[r]) - len(s)) for r, s in by_role.items()}
        width = len(rest) + len(neg) + 1
        if len(literals) * width <= width + sum(min(s) for s in sizes.values()):
            for a in literals:
                out.setdefault(head, []).append((rest + (a,), neg))
            continue
        atom = made.get(members)
        if atom is None:
            atom = made[members] = first_id + len(made)
            bodies: Bodies = []
            for r in sorted(by_role):
                chosen = by_role[r]
                if sizes[r][1] < sizes[r][0]:   # NOT the role's other moves
                    bodies.append(((), tuple(sorted(m for m in role_does[r] if m not in chosen))))
                else:
                    bodies += [((m,), ()) for m in sorted(chosen)]
            out[atom] = bodies
        out.setdefault(head, []).append((rest + (atom,), neg))
    return out


def _flat(network: Network, row_map: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step 3: a network's layers as the kernels' literal stream (see
    :func:`gdl.reasoning.playout_kernels._evaluate`), rows through ``row_map``: the
    stream, each layer's first entry (and the end), each layer's recursion flag."""
    if network.n_rows and int(row_map.max(initial=0)) >= 1 << ROW_BITS:
        raise LimitReached(f"the playout network has over {1 << ROW_BITS} rows")
    parts: list[np.ndarray] = []
    layer_start = [0]
    for layer in network.layers:
        n, bodies = len(layer.literal_rows), len(layer.body_start)
        body_of = np.repeat(np.arange(bodies), np.diff(np.append(layer.body_start, n)))
        head_of = np.repeat(np.arange(len(layer.head_start)),
                            np.diff(np.append(layer.head_start, bodies)))
        body_end = np.zeros(n, dtype=bool)
        body_end[np.append(layer.body_start[1:], n) - 1] = True
        last_body = np.zeros(bodies, dtype=bool)
        last_body[np.append(layer.head_start[1:], bodies) - 1] = True
        head_end = body_end & last_body[body_of]
        entry = (row_map[layer.head_rows[head_of[body_of]]].astype(np.uint64) << np.uint64(32)
                 | row_map[layer.literal_rows].astype(np.uint64)
                 | (layer.negate != 0).astype(np.uint64) << np.uint64(ROW_BITS)
                 | body_end.astype(np.uint64) << np.uint64(ROW_BITS + 1)
                 | head_end.astype(np.uint64) << np.uint64(ROW_BITS + 2))
        parts.append(entry)
        layer_start.append(layer_start[-1] + n)
    stream = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)
    return (stream.astype(np.uint64), np.array(layer_start, dtype=np.int64),
            np.array([x.recursive for x in network.layers], dtype=np.bool_))


class PlayoutNet:
    """The compiled playouts of a BatchMachine's game (see the module docstring)."""

    def __init__(self, batch: BatchMachine) -> None:
        self.batch = batch
        self.roles = batch.roles
        self.n_moves = batch.n_moves
        self.n_words = batch.n_words
        n_facts = batch.n_facts
        true_bits = batch.machine._true_bits   # a `true` atom -> its fact
        # step 1: the step network (what a step reads: terminal, legal, the move-free
        # next facts, the atoms the move network reads), then facts it does not read
        rules = rules_of(batch.state_net)
        free_next = [a for a in batch._next_atoms if a in rules]
        step_net = Network(rules, [*batch._legal_atoms, batch._terminal_atom, *free_next,
                                   *batch._outer_atoms])
        fact_row = np.full(n_facts, -1, dtype=np.int64)
        for i, atom in enumerate(step_net.leaves):
            if atom in true_bits:
                fact_row[true_bits[atom]] = 2 + i
        n_rows = step_net.n_rows
        for f in np.flatnonzero(fact_row < 0):
            fact_row[f] = n_rows
            n_rows += 1
        # step 1b: the goal network, the rest of the goals' cone (reversi's piece
        # counts: 25,094 of its 30,598 literals), only at a step where a lane ends
        goal_net = Network({a: b for a, b in rules.items() if a not in step_net.row},
                           batch._goal_atoms)
        goal_map = np.zeros(goal_net.n_rows, dtype=np.int64)
        goal_map[TRUE_ROW] = TRUE_ROW
        for atom, row in goal_net.row.items():
            if atom in step_net.row:
                goal_map[row] = step_net.row[atom]
            elif atom in true_bits:
                goal_map[row] = fact_row[true_bits[atom]]
            elif row >= 2 + len(goal_net.leaves):   # derived
                goal_map[row] = n_rows
                n_rows += 1
            # (else a leaf that is no fact: false)
        # step 2: the move network, re-factored
        does_atoms = list(batch._does_atoms)
        does_role = {a: int(batch.move_role[i]) for i, a in enumerate(does_atoms)}
        role_does = [[a for i, a in enumerate(does_atoms) if batch.move_role[i] == r]
                     for r in range(len(self.roles))]
        move_rules = rules_of(batch.move_net)
        known = [*batch.move_net.row, *does_atoms, 0]
        factored = factor_move_rules(move_rules, does_role, role_does, max(known) + 1)
        next_atoms = batch._next_atoms
        move_net = Network(factored, [a for a in next_atoms if a in factored])
        row_map = np.zeros(move_net.n_rows, dtype=np.int64)
        row_map[TRUE_ROW] = TRUE_ROW
        does_row = np.full(self.n_moves, -1, dtype=np.int64)
        move_of = {a: i for i, a in enumerate(does_atoms)}
        does_rows = []
        for atom, row in move_net.row.items():
            if atom in move_of:
                row_map[row] = does_row[move_of[atom]] = n_rows
                does_rows.append(n_rows)
                n_rows += 1
            elif atom in factored:
                row_map[row] = n_rows
                n_rows += 1
            else:   # a state atom the move network reads: the step network has it
                row_map[row] = step_net.row[atom]
        self.n_rows = n_rows
        self.move_net = move_net
        self._state = _flat(step_net, np.arange(step_net.n_rows, dtype=np.int64))
        self._goal = _flat(goal_net, goal_map)
        self._move = _flat(move_net, row_map)

        def step_row(atom: int) -> int:
            return step_net.row.get(atom, FALSE_ROW)

        next_move = np.array([row_map[move_net.row[a]] if a in factored else FALSE_ROW
                              for a in next_atoms], dtype=np.int64)
        legal_row = np.array([step_row(a) for a in batch._legal_atoms], dtype=np.int64)
        # where fact_row sits in _net, the move-free and the move next rows after it
        self._fact_at = 1 + len(self._state) + len(self._goal) + len(self._move)
        self._net = (n_rows, *self._state, *self._goal, *self._move, fact_row,
                     np.array([step_row(a) if a in rules else FALSE_ROW for a in next_atoms],
                              dtype=np.int64), next_move,
                     step_row(batch._terminal_atom), legal_row,
                     does_row, np.array(does_rows, dtype=np.int64))
        self.role_moves = [batch.role_moves(r) for r in range(len(self.roles))]
        self._role_start = np.cumsum([0] + [len(m) for m in self.role_moves]).astype(np.int64)
        self._role_moves = (np.concatenate(self.role_moves).astype(np.int64) if self.n_moves
                            else np.zeros(0, dtype=np.int64))
        self._role_legal = legal_row[self._role_moves]   # each role's legal rows
        self._blocks = max([1] + [-(-len(m) // 64) for m in self.role_moves])
        self._goal_row = np.array([goal_map[goal_net.row[a]] for a in batch._goal_atoms],
                                  dtype=np.int64)
        self._goal_role = np.asarray(batch.goal_role, dtype=np.int64)
        # goal values in [0, 1] (a value that is not a number counts 0)
        self._goal_scaled = np.nan_to_num(batch.goal_value) / 100.0
        self._no_wins = self._move_bits(np.zeros(self.n_moves, dtype=np.bool_))
        # each move's place among its role's moves (the kernel's bans are bits of those)
        self._move_pos = np.zeros(self.n_moves, dtype=np.int64)
        for moves in self.role_moves:
            self._move_pos[moves] = np.arange(len(moves))
        self._wins: np.ndarray | None = None

    def frozen(self, keep: np.ndarray) -> PlayoutNet:
        """These playouts with the facts outside ``keep`` (a bool per fact) left as they
        are at every step: the game of one factor (:mod:`gdl.reasoning.factors`), the
        others standing still; a role's moves in them change nothing (passes)."""
        out = copy.copy(self)
        net = list(self._net)
        at = self._fact_at
        fact_row, next_free, next_move = net[at], net[at + 1].copy(), net[at + 2].copy()
        still = ~np.asarray(keep, dtype=np.bool_)
        next_free[still] = fact_row[still]   # next = the fact's own row, or false
        next_move[still] = FALSE_ROW
        net[at + 1], net[at + 2] = next_free, next_move
        out._net = tuple(net)
        return out

    @property
    def literals(self) -> tuple[int, int, int]:
        """Literals of the step, the move and the goal network (the first two: the
        work of every step)."""
        return len(self._state[0]), len(self._move[0]), len(self._goal[0])

    def play(self, packed: np.ndarray, *, limit: int, seed: int,
             chance: Sequence[int] = (), mode: int = 0, epsilon: float = 0.0,
             temperature: float = 1.0, values: np.ndarray | None = None,
             record: bool = False, trace_steps: int = 0, words: int | None = None,
             wins: bool = False, defend: bool = False,
             pieces: tuple[np.ndarray, np.ndarray, float] | None = None) -> PlayoutResult:
        """Playouts from the packed states ``[K, n_words]`` (see
        :func:`gdl.reasoning.playout_kernels.play`): ``mode`` 0 uniform, 1 MAST
        epsilon-greedy, 2 Gibbs over ``values`` (per move); ``record``: the moves
        played; ``trace_steps``: each playout's moves of its first steps; ``words``:
        lanes / 64 (default :func:`lane_words`); ``wins``: a role other than a chance
        role plays a move that wins by itself where one is legal
        (:mod:`gdl.reasoning.win_moves`); ``defend`` (and ``wins``): a role's choice
        after which another role has such a move is taken back and another tried
        (anti-decisive moves); ``pieces`` (two roles): the facts of the roles' pieces,
        the sign each counts with (+1 role 0's, -1 role 1's) and a scale: a playout cut
        at ``limit`` is worth the logistic of its pieces ahead / scale to role 0 (its
        goals otherwise)."""
        from gdl.reasoning import playout_kernels  # deferred: numba, when playouts run

        k, roles = len(packed), len(self.roles)
        flags = np.zeros(roles, dtype=np.bool_)
        flags[list(chance)] = True
        rewards = np.zeros((k, roles))
        played = np.zeros((k, self.n_moves) if record else (0, 0), dtype=np.bool_)
        steps = np.zeros(k, dtype=np.int64)
        trace = np.full((k, trace_steps, roles), -1, dtype=np.int64)
        values = (np.zeros(self.n_moves) if values is None
                  else np.ascontiguousarray(values, dtype=np.float64))
        weight = np.zeros(self.n_moves)
        if mode == 2:   # Gibbs weights against each role's best value
            for moves in self.role_moves:
                if len(moves):
                    weight[moves] = np.exp((values[moves] - values[moves].max()) / temperature)
        words = max(1, min(lane_words(k) if words is None else int(words), -(-k // 64)))
        n_facts = self.batch.n_facts if defend else 0   # rows for the states before
        rows = np.zeros((self.n_rows + n_facts, words), dtype=np.uint64)
        rows[TRUE_ROW] = ALL_ONES
        lane_ints = np.zeros((4 + 2 * roles, 64 * words), dtype=np.int64)
        lane_ints[0] = -1
        work = playout_kernels.play(
            *self._net, self._role_start, self._role_moves, self._role_legal, flags,
            self._goal_row, self._goal_role, self._goal_scaled,
            np.ascontiguousarray(packed, dtype=np.uint64), int(limit), int(mode),
            float(epsilon), float(temperature), values, weight,
            self._role_wins(flags) if wins or defend else self._no_wins, defend,
            np.arange(self.n_rows, self.n_rows + n_facts), self._move_pos,
            np.zeros((self._blocks, 64 * words), dtype=np.uint64), rows,
            np.zeros((7, words), dtype=np.uint64), np.zeros((self._blocks, 64), dtype=np.uint64),
            lane_ints, np.zeros((roles, 64 * words)),
            np.array([int(seed) & ((1 << 64) - 1)], dtype=np.uint64), rewards, played, steps,
            trace, *self._pieces(pieces))
        return PlayoutResult(rewards, played, steps, trace, int(work))

    def _pieces(self, pieces: tuple[np.ndarray, np.ndarray, float] | None
                ) -> tuple[np.ndarray, np.ndarray, float]:
        """The kernel's piece rows, their signs and the scale (no rows: none)."""
        if pieces is None:
            return np.zeros(0, dtype=np.int64), np.zeros(0), 1.0
        facts, sign, scale = pieces
        rows = self._net[self._fact_at][np.asarray(facts, dtype=np.int64)]
        return rows.astype(np.int64), np.asarray(sign, dtype=np.float64), float(scale)

    def _role_wins(self, chance: np.ndarray) -> np.ndarray:
        """The kernel's ``role_wins`` for the moves that win by themselves (none of a
        chance role's), found once."""
        if self._wins is None:
            self._wins = self._move_bits(winning_moves_of(self.batch))
        out = self._wins.copy()
        out[:-1][chance] = 0
        return out

    def _move_bits(self, moves: np.ndarray) -> np.ndarray:
        """``[roles + 1, blocks]`` uint64: bit j of block c of row r is
        ``moves[role_moves[r][64 c + j]]``; the last row all ones."""
        out = np.zeros((len(self.roles) + 1, self._blocks), dtype=np.uint64)
        out[-1] = ALL_ONES
        for r, role_moves in enumerate(self.role_moves):
            for j in np.flatnonzero(moves[role_moves]):
                out[r, j // 64] |= np.uint64(1) << np.uint64(j % 64)
        return out

    def step(self, packed: np.ndarray, joint: np.ndarray) -> StepResult:
        """The transitions ``(packed[t], joint[t])`` (a move index per role, -1 for
        none): terminal, legal moves and goals of each state, and its next state."""
        from gdl.reasoning import playout_kernels  # deferred: numba, when playouts run

        t = len(packed)
        result = StepResult(np.zeros(t, dtype=np.bool_), np.zeros((t, self.n_moves), dtype=np.bool_),
                            np.zeros((t, len(self._goal_row)), dtype=np.bool_),
                            np.zeros((t, self.n_words), dtype=np.uint64))
        playout_kernels.step(*self._net, self._goal_row,
                             np.ascontiguousarray(packed, dtype=np.uint64),
                             np.ascontiguousarray(joint, dtype=np.int64), STEP_WORDS,
                             result.terminal,
                             result.legal, result.goal, result.children)
        return result


def lane_words(playouts: int) -> int:
    """Words of lanes for a call of ``playouts`` playouts: about
    :data:`PLAYOUTS_PER_LANE` playouts a lane, at most :data:`MAX_WORDS` words."""
    return max(1, min(MAX_WORDS, -(-playouts // (64 * PLAYOUTS_PER_LANE))))


def playout_net_of(batch: BatchMachine) -> PlayoutNet:
    """``batch``'s PlayoutNet, built once and kept on it."""
    net = getattr(batch, "playout_net", None)
    if net is None:
        net = batch.playout_net = PlayoutNet(batch)
    return net
