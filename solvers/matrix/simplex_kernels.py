"""Compiled (numba) tableau simplex for many small zero-sum games in one call.

:func:`solve_zero_sum_batch` runs :func:`.simplex.solve_zero_sum`'s algorithm (slack
basis, Bland's rule, no phase one) on every game of a padded stack ``u`` [b, m, n]
restricted to its alive ``rows`` and ``cols``, one game after another in compiled
code: a 6x6 game takes microseconds, where a HiGHS call costs tens of microseconds
per game even pooled in a block LP and a ``linprog`` call milliseconds of wrapper.

The strategies are a basic solution (a vertex), exact to rounding; each game comes
back with its larger best pure deviation gain relative to the payoff scale
(``inf`` when the simplex failed or needed more than ``MAX_PIVOTS`` pivots), so
the caller sends a game over ``GAIN_TOLERANCE`` to its block LP and polishes
(:mod:`.polish_batch`) those over rounding. Imported only through :func:`load` (numba's
import and the disk-cached kernel cost about half a second once per process).
"""

from __future__ import annotations

import numpy as np
from numba import njit

MAX_PIVOTS = 10_000  # a guard: Bland's rule terminates long before on these sizes
GAIN_TOLERANCE = 1e-11


@njit(cache=True, nogil=True)
def solve_one(a: np.ndarray, tableau: np.ndarray, basis: np.ndarray,
               x: np.ndarray, y: np.ndarray) -> float:
    """Fill ``x`` [mr], ``y`` [nc] for the alive game ``a`` [mr, nc]; the relative
    deviation gain (``inf`` if it failed)."""
    mr, nc = a.shape
    width = nc + mr + 1
    low = a[0, 0]
    high = a[0, 0]
    for i in range(mr):
        for j in range(nc):
            low = min(low, a[i, j])
            high = max(high, a[i, j])
    shift = 1.0 - low
    t = tableau[:mr + 1, :width]
    t[:, :] = 0.0
    for i in range(mr):
        for j in range(nc):
            t[i, j] = a[i, j] + shift
        t[i, nc + i] = 1.0
        t[i, width - 1] = 1.0
        basis[i] = nc + i
    for j in range(nc):
        t[mr, j] = -1.0
    tol = 1e-12 * max(1.0, high + shift)
    last = width - 1
    for _ in range(MAX_PIVOTS):
        col = -1
        for j in range(last):
            if t[mr, j] < -tol:
                col = j
                break
        if col < 0:
            break
        best = np.inf
        for r in range(mr):
            if t[r, col] > tol:
                ratio = t[r, last] / t[r, col]
                if ratio < best:
                    best = ratio
        if best == np.inf:
            return np.inf      # unbounded: impossible with positive payoffs
        row = -1
        for r in range(mr):   # ties in the ratio test: the smallest basic variable
            if t[r, col] > tol and t[r, last] / t[r, col] <= best + tol * max(1.0, abs(best)):
                if row < 0 or basis[r] < basis[row]:
                    row = r
        pivot = t[row, col]
        for j in range(width):
            t[row, j] /= pivot
        for r in range(mr + 1):
            if r != row:
                factor = t[r, col]
                if factor != 0.0:
                    for j in range(width):
                        t[r, j] -= factor * t[row, j]
        basis[row] = col
    else:
        return np.inf
    y[:] = 0.0
    for r in range(mr):
        if basis[r] < nc:
            y[basis[r]] = max(t[r, last], 0.0)
    for i in range(mr):
        x[i] = max(t[mr, nc + i], 0.0)
    sx = x.sum()
    sy = y.sum()
    if not (sx > 0.0 and sy > 0.0):
        return np.inf
    x /= sx
    y /= sy
    # the check: neither player gains by a pure deviation
    value = 0.0
    for i in range(mr):
        for j in range(nc):
            value += x[i] * a[i, j] * y[j]
    gain = 0.0
    for i in range(mr):
        row_pay = 0.0
        for j in range(nc):
            row_pay += a[i, j] * y[j]
        gain = max(gain, row_pay - value)
    for j in range(nc):
        col_pay = 0.0
        for i in range(mr):
            col_pay += x[i] * a[i, j]
        gain = max(gain, value - col_pay)
    return gain / max(1.0, high - low, abs(high), abs(low))


@njit(cache=True, nogil=True)
def solve_zero_sum_batch(u: np.ndarray, rows: np.ndarray, cols: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x [b, m], y [b, n], gain [b]): maximin/minimax strategies of the zero-sum
    games ``u`` [b, m, n] (player 0's payoffs) on their alive ``rows`` [b, m] and
    ``cols``, and their relative deviation gains."""
    b, m, n = u.shape
    x = np.zeros((b, m))
    y = np.zeros((b, n))
    gain = np.full(b, np.inf)
    tableau = np.empty((m + 1, n + m + 1))
    basis = np.empty(m, dtype=np.int64)
    a = np.empty((m, n))
    gx = np.empty(m)
    gy = np.empty(n)
    ri = np.empty(m, dtype=np.int64)
    ci = np.empty(n, dtype=np.int64)
    for g in range(b):
        mr = 0
        for i in range(m):
            if rows[g, i]:
                ri[mr] = i
                mr += 1
        nc = 0
        for j in range(n):
            if cols[g, j]:
                ci[nc] = j
                nc += 1
        if mr == 0 or nc == 0:
            continue
        sub = a[:mr, :nc]
        for i in range(mr):
            for j in range(nc):
                sub[i, j] = u[g, ri[i], ci[j]]
        gain[g] = solve_one(sub, tableau, basis, gx[:mr], gy[:nc])
        if gain[g] < np.inf:
            for i in range(mr):
                x[g, ri[i]] = gx[i]
            for j in range(nc):
                y[g, ci[j]] = gy[j]
    return x, y, gain


def warm_up() -> None:
    """Compile (or load from the disk cache) the kernel on a tiny game."""
    u = np.array([[[1.0, -1.0], [-1.0, 1.0]]])
    solve_zero_sum_batch(u, np.ones((1, 2), dtype=np.bool_), np.ones((1, 2), dtype=np.bool_))
