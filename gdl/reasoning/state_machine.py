"""The GDL state machine interface (ggp-base vocabulary) that both engines implement.

:class:`StateMachine` is what the rest of the project plays and expands through; the
general engine (:mod:`gdl.reasoning.general_machine`) and the compiled engine
(:mod:`gdl.reasoning.compile`) implement it, and :func:`gdl.reasoning.machine.load_machine`
chooses between them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Sequence

from gdl.reasoning.terms import Fn, Rule
from solvers.errors import GameError, GameRuntimeError

State = Hashable
Move = Hashable

# GDL-II's nature role need not have goals: it gets this value when it has none.
NATURE = "random"
NATURE_GOAL = 0


class StateMachine(ABC):
    """A GDL game as a state machine; both engines implement this."""

    roles: tuple[str, ...]
    engine_name: str
    fallback_reason: str | None = None
    name: str = "game"

    @abstractmethod
    def initial_state(self) -> State: ...

    @abstractmethod
    def legal_moves(self, state: State, role: int) -> tuple[Move, ...]:
        """Legal moves of ``role`` sorted by KIF string; raises GameRuntimeError when a
        role has none in a non-terminal state."""

    def legal_moves_upto(self, state: State, role: int, limit: int) -> tuple[Move, ...]:
        """At most ``limit`` of ``role``'s legal moves: all of them, sorted, when there
        are no more; an engine that derives them one at a time stops at ``limit`` (a
        role with millions of moves), in whatever order they came."""
        return self.legal_moves(state, role)[:limit]

    def legal_joint_moves(self, state: State) -> tuple[tuple[Move, ...], ...]:
        """The legal moves of every role, in role order."""
        return tuple(self.legal_moves(state, r) for r in range(len(self.roles)))

    @abstractmethod
    def next_state(self, state: State, joint: Sequence[Move]) -> State: ...

    @abstractmethod
    def is_terminal(self, state: State) -> bool: ...

    def terminal_after(self, parent: State, child: State) -> bool:
        """:meth:`is_terminal` of ``child``, a successor of the non-terminal ``parent``
        (an engine may test only what the move changed)."""
        return self.is_terminal(child)

    @abstractmethod
    def goals(self, state: State) -> tuple[int, ...]:
        """One goal value per role; GameRuntimeError when a role has zero or several."""

    def goal_values(self, state: State) -> tuple[tuple[str, ...], ...]:
        """Every goal value of every role as KIF strings (for traces and diagnostics);
        unlike :meth:`goals` this never raises for zero or several values."""
        try:
            return tuple((str(v),) for v in self.goals(state))
        except GameRuntimeError:
            return tuple(() for _ in self.roles)

    has_sees: bool = False  # the rules define GDL-II's ``sees``: the game is GDL-II

    @abstractmethod
    def percepts(self, state: State, joint: Sequence[Move]) -> tuple[tuple[str, ...], ...]:
        """What each role perceives after ``joint`` in ``state`` (GDL-II): per role in
        role order, the sorted KIF strings of every ``p`` with ``(sees ROLE p)`` true
        in ``state`` with ``does`` = ``joint``; empty tuples when the game has no ``sees``."""

    @abstractmethod
    def move_to_kif(self, move: Move) -> str: ...

    @abstractmethod
    def parse_move(self, kif: str, role: int) -> Move: ...

    def parse_joint(self, moves: Sequence[str]) -> list[Move]:
        """A joint move from its KIF moves in role order; GameError for a wrong count."""
        if len(moves) != len(self.roles):
            raise GameError(f"a joint move needs {len(self.roles)} moves, got {len(moves)}")
        return [self.parse_move(kif, r) for r, kif in enumerate(moves)]

    @abstractmethod
    def state_to_kif(self, state: State) -> list[str]:
        """Sorted fact strings without the ``true`` wrapper."""

    @abstractmethod
    def state_from_kif(self, facts: list[str]) -> State: ...

    def describe(self, state: State) -> str:
        """A state in error messages: ``{fact fact ...}``, its first 12 facts."""
        facts = self.state_to_kif(state)
        return "{" + " ".join(facts[:12]) + (" ..." if len(facts) > 12 else "") + "}"


def defines_sees(rules: Sequence[Rule]) -> bool:
    """Do the rules define GDL-II's ``sees`` (a GDL-II game)?"""
    return any(isinstance(r.head, Fn) and r.head.name == "sees" for r in rules)
