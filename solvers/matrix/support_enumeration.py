"""Support enumeration for small bimatrix games, batched over a stack of games.

(Porter, Nudelman, Shoham 2004; Nisan et al., *Algorithmic Game Theory*, 3.2.) For
every pair of supports ``S0``, ``S1`` of equal size ``k >= 2`` (pure profiles, ``k = 1``,
are found before this by :mod:`.pure`), in order of ``k`` and then lexicographically:

1. solve ``u0[S0, S1] y_S1 = v``, ``sum y = 1`` (player 1 makes player 0 indifferent
   on ``S0``) and ``x_S0^T u1[S0, S1] = w``, ``sum x = 1``, for all games and all
   support pairs of one size at once;
2. keep the solutions with ``x, y >= 0`` where no action outside the supports pays
   more (the support lemma, thesis Lemma 2.1.12): those are equilibria;
3. per game, keep the first one (selection ``first``) or the best for the rule.

In a non-degenerate game every equilibrium has supports of equal size, so this finds
all of them; a degenerate game may have none with equal supports, and the caller then
falls back to the LP or the MIP (``found`` is false).
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations
from math import comb

import numpy as np

from .selection import score


def support_pairs(m: int, n: int) -> int:
    """How many support pairs of size >= 2 the enumeration visits."""
    return sum(comb(m, k) * comb(n, k) for k in range(2, min(m, n) + 1))


@lru_cache(maxsize=256)
def _pairs(m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """All support pairs of size ``k`` in enumeration order: rows [P, k], columns [P, k]."""
    rows, cols = [], []
    for s0 in combinations(range(m), k):
        for s1 in combinations(range(n), k):
            rows.append(s0)
            cols.append(s1)
    return np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)


def _indifference(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Solve ``a p = v 1``, ``sum p = 1`` for stacked square ``a`` [..., k, k]: (p, solvable)."""
    k = a.shape[-1]
    system = np.zeros(a.shape[:-2] + (k + 1, k + 1))
    system[..., :k, :k] = a
    system[..., :k, k] = -1.0
    system[..., k, :k] = 1.0
    scale = np.maximum(np.abs(a).max(axis=(-2, -1)), 1.0)
    solvable = np.abs(np.linalg.det(system / scale[..., None, None])) > 1e-12
    system[~solvable] = np.eye(k + 1)
    rhs = np.zeros(a.shape[:-2] + (k + 1, 1))
    rhs[..., k, 0] = 1.0
    return np.linalg.solve(system, rhs)[..., :k, 0], solvable


def support_enumeration(u0: np.ndarray, u1: np.ndarray, selection: str, tol: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x [b, m], y [b, n], values [b, 2], found [b]) for a stack of games [b, m, n].

    All support pairs of one size are solved in one batched linear solve.
    """
    b, m, n = u0.shape
    x_best, y_best = np.zeros((b, m)), np.zeros((b, n))
    values = np.zeros((b, 2))
    found = np.zeros(b, dtype=bool)
    best = np.full(b, -np.inf)
    for k in range(2, min(m, n) + 1):
        active = np.flatnonzero(~found) if selection == "first" else np.arange(b)
        if active.size == 0:
            break
        rows, cols = _pairs(m, n, k)
        pairs = len(rows)
        a0, a1 = u0[active], u1[active]
        sub = (slice(None), rows[:, :, None], cols[:, None, :])  # -> [b, P, k, k]
        y_s, ok_y = _indifference(a0[sub])
        x_s, ok_x = _indifference(np.swapaxes(a1[sub], -1, -2))
        t = tol[active][:, None]
        ok = ok_x & ok_y & (x_s >= -t[..., None]).all(-1) & (y_s >= -t[..., None]).all(-1)
        x = np.zeros((active.size, pairs, m))
        y = np.zeros((active.size, pairs, n))
        np.put_along_axis(x, np.broadcast_to(rows, x_s.shape), np.clip(x_s, 0.0, None), axis=2)
        np.put_along_axis(y, np.broadcast_to(cols, y_s.shape), np.clip(y_s, 0.0, None), axis=2)
        x /= np.where(ok, x.sum(-1), 1.0)[..., None]
        y /= np.where(ok, y.sum(-1), 1.0)[..., None]
        row_pay = np.einsum("bij,bpj->bpi", a0, y)
        col_pay = np.einsum("bpi,bij->bpj", x, a1)
        v0 = np.einsum("bpi,bpi->bp", x, row_pay)
        v1 = np.einsum("bpj,bpj->bp", col_pay, y)
        ok &= (row_pay.max(-1) <= v0 + 10 * t) & (col_pay.max(-1) <= v1 + 10 * t)
        rank = score(selection, v0, v1)
        if rank is None:
            pick = ok.argmax(axis=1)  # the first valid pair
            better = ok.any(axis=1)
        else:
            ranked = np.where(ok, rank, -np.inf)
            pick = ranked.argmax(axis=1)
            better = ok.any(axis=1) & (ranked.max(axis=1) > best[active] + tol[active])
        g = np.flatnonzero(better)
        take, p = active[g], pick[g]
        x_best[take], y_best[take] = x[g, p], y[g, p]
        values[take, 0], values[take, 1] = v0[g, p], v1[g, p]
        found[take] = True
        if rank is not None:
            best[take] = rank[g, p]
    return x_best, y_best, values, found
