"""``ggp demo``: the main job on the embedded defaults.

1. Solve simultaneous tic-tac-toe (the thesis' appendix B GDL, bundled in
   ``games/gdl``) from its rules with the baseline and the interval heuristic: states
   expanded, root values, times and the certificate (largest deviation gain).
2. Play one demo match of it on an embedded match server: our agent (launched as a
   websocket agent, pre-solving the game in its start clock) against the built-in
   UCT player; print the move log and the result. The match is recorded in the
   database (``--db``, default ``matches.sqlite``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from gdl.cli import solve as solve_cli
from server.cli import commands as server_cli
from solvers.locations import GAMES

GAME = GAMES / "gdl" / "simultaneous_tictactoe.kif"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ggp demo", description="The main job: solve simultaneous tic-tac-toe with the baseline and the IH, then play a demo match of it.")
    parser.add_argument("--game", default=str(GAME), help="GDL game (default: simultaneous tic-tac-toe)")
    parser.add_argument("--players", nargs=2, default=["agent", "uct"], metavar="SPEC",
                        help="the demo match's two seats (default: agent uct)")
    parser.add_argument("--playclock", default="2", help="seconds per move (default 2)")
    parser.add_argument("--db", default="matches.sqlite",
                        help="the match database the demo match is recorded in (default: "
                        "matches.sqlite in the current folder)")
    args = parser.parse_args(argv)

    status = 0
    for solver in ("baseline", "ih"):
        print(f"== ggp solve {Path(args.game).name} --solver {solver}", flush=True)
        status |= solve_cli.solve_main([args.game, "--solver", solver, "--quiet"])
    # (the command as run, --db included: the demo writes that file)
    print(f"\n== ggp match {Path(args.game).name} --players {' '.join(args.players)} "
          f"--db {args.db}", flush=True)
    status |= server_cli.match_main([args.game, "--players", *args.players, "--startclock", "10",
                                     "--playclock", args.playclock, "--seed", "1",
                                     "--db", args.db])
    return status
