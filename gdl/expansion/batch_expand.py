"""Expand a GDL game into the compact :class:`~solvers.nplayer.dag.JointDag`.

:func:`expand_joint` is the entry point for any number of players (one: a puzzle;
plus an optional ``random`` role): the batched path below for a compiled machine
(the grounded engine), else the per-state path of :mod:`gdl.expansion.expand`
(``expand_states``) converted to the same model. Both number states in the same
order (breadth first, children in joint-move order), so the batched path is tested
against the per-state one state for state. :func:`expand_dag` is the two-player
entry point (the two-player :class:`~solvers.simultaneous.dag.StateDag` is
:attr:`DagExpansion.dag`).

Batched path (level by level, breadth first):

1. The root is the frontier (level 0). States are packed bit vectors
   (:mod:`gdl.reasoning.batch_machine`) held in a :class:`~gdl.expansion.row_table.RowTable`, which
   numbers them in order of discovery.
2. The frontier is cut into chunks of states. For a chunk, one
   :meth:`~gdl.reasoning.batch_machine.BatchMachine.evaluate_states` gives terminal flags,
   legal moves of every role, and goals; a terminal state keeps its players'
   goals, a non-terminal one its action counts (each player's, then ``nk``,
   nature's, 1 without nature) and the number of its legal move set (move sets
   are deduplicated in a second RowTable).
3. The joint moves of the chunk's non-terminal states are enumerated with array
   arithmetic in the per-state order: state by state, then player 0's move, player
   1's move, ..., nature's move (row-major ``(a_0, ..., a_{R-1}, c)``), each role's
   moves in the engine's order; they are cut into batches of transitions.
4. A batch's next states are computed at once
   (:meth:`~gdl.reasoning.batch_machine.BatchMachine.next_states`) and looked up / added in
   the state table: the child numbers are the entries of the DAG, and new states,
   numbered in order of first occurrence, form the next frontier. So the numbering
   equals the per-state search's, which numbers a child when it first meets it.
5. When the frontier is empty the arrays are trimmed into a JointDag; a cycle
   (which a finite game cannot have) is reported naming one of its states.
6. Budgets (states, seconds, resident memory growth, :class:`gdl.budget.Budget`)
   are checked after each batch and stop the work with
   :class:`~solvers.errors.LimitReached`; a progress line every
   :data:`~gdl.expansion.expand.PROGRESS_SECONDS` gives states, states/s, transitions/s,
   the level and the memory held.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from gdl.budget import Budget
from gdl.expansion.expand import (
    Limits,
    StateGraph,
    expand_states,
    players_of,
    roles_of,
    two_players_only,
)
from gdl.expansion.row_table import RowTable, resized
from gdl.reasoning import kernels
from gdl.reasoning.batch_machine import (
    BatchMachine,
    StateBatch,
    batch_machine_of,
    pack_ints,
    unpack_int,
)
from gdl.reasoning.compile import CompiledMachine
from gdl.reasoning.state_machine import Move, State, StateMachine
from solvers.errors import GameError, GameRuntimeError, LimitReached, UnsupportedGame
from solvers.nplayer.dag import JointDag
from solvers.simultaneous.dag import StateDag


@dataclass(eq=False)
class DagExpansion:
    """A game expanded into a JointDag, with what maps its states back to GDL.

    ``players`` are the role indices of the JointDag's players (in its order),
    ``nature`` the role index of ``random`` or None; :attr:`dag` is the two-player
    StateDag over the same arrays.

    Batched path: ``packed[s]`` is state ``s`` as a packed vector and
    ``legal_set[s]`` the row of ``legal_rows`` (packed move bits of every role) of
    its legal moves (-1 at terminal states). Per-state path: ``graph`` holds the
    machine's states and moves. ``level_start[l]`` is the first state of breadth-first
    level ``l`` (batched path; a last entry closes the last level).
    """

    joint: JointDag
    machine: StateMachine
    players: tuple[int, ...]
    nature: int | None
    seconds: float
    transitions: int
    packed: np.ndarray | None = None
    legal_set: np.ndarray | None = None
    legal_rows: np.ndarray | None = None
    level_start: np.ndarray | None = None
    graph: StateGraph | None = None

    @property
    def batched(self) -> bool:
        return self.graph is None

    @cached_property
    def dag(self) -> StateDag:
        """The two-player StateDag (UnsupportedGame for other player counts)."""
        if len(self.players) != 2:
            raise UnsupportedGame(two_players_only(self.machine.roles, self.players))
        return self.joint.as_state_dag()

    def state(self, s: int) -> State:
        """State ``s`` as the machine's state."""
        if self.graph is not None:
            return self.graph.states[s]
        return unpack_int(self.packed[s])  # type: ignore[index]

    def state_to_kif(self, s: int) -> list[str]:
        return self.machine.state_to_kif(self.state(s))

    def moves(self, s: int) -> tuple[tuple[Move, ...], ...] | None:
        """(player 0's moves, player 1's moves, ...[, nature's]) in entry order; None
        at a terminal state."""
        slots = [*self.players] + ([self.nature] if self.nature is not None else [])
        if self.graph is not None:
            found = self.graph.moves[s]
            return None if found is None else tuple(found[r] for r in slots)
        if self.legal_set[s] < 0:  # type: ignore[index]
            return None
        bits = unpack_int(self.legal_rows[self.legal_set[s]])  # type: ignore[index]
        machine: CompiledMachine = self.machine  # type: ignore[assignment]
        return tuple(tuple(1 << int(b) for b in range(len(machine._move_atoms))
                           if bits >> b & 1 and machine._role_index[machine._move_atoms[b][1]] == r)
                     for r in slots)

    def nbytes(self) -> int:
        """Bytes kept: the DAG and the state and move tables."""
        extra = sum(a.nbytes for a in (self.packed, self.legal_set, self.legal_rows,
                                       self.level_start) if a is not None)
        return self.joint.nbytes() + extra


