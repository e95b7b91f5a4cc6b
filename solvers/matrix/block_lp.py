"""Many zero-sum matrix games in one LP: their programs side by side (block diagonal).

For games ``u`` [b, m, n] (player 0's payoffs; constant-sum games are zero-sum after a
shift) with alive rows and columns (after :mod:`.dominance`):

1. per game ``g``, shift its payoffs so the smallest is 1 (``A = u - min u + 1``: the
   value is then at least 1) and write the classic program on its alive actions:
   minimise ``sum p`` subject to ``sum_i p(i) A[i, j] >= 1`` for every alive column
   ``j``, ``p >= 0``; then ``x = p / sum p`` is a maximin strategy of player 0 (value
   ``1 / sum p``, shifted back). No equality and no free variable: HiGHS solves it
   about twice as fast as the program of :mod:`.lp` (measured here);
2. stack up to ``block_games`` games into one sparse LP minimising the sum over the
   games: the blocks share no variable or constraint and the objective is separable,
   so an optimum of the stack is optimal in every block (one HiGHS call instead of
   ``b``; presolve, which finds nothing to remove, is off);
3. read player 1's strategy from the duals of game ``g``'s column constraints
   (``res.ineqlin.marginals``: the dual is player 1's minimax program), normalised; a
   game whose duals are unusable, or a block HiGHS fails on, falls back to the
   per-game :func:`.lp.maximin`.

The caller polishes the strategies (:mod:`.polish_batch`) so they are exact to
rounding error, not HiGHS' tolerances.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix

from solvers.highs import linprog
from solvers.matrix.lp import HIGHS_OPTIONS, maximin

#: games per HiGHS call (simplex work grows faster than linearly with the block:
#: measured here, 256 4x4 to 9x9 games per call beat 32 and 2,000), and matrix
#: entries per call for larger games
BLOCK_GAMES = 256
BLOCK_ENTRIES = 20_000
_BLOCK_OPTIONS = {**HIGHS_OPTIONS, "presolve": False}


def _solve_block(u: np.ndarray, rows: np.ndarray, cols: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x [b, m], y [b, n], ok [b]) for one block of games."""
    b, m, n = u.shape
    alive = rows[:, :, None] & cols[:, None, :]
    low = np.where(alive, u, np.inf).min(axis=(1, 2))
    shifted = u - low[:, None, None] + 1.0
    g, i, j = np.nonzero(alive)
    # one variable per alive row and one constraint per alive column, numbered in order
    var = np.cumsum(rows.reshape(-1)) - 1
    con = np.cumsum(cols.reshape(-1)) - 1
    n_vars, n_cons = int(var[-1]) + 1, int(con[-1]) + 1
    upper = coo_matrix((-shifted[g, i, j], (con[g * n + j], var[g * m + i])),
                       shape=(n_cons, n_vars)).tocsc()
    res = linprog(np.ones(n_vars), A_ub=upper, b_ub=-np.ones(n_cons), bounds=(0.0, None),
                  method="highs", options=_BLOCK_OPTIONS)
    if res.status != 0:
        return np.zeros((b, m)), np.zeros((b, n)), np.zeros(b, dtype=bool)
    x, y = np.zeros(b * m), np.zeros(b * n)
    x[rows.reshape(-1)] = np.clip(res.x, 0.0, None)
    y[cols.reshape(-1)] = np.clip(-res.ineqlin.marginals, 0.0, None)
    x, y = x.reshape(b, m), y.reshape(b, n)
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
