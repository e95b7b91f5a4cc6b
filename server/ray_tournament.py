"""Tournaments on a Ray cluster (``ggp tournament ... --ray ADDRESS``): an adapter over the
same match loop, not a second one.

1. The driver plans the round robin exactly as on one machine
   (:func:`server.tournament.plan_tournament`: the same schedule and match seeds) and
   records the tournament in its database.
2. Each match is a Ray task. On the node where it lands it loads the game from its
   text (put once into the object store), starts a :class:`MatchServer` on
   127.0.0.1 there and runs :meth:`MatchServer.play_match`, the match loop with its
   players started on that node (built-ins, ``agent`` seats as local processes,
   ``http://`` players reachable from it), against an in-memory record; it returns
   that record. The driver fixes the match id (tournament and index), so a match is
   the same record wherever and however often it runs.
3. As matches finish, the driver writes their records into its one SQLite database
   (:meth:`Records.import_match`: keyed by match id, a record that is there already is
   not written again) and advances the progress bar. At most ``concurrency`` tasks
   are in flight.
4. A node lost mid-match: Ray runs its tasks again on another node (``max_retries``);
   the rerun replays the match from its seed and only the one record that comes back
   is written. A small ledger actor counts each match's starts, so the result says
   how many matches ran again, and knows where each last ran, so an error names the
   node.
5. Standings as on one machine (:func:`server.tournament.run_planned`).

``ws:`` seats are refused: they wait for agents logging in to the driver's server,
which the nodes do not run.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gdl.loader import MAX_GAME_BYTES, detect_format, load_game_text
from server.app import MatchServer
from server.match import MatchOutcome
from server.players.spec import parse_spec
from server.records import Records
from server.tournament import Pairing, TournamentResult, plan_tournament, run_planned
from solvers.errors import GameError
from solvers.files import read_text
from solvers.playable import PlayableGame
from solvers.ray_cluster import connect, node_label, ray_module

#: times Ray runs a match again after its node or worker process was lost
MAX_RETRIES = 3


@dataclass(frozen=True)
class GameSource:
    """What a node needs to load a game: its format, text and names."""

    fmt: str
    text: str
    name: str
    filename: str

    @property
    def key(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


def game_source(path: str | Path) -> GameSource:
    file = Path(path)
    if file.is_file() and file.stat().st_size > MAX_GAME_BYTES:
        raise GameError(f"{path}: game file larger than {MAX_GAME_BYTES} bytes")
    text = read_text(file)
    return GameSource(detect_format(file, text), text, file.stem, str(path))


@dataclass
class RayTournamentResult(TournamentResult):
    """A tournament's result, and what the cluster did."""

    retried: int = 0  # matches that ran more than once (a node or worker was lost)
    nodes: int = 0  # nodes that ran matches


class _NodeServer(MatchServer):
    """A node's match server: the driver chooses the match id."""

    match_id = ""

    def new_match_id(self, game: PlayableGame) -> str:
        return self.match_id


_GAMES: dict[str, PlayableGame] = {}  # per worker process: a game is loaded once


def _loaded(source: GameSource) -> PlayableGame:
    game = _GAMES.get(source.key)
    if game is None:
        game = _GAMES[source.key] = load_game_text(source.fmt, source.text, name=source.name,
                                                   filename=source.filename)
    return game


async def _run_match(game: PlayableGame, specs: list[str], match_id: str,
                     options: dict[str, Any]) -> dict[str, Any]:
    records = Records(":memory:")
    try:
        async with _NodeServer(records, port=0, http_allow=options["http_allow"]) as server:
            server.match_id = match_id
            await server.play_match(game, specs, startclock=options["startclock"],
                                    playclock=options["playclock"], seed=options["seed"],
                                    tournament=options["tournament"])
        return records.get_match(match_id)
    finally:
        records.close()


def play_on_node(source: GameSource, specs: list[str], match_id: str, options: dict[str, Any],
                 ledger: Any) -> dict[str, Any]:
    """Step 2 of the module docstring (the body of the Ray task): the match's record."""
    ray = ray_module()
    node = node_label()
    # waited for: a start the ledger never heard of would hide a retry; while a node is
    # being lost the ledger may be briefly unavailable (Ray then says so): ask again
    for attempt in range(LEDGER_ATTEMPTS):
        try:
            ray.get(ledger.started.remote(match_id, node))
            break
        except ray.exceptions.ActorUnavailableError:
            if attempt == LEDGER_ATTEMPTS - 1:
                raise
            time.sleep(0.5)
    try:
        record = asyncio.run(_run_match(_loaded(source), specs, match_id, options))
    except GameError as exc:
        raise GameError(f"match {match_id} on node {node}: {exc}") from None
    record["node"] = node
    return record


LEDGER_ATTEMPTS = 20  # half a second apart


class Ledger:
    """Where each match started, how often (a Ray actor on the driver's side)."""

    def __init__(self) -> None:
        self.starts: dict[str, list[str]] = {}

    def started(self, match_id: str, node: str) -> None:
        self.starts.setdefault(match_id, []).append(node)

    def where(self, match_id: str) -> str | None:
        nodes = self.starts.get(match_id)
        return nodes[-1] if nodes else None

    def summary(self) -> tuple[int, int]:
        """(matches started more than once, nodes that started matches)."""
        return (sum(1 for n in self.starts.values() if len(n) > 1),
                len({node for nodes in self.starts.values() for node in nodes}))


