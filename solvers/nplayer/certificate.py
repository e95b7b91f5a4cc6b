"""The certificate of an n-player solution on a JointDag: every player's best deviation
gain at every state, by code separate from the solver.

It reads only the DAG and the solution's values and strategies, and works level by
level in increasing height (:func:`.dag.heights`), entry by entry:

1. Decode each entry of a state into its joint move ``(a_0, ..., a_{R-1})`` (row-major
   with player 0 slowest, nature's outcome fastest) and look up every player's
   probability of its move, ``x_p(a_p)``.
2. Recompute the state's values from the strategies alone: ``U(s) = sum_entries
   prod_p x_p(a_p) / nk * U(child)`` (terminal states: their payoffs).
3. Each player's best pure deviation against the others' strategies:
   ``gain_p(s) = max_a sum_{entries with a_p = a} prod_{q != p} x_q(a_q) / nk *
   U_p(child) - U_p(s)``.
4. Report the largest gain (with its state and player), the largest difference between
   the solution's values and the recomputed ones, malformed distributions, and
   entries played with positive probability that lead to states the solution left
   unsolved (a deviation into one counts as the deviator's largest terminal payoff).

``check(dag, solution) -> dict`` has the two-player certificate's fields
(:func:`solvers.simultaneous.dag_certificate.certificate`) plus ``worst_player``.
"""

from __future__ import annotations

import numpy as np

from solvers.nplayer.dag import JointDag, JointSolution, heights
from solvers.simultaneous.dag_baseline import chunks, level_order
from solvers.simultaneous.dag_certificate import CHUNK_ENTRIES, certificate
from solvers.simultaneous.model import concat_ranges


class Check:
    def __init__(self, dag: JointDag, solution: JointSolution) -> None:
        self.dag, self.solution = dag, solution
        self.values = np.full((dag.num_states, dag.num_players), np.nan)
        self.values[dag.terminal] = dag.payoff[dag.terminal]
        self.gain = np.zeros((dag.num_states, dag.num_players))
        self.strategy_error = 0.0
        self.unsolved_reached = 0
        terminal = dag.payoff[dag.terminal]
        self.top = terminal.max(axis=0) if terminal.size else np.zeros(dag.num_players)

    def states(self, states: np.ndarray) -> None:
        """Steps 1-3 for solved non-terminal ``states`` whose children are done."""
        dag, sol = self.dag, self.solution
        r = dag.num_players
        sizes = dag.entry_start[states + 1] - dag.entry_start[states]
        idx = concat_ranges(dag.entry_start[states], sizes)
        owner = np.repeat(np.arange(states.size), sizes)
        child = dag.entry_child[idx]
        nk = np.repeat(dag.nk[states].astype(np.int64), sizes)
        counts = [dag.counts[states, p].astype(np.int64) for p in range(r)]
        block = sol.strategy_start[states]                   # each state's strategy block
        first = [block + sum(counts[:p]) for p in range(r)]  # each player's first move
        cell = (idx - np.repeat(dag.entry_start[states], sizes)) // nk
        move: list[np.ndarray] = [np.empty(0)] * r
        for p in reversed(range(r)):                         # row-major: last player fastest
            count = counts[p][owner]
            move[p] = cell % count
            cell //= count
        slot = [first[p][owner] + move[p] for p in range(r)]  # into sol.strategy
        prob = [sol.strategy[slot[p]] for p in range(r)]
        known = sol.solved[child]
        played = np.where(known[:, None], self.values[child], 0.0)
        weight = np.prod(prob, axis=0) / nk
        self.unsolved_reached += int(np.count_nonzero((weight > 0) & ~known))
        for p in range(r):
            self.values[states, p] = np.bincount(owner, weights=weight * played[:, p],
                                                 minlength=states.size)
        for p in range(r):
            others = np.prod([prob[q] for q in range(r) if q != p], axis=0) / nk
            # a deviation into an unsolved state counts as the deviator's top payoff
            payoff = np.where(known, played[:, p], self.top[p])
            own = concat_ranges(first[p], counts[p])         # the player's moves' slots
            group = np.cumsum(counts[p]) - counts[p]
            value = np.bincount(group[owner] + move[p], weights=others * payoff, minlength=own.size)
            self.gain[states, p] = np.maximum.reduceat(value, group) - self.values[states, p]
            probs = sol.strategy[own]
            totals = np.add.reduceat(probs, group)
            self.strategy_error = max(self.strategy_error, float(np.abs(totals - 1).max()),
                                      float(-probs.min()))


def check(dag: JointDag, solution: JointSolution) -> dict:
    """The certificate of ``solution`` (see the module docstring)."""
    work = Check(dag, solution)
    order, bounds = level_order(dag, heights(dag))  # type: ignore[arg-type]
    for h in range(1, len(bounds) - 1):
        level = order[bounds[h]:bounds[h + 1]]
        level = level[solution.solved[level]]
        for part in chunks(dag, level, CHUNK_ENTRIES):  # type: ignore[arg-type]
            work.states(part)
    checked = np.flatnonzero(solution.solved & ~dag.terminal)
    gain = work.gain[checked]
    diff = np.abs(work.values[checked] - solution.values[checked])
    value_error = float("inf") if np.isnan(diff).any() else float(diff.max(initial=0.0))
    worst = np.unravel_index(int(gain.argmax()), gain.shape) if gain.size else (0, 0)
    terminal = dag.payoff[dag.terminal]
    part = {"max_gain": float(gain.max(initial=0.0)), "value_error": value_error,
            "strategy_error": work.strategy_error, "unsolved_reached": work.unsolved_reached,
            "states_checked": int(checked.size),
            "worst_state": int(checked[worst[0]]) if checked.size else int(dag.root),
            "low": float(terminal.min()) if terminal.size else None,
            "high": float(terminal.max()) if terminal.size else None}
    result = certificate(part, bool(solution.solved[dag.root]))
    names = dag.player_names or tuple(f"player {p}" for p in range(dag.num_players))
    result["worst_player"] = names[int(worst[1])]
    return result
