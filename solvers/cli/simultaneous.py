"""Command line: ``ggp random-game`` and ``ggp solve G.efg --solver baseline|ih``.

``ggp random-game --actions A --depth D [--full] [--zero-sum] --seed S --out G.efg``
writes a random game of the thesis (section 4.2.3, or 4.3.4 with ``--full``) in its
imperfect-information form (Definition 4.1.9) as Gambit ``.efg``.

``ggp solve G.efg --solver baseline|ih [--json] [--strategy OUT.jsonl]
[--selection RULE] [--time-limit S] [--max-nodes N]`` reads an ``.efg`` of that form,
solves it, certifies the result and prints the root values and strategy. ``--json``
prints ``{"solver", "values": {player: value}, "root_strategy": {player: {action: p}},
"nodes", "seconds", "certificate": {"max_gain", ...}}`` (``docs/solve-json.md``); ``--strategy`` writes one JSON line per node where the strategy
is defined: ``{"node": history or label, "strategy": {player: {action: p}}, "values":
{player: value}}`` (a chance node lists ``{"chance": {outcome: p}}``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from solvers import registry
from solvers.cli.quiet import add_quiet, stderr_lines
from solvers.errors import GameError
from solvers.files import prepare_output
from solvers.matrix.selection import SELECTIONS
from solvers.progress import solve_progress
from solvers.report import by_player, certificate_text, root_strategy_text, solved_text
from solvers.simultaneous import doab
from solvers.simultaneous.efg_export import write_efg
from solvers.simultaneous.efg_import import read_simultaneous_efg
from solvers.simultaneous.model import SimultaneousGame
from solvers.simultaneous.random_games import random_game
from solvers.simultaneous.solution import Solution


def random_game_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="ggp random-game",
        description="Write a random two-player simultaneous-move game as a Gambit .efg "
        "file: 2 to A actions per player at each node, depth at most D, payoffs uniform in "
        "[-1, 1] (the thesis' random games; --full: exactly A actions, full depth D).")
    parser.add_argument("--actions", type=int, required=True, metavar="A",
                        help="the most actions of a player at a node")
    parser.add_argument("--depth", type=int, required=True, metavar="D", help="the greatest depth")
    parser.add_argument("--full", action="store_true", help="exactly A actions at every node, every branch at depth D")
    parser.add_argument("--zero-sum", action="store_true", help="zero-sum payoffs (the second player's is minus the first's)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
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


def solve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ggp solve", description="Solve a simultaneous-move .efg (one joint move a step): the thesis' "
                                     "baseline or interval heuristic, DOαβ or BIαβ.")
    parser.add_argument("game", help="a .efg whose every step is one joint move (e.g. from "
                        "ggp random-game)")
    parser.add_argument("--solver", choices=registry.names(registry.SIMULTANEOUS),
                        default="baseline",
                        help=registry.solver_help(registry.SIMULTANEOUS, "baseline"))
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    add_quiet(parser)
    parser.add_argument("--strategy", metavar="OUT.jsonl", help="write the strategy, one node per line")
    parser.add_argument("--selection", choices=SELECTIONS, default="first",
                        help="equilibrium selection (default: first pure in row-major order)")
    parser.add_argument("--time-limit", type=float, default=None, metavar="S",
                        help="seconds for the solve (default: none)")
    parser.add_argument("--max-nodes", type=int, default=5_000_000, metavar="N",
                        help="refuse games with more nodes (default %(default)s)")
    return parser


def solve_main(argv: list[str]) -> int:
    args = solve_parser().parse_args(argv)
    if Path(args.game).suffix.lower() != ".efg":
        raise GameError(f"{args.game}: the baseline, ih, doab and biab solvers read .efg files")
    started = time.monotonic()
    strategy_path = prepare_output(args.strategy, "--strategy") if args.strategy else None
    lines = stderr_lines(args)
    # the time limit covers reading too
    game = read_simultaneous_efg(
        args.game, max_nodes=args.max_nodes, progress=lines,
        deadline=None if args.time_limit is None else started + args.time_limit)
    left = None if args.time_limit is None else max(
        args.time_limit - (time.monotonic() - started), 1e-3)
    solution = registry.solver(args.solver).solve(game, selection=args.selection,
                                    progress=solve_progress(lines, args.solver) if lines else None,
                                    time_limit=left, max_nodes=args.max_nodes)
    cert = registry.MODELS[registry.SIMULTANEOUS].certify(game, solution)
    values = by_player(game.player_names, solution.root_values)
    if strategy_path is not None:
        try:
            with open(strategy_path, "w", encoding="utf-8") as out:
                for record in strategy_lines(game, solution):
                    out.write(json.dumps(record) + "\n")
        except OSError as exc:
            raise GameError(f"{args.strategy}: cannot write: {exc.strerror or exc}") from None
        print(f"wrote the strategy to {strategy_path}", file=sys.stderr)
    if args.json:
        print(json.dumps({"solver": args.solver, "values": values,
                          "root_strategy": solution.root_strategy(),
                          "nodes": game.num_nodes, "seconds": solution.seconds,
                          "certificate": cert, **doab.counts(solution)}))
    else:
        print(solved_text(args.solver, values, solution.seconds,
                          f"{game.num_nodes:,} nodes, {int(solution.solved.sum()):,} solved"))
        print(f"root strategy: {root_strategy_text(solution.root_strategy())}")
        if doab.counts_line(solution):
            print(doab.counts_line(solution))
        print(certificate_text(cert))
    return 0 if cert["ok"] else 1
