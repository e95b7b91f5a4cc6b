"""The exact solve of a small GDL-II game within the start clock.

1. :func:`gdl.gdl2.solve.solve_gdl2` expands the game into its extensive form
   (information sets from each role's own moves and percepts, chance from ``random``)
   within a node budget and the deadline, and solves it with CFR+; the average
   strategy is certified by its NashConv.
2. Play: at our information set (our own history) the strategy's weights of the legal
   moves (:meth:`SolvedStrategy.at`); an information set it does not know leaves the
   choice to the search.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gdl.gdl2.solve import Gdl2Solution, solve_gdl2
from gdl.reasoning.machine import StateMachine
from solvers.errors import GameError, LimitReached

ITERATIONS = 100_000  # CFR+ iterations at most (Kuhn: NashConv ~1e-3 after a few thousand)


@dataclass(frozen=True)
class SolvedStrategy:
    """Every player's solved behavioural strategy, looked up by own history."""

    roles: tuple[str, ...]
    solution: Gdl2Solution
    summary: dict[str, Any]

    def at(self, role: int, history: Sequence[tuple[str, tuple[str, ...]]],
           legal: Sequence[str]) -> list[float] | None:
        """The weights of ``legal`` at ``role``'s information set after ``history``
        (own move and percepts per step); None when the strategy has no advice there."""
        found = self.solution.move_probabilities(self.roles[role], history)
        if found is None:
            return None
        weights = [float(found.get(move, 0.0)) for move in legal]
        return weights if sum(weights) > 0 else None


def solve_small_game(machine: StateMachine, until: float,
                     max_nodes: int) -> SolvedStrategy | str:
    """The solved strategy of ``machine``'s game, or why there is none (a str)."""
    started = time.monotonic()
    try:
        solution = solve_gdl2(machine, solver="cfr+", iterations=ITERATIONS,
                              max_nodes=max_nodes, deadline=until)
    except (LimitReached, GameError, MemoryError, RecursionError) as exc:
        return f"not solved: {exc}"
    game, result = solution.game, solution.result
    summary = {"nodes": int(game.num_nodes), "infosets": len(game.infoset_names),
               "iterations": result.iterations, "nash_conv": round(result.nash_conv, 6),
               "values": [round(v, 4) for v in result.values],
               "seconds": round(time.monotonic() - started, 3)}
    return SolvedStrategy(tuple(machine.roles), solution, summary)
