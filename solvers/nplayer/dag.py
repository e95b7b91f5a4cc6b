"""A game of any number of players (one: a puzzle) as a compact DAG over states.

The n-player twin of :class:`~solvers.simultaneous.dag.StateDag` (which is the
two-player case, kept for the two-player solvers). Per state a few small numbers, per
entry one int32:

* ``counts[S, R]`` uint16: each player's legal move count (all 0 at a terminal state);
  a role whose turn it is not has one move (GDL's ``noop``), so turn-based games are the
  states where at most one player has more than one move;
* ``nk[S]`` uint16: nature's outcome count per joint move (1 without nature; 0 at a
  terminal state); each outcome has probability ``1 / nk`` (GDL-II ``random``);
* ``entry_start[S + 1]`` int64: state ``s``'s entries are
  ``entry_start[s]:entry_start[s + 1]``, ``prod(counts[s]) * nk[s]`` of them in
  row-major order ``(a_0, ..., a_{R-1}, c)``: player 0's move varies slowest, nature's
  outcome fastest;
* ``entry_child[E]`` int32: the state each entry leads to;
* ``payoff[S, R]`` float64: the players' goal values at terminal states (0 elsewhere);
* ``root``: the root state (0 from the expansions); ``player_names``: the roles.

States are numbered as the expansion found them (breadth first); solvers order them
with :func:`heights`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solvers.errors import ValidationError
from solvers.simultaneous.dag import StateDag
from solvers.simultaneous.dag import heights as _state_dag_heights


@dataclass(eq=False)
class JointDag:
    """The compact n-player model (see the module docstring for the layout)."""

    counts: np.ndarray
    nk: np.ndarray
    entry_start: np.ndarray
    entry_child: np.ndarray
    payoff: np.ndarray
    root: int = 0
    player_names: tuple[str, ...] = ()

    @property
    def num_players(self) -> int:
        return int(self.counts.shape[1])

    @property
    def num_states(self) -> int:
        return int(self.counts.shape[0])

    @property
    def num_entries(self) -> int:
        return len(self.entry_child)

    @property
    def terminal(self) -> np.ndarray:
        """[S] bool: states that own no entries."""
        return self.nk == 0

    def joint_count(self, s: int) -> int:
        """The number of joint moves (without nature) at state ``s``."""
        return int(np.prod(self.counts[s].astype(np.int64)))

    def children(self, s: int) -> np.ndarray:
        """State ``s``'s entries as children, shaped ``(*counts[s], nk[s])``."""
        block = self.entry_child[self.entry_start[s]:self.entry_start[s + 1]]
        return block.reshape(*self.counts[s].astype(np.int64), int(self.nk[s]))

    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.counts, self.nk, self.entry_start,
                                      self.entry_child, self.payoff))

    def validate(self) -> None:
        """Shapes, counts and child ids; raises :class:`ValidationError`."""
        s, r = self.counts.shape if self.counts.ndim == 2 else (-1, -1)
        if r < 1 or len(self.nk) != s or self.payoff.shape != (s, r):
            raise ValidationError("counts must be [S, R], nk [S] and payoff [S, R]")
        if len(self.entry_start) != s + 1 or self.entry_start[0] != 0:
            raise ValidationError("entry_start must be [S + 1] from 0")
        sizes = self.counts.astype(np.int64).prod(axis=1) * self.nk
        if not np.array_equal(np.diff(self.entry_start), sizes):
            raise ValidationError("entry_start does not match prod(counts) * nk")
        if ((self.nk == 0) != (self.counts == 0).any(axis=1)).any():
            raise ValidationError("a state is terminal for some counts and not for others")
        if len(self.entry_child) != self.entry_start[-1]:
            raise ValidationError("entry_child does not match entry_start")
        if len(self.entry_child) and (self.entry_child.min() < 0
                                      or self.entry_child.max() >= s):
            raise ValidationError("an entry leads to a state that does not exist")
        if len(self.player_names) not in (0, r):
            raise ValidationError(f"{len(self.player_names)} player names for {r} players")
        if not 0 <= self.root < s:
            raise ValidationError(f"root {self.root} is not a state")

    def as_state_dag(self) -> StateDag:
        """The two-player StateDag of this DAG (two players only): the arrays shared,
        but the move counts, copied into a contiguous array per player."""
        if self.num_players != 2:
            raise ValidationError(f"a StateDag has two players, not {self.num_players}")
        # contiguous columns: the two-player kernels take contiguous arrays
        return StateDag(np.ascontiguousarray(self.counts[:, 0]),
                        np.ascontiguousarray(self.counts[:, 1]), self.nk, self.entry_start,
                        self.entry_child, self.payoff, self.root,
                        tuple(self.player_names) or ("player 0", "player 1"))  # type: ignore[arg-type]


def from_state_dag(dag: StateDag) -> JointDag:
    """A two-player StateDag as a JointDag (the arrays are shared where they can be)."""
    return JointDag(np.stack([dag.n0, dag.n1], axis=1), dag.nk, dag.entry_start,
                    dag.entry_child, dag.payoff, dag.root, tuple(dag.player_names))


def heights(dag: JointDag) -> np.ndarray:
    """[S] int32: the longest path from each state to a terminal state (0 at
    terminals): states of one height are independent, so a backward induction solves
    them level by level. A cycle raises ValidationError."""
    # the relaxation reads only entry_start, entry_child and the terminal flags
    view = StateDag(np.where(dag.terminal, 0, 1).astype(np.uint16),
                    np.ones(dag.num_states, dtype=np.uint16), dag.nk, dag.entry_start,
                    dag.entry_child, np.zeros((dag.num_states, 2)), dag.root)
    return _state_dag_heights(view)


@dataclass(eq=False)
class JointSolution:
    """A solution on a JointDag: values and a behavioural strategy at solved states.

    * ``values[S, R]``: every player's value at every solved state (terminal: payoff);
    * ``solved[S]`` bool: the states the solution defines;
    * ``strategy_start[S + 1]`` int64 and ``strategy[T]`` float64: state ``s``'s move
      probabilities are ``strategy[strategy_start[s]:strategy_start[s + 1]]``, player 0's
      ``counts[s, 0]`` moves, then player 1's, ... (empty at terminal and unsolved states);
    * ``steps[S]`` float64 or None: puzzles, the (expected) number of steps the plan
      takes from each state to its end;
    * ``solver``: the solver's name; ``notes``: how the equilibrium was chosen (the tie
      rule, pure or mixed), for the JSON.
    """

    values: np.ndarray
    solved: np.ndarray
    strategy_start: np.ndarray
    strategy: np.ndarray
    solver: str
    steps: np.ndarray | None = None
    notes: dict | None = None

    @property
    def root_values(self) -> np.ndarray:
        return self.values[0]

    def state_strategy(self, dag: JointDag, s: int, player: int) -> np.ndarray:
        """Player ``player``'s move probabilities at state ``s`` (empty if unsolved)."""
        block = self.strategy[self.strategy_start[s]:self.strategy_start[s + 1]]
        if not len(block):
            return block
        first = int(dag.counts[s, :player].astype(np.int64).sum())
        return block[first:first + int(dag.counts[s, player])]


def strategy_layout(dag: JointDag, solved: np.ndarray) -> np.ndarray:
    """``strategy_start`` for a solution defined at the non-terminal ``solved`` states."""
    sizes = np.where(solved & ~dag.terminal, dag.counts.astype(np.int64).sum(axis=1), 0)
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
