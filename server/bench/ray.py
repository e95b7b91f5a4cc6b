"""``ggp bench ray``: tournaments and a solve on a local Ray cluster beside one process.

Method (everything on this machine; the cluster's nodes bind 127.0.0.1):

1. Start a local cluster of ``--nodes`` nodes (one CPU each; startup timed apart).
2. Tournament: the same round robin (``--game``, built-ins ``random`` and ``first``,
   ``random`` waiting ``--delay`` seconds a move so that matches overlap, every
   seating, ``--matches`` matches, one seed) on one process
   (:func:`server.tournament.run_tournament`, ``--concurrency`` at once) and on the
   cluster (:func:`server.ray_tournament.run_ray_tournament`), each into its own fresh
   database. Report per side: matches completed / aborted / lost (scheduled but not
   recorded as completed with all its steps), wall seconds and matches per second, and
   whether the two sides' results (seed, seating, payoffs) are equal.
3. Node kill: a node joins, the tournament (``--kill-matches`` matches, the first
   player delayed 0.15 s a move so matches are in flight) starts, and the node is
   killed without warning once a tenth of them have ended. Report matches
   completed, lost, recorded twice, and run again (Ray's task retries).
4. Solve (``--solve GAME.kif``): the baseline on the scale path in one process (a
   child process, so its peak memory is its own) and sharded over the nodes
   (:func:`gdl.solving.ray_solve.solve_sharded`). Report both sides' values and certificates,
   the largest difference of any state's value, seconds, and peak memory per shard.

Timings come from one run on a shared, loaded machine: compare the two sides of one
run, not runs of different days.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from gdl.expansion.row_table import RowTable
from gdl.formats import load_game
from gdl.solving.ray_solve import solve_sharded
from gdl.solving.solve import solve_game
from server.app import MatchServer
from server.ray_tournament import game_source, run_ray_tournament
from server.records import Records
from server.tournament import TournamentResult, run_tournament
from solvers.errors import GameError
from solvers.locations import GAMES
from solvers.ray_cluster import connect, node_args, ray_module

GDL_GAMES = GAMES / "gdl"
PLAYERS = ["random", "first"]


def _count(db: Path, tournament: str, scheduled: int) -> dict[str, int]:
    """Completed / aborted / lost / recorded twice, from the database itself."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT m.status, (SELECT COUNT(*) FROM steps s WHERE s.match = m.id), "
            "(SELECT MAX(step) FROM steps s WHERE s.match = m.id) FROM matches m "
            "WHERE tournament=?", (tournament,)).fetchall()
        twice = conn.execute("SELECT COUNT(*) FROM (SELECT seed FROM matches WHERE "
                             "tournament=? GROUP BY seed HAVING COUNT(*) > 1)",
                             (tournament,)).fetchone()[0]
    completed = sum(1 for status, n, last in rows if status == "completed" and n == (last or 0))
    aborted = sum(1 for status, _, _ in rows if status == "aborted")
    return {"completed": completed, "aborted": aborted, "lost": scheduled - completed - aborted,
            "recorded_twice": twice}


def _key(result: TournamentResult) -> list[tuple[Any, ...]]:
    return [(m["seed"], m["players"], m["status"], m["payoffs"])
            for m in result.to_json()["matches"]]


def _side(db: Path, result: TournamentResult, seconds: float) -> dict[str, Any]:
    n = len(result.pairings)
    return {**_count(db, result.id, n), "matches": n, "seconds": round(seconds, 2),
            "matches_per_s": round(n / seconds, 1)}


async def _one_process(game_path: Path, db: Path, players: list[str], rounds: int, seed: int,
                       concurrency: int) -> tuple[TournamentResult, float]:
    records = Records(db)
    try:
        async with MatchServer(records, port=0) as server:
            start = time.perf_counter()
            result = await run_tournament(server, [load_game(game_path)], players,
                                          rounds=rounds, swap_roles=True, seed=seed,
                                          concurrency=concurrency)
            return result, time.perf_counter() - start
    finally:
        records.close()


def _on_cluster(game_path: Path, db: Path, players: list[str], rounds: int, seed: int,
                concurrency: int, on_match: Any = None) -> tuple[Any, float]:
    records = Records(db)
    try:
        start = time.perf_counter()
        result = asyncio.run(run_ray_tournament(
            records, [load_game(game_path)], [game_source(game_path)], players, rounds=rounds,
            swap_roles=True, seed=seed, concurrency=concurrency, on_match=on_match))
        return result, time.perf_counter() - start
    finally:
        records.close()


