"""Iterated elimination of strictly dominated actions, batched over a stack of games.

For games ``u0, u1`` [b, m, n] with per-game tolerances ``tol`` [b]:

1. start with every row and column alive;
2. a row ``i`` is strictly dominated when some other alive row ``i'`` pays player 0
   more than ``tol`` above it against every alive column (``u0[i', j] > u0[i, j] +
   tol``); a column likewise for player 1 along the alive rows;
3. remove every dominated row and column of every game at once (strict dominance is
   transitive, so some undominated alive action dominates each removed one) and
   repeat until no game changes.

No equilibrium plays a strictly dominated action, so the reduced game has the same
equilibria (and, in zero-sum games, the same value); the block LP then solves smaller
programs. Games are processed in chunks so the [b, m, m, n] comparison stays small.
"""

from __future__ import annotations

import numpy as np

#: games per chunk are capped so a comparison holds about this many booleans
CHUNK_CELLS = 4_000_000


def _dominated(u: np.ndarray, alive: np.ndarray, other: np.ndarray, tol: np.ndarray) -> np.ndarray:
    """[b, k]: actions (axis -2 of ``u`` [b, k, l]) strictly dominated by an alive one."""
    # beats[g, a, d, :]: action a pays more than action d against each alive opponent action
    beats = (u[:, :, None, :] > u[:, None, :, :] + tol[:, None, None, None]) | ~other[:, None, None, :]
    dominates = beats.all(axis=-1) & alive[:, :, None]
    return dominates.any(axis=1) & alive


def eliminate_dominated(u0: np.ndarray, u1: np.ndarray, tol: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
    """(rows [b, m], cols [b, n]) bool: the actions that survive iterated strict dominance."""
    b, m, n = u0.shape
    rows = np.ones((b, m), dtype=bool)
    cols = np.ones((b, n), dtype=bool)
    chunk = max(1, CHUNK_CELLS // (max(m, n) ** 2 * max(m, n)))
    u1t = np.swapaxes(u1, 1, 2)
    for start in range(0, b, chunk):
        part = slice(start, start + chunk)
        r, c, t = rows[part], cols[part], tol[part]
        for _ in range(m + n):
            drop_r = _dominated(u0[part], r, c, t)
            drop_c = _dominated(u1t[part], c, r, t)
            if not (drop_r.any() or drop_c.any()):
                break
            r &= ~drop_r
            c &= ~drop_c
    return rows, cols