def expand_dag(machine: StateMachine, root: State | None = None, *, budget: Budget | None = None,
               progress: Callable[[str], None] | None = None,
               batched: bool | None = None) -> DagExpansion:
    """:func:`expand_joint` of a two-player game (its :attr:`DagExpansion.dag`, a
    StateDag); UnsupportedGame for other player counts, before any expansion."""
    players_of(machine.roles)
    return expand_joint(machine, root, budget=budget, progress=progress, batched=batched)


def expand_joint(machine: StateMachine, root: State | None = None, *,
                 budget: Budget | None = None, progress: Callable[[str], None] | None = None,
                 batched: bool | None = None) -> DagExpansion:
    """The game below ``root`` (default: the initial state) as a JointDag, for any
    number of players.

    ``batched=None`` takes the batched path when the machine is compiled and its
    move rules ground (else the per-state path, saying why on ``progress``); True
    insists (GameError / LimitReached if it cannot), False refuses it.
    ``budget`` defaults to :class:`gdl.budget.Budget`'s defaults.
    """
    budget = Budget() if budget is None else budget
    compiled = isinstance(machine, CompiledMachine)
    if batched and not compiled:
        raise GameError(f"the batched expansion needs the compiled engine, not the "
                        f"{machine.engine_name} one")
    if compiled and batched is not False:
        try:
            batch_machine = batch_machine_within(machine, budget)  # type: ignore[arg-type]
        except LimitReached as exc:
            if batched:
                raise
            if progress is not None:
                progress(f"expand: state by state ({exc.message} for the batched path)")
        else:
            return BatchedExpansion(batch_machine, budget, progress).run(root)
    return from_graph(expand_states(machine, root, budget=budget, progress=progress))


CHUNK_SECONDS = 0.1        # under a time limit: the seconds a chunk of transitions aims at
FIRST_TIMED_CHUNK = 1024   # and the first chunk's transitions (knightThrough: 0.1 s loaded)

def batch_machine_within(machine: CompiledMachine, budget: Budget) -> BatchMachine:
    """``machine``'s BatchMachine (:func:`gdl.reasoning.batch_machine.batch_machine_of`), built
    within what is left of ``budget``'s time."""
    seconds = None
    if budget.time_limit is not None:
        started = time.perf_counter() if budget.started is None else budget.started
        seconds = max(0.0, budget.time_limit - (time.perf_counter() - started))
    return batch_machine_of(machine, seconds)


