"""One small zero-sum matrix game by the tableau simplex method, without scipy.

For the many small games solved one at a time (DOαβ's restricted games), where a
``scipy.optimize.linprog`` call costs milliseconds of wrapper for a few pivots:

1. shift the payoffs so every entry is at least 1 (the value moves by the same amount
   and stays positive);
2. the column player's program ``max sum q`` subject to ``A q <= 1``, ``q >= 0`` has
   the origin as a basic feasible solution (slack basis), so no phase one;
3. pivot with Bland's rule (the entering column is the first with a negative reduced
   cost, ties in the ratio test go to the smallest basic variable), which cannot cycle
   on degenerate games;
4. at the optimum ``sum q = 1 / v``: ``y = q v``; the reduced costs of the slack
   columns are the row player's dual ``p`` with ``sum p = 1 / v`` too: ``x = p v``.

Exact to rounding at the vertex found (the strategies are a basic solution, not a
tolerance-bound interior one). :func:`solve_zero_sum` returns ``(x, y, value)`` for
player 0 (rows, maximising).
"""

from __future__ import annotations

import numpy as np

MAX_PIVOTS = 10_000  # far above any game this is meant for; a guard, not a limit


def solve_zero_sum(payoff: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(x, y, value) of the zero-sum game ``payoff`` [m, n] (player 0 maximises)."""
    a = np.asarray(payoff, dtype=np.float64)
    m, n = a.shape
    shift = 1.0 - float(a.min())
    tableau = np.zeros((m + 1, n + m + 1))
    tableau[:m, :n] = a + shift
    tableau[:m, n:n + m] = np.eye(m)
    tableau[:m, -1] = 1.0
    tableau[m, :n] = -1.0
    basis = list(range(n, n + m))
    tol = 1e-12 * max(1.0, float(tableau[:m, :n].max()))
    for _ in range(MAX_PIVOTS):
        negative = np.flatnonzero(tableau[m, :-1] < -tol)
        if negative.size == 0:
            break
        col = int(negative[0])
        column = tableau[:m, col]
        rows = np.flatnonzero(column > tol)
        ratios = tableau[rows, -1] / column[rows]
        best = ratios.min()
        ties = rows[ratios <= best + tol * max(1.0, abs(best))]
        row = int(min(ties, key=lambda r: basis[r]))
        tableau[row] /= tableau[row, col]
        others = np.arange(m + 1) != row
        tableau[others] -= np.outer(tableau[others, col], tableau[row])
        basis[row] = col
    else:  # pragma: no cover - Bland's rule terminates
        raise RuntimeError("the simplex did not terminate")
    q = np.zeros(n)
    for r, var in enumerate(basis):
        if var < n:
            q[var] = tableau[r, -1]
    p = np.clip(tableau[m, n:n + m], 0.0, None)
    total = float(tableau[m, -1])  # sum q = sum p = 1 / (value + shift)
    y = np.clip(q, 0.0, None)
    return p / p.sum(), y / y.sum(), 1.0 / total - shift
