"""Run a solver on an extensive-form game within an iteration and time budget.

One entry point for the command line, the playable game's equilibrium strategy and
the benchmark: :func:`solve` picks the algorithm by name, iterates in growing chunks
until the iteration count or the time limit is reached (printing a progress line at
most every ``progress_every`` seconds), then certifies the average strategy with
:func:`.exploitability.nash_conv`. With ``trace``, the NashConv of the average strategy
is also measured at iteration counts spaced by a factor :data:`TRACE_GROWTH` (about 60
points per million iterations, a log-log plot's even spacing); the time those
measurements take is left out of the seconds reported with them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from solvers.errors import GameError
from solvers.extensive.exploitability import nash_conv
from solvers.extensive.model import ExtensiveGame
from solvers.extensive.sequence_form_lp import solve_lp
from solvers.extensive.strategy_io import root_strategy
from solvers.registry import EXTENSIVE
from solvers.registry import solver as find_solver
from solvers.report import by_player

SAMPLING = ("chance", "outcome")
DEFAULT_ITERATIONS = 1000
PROGRESS_SECONDS = 2.0
TRACE_GROWTH = 1.25

# trace(iterations, seconds, nash_conv) of the average strategy so far
TraceHook = Callable[[int, float, float], None]


@dataclass(frozen=True)
class SolveResult:
    solver: str
    values: list[float]
    nash_conv: float
    iterations: int
    seconds: float
    strategy: np.ndarray

    def summary(self, game: ExtensiveGame) -> dict:
        """The JSON contract of ``ggp solve --json`` (``docs/solve-json.md``)."""
        return {"solver": self.solver, "values": by_player(game.player_names, self.values),
                "root_strategy": root_strategy(game, self.strategy),
                "nash_conv": self.nash_conv, "iterations": self.iterations,
                "seconds": round(self.seconds, 6)}


def solve(game: ExtensiveGame, solver: str = "cfr+", iterations: int | None = None,
          time_limit: float | None = None, seed: int = 0, sampling: str = "chance",
          progress: Callable[[str], None] | None = None,
          progress_every: float | None = None, deadline: float | None = None,
          trace: TraceHook | None = None) -> SolveResult:
    """Solve ``game``; with neither budget given, run :data:`DEFAULT_ITERATIONS`.

    ``deadline`` (``time.monotonic()``; else ``time_limit`` seconds from now) covers the
    final certificate too: the solver stops early enough for one NashConv pass, timed on
    the uniform strategy before it starts.
    """
    entry = find_solver(solver, EXTENSIVE)
    started = time.monotonic()
    progress_every = PROGRESS_SECONDS if progress_every is None else progress_every
    if deadline is None and time_limit is not None:
        deadline = started + time_limit
    # the last step, the certificate, gets its time: one NashConv pass, timed now
    stop = None
    if deadline is not None:
        before = time.monotonic()
        nash_conv(game, game.uniform_strategy())
        stop = deadline - (time.monotonic() - before)
    if entry.make is None:      # the exact one: the sequence-form LP
        solution = solve_lp(game, deadline=stop, progress=progress)
        check = nash_conv(game, solution.strategy)
        return SolveResult(solver, solution.values, check.nash_conv, solution.iterations,
                           time.monotonic() - started, solution.strategy)
    if iterations is None and deadline is None:
        iterations = DEFAULT_ITERATIONS
    if iterations is not None and iterations < 0:
        raise GameError("--iterations must be >= 0")
    run = entry.make(game, seed, sampling)
    chunk, done = 1, 0
    last_report = started
    point = _TracePoints(game, run.average_strategy, trace, started)
    while (iterations is None or done < iterations) and (stop is None or time.monotonic() < stop):
        step = chunk if iterations is None else min(chunk, iterations - done)
        step = point.limit(done, step)
        chunk_start = time.monotonic()
        run.iterate(step)
        done += step
        now = time.monotonic()
        point.record(done, now, stop)
        # grow chunks to ~0.2 s so timing checks cost nothing but limits stay tight
        if now - chunk_start < 0.1:
            chunk *= 2
        if stop is not None and now >= stop:
            break
        if progress is not None and now - last_report >= progress_every:
            last_report = now
            total = "" if iterations is None else f"/{iterations}"
            check = nash_conv(game, run.average_strategy())
            progress(f"{solver}: iteration {done}{total}, nash_conv {check.nash_conv:.6g}, "
                     f"{now - started:.1f} s")
        if stop is not None:
            per_iteration = (now - chunk_start) / step
            chunk = max(1, min(chunk, int((stop - now) / max(per_iteration, 1e-9)) + 1))
    solved = time.monotonic() - started
    strategy = run.average_strategy()
    check = nash_conv(game, strategy)
    if trace is not None and done > point.recorded:
        trace(done, solved - point.measuring, check.nash_conv)
    return SolveResult(solver, check.values, check.nash_conv, done,
                       time.monotonic() - started, strategy)


class _TracePoints:
    """When to measure NashConv for a trace: at ``next`` iterations, growing by
    TRACE_GROWTH; the chunks of iterations are cut to land on those counts."""

    def __init__(self, game: ExtensiveGame, average: Callable[[], np.ndarray],
                 trace: TraceHook | None, started: float) -> None:
        self.game, self.average, self.trace, self.started = game, average, trace, started
        self.next = 1
        self.recorded = 0           # the iterations of the last point
        self.measuring = 0.0        # seconds spent measuring, left out of the trace
        self.cost = 0.0             # the last measurement's seconds

    def limit(self, done: int, step: int) -> int:
        return step if self.trace is None else max(1, min(step, self.next - done))

    def record(self, done: int, now: float, stop: float | None) -> None:
        if self.trace is None or done < self.next:
            return
        self.next = max(done + 1, int(done * TRACE_GROWTH))
        if stop is not None and now + self.cost >= stop:
            return      # the time left belongs to the final certificate
        value = nash_conv(self.game, self.average()).nash_conv
        self.cost = time.monotonic() - now
        self.trace(done, now - self.started - self.measuring, value)
        self.recorded = done
        self.measuring += self.cost
