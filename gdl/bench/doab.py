"""``ggp bench doab``: DOαβ and BIαβ against full backward induction (the baseline).

    ggp bench doab [--corpus DIR] [--max-states N] [--solve-limit S] [--json]
                   [GAME ...]

Steps:

1. The games: corpus names (``DIR/repository/NAME.kif``), ``.kif`` or simultaneous
   ``.efg`` paths; by default the constant-sum games among those ``ggp bench corpus``
   solves, the two bundled simultaneous tic-tac-toe files and turn-based ticTacToe.
2. For each: load and expand it once (``--max-states``), then solve it with the
   baseline, BIαβ and DOαβ in the same process, one after the other, timing each by
   CPU time (``time.process_time``: the machine may be shared) within
   ``--solve-limit`` seconds, and certify both.
3. Print a table: nodes, nodes BIαβ and DOαβ evaluated (the baseline evaluates all),
   nodes DOαβ's serialized alpha-beta searches visited, its restricted matrix games,
   CPU seconds of each and DOαβ's ratio to the baseline, the values (equal within
   1e-9?) and the certificates' largest gains.
   A general-sum game is listed as refused by DOαβ; a game over a budget, with why.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path

from gdl.bench.corpus import DEFAULT_CORPUS
from gdl.budget import Budget
from gdl.expansion.expand import expand
from gdl.reasoning.machine import load_machine
from solvers.errors import GameError, UnsupportedGame
from solvers.locations import GAMES
from solvers.simultaneous import baseline, certificate, doab
from solvers.simultaneous.efg_import import read_simultaneous_efg
from solvers.simultaneous.model import SimultaneousGame

BUNDLED = GAMES / "gdl"
DEFAULT_GAMES = ("chickentictactoe", "chickentoetictac", "eotcitcit", "gt_tinfoil", "roshambo2",
                 "ticTicToe", str(BUNDLED / "simultaneous_tictactoe.kif"),
                 str(BUNDLED / "simultaneous_tictactoe_thesis.kif"), "ticTacToe")


def load_game(spec: str, corpus: Path, max_states: int) -> tuple[str, SimultaneousGame]:
    """(name, model) of a corpus name, a .kif or a simultaneous .efg."""
    path = Path(spec)
    if path.suffix.lower() == ".efg":
        return path.stem, read_simultaneous_efg(path)
    if path.suffix.lower() not in (".kif", ".gdl"):
        path = corpus / "repository" / f"{spec}.kif"
    if not path.is_file():
        raise GameError(f"{path}: no such game file")
    expansion = expand(load_machine(path, name=path.stem), budget=Budget(max_states=max_states))
    return path.stem, expansion.game


def compare(game: SimultaneousGame, solve_limit: float) -> dict:
    """The baseline, BIαβ and DOαβ on ``game``, CPU-timed, certified (step 2)."""
    row: dict = {"nodes": game.num_nodes}
    for name, solve in (("baseline", baseline.solve), ("biab", doab.solve_biab),
                        ("doab", doab.solve)):
        start = time.process_time()
        solution = solve(game, time_limit=solve_limit)
        row[name] = {"cpu": time.process_time() - start, "values": list(solution.root_values),
                     **doab.counts(solution)}
        check = certificate.check(game, solution)
        row[name]["max_gain"], row[name]["ok"] = check["max_gain"], check["ok"]
    row["equal"] = all(abs(row[name]["values"][0] - row["baseline"]["values"][0]) <= 1e-9
                       for name in ("biab", "doab"))
    return row


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    corpus = Path(args.corpus)
    rows: list[tuple[str, dict]] = []
    skipped: list[tuple[str, str]] = []
    for spec in args.games or DEFAULT_GAMES:
        try:
            name, game = load_game(spec, corpus, args.max_states)
            rows.append((name, compare(game, args.solve_limit)))
        except UnsupportedGame as exc:
            skipped.append((Path(spec).stem, str(exc)))
        except GameError as exc:  # a budget, a bad file: listed, the others still run
            skipped.append((Path(spec).stem, str(exc)))
    if args.json:
        print(json.dumps({"games": dict(rows), "skipped": dict(skipped)}))
    else:
        print(table(rows, skipped))
    return 0 if all(r["equal"] and all(r[k]["ok"] for k in ("baseline", "biab", "doab"))
                    for _, r in rows) else 1


def table(rows: list[tuple[str, dict]], skipped: list[tuple[str, str]]) -> str:
    lines = ["| game | nodes | baseline CPU s | BIαβ evaluated | BIαβ CPU s | DOαβ evaluated "
             "| DOαβ solved | alpha-beta nodes | restricted games | DOαβ CPU s "
             "| DOαβ / baseline CPU | value (player 0) | equal | max gain (3 solvers) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
             "| ---: | --- | --- |"]
    for name, r in rows:
        base, bi, do = r["baseline"], r["biab"], r["doab"]
        gains = " / ".join(f"{r[k]['max_gain']:.0e}" for k in ("baseline", "biab", "doab"))
        lines.append(
            f"| {name} | {r['nodes']:,} | {base['cpu']:.2f} | {bi['nodes_evaluated']:,} "
            f"| {bi['cpu']:.2f} | {do['nodes_evaluated']:,} | {do['nodes_solved']:,} "
            f"| {do['bound_nodes']:,} | {do['restricted_games']:,} | {do['cpu']:.2f} "
            f"| {do['cpu'] / max(base['cpu'], 1e-6):.2f} | {do['values'][0]:.6g} "
            f"| {'yes' if r['equal'] else 'NO'} | {gains} |")
    lines += [f"not compared: {name}: {why}" for name, why in skipped]
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ggp bench doab", description="DOαβ and BIαβ against the "
                                     "baseline (full backward induction): nodes and CPU time.")
    parser.add_argument("games", nargs="*", help="corpus names, .kif or .efg files "
                        "(default: the constant-sum games the corpus bench solves)")
    parser.add_argument("--corpus", default=str(DEFAULT_CORPUS), help="corpus directory")
    parser.add_argument("--max-states", type=int, default=100_000,
                        help="state budget of each expansion (default %(default)s)")
    parser.add_argument("--solve-limit", type=float, default=120.0,
                        help="seconds per solver and game (default %(default)s)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser
