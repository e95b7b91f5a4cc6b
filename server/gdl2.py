"""GDL-II matches: what each seat is told, as the Dresden GGP server tells it.

A GDL match is a GDL-II match when its rules have ``sees`` (the machine's
``has_sees``); a game with a ``random`` role and no ``sees`` stays a plain GDL match,
in which every role sees the whole joint move (nature's included), as GGP plays it.

In a GDL-II match a seat is told, after each step, only its own move (the one the
server played for it, which differs from its answer after a fault) and the terms
``p`` with ``(sees ROLE p)`` true after that joint move; never the other roles'
moves, nature's move or the state (``shared/protocols/ggp-ii.md``). :class:`SeatViews`
keeps that for every seat; the match sends :meth:`SeatViews.observation` where a plain
GDL match sends the game's observation (the joint move).
"""

from __future__ import annotations

from typing import Any

from gdl.reasoning.machine import NATURE
from solvers.playable import PlayableGame, State


def is_gdl2(game: PlayableGame) -> bool:
    """Whether a match of ``game`` is played as GDL-II (a GDL game whose rules have ``sees``)."""
    machine = getattr(game, "machine", None)
    return game.format == "gdl" and bool(getattr(machine, "has_sees", False))


class SeatViews:
    """Each seat's view of a GDL-II match: the turn, its last move and its percepts."""

    def __init__(self, game: PlayableGame) -> None:
        self.machine: Any = game.machine  # type: ignore[attr-defined]
        self.seats = [i for i, role in enumerate(self.machine.roles) if role != NATURE]
        self.turn = 0  # joint moves made (the GGP-II <TURN> of the next message)
        self.last: list[str] | None = None  # per seat, the move played for it
        self.percepts: list[list[str]] | None = None  # per seat, sorted KIF terms

    def advance(self, before: State, after: State) -> list[list[str]]:
        """Take the step from ``before`` to ``after`` (``gdl.playable`` states: (machine
        state, the joint move that led there as KIF, nature's included)); every seat's
        percepts after it."""
        machine = self.machine
        joint = [machine.parse_move(kif, role)
                 for role, kif in enumerate(after[1])]  # type: ignore[index]
        seen = machine.percepts(before[0], joint)  # type: ignore[index]
        self.turn += 1
        self.last = [after[1][i] for i in self.seats]  # type: ignore[index]
        self.percepts = [list(seen[i]) for i in self.seats]
        return self.percepts

    def observation(self, seat: int) -> dict[str, Any]:
        """What seat ``seat`` (an index into the game's roles) may know now."""
        return {"turn": self.turn,
                "last_move": None if self.last is None else self.last[seat],
                "percepts": None if self.percepts is None else list(self.percepts[seat])}
