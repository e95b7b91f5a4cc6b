"""A seat played by a websocket agent (``ws:NAME``), over ``server/PROTOCOL.md``.

The seat is claimed from the lobby at the start of the match by the connection of
that name; if the socket drops, the seat keeps its place (moves become ``CE``) until
a connection presenting the name's secret rejoins, and then gets
the offer again, with the observation of every finished step (``history``: an agent
that missed steps catches up from it), and the open request with the time that is
left.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from server import loop_clock, protocol
from server.connections import Connection, Lobby
from server.players.base import SeatInfo, SeatUnfilled, StepRequest
from server.players.spec import PlayerSpec


@dataclass
class _Open:
    """The request waiting for this seat's move."""

    step: int
    reply: asyncio.Future[Any]
    request: StepRequest
    deadline: float  # loop time


class WsSeat:
    """A ``ws:NAME`` player (see the module docstring)."""

    def __init__(self, spec: PlayerSpec, lobby: Lobby, wait: float) -> None:
        self.name = spec.target
        self.label = spec.text
        self.lobby = lobby
        self.wait = wait
        self.conn: Connection | None = None
        self.seat: SeatInfo | None = None
        self.ready = asyncio.Event()
        self.open: _Open | None = None
        self.step = 0
        self.history: list[Any] = []  # the observation of each finished step, sent or not
        self.answered_at: float | None = None  # loop time the open request's move came in

    @property
    def connected(self) -> bool:
        return self.conn is not None and not self.conn.closed

    async def start(self, seat: SeatInfo) -> None:
        self.seat = seat
        conn = await self.lobby.claim(self.name, self, self.wait)
        if conn is None:
            raise SeatUnfilled(f"no agent named {self.name!r} connected within {self.wait:g} s")
        self.conn = conn
        await conn.send(self._offer())
        try:
            await asyncio.wait_for(self.ready.wait(), seat.startclock)
        except TimeoutError:
            pass  # as in GGP, a slow start costs the agent, not the match

    def _offer(self, rejoin: bool = False) -> dict[str, Any]:
        seat = self.seat
        assert seat is not None
        return protocol.offer(seat.match, seat.role_name, seat.roles, seat.game.description(),
                              seat.startclock, seat.playclock, step=self.step,
                              history=self.history if rejoin else None)

    def _request(self, open_: _Open) -> dict[str, Any]:
        assert self.seat is not None
        left = max(0.0, open_.deadline - asyncio.get_running_loop().time())
        r = open_.request
        return protocol.request(self.seat.match, r.step, self.seat.role_name, r.observation,
                                r.legal, left)

    async def play(self, request: StepRequest) -> Any:
        loop = asyncio.get_running_loop()
        self.step = request.step
        self.answered_at = None
        self.open = _Open(request.step, loop.create_future(), request,
                          loop.time() + request.deadline)
        try:
            if self.conn is not None:
                await self.conn.send(self._request(self.open))
            return await self.open.reply
        finally:
            self.open = None

    def receive_move(self, step: int, move: Any) -> bool:
        """Take a ``move`` message; False when no request is open for that step."""
        open_ = self.open
        if open_ is None or open_.step != step or open_.reply.done():
            return False
        self.answered_at = loop_clock.running().arrival()
        open_.reply.set_result(move)
        return True

    async def _send(self, message: dict[str, Any]) -> None:
        if self.conn is not None:
            await self.conn.send(message)

    async def result(self, step: int, move: str | None, error: str, observation: Any) -> None:
        assert self.seat is not None
        self.history.append(observation)
        await self._send(protocol.step_result(self.seat.match, step, self.seat.role_name, move,
                                              error, observation))

    async def stop(self, payoffs: list[float], observation: Any,
                   last_joint: Sequence[str | None] | None) -> None:
        assert self.seat is not None
        await self._send(protocol.end(self.seat.match, payoffs, self.seat.role, observation))

    async def abort(self, reason: str) -> None:
        assert self.seat is not None
        await self._send(protocol.abort(self.seat.match, reason))

    async def close(self) -> None:
        if self.conn is not None:
            self.conn.seats.discard(self)
            self.conn = None
        await self.lobby.released()

    def disconnected(self, conn: Connection) -> None:
        if self.conn is conn:
            self.conn = None

    async def rejoin(self, conn: Connection) -> None:
        """Bind the seat to a new connection and bring it up to date."""
        if self.conn is not None and self.conn is not conn:
            self.conn.seats.discard(self)
        self.conn = conn
        conn.seats.add(self)
        self.ready.set()
        await conn.send(self._offer(rejoin=True))
        if self.open is not None and not self.open.reply.done():
            await conn.send(self._request(self.open))
