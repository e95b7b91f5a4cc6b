"""Solving a :class:`~.dag.StateDag`: one entry point for the scale path's solvers.

``solve_dag(dag, solver="baseline" | "ih", selection="first", progress=None,
time_limit=None, memory_mb=None) -> DagSolution``, for the simultaneous-move
solvers of :mod:`solvers.registry` that run natively on the DAG:

* ``baseline``: backward induction level by level with batched matrix games
  (:mod:`.dag_baseline`);
* ``ih``: the interval heuristic natively on the DAG, its matrix games and witness
  subgames by the baseline's level batches (:mod:`.dag_ih`).

The DAG is validated first (:meth:`.dag.StateDag.validate`; a cycle is found by the
heights). Check the result with :func:`.dag_certificate.check`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from solvers.errors import GameError, ValidationError
from solvers.registry import SIMULTANEOUS, SOLVERS
from solvers.registry import solver as find_solver
from solvers.simultaneous.dag import StateDag
from solvers.simultaneous.dag_solution import DagSolution


def solve_dag(dag: StateDag, solver: str = "baseline", selection: str = "first",
              progress: Callable[[int, int], None] | None = None,
              time_limit: float | None = None, memory_mb: float | None = None) -> DagSolution:
    """Solve ``dag`` with ``solver`` (see the module docstring)."""
    solve = find_solver(solver, SIMULTANEOUS).solve_dag
    if solve is None:
        native = ", ".join(name for name, s in SOLVERS.items() if s.solve_dag is not None)
        raise GameError(f"solver {solver!r} does not run on a state DAG; use one of {native}")
    dag.validate()    # one pass over the entries; a bad DAG gets one line, not a traceback
    empty = np.flatnonzero((dag.n0 > 0) & ((dag.n1 == 0) | (dag.nk == 0)))
    if empty.size:
        raise ValidationError(f"state {int(empty[0])}: player 0 has actions but player 1 "
                              "or nature has none")
    return solve(dag, selection, progress, time_limit, memory_mb)
