"""A simultaneous-move game as a compact DAG over states: the scale path's model.

:class:`~.model.SimultaneousGame` keeps one row per entry with payoffs, probabilities
and derived columns (about 56 bytes an entry); at 10^7-10^8 states that does not fit.
A :class:`StateDag` keeps per *state* a few small numbers and per *entry* one int32:

* ``n0[S]``, ``n1[S]`` uint16: the players' action counts (0, 0 for a terminal state);
* ``nk[S]`` uint16: nature's outcome count per joint move (1 without nature; 0 for a
  terminal state); each outcome has probability ``1 / nk`` (GDL-II ``random``);
* ``entry_start[S + 1]`` int64: state ``s``'s entries are
  ``entry_start[s]:entry_start[s + 1]``, ``n0 * n1 * nk`` of them in row-major order
  ``(i, j, c)``: entry ``(i, j, c)`` is ``entry_start[s] + (i * n1 + j) * nk + c``
  (terminal states own no entries);
* ``entry_child[E]`` int32: the *state* each entry leads to (terminal or not: a
  terminal child's payoffs are read from ``payoff``, never copied into entries);
* ``payoff[S, 2]`` float64: the two players' goal values at terminal states (0 at
  non-terminal ones);
* ``root``: the root state (0 from the expansions).

States are numbered in the order the expansion found them (breadth first), which is
not a bottom-up order when the DAG merges states reached at different depths: a
solver orders states itself (:func:`heights`). Action labels, when wanted, come from
whoever built the DAG (the GDL expansion keeps the machine's moves).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solvers.errors import ValidationError
from solvers.numba_switch import numba_allowed


@dataclass(eq=False)
class StateDag:
    """The compact model (see the module docstring for the layout)."""

    n0: np.ndarray
    n1: np.ndarray
    nk: np.ndarray
    entry_start: np.ndarray
    entry_child: np.ndarray
    payoff: np.ndarray
    root: int = 0
    player_names: tuple[str, str] = ("player 0", "player 1")

    @property
    def num_states(self) -> int:
        return len(self.n0)

    @property
    def num_entries(self) -> int:
        return len(self.entry_child)

    @property
    def terminal(self) -> np.ndarray:
        """[S] bool: states that own no entries."""
        return self.n0 == 0

    def nbytes(self) -> int:
        """Bytes held by the arrays (the figure ``--memory-mb`` budgets are about)."""
        return sum(a.nbytes for a in (self.n0, self.n1, self.nk, self.entry_start,
                                      self.entry_child, self.payoff))

    def validate(self) -> None:
        """Shapes, counts and child ids; raises :class:`ValidationError`."""
        s = self.num_states
        for name in ("n1", "nk"):
            if len(getattr(self, name)) != s:
                raise ValidationError(f"{name} has {len(getattr(self, name))} states, n0 has {s}")
        if self.payoff.shape != (s, 2) or len(self.entry_start) != s + 1:
            raise ValidationError("payoff must be [S, 2] and entry_start [S + 1]")
        sizes = self.n0.astype(np.int64) * self.n1 * self.nk
        if not np.array_equal(np.diff(self.entry_start), sizes) or self.entry_start[0] != 0:
            raise ValidationError("entry_start does not match n0 * n1 * nk")
        if len(self.entry_child) != self.entry_start[-1]:
            raise ValidationError("entry_child does not match entry_start")
        if len(self.entry_child) and (self.entry_child.min() < 0 or self.entry_child.max() >= s):
            raise ValidationError("an entry leads to a state that does not exist")
        if not 0 <= self.root < s:
            raise ValidationError(f"root {self.root} is not a state")


# Relaxation passes before a DAG counts as deep and goes to the compiled walk.
RELAXATION_PASSES = 32


def heights(dag: StateDag) -> np.ndarray:
    """[S] int32: the longest path from each state to a terminal state (0 at terminals).

    Every child of a state of height ``h`` has a smaller height, so the states of one
    height are independent and a level-by-level backward induction solves them together.
    Computed by relaxation, one vectorised pass over the entries per height; a DAG
    still changing after :data:`RELAXATION_PASSES` passes goes to a depth-first walk
    (:mod:`.dag_kernels`, two passes whatever the depth) when numba is allowed. A
    cycle is reported.
    """
    s = dag.num_states
    height = np.zeros(s, dtype=np.int32)
    nonterminal = np.flatnonzero(~dag.terminal)
    if not len(nonterminal):
        return height
    starts = dag.entry_start[nonterminal]   # non-terminal states own >= 1 entry each
    for passes in range(s + 1):
        if passes == RELAXATION_PASSES and numba_allowed():
            return _heights_compiled(dag)
        best = np.zeros(s, dtype=np.int32)
        best[nonterminal] = np.maximum.reduceat(height[dag.entry_child], starts) + 1
        if np.array_equal(best, height):
            return height
        height = best
    raise _cycle()


def _heights_compiled(dag: StateDag) -> np.ndarray:
    from solvers.simultaneous.dag_kernels import heights_dfs  # deferred: numba, on deep DAGs only

    height = np.zeros(dag.num_states, dtype=np.int32)
    if not heights_dfs(dag.entry_start, dag.entry_child, dag.terminal, height):
        raise _cycle()
    return height


def _cycle() -> ValidationError:
    return ValidationError("the states form a cycle, so the game need not end")
