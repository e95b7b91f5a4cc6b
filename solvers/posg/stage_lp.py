"""Stage-game LPs of one-sided POSG HSVI (Horák et al., AI 2023, LPs (27) and (28)/(36)).

At a belief b over partition P, the stage game is one round of the game followed by
the value of the next belief, bounded from below by the alpha-vectors and from above
by the point set of the target partitions. Rows ``j`` of a partition block are the
pairs (state, P2 action); ``T_k`` is the (row, next state) matrix of branch
``k = (a1, o)``.

Lower-bound stage game (P1 maximizes; solved as LP (27)):
  1. Variables: P1's mixed action ``pi``, per branch k a weight ``lam_k >= 0`` on each
     alpha-vector of the target partition with ``sum lam_k = pi(a1_k)``, a value v_s
     per state.
  2. ``v_s <= sum_a1 pi(a1) R(j, a1) + discount * sum_k T_k[j] . (Gamma_k^T lam_k)``
     for every row j = (s, a2); maximize ``b . v``.
  3. The new alpha-vector is the state-wise minimum over P2's actions of the right
     side (valid for every state, also those outside b's support); P2's strategy is
     the dual of step 2 as joint probabilities p(s, a2) with sum_a2 p(s, a2) = b(s).

Upper-bound stage game (P2 minimizes; LP (28) with the Lipschitz envelope (36)):
  1. Variables: P2's joint strategy ``p >= 0`` with ``sum_a2 p(s, a2) = b(s)``; per
     branch the unnormalised next belief ``beta_k = T_k^T p``, weights ``lam_k >= 0``
     on the target's points with ``sum lam_k = sum beta_k`` and slacks
     ``xi_k >= |beta_k - B_k^T lam_k|``; the game value z.
  2. ``z >= p . R[:, a1] + discount * sum_{k: a1_k = a1} (y_k . lam_k + delta sum xi_k)``
     for every P1 action; minimize z. P1's strategy is the dual of these rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solvers.posg.bounds import LowerBound, SparseBuilder, UpperBound
from solvers.posg.lp import solve_lp
from solvers.posg.model import PartitionBlock


@dataclass(frozen=True)
class StageSolution:
    value: float
    p1: np.ndarray          # mixed action over block.a1
    p2: np.ndarray          # joint probabilities over the block's (state, P2 action) rows


def _normalised(x: np.ndarray) -> np.ndarray:
    x = np.clip(x, 0.0, None)
    total = x.sum()
    return x / total if total > 0 else np.full(len(x), 1.0 / len(x))


def lower_stage(block: PartitionBlock, belief: np.ndarray, lower: LowerBound,
                discount: float) -> tuple[StageSolution, np.ndarray]:
    """The lower-bound stage game at ``belief``; returns it and the new alpha-vector."""
    n_rows, n_a1 = block.reward.shape
    n_s = len(block.states)
    cont = [discount * (br.trans @ lower.gamma[br.target].T) for br in block.branches]
    n_lam = [c.shape[1] for c in cont]
    n_var = n_s + n_a1 + sum(n_lam)
    ub, eq = SparseBuilder(), SparseBuilder()
    rows = np.arange(n_rows)
    state_col = np.zeros((n_rows, n_s))
    state_col[rows, block.row_state] = 1.0
    ub.add(0, 0, state_col)
    ub.add(0, n_s, -block.reward)
    col = n_s + n_a1
    for k, (br, c) in enumerate(zip(block.branches, cont, strict=True)):
        ub.add(0, col, -c)
        eq.add(k, col, np.ones(c.shape[1]))
        eq.add(k, n_s + br.a1_index, np.array([-1.0]))
        col += c.shape[1]
    n_eq = len(block.branches) + 1
    eq.add(n_eq - 1, n_s, np.ones(n_a1))
    cost = np.zeros(n_var)
    cost[:n_s] = -belief
    lower = np.zeros(n_var)
    lower[:n_s] = -np.inf
    res = solve_lp(cost, ub.matrix(n_rows, n_var), np.zeros(n_rows), eq.matrix(n_eq, n_var),
                   np.r_[np.zeros(n_eq - 1), 1.0], lower, np.full(n_var, np.inf),
                   "lower-bound stage")
    pi = _normalised(res.x[n_s:n_s + n_a1])
    row_value = block.reward @ pi
    col = n_s + n_a1
    for c in cont:
        row_value += c @ res.x[col:col + c.shape[1]]
        col += c.shape[1]
    alpha = np.minimum.reduceat(row_value, block.row_start[:-1])
    p2 = np.clip(-res.ineq_duals, 0.0, None)
    return StageSolution(float(alpha @ belief), pi, p2), alpha


def upper_stage(block: PartitionBlock, belief: np.ndarray, upper: UpperBound,
                discount: float) -> StageSolution:
    """The upper-bound stage game at ``belief``."""
    n_rows, n_a1 = block.reward.shape
    n_s = len(block.states)
    delta = upper.delta
    # columns: z, p (rows), then per branch lam (points) and xi (target states)
    ub, eq = SparseBuilder(), SparseBuilder()
    cost_parts = [np.array([1.0]), np.zeros(n_rows)]
    ub.add(0, 0, -np.ones((n_a1, 1)))
    ub.add(0, 1, block.reward.T)
    col, row, erow = 1 + n_rows, n_a1, 0
    for br in block.branches:
        points, values = upper.points[br.target], upper.values[br.target]
        m, n = points.shape
        lam, xi = col, col + m
        ub.add(br.a1_index, lam, discount * values)
        ub.add_coo(np.full(n, br.a1_index), np.arange(xi, xi + n), np.full(n, discount * delta))
        t_row, t_next, t_prob = br.nonzero          # beta = T^T p, entry (next, row)
        b_next, b_point = np.nonzero(points.T)
        b_val = points.T[b_next, b_point]
        ub.add_coo(row + t_next, 1 + t_row, t_prob)         # beta - B^T lam - xi <= 0
        ub.add_coo(row + b_next, lam + b_point, -b_val)
        ub.add_diagonal(row, xi, n, -1.0)
        ub.add_coo(row + n + t_next, 1 + t_row, -t_prob)    # -beta + B^T lam - xi <= 0
        ub.add_coo(row + n + b_next, lam + b_point, b_val)
        ub.add_diagonal(row + n, xi, n, -1.0)
        eq.add_coo(np.full(m, erow), np.arange(lam, lam + m), np.ones(m))   # sum lam = sum beta
        eq.add(erow, 1, -br.row_mass)
        cost_parts.append(np.zeros(m + n))
        col, row, erow = col + m + n, row + 2 * n, erow + 1
    state_rows = np.zeros((n_s, n_rows))
    state_rows[block.row_state, np.arange(n_rows)] = 1.0
    eq.add(erow, 1, state_rows)
    n_eq = erow + n_s
    cost = np.concatenate(cost_parts)
    lower = np.zeros(col)
    lower[0] = -np.inf
    res = solve_lp(cost, ub.matrix(row, col), np.zeros(row), eq.matrix(n_eq, col),
                   np.r_[np.zeros(erow), belief], lower, np.full(col, np.inf),
                   "upper-bound stage")
    p1 = _normalised(-res.ineq_duals[:n_a1])
    return StageSolution(float(res.x[0]), p1, np.clip(res.x[1:1 + n_rows], 0.0, None))


def next_beliefs(block: PartitionBlock, p1: np.ndarray, p2: np.ndarray,
                 ) -> list[tuple[int, float, np.ndarray]]:
    """Per branch: (branch index, probability, next belief) for the joint P2 strategy
    ``p2`` and P1's mixed action ``p1``; branches of probability 0 are left out."""
    out = []
    for k, br in enumerate(block.branches):
        beta = p2 @ br.trans
        mass = beta.sum()
        prob = p1[br.a1_index] * mass
        if prob > 1e-12:
            out.append((k, float(prob), beta / mass))
    return out
