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
6. A lost connection is re-opened (backoff from 0.2 s to 5 s, for up to
   ``reconnect_seconds``): during a match with ``rejoin`` (same token), else with
   ``hello``. The rejoin offer's ``history`` (every finished step's observation)
   lets the gamer replay the steps it missed; a request answered before the loss
   gets the same answer again.
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

from agent.brains.options import GameSpec
from agent.gamer import DEFAULT_MARGIN, DEFAULT_MAX_CLOCK, Gamer, answer_deadline
from solvers.errors import GameError

log = logging.getLogger("agent.ws")

MAX_MESSAGE_BYTES = 4 * 1024 * 1024  # the server's frame limit
RECONNECT_SECONDS = 60.0  # how long a lost connection is retried
FIRST_DELAY, MAX_DELAY = 0.2, 5.0  # reconnection backoff (seconds)
# errors that end the client: logging in again would be refused the same way
LOGIN_REFUSED = frozenset({"bad-secret", "name-in-use", "taken-over", "bad-token",
                           "not-registered"})


class WsAgent:
    """The protocol state of one connection (sans sockets: ``send`` is injected)."""

    def __init__(self, gamer: Gamer, send, margin: float = DEFAULT_MARGIN,
                 max_matches: int | None = None,
                 max_clock: float = DEFAULT_MAX_CLOCK) -> None:
        self.gamer = gamer
        self.send = send  # async callable taking a dict
        self.margin = margin
        self.max_clock = max_clock
        self.max_matches = max_matches
        self.finished = 0
        self.match: str | None = None
        self.format = "gdl"
        self.results: dict[str, Any] = {}
        self.done = asyncio.Event()
        self.rng = random.Random(gamer.options.seed)
        self.answers: dict[int, asyncio.Task] = {}  # this match's moves by step
        self.refused: str | None = None  # why the server refused our login, if it did

    def _deadline(self, received: float, seconds: float) -> float:
        return answer_deadline(received, seconds, self.margin, self.max_clock)

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
                await self.gamer.abort()
                self._over(message.get("match"), {"status": "aborted"})
        elif kind == "error":
            code = message.get("code")
            if code in LOGIN_REFUSED:
                self.refused = f"{code}: {message.get('message')}"
                self.done.set()
                return
            log.error("server refused %s: %s %s", message.get("ref"), code,
                      message.get("message"))
        elif kind == "welcome":
            log.info("logged in as %s", message.get("name"))
        elif kind not in ("step", "pong"):
            log.warning("ignored message type %r", kind)

    async def _offer(self, message: dict[str, Any], received: float) -> None:
        match = message["match"]
        if self.match is not None and self.match != match:
            log.warning("offer of %s while playing %s: ignored", match, self.match)
            return
        game = message["game"]
        rejoined = bool(message.get("rejoin")) and self.match == match and self.gamer.in_match
        if not rejoined:  # a new match, or a rejoin by a client that lost the game
            self.match, self.format = match, game["format"]
            self.answers = {}
            spec = GameSpec(game["format"], game["text"], game.get("name", "game"))
            try:
                await self.gamer.start(spec, message["role"],
                                       self._deadline(received, message["startclock"]))
            except GameError as exc:
                log.error("cannot play %s: %s", match, exc)
                return
        if message.get("rejoin") and self.format == "gdl":
            self.gamer.resync([_last_moves(o) for o in message.get("history") or []])
        await self.send({"type": "ready", "match": match})

    async def _request(self, message: dict[str, Any], received: float) -> None:
        if message.get("match") != self.match:
            return
        step = message["step"]
        answer = self.answers.get(step)
        if answer is None:  # (a request sent again after a rejoin reuses its answer)
            answer = self.answers[step] = asyncio.ensure_future(
                self._choose(message, self._deadline(received, message["deadline"])))
        move = await asyncio.shield(answer)  # the handler may go with its connection
        await self.send({"type": "move", "match": self.match, "step": step, "move": move})

    async def _choose(self, message: dict[str, Any], deadline: float) -> str:
        legal = list(message["legal"])
        observation = message.get("observation")
        if not self.gamer.in_match:  # the game could not be built: any legal move
            return self.rng.choice(legal)
        if self.format == "gdl":
            return await self.gamer.play(_last_moves(observation), deadline, legal=legal)
        return await self.gamer.choose(observation, legal, deadline)

    async def _end(self, message: dict[str, Any], received: float) -> None:
        if message.get("match") != self.match:
            return
        if self.format == "gdl" and self.gamer.in_match:
            await self.gamer.stop(_last_moves(message.get("observation")),
                                  self._deadline(received, 1.0))
        else:
            await self.gamer.abort()
        self._over(message["match"], {"status": message.get("status"),
                                      "payoff": message.get("payoff")})

    def _over(self, match: str | None, result: dict[str, Any]) -> None:
        log.info("match %s over: %s", match, result)
        self.results[match] = result
        self.match = None
        self.answers = {}
        self.finished += 1
        if self.max_matches is not None and self.finished >= self.max_matches:
            self.done.set()


