"""The brain of a GDL game without ``sees`` (:class:`SwitchingGdlBrain`): the GDL brain,
until a GDL-II observation arrives (a game master may speak GDL-II for any game, and
then tells only our own move and percepts); from then on the GDL-II brain of the same
game, which tracks what we may believe instead of the state."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent.brains.base import Brain, Observation
from agent.brains.gdl import GdlBrain
from agent.brains.gdl2 import Gdl2Brain


class SwitchingGdlBrain:
    """A :class:`agent.brains.base.Brain` that delegates (module docstring)."""

    def __init__(self, gdl: GdlBrain) -> None:
        self.brain: Brain = gdl
        self._gdl: GdlBrain | None = gdl  # None once the GDL-II brain plays

    @property
    def step(self) -> int:
        return self.brain.step

    def metagame(self, until: float) -> dict[str, Any]:
        return self.brain.metagame(until)

    def observe(self, observation: Observation, until: float | None = None,
                legal: Sequence[str] | None = None) -> None:
        if isinstance(observation, Mapping) and self._gdl is not None:
            gdl, self._gdl = self._gdl, None
            self.brain = Gdl2Brain(gdl.machine, gdl.role, gdl.options)
            gdl.stop()
        self.brain.observe(observation, until, legal)

    def legal(self) -> list[str]:
        return self.brain.legal()

    def select(self, until: float) -> tuple[str, dict[str, Any]]:
        return self.brain.select(until)

    def goals(self) -> list[int] | None:
        return self.brain.goals()

    def stop(self) -> None:
        self.brain.stop()
