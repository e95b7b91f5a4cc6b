"""The GGP HTTP player: a small asyncio server around :mod:`agent.ggp_http`.

One connection carries one request (HTTP/1.0, as ggp-base's GameServer sends them).
:class:`GgpPlayer` maps messages to the :class:`~agent.gamer.Gamer` and keeps the
match bookkeeping: one match at a time, ``busy`` for any other match id, deadlines
taken from the moment the request arrived minus the safety margin, clocks bounded by
``max_clock``. A match whose manager went silent expires ``expiry_grace`` seconds
after its last deadline (so a forgotten START does not keep the agent busy), and
ABORT, STOP or expiry cancel the search in flight.
Nothing a peer sends can stop the server: malformed HTTP gets ``400`` with the
reason, a malformed message gets ``400`` too, an invalid game in START gets
``error: ...``; each is logged.
"""

from __future__ import annotations

import asyncio
import logging
import time

from agent.brains.options import GameSpec
from agent.gamer import DEFAULT_MARGIN, DEFAULT_MAX_CLOCK, Gamer, answer_deadline, bounded_clock
from agent.ggp_http import (
    Abort,
    HttpError,
    Info,
    Message,
    Play,
    Preview,
    RequestReader,
    Start,
    Stop,
    http_reply,
    info_reply,
    message_text,
    parse_message,
)
from solvers.errors import FormatError, GameError

log = logging.getLogger("agent.http")

READ_TIMEOUT = 30.0  # a peer that stops sending mid-request is dropped
# A peer that sends a byte now and then is dropped too: the whole request has this long
# (10 peers each trickling a 60 MB body would otherwise hold 600 MB for ever).
REQUEST_TIMEOUT = 60.0
MAX_CONNECTIONS = 32  # requests read at once; beyond, a new connection gets 503 at once
LOOPBACK = frozenset({"127.0.0.1", "::1"})  # the managers whose START is accepted by default
# A manager sends the next message about when our last deadline passes (it waits for
# every player, up to its clock + 1 s); silent this long after it, it has gone away.
EXPIRY_GRACE = 60.0


class GgpPlayer:
    """Answers GGP messages for one gamer; ``margin`` seconds are kept off every clock."""

    def __init__(self, name: str, gamer: Gamer, margin: float = DEFAULT_MARGIN,
                 max_clock: float = DEFAULT_MAX_CLOCK,
                 expiry_grace: float = EXPIRY_GRACE,
                 managers: frozenset[str] = LOOPBACK) -> None:
        """``managers``: the addresses whose START is accepted (``--managers``)."""
        self.name = name
        self.managers = managers
        self.connections = 0  # requests being read or answered
        self.gamer = gamer
        self.margin = margin
        self.max_clock = max_clock
        self.expiry_grace = expiry_grace
        self.match_id: str | None = None
        self.playclock = 0.0
        self.results: dict[str, list[int] | None] = {}  # match id -> our goals
        self._expiry: asyncio.TimerHandle | None = None
        self._ending: set[asyncio.Task] = set()  # expiries under way

    def _deadline(self, received: float, clock: float) -> float:
        """Our answer time; also (re)arms the match's expiry after the manager's deadline."""
        clock = bounded_clock(clock, self.max_clock)
        if self._expiry is not None:
            self._expiry.cancel()
        expires = received + clock + self.expiry_grace - time.monotonic()
        self._expiry = asyncio.get_running_loop().call_later(
            max(0.0, expires), self._expire, self.match_id)
        return answer_deadline(received, clock, self.margin, self.max_clock)

    def _expire(self, match_id: str | None) -> None:
        if match_id is None or match_id != self.match_id:
            return
        log.warning("match %s expired: no message for %.0f s after its last deadline",
                    match_id, self.expiry_grace)
        self.match_id = None
        task = asyncio.ensure_future(self.gamer.abort(self.gamer.match_number))
        self._ending.add(task)
        task.add_done_callback(self._ending.discard)

    def _ended(self) -> None:
        self.match_id = None
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None

    def accepts_start_from(self, peer: str | None) -> bool:
        """Whether a START from address ``peer`` is accepted (an IPv4 address seen
        through an IPv6 socket counts as itself)."""
        if peer is None:
            return False
        return peer.removeprefix("::ffff:") in self.managers or peer in self.managers

    async def respond(self, message: Message, received: float) -> str:
        if isinstance(message, Info):
            return info_reply(self.name, busy=self.match_id is not None)
        if isinstance(message, Preview):
            return "ready"
        if isinstance(message, Start):
            return await self._start(message, received)
        if message.match_id != self.match_id:
            return "busy"
        if isinstance(message, Play):
            return await self.gamer.play(message.moves, self._deadline(received, self.playclock))
        if isinstance(message, Stop):
            deadline = self._deadline(received, self.playclock)
            self._ended()
            self.results[message.match_id] = await self.gamer.stop(message.moves, deadline)
            return "done"
        assert isinstance(message, Abort)
        self._ended()
        await self.gamer.abort()
        return "aborted"

    async def _start(self, message: Start, received: float) -> str:
        if self.match_id is not None:
            return "ready" if message.match_id == self.match_id else "busy"
        for what, clock in (("start", message.startclock), ("play", message.playclock)):
            if clock > self.max_clock:
                log.warning("START %s: %s clock %g s bounded to %g s (--max-clock)",
                            message.match_id, what, clock, self.max_clock)
        self.match_id, self.playclock = message.match_id, message.playclock
        spec = GameSpec("gdl", message.rules, message.match_id)
        try:
            await self.gamer.start(spec, message.role,
                                   self._deadline(received, message.startclock))
        except GameError as exc:
            log.error("START %s refused: %s", message.match_id, exc)
            if self.match_id == message.match_id:  # (not a new match since)
                self._ended()
            return f"error: {exc}"
        return "ready"


