"""A seat played by a GGP HTTP player (``http://HOST:PORT``), as ggp-base's manager drives it.

Every message is one ``POST /`` on a fresh connection (5 s to connect), its reply read
to the end of its body (:class:`server.ggp_http.HttpReply`, at most
``MAX_REPLY_BYTES``; anything else is the player's fault, ``CE``); START waits the start clock, PLAY is cut off by the match's clock, STOP and
ABORT are sent and forgotten after their clock. GGP HTTP is a GDL protocol, so this
seat refuses other formats. In a GDL-II match (``server/gdl2.py``) PLAY and STOP take
the GDL-II form: the turn, the player's own last move and its percepts, never the
joint move.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from server import ggp_http
from server.gdl2 import is_gdl2
from server.players.base import PlayerGone, QuietPlayer, SeatInfo, SeatUnfilled, StepRequest
from server.players.spec import PlayerSpec, parse_spec
from server.protocol import ProtocolError
from solvers.errors import GameError

CONNECT_TIMEOUT = 5.0
READ_BYTES = 1 << 14  # bytes asked of the socket at a time
LOOPBACK = ("127.0.0.1", "::1", "localhost")


class HttpAllowList:
    """The hosts (any port) and HOST:PORT pairs that ``http://`` players may name.

    The server connects to the player a spec names, and a spec may come from a remote
    ``create``: without this list any client could make the server POST to any host
    and port (server-side request forgery). Hosts are compared as written (lower case;
    ``127.1`` is not ``127.0.0.1``), never resolved."""

    def __init__(self, entries: Sequence[str]) -> None:
        self.hosts: set[str] = set()
        self.pairs: set[tuple[str, int]] = set()
        for entry in entries:
            bare_ipv6 = entry.count(":") > 1 and not entry.startswith("[")
            url = urlsplit(f"//[{entry}]" if bare_ipv6 else f"//{entry}")
            try:
                port = url.port
            except ValueError:
                port = -1
            if not url.hostname or port == -1 or url.path or url.query or url.username:
                raise GameError(f"allowed http host {entry!r}: write HOST or HOST:PORT "
                                "([IPv6]:PORT)")
            if port is None:
                self.hosts.add(url.hostname)
            else:
                self.pairs.add((url.hostname, port))
        self.text = ", ".join(entries) or "none"

    def check(self, spec: PlayerSpec) -> None:
        """Refuse an ``http://`` spec whose target is not on the list (no connection tried)."""
        if spec.kind != "http":
            return
        url = urlsplit(spec.target)
        host, port = (url.hostname or "").lower(), url.port or 80
        if host not in self.hosts and (host, port) not in self.pairs:
            raise ProtocolError("not-allowed", f"player {spec.text[:80]!r}: this server calls "
                                f"GGP HTTP players only at {self.text} (ggp serve --allow-http)")


def http_allowed(specs: Sequence[str]) -> list[str]:
    """Loopback and the GGP HTTP players these specs name (the allow-list of a server
    whose players the user named on its command line)."""
    allowed = list(LOOPBACK)
    for spec in map(parse_spec, specs):
        if spec.kind == "http":
            url = urlsplit(spec.target)
            host = f"[{url.hostname}]" if ":" in (url.hostname or "") else url.hostname
            allowed.append(f"{host}:{url.port or 80}")
    return allowed


class HttpPlayer(QuietPlayer):
    def __init__(self, spec: PlayerSpec) -> None:
        url = urlsplit(spec.target)
        self.host = url.hostname or "127.0.0.1"
        self.port = url.port or 80
        self.label = spec.text
        self.seat: SeatInfo | None = None
        self.gdl2 = False

    async def _send(self, body: str) -> str:
        """One message, one connection: the reply's trimmed body (PlayerGone when unreachable)."""
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port), CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise PlayerGone(f"{self.label}: cannot connect: {exc}") from None
        try:
            writer.write(ggp_http.http_request(self.host, self.port, body))
            await writer.drain()
            reply = ggp_http.HttpReply()
            while not reply.feed(await reader.read(READ_BYTES)):
                pass
            return reply.text()
        except (OSError, ggp_http.FormatError) as exc:
            raise PlayerGone(f"{self.label}: {exc}") from None
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def _send_quietly(self, body: str, timeout: float) -> None:
        with contextlib.suppress(PlayerGone, TimeoutError):
            await asyncio.wait_for(self._send(body), timeout)

    async def start(self, seat: SeatInfo) -> None:
        if seat.game.format != "gdl":
            raise SeatUnfilled(f"{self.label}: GGP HTTP players play GDL games only "
                               f"({seat.game.name} is {seat.game.format})")
        self.seat = seat
        self.gdl2 = is_gdl2(seat.game)
        rules = ggp_http.rules_text(seat.game.description()["text"])
        await self._send_quietly(ggp_http.start_message(seat.match, seat.role_name, rules,
                                                        seat.startclock, seat.playclock),
                                 seat.startclock)

    async def play(self, request: StepRequest) -> Any:
        assert self.seat is not None
        if self.gdl2:
            message = ggp_http.play_message_ii(self.seat.match, **_ii_fields(request.observation))
        else:
            message = ggp_http.play_message(
                self.seat.match, _ggp_joint(request.observation, request.last_joint))
        return ggp_http.parse_move_reply(await self._send(message))

    async def stop(self, payoffs: list[float], observation: Any,
                   last_joint: Sequence[str | None] | None) -> None:
        assert self.seat is not None
        if self.gdl2:
            message = ggp_http.stop_message_ii(self.seat.match, **_ii_fields(observation))
        else:
            message = ggp_http.stop_message(self.seat.match, _ggp_joint(observation, last_joint))
        await self._send_quietly(message, self.seat.playclock)

    async def abort(self, reason: str) -> None:
        if self.seat is not None:
            await self._send_quietly(ggp_http.abort_message(self.seat.match), 1.0)


def _ggp_joint(observation: Any, seats_joint: Sequence[str | None] | None) -> list[str] | None:
    """The previous joint move as GGP sends it: every role's move in the order of the
    ``role`` facts, nature's included (a GDL observation's ``last_moves``); the seats'
    moves when the observation does not carry them."""
    if isinstance(observation, dict) and "last_moves" in observation:
        return observation["last_moves"]
    return None if seats_joint is None else [m or "noop" for m in seats_joint]


def _ii_fields(observation: dict[str, Any]) -> dict[str, Any]:
    """A GDL-II observation (``gdl.playable.GdlGame.observation``) as the message's fields."""
    return {"turn": observation["turn"], "last_move": observation["last_move"],
            "percepts": observation["percepts"]}
