"""The exact solve of a small GDL-II game within the start clock.

1. Expand the game into its extensive form (:func:`gdl.gdl2_tree.expand_gdl2`:
   information sets from each role's own moves and percepts, chance from ``random``)
   within a node budget and half the time given.
2. Solve it with CFR+ (:func:`solvers.extensive.solve.solve`) in the rest of the time;
   the average strategy is certified by its NashConv.
3. Play: at our information set, named by :func:`gdl.gdl2_tree.infoset_name` from our
   own history, the strategy's weights of the legal moves (:meth:`SolvedStrategy.at`);
   an information set the strategy does not know leaves the choice to the search.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gdl.gdl2_tree import expand_gdl2, infoset_name
from gdl.machine import StateMachine
from solvers.errors import GameError, LimitReached
from solvers.extensive.solve import solve
from solvers.extensive.strategy_io import strategy_dict

ITERATIONS = 100_000  # CFR+ iterations at most (Kuhn: NashConv ~1e-4 after a few hundred)


@dataclass(frozen=True)
class SolvedStrategy:
    """A behavioural strategy ``{infoset name: {move: probability}}`` of every player."""

    roles: tuple[str, ...]
    table: dict[str, dict[str, float]]
    summary: dict[str, Any]

    def at(self, role: int, history: Sequence[tuple[str, tuple[str, ...]]],
           legal: Sequence[str]) -> list[float] | None:
        """The weights of ``legal`` at ``role``'s information set after ``history``
        (own move and percepts per step); None when the strategy has no advice there."""
        found = self.table.get(infoset_name(self.roles[role], history))
        if found is None:
            return None
        weights = [float(found.get(move, 0.0)) for move in legal]
        return weights if sum(weights) > 0 else None


def solve_small_game(machine: StateMachine, until: float,
                     max_nodes: int) -> SolvedStrategy | str:
    """The solved strategy of ``machine``'s game, or why there is none (a str)."""
    started = time.monotonic()
    try:
        game = expand_gdl2(machine, max_nodes=max_nodes,
                           deadline=started + (until - started) / 2)
        if not game.perfect_recall:
            return "not solved: the game tree lacks perfect recall"
        if time.monotonic() >= until:
            return "not solved: no time left after the expansion"
        result = solve(game, "cfr+", iterations=ITERATIONS, deadline=until)
    except (LimitReached, GameError, MemoryError, RecursionError) as exc:
        return f"not solved: {exc}"
    summary = {"nodes": int(game.num_nodes), "infosets": len(game.infoset_names),
               "iterations": result.iterations, "nash_conv": round(result.nash_conv, 6),
               "values": [round(v, 4) for v in result.values],
               "seconds": round(time.monotonic() - started, 3)}
    return SolvedStrategy(tuple(machine.roles), strategy_dict(game, result.strategy), summary)
