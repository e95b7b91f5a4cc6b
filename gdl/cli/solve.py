"""``ggp solve GAME.kif``: solve a GDL game offline (the front end of
:mod:`gdl.solving.solve`, which has the steps).

    ggp solve GAME.kif --solver baseline|ih|doab|biab|spe [--path dag|model] [--json]
              [--strategy OUT.jsonl] [--save FILE] [--max-states N] [--time-limit S]
              [--memory-mb M] [--engine auto|compiled|general] [--selection RULE] [--quiet]
              [--trace FILE.csv] [--plot FILE.png]
    ggp solve GAME.kif --ray ADDRESS|auto|local:N [--shards N]   (gdl/solving/ray_solve.py)
    ggp solve PUZZLE.kif [--solver plan|goal-search] ...         (gdl/cli/solve_puzzle.py)

A GDL-II game (rules with ``sees``) given no ``--solver`` is handed to
:mod:`gdl.cli.gdl2`, a puzzle (one role besides ``random``) to :mod:`gdl.cli.solve_puzzle`,
a game of three or more players (or ``--solver spe``) to :mod:`gdl.cli.nplayer_solve`.
Progress lines (rates, memory held) go to stderr unless
``--quiet``. The result: a summary, or with ``--json`` the object every
simultaneous-move solve prints, ``{"solver", "values": {role: value},
"root_strategy": {role: {move: probability}}, "nodes", "seconds", "certificate":
{"max_gain", ...}}`` (``docs/solve-json.md``), plus ``"states"`` (distinct states
expanded) and ``"expand_seconds"`` (and ``game``, ``engine``, ``constant_sum``,
``load_seconds``, ``total_seconds``, ``path``, ``transitions``, ``bytes_per_state``
(the expanded model's bytes per state), ``peak_rss_mb``, ``equilibria``: the
selection rule and the states each matrix method answered); the exit status is 1 when
the certificate fails. ``--strategy`` writes one JSON line per state of the
solution's support; ``--save`` stores the solution keyed by the rules hash for the
agent (:func:`gdl.solving.solve.save_result`). ``--trace``/``--plot`` record the
states found against time during the expansion (sampled at its budget checks;
:mod:`solvers.trace`), written also when a limit stops it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from gdl.budget import Budget
from gdl.cli.gdl2 import solve_main as gdl2_solve_main
from gdl.cli.nplayer_solve import nplayer_main
from gdl.cli.solve_puzzle import puzzle_main
from gdl.reasoning.machine import ENGINES, read_rules
from gdl.reasoning.state_machine import defines_sees
from gdl.solving.nplayer_solve import SOLVERS as NPLAYER_SOLVERS
from gdl.solving.puzzle_solve import SOLVERS as PUZZLE_SOLVERS
from gdl.solving.ray_solve import solve_on_ray
from gdl.solving.solve import (
    NPZ_ABOVE_STATES,
    PATHS,
    SOLVERS,
    GdlSolveResult,
    player_count,
    save_result,
    solve_game,
)
from solvers import registry
from solvers.cli.quiet import add_quiet
from solvers.errors import GameError, LimitReached
from solvers.files import prepare_output
from solvers.matrix.selection import check_selection
from solvers.report import certificate_text, root_strategy_text, solved_text
from solvers.simultaneous.doab import counts_line
from solvers.trace import Trace, add_trace_arguments, trace_options


def solve_main(argv: Sequence[str]) -> int:
    parser = solve_parser()
    args, unknown = parser.parse_known_args(list(argv))  # GDL-II options are the others'
    rules = read_rules(Path(args.game))[0]
    if defines_sees(rules):  # GDL-II: the extensive-form family
        if args.solver is not None:
            raise GameError(f"{args.game} is a GDL-II game (it has sees rules): solve it with "
                            "--solver cfr, cfr+, dcfr, mccfr or lp")
        return gdl2_solve_main(argv)
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    players = player_count(rules)
    if players == 1:
        if args.solver not in (None, *PUZZLE_SOLVERS):
            raise GameError(f"{args.game} is a puzzle (one role): solve it with --solver "
                            f"{' or '.join(PUZZLE_SOLVERS)}")
        return puzzle_main(args, _stderr)
    if args.solver in PUZZLE_SOLVERS:
        raise GameError(f"--solver {args.solver} solves puzzles (one role); {args.game} has "
                        f"{players} players")
    if players >= 3 or args.solver in NPLAYER_SOLVERS:    # gdl/cli/nplayer_solve.py
        _check_numbers(args)
        return nplayer_main(args, players, _write_lines, _stderr)
    args.solver = args.solver or "baseline"
    _check_numbers(args)
    check_selection(args.selection)
    # a bad output place fails now, not after the whole solve
    strategy_path = prepare_output(args.strategy, "--strategy") if args.strategy else None
    save_path = prepare_output(args.save, "--save") if args.save else None
    outputs = trace_options(args.trace, args.plot)
    trace = Trace("states", f"{Path(args.game).name}: expansion ({args.solver})")
    progress = None if args.quiet else _stderr
    budget = Budget(max_states=args.max_states, time_limit=args.time_limit,
                    memory_mb=args.memory_mb, sample=trace.add if outputs.wanted else None)
    if args.ray is not None:
        return _solve_on_ray(args, budget, progress)
    game_lines: list[str] = []
    try:
        result = solve_game(args.game, args.solver, budget=budget, engine=args.engine,
                            selection=args.selection, progress=progress, path=args.path,
                            loaded=lambda *game: game_lines.append(_game_line(*game)))
    except LimitReached:
        trace.save(outputs.trace, outputs.plot)     # how far it got is worth keeping
        if game_lines and not args.json:
            print(game_lines[0], flush=True)    # the game is named before the error line
        raise
    if outputs.wanted:
        trace.add(result.expand_seconds, result.states)
        trace.save(outputs.trace, outputs.plot)
    if strategy_path is not None:
        _write_lines(str(strategy_path), result.strategy_lines())
        _stderr(f"wrote the strategy to {strategy_path}")
    if save_path is not None:
        count = save_result(save_path, result, note=_stderr)
        _stderr(f"saved {count:,} states to {save_path}")
    if args.json:
        print(json.dumps(result.to_json()))
    else:
        print(_summary(result))
    return 0 if result.certificate.get("ok", True) else 1


def _check_numbers(args: argparse.Namespace) -> None:
    if args.max_states is not None and args.max_states < 1:
        raise GameError("--max-states must be at least 1")
    if args.time_limit is not None and args.time_limit <= 0:
        raise GameError("--time-limit must be positive")


def _solve_on_ray(args: argparse.Namespace, budget: Budget,
                  progress: Callable[[str], None] | None) -> int:
    """``--ray``: the sharded baseline (:mod:`gdl.solving.ray_solve`)."""
    unsupported = [flag for flag, given in (("--solver " + args.solver, args.solver != "baseline"),
                                            ("--path model", args.path == "model"),
                                            ("--strategy", args.strategy), ("--save", args.save),
                                            ("--engine " + args.engine, args.engine == "general"))
                   if given]
    if unsupported:
        raise GameError(f"--ray runs the baseline on the dag path; {unsupported[0]} is not "
                        "available with it")
    if args.shards is not None and not 1 <= args.shards <= 1024:
        raise GameError("--shards must be in [1, 1024]")
    result = solve_on_ray(args.game, args.ray, args.shards, budget=budget,
                          selection=args.selection, progress=progress)
    if args.json:
        print(json.dumps(result.to_json()))
    else:
        print(result.summary())
    return 0 if result.certificate["ok"] else 1


def _summary(result: GdlSolveResult) -> str:
    constant_sum = result.constant_sum
    kind = f"constant-sum {constant_sum:g}" if constant_sum is not None else "general-sum"
    unit = "states" if result.path == "dag" else "nodes"
    return "\n".join([
        _game_line(result.name, result.engine, result.load_seconds),
        f"expanded ({result.path} path): {result.states:,} states "
        f"({result.figures()['nonterminal']:,} "
        f"non-terminal), {result.nodes:,} nodes, {result.transitions:,} transitions, {kind}, "
        f"in {result.expand_seconds:.2f} s ({result.bytes_per_state:.0f} B/state)",
        solved_text(result.solution.solver, result.values(), result.solve_seconds,  # type: ignore[attr-defined]
                    f"{result.support_size():,} {unit} in the strategy's support"),
        "root strategy: " + root_strategy_text(result.root_strategy()),
        *filter(None, [counts_line(result.solution), _equilibria_line(result.equilibria())]),
        certificate_text(result.certificate),
    ])


def _equilibria_line(equilibria: dict) -> str | None:
    """Which matrix methods answered; None for a solver that solves no matrix games
    state by state (DOαβ)."""
    methods = ", ".join(f"{count:,} {name}" for name, count in equilibria["methods"].items())
    return f"equilibria (selection {equilibria['selection']}): {methods}" if methods else None


def _game_line(name: str, engine: str, load_seconds: float) -> str:
    return f"game {name} (engine {engine}, loaded in {load_seconds:.2f} s)"


def _write_lines(path: str, lines: Iterator[dict]) -> None:
    try:
        with open(path, "w", encoding="utf-8") as out:
            for line in lines:
                out.write(json.dumps(line, separators=(",", ":")) + "\n")
    except OSError as exc:
        raise GameError(f"{path}: cannot write: {exc.strerror or exc}") from None


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def solve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ggp solve", description="Solve a 2-player GDL game: expand its states into a "
        "simultaneous-move game, then the thesis' baseline or interval heuristic, DOαβ or BIαβ. "
        "A puzzle (one role besides random): its value, an optimal plan (the highest goal, "
        "then the fewest steps) and a certificate. A game of three or more players: a "
        "subgame-perfect equilibrium by backward induction (mixed stage games need the "
        "optional extra nplayer, pygambit). See docs/solving-gdl.md.")
    parser.add_argument("game", help="a GDL game file (.kif)")
    parser.add_argument("--solver", choices=SOLVERS + PUZZLE_SOLVERS + NPLAYER_SOLVERS,
                        default=None,
                        help="two-player games: "
                        + registry.solver_help(registry.SIMULTANEOUS, "baseline")
                        + ". Puzzles (one role): "
                        + registry.solver_help(registry.PUZZLE, "plan, falling back to "
                                               "goal-search when the expansion hits its budget")
                        + ". Three or more players: "
                        + registry.solver_help(registry.NPLAYER, NPLAYER_SOLVERS[0])
                        + " (it takes two-player games too)")
    parser.add_argument("--path", choices=PATHS,
                        help="dag: the scale path (batched expansion into a compact state "
                        "DAG, level-batched solve; default for baseline and ih); model: the "
                        "per-entry model (the reference; always for doab and biab)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--strategy", metavar="OUT.jsonl",
                        help="write the strategy, one JSON line per state (a puzzle: its "
                        "plan as trace lines in the oracle's format; with chance, one "
                        "policy line per state)")
    parser.add_argument("--save", metavar="FILE",
                        help="store the solution for the agent (--solutions DIR): JSON lines "
                        "(.jsonl, .jsonl.gz), or the compact binary format (.npz; chosen "
                        f"on the dag path above {NPZ_ABOVE_STATES:,} states)")
    parser.add_argument("--max-states", type=int, default=Budget().max_states,
                        help="state budget of the expansion (default %(default)s)")
    parser.add_argument("--time-limit", type=float, help="seconds for load, expansion and solve")
    parser.add_argument("--memory-mb", type=float, default=Budget().memory_mb,
                        help="memory budget of the expansion and of the solve in MB "
                        "(default %(default)s)")
    parser.add_argument("--engine", choices=ENGINES, default="auto",
                        help="GDL engine: compiled, general, or auto (default)")
    parser.add_argument("--selection", default="first",
                        help="equilibrium selection in general-sum games: first (the first "
                        "pure one in row-major order, else the smallest-support one up to 5x5, "
                        "else Lemke-Howson from player 0's first action; default), welfare, "
                        "max0, min0, max1, min1 (the best pure one for the rule, else the best "
                        "mixed one); with three or more players (--solver spe) the tie rule "
                        "between moves equal for the mover and between pure equilibria: first "
                        "(the first in the engine's move order; default) or welfare (the "
                        "largest sum of all players' values, then the first)")
    add_quiet(parser)
    add_trace_arguments(parser, "the states expanded against time")
    parser.add_argument("--ray", metavar="ADDRESS",
                        help="shard the states across a Ray cluster (baseline, dag path): its "
                        "head's HOST:PORT, auto, or local:N (a throw-away cluster of N nodes "
                        "here); --max-states and --memory-mb then bound each shard (docs/ray.md)")
    parser.add_argument("--shards", type=int, metavar="N",
                        help="with --ray: shard actors (default one per node)")
    return parser
