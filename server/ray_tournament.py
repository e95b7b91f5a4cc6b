"""Tournaments on a Ray cluster (``ggp tournament ... --ray ADDRESS``): an adapter over the
same match loop, not a second one.

1. The driver plans the round robin exactly as on one machine
   (:func:`server.tournament.plan_tournament`: the same schedule and match seeds) and
   records the tournament in its database.
2. Matches run on *match hosts*: async Ray actors, one per CPU of every live node
   (at least one a node), each pinned to its node, each playing many matches at once
   in its event loop. For a match a host loads the game from its text (put once into
   the object store, loaded once per host), starts a :class:`MatchServer` on
   127.0.0.1 and runs :meth:`MatchServer.run_match`, the match loop with its players
   started on that node (built-ins, ``agent`` seats as local processes, ``http://``
   players reachable from it), against an in-memory record; it returns that record.
   The driver fixes the match id (tournament and index), so a match is the same
   record wherever and however often it runs, and gives each match to the host with
   the fewest running. At most ``concurrency`` matches are in flight over the whole
   cluster (1,000 at once is a matter of ``--concurrency 1000``: a host's matches
   share one process, not one process each).
3. As matches finish, the driver writes their records into its one SQLite database
   (:meth:`Records.import_match`: keyed by match id, a record that is there already is
   not written again) and advances the progress bar.
4. A node lost mid-match: its hosts' calls fail (the actor died or is unavailable);
   the driver drops those hosts and runs each of their matches again on another
   host (up to ``max_retries`` times); the rerun replays the match from its seed and
   only the one record that comes back is written. A small ledger actor counts each
   match's starts, so the result says how many matches ran again, and knows where
   each last ran, so an error names the node. Hosts and ledger are killed when the
   tournament ends, however it ends (Ctrl-C too): nothing is left on the cluster.
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gdl.formats import MAX_GAME_BYTES, detect_format, load_game_text
from server.app import MatchServer
from server.match import PLAYCLOCK, STARTCLOCK, MatchOptions, MatchOutcome
from server.players.spec import parse_spec
from server.records import Records
from server.tournament import Pairing, TournamentResult, plan_tournament, run_planned
from solvers.errors import GameError
from solvers.files import read_text
from solvers.playable import PlayableGame
from solvers.ray_cluster import connect, node_label, ray_module

#: times the driver runs a match again after its host (node or process) was lost
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
    hosts: int = 0  # match hosts live at the end
    most_at_once: int = 0  # the most matches in flight on the cluster at once
    busiest_host: int = 0  # the most matches one host ran at once


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
                     options: MatchOptions, http_allow: list[str]) -> dict[str, Any]:
    records = Records(":memory:")
    try:
        async with _NodeServer(records, port=0, http_allow=http_allow) as server:
            server.match_id = match_id
            await server.run_match(game, specs, options)
        return records.get_match(match_id)
    finally:
        records.close()


class MatchHost:
    """A node's match host (step 2 of the module docstring): an async Ray actor pinned
    to its node that plays many matches at once in its event loop, one
    :func:`_run_match` coroutine each; it says where and how many."""

    def __init__(self) -> None:
        self.running = 0
        self.peak = 0

    def node(self) -> str:
        return node_label()

    async def play(self, source: GameSource, specs: list[str], match_id: str,
                   options: MatchOptions, http_allow: list[str], ledger: Any
                   ) -> dict[str, Any]:
        ray = ray_module()
        node = node_label()
        # waited for: a start the ledger never heard of would hide a rerun; while a node
        # is being lost the ledger may be briefly unavailable (Ray then says so)
        for attempt in range(LEDGER_ATTEMPTS):
            try:
                await ledger.started.remote(match_id, node)
                break
            except ray.exceptions.ActorUnavailableError:
                if attempt == LEDGER_ATTEMPTS - 1:
                    raise
                await asyncio.sleep(0.5)
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            record = await _run_match(_loaded(source), specs, match_id, options, http_allow)
        except GameError as exc:
            raise GameError(f"match {match_id} on node {node}: {exc}") from None
        finally:
            self.running -= 1
        record["node"] = node
        return record

    def busiest(self) -> int:
        """The most matches this host ever ran at once."""
        return self.peak

    def playing(self) -> int:
        """The matches running here now, each started in the ledger's count."""
        return self.running


LEDGER_ATTEMPTS = 20  # half a second apart
MAX_HOST_MATCHES = 10_000  # matches one host may run at once (its actor's concurrency)


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


@dataclass
class _Host:
    actor: Any
    node: str
    running: int = 0


