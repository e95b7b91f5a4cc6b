"""GETEQUILIBRIUM for all nodes of a level at once: the scale path's matrix solver.

For a stack of games ``u0, u1`` [b, m, n] of one shape (the nodes of one level, or a
chunk of it):

1. pure equilibria for all games at once, chosen by the selection rule by the same
   code as :func:`.equilibrium.solve_batch` (:func:`.equilibrium.pure_step`), so
   values are identical wherever a pure equilibrium is kept;
2. general-sum games left without one take today's per-game path
   (:func:`.equilibrium.solve_batch`: closed form, support enumeration, MIP), so the
   selection rule picks the same mixed equilibrium as before;
3. constant-sum games left: iterated elimination of strictly dominated rows and
   columns (:mod:`.dominance`), all games together;
4. those reduced to 2x2 by the closed form (:mod:`.closed_form`), vectorised; a
   result that is not a distribution (a degenerate game) goes on to step 5;
5. the rest in block LPs (:mod:`.block_lp`: many games per HiGHS call), then
   polished (:mod:`.polish_batch`).

Constant-sum games have a unique value, so steps 3-5 give the values of the per-game
LP; only which optimal strategies are kept may differ.
"""

from __future__ import annotations

import numpy as np

from .block_lp import solve_block_lp
from .closed_form import solve_2x2
from .dominance import eliminate_dominated
from .equilibrium import CLOSED_FORM, LP, MatrixSolutions, is_constant_sum, pure_step, solve_batch
from .polish_batch import polish_batch
from .pure import tolerance
from .selection import check_selection


def _closed_form_reduced(u0: np.ndarray, u1: np.ndarray, rows: np.ndarray, cols: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, y, ok) for games whose alive actions form a 2x2 game (step 4)."""
    b, m, n = u0.shape
    r = np.nonzero(rows)[1].reshape(b, 2)
    c = np.nonzero(cols)[1].reshape(b, 2)
    g = np.arange(b)[:, None, None]
    sx, sy, _ = solve_2x2(u0[g, r[:, :, None], c[:, None, :]], u1[g, r[:, :, None], c[:, None, :]])
    ok = np.isfinite(sx).all(axis=1) & np.isfinite(sy).all(axis=1)
    ok &= (sx >= 0).all(axis=1) & (sy >= 0).all(axis=1)
    x, y = np.zeros((b, m)), np.zeros((b, n))
    x[np.arange(b)[:, None], r] = np.where(ok[:, None], sx, 0.0)
    y[np.arange(b)[:, None], c] = np.where(ok[:, None], sy, 0.0)
    return x, y, ok


def solve_level_batch(u0: np.ndarray, u1: np.ndarray, selection: str = "first") -> MatrixSolutions:
    """Equilibria of a stack of games [b, m, n] (see the module docstring)."""
    check_selection(selection)
    b, m, n = u0.shape
    tol = tolerance(u0, u1)
    sol, rest = pure_step(u0, u1, tol, selection)
    if rest.size == 0:
        return sol
    x, y, values, method = sol.x, sol.y, sol.values, sol.method

    constant = is_constant_sum(u0[rest], u1[rest], tol[rest])
    general = rest[~constant]
    if general.size:
        sol = solve_batch(u0[general], u1[general], selection)
        x[general], y[general], values[general], method[general] = sol.x, sol.y, sol.values, sol.method
    zero = rest[constant]
    if zero.size:
        a0, a1 = u0[zero], u1[zero]
        rows, cols = eliminate_dominated(a0, a1, tol[zero])
        zx, zy = np.zeros((zero.size, m)), np.zeros((zero.size, n))
        zmethod = np.full(zero.size, LP, dtype=np.int8)
        small = np.flatnonzero((rows.sum(axis=1) == 2) & (cols.sum(axis=1) == 2))
        if small.size:
            sx, sy, ok = _closed_form_reduced(a0[small], a1[small], rows[small], cols[small])
            done = small[ok]
            zx[done], zy[done], zmethod[done] = sx[ok], sy[ok], CLOSED_FORM
        lp = np.flatnonzero(zmethod == LP)
        if lp.size:
            lx, ly = solve_block_lp(a0[lp], rows[lp], cols[lp])
            zx[lp], zy[lp] = polish_batch(a0[lp], a1[lp], lx, ly)
        x[zero], y[zero], method[zero] = zx, zy, zmethod
        values[zero, 0] = np.einsum("bi,bij,bj->b", zx, a0, zy)
        values[zero, 1] = np.einsum("bi,bij,bj->b", zx, a1, zy)
    return MatrixSolutions(x, y, values, method)
