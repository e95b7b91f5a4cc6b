"""General-sum bimatrix equilibria by MIP Nash (thesis 2.14-2.20, Algorithm 4).

Sandholm, Gilpin, Conitzer, *Mixed-integer programming methods for finding Nash
equilibria*, AAAI 2005, formulation 1. Variables per player ``i``: the mixed strategy
``alpha_i``, the equilibrium payoff ``U_i`` and one binary ``f_a`` per action.

1. ``sum alpha_i = 1`` (2.14); ``u_a`` is the payoff of action ``a`` against the other
   player's mixed strategy (2.15);
2. ``U_i >= u_a`` (2.16), the regret ``r_a = U_i - u_a`` (2.17);
3. ``alpha_i(a) <= 1 - f_a`` and ``r_a <= Delta_i f_a`` (2.18, 2.19), with
   ``Delta_i = max u_i - min u_i``: an action is either unused (``f = 1``) or a best
   response (``f = 0``, regret 0), so the feasible points are exactly the equilibria;
4. objective (Algorithm 4): maximise or minimise ``U_p``, or maximise ``U_0 + U_1``, or
   none; solved with HiGHS branch and bound (``scipy.optimize.milp``).
"""

from __future__ import annotations

import numpy as np

from solvers.errors import GameError
from solvers.matrix.selection import objective


def solve_mip(u0: np.ndarray, u1: np.ndarray, selection: str = "first") -> tuple[np.ndarray, np.ndarray]:
    """SOLVEMIP(G, p, max): (x, y), an equilibrium optimal for the selection rule."""
    m, n = u0.shape
    # variable layout: x[m], y[n], U0, U1, f0[m], f1[n]
    nx, ny, iu0, iu1 = 0, m, m + n, m + n + 1
    nf0, nf1, size = m + n + 2, 2 * m + n + 2, 2 * m + 2 * n + 2
    rows: list[np.ndarray] = []
    lower: list[float] = []
    upper: list[float] = []

    def add(row: np.ndarray, lo: float, hi: float) -> None:
        rows.append(row)
        lower.append(lo)
        upper.append(hi)

    for start, count in ((nx, m), (ny, n)):  # (2.14)
        row = np.zeros(size)
        row[start:start + count] = 1.0
        add(row, 1.0, 1.0)
    delta0 = float(u0.max() - u0.min())
    delta1 = float(u1.max() - u1.min())
    for a in range(m):  # player 0: regret of row a against y
        regret = np.zeros(size)
        regret[iu0] = 1.0
        regret[ny:ny + n] = -u0[a]
        add(regret, 0.0, np.inf)  # (2.16)
        bounded = regret.copy()
        bounded[nf0 + a] = -delta0
        add(bounded, -np.inf, 0.0)  # (2.19)
        support = np.zeros(size)
        support[nx + a] = support[nf0 + a] = 1.0
        add(support, -np.inf, 1.0)  # (2.18)
    for b in range(n):  # player 1: regret of column b against x
        regret = np.zeros(size)
        regret[iu1] = 1.0
        regret[nx:nx + m] = -u1[:, b]
        add(regret, 0.0, np.inf)
        bounded = regret.copy()
        bounded[nf1 + b] = -delta1
        add(bounded, -np.inf, 0.0)
        support = np.zeros(size)
        support[ny + b] = support[nf1 + b] = 1.0
        add(support, -np.inf, 1.0)
    cost = np.zeros(size)
    player, maximise = objective(selection)
    sign = -1.0 if maximise else 1.0
    if player == -1:
        cost[iu0] = cost[iu1] = sign
    elif player is not None:
        cost[iu0 + player] = sign
    # deferred: scipy.optimize (~0.7 s), as solvers.highs.linprog
    from scipy.optimize import Bounds, LinearConstraint, milp

    low = np.zeros(size)
    high = np.ones(size)
    low[[iu0, iu1]], high[[iu0, iu1]] = -np.inf, np.inf
    integrality = np.zeros(size)
    integrality[nf0:] = 1
    result = milp(cost, constraints=LinearConstraint(np.array(rows), lower, upper),
                  integrality=integrality, bounds=Bounds(low, high))
    if result.status != 0 or result.x is None:
        raise GameError(f"the MIP Nash program failed: {result.message}")
    x = np.clip(result.x[nx:nx + m], 0.0, None)
    y = np.clip(result.x[ny:ny + n], 0.0, None)
    return x / x.sum(), y / y.sum()
