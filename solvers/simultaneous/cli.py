"""Command line: ``ggp random-game`` and ``ggp solve G.efg --solver baseline|ih``.

``ggp random-game --actions A --depth D [--full] [--zero-sum] --seed S --out G.efg``
writes a random game of the thesis (section 4.2.3, or 4.3.4 with ``--full``) in its
imperfect-information form (Definition 4.1.9) as Gambit ``.efg``.

``ggp solve G.efg --solver baseline|ih [--json] [--strategy OUT.jsonl]
[--selection RULE] [--time-limit S] [--max-nodes N]`` reads an ``.efg`` of that form,
solves it, certifies the result and prints the root values. ``--json`` prints
``{"solver", "values": {player: value}, "nodes", "seconds", "certificate":
{"max_gain", ...}}``; ``--strategy`` writes one JSON line per node where the strategy
is defined: ``{"node": history or label, "strategy": {player: {action: p}}, "values":
{player: value}}`` (a chance node lists ``{"chance": {outcome: p}}``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from solvers.errors import GameError
from solvers.matrix.selection import SELECTIONS

from . import baseline, certificate, doab, interval_heuristic
from .efg_export import write_efg
from .efg_import import read_simultaneous_efg
from .model import SimultaneousGame
from .random_games import random_game
from .solution import Solution

SOLVERS = {"baseline": baseline.solve, "ih": interval_heuristic.solve, "doab": doab.solve,
           "biab": doab.solve_biab}


def random_game_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ggp random-game", description=__doc__.split("\n\n")[1])
    parser.add_argument("--actions", type=int, required=True, help="a: (maximal) actions per player")
    parser.add_argument("--depth", type=int, required=True, help="d: (maximal) depth")
    parser.add_argument("--full", action="store_true", help="section 4.3.4: exactly a actions, full depth")
    parser.add_argument("--zero-sum", action="store_true", help="u1 = -u0")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="the .efg file to write")
    args = parser.parse_args(argv)
    game = random_game(args.actions, args.depth, args.seed, args.full, args.zero_sum)
    title = (f"random {'full ' if args.full else ''}{'zero-sum ' if args.zero_sum else ''}"
             f"game a={args.actions} d={args.depth} seed={args.seed}")
    try:
        write_efg(game, args.out, title)
    except OSError as exc:
        raise GameError(f"{args.out}: cannot write: {exc.strerror or exc}") from None
    print(f"wrote {args.out}: {game.num_nodes} simultaneous-move nodes ({title})")
    return 0


def strategy_lines(game: SimultaneousGame, solution: Solution) -> list[dict]:
    """One record per node of ``solution.support()`` (the ``--strategy`` lines)."""
    names = game.histories() if game.node_labels is None else None
    players = game.player_names
    lines = []
    for h in solution.support().tolist():
        if game.is_chance(h):
            sl = game.entries(h)
            strategy = {"chance": dict(zip(game.actions(h, 0), game.entry_prob[sl].tolist(), strict=True))}
        else:
            strategy = {players[p]: dict(zip(game.actions(h, p), solution.node_strategy(h, p).tolist(),
                                             strict=True)) for p in (0, 1)}
        values = solution.values[h].tolist()
        lines.append({"node": game.node_name(h, names), "strategy": strategy,
                      "values": {players[0]: values[0], players[1]: values[1]}})
    return lines


def _progress_printer(label: str):
    last = [time.perf_counter()]

    def report(done: int, total: int) -> None:
        now = time.perf_counter()
        if now - last[0] >= 1.0:
            last[0] = now
            print(f"{label}: {done}/{total} nodes", file=sys.stderr, flush=True)
    return report


def solve_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ggp solve", description="solve a simultaneous-move .efg")
    parser.add_argument("game", help="a .efg in the form of Definition 4.1.9")
    parser.add_argument("--solver", choices=sorted(SOLVERS), default="baseline")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--strategy", metavar="OUT.jsonl", help="write the strategy, one node per line")
    parser.add_argument("--selection", choices=SELECTIONS, default="first",
                        help="equilibrium selection (default: first pure in row-major order)")
    parser.add_argument("--time-limit", type=float, default=None, metavar="S")
    parser.add_argument("--max-nodes", type=int, default=5_000_000, metavar="N")
    args = parser.parse_args(argv)
    if Path(args.game).suffix.lower() != ".efg":
        raise GameError(f"{args.game}: the baseline, ih, doab and biab solvers read .efg files")
    game = read_simultaneous_efg(args.game, max_nodes=args.max_nodes)
    solution = SOLVERS[args.solver](game, selection=args.selection,
                                    progress=_progress_printer(args.solver),
                                    time_limit=args.time_limit, max_nodes=args.max_nodes)
    cert = certificate.check(game, solution)
    v0, v1 = solution.root_values
    players = game.player_names
    if args.strategy:
        try:
            with open(args.strategy, "w", encoding="utf-8") as out:
                for record in strategy_lines(game, solution):
                    out.write(json.dumps(record) + "\n")
        except OSError as exc:
            raise GameError(f"{args.strategy}: cannot write: {exc.strerror or exc}") from None
    if args.json:
        print(json.dumps({"solver": args.solver, "values": {players[0]: v0, players[1]: v1},
                          "nodes": game.num_nodes, "seconds": solution.seconds,
                          "certificate": cert, **doab.counts(solution)}))
    else:
        print(f"{args.solver}: {players[0]} {v0:.10g}, {players[1]} {v1:.10g} "
              f"({game.num_nodes} nodes, {int(solution.solved.sum())} solved, "
              f"{solution.seconds:.4f} s)")
        if doab.counts_line(solution):
            print(doab.counts_line(solution))
        print(f"certificate: max gain {cert['max_gain']:.3g} "
              f"({'ok' if cert['ok'] else 'NOT an equilibrium within 1e-9 of the payoff range'})")
    return 0 if cert["ok"] else 1