def check_ray_specs(specs: Sequence[str]) -> None:
    for spec in specs:
        if parse_spec(spec).kind == "ws":
            raise GameError(f"player {spec!r}: ws: seats wait for agents logging in to one "
                            "server, which a Ray cluster's nodes do not run; use agent or "
                            "http:// players with --ray")


def _match_id(game: PlayableGame, tournament: str, index: int) -> str:
    stem = re.sub(r"[^A-Za-z0-9_@-]", "_", game.name)[:64] or "game"
    return f"{stem}.{tournament.removeprefix('tournament.')}.{index + 1}"


async def run_ray_tournament(records: Records, games: Sequence[PlayableGame],
                             sources: Sequence[GameSource], players: Sequence[str], *,
                             rounds: int = 1, swap_roles: bool = False, concurrency: int = 4,
                             startclock: float = 10.0, playclock: float = 5.0,
                             seed: int | None = None, fill: str | None = None,
                             http_allow: Sequence[str] = (),
                             on_match: Callable[[MatchOutcome], None] | None = None,
                             max_retries: int = MAX_RETRIES) -> RayTournamentResult:
    """A round robin on the connected Ray cluster (see the module docstring); ``games``
    and ``sources`` name the same games in the same order."""
    ray = ray_module()
    check_ray_specs(list(players) + ([fill] if fill is not None else []))
    plan = plan_tournament(games, players, rounds=rounds, swap_roles=swap_roles,
                           concurrency=concurrency, startclock=startclock, playclock=playclock,
                           seed=seed, fill=fill)
    source_of = {id(g): ray.put(s) for g, s in zip(games, sources, strict=True)}
    task = ray.remote(play_on_node)
    # on the driver's node: the ledger must outlive the loss of any worker node
    here = ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy(
        ray.get_runtime_context().get_node_id(), soft=False)
    ledger = ray.remote(num_cpus=0)(Ledger).options(
        name=f"ggp-ledger-{plan.id}", scheduling_strategy=here).remote()
    gate = asyncio.Semaphore(concurrency)
    running: set[Any] = set()

    async def play(index: int, pairing: Pairing) -> MatchOutcome:
        match_id = _match_id(pairing.game, plan.id, index)
        options = {"startclock": startclock, "playclock": playclock, "seed": pairing.seed,
                   "tournament": plan.id, "http_allow": list(http_allow)}
        async with gate:
            # Ray's own errors inside the task (a dying node's worker losing the
            # ledger) are retried like the node's loss; the match's GameErrors are not
            ref = task.options(name=f"ggp-match-{match_id}", max_retries=max_retries,
                               retry_exceptions=[ray.exceptions.RayError]).remote(
                source_of[id(pairing.game)], [plan.entrants[e] for e in pairing.entrants],
                match_id, options, ledger)
            running.add(ref)
            try:
                record = await ref
            except ray.exceptions.RayError as exc:
                raise await _failure(ledger, match_id, exc) from None
            finally:
                running.discard(ref)
        await records.import_match(record)
        outcome = MatchOutcome(record["id"], record["status"], record["payoffs"],
                               record["reason"])
        if on_match is not None:
            on_match(outcome)
        return outcome

    try:
        result = await run_planned(records, plan, play)
        retried, nodes = await ledger.summary.remote()
    finally:
        for ref in list(running):
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        with contextlib.suppress(Exception):
            ray.kill(ledger)
    return RayTournamentResult(**vars(result), retried=retried, nodes=nodes)


async def _failure(ledger: Any, match_id: str, exc: Exception) -> GameError:
    """One line naming the match, its node and what went wrong."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, GameError):  # raised by the task: it names the node already
        return GameError(str(cause))
    try:
        where = await ledger.where.remote(match_id)
    except Exception:  # the ledger's node is gone too
        where = None
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return GameError(f"match {match_id} failed on node {where or '(not started)'}: "
                     f"{type(exc).__name__}: {lines[-1] if lines else ''}")


def ray_tournament(records: Records, games: Sequence[PlayableGame], paths: Sequence[str],
                   args: Any, on_match: Callable[[MatchOutcome], None] | None,
                   http_allow: Sequence[str]) -> RayTournamentResult:
    """``ggp tournament --ray``: connect (a ``local:N`` cluster lives as long as the
    tournament), run, say on stderr what the cluster did."""
    check_ray_specs(list(args.players) + ([args.fill] if args.fill is not None else []))
    sources = [game_source(p) for p in paths]
    with connect(args.ray) as cluster:
        print(f"ray: {len(cluster.nodes())} nodes at {args.ray}", file=sys.stderr)
        result = asyncio.run(run_ray_tournament(
            records, games, sources, args.players, rounds=args.rounds,
            swap_roles=args.swap_roles, concurrency=args.concurrency,
            startclock=args.startclock, playclock=args.playclock, seed=args.seed,
            fill=args.fill, http_allow=http_allow, on_match=on_match))
    print(f"ray: {len(result.outcomes)} matches on {result.nodes} nodes, "
          f"{result.retried} run again after a lost node or worker", file=sys.stderr)
    return result
