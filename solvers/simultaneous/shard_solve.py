"""Backward induction and its certificate on one shard of a DAG split across workers.

A shard owns some of the states (a hash of each state picks its shard) with their
entries. Its *local DAG* is a :class:`~.dag.StateDag` of its own states, numbered
``0 .. own - 1``, followed by one *ghost* per state of another shard that an own
entry leads to; ghosts have no entries, like terminal states, but their values come
from their owners. The shard then runs the single-process kernels unchanged:

1. Rounds. In each round a shard takes the values its ghosts' owners sent (and marks
   those ghosts done), processes every own state not yet done whose children are all
   done, and sends the values of its newly done states to the shards that hold them as
   ghosts (:meth:`Rounds.step`). A state is processed once all its children are
   done, as in the single process's order by height (:func:`.dag.heights`); a value
   crossing shards costs a round, so the rounds number at most twice the height.
2. The solve (:class:`ShardSolve`): processing is
   :meth:`.dag_baseline.LevelSolver.solve_states` on chunks of the ready states
   (:func:`.dag_baseline.chunks`); the values sent are the solver's.
3. The certificate (:class:`ShardCheck`): processing is
   :meth:`.dag_certificate.Check.states`, which recomputes values from the strategies
   alone; the values sent are those recomputed ones and the largest reachable
   payoffs, so the check never reads another shard's solver values. The shards'
   :func:`.dag_certificate.figures` combine into one certificate
   (:func:`combine_figures`, then :func:`.dag_certificate.certificate`).

A shard holds only its own states, their entries and its ghosts, so the memory of
each worker is bounded by its share of the game.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from solvers.errors import UnsupportedGame
from solvers.simultaneous.dag import StateDag
from solvers.simultaneous.dag_baseline import LevelSolver, chunks
from solvers.simultaneous.dag_certificate import Check, figures
from solvers.simultaneous.dag_solution import DagSolution
from solvers.simultaneous.model import concat_ranges


@dataclass(eq=False)
class LocalDag:
    """A shard's local DAG and how its ghosts map to other shards' states.

    ``ghost_shard[g]``, ``ghost_state[g]``: ghost ``own + g`` is state ``ghost_state[g]``
    of shard ``ghost_shard[g]`` (sorted by shard, then state)."""

    dag: StateDag
    own: int
    ghost_shard: np.ndarray
    ghost_state: np.ndarray

    def needs(self, shards: int) -> list[np.ndarray]:
        """Per shard, the states of it this shard holds as ghosts (sorted)."""
        return [self.ghost_state[self.ghost_shard == k] for k in range(shards)]


def local_dag(counts: np.ndarray, payoff: np.ndarray, child_shard: np.ndarray,
              child_state: np.ndarray, shard: int, root: int,
              player_names: tuple[str, str]) -> LocalDag:
    """The local DAG of a shard whose own state ``s`` has action counts ``counts[s]``
    (n0, n1, nk; zeros when terminal) and payoffs ``payoff[s]``, and whose entries, in
    state order, lead to state ``child_state[e]`` of shard ``child_shard[e]``."""
    own = len(counts)
    remote = child_shard != shard
    keys = child_shard[remote].astype(np.int64) << 32 | child_state[remote]
    ghost_keys, ghost_of = np.unique(keys, return_inverse=True)
    entry_child = child_state.astype(np.int32)
    entry_child[remote] = own + ghost_of
    ghosts = len(ghost_keys)
    counts = np.concatenate([counts, np.zeros((ghosts, 3), dtype=counts.dtype)])
    sizes = counts.astype(np.int64).prod(axis=1)
    dag = StateDag(counts[:, 0].astype(np.uint16), counts[:, 1].astype(np.uint16),
                   counts[:, 2].astype(np.uint16),
                   np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64), entry_child,
                   np.concatenate([payoff, np.zeros((ghosts, 2))]), root, player_names)
    return LocalDag(dag, own, (ghost_keys >> 32).astype(np.int32),
                    (ghost_keys & 0xFFFFFFFF).astype(np.int32))


class Rounds:
    """Step 1 of the module docstring; subclasses say what processing is and sends."""

    def __init__(self, local: LocalDag, subscribers: list[np.ndarray]) -> None:
        """``subscribers[k]``: the own states shard ``k`` holds as ghosts (its
        :meth:`LocalDag.needs` for this shard), in the order it expects them."""
        self.local = local
        self.subscribers = subscribers
        dag = local.dag
        own = local.own
        self.done = dag.terminal.copy()
        self.done[own:] = False
        self.sent = np.zeros(own, dtype=bool)
        self.waiting = np.flatnonzero(~self.done[:own])
        self.ghost_start = np.searchsorted(local.ghost_shard, np.arange(len(subscribers)))
        self.rounds = 0
        self.seconds = 0.0

    def payload(self, states: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def accept(self, ghosts: np.ndarray, payload: np.ndarray) -> None:
        raise NotImplementedError

    def process(self, states: np.ndarray) -> None:
        raise NotImplementedError

    def step(self, incoming: list[tuple[np.ndarray, np.ndarray]]) -> list[tuple[np.ndarray, np.ndarray]]:
        """One round: ``incoming[k]`` = (positions in this shard's ghosts of shard ``k``,
        their payload); returns the same for every shard (what it receives next round)."""
        start = time.perf_counter()
        for k, (positions, payload) in enumerate(incoming):
            if len(positions):
                ghosts = self.local.own + self.ghost_start[k] + positions
                self.accept(ghosts, payload)
                self.done[ghosts] = True
        ready = self._ready()
        if len(ready):
            for part in chunks(self.local.dag, ready):
                self.process(part)
            self.done[ready] = True
        out = []
        for states in self.subscribers:
            fresh = np.flatnonzero(self.done[states] & ~self.sent[states])
            out.append((fresh, self.payload(states[fresh])))
        self.sent[:] = self.done[:self.local.own]
        self.rounds += 1
        self.seconds += time.perf_counter() - start
        return out

    @property
    def left(self) -> int:
        """Own states not done yet."""
        return len(self.waiting)

    def _ready(self) -> np.ndarray:
        """The waiting states whose children are all done (and keep the others waiting)."""
        dag, waiting = self.local.dag, self.waiting
        if not len(waiting):
            return waiting
        sizes = dag.entry_start[waiting + 1] - dag.entry_start[waiting]
        child_done = self.done[dag.entry_child[concat_ranges(dag.entry_start[waiting], sizes)]]
        ready = np.logical_and.reduceat(child_done, np.cumsum(sizes) - sizes)
        self.waiting = waiting[~ready]
        return waiting[ready]


class ShardSolve(Rounds):
    """Step 2: the baseline's backward induction on a shard."""

    def __init__(self, local: LocalDag, subscribers: list[np.ndarray], selection: str) -> None:
        super().__init__(local, subscribers)
        self.solver = LevelSolver(local.dag, selection)
        self.solver.values[local.own:] = np.nan
        self.solver.solved[local.own:] = False
        self.start = time.perf_counter()

    def payload(self, states: np.ndarray) -> np.ndarray:
        return self.solver.values[states]

    def accept(self, ghosts: np.ndarray, payload: np.ndarray) -> None:
        self.solver.values[ghosts] = payload
        self.solver.solved[ghosts] = True

    def process(self, states: np.ndarray) -> None:
        self.solver.solve_states(states)

    def solution(self) -> DagSolution:
        return self.solver.result("baseline", self.start)