def from_graph(graph: StateGraph) -> DagExpansion:
    """The per-state path's StateGraph as a DagExpansion."""
    n, r = graph.n_states, len(graph.players)
    shapes = np.zeros((n, r + 1), dtype=np.int64)
    children = []
    for s, succ in enumerate(graph.successors):
        if succ is not None:
            shapes[s] = succ.shape
            children.append(succ.ravel())
    payoff = np.zeros((n, r))
    for s, goals in graph.payoffs.items():
        payoff[s] = goals
    joint = _joint_dag(shapes,
                       (np.concatenate(children) if children else np.empty(0)).astype(np.int32),
                       payoff, _player_names(graph.machine, graph.players))
    _check_acyclic(joint, lambda s: graph.machine.state_to_kif(graph.states[s]))
    return DagExpansion(joint, graph.machine, graph.players, graph.nature, graph.seconds,
                        int(joint.entry_start[-1]), graph=graph)


def _joint_dag(counts: np.ndarray, entry_child: np.ndarray, payoff: np.ndarray,
               player_names: tuple[str, ...]) -> JointDag:
    """The JointDag of [S, R + 1] action counts (the players', then nature's)."""
    sizes = counts.astype(np.int64).prod(axis=1)
    return JointDag(counts[:, :-1].astype(np.uint16), counts[:, -1].astype(np.uint16),
                    np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64), entry_child,
                    payoff, 0, player_names)


def _player_names(machine: StateMachine, players: tuple[int, ...]) -> tuple[str, ...]:
    return tuple(machine.roles[p] for p in players)


