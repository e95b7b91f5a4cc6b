"""``ggp solve GAME.kif`` for a game of three or more players (or any game with
``--solver spe``): the front end of :mod:`gdl.solving.nplayer_solve`, reached from
:mod:`gdl.cli.solve` with its parsed arguments.

The options it takes: ``--solver spe``, ``--selection first|welfare`` (the tie rule),
``--json``, ``--strategy OUT.jsonl``, ``--save FILE`` (JSON lines for the agent:
:mod:`gdl.solving.store`), ``--max-states``, ``--time-limit``,
``--memory-mb``, ``--engine``, ``--quiet``; the others are refused with one line. The
exit status is 1 when the certificate fails.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from gdl.cli.solve_outputs import outputs_of, refuse_first
from gdl.solving.nplayer_solve import DEFAULT_SOLVER, SOLVERS, solve_nplayer_game
from gdl.solving.store import save_solution
from solvers import registry
from solvers.errors import GameError


def nplayer_main(args: argparse.Namespace, players: int,
                 write_lines: Callable, note: Callable[[str], None]) -> int:
    """Solve ``args.game`` (of ``players`` players) with the n-player path."""
    solver = args.solver or DEFAULT_SOLVER
    if solver not in SOLVERS:
        raise GameError(f"{args.game}: a game of {players} players is solved by "
                        f"--solver {' or '.join(SOLVERS)}, not {solver} "
                        f"({registry.solver_help(registry.NPLAYER, DEFAULT_SOLVER)})")
    unsupported = [flag for flag, given in (
        ("--path model", args.path == "model"),
        ("--ray", args.ray), ("--shards", args.shards),
        ("--trace", args.trace), ("--plot", args.plot)) if given]
    refuse_first(unsupported, "games of three or more players (or --solver spe)")
    out = outputs_of(args)
    strategy_path, save_path = out.strategy, out.save
    result = solve_nplayer_game(args.game, solver, budget=out.budget, engine=args.engine,
                                selection=args.selection,
                                progress=None if args.quiet else note)
    if strategy_path is not None:
        write_lines(str(strategy_path), result.strategy_lines())
        note(f"wrote the strategy to {strategy_path}")
    if save_path is not None:
        count = save_solution(save_path, rules=result.rules, game=result.name,
                              roles=result.roles, solver=result.solution.solver,
                              values=result.values(), lines=result.strategy_lines())
        note(f"saved {count:,} states to {save_path}")
    print(json.dumps(result.to_json()) if args.json else result.summary())
    return 0 if result.certificate["ok"] else 1
