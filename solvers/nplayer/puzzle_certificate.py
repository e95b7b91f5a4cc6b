"""The certificate of a puzzle solution, by code separate from the solver.

It reads only the DAG and the solution's values, steps and strategy, and works on all
entries at once (no levels, no reduceat per level as the solver does):

1. Every move's value and steps from its children: ``Q(s, a) = mean_c value(child)``,
   ``T(s, a) = 1 + mean_c steps(child)`` (one bincount over all entries).
2. The chosen move of every non-terminal state from the strategy, which must be pure
   (one probability 1, the rest 0).
3. ``max_gain``: the largest ``max_a Q(s, a) - value(s)`` (a better move left out);
   ``value_error``: the largest ``|value(s) - Q(s, chosen)|`` and, at terminal states,
   ``|value - goal|`` (the Bellman residuals); ``steps_error``: the same for steps;
   ``steps_gain``: the largest saving of steps by another move of equal value.
4. Without nature, the plan from the root replayed through the DAG: it must reach a
   terminal state whose goal is the root's value in exactly ``steps[root]`` steps.

``ok`` means every number is within ``1e-9`` of the goal range and the replay agrees.
"""

from __future__ import annotations

import numpy as np

from solvers.nplayer.dag import JointDag, JointSolution

TOLERANCE = 1e-9


def check(dag: JointDag, solution: JointSolution) -> dict:
    """The certificate (module docstring) as a JSON-ready dict."""
    terminal = dag.terminal
    values = solution.values[:, 0]
    steps = solution.steps if solution.steps is not None else np.zeros(dag.num_states)
    scale = max(1.0, float(np.ptp(dag.payoff[terminal, 0])) if terminal.any() else 1.0)
    nonterminal = np.flatnonzero(~terminal)
    moves = dag.counts[:, 0].astype(np.int64) * (~terminal)
    move_start = np.concatenate([[0], np.cumsum(moves)])
    # step 1: each entry's move, numbered over all states
    entry_owner = np.repeat(np.arange(dag.num_states), np.diff(dag.entry_start))
    outcomes = np.maximum(dag.nk.astype(np.int64), 1)
    entry_move = (move_start[entry_owner]
                  + (np.arange(dag.num_entries) - dag.entry_start[entry_owner])
                  // outcomes[entry_owner])
    per_move = np.repeat(outcomes, moves).astype(float)
    q = np.bincount(entry_move, values[dag.entry_child], len(per_move)) / per_move
    t = 1.0 + np.bincount(entry_move, steps[dag.entry_child], len(per_move)) / per_move
    # step 2: the chosen moves
    probs = solution.strategy
    move_of = np.repeat(np.arange(dag.num_states), moves)
    if not _pure(probs, solution.strategy_start, move_start, move_of, nonterminal):
        return {"ok": False, "pure": False, "max_gain": float("nan")}
    picked = np.flatnonzero(probs == 1.0)       # one global move index per state
    chosen = np.full(dag.num_states, -1, dtype=np.int64)
    chosen[move_of[picked]] = picked
    # step 3
    best = np.full(dag.num_states, -np.inf)
    np.maximum.at(best, move_of, q)
    gain = float((best[nonterminal] - values[nonterminal]).max(initial=0.0))
    value_error = max(float(np.abs(values[nonterminal] - q[chosen[nonterminal]]).max(initial=0.0)),
                      float(np.abs(values[terminal] - dag.payoff[terminal, 0]).max(initial=0.0)))
    steps_error = max(float(np.abs(steps[nonterminal] - t[chosen[nonterminal]]).max(initial=0.0)),
                      float(np.abs(steps[terminal]).max(initial=0.0)))
    equal = q >= values[move_of] - TOLERANCE * scale
    fewest = np.full(dag.num_states, np.inf)
    np.minimum.at(fewest, move_of[equal], t[equal])
    steps_gain = float((steps[nonterminal] - fewest[nonterminal]).max(initial=0.0))
    result = {"max_gain": gain, "value_error": value_error, "steps_error": steps_error,
              "steps_gain": steps_gain, "pure": True, "states_checked": dag.num_states}
    ok = max(gain, value_error, steps_error, steps_gain) <= TOLERANCE * scale
    # step 4
    if not (dag.nk[~terminal] > 1).any():
        reached, length = replay_plan(dag, chosen - move_start[:-1])
        result["plan_goal"] = float(dag.payoff[reached, 0])
        result["plan_steps"] = length
        ok = ok and abs(result["plan_goal"] - values[dag.root]) <= TOLERANCE * scale \
            and length == steps[dag.root]
    result["ok"] = bool(ok)
    return result


def _pure(probs: np.ndarray, strategy_start: np.ndarray, move_start: np.ndarray,
          move_of: np.ndarray, nonterminal: np.ndarray) -> bool:
    """One probability 1 and the rest 0 at every non-terminal state."""
    if not np.array_equal(strategy_start, move_start) or not np.isin(probs, (0.0, 1.0)).all():
        return False
    ones = np.bincount(move_of, probs == 1.0, len(move_start) - 1)
    return bool((ones[nonterminal] == 1).all())


def replay_plan(dag: JointDag, chosen: np.ndarray) -> tuple[int, int]:
    """(terminal state reached, steps) following ``chosen`` from the root (no nature)."""
    s, length = dag.root, 0
    while not dag.terminal[s]:
        if length > dag.num_states:
            raise ValueError("the plan loops")
        s = int(dag.entry_child[dag.entry_start[s] + chosen[s]])
        length += 1
    return s, length
