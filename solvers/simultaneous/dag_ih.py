"""The interval heuristic (thesis Algorithms 6-9) on the compact model, through the old path.

The IH is a recursion along pivots that solves one node at a time; it is not yet
ported to level-batched arrays. On a :class:`~.dag.StateDag` it therefore

1. converts the DAG to a :class:`~.model.SimultaneousGame`
   (:func:`.dag_convert.dag_to_game`: about 56 bytes per entry, so for small and
   medium games only; ``memory_mb`` refuses larger ones);
2. runs :func:`.interval_heuristic.solve` on it, unchanged, so values and partial
   strategies are exactly today's;
3. maps the partial solution back onto the states (:func:`.dag_convert.from_game_solution`):
   unsolved states keep NaN values and ``solved`` false.
"""

from __future__ import annotations

from collections.abc import Callable

from solvers.errors import LimitReached

from . import interval_heuristic
from .dag import StateDag
from .dag_convert import dag_to_game, from_game_solution
from .dag_solution import DagSolution

#: bytes per entry and per state the converted game holds (entries: 56 + 16 derived)
GAME_BYTES_PER_ENTRY = 72
GAME_BYTES_PER_STATE = 120


def solve(dag: StateDag, selection: str = "first",
          progress: Callable[[int, int], None] | None = None,
          time_limit: float | None = None, memory_mb: float | None = None) -> DagSolution:
    """The interval heuristic's partial behavioural strategy on ``dag``."""
    need = (dag.nbytes() + GAME_BYTES_PER_ENTRY * dag.num_entries
            + GAME_BYTES_PER_STATE * dag.num_states)
    if memory_mb is not None and need > memory_mb * 2**20:
        raise LimitReached(f"the interval heuristic converts the DAG to the per-entry model: "
                           f"about {need / 2**20:.0f} MB, over the budget of {memory_mb:.0f} MB")
    game, state_node = dag_to_game(dag)
    try:
        solution = interval_heuristic.solve(game, selection, progress, time_limit)
    except LimitReached as exc:
        if getattr(exc, "partial", None) is not None:
            exc.partial = from_game_solution(dag, exc.partial, state_node)
        raise
    return from_game_solution(dag, solution, state_node)