async def handle_connection(player: GgpPlayer, reader: asyncio.StreamReader,
                            writer: asyncio.StreamWriter) -> None:
    """Read one request, answer it, close."""
    received = time.monotonic()
    if player.connections >= MAX_CONNECTIONS:  # (the cap: item 10 of issue 32)
        log.warning("connection refused: %d requests already open", player.connections)
        await _reply(writer, "error: too many connections", "503 Service Unavailable")
        return
    player.connections += 1
    try:
        status, body = await _answer(player, reader, writer, received)
    except (TimeoutError, ConnectionError):
        writer.close()
        return
    finally:
        player.connections -= 1
    await _reply(writer, body, status)


async def _answer(player: GgpPlayer, reader: asyncio.StreamReader,
                  writer: asyncio.StreamWriter, received: float) -> tuple[str, str]:
    """The status and body of one request's answer; TimeoutError past READ_TIMEOUT
    between reads or REQUEST_TIMEOUT in all."""
    status, body = "200 OK", ""
    try:
        request_reader = RequestReader()
        request = None
        while request is None:
            left = received + REQUEST_TIMEOUT - time.monotonic()
            chunk = await asyncio.wait_for(reader.read(65536), min(READ_TIMEOUT, max(left, 0)))
            request = request_reader.feed(chunk) if chunk else request_reader.at_eof()
        text = message_text(request)
        if text is not None:
            message = parse_message(text)
            peer = writer.get_extra_info("peername")
            if isinstance(message, Start) and not player.accepts_start_from(
                    peer[0] if peer else None):
                log.warning("START from %s refused: not a manager (--managers)", peer)
                return "403 Forbidden", "error: START refused: not one of the agent's managers"
            body = await player.respond(message, received)
    except HttpError as exc:
        log.error("bad HTTP request: %s", exc)
        status, body = "400 Bad Request", f"error: {exc}"
    except FormatError as exc:
        log.error("bad GGP message: %s", exc)
        status, body = "400 Bad Request", f"error: {exc}"
    except Exception as exc:  # a bug must not take the player down
        log.exception("internal error")
        status, body = "500 Internal Server Error", f"error: {type(exc).__name__}: {exc}"
    return status, body


async def _reply(writer: asyncio.StreamWriter, body: str, status: str) -> None:
    try:
        writer.write(http_reply(body, status))
        await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


async def serve(player: GgpPlayer, host: str, port: int) -> asyncio.Server:
    """Start listening; the caller keeps the loop running."""
    server = await asyncio.start_server(
        lambda r, w: handle_connection(player, r, w), host, port)
    await player.gamer.ready()
    return server
