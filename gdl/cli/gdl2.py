"""``ggp solve GAME.kif --solver cfr|cfr+|dcfr|mccfr|lp`` and ``ggp convert`` for GDL-II
games (rules with ``sees``).

    ggp solve GAME.kif --solver cfr|cfr+|dcfr|mccfr|lp [--iterations N] [--time-limit S]
              [--json] [--strategy OUT.txt] [--max-nodes N] [--engine E]
    ggp convert GAME.kif --to efg|tree OUT

Both expand the game into an extensive-form game (:func:`gdl.gdl2.tree.expand_gdl2`);
``solve`` then runs the extensive-form solvers and prints what ``ggp solve G.efg``
prints, plus ``game``, ``engine``, ``nodes``, ``infosets`` and ``expand_seconds``;
``convert`` writes the game for Gambit (``efg``) or in the node/infoset tree format.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from gdl.gdl2.tree import DEFAULT_MAX_NODES, expand_gdl2
from gdl.reasoning.machine import ENGINES, load_machine
from solvers.cli.extensive import (
    add_solve_options,
    command_deadline,
    solve_and_report,
    solve_outputs,
)
from solvers.cli.quiet import stderr_lines
from solvers.errors import GameError, LimitReached
from solvers.extensive.efg_format import write_efg
from solvers.extensive.model import ExtensiveGame
from solvers.extensive.tree_format import write_tree
from solvers.files import prepare_output

FORMATS = {"efg": write_efg, "tree": write_tree}


class NotGdl2(GameError):
    """The rules have no ``sees``: the extensive-form solvers do not apply."""


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _add_game_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-nodes", type=int, default=DEFAULT_MAX_NODES,
                        help="node budget of the game tree (default %(default)s)")
    parser.add_argument("--engine", choices=ENGINES, default="auto",
                        help="GDL engine: compiled, general, or auto (default)")


def solve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ggp solve", description="Solve a GDL-II game (rules with sees): expand it into "
        "an extensive-form game (information sets from each role's own moves and percepts, "
        "chance from random), then CFR, CFR+, DCFR, MCCFR or the sequence-form LP.")
    parser.add_argument("file", help="a GDL-II game file (.kif)")
    add_solve_options(parser)
    _add_game_options(parser)
    return parser


def load_gdl2(path: str, *, engine: str = "auto", max_nodes: int = DEFAULT_MAX_NODES,
              deadline: float | None = None,
              progress: Callable[[str], None] | None = None) -> tuple[ExtensiveGame, dict]:
    """(extensive-form game, figures) of a GDL-II game file; GameError for a game
    without ``sees``, LimitReached past the node budget or the deadline."""
    start = time.monotonic()
    machine = load_machine(path, engine=engine)
    if not machine.has_sees:
        raise NotGdl2(f"{path}: not a GDL-II game (no sees rules); solve it with --solver "
                      "baseline, ih, doab or biab")
    if deadline is not None and time.monotonic() >= deadline:
        raise LimitReached(f"the time limit was reached while loading {path}")
    loaded = time.monotonic()
    game = expand_gdl2(machine, max_nodes=max_nodes, deadline=deadline, progress=progress)
    figures = {"game": machine.name, "engine": machine.engine_name, "nodes": game.num_nodes,
               "infosets": game.num_infosets,
               "expand_seconds": round(time.monotonic() - loaded, 6),
               "load_seconds": round(loaded - start, 6)}
    return game, figures


def solve_main(argv: Sequence[str]) -> int:
    parser = solve_parser()
    args = parser.parse_args(list(argv))
    deadline = command_deadline(args)
    outputs = solve_outputs(args)
    try:
        game, figures = load_gdl2(args.file, engine=args.engine, max_nodes=args.max_nodes,
                                  deadline=deadline, progress=stderr_lines(args))
    except NotGdl2 as exc:  # a GDL game given a GDL-II --solver: a usage error, as before
        parser.error(exc.message)
    return solve_and_report(game, args, deadline, outputs, figures)


def _convert_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ggp convert", description="Write a GDL-II game as an extensive-form game: "
        "Gambit .efg or the node/infoset tree format.")
    parser.add_argument("file", help="a GDL-II game file (.kif)")
    parser.add_argument("--to", choices=sorted(FORMATS), required=True,
                        help="output format: efg (Gambit) or tree (node/infoset text)")
    parser.add_argument("out", help="the file to write")
    _add_game_options(parser)
    return parser


def convert_main(argv: Sequence[str]) -> int:
    args = _convert_parser().parse_args(list(argv))
    out = prepare_output(args.out, "the output file")
    game, figures = load_gdl2(args.file, engine=args.engine, max_nodes=args.max_nodes,
                              progress=_progress)
    try:
        Path(out).write_text(FORMATS[args.to](game), encoding="utf-8")
    except OSError as exc:
        raise GameError(f"{args.out}: cannot write: {exc.strerror or exc}") from None
    print(f"wrote {figures['nodes']:,} nodes and {figures['infosets']:,} information sets "
          f"of {figures['game']} to {out}", file=sys.stderr)
    return 0
