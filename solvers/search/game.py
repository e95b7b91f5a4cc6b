"""The duck-typed game interface the search works on (ggp-base's state-machine words).

``gdl.reasoning.machine.StateMachine`` has it as is; anything else with these five members
works too (the tests use small pure-Python games). States must be hashable (they key
the transposition tables) and moves hashable.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Protocol

import numpy as np

from solvers.errors import GameError


class SearchGame(Protocol):
    @property
    def roles(self) -> Sequence[str]: ...

    def legal_moves(self, state: Hashable, role: int) -> Sequence[Hashable]: ...

    def next_state(self, state: Hashable, joint: Sequence[Hashable]) -> Hashable: ...

    def is_terminal(self, state: Hashable) -> bool: ...

    def goals(self, state: Hashable) -> Sequence[float]:
        """One goal per role, 0..100."""
        ...


def safe_goals(game: SearchGame, state: Hashable) -> np.ndarray:
    """The goal vector as floats; all zeros when the game leaves goals ill-defined
    (e.g. a role with two goal values), so a broken line of play is bad for everyone."""
    try:
        return np.asarray(game.goals(state), dtype=float)
    except GameError:
        return np.zeros(len(game.roles))
