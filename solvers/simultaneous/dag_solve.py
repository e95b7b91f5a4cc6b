"""Solving a :class:`~.dag.StateDag`: one entry point for the scale path's solvers.

``solve_dag(dag, solver="baseline" | "ih", selection="first", progress=None,
time_limit=None, memory_mb=None) -> DagSolution``:

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

from . import dag_baseline, dag_ih
from .dag import StateDag
from .dag_solution import DagSolution

SOLVERS = {"baseline": dag_baseline.solve, "ih": dag_ih.solve}


def solve_dag(dag: StateDag, solver: str = "baseline", selection: str = "first",
              progress: Callable[[int, int], None] | None = None,
              time_limit: float | None = None, memory_mb: float | None = None) -> DagSolution:
    """Solve ``dag`` with ``solver`` (see the module docstring)."""
    if solver not in SOLVERS:
        raise GameError(f"unknown solver {solver!r} for a state DAG; use one of {', '.join(SOLVERS)}")
    dag.validate()    # one pass over the entries; a bad DAG gets one line, not a traceback
    empty = np.flatnonzero((dag.n0 > 0) & ((dag.n1 == 0) | (dag.nk == 0)))
    if empty.size:
        raise ValidationError(f"state {int(empty[0])}: player 0 has actions but player 1 "
                              "or nature has none")
    return SOLVERS[solver](dag, selection, progress, time_limit, memory_mb)
