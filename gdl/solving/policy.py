"""A seat's equilibrium policy in a GDL game, solved within a time limit.

``gdl_policy(game, seconds)`` returns ``policy(role, observation, legal) -> weights``
(:data:`solvers.playable.Policy`) from what the seat is told, so it serves the
server's built-in ``solver`` player and the agent alike:

- GDL (every role sees the joint moves): the game expanded into its simultaneous-move
  model and solved by the thesis' baseline (a subgame-perfect equilibrium: a strategy
  at every decision state). The policy follows the state from the joint moves it is
  shown (``{"last_moves": None}`` starts a match); off the solved states it answers
  None (the caller plays by other means).
- GDL-II (rules with ``sees``): the game expanded into its extensive form
  (:func:`gdl.gdl2.tree.expand_gdl2`: a role's information set is its own moves and
  percepts, which is all it is told), at most half the time, and solved like an
  ``.efg`` in the rest; the policy keeps each role's history from the observations
  ``{"turn", "last_move", "percepts"}`` and plays uniformly where a step was missed.

A game that does not fit the time or the solvers raises :class:`GameError`
(``LimitReached``, ``UnsupportedGame``).
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Sequence
from typing import Any

from gdl.budget import Budget
from gdl.expansion.expand import expand
from gdl.gdl2.tree import expand_gdl2, infoset_name
from gdl.playable import GdlGame
from gdl.solving.solve import solve_expansion
from solvers.errors import LimitReached
from solvers.extensive.playable import equilibrium_strategy
from solvers.playable import Policy


def gdl_policy(game: GdlGame, seconds: float) -> Policy:
    """The equilibrium policy of a GDL or GDL-II game (see the module docstring)."""
    if game.hidden_information:   # GDL-II: each role sees its moves and percepts
        return _Gdl2Policy(game, seconds)
    return _SolvedGdlPolicy(game, seconds)


class _SolvedGdlPolicy:
    """A GDL game expanded into its simultaneous-move model and solved by the baseline."""

    def __init__(self, game: GdlGame, seconds: float) -> None:
        started = time.monotonic()
        self.machine = game.machine
        self.roles = list(game.roles)
        self.expansion = expand(self.machine, budget=Budget(time_limit=seconds))
        left = seconds - (time.monotonic() - started)
        if left <= 0:
            raise LimitReached("no time left to solve after the expansion")
        self.solution, _, _ = solve_expansion(self.expansion, "baseline", time_limit=left)
        self.states: dict[int, Hashable] = {}   # per role, the state it was last shown

    def __call__(self, role: int, observation: Any, legal: Sequence[str]) -> list[float] | None:
        last = observation.get("last_moves") if isinstance(observation, dict) else None
        if last is None:
            state = self.machine.initial_state()
        elif role not in self.states:
            return None  # joined after the start: the state is not known
        else:
            joint = [self.machine.parse_move(kif, r) for r, kif in enumerate(last)]
            state = self.machine.next_state(self.states[role], joint)
        self.states[role] = state
        return self.weights(state, self.roles[role], legal)

    def weights(self, state: Hashable, role: str, legal: Sequence[str]) -> list[float] | None:
        """The solved strategy of ``role`` at a state (None off the solved states)."""
        node = self.expansion.node_of(state)
        if node is None or not self.solution.solved[node] \
                or role not in self.expansion.player_roles:
            return None
        player = self.expansion.player_roles.index(role)
        probs = self.solution.node_strategy(node, player).tolist()
        at = dict(zip(self.expansion.game.actions(node, player), probs, strict=True))
        return [float(at.get(move, 0.0)) for move in legal]


class _Gdl2Policy:
    """A GDL-II game solved in its extensive form, played from each role's history."""

    def __init__(self, game: GdlGame, seconds: float) -> None:
        started = time.monotonic()
        # at most half the time to expand, the rest to solve
        model = expand_gdl2(game.machine, deadline=started + seconds / 2)
        left = max(0.05, seconds - (time.monotonic() - started))
        self.table = equilibrium_strategy(model, time_limit=left)
        self.roles = list(game.roles)
        self.histories: dict[int, list[tuple[str, tuple[str, ...]]]] = {}

    def __call__(self, role: int, observation: Any, legal: Sequence[str]) -> list[float]:
        history = self.histories.setdefault(role, [])
        turn = observation.get("turn") if isinstance(observation, dict) else None
        if turn == 0:
            history.clear()
        elif turn == len(history) + 1:
            history.append((observation["last_move"], tuple(observation["percepts"])))
        if turn != len(history):  # a step missed (a cut-off answer): an unknown infoset
            return self.table(role, {}, legal)
        return self.table(role, {"infoset": infoset_name(self.roles[role], history)}, legal)