def _last_moves(observation: Any) -> list[str] | dict[str, Any] | None:
    """The previous joint move (every role's, in role order) from a GDL observation;
    a GDL-II observation (own move and percepts only) is passed on whole."""
    if isinstance(observation, dict) and "turn" in observation:
        return observation
    if isinstance(observation, dict):
        return observation.get("last_moves")
    return observation


async def run_client(url: str, name: str, gamer: Gamer, *, token: str | None = None,
                     margin: float = DEFAULT_MARGIN, max_matches: int | None = None,
                     max_clock: float = DEFAULT_MAX_CLOCK,
                     reconnect_seconds: float = RECONNECT_SECONDS) -> int:
    """Play matches on the server at ``url`` until it closes or ``max_matches`` end;
    a lost connection is re-opened (see the module docstring). 0 on a normal end."""
    token = token or secrets.token_hex(16)
    agent: WsAgent | None = None
    lost_at = 0.0
    delay = FIRST_DELAY
    gamer.warm_up()  # an offer may come as soon as we say hello, and its clock runs
    while True:
        try:
            ws = await asyncio.wait_for(websockets.connect(url, max_size=MAX_MESSAGE_BYTES), 10)
        except (OSError, TimeoutError, websockets.InvalidURI, websockets.InvalidHandshake) as exc:
            if agent is None or time.monotonic() - lost_at > reconnect_seconds:
                raise GameError(f"cannot connect to {url}: {exc}") from None
            await asyncio.sleep(delay)
            delay = min(2 * delay, MAX_DELAY)
            continue
        delay = FIRST_DELAY
        log.info("connected to %s", url)
        async with ws:
            async def send(message: dict[str, Any], ws=ws) -> None:
                try:
                    await ws.send(json.dumps(message))
                except websockets.ConnectionClosed:
                    log.warning("connection closed before %s was sent", message.get("type"))

            if agent is None:
                agent = WsAgent(gamer, send, margin, max_matches, max_clock)
            agent.send = send
            if agent.match is not None:
                log.warning("reconnected: rejoining %s", agent.match)
                await send({"type": "rejoin", "match": agent.match, "token": token,
                            "name": name})
            else:
                await send({"type": "hello", "name": name, "token": token})
            closed_normally = await _serve(ws, agent)
        if agent.refused is not None:
            raise GameError(f"the server at {url} refused {name!r}: {agent.refused}")
        if agent.done.is_set() or (closed_normally and agent.match is None):
            return 0
        lost_at = time.monotonic()
        log.warning("connection lost; reconnecting to %s", url)


async def _serve(ws, agent: WsAgent) -> bool:
    """Receive until the connection ends or the agent is done; True on a normal close."""
    tasks: set[asyncio.Task] = set()
    receiving = asyncio.ensure_future(_receive(ws, agent, tasks))
    finished = asyncio.ensure_future(agent.done.wait())
    await asyncio.wait({receiving, finished}, return_when=asyncio.FIRST_COMPLETED)
    finished.cancel()
    # handlers of a lost connection run on (thinking continues; their sends fail and
    # the answers are sent again after the rejoin), unless the agent is done
    for task in tasks if agent.done.is_set() else ():
        task.cancel()
    if not receiving.done():
        receiving.cancel()
        return True
    return receiving.result()


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
