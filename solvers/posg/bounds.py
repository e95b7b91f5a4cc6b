"""Value-function bounds of one-sided POSG HSVI (Horák et al., AI 2023).

The value V*(b) of a belief b over a partition's states is convex and
``delta``-Lipschitz in the L1 norm.

* Lower bound: a set of alpha-vectors per partition, ``LB(b) = max_alpha alpha . b``.
  Each vector is the state-wise value P1 guarantees with some strategy.
* Upper bound: a set of points ``(b_i, y_i)`` with ``y_i >= V*(b_i)`` per partition, and
  the Lipschitz-continuous lower convex envelope
  ``UB(b) = min { sum_i l_i y_i + delta * ||b - sum_i l_i b_i||_1 : l >= 0, sum l = 1 }``
  (an LP, solved with HiGHS; several beliefs are evaluated in one block-diagonal LP).

Pruning: a vector dominated state-wise by another is dropped; a point ``(b_i, y_i)``
is dropped when another point ``(b_k, y_k)`` gives ``y_k + delta ||b_i - b_k||_1 <= y_i``
(it can never be the cheaper choice in the LP). Periodically, vectors that are not the
best one at any belief the search has visited are dropped too (bounded pruning), which
keeps the lower-bound LPs small.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from solvers.posg.lp import solve_lp

DOMINANCE_TOLERANCE = 1e-9


class SparseBuilder:
    """Collects dense blocks at (row, column) offsets into one sparse matrix."""

    def __init__(self) -> None:
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []

    def add(self, row0: int, col0: int, block: np.ndarray) -> None:
        block = np.atleast_2d(block)
        r, c = np.nonzero(block)
        self.rows.append(r + row0)
        self.cols.append(c + col0)
        self.vals.append(block[r, c])

    def add_coo(self, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray) -> None:
        self.rows.append(rows)
        self.cols.append(cols)
        self.vals.append(vals)

    def add_diagonal(self, row0: int, col0: int, n: int, value: float) -> None:
        self.add_coo(np.arange(row0, row0 + n), np.arange(col0, col0 + n), np.full(n, value))

    def matrix(self, n_rows: int, n_cols: int) -> sp.csr_matrix:
        if not self.rows:
            return sp.csr_matrix((n_rows, n_cols))
        return sp.csr_matrix((np.concatenate(self.vals),
                              (np.concatenate(self.rows), np.concatenate(self.cols))),
                             shape=(n_rows, n_cols))


class LowerBound:
    """Alpha-vectors per partition."""

    def __init__(self, initial: Sequence[np.ndarray]) -> None:
        self.gamma = [np.atleast_2d(np.asarray(a, dtype=float)) for a in initial]

    def value(self, partition: int, belief: np.ndarray) -> float:
        return float(np.max(self.gamma[partition] @ belief))

    def add(self, partition: int, alpha: np.ndarray) -> bool:
        """Add a vector unless dominated; drop the vectors it dominates."""
        gamma = self.gamma[partition]
        if np.any(np.all(gamma >= alpha - DOMINANCE_TOLERANCE, axis=1)):
            return False
        keep = ~np.all(gamma <= alpha + DOMINANCE_TOLERANCE, axis=1)
        self.gamma[partition] = np.vstack([gamma[keep], alpha])
        return True

    def size(self) -> int:
        return sum(len(g) for g in self.gamma)

    def prune(self, partition: int, beliefs: np.ndarray) -> None:
        """Keep only the vectors that are the best one at some of ``beliefs`` (rows).

        The bound stays valid (every kept vector is); it can only drop between those
        beliefs, so callers pass every belief where they report or rely on it.
        """
        gamma = self.gamma[partition]
        if len(gamma) > 1 and len(beliefs):
            best = np.unique(np.argmax(beliefs @ gamma.T, axis=1))
            self.gamma[partition] = gamma[best]


class UpperBound:
    """Points per partition with the Lipschitz LP as the bound between them."""

    def __init__(self, vertex_values: Sequence[np.ndarray], delta: float) -> None:
        self.delta = delta
        self.points = [np.eye(len(v)) for v in vertex_values]
        self.values = [np.asarray(v, dtype=float).copy() for v in vertex_values]

    def size(self) -> int:
        return sum(len(v) for v in self.values)

    def add(self, partition: int, belief: np.ndarray, value: float) -> bool:
        """Add a point unless another one makes it useless; drop those it makes useless."""
        points, values = self.points[partition], self.values[partition]
        dist = self.delta * np.abs(points - belief).sum(axis=1)
        if np.any(values + dist <= value + DOMINANCE_TOLERANCE):
            return False
        keep = value + dist > values + DOMINANCE_TOLERANCE
        self.points[partition] = np.vstack([points[keep], belief])
        self.values[partition] = np.r_[values[keep], value]
        return True

    def value(self, partition: int, belief: np.ndarray) -> float:
        return self.values_at([(partition, belief)])[0]

    def values_at(self, queries: Sequence[tuple[int, np.ndarray]]) -> np.ndarray:
        """UB at several (partition, belief) pairs, one block-diagonal LP.

        Per query, variables ``l`` (one per point) and ``xi`` (one per state):
        min ``y . l + delta * sum xi`` s.t. ``+-(B^T l - b) <= xi``, ``sum l = 1``.
        """
        if not queries:
            return np.zeros(0)
        ub, eq = SparseBuilder(), SparseBuilder()
        cost, b_ub, b_eq, spans = [], [], [], []
        col = row = 0
        for q, (partition, belief) in enumerate(queries):
            points, values = self.points[partition], self.values[partition]
            m, n = points.shape
            r, c = np.nonzero(points.T)
            v = points.T[r, c]
            ub.add_coo(row + r, col + c, v)
            ub.add_coo(row + n + r, col + c, -v)
            ub.add_diagonal(row, col + m, n, -1.0)
            ub.add_diagonal(row + n, col + m, n, -1.0)
            eq.add(q, col, np.ones(m))
            b_ub.append(np.r_[belief, -belief])
            b_eq.append(1.0)
            cost.append(np.r_[values, np.full(n, self.delta)])
            spans.append((col, col + m + n))
            col += m + n
            row += 2 * n
        c = np.concatenate(cost)
        res = solve_lp(c, ub.matrix(row, col), np.concatenate(b_ub),
                       eq.matrix(len(queries), col), np.array(b_eq), np.zeros(col),
                       np.full(col, np.inf), "upper-bound value")
        return np.array([c[a:b] @ res.x[a:b] for a, b in spans])
