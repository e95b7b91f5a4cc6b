"""``ggp bench server``: many concurrent matches over loopback websockets.

Method:

1. Start a match server on 127.0.0.1 (a fresh temporary database unless ``--db``).
2. Connect one websocket bot per seat (``--matches`` x roles sockets), all in one
   separate client process (so the server's event loop is measured alone): each
   logs in with ``hello`` and answers every ``request`` at once with a seeded random
   legal move, as a built-in ``random`` player would, but across the socket.
3. Create all matches at once (``ws:`` seats) and wait for every one to end.
4. Report: matches completed / aborted / lost (a match is lost when the database
   does not hold it as completed with one committed step per played step); two
   latencies at p50 and p99, both taken on the server: the round trip (from sending
   a ``request`` to holding the ``move``: loopback both ways, the bot, and both
   processes' queues under the full load) and the step relay (from the last move of
   a step to its results sent out: validation, the next state, the committed
   database write, the messages); and matches per second over the wall time of step 3.

Also the server process's CPU time per step (its event loop and its database thread,
not the bots or game workers): at 200 lock-step matches a step's relay waits for the
loop to work through the other matches' steps, so p99 is about 200 x that.

``--inproc`` seats built-in ``random`` players instead of bots (no sockets), to
separate the server's own cost from the websocket relay. ``--workers N`` computes the
games in N worker processes (``ggp serve --workers N``, ``server/engine.py``);
``--compare`` runs the same matches twice in one run, games on the event loop and then
in the workers, and prints both rows. ``--warm`` plays the matches once unmeasured
first (the same seeds again after), as a long-running server would have: a GDL game
grounds each joint move the first time it meets it, in each process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect

from gdl.formats import load_game
from server.app import MatchServer
from server.bench.children import (
    all_ready,
    child_main,
    exit_with_parent,
    start_child,
    stop_child,
)
from server.commandline import bounded_int
from server.records import Records
from solvers.errors import GameError
from solvers.locations import GAMES
from solvers.playable import PlayableGame

DEFAULT_GAME = GAMES / "gdl" / \
    "simultaneous_tictactoe.kif"


async def random_bot(url: str, name: str, seed: int, ready: asyncio.Event,
                     everyone: asyncio.Event) -> None:
    """A websocket agent playing seeded random legal moves until the socket closes; it
    accepts an offer once ``everyone`` is logged in, so matches created before the bots
    came all start at once."""
    rng = random.Random(seed)
    accepting: set[asyncio.Task[None]] = set()

    async def accept(match: str) -> None:
        await everyone.wait()
        await ws.send(json.dumps({"type": "ready", "match": match}))

    async with connect(url, max_queue=None) as ws:
        await ws.send(json.dumps({"type": "hello", "name": name,
                                  "token": f"bench-token-{name}"}))
        async for data in ws:
            message = json.loads(data)
            kind = message["type"]
            if kind == "welcome":
                ready.set()
            elif kind == "offer":
                task = asyncio.create_task(accept(message["match"]))
                accepting.add(task)
                task.add_done_callback(accepting.discard)
            elif kind == "request":
                await ws.send(json.dumps({"type": "move", "match": message["match"],
                                          "step": message["step"],
                                          "move": rng.choice(message["legal"])}))
            elif kind == "ping":
                await ws.send(json.dumps({"type": "pong", "nonce": message.get("nonce")}))


async def run_bots(url: str, count: int, seed: int) -> None:
    """The bench's client process: ``count`` bots named bot0.., then ``ready`` on stdout."""
    events = [asyncio.Event() for _ in range(count)]
    everyone = asyncio.Event()
    bots = [asyncio.create_task(random_bot(url, f"bot{i}", seed + i, events[i], everyone))
            for i in range(count)]
    await all_ready(events, bots, "bot")
    everyone.set()
    print("ready", flush=True)
    await asyncio.gather(*bots)


def quantile_ms(values: list[float], q: float) -> float | None:
    """The q-quantile of seconds, in milliseconds (None without values)."""
    return 1000 * percentile(values, q) if values else None


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by the nearest-rank method."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(q * len(ordered) + 0.5)) - 1))]


async def run_bench(game: PlayableGame, n_matches: int, db: Path, playclock: float,
                    inproc: bool, seed: int, workers: int = 0,
                    warm: bool = False) -> dict[str, Any]:
    n_roles = len(game.roles)
    records = Records(db)
    try:
        sockets = 4 * n_matches * n_roles + 64  # the bots all log in from loopback
        # (a login's deadline as long as a seat's: the bots' hundreds of secrets are
        # hashed one after another while the first matches play)
        async with MatchServer(records, port=0, max_connections=sockets, seat_wait=60,
                               login_timeout=60,
                               workers=workers, registration="open",
                               max_per_address=sockets) as server:
            bots = None
            if not inproc:
                bots = await start_child(["-m", "server.bench.server", "--bots", server.url,
                                          str(n_matches * n_roles), str(seed)], "bot")
            for _ in range(2 if warm else 1):  # the measured round is the last one
                started, cpu = time.perf_counter(), time.process_time()
                matches = []
                for m in range(n_matches):
                    seats = ["random"] * n_roles if inproc else \
                        [f"ws:bot{m * n_roles + r}" for r in range(n_roles)]
                    matches.append(server.create_match(game, seats, startclock=5,
                                                       playclock=playclock, seed=seed + m))
                outcomes = await asyncio.gather(*(server.tasks[m.id] for m in matches))
                wall, cpu = time.perf_counter() - started, time.process_time() - cpu
            if bots is not None:
                await stop_child(bots)
        lost = 0
        for outcome in outcomes:
            record = records.get_match(outcome.match)
            if record["status"] != outcome.status or len(record["steps"]) != len(outcome.moves):
                lost += 1
    finally:
        records.close()
    latencies = [lat for o in outcomes for lat in o.latencies]
    relays = [t for o in outcomes for t in o.step_times]
    steps = sum(len(o.moves) for o in outcomes)
    return {
        "game": game.name, "matches": n_matches, "mode": "in-process" if inproc else "websocket",
        "workers": workers,
        "completed": sum(o.status == "completed" for o in outcomes),
        "aborted": sum(o.status == "aborted" for o in outcomes),
        "lost": lost, "steps": steps,
        "faults": sum(1 for o in outcomes for step in o.errors for e in step if e),
        "round_trip_p50_ms": quantile_ms(latencies, 0.5),
        "round_trip_p99_ms": quantile_ms(latencies, 0.99),
        "relay_p50_ms": quantile_ms(relays, 0.5), "relay_p99_ms": quantile_ms(relays, 0.99),
        "wall_s": wall, "matches_per_s": n_matches / wall, "steps_per_s": steps / wall,
        "server_cpu_ms_per_step": 1000 * cpu / max(1, steps),
    }


