"""The brain of a non-GDL match (``.efg``, tree format, POSG) over the websocket
protocol (:class:`PlayableBrain`): the format's equilibrium strategy
(:func:`gdl.formats.equilibrium_policy`), solved within the start clock, else uniform.
The seat's observation and legal moves come with each request."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Sequence
from typing import Any

from agent.brains.base import Observation
from agent.brains.moves import draw
from agent.brains.options import BrainOptions, GameSpec, role_index
from gdl.formats import equilibrium_policy, load_game_text
from solvers.errors import GameError

log = logging.getLogger(__name__)


class PlayableBrain:
    """One non-GDL match (module docstring); a :class:`agent.brains.base.Brain`."""

    def __init__(self, spec: GameSpec, role: str, options: BrainOptions) -> None:
        self.game = load_game_text(spec.format, spec.text, name=spec.name)
        self.role = role_index(list(self.game.roles), role)
        self.rng = random.Random(options.seed)
        self.policy = None
        self.step = 0
        self.observation: Observation = None  # the last one told
        self.legal_moves: list[str] = []      # the legal moves told with it

    def metagame(self, until: float) -> dict[str, Any]:
        started = time.monotonic()
        try:
            self.policy = equilibrium_policy(self.game, max(0.1, until - started))
        except GameError as exc:
            log.warning("no equilibrium strategy: %s", exc)
        return {"format": self.game.format, "policy": self.policy is not None,
                "time": round(time.monotonic() - started, 3)}

    def observe(self, observation: Observation, until: float | None = None,
                legal: Sequence[str] | None = None) -> None:
        self.observation = observation
        if legal is not None:
            self.legal_moves = list(legal)

    def legal(self) -> list[str]:
        return list(self.legal_moves)

    def select(self, until: float) -> tuple[str, dict[str, Any]]:
        """A draw from the equilibrium strategy at the last observation, else uniform."""
        if not self.legal_moves:
            raise GameError("no legal moves were told for this step")
        self.step += 1
        legal = self.legal_moves
        if self.policy is not None:
            try:
                weights = self.policy(self.role, self.observation, list(legal))
            except (GameError, KeyError, ValueError, IndexError) as exc:
                log.warning("no strategy for %r (%s): playing uniformly", self.observation, exc)
            else:
                return legal[draw(weights, self.rng)], {"step": self.step, "method": "equilibrium"}
        return self.rng.choice(list(legal)), {"step": self.step, "method": "uniform"}

    def goals(self) -> None:
        """Not known here: the server says the payoffs."""
        return None

    def stop(self) -> None:
        self.policy = None
