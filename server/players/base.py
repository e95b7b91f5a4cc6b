"""What a match needs from a player, whatever kind it is.

The match runner (``server/match.py``) calls these coroutines and enforces the
clocks itself: ``play`` is wrapped in a timeout, so a player never has to be trusted
to be on time. Kinds: built-ins (``builtin.py``), GGP HTTP players (``http.py``),
websocket agents (``websocket.py``), agents the server launches (``launched.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from server.connections import Lobby
from server.identities import Identities
from solvers.errors import GameError
from solvers.playable import PlayableGame, State


@dataclass(frozen=True)
class SeatInfo:
    """One seat of one match: what the player is told at the start."""

    match: str
    game: PlayableGame
    role: int
    startclock: float
    playclock: float
    seed: int

    @property
    def roles(self) -> list[str]:
        return list(self.game.roles)

    @property
    def role_name(self) -> str:
        return self.game.roles[self.role]


class SeatUnfilled(GameError):
    """No player could take the seat (e.g. no agent with that name connected in time)."""


class PlayerGone(GameError):
    """The player cannot be reached now (recorded as ``CE`` for the step)."""


@dataclass(frozen=True)
class StepRequest:
    """Everything about one step a player may be given; each kind takes its share.

    ``state`` is for in-process built-ins only (and only used in perfect-information
    games); remote players get ``observation`` (and GGP HTTP players of plain GDL
    ``last_joint``, which GGP shows every role; None in GDL-II, where nobody sees it).
    """

    step: int
    state: State
    observation: Any
    legal: list[str]
    deadline: float  # seconds from now
    last_joint: Sequence[str | None] | None


class Player(Protocol):
    """A seated player (see the module docstring)."""

    label: str  # the name recorded for the seat
    # loop time the last answer reached the server, when the player knows it better than
    # the moment ``play`` returns (a websocket seat: when its move message was read)
    answered_at: float | None

    @property
    def connected(self) -> bool:
        """False while a remote player is known to be unreachable (late moves become CE)."""
        ...

    async def start(self, seat: SeatInfo) -> None:
        """Take the seat and get ready within the start clock (raises SeatUnfilled)."""
        ...

    async def play(self, request: StepRequest) -> Any:
        """The player's reply: a move string, or anything else (recorded as ``IL null``)."""
        ...

    async def result(self, step: int, move: str | None, error: str, observation: Any) -> None: ...

    async def stop(self, payoffs: list[float], observation: Any,
                   last_joint: Sequence[str | None] | None) -> None: ...

    async def abort(self, reason: str) -> None: ...

    async def close(self) -> None:
        """Free what the seat holds (always called once, at the end of the match)."""
        ...


class SeatHost(Protocol):
    """What the server that seats the players gives those that need it
    (:class:`server.app.MatchServer`): ``ws:`` seats wait in its lobby, ``agent`` seats
    are launched to log in to it under a name it registers."""

    @property
    def lobby(self) -> Lobby: ...

    @property
    def seat_wait(self) -> float:
        """Seconds a ``ws:`` seat waits for its agent, unless its spec says otherwise."""
        ...

    @property
    def url(self) -> str: ...

    @property
    def identities(self) -> Identities: ...


class QuietPlayer:
    """Default no-op notifications for players that need no messages after a step."""

    label = "player"
    answered_at: float | None = None

    @property
    def connected(self) -> bool:
        return True

    async def result(self, step: int, move: str | None, error: str, observation: Any) -> None:
        return None

    async def stop(self, payoffs: list[float], observation: Any,
                   last_joint: Sequence[str | None] | None) -> None:
        return None

    async def abort(self, reason: str) -> None:
        return None

    async def close(self) -> None:
        return None
