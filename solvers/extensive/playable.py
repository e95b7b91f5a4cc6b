"""``.efg`` and tree-format games as :class:`solvers.playable.PlayableGame`, and the
equilibrium strategy the agent and the server's built-in player use.

A state is a node id (an ``int``: immutable, hashable). Chance nodes are never
states: ``initial_state`` and ``next_state`` resolve them at once with the ``rng``
they are given, so the acting player always has a decision (or the game is over).
Only the acting role has legal moves and sees anything: its observation is
``{"infoset": <name>, "actions": [...]}``; the others see ``{}``. Payoffs at a
terminal are the outcomes accumulated along the path.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from solvers.errors import GameRuntimeError, LimitReached
from solvers.extensive.files import read_game_text
from solvers.extensive.model import CHANCE, PLAYER, TERMINAL, ExtensiveGame
from solvers.extensive.solve import solve
from solvers.extensive.strategy_io import strategy_dict

# the LP is exact and fast up to roughly this many sequences (Leduc-5 has ~1,800)
LP_MAX_SEQUENCES = 20_000


class ExtensivePlayable:
    """A playable view of an :class:`ExtensiveGame` (see the module docstring)."""

    def __init__(self, game: ExtensiveGame, fmt: str, name: str, text: str) -> None:
        self.game = game
        self._format = fmt
        self._name = name
        self._text = text
        self._kind = game.node_kind.tolist()
        self._player = game.node_player.tolist()
        self._child_start = game.child_start.tolist()
        self._children = game.children.tolist()
        self._edge_prob = game.edge_prob.tolist()

    @classmethod
    def from_text(cls, text: str, fmt: str, name: str = "game",
                  filename: str | None = None) -> ExtensivePlayable:
        return cls(read_game_text(fmt, text, filename=filename or name), fmt, name, text)

    # ------------------------------------------------------------ PlayableGame
    @property
    def name(self) -> str:
        return self._name

    @property
    def format(self) -> str:
        return self._format

    @property
    def roles(self) -> Sequence[str]:
        return list(self.game.player_names)

    def initial_state(self, rng: random.Random) -> int:
        return self._resolve_chance(0, rng)

    def is_terminal(self, state: int) -> bool:
        return self._kind[self._node(state)] == TERMINAL

    def legal_moves(self, state: int, role: int) -> list[str]:
        node = self._node(state)
        if self._kind[node] != PLAYER or self._player[node] != role:
            return []
        return list(self.game.node_actions(node))

    def next_state(self, state: int, moves: Sequence[str | None], rng: random.Random) -> int:
        node = self._node(state)
        if self._kind[node] != PLAYER:
            raise GameRuntimeError(f"{self._name}: no move is possible at a terminal state")
        role = self._player[node]
        move = moves[role] if role < len(moves) else None
        actions = self.game.node_actions(node)
        if move not in actions:
            raise GameRuntimeError(f"{self._name}: {move!r} is not a legal move of "
                                   f"{self.game.player_names[role]} (legal: {', '.join(actions)})")
        child = self._children[self._child_start[node] + actions.index(move)]
        return self._resolve_chance(child, rng)

    def payoffs(self, state: int) -> list[float]:
        return [float(x) for x in self.game.node_utility[self._node(state)]]

    def observation(self, state: int, role: int) -> Any:
        node = self._node(state)
        if self._kind[node] != PLAYER or self._player[node] != role:
            return {}
        infoset = int(self.game.node_infoset[node])
        return {"infoset": self.game.infoset_names[infoset],
                "actions": list(self.game.infoset_actions[infoset])}

    @property
    def hidden_information(self) -> bool:
        return True  # a role sees its information set, not the node

    def search_model(self) -> None:
        return None

    def state_text(self, state: int) -> str:
        return str(state)

    def description(self) -> dict[str, str]:
        return {"format": self._format, "name": self._name, "text": self._text}

    # ---------------------------------------------------------------- helpers
    def _node(self, state: int) -> int:
        if not isinstance(state, int) or not 0 <= state < len(self._kind):
            raise GameRuntimeError(f"{self._name}: {state!r} is not a state of this game")
        return state

    def _resolve_chance(self, node: int, rng: random.Random) -> int:
        while self._kind[node] == CHANCE:
            start, stop = self._child_start[node], self._child_start[node + 1]
            pick = rng.random()
            chosen = stop - 1  # rounding leftovers go to the last outcome
            for edge in range(start, stop):
                pick -= self._edge_prob[edge]
                if pick < 0:
                    chosen = edge
                    break
            node = self._children[chosen]
        return node


class StrategyTable(dict[str, dict[str, float]]):
    """``{infoset name: {action: probability}}`` that is also a policy function.

    Calling it as ``table(role, observation, legal)`` gives the weights of the legal
    moves at the observed information set (uniform for an unknown one), the form the
    agent's and the server's players use for every format.
    """

    def __call__(self, role: int, observation: Any, legal: Sequence[str]) -> list[float]:
        at = self.get(observation.get("infoset"), {}) if isinstance(observation, dict) else {}
        weights = [float(at.get(move, 0.0)) for move in legal]
        return weights if sum(weights) > 0 else [1.0] * len(legal)


def equilibrium_strategy(game: ExtensivePlayable | ExtensiveGame,
                         time_limit: float = 10.0) -> StrategyTable:
    """A playing strategy: ``{infoset name: {action: probability}}`` (callable as a
    policy, see :class:`StrategyTable`).

    Exact (sequence-form LP) for two-player constant-sum games of moderate size,
    otherwise CFR+ for at most ``time_limit`` seconds. Games without perfect recall
    get the uniform strategy (no regret-based solver applies to them).
    """
    model = game.game if isinstance(game, ExtensivePlayable) else game
    return StrategyTable(strategy_dict(model, _playing_profile(model, time_limit)))


def _playing_profile(model: ExtensiveGame, time_limit: float) -> np.ndarray:
    if not model.perfect_recall:
        return model.uniform_strategy()
    started = time.monotonic()
    if (model.num_players == 2 and model.is_zero_sum()
            and model.num_sequences <= LP_MAX_SEQUENCES):
        try:
            return solve(model, "lp", time_limit=time_limit).strategy
        except LimitReached:
            pass  # fall through to CFR+ in the time that is left
    remaining = max(0.05, time_limit - (time.monotonic() - started))
    return solve(model, "cfr+", iterations=100_000, time_limit=remaining).strategy
