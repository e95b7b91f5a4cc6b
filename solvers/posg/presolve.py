"""Presolve bounds for one-sided POSG HSVI (Horák et al., AI 2023).

Lower bound: the value of P1 playing uniformly in every partition against P2's best
response, one alpha-vector per partition. Upper bound: the value of the game in which
P1 also sees the state (a perfect-information stochastic game), one point per vertex
of every partition's belief simplex.

1. Uniform lower bound: P2 faces an MDP (rows = (state, P2 action), reward and
   successor distribution averaged over P1's playable actions); solve it exactly by
   policy iteration.
2. Perfect-information upper bound (Hoffman-Karp strategy iteration on P2's side):
   start from V = max reward / (1 - discount). Repeat: solve every state's matrix game
   ``R(s, a1, a2) + discount * E[V(s')]`` in one block-diagonal LP (HiGHS) and keep
   P2's optimal mixed action per state; evaluate that stationary P2 strategy exactly
   (P1's best-response MDP, policy iteration). Each such value is a valid upper bound
   (P2 commits, P1 best-responds); keep the pointwise minimum. Stop when it no longer
   moves or the time budget is spent.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve

from solvers.posg.lp import solve_lp
from solvers.posg.model import PosgModel

PI_TOLERANCE = 1e-10      # a row replaces the current choice only if better by this much


@dataclass(frozen=True)
class MdpRows:
    """An MDP over the model's states: rows grouped by state (``start``), with a
    reward and a sparse successor distribution per row."""

    start: np.ndarray        # (S + 1,)
    reward: np.ndarray       # (rows,)
    succ: sp.csr_matrix      # (rows, S)


def _triples(model: PosgModel) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every playable (s, a1, a2) in (s, a1, a2) order, with its start per state."""
    s_list, a1_list, a2_list, start = [], [], [], [0]
    for s in range(model.n_states):
        a1 = model.a1_playable[model.partition_of[s]]
        a2 = model.a2_playable[s]
        s_list.append(np.full(len(a1) * len(a2), s))
        a1_list.append(np.repeat(a1, len(a2)))
        a2_list.append(np.tile(a2, len(a1)))
        start.append(start[-1] + len(a1) * len(a2))
    return (np.concatenate(s_list), np.concatenate(a1_list), np.concatenate(a2_list),
            np.array(start))


class TripleTable:
    """Rewards and successor matrix of every playable (s, a1, a2) triple."""

    def __init__(self, model: PosgModel) -> None:
        self.s, self.a1, self.a2, self.start = _triples(model)
        n_a1, n_a2 = len(model.a1_names), len(model.a2_names)
        key = (self.s * n_a1 + self.a1) * n_a2 + self.a2      # sorted ascending
        t_key = (model.t_s * n_a1 + model.t_a1) * n_a2 + model.t_a2
        t_row = np.searchsorted(key, t_key)
        self.succ = sp.csr_matrix((model.t_prob, (t_row, model.t_next)),
                                  shape=(len(key), model.n_states))
        r_key = (model.r_s * n_a1 + model.r_a1) * n_a2 + model.r_a2
        r_row = np.searchsorted(key, r_key).clip(0, len(key) - 1)
        hit = key[r_row] == r_key          # rewards of unplayable triples are ignored
        self.reward = np.zeros(len(key))
        self.reward[r_row[hit]] = model.r_value[hit]
        self.n_a1 = np.diff(self.start) // np.array([len(a) for a in model.a2_playable])
        self.n_a2 = np.array([len(a) for a in model.a2_playable])


def _aggregate(table: TripleTable, row: np.ndarray, weight: np.ndarray, n_rows: int,
               start: np.ndarray) -> MdpRows:
    """Rows formed as weighted sums of triples (``row[i]`` receives triple i)."""
    mix = sp.csr_matrix((weight, (row, np.arange(len(row)))), shape=(n_rows, len(row)))
    return MdpRows(start, mix @ table.reward, (mix @ table.succ).tocsr())


def solve_mdp(rows: MdpRows, discount: float, maximize: bool, initial: np.ndarray,
              max_iterations: int = 200) -> np.ndarray:
    """Exact value of a discounted MDP by policy iteration (rows grouped by state)."""
    n = len(rows.start) - 1
    group = np.repeat(np.arange(n), np.diff(rows.start))
    sign = 1.0 if maximize else -1.0
    value = initial.astype(float)
    choice = None
    for _ in range(max_iterations):
        q = sign * (rows.reward + discount * (rows.succ @ value))
        best = np.maximum.reduceat(q, rows.start[:-1])
        if choice is not None and np.all(q[choice] >= best - PI_TOLERANCE * (1 + abs(best))):
            break
        candidate = np.flatnonzero(q >= best[group] - PI_TOLERANCE * (1 + abs(best[group])))
        first = candidate[np.r_[True, np.diff(group[candidate]) > 0]]
        if choice is not None:        # keep a still-optimal choice (no cycling on ties)
            keep = q[choice] >= best - PI_TOLERANCE * (1 + abs(best))
            first = np.where(keep, choice, first)
        choice = first
        system = sp.identity(n, format="csr") - discount * rows.succ[choice]
        value = np.atleast_1d(spsolve(system.tocsc(), rows.reward[choice]))
    return value


