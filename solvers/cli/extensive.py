"""Command-line front ends: ``ggp solve`` (for .efg and tree-format files) and
``ggp exploitability``.

``ggp solve FILE --solver cfr|cfr+|dcfr|mccfr|lp [--iterations N] [--time-limit S]
[--seed S] [--sampling chance|outcome] [--json] [--strategy OUT.txt]
[--trace FILE.csv] [--plot FILE.png]``

``--json`` prints exactly ``{"solver", "values": {player: value}, "root_strategy":
{player: {action: p}}, "nash_conv", "iterations", "seconds"}`` (``docs/solve-json.md``);
progress lines go to stderr. ``--trace``/``--plot`` record NashConv against iterations
(:mod:`solvers.trace`, the CFR family only). ``ggp exploitability GAME --strategy FILE [--json]``
prints the NashConv of a strategy file (``infoset <NAME> strategies A=S ...``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from solvers import registry
from solvers.cli.quiet import add_quiet
from solvers.errors import GameError
from solvers.extensive.exploitability import nash_conv
from solvers.extensive.files import read_game_file
from solvers.extensive.highs_run import LPInterrupted
from solvers.extensive.model import ExtensiveGame
from solvers.extensive.solve import SAMPLING, solve
from solvers.extensive.strategy_io import read_strategy, root_strategy_note, write_strategy
from solvers.files import prepare_output, read_text
from solvers.report import by_player, root_strategy_text, values_text
from solvers.trace import Trace, TraceOptions, add_trace_arguments, trace_options


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def solve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ggp solve", description="Solve an imperfect-information game (.efg or tree .txt).")
    parser.add_argument("file", help="game file: Gambit .efg or the game-tree text format")
    add_solve_options(parser)
    return parser


def add_solve_options(parser: argparse.ArgumentParser) -> None:
    """The options of every extensive-form solve (also GDL-II's, :mod:`gdl.cli.gdl2`)."""
    parser.add_argument("--solver", choices=registry.names(registry.EXTENSIVE), default="cfr+",
                        help=registry.solver_help(registry.EXTENSIVE, "cfr+"))
    parser.add_argument("--iterations", type=int, default=None,
                        help="iterations (default 1000 when no --time-limit)")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="seconds for the whole command (reading, solving, certificate)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sampling solvers")
    parser.add_argument("--sampling", choices=SAMPLING, default="chance",
                        help="what mccfr samples (chance outcomes, or whole outcomes)")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    add_quiet(parser)
    parser.add_argument("--strategy", metavar="OUT.txt",
                        help="write the strategy as 'infoset NAME strategies A=S ...' lines")
    add_trace_arguments(parser, "NashConv against iterations (CFR family)")


def command_deadline(args: argparse.Namespace) -> float | None:
    """The end of the whole command's ``--time-limit`` (``time.monotonic()``), or None."""
    if args.time_limit is not None and args.time_limit <= 0:
        raise GameError("--time-limit must be positive")
    return None if args.time_limit is None else time.monotonic() + args.time_limit


@dataclass(frozen=True)
class SolveOutputs:
    """The files a solve writes, checked before any work starts."""

    strategy: Path | None
    trace: TraceOptions


def solve_outputs(args: argparse.Namespace) -> SolveOutputs:
    """The ``--strategy``/``--trace``/``--plot`` files of :func:`add_solve_options`."""
    strategy_path = prepare_output(args.strategy, "--strategy") if args.strategy else None
    outputs = trace_options(args.trace, args.plot)
    if outputs.wanted and args.solver == "lp":
        raise GameError("--trace and --plot follow the CFR family's iterations; "
                        "the lp solver has none")
    return SolveOutputs(strategy_path, outputs)


def solve_main(argv: list[str]) -> int:
    args = solve_parser().parse_args(argv)
    # the time limit covers the whole command: reading, building, solving, certificate
    deadline = command_deadline(args)
    outputs = solve_outputs(args)
    progress = None if args.json or args.quiet else _progress
    game = read_game_file(args.file, progress=progress, deadline=deadline)
    return solve_and_report(game, args, deadline, outputs)


def solve_and_report(game: ExtensiveGame, args: argparse.Namespace, deadline: float | None,
                     outputs: SolveOutputs, extra: dict | None = None) -> int:
    """Solve ``game`` with the options of :func:`add_solve_options`, write the strategy
    file and the trace, print the summary (``extra`` fields added to the JSON object and
    the text)."""
    progress = None if args.json or args.quiet else _progress
    trace = Trace("nash_conv", f"{Path(args.file).name}: {args.solver}")
    strategy_path = outputs.strategy
    try:
        result = solve(game, args.solver, iterations=args.iterations, seed=args.seed,
                       sampling=args.sampling, progress=progress, deadline=deadline,
                       trace=trace.add if outputs.trace.wanted else None)
    except LPInterrupted as exc:
        print(f"interrupted: {exc}", file=sys.stderr)
        return 130
    if strategy_path is not None:
        try:
            strategy_path.write_text(write_strategy(game, result.strategy))
        except OSError as exc:
            raise GameError(f"{args.strategy}: cannot write: {exc.strerror or exc}") from None
        print(f"wrote the strategy to {strategy_path}", file=sys.stderr)
    trace.save(outputs.trace.trace, outputs.trace.plot)
    summary = result.summary(game)
    if args.json:
        print(json.dumps({**summary, **(extra or {})}))
    else:
        print(f"solver: {result.solver}\nvalues: {values_text(summary['values'])}\n"
              f"root strategy: {root_strategy_text(summary['root_strategy'])}"
              f"{' ' + note if (note := root_strategy_note(game, summary['root_strategy'])) else ''}\n"
              f"nash_conv: {result.nash_conv:.6g}\n"
              f"iterations: {result.iterations}\nseconds: {result.seconds:.3f}"
              + "".join(f"\n{key}: {value}" for key, value in (extra or {}).items()))
    return 0


def exploitability_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="ggp exploitability",
        description="NashConv of a strategy file for an .efg or tree-format game.")
    parser.add_argument("game", help="game file: Gambit .efg or the game-tree text format")
    parser.add_argument("--strategy", required=True, metavar="FILE",
                        help="lines 'infoset <NAME> strategies <A1>=<S1> ...'")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    game = read_game_file(args.game)
    text = read_text(args.strategy)
    strategy = read_strategy(game, text, filename=args.strategy)
    result = nash_conv(game, strategy.sigma)
    if strategy.missing:
        print(f"note: {len(strategy.missing)} information set(s) without a line are played "
              f"uniformly (first: {strategy.missing[0]})", file=sys.stderr)
    values = by_player(game.player_names, result.values)
    best = by_player(game.player_names, result.best_response_values)
    if args.json:
        print(json.dumps({"nash_conv": result.nash_conv, "values": values,
                          "best_response_values": best,
                          "missing_infosets": len(strategy.missing)}))
    else:
        print(f"nash_conv: {result.nash_conv:.10g}\nvalues: {values_text(values)}\n"
              f"best responses: {values_text(best)}")
    return 0