def tournament_figures(cluster: Any, game: Path, matches: int, seed: int, concurrency: int,
                       folder: Path, delay: float = 0.0) -> dict[str, Any]:
    """Step 2 (``delay``: the first player waits this long a move, so matches overlap)."""
    rounds = max(1, matches // 2)
    players = [f"{PLAYERS[0]}?delay={delay:g}" if delay else PLAYERS[0], *PLAYERS[1:]]
    single, single_s = asyncio.run(_one_process(game, folder / "one.sqlite", players, rounds,
                                                seed, concurrency))
    spread, spread_s = _on_cluster(game, folder / "ray.sqlite", players, rounds, seed,
                                   concurrency)
    return {"game": game.stem, "players": players,
            "one_process": _side(folder / "one.sqlite", single, single_s),
            "ray": {**_side(folder / "ray.sqlite", spread, spread_s), "nodes": spread.nodes,
                    "retried": spread.retried, "hosts": spread.hosts,
                    "most_at_once": spread.most_at_once, "busiest_host": spread.busiest_host},
            "same_results": _key(single) == _key(spread)}


def kill_figures(cluster: Any, game: Path, matches: int, seed: int,
                 folder: Path) -> dict[str, Any]:
    """Step 3."""
    doomed = cluster.add_node(**node_args())
    cluster.wait_for_nodes()
    ended: list[Any] = []
    killed_at: list[int] = []

    def kill(outcome: Any) -> None:
        ended.append(outcome)
        if len(ended) == max(1, matches // 10) and not killed_at:
            cluster.remove_node(doomed, allow_graceful=False)
            killed_at.append(len(ended))

    db = folder / "kill.sqlite"
    players = ["random?delay=0.15", "first"]
    result, seconds = _on_cluster(game, db, players, max(1, matches // 2), seed,
                                  concurrency=3, on_match=kill)
    return {**_side(db, result, seconds), "killed_after": killed_at[0] if killed_at else None,
            "retried": result.retried, "nodes": result.nodes}


def solve_figures(path: Path, shards: int) -> dict[str, Any]:
    """Step 4."""
    ray = ray_module()  # (the optional ray extra: imported when used)
    child = subprocess.run([sys.executable, "-m", "ggp_cli", "solve", str(path), "--json",
                            "--quiet", "--max-states", "50000000"], capture_output=True,
                           text=True, check=False)
    if child.returncode not in (0, 1):
        raise GameError(f"ggp solve {path} failed: {child.stderr.strip()[-300:]}")
    one = json.loads(child.stdout)
    keep: list[Any] = []
    sharded = solve_sharded(path.read_text(), str(path), shards, keep=keep)
    try:
        parts = ray.get([a.values.remote() for a in keep])
    finally:
        for a in keep:
            ray.kill(a)
    single = solve_game(path, "baseline")   # in this process, for every state's value
    table = RowTable(single.expansion.packed.shape[1])
    table.add(single.expansion.packed)
    worst = 0.0
    for rows, values in parts:
        index, new = table.add(rows)
        worst = max(worst, float(np.abs(values - single.solution.values[index]).max())
                    if not new else float("inf"))
    return {"game": path.stem, "states": sharded.states,
            "one_process": {"values": one["values"], "certificate": one["certificate"],
                            "seconds": one.get("total_seconds"),
                            "peak_mb": one.get("peak_rss_mb")},
            "ray": {"values": dict(zip(sharded.roles, sharded.values, strict=True)),
                    "certificate": sharded.certificate, "seconds": sharded.seconds,
                    "shards": [{k: p[k] for k in ("shard", "node", "states", "ghosts",
                                                  "peak_mb", "seconds")}
                               for p in sharded.shards]},
            "largest_value_difference": worst}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ggp bench ray", description="tournaments and a "
                                     "sharded solve on a local Ray cluster beside one process")
    parser.add_argument("--game", default=str(GDL_GAMES / "goofspiel_3.kif"),
                        help="the tournament's game (default games/gdl/goofspiel_3.kif)")
    parser.add_argument("--matches", type=int, default=1000,
                        help="matches of the tournament (default 1000)")
    parser.add_argument("--kill-matches", type=int, default=100,
                        help="matches of the node-kill run (default 100; 0: skip it)")
    parser.add_argument("--solve", default=None, metavar="GAME.kif",
                        help="also solve this game in one process and sharded")
    parser.add_argument("--nodes", type=int, default=2, help="nodes of the local cluster "
                        "(default 2)")
    parser.add_argument("--concurrency", type=int, default=16,
                        help="matches in flight on either side (default 16)")
    parser.add_argument("--delay", type=float, default=0.0, metavar="SECONDS",
                        help="the tournament's first player waits this long a move, so its "
                        "matches overlap (with --concurrency 1000: 1,000 at once; default 0)")
    parser.add_argument("--seed", type=int, default=1, help="tournament seed (default 1)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if (args.matches < 2 or args.nodes < 1 or args.concurrency < 1 or args.kill_matches < 0
            or not 0 <= args.delay <= 60):
        raise GameError("--matches >= 2, --nodes >= 1, --concurrency >= 1, --kill-matches >= 0, "
                        "--delay from 0 to 60")
    report: dict[str, Any] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ggp-ray-bench-") as tmp, \
            connect(f"local:{args.nodes}") as cluster:
        report["cluster_start_seconds"] = round(time.perf_counter() - started, 1)
        folder = Path(tmp)
        report["tournament"] = tournament_figures(cluster.cluster, Path(args.game),
                                                  args.matches, args.seed, args.concurrency,
                                                  folder, args.delay)
        if args.solve:
            report["solve"] = solve_figures(Path(args.solve), args.nodes)
        if args.kill_matches:
            report["node_kill"] = kill_figures(cluster.cluster, Path(args.game),
                                               args.kill_matches, args.seed, folder)
    print(json.dumps(report) if args.json else text(report))
    return 0


def text(report: dict[str, Any]) -> str:
    t = report["tournament"]
    one, spread = t["one_process"], t["ray"]
    lines = [f"local cluster started in {report['cluster_start_seconds']} s",
             f"tournament ({t['game']}, {' '.join(t['players'])}, {one['matches']} matches): "
             "side, completed/aborted/lost, seconds, matches/s",
             f"  one process   {one['completed']}/{one['aborted']}/{one['lost']}  "
             f"{one['seconds']} s  {one['matches_per_s']}/s",
             f"  ray, {spread['nodes']} nodes  {spread['completed']}/{spread['aborted']}/"
             f"{spread['lost']}  {spread['seconds']} s  {spread['matches_per_s']}/s  "
             f"(ray / one process: {spread['matches_per_s'] / one['matches_per_s']:.2f}x)",
             f"  on ray: {spread['hosts']} match hosts, at most {spread['most_at_once']} "
             f"matches in flight, {spread['busiest_host']} at once in the busiest host",
             f"  same results: {t['same_results']}"]
    if "node_kill" in report:
        k = report["node_kill"]
        lines.append(f"node kill after {k['killed_after']} matches: {k['completed']} of "
                     f"{k['matches']} completed, {k['lost']} lost, {k['recorded_twice']} "
                     f"recorded twice, {k['retried']} run again")
    if "solve" in report:
        s = report["solve"]
        one_s, ray_s = s["one_process"], s["ray"]
        lines += [f"solve {s['game']} ({s['states']:,} states):",
                  f"  one process  values {one_s['values']}  certificate ok "
                  f"{one_s['certificate']['ok']} (max gain {one_s['certificate']['max_gain']:.3g})"
                  f"  {one_s['seconds']:.2f} s  peak {one_s['peak_mb']:.0f} MB",
                  f"  ray          values {ray_s['values']}  certificate ok "
                  f"{ray_s['certificate']['ok']} (max gain {ray_s['certificate']['max_gain']:.3g})"
                  f"  {ray_s['seconds']['total']:.2f} s",
                  *[f"    shard {p['shard']} on {p['node']}: {p['states']:,} states, "
                    f"{p['ghosts']:,} ghosts, peak {p['peak_mb']:.0f} MB, {p['seconds']:.1f} s"
                    for p in ray_s["shards"]],
                  f"  largest difference of a state's value: {s['largest_value_difference']:.3g}"]
    return "\n".join(lines)
