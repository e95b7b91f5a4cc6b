"""LP calls of the POSG solver: HiGHS, as bundled with scipy.

``scipy.optimize.linprog(method="highs")`` spends more time around a small LP than
HiGHS spends solving it (input checks, option checks, and a Python loop over every
column for the bound multipliers, which we never use). HSVI solves thousands of
small LPs, so :func:`solve_lp` hands the model to scipy's HiGHS binding directly
when this scipy has it, with the same defaults, and otherwise calls ``linprog``.
Both return the primal solution and the multipliers of the inequality rows with
linprog's sign convention (``<= 0`` for a binding row of a minimisation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from solvers.errors import GameRuntimeError
from solvers.highs import binding, highs_model, linprog


@dataclass(frozen=True)
class LpSolution:
    x: np.ndarray
    fun: float
    ineq_duals: np.ndarray


def solve_lp(cost: np.ndarray, a_ub: sp.csr_matrix, b_ub: np.ndarray, a_eq: sp.csr_matrix,
             b_eq: np.ndarray, lower: np.ndarray, upper: np.ndarray, what: str,
             presolve: bool = False, direct: bool = True) -> LpSolution:
    """min ``cost . x`` s.t. ``a_ub x <= b_ub``, ``a_eq x = b_eq``, ``lower <= x <= upper``.

    HiGHS' presolve is off unless asked for: on the small stage LPs it costs more
    than it saves (measured: peg03 to gap 1 in 2.0 s of CPU instead of 3.0 s).
    """
    if direct and binding() is not None:
        return _solve_direct(cost, a_ub, b_ub, a_eq, b_eq, lower, upper, what, presolve)
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq,
                  bounds=np.c_[lower, upper], method="highs", options={"presolve": presolve})
    if res.status != 0:
        raise GameRuntimeError(f"{what} LP failed: {res.message}")
    return LpSolution(res.x, float(res.fun), res.ineqlin.marginals)


def _solve_direct(cost, a_ub, b_ub, a_eq, b_eq, lower, upper, what, presolve) -> LpSolution:
    n_ub = a_ub.shape[0]
    highs = highs_model(cost, a_ub, b_ub, a_eq, b_eq, lower, upper, presolve=presolve)
    highs.run()
    status = highs.getModelStatus()
    if status != binding().HighsModelStatus.kOptimal:
        raise GameRuntimeError(f"{what} LP failed: {highs.modelStatusToString(status)}")
    solution = highs.getSolution()
    return LpSolution(np.array(solution.col_value), highs.getInfo().objective_function_value,
                      np.array(solution.row_dual)[:n_ub])
