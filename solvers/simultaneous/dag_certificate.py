"""Certificates for solutions on the compact model: per-state deviation gains, by simple code.

Independent of the solvers (it reads only the DAG and the solution's values and
compact strategies), level by level in increasing height (:func:`.dag.heights`):

1. Recompute every solved state's values from the strategies alone:
   ``U(s) = sum_{i, j, c} x(i) y(j) / nk * U(child(i, j, c))``, terminal states'
   values being their payoffs.
2. At every solved state, each player's best pure deviation against the other's
   strategy given the children's recomputed values: ``gain_0(s) = max_i sum_{j, c}
   y(j) / nk u0(i, j, c) - U_0(s)``, and the same for player 1 along columns. A
   deviation into a state the solution left unsolved (the interval heuristic skips
   them) counts with that state's largest reachable terminal payoff (recomputed here):
   no equilibrium of that subgame pays the deviator more.
3. Report the largest gain, the largest difference between the solution's values and
   the recomputed ones, malformed distributions, and positive-probability entries
   leading to unsolved states.

``check(dag, solution)`` returns the fields of :func:`.certificate.check`:
``{"max_gain", "relative_gain", "value_error", "strategy_error", "unsolved_reached",
"states_checked", "worst_state", "ok"}``; ``ok`` means every error is within ``1e-9``
of the payoff range. Levels are taken in chunks of at most ``CHUNK_ENTRIES`` entries.
"""

from __future__ import annotations

import numpy as np

from solvers.simultaneous.dag import StateDag, heights
from solvers.simultaneous.dag_baseline import chunks, level_order
from solvers.simultaneous.dag_solution import DagSolution
from solvers.simultaneous.model import concat_ranges

RELATIVE_TOLERANCE = 1e-9
CHUNK_ENTRIES = 1 << 21


class Check:
    def __init__(self, dag: StateDag, solution: DagSolution) -> None:
        self.dag, self.solution = dag, solution
        terminal = dag.terminal
        self.values = np.full((dag.num_states, 2), np.nan)
        self.values[terminal] = dag.payoff[terminal]
        self.top = np.full((dag.num_states, 2), -np.inf)   # largest reachable payoff
        self.top[terminal] = dag.payoff[terminal]
        self.gain = np.zeros(dag.num_states)
        self.strategy_error = 0.0
        self.unsolved_reached = 0

    def states(self, states: np.ndarray) -> None:
        """Steps 1-2 for states whose children are done (the interval maxima of all)."""
        dag, sol = self.dag, self.solution
        sizes = dag.entry_start[states + 1] - dag.entry_start[states]
        child = dag.entry_child[concat_ranges(dag.entry_start[states], sizes)]
        self.top[states] = np.maximum.reduceat(self.top[child], np.cumsum(sizes) - sizes, axis=0)
        states = states[sol.solved[states]]
        if states.size == 0:
            return
        sizes = dag.entry_start[states + 1] - dag.entry_start[states]
        idx = concat_ranges(dag.entry_start[states], sizes)
        owner = np.repeat(np.arange(states.size), sizes)
        state = states[owner]
        child = dag.entry_child[idx]
        nk = dag.nk[state].astype(np.int64)
        cell = (idx - dag.entry_start[state]) // nk
        n1 = dag.n1[state].astype(np.int64)
        row, col = cell // n1, cell % n1
        p0 = sol.action_probability(state, 0, row)
        p1 = sol.action_probability(state, 1, col)
        known = sol.solved[child]
        weight = p0 * p1 / nk
        self.unsolved_reached += int(np.count_nonzero((weight > 0) & ~known))
        played = self.values[child]
        contribution = np.where((weight > 0)[:, None], weight[:, None] * played, 0.0)
        deviation = np.where(known[:, None], played, self.top[child])
        for p in (0, 1):
            self.values[states, p] = np.bincount(owner, weights=contribution[:, p], minlength=states.size)
        for p, action, other in ((0, row, p1), (1, col, p0)):
            count = (dag.n0, dag.n1)[p][states].astype(np.int64)
            base = np.cumsum(count) - count
            slot = base[owner] + action
            payoff = np.bincount(slot, weights=other / nk * deviation[:, p], minlength=int(count.sum()))
            slot_state = np.repeat(states, count)
            probs = sol.action_probability(slot_state, p, np.arange(int(count.sum())) - np.repeat(base, count))
            best = np.maximum.reduceat(payoff, base)
            expected = np.add.reduceat(probs * payoff, base)
            self.gain[states] = np.maximum(self.gain[states], best - expected)
            totals = np.add.reduceat(probs, base)
            self.strategy_error = max(self.strategy_error, float(np.abs(totals - 1).max()),
                                      float(-probs.min()))


def check(dag: StateDag, solution: DagSolution) -> dict:
    """The certificate of ``solution`` (see the module docstring)."""
    work = Check(dag, solution)
    order, bounds = level_order(dag, heights(dag))
    for h in range(1, len(bounds) - 1):
        for part in chunks(dag, order[bounds[h]:bounds[h + 1]], CHUNK_ENTRIES):
            work.states(part)
    part = figures(work, np.arange(dag.num_states))
    return certificate(part, bool(solution.solved[dag.root]))


def figures(work: Check, states: np.ndarray) -> dict:
    """Step 3's figures over ``states`` (all of a DAG, or one shard's own states):
    the fields of :func:`certificate` but ``ok`` and the relative gain, with the
    range of the terminal payoffs among them (``low``, ``high``; None without any)."""
    dag, solution = work.dag, work.solution
    solved = solution.solved[states]
    checked = states[solved & ~dag.terminal[states]]
    gain = np.where(solved, work.gain[states], 0.0)
    diff = np.abs(work.values[checked] - solution.values[checked])
    value_error = float(diff.max(initial=0.0))
    if np.isnan(diff).any():
        value_error = float("inf")
    terminal = dag.payoff[states[dag.terminal[states]]]
    return {"max_gain": float(gain.max(initial=0.0)), "value_error": value_error,
            "strategy_error": work.strategy_error, "unsolved_reached": work.unsolved_reached,
            "states_checked": int(checked.size),
            "worst_state": int(states[gain.argmax()]) if states.size else 0,
            "low": float(terminal.min()) if terminal.size else None,
            "high": float(terminal.max()) if terminal.size else None}


def certificate(part: dict, root_solved: bool) -> dict:
    """The certificate from :func:`figures` (of a whole DAG, or combined over shards)."""
    spread = 0.0 if part["low"] is None else part["high"] - part["low"]
    scale = spread if spread > 0 else 1.0
    max_gain, value_error = part["max_gain"], part["value_error"]
    ok = (max_gain <= RELATIVE_TOLERANCE * scale and value_error <= RELATIVE_TOLERANCE * scale
          and part["strategy_error"] <= 1e-9 and part["unsolved_reached"] == 0 and root_solved)
    return {"max_gain": max_gain, "relative_gain": max_gain / scale, "value_error": value_error,
            "strategy_error": part["strategy_error"], "unsolved_reached": part["unsolved_reached"],
            "states_checked": part["states_checked"], "worst_state": part["worst_state"],
            "ok": ok}
