"""Pure equilibria of bimatrix games (thesis Algorithms 1 and 2), batched with numpy.

1. Player 0's best responses: in every column ``j`` the rows whose ``u0`` is the column
   maximum (Algorithm 1, lines 2-11, keeps all tied maxima so none is skipped).
2. Player 1's best responses: in every row the columns whose ``u1`` is the row maximum.
3. The pure equilibria are the entries that are both (Algorithm 1 returns the first,
   GETPUREEQUILIBRIA all of them).
4. Algorithm 2: among all pure equilibria, the one best for the selection rule
   (:mod:`.selection`), ties to the first in row-major order.

Algorithm 1 scans column by column; we order equilibria row-major (player 0's action
first), the order the thesis' examples use (Example 4.3.8, Figure 4.5: (a, X) first).
Comparisons allow a tolerance ``tol`` (payoffs propagated from children are sums of
products and need it).
"""

from __future__ import annotations

import numpy as np

from solvers.matrix.selection import score


def tolerance(u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
    """Per-game absolute tolerance: 1e-9 of the payoff scale (at least 1e-9)."""
    scale = np.maximum(np.abs(u0).max(axis=(-2, -1)), np.abs(u1).max(axis=(-2, -1)))
    return 1e-9 * np.maximum(scale, 1.0)


def pure_equilibrium_mask(u0: np.ndarray, u1: np.ndarray, tol: np.ndarray | float) -> np.ndarray:
    """Boolean [..., m, n]: the entries that are pure equilibria."""
    tol = np.asarray(tol)[..., None, None]
    best0 = u0 >= u0.max(axis=-2, keepdims=True) - tol
    best1 = u1 >= u1.max(axis=-1, keepdims=True) - tol
    return best0 & best1


def pure_equilibria(u0: np.ndarray, u1: np.ndarray) -> list[tuple[int, int]]:
    """GETPUREEQUILIBRIA: all pure equilibria of one game, row-major."""
    u0, u1 = np.asarray(u0, float), np.asarray(u1, float)
    mask = pure_equilibrium_mask(u0, u1, tolerance(u0, u1))
    return [(int(i), int(j)) for i, j in zip(*np.nonzero(mask), strict=True)]


def select_pure(u0: np.ndarray, u1: np.ndarray, mask: np.ndarray, selection: str) -> np.ndarray:
    """[batch]: the flat index ``i * n + j`` of the selected pure equilibrium, -1 if none."""
    batch = mask.shape[0]
    flat = mask.reshape(batch, -1)
    rank = score(selection, u0, u1)
    if rank is None:
        choice = flat.argmax(axis=1)
    else:
        masked = np.where(flat, rank.reshape(batch, -1), -np.inf)
        choice = masked.argmax(axis=1)
    return np.where(flat.any(axis=1), choice, -1)
