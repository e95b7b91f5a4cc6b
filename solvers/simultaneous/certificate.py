"""Certificates for simultaneous-move solutions: per-node deviation gains, by simple code.

Independent of the solvers (it reads only the game arrays and the strategies):

1. Recompute every solved node's values bottom-up from the strategies alone:
   ``U(h) = sum_entries b0(h)(i) b1(h)(j) u(i, j)`` with a child's recomputed values
   in place of ``u`` (chance nodes: the outcome probabilities).
2. At every solved decision node, each player's best pure deviation against the
   other's strategy, given the children's values: ``gain_0(h) = max_i sum_j b1(j) u0(i,
   j) - U_0(h)``, and the same for player 1 along columns. A deviation entry whose child
   the solution left unsolved (the interval heuristic and DOαβ skip them) counts with
   an upper bound on what the deviator can get there in any SPE of that subgame,
   computed here again, bottom-up: the child's utility-interval maximum ``max Omega``;
   in a constant-sum game (``u0 + u1`` the same at every terminal entry, so every SPE
   of a subgame has the subgame's value) also the value of the serialized game in
   which the opponent commits to a pure move first (``min_j max_i``, expected over
   chance), and, where the solution gives the opponent a strategy at an unsolved node
   (a witness), the deviator's best response to it; the smallest of these, with the
   children's bounds (solved children: their recomputed values) inside. Each is at
   least the subgame's value, so a zero gain then proves Lemma 4.3.11 (the pbs is part
   of an SPE: complete it by any SPE of the skipped subgames).
3. Report the largest gain, the largest difference between the solution's values and
   the recomputed ones, malformed distributions, and positive-probability entries
   leading to unsolved nodes.

``check(game, solution)`` returns ``{"max_gain": float, "relative_gain": float,
"value_error": float, "strategy_error": float, "unsolved_reached": int,
"nodes_checked": int, "worst_node": int, "ok": bool}``; ``ok`` means every error is
within ``1e-9`` of the payoff range.
"""

from __future__ import annotations

import numpy as np

from solvers.simultaneous.model import CHANCE, SimultaneousGame, concat_ranges
from solvers.simultaneous.solution import Solution

RELATIVE_TOLERANCE = 1e-9


def interval_maxima(game: SimultaneousGame) -> np.ndarray:
    """[N, 2]: every node's largest reachable terminal payoff (positive-probability entries)."""
    top = np.full((game.num_nodes, 2), -np.inf)
    possible = game.entry_prob > 0
    for level in game.levels:
        idx = concat_ranges(game.entry_start[level], np.diff(game.entry_start)[level])
        idx = idx[possible[idx]]
        child = game.entry_child[idx]
        entry_top = np.where((child >= 0)[:, None], top[np.maximum(child, 0)], game.entry_payoff[idx])
        np.maximum.at(top, game.entry_node[idx], entry_top)
    return top


def check(game: SimultaneousGame, solution: Solution) -> dict:
    """The certificate of ``solution`` (see the module docstring)."""
    solved = solution.solved
    s0, s1 = solution.strategy
    values = np.full((game.num_nodes, 2), np.nan)
    bound = interval_maxima(game)
    constant = _constant_sum(game)
    gain = np.zeros(game.num_nodes)
    strategy_error = 0.0
    unsolved_reached = 0
    for level in game.levels:
        if constant:
            _tighten_bounds(game, level[~solved[level]], solved, values, bound, (s0, s1))
        nodes = level[solved[level]]
        if nodes.size == 0:
            continue
        sizes = np.diff(game.entry_start)[nodes]
        idx = concat_ranges(game.entry_start[nodes], sizes)
        owner = np.repeat(np.arange(nodes.size), sizes)
        child = game.entry_child[idx]
        has = child >= 0
        child_values = values[np.maximum(child, 0)]
        played = np.where(has[:, None], child_values, game.entry_payoff[idx])
        known = ~has | solved[np.maximum(child, 0)]
        deviation = np.where(known[:, None], played, bound[np.maximum(child, 0)])
        a0, a1 = game.entry_action[0, idx], game.entry_action[1, idx]
        chance = game.node_kind[game.entry_node[idx]] == CHANCE
        p0 = np.where(chance, 1.0, s0[np.maximum(a0, 0)])
        p1 = np.where(chance, game.entry_prob[idx], s1[np.maximum(a1, 0)])
        weight = p0 * p1
        unsolved_reached += int(np.count_nonzero((weight > 0) & ~known))
        contribution = np.where((weight > 0)[:, None], weight[:, None] * played, 0.0)
        for p in (0, 1):
            values[nodes, p] = np.bincount(owner, weights=contribution[:, p], minlength=nodes.size)
        decision = ~chance
        if not decision.any():
            continue
        # payoff of each own action against the opponent's strategy
        rows = np.bincount(a0[decision], weights=(p1 * deviation[:, 0])[decision], minlength=len(s0))
        cols = np.bincount(a1[decision], weights=(p0 * deviation[:, 1])[decision], minlength=len(s1))
        for p, own, payoff in ((0, s0, rows), (1, s1, cols)):
            dnodes = nodes[game.node_kind[nodes] != CHANCE]
            starts = game.action_start[p, dnodes]
            counts = game.action_start[p, dnodes + 1] - starts
            actions = concat_ranges(starts, counts)
            offsets = np.cumsum(counts) - counts
            best = np.maximum.reduceat(payoff[actions], offsets)
            expected = np.add.reduceat(own[actions] * payoff[actions], offsets)
            gain[dnodes] = np.maximum(gain[dnodes], best - expected)
            probs = own[actions]
            totals = np.add.reduceat(probs, offsets)
            strategy_error = max(strategy_error, float(np.abs(totals - 1).max()),
                                 float(-probs.min()) if probs.size else 0.0)
    scale = game.payoff_range()
    checked = np.flatnonzero(solved)
    value_error = float(np.nanmax(np.abs(values[checked] - solution.values[checked]), initial=0.0))
    if np.isnan(values[checked]).any() or np.isnan(solution.values[checked]).any():
        value_error = float("inf")
    max_gain = float(gain.max(initial=0.0))
    worst = int(gain.argmax()) if checked.size else -1
    ok = (max_gain <= RELATIVE_TOLERANCE * scale and value_error <= RELATIVE_TOLERANCE * scale
          and strategy_error <= 1e-9 and unsolved_reached == 0 and bool(solved[game.root]))
    return {"max_gain": max_gain, "relative_gain": max_gain / scale, "value_error": value_error,
            "strategy_error": strategy_error, "unsolved_reached": unsolved_reached,
            "nodes_checked": int(checked.size), "worst_node": worst, "ok": ok}


