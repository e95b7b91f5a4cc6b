"""One LP solved by HiGHS so that Ctrl-C, a deadline and progress lines reach it.

``scipy.optimize.linprog(method="highs")`` blocks in C++ until HiGHS is done: Python's
SIGINT handler cannot run, so Ctrl-C waits for the end of a solve that can take
minutes, and nothing is printed meanwhile. scipy (>= 1.15) ships HiGHS' own binding,
whose callbacks run at every simplex (and interior-point) iteration. :func:`run_lp`
uses them:

1. while HiGHS runs, SIGINT only sets a flag (in the main thread); the callback turns
   the flag, or a passed deadline, into HiGHS' ``user_interrupt``;
2. HiGHS' ``time_limit`` option is the time to the deadline too, for the phases that call
   no callback (presolve, crossover);
3. the callback prints a progress line every :data:`PROGRESS_SECONDS` (iterations and
   HiGHS' current objective);
4. an interrupted run raises :class:`LPInterrupted` (a ``KeyboardInterrupt``), a timed
   out one :class:`~solvers.errors.LimitReached`, both saying how far HiGHS got.

The objective HiGHS reports before it is optimal belongs to its current simplex basis
(with its internal cost perturbations), so it is shown but not claimed as a bound.
Without the binding (older scipy), ``linprog`` runs with ``time_limit`` as before.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from solvers.errors import GameError, LimitReached

try:  # scipy >= 1.15 ships its HiGHS binding as a private module
    from scipy.optimize._highspy import _core as _highs
except ImportError:  # pragma: no cover - older scipy: linprog only
    _highs = None

PROGRESS_SECONDS = 2.0


class LPInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped HiGHS; the message says where."""


@dataclass
class LPResult:
    x: np.ndarray
    objective: float
    iterations: int


@dataclass
class _Watch:
    """What the callback sees and records."""

    what: str
    deadline: float | None
    progress: Callable[[str], None] | None
    started: float
    last_report: float
    interrupted: bool = False
    timed_out: bool = False
    iterations: int = 0
    objective: float = float("nan")

    def where(self) -> str:
        shown = "" if not np.isfinite(self.objective) else (
            f"; HiGHS' current objective {self.objective:.10g} is not a proven bound")
        return (f"{self.what} stopped after {self.iterations:,} simplex iterations in "
                f"{time.monotonic() - self.started:.1f} s{shown}")


def run_lp(cost: np.ndarray, a_ub: sparse.spmatrix, b_ub: np.ndarray, a_eq: sparse.spmatrix,
           b_eq: np.ndarray, n_nonneg: int, n_free: int, what: str,
           deadline: float | None = None,
           progress: Callable[[str], None] | None = None) -> LPResult:
    """min ``cost . x`` s.t. ``a_ub x <= b_ub``, ``a_eq x = b_eq``; the first ``n_nonneg``
    variables are ``>= 0``, the next ``n_free`` free. ``what`` names the LP in messages."""
    now = time.monotonic()
    if deadline is not None and now >= deadline:
        raise LimitReached(f"the time limit was reached before {what} started")
    if _highs is None:  # pragma: no cover - older scipy
        return _run_linprog(cost, a_ub, b_ub, a_eq, b_eq, n_nonneg, n_free, what, deadline)
    highs = _model(cost, a_ub, b_ub, a_eq, b_eq, n_nonneg, n_free, deadline)
    watch = _Watch(what, deadline, progress, now, now)

    def callback(kind, message, data_out, data_in, user) -> None:
        watch.iterations = max(data_out.simplex_iteration_count, data_out.ipm_iteration_count)
        watch.objective = data_out.objective_function_value
        moment = time.monotonic()
        if watch.deadline is not None and moment >= watch.deadline:
            watch.timed_out = True
        if watch.interrupted or watch.timed_out:
            data_in.user_interrupt = True
        elif watch.progress is not None and moment - watch.last_report >= PROGRESS_SECONDS:
            watch.last_report = moment
            watch.progress(f"lp: {what}, {watch.iterations:,} iterations, objective "
                           f"{watch.objective:.10g}, {moment - watch.started:.1f} s")

    highs.setCallback(callback, None)
    for kind in (_highs.cb.HighsCallbackType.kCallbackSimplexInterrupt,
                 _highs.cb.HighsCallbackType.kCallbackIpmInterrupt):
        highs.startCallback(kind)
    with _sigint_sets_flag(watch):
        highs.run()
    status = highs.getModelStatus()
    info = highs.getInfo()
    watch.iterations = max(watch.iterations, info.simplex_iteration_count)
    if status == _highs.HighsModelStatus.kOptimal:
        solution = highs.getSolution()
        return LPResult(np.array(solution.col_value)[:n_nonneg], info.objective_function_value,
                        info.simplex_iteration_count)
    if watch.interrupted:
        raise LPInterrupted(watch.where())
    if watch.timed_out or status == _highs.HighsModelStatus.kTimeLimit:
        raise LimitReached(f"the time limit was reached: {watch.where()}")
    raise GameError(f"{what} failed: {highs.modelStatusToString(status)}")


@contextmanager
def _sigint_sets_flag(watch: _Watch) -> Iterator[None]:
    """SIGINT sets ``watch.interrupted`` while HiGHS runs (only the main thread can
    install handlers; elsewhere Ctrl-C reaches the main thread anyway)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame) -> None:
        watch.interrupted = True

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _model(cost, a_ub, b_ub, a_eq, b_eq, n_nonneg: int, n_free: int, deadline: float | None):
    a = sparse.vstack([a_ub, a_eq]).tocsc()
    inf = _highs.kHighsInf
    lp = _highs.HighsLp()
    lp.num_col_, lp.num_row_ = a.shape[1], a.shape[0]
    lp.col_cost_ = np.asarray(cost, dtype=float)
    lp.col_lower_ = np.r_[np.zeros(n_nonneg), np.full(n_free, -inf)]
    lp.col_upper_ = np.full(n_nonneg + n_free, inf)
    lp.row_lower_ = np.r_[np.full(a_ub.shape[0], -inf), b_eq].astype(float)
    lp.row_upper_ = np.r_[b_ub, b_eq].astype(float)
    matrix = lp.a_matrix_
    matrix.num_col_, matrix.num_row_ = a.shape[1], a.shape[0]
    matrix.format_ = _highs.MatrixFormat.kColwise
    matrix.start_, matrix.index_, matrix.value_ = a.indptr, a.indices, a.data
    highs = _highs._Highs()
    options = _highs.HighsOptions()
    options.output_flag = False
    options.log_to_console = False
    if deadline is not None:
        options.time_limit = max(deadline - time.monotonic(), 1e-3)
    highs.passOptions(options)
    highs.passModel(lp)
    return highs


def _run_linprog(cost, a_ub, b_ub, a_eq, b_eq, n_nonneg: int, n_free: int, what: str,
                 deadline: float | None) -> LPResult:  # pragma: no cover - older scipy
    bounds = [(0, None)] * n_nonneg + [(None, None)] * n_free
    options = {} if deadline is None else {"time_limit": max(deadline - time.monotonic(), 1e-3)}
    result = linprog(cost, A_ub=a_ub.tocsr(), b_ub=b_ub, A_eq=a_eq.tocsr(), b_eq=b_eq,
                     bounds=bounds, method="highs", options=options)
    if result.status == 1:
        raise LimitReached(f"the time limit was reached: {what} stopped ({result.message})")
    if result.status != 0:
        raise GameError(f"{what} failed: {result.message}")
    return LPResult(result.x[:n_nonneg], float(result.fun), int(result.nit))
