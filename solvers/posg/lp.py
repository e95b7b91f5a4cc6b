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
from scipy.optimize import linprog

from solvers.errors import GameRuntimeError

try:  # scipy >= 1.15 ships its HiGHS binding as a private module
    from scipy.optimize._highspy import _core as _highs
except ImportError:  # pragma: no cover - older scipy: linprog only
    _highs = None


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
    if direct and _highs is not None:
        return _solve_direct(cost, a_ub, b_ub, a_eq, b_eq, lower, upper, what, presolve)
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq,
                  bounds=np.c_[lower, upper], method="highs", options={"presolve": presolve})
    if res.status != 0:
        raise GameRuntimeError(f"{what} LP failed: {res.message}")
    return LpSolution(res.x, float(res.fun), res.ineqlin.marginals)


def _finite(values: np.ndarray) -> np.ndarray:
    return np.clip(values, -_highs.kHighsInf, _highs.kHighsInf)


def _solve_direct(cost, a_ub, b_ub, a_eq, b_eq, lower, upper, what, presolve) -> LpSolution:
    a = sp.vstack([a_ub, a_eq]).tocsc()
    n_ub = a_ub.shape[0]
    lp = _highs.HighsLp()
    lp.num_col_, lp.num_row_ = a.shape[1], a.shape[0]
    lp.col_cost_ = np.asarray(cost, dtype=float)
    lp.col_lower_ = _finite(np.asarray(lower, dtype=float))
    lp.col_upper_ = _finite(np.asarray(upper, dtype=float))
    lp.row_lower_ = np.r_[np.full(n_ub, -_highs.kHighsInf), b_eq].astype(float)
    lp.row_upper_ = np.r_[b_ub, b_eq].astype(float)
    matrix = lp.a_matrix_
    matrix.num_col_, matrix.num_row_ = a.shape[1], a.shape[0]
    matrix.format_ = _highs.MatrixFormat.kColwise
    matrix.start_, matrix.index_, matrix.value_ = a.indptr, a.indices, a.data
    highs = _highs._Highs()
    options = _highs.HighsOptions()
    options.output_flag = False
    options.log_to_console = False
    options.presolve = "on" if presolve else "off"
    highs.passOptions(options)
    highs.passModel(lp)
    highs.run()
    status = highs.getModelStatus()
    if status != _highs.HighsModelStatus.kOptimal:
        raise GameRuntimeError(f"{what} LP failed: {highs.modelStatusToString(status)}")
    solution = highs.getSolution()
    return LpSolution(np.array(solution.col_value), highs.getInfo().objective_function_value,
                      np.array(solution.row_dual)[:n_ub])