def _constant_sum(game: SimultaneousGame) -> bool:
    total = game.entry_payoff[game.entry_child < 0].sum(axis=1)
    return total.size == 0 or float(total.max() - total.min()) <= 1e-9 * game.payoff_range()


def _tighten_bounds(game: SimultaneousGame, nodes: np.ndarray, solved: np.ndarray,
                    values: np.ndarray, bound: np.ndarray,
                    strategy: tuple[np.ndarray, np.ndarray]) -> None:
    """Constant-sum games: lower ``bound`` [N, 2] at the unsolved ``nodes`` (one level)
    to the serialized games' values and the best responses to witness strategies."""
    if nodes.size == 0:
        return
    sizes = np.diff(game.entry_start)[nodes]
    idx = concat_ranges(game.entry_start[nodes], sizes)
    owner = np.repeat(np.arange(nodes.size), sizes)
    child = np.maximum(game.entry_child[idx], 0)
    entry = np.where((game.entry_child[idx] < 0)[:, None], game.entry_payoff[idx],
                     np.where(solved[child][:, None], values[child], bound[child]))
    chance = game.node_kind[nodes] == CHANCE
    if chance.any():
        expected = entry * game.entry_prob[idx, None]
        for p in (0, 1):
            total = np.bincount(owner, weights=expected[:, p], minlength=nodes.size)
            bound[nodes[chance], p] = np.minimum(bound[nodes[chance], p], total[chance])
    dnodes = nodes[~chance]
    e = np.flatnonzero(~chance[owner])
    if dnodes.size == 0:
        return
    acts = game.entry_action[:, idx[e]]
    for p in (0, 1):
        q = 1 - p
        # serialized: the opponent commits to a pure move, the deviator answers it
        answer = np.full(len(strategy[q]), -np.inf)
        np.maximum.at(answer, acts[q], entry[e, p])
        # witness: the deviator's best response to the opponent's strategy, if it has one
        reply = np.bincount(acts[p], weights=strategy[q][acts[q]] * entry[e, p],
                            minlength=len(strategy[p]))
        for source, own, reduce in ((answer, q, np.minimum), (reply, p, np.maximum)):
            starts = game.action_start[own, dnodes]
            counts = game.action_start[own, dnodes + 1] - starts
            offsets = np.cumsum(counts) - counts
            result = reduce.reduceat(source[concat_ranges(starts, counts)], offsets)
            if reduce is np.maximum:
                starts_q = game.action_start[q, dnodes]
                counts_q = game.action_start[q, dnodes + 1] - starts_q
                sigma = strategy[q][concat_ranges(starts_q, counts_q)]
                offsets_q = np.cumsum(counts_q) - counts_q
                valid = ((np.abs(np.add.reduceat(sigma, offsets_q) - 1) <= 1e-9)
                         & (np.minimum.reduceat(sigma, offsets_q) >= 0))
                result = np.where(valid, result, np.inf)
            bound[dnodes, p] = np.minimum(bound[dnodes, p], result)