def uniform_lower_bound(model: PosgModel, table: TripleTable | None = None) -> np.ndarray:
    """Per state: what P1 guarantees by playing uniformly, P2 best-responding."""
    table = table or TripleTable(model)
    # row of triple (s, a1, a2) = row of (s, a2); triples are a1-major inside s
    n_a2 = table.n_a2[table.s]
    a2_start = np.r_[0, np.cumsum(table.n_a2)]
    within = (np.arange(len(table.s)) - table.start[table.s]) % n_a2
    row = a2_start[table.s] + within
    weight = 1.0 / table.n_a1[table.s]
    rows = _aggregate(table, row, weight, a2_start[-1], a2_start)
    lo, _ = model.reward_range()
    return solve_mdp(rows, model.discount, False, np.full(model.n_states, lo / (1 - model.discount)))


def _matrix_games(table: TripleTable, value: np.ndarray, discount: float,
                  n_states: int) -> tuple[np.ndarray, np.ndarray]:
    """Values and P2's optimal mixed actions (per (s, a2) row) of every state's game
    ``R + discount * E[value]``, as one block-diagonal LP: max sum v_s subject to
    ``v_s <= sum_a1 pi(s, a1) Q(s, a1, a2)`` and ``sum_a1 pi(s, a1) = 1``."""
    q = table.reward + discount * (table.succ @ value)
    n_tr = len(q)
    a2_start = np.r_[0, np.cumsum(table.n_a2)]
    a1_start = np.r_[0, np.cumsum(table.n_a1)]
    within = np.arange(n_tr) - table.start[table.s]
    n_a2 = table.n_a2[table.s]
    con = a2_start[table.s] + within % n_a2          # row (s, a2)
    var = a1_start[table.s] + within // n_a2         # column pi(s, a1)
    n_pi, n_con = a1_start[-1], a2_start[-1]
    con_state = np.repeat(np.arange(n_states), table.n_a2)
    a_ub = sp.csr_matrix((np.r_[-q, np.ones(n_con)],
                          (np.r_[con, np.arange(n_con)], np.r_[var, n_pi + con_state])),
                         shape=(n_con, n_pi + n_states))
    pi_state = np.repeat(np.arange(n_states), table.n_a1)
    a_eq = sp.csr_matrix((np.ones(n_pi), (pi_state, np.arange(n_pi))),
                         shape=(n_states, n_pi + n_states))
    cost = np.r_[np.zeros(n_pi), -np.ones(n_states)]
    lower = np.r_[np.zeros(n_pi), np.full(n_states, -np.inf)]
    res = solve_lp(cost, a_ub, np.zeros(n_con), a_eq, np.ones(n_states), lower,
                   np.full(n_pi + n_states, np.inf), "presolve matrix-game", presolve=True)
    sigma2 = np.clip(-res.ineq_duals, 0.0, None)
    mass = np.add.reduceat(sigma2, a2_start[:-1])
    sigma2 /= np.where(mass > 0, mass, 1.0)[con_state]
    return res.x[n_pi:], sigma2


def perfect_information_upper_bound(model: PosgModel, time_limit: float = 60.0,
                                    tolerance: float = 1e-9, max_rounds: int = 100,
                                    table: TripleTable | None = None) -> np.ndarray:
    """Per state: an upper bound on the value of the game where P1 sees the state
    (exact when the strategy iteration converges within the budget)."""
    table = table or TripleTable(model)
    deadline = time.monotonic() + time_limit
    _, hi = model.reward_range()
    upper = np.full(model.n_states, hi / (1 - model.discount))
    a1_start = np.r_[0, np.cumsum(table.n_a1)]
    n_a2 = table.n_a2[table.s]
    within = np.arange(len(table.s)) - table.start[table.s]
    p1_row = a1_start[table.s] + within // n_a2
    a2_start = np.r_[0, np.cumsum(table.n_a2)]
    p2_row = a2_start[table.s] + within % n_a2
    for _ in range(max_rounds):
        _, sigma2 = _matrix_games(table, upper, model.discount, model.n_states)
        rows = _aggregate(table, p1_row, sigma2[p2_row], a1_start[-1], a1_start)
        value = np.minimum(upper, solve_mdp(rows, model.discount, True, upper))
        moved = float(np.max(upper - value))
        upper = value
        if moved <= tolerance or time.monotonic() > deadline:
            break
    return upper
