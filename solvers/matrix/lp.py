"""Zero-sum (and constant-sum) matrix games by the maximin LP (thesis Algorithm 3, 2.4-2.7).

For player ``i`` with payoff matrix ``u_i`` (rows = his actions):

1. maximise ``u*`` subject to ``alpha >= 0``, ``sum alpha = 1`` and
   ``sum_a alpha(a) u_i(a, b) >= u*`` for every opponent action ``b`` (2.4-2.7);
2. solve it with HiGHS (``scipy.optimize.linprog``); player 1's program (with ``u_1``
   transposed) is the dual of player 0's, so its solution is read from the duals of
   the same call;
3. the pair of maximinimisers is an equilibrium with value ``u*`` for player 0.

A constant-sum game (``u0 + u1 = c``) is the zero-sum game ``(u0, -u0)`` shifted by
``c``, so the same two programs solve it. Tolerances are tightened so the strategies
are accurate well beyond the certificate's 1e-9.
"""

from __future__ import annotations

import numpy as np

from solvers.errors import GameError
from solvers.highs import linprog

HIGHS_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


def maximin(payoff: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
    """(maximin strategy of the row player, his guaranteed value, the column player's
    minimax strategy) for ``payoff`` [m, n].

    The column player's strategy is the dual solution of the same LP (the multipliers
    of the ``n`` constraints 2.7), so one HiGHS call solves both programs of Algorithm 3.
    """
    m, n = payoff.shape
    cost = np.zeros(m + 1)
    cost[-1] = -1.0  # maximise u*
    upper = np.hstack([-payoff.T, np.ones((n, 1))])  # u* - sum_a alpha(a) u(a, b) <= 0
    equal = np.hstack([np.ones((1, m)), np.zeros((1, 1))])
    bounds = [(0.0, None)] * m + [(None, None)]
    result = linprog(cost, A_ub=upper, b_ub=np.zeros(n), A_eq=equal, b_eq=[1.0],
                     bounds=bounds, method="highs", options=HIGHS_OPTIONS)
    if result.status != 0:
        raise GameError(f"the maximin LP failed: {result.message}")
    alpha = np.clip(result.x[:m], 0.0, None)
    beta = np.clip(-result.ineqlin.marginals, 0.0, None)
    if beta.sum() <= 0:  # no usable dual: solve the column player's program too
        beta = maximin(-payoff.T)[0]
    return alpha / alpha.sum(), float(result.x[-1]), beta / beta.sum()


def solve_lp(u0: np.ndarray, u1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SOLVELP: (x, y) for a zero- or constant-sum game (``u1 = c - u0``)."""
    x, _, y = maximin(u0)
    return x, y
