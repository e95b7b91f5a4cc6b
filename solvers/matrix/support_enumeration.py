"""Support enumeration for small bimatrix games, batched over a stack of games.

(Porter, Nudelman, Shoham 2004; Nisan et al., *Algorithmic Game Theory*, 3.2.) For
every pair of supports ``S0``, ``S1`` of equal size ``k >= 2`` (pure profiles, ``k = 1``,
are found before this by :mod:`.pure`), in order of ``k`` and then lexicographically:

1. solve ``u0[S0, S1] y_S1 = v``, ``sum y = 1`` (player 1 makes player 0 indifferent
   on ``S0``) and ``x_S0^T u1[S0, S1] = w``, ``sum x = 1``, for all games at once;
2. keep the solutions with ``x, y >= 0`` where no action outside the supports pays
   more (the support lemma, thesis Lemma 2.1.12): those are equilibria;
3. per game, keep the first one (selection ``first``) or the best for the rule.

In a non-degenerate game every equilibrium has supports of equal size, so this finds
all of them; a degenerate game may have none with equal supports, and the caller then
falls back to the LP or the MIP (``found`` is false).
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np

from .selection import score


def support_pairs(m: int, n: int) -> int:
    """How many support pairs of size >= 2 the enumeration visits."""
    return sum(comb(m, k) * comb(n, k) for k in range(2, min(m, n) + 1))


def _indifference(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Solve ``a p = v 1``, ``sum p = 1`` for stacked square ``a``: (p, v, solvable)."""
    b, k, _ = a.shape
    system = np.zeros((b, k + 1, k + 1))
    system[:, :k, :k] = a
    system[:, :k, k] = -1.0
    system[:, k, :k] = 1.0
    rhs = np.zeros((b, k + 1))
    rhs[:, k] = 1.0
    scale = np.maximum(np.abs(a).max(axis=(1, 2)), 1.0)
    det = np.linalg.det(system / scale[:, None, None])
    solvable = np.abs(det) > 1e-12
    system[~solvable] = np.eye(k + 1)
    solution = np.linalg.solve(system, rhs[..., None])[..., 0]
    return solution[:, :k], solution[:, k], solvable


def support_enumeration(u0: np.ndarray, u1: np.ndarray, selection: str, tol: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x [b, m], y [b, n], values [b, 2], found [b]) for a stack of games [b, m, n]."""
    b, m, n = u0.shape
    x_best, y_best = np.zeros((b, m)), np.zeros((b, n))
    values = np.zeros((b, 2))
    found = np.zeros(b, dtype=bool)
    best = np.full(b, -np.inf)
    for k in range(2, min(m, n) + 1):
        for s0 in combinations(range(m), k):
            for s1 in combinations(range(n), k):
                active = np.flatnonzero(~found) if selection == "first" else np.arange(b)
                if active.size == 0:
                    return x_best, y_best, values, found
                a0, a1 = u0[active], u1[active]
                ix = np.ix_(np.arange(active.size), s0, s1)
                y_s, _, ok_y = _indifference(a0[ix])
                x_s, _, ok_x = _indifference(np.swapaxes(a1[ix], 1, 2))
                t = tol[active]
                ok = ok_x & ok_y & (x_s >= -t[:, None]).all(1) & (y_s >= -t[:, None]).all(1)
                x = np.zeros((active.size, m))
                y = np.zeros((active.size, n))
                x[:, s0] = np.clip(x_s, 0.0, None)
                y[:, s1] = np.clip(y_s, 0.0, None)
                x /= np.where(ok, x.sum(1), 1.0)[:, None]
                y /= np.where(ok, y.sum(1), 1.0)[:, None]
                rows = np.einsum("bij,bj->bi", a0, y)
                cols = np.einsum("bi,bij->bj", x, a1)
                v0 = np.einsum("bi,bi->b", x, rows)
                v1 = np.einsum("bj,bj->b", cols, y)
                ok &= (rows.max(1) <= v0 + 10 * t) & (cols.max(1) <= v1 + 10 * t)
                rank = score(selection, v0, v1)
                better = ok if rank is None else ok & (rank > best[active] + t)
                take = active[better]
                x_best[take], y_best[take] = x[better], y[better]
                values[take, 0], values[take, 1] = v0[better], v1[better]
                found[take] = True
                if rank is not None:
                    best[take] = rank[better]
    return x_best, y_best, values, found
