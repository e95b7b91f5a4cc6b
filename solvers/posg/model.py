"""The one-sided POSG as arrays: states, partitions, playable actions, sparse transitions.

Player 1 (the maximizer) knows only its partition and its observations; player 2 sees
the state. ``Pr[o, s' | s, a1, a2]`` is kept as a coordinate list (one row per non-zero
entry, sorted by ``(s, a1, a2)``) because the pursuit-evasion files have one or two
successors per joint action; rewards are kept sparse the same way (missing = 0).

Per-partition dense blocks (what the stage-game LPs need) are built on demand by
:meth:`PosgModel.partition_block` and cached.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np


@dataclass(frozen=True)
class Branch:
    """One (P1 action, observation) continuation out of a partition.

    ``trans[j, k]`` is ``Pr[o, s'_k | s, a1, a2]`` for the partition's state-action row
    ``j = (s, a2)``, where ``s'_k`` is the k-th state of the target partition.
    """

    a1_index: int            # index into the partition's playable P1 actions
    observation: int
    target: int              # partition entered
    trans: np.ndarray        # (rows, |target states|)

    @cached_property
    def nonzero(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row, next state, probability) of the non-zero entries of ``trans``."""
        r, c = np.nonzero(self.trans)
        return r, c, self.trans[r, c]

    @cached_property
    def row_mass(self) -> np.ndarray:
        """Per row: the probability of this branch."""
        return self.trans.sum(axis=1)


@dataclass(frozen=True)
class PartitionBlock:
    """Dense arrays for the stage game of one partition.

    Rows ``j`` enumerate the pairs (state, playable P2 action) state by state; the
    rows of local state ``i`` are ``row_start[i]:row_start[i + 1]``.
    """

    index: int
    states: np.ndarray       # global state ids, in local order
    a1: np.ndarray           # playable P1 actions (global ids)
    row_state: np.ndarray    # local state of each row
    row_a2: np.ndarray       # P2 action (global id) of each row
    row_start: np.ndarray    # (n_states + 1,)
    reward: np.ndarray       # (rows, |a1|): R(s, a1, a2)
    branches: tuple[Branch, ...]


@dataclass
class PosgModel:
    """A validated one-sided POSG (see ``solvers.posg.reader`` for the file format)."""

    state_names: list[str]
    a1_names: list[str]
    a2_names: list[str]
    obs_names: list[str]
    partition_of: np.ndarray            # (S,) partition of each state
    a1_playable: list[np.ndarray]       # per partition, sorted P1 action ids
    a2_playable: list[np.ndarray]       # per state, sorted P2 action ids
    # transitions, sorted by (s, a1, a2): parallel arrays
    t_s: np.ndarray
    t_a1: np.ndarray
    t_a2: np.ndarray
    t_o: np.ndarray
    t_next: np.ndarray
    t_prob: np.ndarray
    # rewards: parallel arrays (unique (s, a1, a2))
    r_s: np.ndarray
    r_a1: np.ndarray
    r_a2: np.ndarray
    r_value: np.ndarray
    discount: float
    initial_partition: int
    initial_belief: np.ndarray          # over the initial partition's states, local order
    _blocks: dict[int, PartitionBlock] = field(default_factory=dict, repr=False)

    @property
    def n_states(self) -> int:
        return len(self.state_names)

    @property
    def n_partitions(self) -> int:
        return len(self.a1_playable)

    def __post_init__(self) -> None:
        # states of each partition in file order, and each state's index inside it
        self.partition_states: list[np.ndarray] = [
            np.flatnonzero(self.partition_of == p) for p in range(self.n_partitions)]
        self.local_index = np.zeros(self.n_states, dtype=np.int64)
        for members in self.partition_states:
            self.local_index[members] = np.arange(len(members))

    def reward_range(self) -> tuple[float, float]:
        """(min, max) reward over all playable joint actions (missing entries are 0)."""
        lo = min(0.0, float(self.r_value.min())) if len(self.r_value) else 0.0
        hi = max(0.0, float(self.r_value.max())) if len(self.r_value) else 0.0
        return lo, hi

    def next_partition(self, partition: int, a1: int, observation: int) -> int | None:
        """The partition P1 is in after playing ``a1`` and seeing ``observation``."""
        block = self.partition_block(partition)
        for branch in block.branches:
            if block.a1[branch.a1_index] == a1 and branch.observation == observation:
                return branch.target
        return None

    def partition_block(self, partition: int) -> PartitionBlock:
        block = self._blocks.get(partition)
        if block is None:
            block = self._build_block(partition)
            self._blocks[partition] = block
        return block

    def _build_block(self, p: int) -> PartitionBlock:
        states = self.partition_states[p]
        a1 = self.a1_playable[p]
        a1_pos = {int(a): i for i, a in enumerate(a1)}
        row_state: list[int] = []
        row_a2: list[int] = []
        row_start = [0]
        row_of: dict[tuple[int, int], int] = {}
        for i, s in enumerate(states):
            for a2 in self.a2_playable[s]:
                row_of[(int(s), int(a2))] = len(row_state)
                row_state.append(i)
                row_a2.append(int(a2))
            row_start.append(len(row_state))
        reward = np.zeros((len(row_state), len(a1)))
        in_p = self.partition_of[self.r_s] == p
        for s, a, b, r in zip(self.r_s[in_p], self.r_a1[in_p], self.r_a2[in_p],
                              self.r_value[in_p], strict=True):
            row = row_of.get((int(s), int(b)))
            if row is not None and int(a) in a1_pos:
                reward[row, a1_pos[int(a)]] = r
        trans: dict[tuple[int, int], np.ndarray] = {}
        targets: dict[tuple[int, int], int] = {}
        sel = np.flatnonzero(self.partition_of[self.t_s] == p)
        for k in sel:
            s, a, b = int(self.t_s[k]), int(self.t_a1[k]), int(self.t_a2[k])
            o, nxt = int(self.t_o[k]), int(self.t_next[k])
            key = (a1_pos[a], o)
            if key not in trans:
                target = int(self.partition_of[nxt])
                targets[key] = target
                trans[key] = np.zeros((len(row_state), len(self.partition_states[target])))
            trans[key][row_of[(s, b)], self.local_index[nxt]] += self.t_prob[k]
        branches = tuple(Branch(a, o, targets[(a, o)], trans[(a, o)])
                         for a, o in sorted(trans))
        return PartitionBlock(p, states, a1, np.array(row_state, dtype=np.int64),
                              np.array(row_a2, dtype=np.int64),
                              np.array(row_start, dtype=np.int64), reward, branches)
