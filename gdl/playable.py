"""A GDL game as a :class:`solvers.playable.PlayableGame` (what server and agent use).

Seats are the GDL roles except a GDL-II ``random`` role: nature's move is drawn
uniformly from its legal moves with the ``rng`` given to :meth:`GdlGame.next_state`.
A state is a :class:`GdlState`: the machine state, the joint move that led there (KIF
strings in the machine's role order, nature's included; None at the start), the turn
(joint moves made) and, in a GDL-II game, every seat's percepts after that joint move.
So what each seat is told is part of the state:

- GDL (no ``sees``, even with a ``random`` role): every seat sees the previous joint
  move, nature's included, as GGP plays it: ``{"last_moves": [...] | None}``.
- GDL-II (rules with ``sees``), as the Dresden GGP server tells it
  (``shared/protocols/ggp-ii.md``): a seat sees only the turn, its own move (the one
  played for it, which differs from its answer after a fault) and the terms ``p``
  with ``(sees ROLE p)`` true after that joint move, sorted:
  ``{"turn": n, "last_move": ... | None, "percepts": [...] | None}`` (None before the
  first move); never the other roles' moves, nature's move or the state.

A GDL game without ``sees`` has perfect information (``hidden_information`` false) and
hands its state machine to searching players (:meth:`GdlGame.search_model`); a GDL-II
game does neither.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Sequence
from typing import Any, NamedTuple

from gdl.reasoning.machine import load_machine
from gdl.reasoning.parser import parse_kif, parse_term
from gdl.reasoning.state_machine import NATURE, Move, StateMachine
from gdl.reasoning.terms import term_to_kif
from solvers.errors import GameError
from solvers.playable import SearchModel

Percepts = tuple[tuple[str, ...], ...]  # per seat, sorted KIF terms


class GdlState(NamedTuple):
    """A state of a :class:`GdlGame` (see the module docstring)."""

    facts: Any  # the machine's state
    last: tuple[str, ...] | None  # the joint move that led here, every machine role's
    turn: int = 0
    percepts: Percepts | None = None  # GDL-II only: every seat's, after ``last``


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

    @property
    def hidden_information(self) -> bool:
        """GDL-II: the rules have ``sees``."""
        return self.machine.has_sees

    def initial_state(self, rng: random.Random) -> GdlState:
        return GdlState(self.machine.initial_state(), None)

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
        percepts = None
        if machine.has_sees:
            seen = machine.percepts(state[0], joint)
            percepts = tuple(seen[i] for i in self._seats)
        return GdlState(machine.next_state(state[0], joint),
                        tuple(machine.move_to_kif(m) for m in joint), state.turn + 1, percepts)

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
        last = state.last
        if not self.machine.has_sees:
            return {"last_moves": list(last) if last is not None else None}
        return {"turn": state.turn,
                "last_move": None if last is None else last[self._seats[role]],
                "percepts": None if state.percepts is None else list(state.percepts[role])}

    def search_model(self) -> SearchModel | None:
        """The state machine itself, for GDL without ``sees`` (nature is its ``random``
        role); None in GDL-II, where no seat may search the true state."""
        machine = self.machine
        if machine.has_sees:
            return None
        chance = tuple(i for i, role in enumerate(machine.roles) if role == NATURE)
        return SearchModel(machine, chance, self._seats, _facts, machine.move_to_kif)

    def state_text(self, state: GdlState) -> str:
        """The KIF list of the state's facts, as ggp-base records a state."""
        return "( " + " ".join(self.machine.state_to_kif(state[0])) + " )"

    def description(self) -> dict[str, str]:
        return {"format": "gdl", "name": self.name, "text": self.text}


def _facts(state: Hashable) -> Hashable:
    """A :class:`GdlState`'s machine state (what a search of the machine starts from)."""
    if not isinstance(state, GdlState):
        raise GameError(f"not a state of a GDL game: {state!r:.80}")
    return state.facts
