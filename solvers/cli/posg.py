"""``ggp solve FILE.osposg --epsilon E --time-limit S [--json] [--trace FILE.csv]
[--plot FILE.png]``: HSVI bounds of a POSG.

Progress lines (time, lower, upper, gap, bound sizes) go to stderr; the result goes to
stdout, as JSON ``{"lower", "upper", "gap", "seconds", "iterations"}`` plus the fields
every solve shares (``docs/solve-json.md``): ``"solver": "hsvi"``, ``"value_bounds":
{player: [lower, upper]}`` and ``"root_strategy"`` (P1's opening) with ``--json``. The time limit covers reading, presolve and the trials; bounds are valid
whenever the limit (or Ctrl-C, exit status 130) stops the search. ``--trace``/``--plot``
record the lower and upper bounds after every trial (:mod:`solvers.trace`), timed from the
command's start like the progress lines.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from solvers.cli.quiet import add_quiet
from solvers.errors import GameError
from solvers.files import read_text
from solvers.posg.hsvi import Hsvi, Progress
from solvers.posg.playable import PosgPlayable, unique_labels
from solvers.posg.policy import PosgStrategy
from solvers.posg.reader import read_posg
from solvers.report import mixed, root_strategy_text
from solvers.trace import Trace, add_trace_arguments, trace_options

PRESOLVE_SHARE = 0.5      # at most this part of the time limit for the presolve bounds
REPORT_SECONDS = 1.0      # between two progress lines
ROLES = PosgPlayable.roles


def solve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ggp solve", description="Solve a one-sided POSG (.osposg) with HSVI.")
    parser.add_argument("file", help="the .osposg game file")
    parser.add_argument("--epsilon", type=float, default=1.0,
                        help="stop when upper - lower <= epsilon at the initial belief "
                        "(default %(default)s)")
    parser.add_argument("--time-limit", type=float, default=60.0,
                        help="seconds for the whole run (reading, presolve, trials)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    add_quiet(parser)
    add_trace_arguments(parser, "HSVI's lower and upper bounds against time")
    return parser


def root_strategy(solver: Hsvi) -> dict[str, dict[str, float]]:
    """P1's opening move: its lower-bound stage strategy at the initial belief (the one
    the alpha-vectors certify, as P1 plays it in matches). P2 sees the state, so its
    opening depends on it and is left out."""
    model = solver.model
    block = model.partition_block(model.initial_partition)
    p1, _ = PosgStrategy(solver).p1_mixed(model.initial_partition, model.initial_belief)
    names = unique_labels(model.a1_names)
    return {ROLES[0]: mixed([names[a] for a in block.a1.tolist()], p1.tolist())}


def solve_main(argv: list[str]) -> int:
    args = solve_parser().parse_args(argv)
    if not args.epsilon > 0:
        raise GameError(f"--epsilon must be positive, got {args.epsilon}")
    if not args.time_limit > 0:
        raise GameError(f"--time-limit must be positive, got {args.time_limit}")
    outputs = trace_options(args.trace, args.plot)
    start = time.monotonic()
    path = Path(args.file)
    text = read_text(path)
    model = read_posg(text, str(path))
    solver = Hsvi(model, presolve_time=PRESOLVE_SHARE * args.time_limit)
    presolve = time.monotonic() - start
    progress = None if args.quiet else sys.stderr
    if progress is not None:
        print(f"read and presolved in {presolve:.2f}s (Lipschitz delta {solver.delta:.4g})",
              file=progress)

    trace = Trace("bounds", f"{path.name}: HSVI")
    last_line = [-REPORT_SECONDS]

    def report(p: Progress) -> None:
        seconds = p.seconds + presolve
        if outputs.wanted:
            trace.add(seconds, p.iterations, p.lower, p.upper, p.gap)
        if progress is not None and p.seconds - last_line[0] >= REPORT_SECONDS:
            last_line[0] = p.seconds
            print(f"{seconds:8.2f}s  " + p.line().split("s  ", 1)[1], file=sys.stderr,
                  flush=True)

    # with a trace, every trial reports (the bounds are computed after each one anyway)
    result = solver.solve(args.epsilon, max(0.0, args.time_limit - presolve), report,
                          report_every=0.0 if outputs.wanted else REPORT_SECONDS)
    trace.save(outputs.trace, outputs.plot)
    opening = {} if solver.interrupted else root_strategy(solver)
    seconds = time.monotonic() - start
    out = {"lower": result.lower, "upper": result.upper, "gap": result.gap,
           "seconds": round(seconds, 3), "iterations": result.iterations, "solver": "hsvi",
           "value_bounds": {ROLES[0]: [result.lower, result.upper],
                            ROLES[1]: [-result.upper, -result.lower]},
           "root_strategy": opening}
    if args.json:
        print(json.dumps(out))
    else:
        status = ("solved" if result.gap <= args.epsilon else
                  "interrupted" if solver.interrupted else "time limit reached")
        print(f"{path.name}: value in [{result.lower:.6f}, {result.upper:.6f}], gap "
              f"{result.gap:.6f} ({status}; {result.iterations} iterations, {seconds:.2f}s)")
        print(f"root strategy: {root_strategy_text(opening)}")
    return 130 if solver.interrupted else 0