def _table(reports: list[dict[str, Any]]) -> list[str]:
    """One row per run: where the games ran, relay p50/p99, round trip, throughput."""
    lines = [f"{'games computed':<22}{'done':>9}{'relay p50':>11}{'relay p99':>11}"
             f"{'rtt p50':>10}{'rtt p99':>10}{'matches/s':>11}{'steps/s':>9}{'cpu/step':>10}"]
    for r in reports:
        where = f"in {r['workers']} workers" if r["workers"] else "on the event loop"
        ms = [f"{r[k]:.1f}" if r[k] is not None else "-" for k in
              ("relay_p50_ms", "relay_p99_ms", "round_trip_p50_ms", "round_trip_p99_ms")]
        lines.append(f"{where:<22}{r['completed']:>5}/{r['matches']:<3}{ms[0]:>11}{ms[1]:>11}"
                     f"{ms[2]:>10}{ms[3]:>10}{r['matches_per_s']:>11.1f}"
                     f"{r['steps_per_s']:>9.0f}{r['server_cpu_ms_per_step']:>10.2f}")
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ggp bench server", description="Many concurrent "
                                     "matches over loopback websockets.")
    parser.add_argument("--matches", type=bounded_int(1, 100_000), default=200,
                        help="concurrent matches (200)")
    parser.add_argument("--game", default=str(DEFAULT_GAME), help="game file")
    parser.add_argument("--playclock", type=float, default=30.0,
                        help="play clock (generous: the bench measures relay, not faults)")
    parser.add_argument("--db", default=None, help="database (default: a temporary file)")
    parser.add_argument("--inproc", action="store_true",
                        help="built-in players inside the server instead of websocket bots")
    parser.add_argument("--seed", type=bounded_int(0, 1 << 31), default=1,
                        help="seed of the matches (default 1)")
    parser.add_argument("--workers", type=bounded_int(0, 256), default=0, metavar="N",
                        help="compute the games in N worker processes (default 0: on the "
                        "event loop)")
    parser.add_argument("--compare", action="store_true",
                        help="run twice in one run, games on the event loop then in the "
                        "workers (--workers, default 2), and print both rows")
    parser.add_argument("--warm", action="store_true",
                        help="play the matches once unmeasured first, so the game's lazily "
                        "compiled moves are ready (a long-running server's steady state)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--bots", nargs=3, metavar=("URL", "COUNT", "SEED"),
                        help=argparse.SUPPRESS)  # the client process the bench starts
    args = parser.parse_args(argv)
    if args.bots:
        exit_with_parent()
        asyncio.run(run_bots(args.bots[0], int(args.bots[1]), int(args.bots[2])))
        return 0
    if args.matches < 1:
        raise GameError("--matches must be at least 1")
    runs = [0, args.workers or 2] if args.compare else [args.workers]
    game = load_game(args.game)
    reports = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, workers in enumerate(runs):
            db = Path(args.db) if args.db else Path(tmp) / f"bench{i}.sqlite"
            print(f"bench: {args.matches} concurrent matches of {Path(args.game).name} "
                  f"({'in-process' if args.inproc else 'websocket bots on loopback'}; games "
                  f"{f'in {workers} worker processes' if workers else 'on the event loop'})",
                  file=sys.stderr)
            reports.append(asyncio.run(run_bench(game, args.matches, db, args.playclock,
                                                 args.inproc, args.seed, workers,
                                                 args.warm)))
    if args.json:
        print(json.dumps(reports if args.compare else reports[0]))
    else:
        for report in reports:
            print(f"{'in ' + str(report['workers']) + ' workers' if report['workers'] else 'on the loop'}: "
                  f"matches: {report['completed']} completed, {report['aborted']} aborted, "
                  f"{report['lost']} lost of {report['matches']} ({report['steps']} steps, "
                  f"{report['faults']} faults)")
        print("latencies in ms (relay: last move in -> results out; rtt: request -> move); "
              "cpu/step: the server process's CPU ms per step")
        for line in _table(reports):
            print(line)
    ok = all(r["completed"] == r["matches"] and r["lost"] == 0 for r in reports)
    return 0 if ok else 1


if __name__ == "__main__":  # (the bench's own client process)
    child_main(main)
