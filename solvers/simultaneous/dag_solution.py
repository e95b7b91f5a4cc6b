"""A solution on the compact model: values and strategies in a few bytes per state.

A :class:`DagSolution` of a :class:`~.dag.StateDag` with ``S`` states holds

* ``values[S, 2]`` float64: each state's equilibrium payoffs (a terminal state's
  payoffs; NaN where not solved);
* ``pure[S, 2]`` int16: each player's action where the state's strategy pair is pure,
  -1 where it is mixed (and at terminal or unsolved states);
* ``method[S]`` int8: the matrix method (:mod:`solvers.matrix.equilibrium`'s codes),
  -1 at terminal and unsolved states;
* ``solved[S]`` bool;
* a side table for the mixed states only: ``mixed_states[M]`` (sorted state ids) and,
  per player ``p``, ``mixed_prob[p]`` with state ``mixed_states[k]``'s distribution at
  ``mixed_prob[p][mixed_start[p, k]:mixed_start[p, k] + n_p]`` (``n_p`` its action
  count; both players are kept there even when one of them is pure).

That is 22 bytes per state plus ``8 (n0 + n1) + 24`` per mixed state, instead of one
float per action and player and a row per entry (:class:`~.solution.Solution`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from solvers.errors import ValidationError
from solvers.simultaneous.dag import StateDag

#: the largest action count int16 pure actions can name
MAX_ACTIONS = np.iinfo(np.int16).max


@dataclass
class DagSolution:
    """Values and compact strategies of a (partially) solved :class:`StateDag`."""

    dag: StateDag
    solver: str
    selection: str
    values: np.ndarray
    pure: np.ndarray
    method: np.ndarray
    solved: np.ndarray
    mixed_states: np.ndarray
    mixed_start: np.ndarray
    mixed_prob: tuple[np.ndarray, np.ndarray]
    seconds: float = 0.0
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def root_values(self) -> tuple[float, float]:
        v = self.values[self.dag.root]
        return float(v[0]), float(v[1])

    def nbytes(self) -> int:
        """Bytes held by the solution's arrays."""
        return sum(a.nbytes for a in (self.values, self.pure, self.method, self.solved,
                                      self.mixed_states, self.mixed_start, *self.mixed_prob))

    def action_probability(self, states: np.ndarray, player: int, actions: np.ndarray) -> np.ndarray:
        """[k]: the probability ``player`` plays ``actions[k]`` at ``states[k]`` (vectorised)."""
        pure = self.pure[states, player]
        prob = (pure == actions).astype(np.float64)
        mixed = np.flatnonzero(pure < 0)
        if mixed.size and self.mixed_states.size:
            pos = np.searchsorted(self.mixed_states, states[mixed])
            pos = np.minimum(pos, self.mixed_states.size - 1)
            found = self.mixed_states[pos] == states[mixed]
            at = self.mixed_start[player, pos[found]] + actions[mixed[found]]
            prob[mixed[found]] = self.mixed_prob[player][at]
        return prob

    def strategy(self, state: int, player: int) -> np.ndarray:
        """The state's mixed strategy of ``player`` as a dense vector."""
        count = int((self.dag.n0, self.dag.n1)[player][state])
        return self.action_probability(np.full(count, state), player, np.arange(count))


def _one_hot(x: np.ndarray) -> np.ndarray:
    """[k]: rows of ``x`` that are a pure strategy (one 1, zeros elsewhere)."""
    return (x.max(axis=1) == 1.0) & (x.sum(axis=1) == 1.0) & (x.min(axis=1) >= 0.0)


class StrategyStore:
    """Collects compact strategies shape group by shape group, then builds the solution."""

    def __init__(self, dag: StateDag) -> None:
        if max(int(dag.n0.max(initial=0)), int(dag.n1.max(initial=0))) > MAX_ACTIONS:
            raise ValidationError(f"a state has more than {MAX_ACTIONS} actions")
        s = dag.num_states
        self.dag = dag
        self.pure = np.full((s, 2), -1, dtype=np.int16)
        self.method = np.full(s, -1, dtype=np.int8)
        self._states: list[np.ndarray] = []
        self._probs: tuple[list[np.ndarray], list[np.ndarray]] = ([], [])

    def add(self, states: np.ndarray, x: np.ndarray, y: np.ndarray, method: np.ndarray) -> None:
        """Strategies ``x`` [k, m], ``y`` [k, n] of same-shape ``states``."""
        self.method[states] = method
        pure = _one_hot(x) & _one_hot(y)
        self.pure[states[pure], 0] = x[pure].argmax(axis=1)
        self.pure[states[pure], 1] = y[pure].argmax(axis=1)
        if not pure.all():
            mixed = ~pure
            self._states.append(states[mixed])
            self._probs[0].append(x[mixed].reshape(-1))
            self._probs[1].append(y[mixed].reshape(-1))

    def result(self, solver: str, selection: str, values: np.ndarray, solved: np.ndarray,
               seconds: float, stats: dict[str, int]) -> DagSolution:
        """The solution; the side table keeps the order strategies came in (no copy to
        sort it), only the states and their offsets are sorted."""
        dag = self.dag
        states = np.concatenate(self._states or [np.zeros(0)]).astype(np.int64)
        probs = []
        for chunks in self._probs:   # join one player's chunks, then free them
            probs.append(np.concatenate(chunks or [np.zeros(0)]))
            chunks.clear()
        counts = np.stack([dag.n0[states], dag.n1[states]]).astype(np.int64)
        order = np.argsort(states, kind="stable")
        start = (np.cumsum(counts, axis=1) - counts)[:, order]
        return DagSolution(dag=dag, solver=solver, selection=selection, values=values,
                           pure=self.pure, method=self.method, solved=solved,
                           mixed_states=states[order], mixed_start=start,
                           mixed_prob=(probs[0], probs[1]), seconds=seconds, stats=stats)