class GrowingArray:
    """A 1-D array that grows by half its size when full (step 2's per-state arrays)."""

    def __init__(self, dtype: type | np.dtype, width: int = 0) -> None:
        shape = (1024, width) if width else (1024,)
        self.data = np.zeros(shape, dtype=dtype)
        self.n = 0

    def extend(self, values: np.ndarray) -> None:
        self.reserve(len(values))[:] = values
        self.n += len(values)

    def reserve(self, k: int) -> np.ndarray:
        """The next ``k`` places (a view, to be let go before the next call: the
        array grows in place; :attr:`n` is not moved)."""
        end = self.n + k
        if end > len(self.data):
            self.data = resized(self.data, max(end, len(self.data) * 3 // 2))
        return self.data[self.n:end]

    def trimmed(self) -> np.ndarray:
        self.data = resized(self.data, self.n)
        return self.data


class BatchedExpansion:
    """Steps 1-6 of the module docstring."""

    def __init__(self, machine: BatchMachine, budget: Budget,
                 progress: Callable[[str], None] | None) -> None:
        self.bm = machine
        self.budget = budget
        self.progress = progress
        self.players, self.nature = roles_of(machine.roles)
        self.slots = [*self.players] + ([self.nature] if self.nature is not None else [])
        self.slot_moves = [machine.role_moves(r) for r in self.slots]
        self.states = RowTable(machine.n_words)
        self.legal = RowTable(max(1, (machine.n_moves + 63) // 64))
        # per state: each player's move count, then nature's (1 without nature)
        self.counts = GrowingArray(np.uint16, len(self.players) + 1)
        self.payoff = GrowingArray(np.float64, len(self.players))
        self.legal_set = GrowingArray(np.int32)
        self.entry_child = GrowingArray(np.int32)
        self.transitions = 0
        self.levels = [0, 1]   # first state of each level, then the end of the last
        self.limits = Limits(budget)

    def run(self, root: State | None) -> DagExpansion:
        bm = self.bm
        machine = bm.machine
        first = (bm.initial_state() if root is None else pack_ints([root], bm.n_words)[0])
        self.states.add(first[None, :])
        low, high = 0, 1
        while low < high:
            for start in range(low, high, bm.state_chunk):
                self._expand_chunk(start, min(high, start + bm.state_chunk))
            low, high = high, self.states.n
            if high > low:
                self.levels.append(high)
        if self.counts.data[0, 0] == 0:
            raise UnsupportedGame("the root state is terminal: there is nothing to solve")
        joint = _joint_dag(self.counts.trimmed(), self.entry_child.trimmed(),
                           self.payoff.trimmed(), _player_names(machine, self.players))
        packed = self.states.trimmed()
        _check_acyclic(joint, lambda s: machine.state_to_kif(unpack_int(packed[s])),
                       np.array(self.levels, dtype=np.int64))
        seconds = time.perf_counter() - self.limits.start
        result = DagExpansion(joint, machine, self.players, self.nature, seconds, self.transitions,
                              packed=packed, legal_set=self.legal_set.trimmed(),
                              legal_rows=self.legal.trimmed(),
                              level_start=np.array(self.levels, dtype=np.int64))
        if self.progress is not None and self.limits.rate.due(self.states.n, self.transitions):
            self._report()
        return result

    def _expand_chunk(self, start: int, stop: int) -> None:
        """Steps 2-4 for states ``start:stop`` of the frontier."""
        bm = self.bm
        packed = self.states.rows[start:stop]
        batch = bm.evaluate_states(packed)
        n = stop - start
        terminal = batch.terminal
        live = ~terminal
        counts = np.zeros((n, len(self.players) + 1), dtype=np.int64)
        flat: list[np.ndarray] = []
        offsets: list[np.ndarray] = []
        for k, moves in enumerate(self.slot_moves):
            held = batch.legal[:, moves] & live[:, None]
            per_state = held.sum(axis=1)
            missing = np.flatnonzero(live & (per_state == 0))
            if len(missing):
                role = bm.roles[self.slots[k]]
                state = bm.machine.describe(unpack_int(packed[missing[0]]))
                raise GameRuntimeError(f"role {role} has no legal move in the non-terminal "
                                       f"state {state}")
            counts[:, k] = per_state
            flat.append(moves[np.nonzero(held)[1]])
            offsets.append(np.concatenate([[0], np.cumsum(per_state)[:-1]]))
        if self.nature is None:
            counts[live, -1] = 1
        if counts.max(initial=0) > np.iinfo(np.uint16).max:
            raise UnsupportedGame(f"a state has {counts.max():,} legal moves for one role, more "
                                  "than the compact DAG's uint16 action counts hold")
        self.counts.extend(counts)
        payoff = np.zeros((n, len(self.players)))
        ended = np.flatnonzero(terminal)
        if len(ended):
            ints = _LazyStates(packed, ended)
            for k, player in enumerate(self.players):
                payoff[ended, k] = bm.goals_of(batch, ended, player, ints)
        self.payoff.extend(payoff)
        sets = np.full(n, -1, dtype=np.int32)
        if live.any():
            numbers, _ = self.legal.add(batch.legal_packed[live])
            sets[live] = numbers
        self.legal_set.extend(sets)
        sizes = counts.prod(axis=1)
        cumulative = np.cumsum(sizes)
        # every slot's legal moves in one array: slot k's at state i from start[k, i]
        shift = np.cumsum([0] + [len(f) for f in flat[:-1]])
        moves = np.concatenate(flat)
        start = np.stack(offsets) + shift[:, None]
        low = 0
        timed = self.limits.deadline is not None
        # under a time limit, chunks of about CHUNK_SECONDS (sized by the last one's
        # rate): knightThrough's third level, 42,918 transitions in one chunk, ran
        # 5 s past a 3 s limit on a loaded machine
        limit = min(bm.transition_chunk, FIRST_TIMED_CHUNK) if timed else bm.transition_chunk
        while low < n:
            before = cumulative[low - 1] if low else 0
            high = min(n, max(low + 1, int(np.searchsorted(cumulative, before + limit,
                                                           side="right"))))
            began = time.perf_counter()
            self._transitions(batch, counts, sizes, moves, start, low, high)
            if timed:
                rate = (cumulative[high - 1] - before) / max(time.perf_counter() - began, 1e-6)
                limit = max(FIRST_TIMED_CHUNK // 16,
                            min(bm.transition_chunk, int(rate * CHUNK_SECONDS)))
                self._check_budget()
            low = high
        self._check_budget()

    def _transitions(self, batch: StateBatch, counts: np.ndarray, sizes: np.ndarray,
                     legal: np.ndarray, start: np.ndarray, low: int, high: int) -> None:
        """Step 3-4 for the joint moves of chunk rows ``low:high`` (slot k's legal
        moves at row i are ``legal[start[k, i]:]``)."""
        part = sizes[low:high]
        total = int(part.sum())
        if not total:
            return
        compiled = kernels.compiled(total)
        if compiled is not None:
            children = self.bm.chunk_next_states(compiled, batch, counts, low, high, total,
                                                 legal, start)
        else:
            parent = np.repeat(np.arange(low, high), part)
            starts = np.cumsum(part) - part
            local = np.arange(total) - np.repeat(starts, part)
            # row-major (a_0, ..., a_{R-1}, c): the last slot's move varies fastest
            moves: list[np.ndarray] = []
            stride = None
            for k in reversed(range(len(self.slots))):
                count = counts[parent, k]
                index = local % count if stride is None else local // stride % count
                moves.insert(0, legal[start[k][parent] + index])
                stride = count if stride is None else stride * count
            children = self.bm.next_states(batch, parent, moves)
        new = self._admit(children)
        self.transitions += total
        self._check_states()
        if new:
            self._check_budget()

    def _admit(self, children: np.ndarray) -> int:
        """Step 4 for a batch's next states: number them (new ones join the next
        frontier) as the batch's entries; how many were new."""
        _, new = self.states.add(children, self.entry_child.reserve(len(children)))
        self.entry_child.n += len(children)
        return new

    def _check_states(self) -> None:
        if self.budget.max_states is not None and self.states.n > self.budget.max_states:
            raise LimitReached(f"expansion stopped: the budget of {self.budget.max_states:,} "
                               f"states was reached after {time.perf_counter() - self.limits.start:.1f}"
                               " s (raise --max-states)")

    def held_bytes(self) -> int:
        """Bytes of the arrays being built (with their spare capacity)."""
        return (self.states.nbytes() + self.legal.nbytes()
                + sum(g.data.nbytes for g in (self.counts, self.payoff, self.legal_set,
                                              self.entry_child)))

    def _check_budget(self) -> None:
        if self.limits.check(self.states.n, self.transitions) and self.progress is not None:
            self._report()

    def _report(self) -> None:
        elapsed = time.perf_counter() - self.limits.start
        found, rate = self.states.n, self.limits.rate
        level = len(self.levels) - 2
        self.progress(f"expand: {found:,} states found, {rate.per_second(found):,.0f} states/s, "  # type: ignore[misc]
                      f"{rate.per_second(self.transitions, 1):,.0f} transitions/s, level {level}, "
                      f"{self.held_bytes() / 2**20:,.0f} MB held "
                      f"({self.held_bytes() / max(found, 1):.0f} B/state), "
                      f"resident +{self.limits.resident_growth():,.0f} MB, {elapsed:.1f} s")


class _LazyStates:
    """Engine ints of some packed rows, made only when an error names one."""

    def __init__(self, packed: np.ndarray, rows: np.ndarray) -> None:
        self.packed = packed
        self.rows = rows

    def __getitem__(self, i: int) -> int:
        return unpack_int(self.packed[self.rows[i]])


def _check_acyclic(dag: JointDag, facts_of: Callable[[int], list[str]],
                   level_start: np.ndarray | None = None) -> None:
    """Raise UnsupportedGame naming a state on a cycle, if the DAG has one.

    Fast case: every entry leads to a later breadth-first level. Otherwise states
    are peeled bottom-up (a state goes once all its children have gone); what
    remains contains a cycle, found by walking from a remaining state through
    remaining children until a state repeats.
    """
    s = dag.num_states
    if level_start is not None and all(
            (dag.entry_child[dag.entry_start[low]:dag.entry_start[high]] >= high).all()
            for low, high in zip(level_start[:-1], level_start[1:], strict=True)):
        return   # level by level: no per-entry temporaries (10^9 entries at scale)
    sizes = np.diff(dag.entry_start)
    parent = np.repeat(np.arange(s, dtype=np.int32), sizes)
    remaining = sizes.copy()
    by_child = np.argsort(dag.entry_child, kind="stable")
    child_start = np.concatenate([[0], np.cumsum(np.bincount(dag.entry_child, minlength=s))])
    gone = remaining == 0
    frontier = np.flatnonzero(gone)
    while len(frontier):
        lengths = child_start[frontier + 1] - child_start[frontier]
        first = np.repeat(child_start[frontier] - np.cumsum(lengths) + lengths, lengths)
        entries = by_child[first + np.arange(lengths.sum())]
        parents, drops = np.unique(parent[entries], return_counts=True)
        remaining[parents] -= drops
        frontier = parents[(remaining[parents] == 0) & ~gone[parents]]
        gone[frontier] = True
    if gone.all():
        return
    state = int(np.flatnonzero(~gone)[0])
    seen: set[int] = set()
    while state not in seen:
        seen.add(state)
        children = dag.entry_child[dag.entry_start[state]:dag.entry_start[state + 1]]
        state = int(children[~gone[children]][0])
    shown = " ".join(facts_of(state)[:12])
    raise UnsupportedGame("the game's states form a cycle, so the game need not end; "
                          f"a repeated state: {{{shown}}}")
