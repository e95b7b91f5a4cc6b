"""A GDL game as a :class:`solvers.playable.PlayableGame` (what server and agent use).

Seats are the GDL roles except a GDL-II ``random`` role: nature's move is drawn
uniformly from its legal moves with the ``rng`` given to :meth:`GdlGame.next_state`.
A state is ``(machine state, previous joint move as KIF strings or None)``, so the
observation every role gets (the previous joint move, as in GGP) is part of it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from gdl.reasoning.machine import load_machine
from gdl.reasoning.parser import parse_kif, parse_term
from gdl.reasoning.state_machine import NATURE, Move, StateMachine
from gdl.reasoning.terms import term_to_kif
from solvers.errors import GameError

GdlState = tuple[Any, tuple[str, ...] | None]


class GdlGame:
    """PlayableGame over a :class:`~gdl.reasoning.machine.StateMachine` (see the module docstring)."""

    format = "gdl"

    def __init__(self, machine: StateMachine, text: str, name: str) -> None:
        self.machine = machine
        self.text = text
        self.name = name
        self._seats = tuple(i for i, role in enumerate(machine.roles) if role != NATURE)
        self.roles = tuple(machine.roles[i] for i in self._seats)

    @classmethod
    def from_text(cls, text: str, name: str = "game", filename: str = "<input>",
                  engine: str = "auto") -> GdlGame:
        """Parse, validate and load KIF text (errors located in ``filename``)."""
        machine = load_machine(parse_kif(text, filename), engine=engine, name=name)
        return cls(machine, text, name)

    def initial_state(self, rng: random.Random) -> GdlState:
        return (self.machine.initial_state(), None)

    def is_terminal(self, state: GdlState) -> bool:
        return self.machine.is_terminal(state[0])

    def legal_moves(self, state: GdlState, role: int) -> list[str]:
        machine = self.machine
        return [machine.move_to_kif(m) for m in machine.legal_moves(state[0], self._seats[role])]

    def next_state(self, state: GdlState, moves: Sequence[str | None],
                   rng: random.Random) -> GdlState:
        if len(moves) != len(self.roles):
            raise GameError(f"expected {len(self.roles)} moves (one per role), got {len(moves)}")
        machine = self.machine
        given = dict(zip(self._seats, moves, strict=True))
        joint: list[Move] = []
        for index, role in enumerate(machine.roles):
            legal = machine.legal_moves(state[0], index)
            if index not in given:
                joint.append(rng.choice(legal))
                continue
            joint.append(self._legal_move(legal, given[index], role))
        return (machine.next_state(state[0], joint), tuple(machine.move_to_kif(m) for m in joint))

    def _legal_move(self, legal: Sequence[Move], text: str | None, role: str) -> Move:
        """The legal move written ``text`` (case-insensitively, any spacing)."""
        if text is None:
            raise GameError(f"role {role} must move in a GDL game")
        written = {self.machine.move_to_kif(move).lower(): move for move in legal}
        exact = written.get(text.lower())
        if exact is not None:  # the usual case: our own spelling, no parse needed
            return exact
        move = written.get(term_to_kif(parse_term(text)).lower())
        if move is not None:
            return move
        raise GameError(f"illegal move {text!r} for role {role}")

    def payoffs(self, state: GdlState) -> list[float]:
        goals = self.machine.goals(state[0])
        return [float(goals[i]) for i in self._seats]

    def observation(self, state: GdlState, role: int) -> dict[str, Any]:
        last = state[1]
        return {"last_moves": list(last) if last is not None else None}

    def description(self) -> dict[str, str]:
        return {"format": "gdl", "name": self.name, "text": self.text}
