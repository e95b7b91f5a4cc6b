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

from solvers.errors import GameError, LimitReached
from solvers.highs import binding, highs_model, linprog

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
    _highs = binding()
    if _highs is None:  # pragma: no cover - older scipy
        return _run_linprog(cost, a_ub, b_ub, a_eq, b_eq, n_nonneg, n_free, what, deadline)
    inf = _highs.kHighsInf
    highs = highs_model(cost, a_ub, b_ub, a_eq, b_eq,
                        np.r_[np.zeros(n_nonneg), np.full(n_free, -inf)],
                        np.full(n_nonneg + n_free, inf),
                        time_limit=None if deadline is None else deadline - now)
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
            objective = (f", objective {watch.objective:.10g}"
                         if np.isfinite(watch.objective) else "")
            watch.progress(f"lp: {what}, {watch.iterations:,} iterations{objective}, "
                           f"{moment - watch.started:.1f} s")

    if progress is not None:
        progress(f"lp: {what}: {highs.getNumCol():,} variables, {highs.getNumRow():,} "
                 f"constraints, {highs.getNumNz():,} nonzeros")
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
