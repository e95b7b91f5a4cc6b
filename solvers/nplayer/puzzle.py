"""Solve a one-player game (a puzzle, with or without nature) on its compact DAG.

Backward induction level by level in increasing height (:func:`.dag.heights`: every
child of a state is lower, so one level is solved with a few array operations):

1. A terminal state's value is its goal, its steps 0.
2. A move's value is the mean of its children's values over nature's ``nk`` equally
   likely outcomes (one child without nature), its steps 1 + the mean of theirs.
3. A state takes the highest move value; among the moves within :data:`TIE` of it,
   the fewest (expected) steps; among those, the first move in the engine's order
   (:data:`TIE_RULE`). A move equal in value but with more steps is never taken, so
   the plan from the root reaches the best goal in the fewest steps.

The value is the highest goal the player can guarantee (with nature: the best
expected goal), ``steps`` how many steps the policy takes to the end (expected with
nature). The policy is pure: probability 1 on the chosen move. Numpy only: about
ten array passes over the entries in all.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from solvers.errors import LimitReached, ValidationError
from solvers.nplayer.dag import JointDag, JointSolution, heights, strategy_layout
from solvers.simultaneous.dag_baseline import level_order
from solvers.simultaneous.model import concat_ranges

TIE = 1e-9      # move values this close (relative to the goal range) count as equal
TIE_RULE = ("the highest value; then the fewest (expected) steps to the end; then the "
            "first move in the engine's order")


def solve(dag: JointDag, progress: Callable[[int, int], None] | None = None,
          time_limit: float | None = None) -> JointSolution:
    """The optimal policy of a one-player DAG (steps 1-3 of the module docstring);
    ``progress(done, total)`` after each level; LimitReached past ``time_limit``
    seconds (checked between levels)."""
    start = time.perf_counter()
    if dag.num_players != 1:
        raise ValidationError(f"a puzzle has one player, not {dag.num_players}")
    height = heights(dag)
    terminal = dag.terminal
    values = np.where(terminal, dag.payoff[:, 0], np.nan)
    steps = np.where(terminal, 0.0, np.nan)
    chosen = np.full(dag.num_states, -1, dtype=np.int64)
    tie = TIE * max(1.0, float(np.ptp(dag.payoff[terminal, 0])) if terminal.any() else 1.0)
    order, bounds = level_order(dag, height)  # type: ignore[arg-type]
    done = int(np.count_nonzero(terminal))
    for level in range(1, len(bounds) - 1):
        states = order[bounds[level]:bounds[level + 1]]
        _solve_level(dag, states, values, steps, chosen, tie)
        done += len(states)
        if progress is not None:
            progress(done, dag.num_states)
        if time_limit is not None and time.perf_counter() - start >= time_limit:
            raise LimitReached(f"plan stopped: the time limit was reached with {done:,} of "
                               f"{dag.num_states:,} states solved (raise --time-limit)")
    solved = np.ones(dag.num_states, dtype=bool)
    start = strategy_layout(dag, solved)
    strategy = np.zeros(int(start[-1]))
    nonterminal = np.flatnonzero(~terminal)
    strategy[start[nonterminal] + chosen[nonterminal]] = 1.0
    return JointSolution(values[:, None], solved, start, strategy, "plan", steps,
                         {"tie_rule": TIE_RULE, "pure": True})


def _solve_level(dag: JointDag, states: np.ndarray, values: np.ndarray, steps: np.ndarray,
                 chosen: np.ndarray, tie: float) -> None:
    """Steps 2-3 for states whose children are all solved."""
    moves = dag.counts[states, 0].astype(np.int64)
    outcomes = dag.nk[states].astype(np.int64)
    child = dag.entry_child[concat_ranges(dag.entry_start[states], moves * outcomes)]
    # a move's outcomes are contiguous (nature varies fastest): one reduceat per move
    per_move = np.repeat(outcomes, moves)
    move_first = np.cumsum(per_move) - per_move
    move_value = np.add.reduceat(values[child], move_first) / per_move
    move_steps = 1.0 + np.add.reduceat(steps[child], move_first) / per_move
    state_first = np.cumsum(moves) - moves
    best = np.maximum.reduceat(move_value, state_first)
    owner = np.repeat(np.arange(len(states)), moves)
    good = move_value >= best[owner] - tie
    fewest = np.minimum.reduceat(np.where(good, move_steps, np.inf), state_first)
    pick = good & (move_steps <= fewest[owner] + tie)
    index = np.arange(len(move_value))
    first = np.minimum.reduceat(np.where(pick, index, len(index)), state_first)
    chosen[states] = first - state_first
    values[states] = move_value[first]
    steps[states] = move_steps[first]
