"""The websocket client of our match server (protocol: ``server/PROTOCOL.md``, version 1).

1. Connect, send ``hello`` (name, a random token unless given), wait for ``welcome``.
2. ``offer``: build the game from its text and think within the start clock
   (:meth:`Gamer.start`), then send ``ready``.
3. ``request``: answer ``move`` before ``deadline`` minus the safety margin. GDL
   moves come from the gamer's state machine, fed the previous joint move that the
   observation carries; ``.efg``/tree/POSG moves come from the format's solved
   strategy given the observation and the legal moves.
4. ``end`` / ``abort``: the match is over; after ``max_matches`` the client returns.
5. ``ping`` gets ``pong`` at once: offers and requests run as tasks, so the receive
   loop never waits for thinking.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import secrets
import time
from typing import Any

import websockets

from agent.gamer import Gamer, answer_deadline
from agent.worker import GameSpec
from solvers.errors import GameError

log = logging.getLogger("agent.ws")

MAX_MESSAGE_BYTES = 4 * 1024 * 1024  # the server's frame limit


class WsAgent:
    """The protocol state of one connection (sans sockets: ``send`` is injected)."""

    def __init__(self, gamer: Gamer, send, margin: float = 0.5,
                 max_matches: int | None = None) -> None:
        self.gamer = gamer
        self.send = send  # async callable taking a dict
        self.margin = margin
        self.max_matches = max_matches
        self.finished = 0
        self.match: str | None = None
        self.format = "gdl"
        self.results: dict[str, Any] = {}
        self.done = asyncio.Event()
        self.rng = random.Random(gamer.options.seed)

    def _deadline(self, received: float, seconds: float) -> float:
        return answer_deadline(received, seconds, self.margin)

    async def handle(self, message: dict[str, Any], received: float) -> None:
        kind = message.get("type")
        if kind == "ping":
            await self.send({"type": "pong", "nonce": message.get("nonce")})
        elif kind == "offer":
            await self._offer(message, received)
        elif kind == "request":
            await self._request(message, received)
        elif kind == "end":
            await self._end(message, received)
        elif kind == "abort":
            if message.get("match") == self.match:
                self.gamer.abort()
                self._over(message.get("match"), {"status": "aborted"})
        elif kind == "error":
            log.error("server refused %s: %s %s", message.get("ref"), message.get("code"),
                      message.get("message"))
        elif kind not in ("welcome", "step", "pong"):
            log.warning("ignored message type %r", kind)

    async def _offer(self, message: dict[str, Any], received: float) -> None:
        match = message["match"]
        if self.match is not None and self.match != match:
            log.warning("offer of %s while playing %s: ignored", match, self.match)
            return
        game = message["game"]
        self.match, self.format = match, game["format"]
        spec = GameSpec(game["format"], game["text"], game.get("name", "game"))
        try:
            await self.gamer.start(spec, message["role"],
                                   self._deadline(received, message["startclock"]))
        except GameError as exc:
            log.error("cannot play %s: %s", match, exc)
            return
        if message.get("rejoin") and self.format == "gdl":
            log.warning("rejoined %s at step %s: the game state is unknown", match,
                        message.get("step"))
        await self.send({"type": "ready", "match": match})

    async def _request(self, message: dict[str, Any], received: float) -> None:
        if message.get("match") != self.match:
            return
        deadline = self._deadline(received, message["deadline"])
        legal = list(message["legal"])
        observation = message.get("observation")
        if not self.gamer.in_match:  # the game could not be built: any legal move
            move = self.rng.choice(legal)
        elif self.format == "gdl":
            move = await self.gamer.play(_last_moves(observation), deadline, legal=legal)
        else:
            move = await self.gamer.choose(observation, legal, deadline)
        await self.send({"type": "move", "match": self.match, "step": message["step"],
                         "move": move})

    async def _end(self, message: dict[str, Any], received: float) -> None:
        if message.get("match") != self.match:
            return
        if self.format == "gdl" and self.gamer.in_match:
            await self.gamer.stop(_last_moves(message.get("observation")),
                                  self._deadline(received, 1.0))
        else:
            self.gamer.abort()
        self._over(message["match"], {"status": message.get("status"),
                                      "payoff": message.get("payoff")})

    def _over(self, match: str | None, result: dict[str, Any]) -> None:
        log.info("match %s over: %s", match, result)
        self.results[match] = result
        self.match = None
        self.finished += 1
        if self.max_matches is not None and self.finished >= self.max_matches:
            self.done.set()


def _last_moves(observation: Any) -> list[str] | None:
    """The previous joint move (every role's, in role order) from a GDL observation."""
    if isinstance(observation, dict):
        return observation.get("last_moves")
    return observation


async def run_client(url: str, name: str, gamer: Gamer, *, token: str | None = None,
                     margin: float = 0.5, max_matches: int | None = None) -> int:
    """Play matches on the server at ``url`` until it closes or ``max_matches`` end."""
    try:
        connection = websockets.connect(url, max_size=MAX_MESSAGE_BYTES)
        ws = await asyncio.wait_for(connection, 10)
    except (OSError, TimeoutError, websockets.InvalidURI, websockets.InvalidHandshake) as exc:
        raise GameError(f"cannot connect to {url}: {exc}") from None
    async with ws:
        async def send(message: dict[str, Any]) -> None:
            try:
                await ws.send(json.dumps(message))
            except websockets.ConnectionClosed:
                log.warning("connection closed before %s was sent", message.get("type"))

        gamer.warm_up()  # not awaited: an offer may come at once and its clock runs
        await send({"type": "hello", "name": name, "token": token or secrets.token_hex(16)})
        agent = WsAgent(gamer, send, margin, max_matches)
        tasks: set[asyncio.Task] = set()
        receiving = asyncio.ensure_future(_receive(ws, agent, tasks))
        finished = asyncio.ensure_future(agent.done.wait())
        await asyncio.wait({receiving, finished}, return_when=asyncio.FIRST_COMPLETED)
        for task in (receiving, finished, *tasks):
            task.cancel()
        return 0 if agent.done.is_set() or receiving.done() and not receiving.cancelled() \
            and receiving.result() else 1


async def _receive(ws, agent: WsAgent, tasks: set[asyncio.Task]) -> bool:
    """Dispatch messages until the server closes; True when it closed normally."""
    try:
        async for data in ws:
            received = time.monotonic()
            try:
                message = json.loads(data)
            except (TypeError, ValueError):
                log.error("not JSON from the server: %.80r", data)
                continue
            if not isinstance(message, dict):
                continue
            task = asyncio.ensure_future(_safely(agent.handle(message, received)))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
    except websockets.ConnectionClosedError as exc:
        log.error("connection lost: %s", exc)
        return False
    log.info("the server closed the connection")
    return True


async def _safely(job) -> None:
    try:
        await job
    except (KeyError, TypeError, ValueError) as exc:  # a malformed server message
        log.error("bad message from the server: %s", exc)
