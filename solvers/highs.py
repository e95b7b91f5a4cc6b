"""HiGHS as bundled with scipy: the binding, and an LP handed to it directly.

scipy (>= 1.15) ships HiGHS' own Python binding as a private module; :func:`binding`
is that module, or ``None`` on an older scipy (callers then use
``scipy.optimize.linprog``). It is imported on first use: it loads scipy.optimize
(~0.7 s), which an agent worker importing the solvers must not pay on a start clock.
"""

from __future__ import annotations

from functools import cache
from types import ModuleType
from typing import Any

import numpy as np
import scipy.sparse as sp


@cache
def binding() -> ModuleType | None:
    """HiGHS' binding in scipy, or None on an older scipy."""
    try:  # deferred: scipy.optimize (see the module docstring)
        from scipy.optimize._highspy import _core
    except ImportError:  # pragma: no cover - older scipy: linprog only
        return None
    return _core


def linprog(*args: Any, **kwargs: Any) -> Any:
    """``scipy.optimize.linprog``, imported on first use (see the module docstring)."""
    from scipy.optimize import linprog as run  # deferred: scipy.optimize, ~0.7 s

    return run(*args, **kwargs)


def highs_model(cost: np.ndarray, a_ub: sp.spmatrix, b_ub: np.ndarray, a_eq: sp.spmatrix,
                b_eq: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                presolve: bool | None = None, time_limit: float | None = None):
    """A HiGHS instance holding min ``cost . x`` s.t. ``a_ub x <= b_ub``, ``a_eq x = b_eq``,
    ``lower <= x <= upper`` (infinite bounds allowed), quiet, ready to ``run()``.
    ``presolve`` None keeps HiGHS' choice."""
    core = binding()
    inf = core.kHighsInf
    a = sp.vstack([a_ub, a_eq]).tocsc()
    n_ub = a_ub.shape[0]
    lp = core.HighsLp()
    lp.num_col_, lp.num_row_ = a.shape[1], a.shape[0]
    lp.col_cost_ = np.asarray(cost, dtype=float)
    lp.col_lower_ = np.clip(np.asarray(lower, dtype=float), -inf, inf)
    lp.col_upper_ = np.clip(np.asarray(upper, dtype=float), -inf, inf)
    lp.row_lower_ = np.r_[np.full(n_ub, -inf), b_eq].astype(float)
    lp.row_upper_ = np.r_[b_ub, b_eq].astype(float)
    matrix = lp.a_matrix_
    matrix.num_col_, matrix.num_row_ = a.shape[1], a.shape[0]
    matrix.format_ = core.MatrixFormat.kColwise
    matrix.start_, matrix.index_, matrix.value_ = a.indptr, a.indices, a.data
    highs = core._Highs()
    options = core.HighsOptions()
    options.output_flag = False
    options.log_to_console = False
    if presolve is not None:
        options.presolve = "on" if presolve else "off"
    if time_limit is not None:
        options.time_limit = max(float(time_limit), 1e-3)
    highs.passOptions(options)
    highs.passModel(lp)
    return highs