class ShardCheck(Rounds):
    """Step 3: the certificate's recomputation on a shard, from the strategies alone."""

    def __init__(self, local: LocalDag, subscribers: list[np.ndarray],
                 solution: DagSolution) -> None:
        super().__init__(local, subscribers)
        self.work = Check(local.dag, solution)
        self.work.values[local.own:] = np.nan
        self.work.top[local.own:] = -np.inf

    def payload(self, states: np.ndarray) -> np.ndarray:
        return np.concatenate([self.work.values[states], self.work.top[states]], axis=1)

    def accept(self, ghosts: np.ndarray, payload: np.ndarray) -> None:
        self.work.values[ghosts] = payload[:, :2]
        self.work.top[ghosts] = payload[:, 2:]

    def process(self, states: np.ndarray) -> None:
        self.work.states(states)

    def figures(self) -> dict:
        """This shard's part of the certificate (its own states only)."""
        return figures(self.work, np.arange(self.local.own))


def combine_figures(parts: list[dict]) -> dict:
    """The shards' :func:`.dag_certificate.figures` as those of the whole DAG (the worst
    state as ``shard:state``)."""
    worst = max(range(len(parts)), key=lambda k: parts[k]["max_gain"])
    return {"max_gain": max(p["max_gain"] for p in parts),
            "value_error": max(p["value_error"] for p in parts),
            "strategy_error": max(p["strategy_error"] for p in parts),
            "unsolved_reached": sum(p["unsolved_reached"] for p in parts),
            "states_checked": sum(p["states_checked"] for p in parts),
            "worst_state": f"{worst}:{parts[worst]['worst_state']}",
            "low": min((p["low"] for p in parts if p["low"] is not None), default=None),
            "high": max((p["high"] for p in parts if p["high"] is not None), default=None)}


def check_progress(before: int, after: int, quiet_rounds: int) -> int:
    """Rounds in a row without progress; a game whose states form a cycle stalls, and
    two such rounds (values sent in one are used in the next) say so."""
    quiet_rounds = quiet_rounds + 1 if after == before and after > 0 else 0
    if quiet_rounds >= 2:
        raise UnsupportedGame("the game's states form a cycle, so the game need not end "
                              f"({after:,} states can never be solved)")
    return quiet_rounds
