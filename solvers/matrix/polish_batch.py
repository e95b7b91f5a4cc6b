"""Polishing many equilibria at once: exact indifference on the supports (batched).

:func:`.equilibrium.polish` for a stack of games ``u0, u1`` [b, m, n] and strategies
``x`` [b, m], ``y`` [b, n] from an LP:

1. the supports ``S0 = {x > 1e-7}``, ``S1 = {y > 1e-7}``; games are grouped by the
   support sizes ``(|S0|, |S1|)`` so each group is one stack of small systems;
2. per group, solve ``u0[S0, S1] y = v 1, sum y = 1`` and ``x^T u1[S0, S1] = w 1,
   sum x = 1``: directly when the supports have equal sizes and no system of the
   stack is singular, else by least squares (the pseudo-inverse of the stacked
   systems: the minimum-norm solution, as ``numpy.linalg.lstsq`` for one game);
3. keep the polished pair where it is a distribution (no negative entry) and its
   larger deviation gain is at most the LP pair's.

The strategies are then exact to rounding error (certificates ~1e-12), not to
HiGHS' 1e-7 tolerances.
"""

from __future__ import annotations

import numpy as np


def deviation_gains(u0: np.ndarray, u1: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """[b]: the larger of the two players' best pure deviation gains at ``(x, y)``."""
    rows = np.einsum("bij,bj->bi", u0, y)
    cols = np.einsum("bi,bij->bj", x, u1)
    gain0 = rows.max(axis=1) - np.einsum("bi,bi->b", x, rows)
    gain1 = cols.max(axis=1) - np.einsum("bj,bj->b", cols, y)
    return np.maximum(gain0, gain1)


def _indifferent(a: np.ndarray) -> np.ndarray:
    """[g, k_cols]: least-squares ``p`` with ``a p = v 1``, ``sum p = 1`` for ``a`` [g, kr, kc]."""
    g, k_rows, k_cols = a.shape
    system = np.zeros((g, k_rows + 1, k_cols + 1))
    system[:, :k_rows, :k_cols] = a
    system[:, :k_rows, k_cols] = -1.0
    system[:, k_rows, :k_cols] = 1.0
    rhs = np.zeros(k_rows + 1)
    rhs[-1] = 1.0
    if k_rows == k_cols:   # equal supports (non-degenerate games): a square system
        with np.errstate(all="ignore"):
            try:
                return np.linalg.solve(system, np.broadcast_to(rhs, (g, k_rows + 1))[..., None])[:, :k_cols, 0]
            except np.linalg.LinAlgError:
                pass       # a singular one in the stack: least squares for all
    return (np.linalg.pinv(system) @ rhs)[:, :k_cols]


def polish_batch(u0: np.ndarray, u1: np.ndarray, x: np.ndarray, y: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) polished where that is at least as good (see the module docstring)."""
    x, y = x.copy(), y.copy()
    s0, s1 = x > 1e-7, y > 1e-7
    k0, k1 = s0.sum(axis=1), s1.sum(axis=1)
    codes = k0 * (y.shape[1] + 1) + k1
    for code in np.unique(codes):
        games = np.flatnonzero(codes == code)
        a, c = int(k0[games[0]]), int(k1[games[0]])
        i0 = np.nonzero(s0[games])[1].reshape(-1, a)
        i1 = np.nonzero(s1[games])[1].reshape(-1, c)
        g = games[:, None, None]
        sub0 = u0[g, i0[:, :, None], i1[:, None, :]]
        sub1 = u1[g, i0[:, :, None], i1[:, None, :]]
        px_s = _indifferent(np.swapaxes(sub1, 1, 2))
        py_s = _indifferent(sub0)
        good = (px_s.min(axis=1) >= 0) & (py_s.min(axis=1) >= 0)
        good &= (px_s.sum(axis=1) > 0) & (py_s.sum(axis=1) > 0)
        if not good.any():
            continue
        games, i0, i1 = games[good], i0[good], i1[good]
        px, py = np.zeros((games.size, x.shape[1])), np.zeros((games.size, y.shape[1]))
        rows = np.arange(games.size)[:, None]
        px[rows, i0] = px_s[good] / px_s[good].sum(axis=1, keepdims=True)
        py[rows, i1] = py_s[good] / py_s[good].sum(axis=1, keepdims=True)
        better = (deviation_gains(u0[games], u1[games], px, py)
                  <= deviation_gains(u0[games], u1[games], x[games], y[games]))
        x[games[better]], y[games[better]] = px[better], py[better]
    return x, y
