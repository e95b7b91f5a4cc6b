"""Many zero-sum matrix games in one LP: the maximin programs side by side (block diagonal).

For games ``u`` [b, m, n] (player 0's payoffs; constant-sum games are zero-sum after a
shift) with alive rows and columns (after :mod:`.dominance`):

1. per game ``g`` the maximin program of :mod:`.lp` on its alive actions: variables
   ``alpha_g`` (alive rows) and ``v_g``; ``v_g - sum_i alpha_g(i) u[g, i, j] <= 0`` for
   every alive column ``j``; ``sum alpha_g = 1``;
2. stack up to ``block_games`` games into one sparse LP maximising ``sum_g v_g``: the
   blocks share no variable or constraint and the objective is separable, so an
   optimum of the stack is optimal in every block (one HiGHS call instead of ``b``);
3. read player 0's strategy from the primal ``alpha_g`` and player 1's from the duals
   of game ``g``'s column constraints (``-res.ineqlin.marginals``), normalised; a
   game whose duals are unusable, or a block HiGHS fails on, falls back to the
   per-game :func:`.lp.maximin`.

The caller polishes the strategies (:func:`polish_batch`) so they are exact to
rounding error, not HiGHS' tolerances.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import coo_matrix

from .lp import _OPTIONS, maximin

#: games per HiGHS call (simplex work grows faster than linearly with the block:
#: measured here, 256 5x5 or 9x9 games per call beat 32 and 2,000), and matrix
#: entries per call for larger games
BLOCK_GAMES = 256
BLOCK_ENTRIES = 20_000


def _ranks(alive: np.ndarray) -> np.ndarray:
    """[b, k]: position of each alive action among its game's alive actions."""
    return np.cumsum(alive, axis=1) - 1


def _solve_block(u: np.ndarray, rows: np.ndarray, cols: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x [b, m], y [b, n], ok [b]) for one block of games."""
    b, m, n = u.shape
    r, c = rows.sum(axis=1), cols.sum(axis=1)
    var_start = np.cumsum(r + 1) - (r + 1)
    con_start = np.cumsum(c) - c
    var = var_start[:, None] + _ranks(rows)        # [b, m]
    value_var = var_start + r                      # [b]
    con = con_start[:, None] + _ranks(cols)        # [b, n]
    g, i, j = np.nonzero(rows[:, :, None] & cols[:, None, :])
    gc, jc = np.nonzero(cols)
    gr, ir = np.nonzero(rows)
    n_vars, n_cons = int(var_start[-1] + r[-1] + 1), int(c.sum())
    upper = coo_matrix((np.concatenate([-u[g, i, j], np.ones(gc.size)]),
                        (np.concatenate([con[g, j], con[gc, jc]]),
                         np.concatenate([var[g, i], value_var[gc]]))), shape=(n_cons, n_vars))
    equal = coo_matrix((np.ones(gr.size), (gr, var[gr, ir])), shape=(b, n_vars))
    cost = np.zeros(n_vars)
    cost[value_var] = -1.0
    bounds = np.zeros((n_vars, 2))
    bounds[:, 1] = np.inf
    bounds[value_var, 0] = -np.inf
    res = linprog(cost, A_ub=upper.tocsc(), b_ub=np.zeros(n_cons), A_eq=equal.tocsc(),
                  b_eq=np.ones(b), bounds=bounds, method="highs", options=_OPTIONS)
    x, y = np.zeros((b, m)), np.zeros((b, n))
    if res.status != 0:
        return x, y, np.zeros(b, dtype=bool)
    x[gr, ir] = np.clip(res.x[var[gr, ir]], 0.0, None)
    y[gc, jc] = np.clip(-res.ineqlin.marginals[con[gc, jc]], 0.0, None)
    sx, sy = x.sum(axis=1), y.sum(axis=1)
    ok = (sx > 0) & (sy > 0)
    x[ok] /= sx[ok, None]
    y[ok] /= sy[ok, None]
    return x, y, ok


def solve_block_lp(u: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                   block_games: int = BLOCK_GAMES) -> tuple[np.ndarray, np.ndarray]:
    """(x [b, m], y [b, n]): maximin/minimax strategies of the zero-sum games ``u``
    restricted to their alive ``rows`` and ``cols`` (see the module docstring)."""
    b, m, n = u.shape
    block_games = max(1, min(block_games, BLOCK_ENTRIES // (m * n)))
    x, y = np.zeros((b, m)), np.zeros((b, n))
    for start in range(0, b, block_games):
        part = slice(start, start + block_games)
        bx, by, ok = _solve_block(u[part], rows[part], cols[part])
        x[part], y[part] = bx, by
        for k in np.flatnonzero(~ok) + start:  # rare: the per-game program answers
            sub = np.ix_(np.flatnonzero(rows[k]), np.flatnonzero(cols[k]))
            alpha, _, beta = maximin(u[k][sub])
            x[k], y[k] = 0.0, 0.0
            x[k, sub[0][:, 0]], y[k, sub[1][0]] = alpha, beta
    return x, y
