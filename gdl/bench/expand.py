"""``ggp bench expand``: batched expansion against the per-state one, in one run.

What is measured, for every game (default: blocker and doubletictactoe from
``../shared/gdl-corpus`` and the bundled simultaneous tic-tac-toe):

1. The game is loaded once (compiled engine).
2. The batched path (:mod:`gdl.expansion.batch_expand`) expands it breadth first until it
   ends or a budget stops it (``--max-states``, ``--time-limit`` per path): first
   as it runs by default (``batched``: with the compiled kernels of
   :mod:`gdl.reasoning.batch_kernels` where :mod:`gdl.reasoning.kernels` chooses them; their load or
   compile time is measured once beforehand and printed), then with the numpy
   passes only (``batched-numpy``; skipped without numba or with ``--no-numpy``),
   then the per-state path (:func:`gdl.expansion.expand.expand_states`) with the same
   budget (memory a Python-object path has taken is not given back, so it goes
   last).
3. For each: distinct states and transitions (``next`` computations) done,
   wall-clock and CPU seconds, the rates per CPU second (the machine is shared:
   CPU time is the fairer clock; wall rates are printed too), and bytes per state
   (resident memory growth; for the batched path also the bytes its arrays hold).
4. The ratios of the CPU rates: batched / per-state, batched-numpy / per-state
   and batched / batched-numpy.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from gdl.budget import Budget
from gdl.expansion.batch_expand import BatchedExpansion
from gdl.expansion.expand import Explorer, StateGraph, resident_mb, roles_of
from gdl.reasoning import kernels
from gdl.reasoning.batch_machine import BatchMachine
from gdl.reasoning.compile import CompiledMachine
from gdl.reasoning.machine import load_machine
from gdl.reasoning.state_machine import StateMachine
from solvers.errors import GameError, LimitReached
from solvers.locations import GAMES, SHARED

CORPUS = SHARED / "gdl-corpus" / "repository"
BUNDLED = GAMES / "gdl"
DEFAULT_GAMES = (CORPUS / "blocker.kif", CORPUS / "doubletictactoe.kif",
                 BUNDLED / "simultaneous_tictactoe.kif")


@dataclass
class Run:
    game: str
    path: str                   # "batched", "batched-numpy" or "per-state"
    states: int
    transitions: int
    wall: float
    cpu: float
    resident_mb: float          # growth over the run
    held_bytes: int | None      # arrays held (batched path)
    stop: str                   # "complete" or the budget's message

    @property
    def states_per_cpu_second(self) -> float:
        return self.states / max(self.cpu, 1e-9)

    @property
    def transitions_per_cpu_second(self) -> float:
        return self.transitions / max(self.cpu, 1e-9)

    def row(self) -> dict:
        return {**asdict(self), "states_per_s_cpu": round(self.states_per_cpu_second),
                "transitions_per_s_cpu": round(self.transitions_per_cpu_second),
                "states_per_s_wall": round(self.states / max(self.wall, 1e-9)),
                "transitions_per_s_wall": round(self.transitions / max(self.wall, 1e-9)),
                "bytes_per_state": round(self.resident_mb * 2**20 / max(self.states, 1))}


def measure(name: str, label: str, work: Callable[[], tuple[int, int, int | None]],
            counts: Callable[[], tuple[int, int, int | None]]) -> Run:
    """Time ``work`` (returning states, transitions, held bytes); on a budget stop
    the counts so far come from ``counts``."""
    base = resident_mb()
    wall, cpu = time.perf_counter(), time.process_time()
    stop = "complete"
    try:
        states, transitions, held = work()
    except LimitReached as exc:
        stop = exc.message
        states, transitions, held = counts()
    return Run(name, label, states, transitions, time.perf_counter() - wall,
               time.process_time() - cpu, resident_mb() - base, held, stop)


def bench_game(machine: StateMachine, name: str, budget: Budget, numpy: bool = True) -> list[Run]:
    """The paths on one game (steps 2-3): batched, [batched-numpy,] per-state."""
    if not isinstance(machine, CompiledMachine):
        raise GameError(f"{name}: the compiled engine declined it ({machine.fallback_reason})")
    runs = [_batched_run(machine, name, budget, "batched")]
    if numpy and kernels.KERNELS.enabled:
        kernels.KERNELS.enabled = False
        try:
            runs.append(_batched_run(machine, name, budget, "batched-numpy"))
        finally:
            kernels.KERNELS.enabled = True
    return runs + [_per_state_run(machine, name, budget)]


def _batched_run(machine: CompiledMachine, name: str, budget: Budget, label: str) -> Run:
    expansion = BatchedExpansion(BatchMachine(machine), budget, None)

    def counts() -> tuple[int, int, int | None]:
        return expansion.states.n, expansion.transitions, expansion.held_bytes()

    def work() -> tuple[int, int, int | None]:
        result = expansion.run(None)
        return result.joint.num_states, result.transitions, result.nbytes()

    return measure(name, label, work, counts)


def _per_state_run(machine: StateMachine, name: str, budget: Budget) -> Run:
    graph = StateGraph(machine, *roles_of(machine.roles))

    def counts() -> tuple[int, int, int | None]:
        return graph.n_states, sum(s.size for s in graph.successors if s is not None), None

    def work() -> tuple[int, int, int | None]:
        Explorer(graph, budget, None).run(machine.initial_state())
        return counts()

    return measure(name, "per-state", work, counts)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="ggp bench expand",
        description="Expansion speed: the batched path against the per-state one, in one run.")
    parser.add_argument("games", nargs="*", help="GDL files, of any number of players "
                        "(default: blocker and "
                        "doubletictactoe from ../shared/gdl-corpus, simultaneous_tictactoe)")
    parser.add_argument("--max-states", type=int, default=2_000_000,
                        help="distinct states per path (default 2,000,000)")
    parser.add_argument("--time-limit", type=float, default=120.0,
                        help="seconds per path (default 120)")
    parser.add_argument("--no-numpy", action="store_true",
                        help="skip the batched run with the numpy passes only")
    parser.add_argument("--json", action="store_true", help="print one JSON object per line")
    args = parser.parse_args(argv)
    if args.max_states < 1 or args.time_limit <= 0:
        raise GameError("--max-states must be at least 1 and --time-limit positive")
    paths = [Path(p) for p in args.games] or [p for p in DEFAULT_GAMES if p.exists()]
    if not paths:
        raise GameError("no games to bench (../shared/gdl-corpus is absent: name some)")
    budget = Budget(max_states=args.max_states, time_limit=args.time_limit, memory_mb=None)
    load = _load_kernels()
    if not args.json:
        print(f"budget per path: {args.max_states:,} states, {args.time_limit:g} s; rates per "
              "CPU second (wall in brackets); B/state = resident growth / states")
        print(f"compiled kernels: {load}")
    for path in paths:
        runs = bench_game(load_machine(str(path), engine="compiled"), path.stem, budget,
                          not args.no_numpy)
        for run in runs:
            _print(run, args.json)
        pairs = [(run, runs[-1]) for run in runs[:-1]] + [tuple(runs[:2])] * (len(runs) == 3)
        if not args.json:
            print(f"  {path.stem}: " + "; ".join(
                f"{new.path} / {old.path} = {_ratio(new, old, 'states')}x states/s, "
                f"{_ratio(new, old, 'transitions')}x transitions/s" for new, old in pairs))
    return 0


def _ratio(new: Run, old: Run, what: str) -> str:
    rate = f"{what}_per_cpu_second"
    return f"{getattr(new, rate) / max(getattr(old, rate), 1e-9):.1f}"


def _load_kernels() -> str:
    """Load (or compile, the first time) the kernels before timing: what it cost."""
    if not kernels.KERNELS.enabled:
        return "off (numba is not installed or GGP_NUMBA=0): every batch takes numpy"
    wall, cpu = time.perf_counter(), time.process_time()
    kernels.load()
    return (f"numba, for every batch once loaded (else from {kernels.KERNELS.min_items:,} items); loaded in "
            f"{time.perf_counter() - wall:.2f} s ({time.process_time() - cpu:.2f} s CPU, "
            "including a compile if the disk cache was empty)")


def _print(run: Run, as_json: bool) -> None:
    row = run.row()
    if as_json:
        print(json.dumps(row))
        return
    held = (f", arrays {run.held_bytes / max(run.states, 1):.0f} B/state"
            if run.held_bytes is not None else "")
    print(f"  {run.game} {run.path}: {run.states:,} states, {run.transitions:,} transitions, "
          f"{run.cpu:.1f} s CPU ({run.wall:.1f} s wall); {row['states_per_s_cpu']:,} states/s "
          f"({row['states_per_s_wall']:,}), {row['transitions_per_s_cpu']:,} transitions/s "
          f"({row['transitions_per_s_wall']:,}); {row['bytes_per_state']:,} B/state{held}; "
          f"{run.stop}", flush=True)
