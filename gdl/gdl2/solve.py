"""Solve a GDL-II game and look its strategy up by a player's own history.

:func:`solve_gdl2` expands the game (:func:`gdl.gdl2.tree.expand_gdl2`) and solves it
with an extensive-form solver within a node budget and a deadline (say, an agent's
start clock). :meth:`Gdl2Solution.move_probabilities` gives a role's mixed move after
the history it knows: its own moves and percepts, one ``(move KIF, sorted percepts)``
pair per step, as :meth:`~gdl.reasoning.machine.StateMachine.move_to_kif` and
:meth:`~gdl.reasoning.machine.StateMachine.percepts` spell them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gdl.gdl2.tree import DEFAULT_MAX_NODES, Step, expand_gdl2, infoset_name
from gdl.reasoning.state_machine import StateMachine
from solvers.extensive.model import ExtensiveGame
from solvers.extensive.solve import SolveResult, solve
from solvers.extensive.strategy_io import strategy_dict


@dataclass(frozen=True)
class Gdl2Solution:
    game: ExtensiveGame
    result: SolveResult
    policy: dict[str, dict[str, float]]   # information-set name -> {move KIF: probability}

    @property
    def values(self) -> dict[str, float]:
        """Each player's value under the strategy found (goal values, 0-100)."""
        return dict(zip(self.game.player_names, self.result.values, strict=True))

    def move_probabilities(self, role: str, history: Sequence[Step]) -> dict[str, float] | None:
        """``{move KIF: probability}`` for ``role`` after ``history``; None where the
        role has no choice (one legal move) or the history never happens in the game."""
        return self.policy.get(infoset_name(role, [(m, tuple(p)) for m, p in history]))


def solve_gdl2(machine: StateMachine, *, solver: str = "cfr+", iterations: int | None = None,
               max_nodes: int = DEFAULT_MAX_NODES, deadline: float | None = None,
               progress: Callable[[str], None] | None = None) -> Gdl2Solution:
    """Expand and solve (``solver`` as ``ggp solve``: cfr, cfr+, dcfr, mccfr or lp).

    LimitReached when the tree passes ``max_nodes`` or the expansion (or the LP) passes
    ``deadline`` (``time.monotonic()``). An iterative solver runs ``iterations``, or
    without them until the deadline (leaving time for its NashConv), or 1000."""
    game = expand_gdl2(machine, max_nodes=max_nodes, deadline=deadline, progress=progress)
    result = solve(game, solver, iterations=iterations, deadline=deadline, progress=progress)
    return Gdl2Solution(game, result, strategy_dict(game, result.strategy))
