"""Zero-sum matrix games by linear programming (von Neumann's minimax theorem).

Algorithm (the textbook LP, e.g. Shoham & Leyton-Brown, *Multiagent Systems*, 4.1):

1. The row player maximises ``v`` subject to ``sum_i x_i A[i, j] >= v`` for every
   column ``j``, ``sum_i x_i = 1``, ``x >= 0``.
2. The column player's strategy is the row strategy of the game ``-A^T``.
3. The game value is ``v``; both strategies are returned (HiGHS via scipy).

Used by the search to back up exact values at simultaneous nodes of constant-sum
two-player games.
"""

from __future__ import annotations

import numpy as np


def _row_strategy(payoff: np.ndarray) -> tuple[np.ndarray, float]:
    # Imported here: scipy.optimize takes ~1 s to import, and most searches (and a
    # freshly started agent worker) never need an LP.
    from scipy.optimize import linprog

    rows, cols = payoff.shape
    # variables: x_1..x_rows, v ; minimise -v
    cost = np.zeros(rows + 1)
    cost[-1] = -1.0
    upper = np.hstack([-payoff.T, np.ones((cols, 1))])  # v - x.A[:, j] <= 0
    equal = np.hstack([np.ones((1, rows)), np.zeros((1, 1))])
    bounds = [(0.0, None)] * rows + [(None, None)]
    result = linprog(cost, A_ub=upper, b_ub=np.zeros(cols), A_eq=equal, b_eq=[1.0],
                     bounds=bounds, method="highs")
    if not result.success:  # cannot happen for a finite matrix; keep a safe answer
        return np.full(rows, 1.0 / rows), float(payoff.min(axis=1).max())
    strategy = np.clip(result.x[:rows], 0.0, None)
    return strategy / strategy.sum(), float(result.x[-1])


def solve_matrix_game(payoff: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(row strategy, column strategy, value for the row player) of ``payoff``."""
    payoff = np.asarray(payoff, dtype=float)
    # Pure saddle point: no LP needed (the common case in endgames).
    row_min = payoff.min(axis=1)
    col_max = payoff.max(axis=0)
    if row_min.max() == col_max.min():
        i, j = int(row_min.argmax()), int(col_max.argmin())
        x, y = np.zeros(payoff.shape[0]), np.zeros(payoff.shape[1])
        x[i] = y[j] = 1.0
        return x, y, float(payoff[i, j])
    x, value = _row_strategy(payoff)
    y, _ = _row_strategy(-payoff.T)
    return x, y, value
