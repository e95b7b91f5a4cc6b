"""The mixed equilibrium of 2x2 games without a pure one, in closed form (batched).

A 2x2 game without a pure equilibrium has strict preferences that cycle, hence a
unique, completely mixed equilibrium where each player makes the other indifferent
(support lemma, thesis Lemma 2.1.12):

1. ``y = (u0[1,1] - u0[0,1]) / (u0[0,0] - u0[0,1] - u0[1,0] + u0[1,1])`` makes player 0
   indifferent between his rows (``y`` = probability of column 0);
2. ``x = (u1[1,1] - u1[1,0]) / (u1[0,0] - u1[0,1] - u1[1,0] + u1[1,1])`` makes player 1
   indifferent between her columns;
3. the values are ``x^T u_p y``.

Callers must pass only games without a pure equilibrium (the denominators are then
non-zero).
"""

from __future__ import annotations

import numpy as np


def solve_2x2(u0: np.ndarray, u1: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x [b, 2], y [b, 2], values [b, 2]) for a stack of 2x2 games without pure equilibria."""
    y0 = (u0[:, 1, 1] - u0[:, 0, 1]) / (u0[:, 0, 0] - u0[:, 0, 1] - u0[:, 1, 0] + u0[:, 1, 1])
    x0 = (u1[:, 1, 1] - u1[:, 1, 0]) / (u1[:, 0, 0] - u1[:, 0, 1] - u1[:, 1, 0] + u1[:, 1, 1])
    x = np.stack([x0, 1.0 - x0], axis=1)
    y = np.stack([y0, 1.0 - y0], axis=1)
    values = np.stack([np.einsum("bi,bij,bj->b", x, u0, y),
                       np.einsum("bi,bij,bj->b", x, u1, y)], axis=1)
    return x, y, values