class Hosts:
    """The driver's match hosts: one per CPU of every live node (at least one a node),
    each pinned to its node; a match goes to the host with the fewest running (the
    first of them in turn), and a host whose node is lost is dropped."""

    def __init__(self, ray: Any, prefix: str) -> None:
        self.ray = ray
        actor = ray.remote(MatchHost)
        self.hosts: list[_Host] = []
        for node in ray.nodes():
            if not node.get("Alive"):
                continue
            cpus = int(node.get("Resources", {}).get("CPU", 0))
            where = ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy(
                node["NodeID"], soft=False)
            for k in range(max(1, cpus)):
                handle = actor.options(
                    name=f"{prefix}-{node['NodeID'][:12]}-{k}", num_cpus=1 if cpus else 0,
                    max_concurrency=MAX_HOST_MATCHES, scheduling_strategy=where).remote()
                self.hosts.append(_Host(handle, f"{node.get('NodeManagerAddress')} "
                                                f"(node {node['NodeID'][:12]})"))
        self.turn = 0

    async def ready(self) -> None:
        await asyncio.gather(*(h.actor.node.remote() for h in self.hosts))

    def pick(self) -> _Host:
        if not self.hosts:
            raise GameError("every match host's node was lost")
        fewest = min(h.running for h in self.hosts)
        order = self.hosts[self.turn:] + self.hosts[:self.turn]
        host = next(h for h in order if h.running == fewest)
        self.turn = (self.hosts.index(host) + 1) % len(self.hosts)
        return host

    def lost(self, host: _Host) -> None:
        if host in self.hosts:
            self.hosts.remove(host)
            self.turn = 0
            with contextlib.suppress(Exception):
                self.ray.kill(host.actor)

    async def peak(self) -> int:
        """The most matches one host ran at once, over the live hosts."""
        peaks = await asyncio.gather(*(h.actor.busiest.remote() for h in self.hosts),
                                     return_exceptions=True)
        return max((p for p in peaks if isinstance(p, int)), default=0)

    def close(self) -> None:
        for host in self.hosts:
            with contextlib.suppress(Exception):
                self.ray.kill(host.actor)


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
                             startclock: float = STARTCLOCK, playclock: float = PLAYCLOCK,
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
    # on the driver's node: the ledger must outlive the loss of any worker node
    here = ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy(
        ray.get_runtime_context().get_node_id(), soft=False)
    ledger = ray.remote(num_cpus=0)(Ledger).options(
        name=f"ggp-ledger-{plan.id}", scheduling_strategy=here).remote()
    hosts = Hosts(ray, f"ggp-host-{plan.id}")
    gate = asyncio.Semaphore(concurrency)
    running = [0, 0]  # matches in flight now, and the most at once

    async def on_host(match_id: str, args: tuple) -> dict[str, Any]:
        """The match's record from a live host; a host lost with it in flight (its node
        or process gone) is dropped and the match runs again on another."""
        for attempt in range(max_retries + 1):
            host = hosts.pick()
            host.running += 1
            try:
                return await host.actor.play.remote(*args)
            except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError) as exc:
                hosts.lost(host)
                if attempt == max_retries or not hosts.hosts:
                    raise GameError(f"match {match_id}: its host on {host.node} was lost "
                                    f"({type(exc).__name__}) and {attempt} reruns failed "
                                    "too") from None
            finally:
                host.running -= 1
        raise AssertionError("unreachable")

    async def play(index: int, pairing: Pairing) -> MatchOutcome:
        match_id = _match_id(pairing.game, plan.id, index)
        async with gate:
            running[0] += 1
            running[1] = max(running)
            try:
                record = await on_host(match_id, (
                    source_of[id(pairing.game)], [plan.entrants[e] for e in pairing.entrants],
                    match_id, plan.match_options(pairing), list(http_allow), ledger))
            except ray.exceptions.RayError as exc:
                raise await _failure(ledger, match_id, exc) from None
            finally:
                running[0] -= 1
        await records.import_match(record)
        outcome = MatchOutcome(record["id"], record["status"], record["payoffs"],
                               record["reason"])
        if on_match is not None:
            on_match(outcome)
        return outcome

    try:
        await hosts.ready()
        result = await run_planned(records, plan, play)
        retried, nodes = await ledger.summary.remote()
        busiest = await hosts.peak()
    finally:
        hosts.close()
        with contextlib.suppress(Exception):
            ray.kill(ledger)
    return RayTournamentResult(**vars(result), retried=retried, nodes=nodes,
                               hosts=len(hosts.hosts), most_at_once=running[1],
                               busiest_host=busiest)


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
    print(f"ray: {len(result.outcomes)} matches on {result.nodes} nodes, at most "
          f"{result.most_at_once} at once, {result.retried} run again after a lost node or "
          "host", file=sys.stderr)
    return result
