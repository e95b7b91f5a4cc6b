"""The GGP HTTP player: a small asyncio server around :mod:`agent.ggp_http`.

One connection carries one request (HTTP/1.0, as ggp-base's GameServer sends them).
:class:`GgpPlayer` maps messages to the :class:`~agent.gamer.Gamer` and keeps the
match bookkeeping: one match at a time, ``busy`` for any other match id, deadlines
taken from the moment the request arrived minus the safety margin.
Nothing a peer sends can stop the server: malformed HTTP gets ``400`` with the
reason, a malformed message gets ``400`` too, an invalid game in START gets
``error: ...``; each is logged.
"""

from __future__ import annotations

import asyncio
import logging
import time

from agent.gamer import Gamer, answer_deadline
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
from agent.worker import GameSpec
from solvers.errors import FormatError, GameError

log = logging.getLogger("agent.http")

READ_TIMEOUT = 30.0  # a peer that stops sending mid-request is dropped


class GgpPlayer:
    """Answers GGP messages for one gamer; ``margin`` seconds are kept off every clock."""

    def __init__(self, name: str, gamer: Gamer, margin: float = 0.5) -> None:
        self.name = name
        self.gamer = gamer
        self.margin = margin
        self.match_id: str | None = None
        self.play_clock = 0.0
        self.results: dict[str, list[int] | None] = {}  # match id -> our goals

    def _deadline(self, received: float, clock: float) -> float:
        return answer_deadline(received, clock, self.margin)

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
            return await self.gamer.play(message.moves, self._deadline(received, self.play_clock))
        if isinstance(message, Stop):
            self.match_id = None
            self.results[message.match_id] = await self.gamer.stop(
                message.moves, self._deadline(received, self.play_clock))
            return "done"
        assert isinstance(message, Abort)
        self.match_id = None
        self.gamer.abort()
        return "aborted"

    async def _start(self, message: Start, received: float) -> str:
        if self.match_id is not None:
            return "ready" if message.match_id == self.match_id else "busy"
        self.match_id, self.play_clock = message.match_id, message.play_clock
        spec = GameSpec("gdl", message.rules, message.match_id)
        try:
            await self.gamer.start(spec, message.role,
                                   self._deadline(received, message.start_clock))
        except GameError as exc:
            log.error("START %s refused: %s", message.match_id, exc)
            self.match_id = None
            return f"error: {exc}"
        return "ready"


async def handle_connection(player: GgpPlayer, reader: asyncio.StreamReader,
                            writer: asyncio.StreamWriter) -> None:
    """Read one request, answer it, close."""
    received = time.monotonic()
    status, body = "200 OK", ""
    try:
        request_reader = RequestReader()
        request = None
        while request is None:
            chunk = await asyncio.wait_for(reader.read(65536), READ_TIMEOUT)
            request = request_reader.feed(chunk) if chunk else request_reader.at_eof()
        text = message_text(request)
        if text is not None:
            body = await player.respond(parse_message(text), received)
    except HttpError as exc:
        log.error("bad HTTP request: %s", exc)
        status, body = "400 Bad Request", f"error: {exc}"
    except FormatError as exc:
        log.error("bad GGP message: %s", exc)
        status, body = "400 Bad Request", f"error: {exc}"
    except (TimeoutError, ConnectionError):
        writer.close()
        return
    except Exception as exc:  # a bug must not take the player down
        log.exception("internal error")
        status, body = "500 Internal Server Error", f"error: {type(exc).__name__}: {exc}"
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
