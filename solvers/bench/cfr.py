"""``ggp bench cfr``: our vectorised CFR / CFR+ against OpenSpiel's C++ solvers.

For Kuhn and Leduc poker, runs the same number of iterations of

* our :class:`.cfr.CFR` and :class:`.cfr_plus.CFRPlus` on the shared ``.efg`` files, and
* ``pyspiel.CFRSolver`` and ``pyspiel.CFRPlusSolver`` on OpenSpiel's own games (when
  open-spiel is installed),

and prints iterations per second and NashConv of the average strategy after those
iterations (ours by :mod:`.exploitability`, OpenSpiel's by its ``nash_conv``). Both
use alternating updates and the same averaging, so NashConv should agree per
iteration; the speed column is the point of the comparison.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from solvers.errors import GameError
from solvers.extensive.cfr import CFR
from solvers.extensive.cfr_plus import CFRPlus
from solvers.extensive.efg_format import read_efg
from solvers.extensive.exploitability import nash_conv
from solvers.locations import SHARED

SHARED_EFG = SHARED / "efg"
GAMES = {"kuhn": ("kuhn_from_course.efg", "kuhn_poker"),
         "leduc": ("leduc_from_course.efg", "leduc_poker")}
OURS = {"cfr": CFR, "cfr+": CFRPlus}


def _ours(path: Path, solver: str, iterations: int) -> dict:
    game = read_efg(path)
    run = OURS[solver](game)
    started = time.perf_counter()
    run.iterate(iterations)
    seconds = time.perf_counter() - started
    return {"impl": "ours (numpy)", "solver": solver, "iterations": iterations,
            "seconds": seconds, "it_per_s": iterations / seconds,
            "nash_conv": nash_conv(game, run.average_strategy()).nash_conv}


def _openspiel(name: str, solver: str, iterations: int) -> dict | None:
    try:  # deferred: OpenSpiel, the optional peer
        import pyspiel
        from open_spiel.python.algorithms import exploitability
    except ImportError:
        return None
    game = pyspiel.load_game(name)
    run = (pyspiel.CFRSolver if solver == "cfr" else pyspiel.CFRPlusSolver)(game)
    started = time.perf_counter()
    for _ in range(iterations):
        run.evaluate_and_update_policy()
    seconds = time.perf_counter() - started
    return {"impl": "OpenSpiel C++", "solver": solver, "iterations": iterations,
            "seconds": seconds, "it_per_s": iterations / seconds,
            "nash_conv": float(exploitability.nash_conv(game, run.average_policy()))}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="ggp bench cfr",
        description="CFR and CFR+ speed and NashConv: ours vs OpenSpiel's C++ solvers.")
    parser.add_argument("--iterations", type=int, default=1000,
                        help="iterations of each solver (default 1000)")
    parser.add_argument("--games", default="kuhn,leduc", help="comma-separated: kuhn,leduc")
    parser.add_argument("--efg-dir", type=Path, default=SHARED_EFG,
                        help="folder with kuhn_from_course.efg and leduc_from_course.efg")
    parser.add_argument("--no-peers", action="store_true", help="skip OpenSpiel")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    if args.iterations <= 0:
        raise GameError("--iterations must be positive")
    rows: list[dict] = []
    peers_missing = False
    for game_name in args.games.split(","):
        if game_name not in GAMES:
            raise GameError(f"unknown game {game_name!r} (kuhn or leduc)")
        file_name, spiel_name = GAMES[game_name]
        path = args.efg_dir / file_name
        if not path.is_file():
            raise GameError(f"{path} not found (use --efg-dir)")
        for solver in OURS:
            row = {"game": game_name, **_ours(path, solver, args.iterations)}
            rows.append(row)
            _report(row, args.json)
            if args.no_peers:
                continue
            peer = _openspiel(spiel_name, solver, args.iterations)
            if peer is None:
                peers_missing = True
                continue
            peer = {"game": game_name, **peer}
            rows.append(peer)
            _report(peer, args.json)
            if not args.json:
                print(f"    speed-up {row['it_per_s'] / peer['it_per_s']:.1f}x, NashConv "
                      f"difference {abs(row['nash_conv'] - peer['nash_conv']):.2e}", flush=True)
    if peers_missing and not args.json:
        print("open-spiel is not installed: OpenSpiel rows skipped (pip install open-spiel)")
    if args.json:
        print(json.dumps(rows))
    return 0


def _report(row: dict, quiet: bool) -> None:
    if not quiet:
        print(f"{row['game']:6} {row['solver']:5} {row['impl']:14} {row['iterations']:6d} it  "
              f"{row['it_per_s']:10.1f} it/s  NashConv {row['nash_conv']:.6g}", flush=True)
