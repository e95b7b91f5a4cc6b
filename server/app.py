"""The match server: websocket agents in, matches out (the I/O layer over ``protocol.py``).

One :class:`MatchServer` owns the websocket listener (``websockets`` asyncio API), the
lobby of logged-in agents, the running matches (one asyncio task each) and the
records. Each socket runs :meth:`MatchServer._serve_socket`: log in with ``hello`` /
``rejoin`` within a time limit, then read messages one by one; every bad message is
answered with an ``error`` and the socket, the server and the other matches go on.

Limits against floods: at most ``max_connections`` sockets, and ``max_per_address`` of
one client address; the whole login (what it reads and what it sends) within
``login_timeout``; frames of at most ``LOGIN_FRAME_LIMIT`` bytes before a login (and on
spectator sockets, which never log in), ``FRAME_LIMIT`` after it, and ``max_message_bytes``
per message; a few frames buffered per socket. A login must present the name's secret,
and a name new to the server needs the operator's consent (``identities.py``); control
messages need the operator's token, and ``create`` is bounded in running matches,
launched agents and the hosts ``http://`` players may name. Wrong secrets and tokens
lock their address out for a while (``guard.py``). Websocket upgrades from other sites'
pages are refused (``web/http.py``). The slow work (pages, records reads, secret
hashes, game files) runs on threads, never on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import logging
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from gdl.formats import MAX_GAME_BYTES, detect_format, load_game_text
from server import protocol
from server.connections import Connection, Lobby
from server.credentials import is_admin_token, new_token
from server.engine import PoolEngine
from server.guard import Guard, peer_address
from server.identities import Identities
from server.match import GRACE, PLAYCLOCK, STARTCLOCK, Match, MatchOptions, MatchOutcome
from server.players.factory import make_player
from server.players.http import LOOPBACK, HttpAllowList
from server.players.launched import LaunchedAgent
from server.players.spec import parse_spec
from server.players.websocket import WsSeat
from server.protocol import ProtocolError
from server.records import Records
from server.spectators import MAX_SPECTATORS, Spectators
from server.web.http import LOOPBACK_NAMES, WebPages, is_upgrade, upgrade_refusal
from solvers.errors import GameError
from solvers.playable import PlayableGame

log = logging.getLogger(__name__)

FRAME_LIMIT = 4 << 20  # the websocket library closes (1009) above this; we answer below it
LOGIN_FRAME_LIMIT = 64 << 10  # ... before a login, and on spectator sockets
FRAME_QUEUE = (4, 1)  # frames buffered per socket before it is read no further (high, low)
RECENT_MATCHES = 1024  # finished matches kept in memory so a late rejoin learns the end
MAX_BAD_LOGINS = 3  # wrong secrets or tokens before a socket that is not logged in is closed
PAGE_THREADS = 2  # the threads that read the records and make pages
HANG_UP = 2.0  # seconds a closing socket may take to read the close frame
Registration = Literal["closed", "seats", "open"]
# (closed: a new name needs the admin token, or the operator's --agents file; seats: also
# a name a ws: seat is waiting for, as on the embedded servers of match and tournament;
# open: any first hello registers its name)
BAD_LOGINS = ("bad-secret", "bad-token", "not-registered", "locked-out")  # (per socket)
REFUSALS = {"bad-secret": "logins", "bad-token": "rejoin tokens",
            "not-registered": "logins of names not registered", "not-allowed": "admin tokens"}


class MatchServer:
    """A websocket match server (see the module docstring)."""

    def __init__(self, records: Records, *, host: str = "127.0.0.1", port: int = 9147,
                 game_dirs: Sequence[str | Path] = (), max_connections: int = 1024,
                 max_message_bytes: int = protocol.MAX_MESSAGE_BYTES,
                 login_timeout: float = 10.0, heartbeat: float = 15.0,
                 seat_wait: float = 30.0, admin_token: str | None = None,
                 grace: float = GRACE, max_running: int = 64, max_agents: int = 8,
                 http_allow: Sequence[str] = LOOPBACK,
                 agents: dict[str, str] | None = None,
                 max_spectators: int = MAX_SPECTATORS,
                 public_spectators: bool = False, workers: int = 0,
                 registration: Registration = "closed", max_per_address: int = 64,
                 seat_names: Collection[str] = ()) -> None:
        self.records = records
        # 0: games are computed on the event loop; N: in N worker processes (server/engine.py)
        self.engine = PoolEngine(workers) if workers else None
        self.host = host
        self.port = port
        self.game_dirs = [Path(d) for d in game_dirs]
        self.max_connections = max_connections
        self.max_message_bytes = max_message_bytes
        self.login_timeout = login_timeout
        self.heartbeat = heartbeat
        self.seat_wait = seat_wait
        # the operator's secret: control messages need it; an embedded server makes its
        # own and never tells it (its command calls the methods directly)
        self.admin_token = admin_token or new_token()
        self.max_running = max_running
        self.max_agents = max_agents
        self.http_allow = HttpAllowList(http_allow)
        self.grace = grace
        self.lobby = Lobby()
        self.sockets = 0
        self.matches: dict[str, Match] = {}
        self.tasks: dict[str, asyncio.Task[MatchOutcome]] = {}
        self.finished: OrderedDict[str, MatchOutcome] = OrderedDict()
        self._finished_seats: dict[str, set[str]] = {}  # the ws seats' names, for rejoins
        self.registration = registration
        # the names its command's ws: seats will wait for (registration "seats"): they may
        # register from the first hello, before their match starts and claims them (a
        # tournament's later matches, or a loaded machine's first, start after the agents
        # were told where to log in)
        self.seat_names = frozenset(seat_names)
        self.guard = Guard(max_per_address)
        self.identities = Identities(records)
        self.pages = ThreadPoolExecutor(PAGE_THREADS, thread_name_prefix="pages")
        self.spectators = Spectators(records, max_spectators=max_spectators,
                                     admin_token=self.admin_token, public=public_spectators,
                                     pool=self.pages, guard=self.guard,
                                     idle_timeout=login_timeout)
        self.loopback_only = host.lower() in LOOPBACK_NAMES
        self.web = WebPages(self.spectators, self.loopback_only)
        self.agents = dict(agents or {})  # names the operator registers: name -> secret
        self._server: Server | None = None
        self._ids = itertools.count(1)
        self._background: set[asyncio.Task[Any]] = set()

    # --- lifecycle ---

    async def start(self) -> None:
        await self.identities.register(self.agents)
        if self.engine is not None:
            await self.engine.start()
        try:
            self._server = await serve(self._serve_socket, self.host, self.port,
                                       max_size=FRAME_LIMIT, ping_interval=20,
                                       ping_timeout=20, max_queue=FRAME_QUEUE,
                                       compression=None, process_request=self._process_request)
        except OSError as exc:
            raise GameError(f"cannot listen on {self.host}:{self.port}: "
                            f"{exc.strerror or exc}") from None
        self.port = self._server.sockets[0].getsockname()[1]  # port 0 -> the chosen one
        # what is alive now (modules, games, tables) lives as long as the server: out of
        # the collector's sight, a full collection that a page thread sets off no longer
        # holds the interpreter lock ~70 ms over it (a stall of the loop, 0.5 s when the
        # machine is loaded); unfrozen at close, so no garbage is kept past the server
        gc.freeze()

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}/"

    @property
    def http_url(self) -> str:
        """Where the web pages are (``server/web``): the same host and port."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    async def close(self, reason: str = "server shutdown") -> None:
        """Abort the running matches (recorded), then stop listening."""
        await asyncio.gather(*(self.abort(mid, reason) for mid in list(self.tasks)),
                             return_exceptions=True)
        for task in list(self._background):
            task.cancel()
        await self.spectators.close()
        if self.engine is not None:
            await self.engine.close()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        self.identities.close()
        self.pages.shutdown(wait=False, cancel_futures=True)
        gc.unfreeze()

    async def __aenter__(self) -> MatchServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- matches ---

    def new_match_id(self, game: PlayableGame) -> str:
        # the id must match the protocol's match id pattern whatever the game is called
        stem = re.sub(r"[^A-Za-z0-9_@-]", "_", game.name)[:64] or "game"
        return f"{stem}.{int(time.time() * 1000)}.{next(self._ids)}.{secrets.token_hex(2)}"

    def start_match(self, game: PlayableGame, player_specs: Sequence[str],
                    options: MatchOptions) -> Match:
        """Seat the players (specs) and start the match as a task of this server."""
        specs = [parse_spec(s) for s in player_specs]
        for spec in specs:
            self.http_allow.check(spec)  # before any connection is tried
        if len(specs) != len(game.roles):
            raise GameError(f"{game.name} has {len(game.roles)} roles "
                            f"({', '.join(game.roles)}); got {len(specs)} players")
        options = options.seeded()
        players = [make_player(s, self) for s in specs]
        match = Match(self.new_match_id(game), game, players, player_specs, self.records,
                      options, grace=self.grace, engine=self.engine)
        match.listener = self.spectators
        self.matches[match.id] = match
        task = asyncio.create_task(self._run(match), name=f"match {match.id}")
        self.tasks[match.id] = task
        return match

    async def _run(self, match: Match) -> MatchOutcome:
        log.info("match %s started: %s, %s", match.id, match.game.name, " vs ".join(match.specs))
        try:
            return await match.run()
        finally:
            outcome = match.outcome
            log.info("match %s %s%s", match.id, outcome.status, ": " + " ".join(
                f"{r}={p:g}" for r, p in zip(match.game.roles, outcome.payoffs, strict=True))
                if outcome.payoffs is not None else f" ({outcome.reason})")
            self.matches.pop(match.id, None)
            self.tasks.pop(match.id, None)
            self.finished[match.id] = match.outcome
            self._finished_seats[match.id] = {p.name for p in match.players
                                              if isinstance(p, WsSeat)}
            while len(self.finished) > RECENT_MATCHES:
                old, _ = self.finished.popitem(last=False)
                self._finished_seats.pop(old, None)

    async def run_match(self, game: PlayableGame, player_specs: Sequence[str],
                        options: MatchOptions) -> MatchOutcome:
        """:meth:`start_match`, then wait for its end."""
        match = self.start_match(game, player_specs, options)
        return await self.tasks[match.id]

    def create_match(self, game: PlayableGame, player_specs: Sequence[str], *,
                     startclock: float = STARTCLOCK, playclock: float = PLAYCLOCK,
                     seed: int | None = None, tournament: str | None = None) -> Match:
        """:meth:`start_match` with the options as keywords."""
        return self.start_match(game, player_specs,
                                MatchOptions(startclock, playclock, seed, tournament))

    async def play_match(self, game: PlayableGame, player_specs: Sequence[str], *,
                         startclock: float = STARTCLOCK, playclock: float = PLAYCLOCK,
                         seed: int | None = None, tournament: str | None = None
                         ) -> MatchOutcome:
        """:meth:`run_match` with the options as keywords."""
        return await self.run_match(game, player_specs,
                                    MatchOptions(startclock, playclock, seed, tournament))

    async def abort(self, match_id: str, reason: str = "aborted by the operator") -> bool:
        match, task = self.matches.get(match_id), self.tasks.get(match_id)
        if match is None or task is None:
            return False
        match.abort_reason = reason
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return True

    def load_game(self, name: str) -> PlayableGame:
        """A game file named relative to one of the game folders (never outside them).

        Whatever is wrong with a name outside the folders (absent, present, a link out),
        the answer is the same and names no server path; errors in a game's text name
        the file as the client named it."""
        if not self.game_dirs:
            raise GameError("this server has no game folders (start it with --games DIR)")
        for folder in self.game_dirs:
            root = folder.resolve()
            try:
                path = (root / name).resolve()
                if not (path.is_relative_to(root) and path.is_file()):
                    continue
                if path.stat().st_size > MAX_GAME_BYTES:
                    raise GameError(f"{name}: game file larger than {MAX_GAME_BYTES} bytes")
                text = path.read_text(encoding="utf-8", errors="replace")
            except (OSError, ValueError):  # unreadable, a NUL in the name, a loop of links
                continue
            return load_game_text(detect_format(path, text), text, name=path.stem,
                                  filename=name)
        raise GameError(f"no game {protocol.echo(name)!r} in the game folders")

    # --- sockets ---

    async def _process_request(self, connection: ServerConnection,
                               request: Request) -> Response | None:
        """A websocket upgrade goes on to the handshake (unless a page of another site
        asks for it), with the frame limit of a socket not logged in; any other request
        is a page."""
        if not is_upgrade(request):
            return await self.web.process_request(peer_address(connection.remote_address),
                                                  request)
        refused = upgrade_refusal(request, self.loopback_only)
        if refused is None:
            connection.protocol.max_message_size = LOGIN_FRAME_LIMIT
        return refused

    async def _serve_socket(self, ws: ServerConnection) -> None:
        address = peer_address(ws.remote_address)
        full = self.sockets >= self.max_connections
        if full or not self.guard.sockets.add(address):
            await hang_up(ws, 1013, "server full", protocol.error(
                "server-full", f"at most {self.max_connections} connections" if full
                else f"at most {self.guard.sockets.per_address} connections from one address"))
            return
        self.sockets += 1
        conn: Connection | None = None
        try:
            login = await self._login(ws, address)
            if isinstance(login, dict):  # a spectator: never logs in
                log.info("spectator from %s watches %s", _peer(ws), login["match"])
                await self.spectators.serve(ws, login, self._control, self.max_message_bytes)
                return
            if login is None:
                return
            conn = login
            ws.protocol.max_message_size = FRAME_LIMIT
            heartbeat = asyncio.create_task(self._heartbeat(conn))
            try:
                async for data in ws:
                    try:
                        await self._handle(conn, data)
                    except ConnectionClosed:
                        raise
                    except Exception:  # a bug must cost one message, not the connection
                        log.exception("message from %s", conn.name)
                        await conn.send(protocol.error("internal", "the server failed on "
                                                       "this message"))
            finally:
                heartbeat.cancel()
        except ConnectionClosed:
            pass
        finally:
            self.sockets -= 1
            self.guard.sockets.remove(address)
            if conn is not None:
                await self._disconnect(conn)

    async def _login(self, ws: ServerConnection,
                     address: str) -> Connection | dict[str, Any] | None:
        """Read messages until a valid hello/rejoin (the connection), or a ``watch``
        (the message: a spectator), all within the login deadline, what is sent
        included; None when the socket is closed. A socket that fails ``MAX_BAD_LOGINS``
        secrets is closed: guessing costs a new socket (and, soon, a wait: guard.py)."""
        failures = 0
        try:
            async with asyncio.timeout(self.login_timeout):
                while True:
                    data = await ws.recv()
                    try:
                        login = await self._login_message(ws, address, data)
                        if login is not None:
                            return login
                    except ProtocolError as exc:
                        await ws.send(protocol.encode(exc.to_message()))
                        failures += exc.code in BAD_LOGINS
                        if failures >= MAX_BAD_LOGINS:
                            break
        except TimeoutError:
            await hang_up(ws, 1008, "no hello in time")
            return None
        await hang_up(ws, 1008, "too many bad secrets")
        return None

    async def _login_message(self, ws: ServerConnection, address: str,
                             data: str | bytes) -> Connection | dict[str, Any] | None:
        """One message before a login: the connection once logged in, the message when it
        is a spectator's ``watch``, else None."""
        message = protocol.parse_message(data, self.max_message_bytes)
        kind = message["type"]
        if kind == "hello":
            self.guard.check_locked(address, "hello")
            try:
                await self.identities.check(message["name"], message["token"],
                                            self._may_register(message))
            except ProtocolError as exc:
                self.guard.failures.fail(address, REFUSALS.get(exc.code, exc.code))
                raise
            conn = Connection(ws, message["name"], message["token"],
                              message.get("max_matches", 1))
            self.lobby.add(conn)
            log.info("agent %s logged in from %s", conn.name, _peer(ws))
            await conn.send(protocol.welcome(conn.name, self.heartbeat))
            await self.lobby.released()
            return conn
        if kind == "rejoin":
            conn = await self._rejoin(None, ws, message)
            if conn is not None:
                log.info("agent %s rejoined %s from %s", conn.name, message["match"],
                         _peer(ws))
            return conn
        if kind == "ping":
            await ws.send(protocol.encode(protocol.pong(message.get("nonce"))))
            return None
        if kind in ("create", "abort", "list"):
            await self._control(ws, message)
            return None
        if kind in ("watch", "unwatch"):
            return message
        raise ProtocolError("not-logged-in", "say hello (or rejoin) first", ref=kind)

    def _may_register(self, hello: dict[str, Any]) -> bool:
        """Whether this hello may register its name if the name is new (the module
        docstring of ``identities.py``); a wrong admin token is refused."""
        given = hello.get("admin_token")
        if given is not None:
            if not is_admin_token(given, self.admin_token):
                raise ProtocolError("not-allowed", "wrong admin token", ref="hello")
            return True
        return self.registration == "open" or (
            self.registration == "seats" and (hello["name"] in self.lobby.waiting
                                               or hello["name"] in self.seat_names))

    async def _handle(self, conn: Connection, data: str | bytes) -> None:
        try:
            message = protocol.parse_message(data, self.max_message_bytes)
            kind = message["type"]
            if kind == "move":
                self._move(conn, message)
            elif kind == "ready":
                self._seat_of(conn, message["match"]).ready.set()
            elif kind == "ping":
                await conn.send(protocol.pong(message.get("nonce")))
            elif kind == "pong":
                pass
            elif kind == "rejoin":
                await self._rejoin(conn, conn.ws, message)
            elif kind == "hello":
                raise ProtocolError("already-logged-in", "this connection is logged in")
            elif kind in ("watch", "unwatch"):
                raise ProtocolError("spectator", "watch from a connection that is not "
                                    "logged in (spectators never log in)", ref=kind)
            else:
                await self._control(conn.ws, message)
        except ProtocolError as exc:
            await conn.send(exc.to_message())

    def _seat_of(self, conn: Connection, match_id: str, role: str | None = None) -> WsSeat:
        match = self.matches.get(match_id)
        if match is None:
            raise ProtocolError("unknown-match", f"no running match {match_id!r}", match_id)
        seats = [p for p in match.players if isinstance(p, WsSeat) and p.conn is conn]
        if not seats:
            raise ProtocolError("not-seated", f"you hold no seat in {match_id}", match_id)
        if role is not None:
            seats = [s for s in seats if s.seat is not None and s.seat.role_name == role]
            if not seats:
                raise ProtocolError("wrong-role", f"you do not play {role!r} in {match_id}",
                                    match_id)
        return seats[0]

    def _move(self, conn: Connection, message: dict[str, Any]) -> None:
        seat = self._seat_of(conn, message["match"], message.get("role"))
        if not seat.receive_move(message["step"], message["move"]):
            raise ProtocolError("wrong-step", f"no request open for step {message['step']} "
                                f"in {message['match']}", message["match"], "move")

    async def _rejoin(self, conn: Connection | None, ws: ServerConnection,
                      message: dict[str, Any]) -> Connection | None:
        """Take back the seats ``token`` holds in a match (the token is the seat's name's
        secret, so before ``hello`` it logs the connection in under that name, taking over
        from a live connection of that name); a finished match answers its end."""
        match_id, token = message["match"], message["token"]
        address = peer_address(ws.remote_address)
        self.guard.check_locked(address, "rejoin", match_id)
        match = self.matches.get(match_id)
        if match is not None:
            holders = [(p.name, p) for p in match.players if isinstance(p, WsSeat)]
        elif match_id in self.finished:
            holders = [(name, None) for name in self._finished_seats.get(match_id, ())]
        else:
            raise ProtocolError("unknown-match", f"no match {match_id!r}", match_id)
        owners = {name for name, _ in holders if self.identities.holds(name, token)}
        if conn is not None:
            owners &= {conn.name}
        if not owners:
            self.guard.failures.fail(address, REFUSALS["bad-token"])
            raise ProtocolError("bad-token", f"that token holds no seat in {match_id}",
                                match_id, "rejoin")
        if conn is None:
            name = message.get("name")
            conn = Connection(ws, name if name in owners else min(owners), token, 1)
            previous = self.lobby.take_over(conn)
            if previous is not None:
                self._evict(previous)
            await conn.send(protocol.welcome(conn.name, self.heartbeat))
        if match is None:
            outcome = self.finished[match_id]
            await conn.send(protocol.end_summary(match_id, outcome.payoffs)
                            if outcome.status == "completed"
                            else protocol.abort(match_id, outcome.reason or ""))
        else:
            for name, seat in holders:
                if name == conn.name and seat is not None:
                    await seat.rejoin(conn)
        await self.lobby.released()
        return conn

    def _evict(self, previous: Connection) -> None:
        """A rejoin took over: tell the connection it replaced, then close it."""
        async def close() -> None:
            await previous.send(protocol.error(
                "taken-over", f"a new connection rejoined as {previous.name!r} with its "
                "secret; this one is closed"))
            previous.closed = True
            await previous.ws.close(1008, "taken over by a rejoin")

        task = asyncio.create_task(close())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _disconnect(self, conn: Connection) -> None:
        log.info("agent %s disconnected", conn.name)
        conn.closed = True
        await self.lobby.remove(conn)
        for seat in list(conn.seats):
            seat.disconnected(conn)

    async def _heartbeat(self, conn: Connection) -> None:
        for n in itertools.count(1):
            await asyncio.sleep(self.heartbeat)
            if not await conn.send(protocol.ping(n)):
                return

    # --- control messages (operators) ---

    async def _control(self, ws: ServerConnection, message: dict[str, Any]) -> None:
        given = message.get("admin_token", "")
        address = peer_address(ws.remote_address)
        self.guard.check_locked(address, message["type"])
        if not is_admin_token(given, self.admin_token):
            self.guard.failures.fail(address, REFUSALS["not-allowed"])
            raise ProtocolError("not-allowed", "control messages need the admin token "
                                "(\"admin_token\")", ref=message["type"])
        kind = message["type"]
        if kind == "list":
            rows = [{"match": m.id, "game": m.game.name, "status": "running",
                     "players": m.specs, "step": m.step} for m in self.matches.values()]
            await ws.send(protocol.encode(protocol.matches(rows)))
        elif kind == "abort":
            if not await self.abort(message["match"]):
                raise ProtocolError("unknown-match", f"no running match {message['match']!r}",
                                    message["match"])
            await ws.send(protocol.encode(protocol.aborted(message["match"])))
        elif kind == "create":
            try:
                game = await asyncio.to_thread(self.load_game, message["game"])
                self._check_limits(message["players"])
                match = self.start_match(game, message["players"], MatchOptions(
                    message.get("startclock", STARTCLOCK), message.get("playclock", PLAYCLOCK),
                    message.get("seed")))
            except ProtocolError:
                raise
            except GameError as exc:
                raise ProtocolError("bad-game", str(exc), ref="create") from None
            await ws.send(protocol.encode(protocol.created(match.id, list(game.roles))))
            task = asyncio.create_task(self._report_finish(ws, match.id))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    def _check_limits(self, player_specs: list[str]) -> None:
        """What ``create`` messages may start: running matches, launched agent processes."""
        if len(self.matches) >= self.max_running:
            raise ProtocolError("too-many", f"{len(self.matches)} matches are running (at most "
                                f"{self.max_running}); try again later", ref="create")
        launching = sum(1 for s in player_specs if parse_spec(s).kind == "agent")
        # the seats of running matches: launched, or about to be
        running = sum(1 for m in self.matches.values() for p in m.players
                      if isinstance(p, LaunchedAgent))
        if launching and running + launching > self.max_agents:
            raise ProtocolError("too-many", f"{running} launched agents are running, at most "
                                f"{self.max_agents}; try again later", ref="create")

    async def _report_finish(self, ws: ServerConnection, match_id: str) -> None:
        task = self.tasks.get(match_id)
        if task is None:
            return
        outcome = await asyncio.shield(task)
        with contextlib.suppress(ConnectionClosed):
            await ws.send(protocol.encode(protocol.finished(match_id, outcome.status,
                                                            outcome.payoffs)))


async def hang_up(ws: ServerConnection, code: int, reason: str,
                  last: dict[str, Any] | None = None) -> None:
    """Send ``last`` (if any) and close, waiting at most ``HANG_UP`` seconds for a client
    that does not read, then drop the connection."""
    try:
        async with asyncio.timeout(HANG_UP):
            if last is not None:
                await ws.send(protocol.encode(last))
            await ws.close(code, reason)
    except TimeoutError:
        ws.transport.abort()
    except ConnectionClosed:
        pass


def _peer(ws: ServerConnection) -> str:
    """host:port of a socket's other end (for the log)."""
    address = ws.remote_address
    return f"{address[0]}:{address[1]}" if isinstance(address, tuple) else "?"
