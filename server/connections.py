"""Logged-in agent connections and the lobby that hands them seats.

A :class:`Connection` is one websocket after ``hello`` (or ``rejoin``); it holds the
agent's name, its token (the name's verified secret) and the seats it plays. The
:class:`Lobby` seats ``ws:NAME`` players: a match waits until the connection of that
name has a free slot (its hello's
``max_matches``, default 1), so one agent is never offered more matches than it asked for;
matches queue for a busy agent, and give up only when no agent of that name is connected.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from server.protocol import ProtocolError, encode

SEND_TIMEOUT = 10.0  # seconds a message may wait for a slow reader


class Connection:
    """One logged-in agent socket."""

    def __init__(self, ws: ServerConnection, name: str, token: str, max_matches: int) -> None:
        self.ws = ws
        self.name = name
        self.token = token
        self.max_matches = max_matches
        self.seats: set[Any] = set()  # server.players.websocket.WsSeat
        self.closed = False

    @property
    def free(self) -> bool:
        return not self.closed and len(self.seats) < self.max_matches

    async def send(self, message: dict[str, Any]) -> bool:
        """Send one message; False when the socket is gone (the caller decides what that means).

        An agent that stops reading would make ``send`` wait for ever once the socket
        buffers are full and stall its matches: after ``SEND_TIMEOUT`` it is cut off
        (its seats then play ``CE`` until it rejoins)."""
        if self.closed:
            return False
        try:
            await asyncio.wait_for(self.ws.send(encode(message)), SEND_TIMEOUT)
        except ConnectionClosed:
            return False
        except TimeoutError:
            self.closed = True
            self.ws.transport.abort()
            return False
        return True


class Lobby:
    """The live connection of each name, and matches waiting for it to have a free slot.

    A name has at most one live connection: a second ``hello`` is refused
    (``name-in-use``); only a ``rejoin`` presenting the name's secret takes over
    (:meth:`take_over`)."""

    def __init__(self) -> None:
        self.by_name: dict[str, Connection] = {}
        self.waiting: Counter[str] = Counter()  # names seats are waiting for, how many
        self._changed = asyncio.Condition()

    def add(self, conn: Connection) -> None:
        """Log ``conn`` in under its name (call :meth:`released` to wake waiting matches)."""
        live = self.by_name.get(conn.name)
        if live is not None and not live.closed:
            raise ProtocolError("name-in-use", f"{conn.name!r} is logged in on another "
                                "connection (close it, or rejoin its match with the secret)",
                                ref="hello")
        self.by_name[conn.name] = conn

    def take_over(self, conn: Connection) -> Connection | None:
        """Log ``conn`` in under its name; the live connection it replaces, if any."""
        previous = self.by_name.get(conn.name)
        self.by_name[conn.name] = conn
        return previous if previous is not None and not previous.closed else None

    async def remove(self, conn: Connection) -> None:
        if self.by_name.get(conn.name) is conn:
            del self.by_name[conn.name]

    async def released(self) -> None:
        """An agent logged in or gave a seat back: wake the matches waiting for names."""
        async with self._changed:
            self._changed.notify_all()

    async def claim(self, name: str, seat: Any, timeout: float) -> Connection | None:
        """The connection named ``name`` once it has a free slot, now holding ``seat``; None
        when no such agent has been connected for ``timeout`` seconds (a connected agent
        that is busy in other matches is waited for: tournaments queue for it)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        self.waiting[name] += 1
        try:
            async with self._changed:
                while True:
                    conn = self.by_name.get(name)
                    if conn is not None and conn.free:
                        conn.seats.add(seat)
                        return conn
                    if conn is not None and not conn.closed:
                        deadline = loop.time() + timeout
                    left = deadline - loop.time()
                    if left <= 0:
                        return None
                    try:
                        await asyncio.wait_for(self._changed.wait(), left)
                    except TimeoutError:
                        pass
        finally:
            self.waiting[name] -= 1
            if not self.waiting[name]:
                del self.waiting[name]
