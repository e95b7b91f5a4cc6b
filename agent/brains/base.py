"""The one interface of the agent's brains.

A brain plays one seat of one match inside the worker process (:mod:`agent.worker`),
which holds one and does not know its kind: :func:`agent.brains.factory.make_brain`
picks it from the game's format. The worker's requests map onto it:

- START: ``make_brain`` builds the game within the start clock, :meth:`Brain.observe`
  replays the steps already played (a restarted worker), :meth:`Brain.legal` gives
  the fallback for the first move, :meth:`Brain.metagame` thinks until the start
  clock (minus the margin) is used.
- PLAY: :meth:`Brain.observe` takes what the seat is told of the last step, then
  :meth:`Brain.legal` (the fallback the agent answers if the choice comes late) and
  :meth:`Brain.select` before the deadline.
- STOP: :meth:`Brain.observe` takes the last step, :meth:`Brain.goals` says the result.
- the end of the match (a new START, the worker's end): :meth:`Brain.stop`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

# What a seat is told after a step: GDL's joint move (KIF, role order), a GDL-II
# observation {"turn", "last_move", "percepts"} (a mapping), or a playable game's
# (.efg, tree, POSG) observation; None before the first step.
Observation = Sequence[str] | Mapping[str, Any] | Any | None


class Brain(Protocol):
    """One seat of one match (module docstring)."""

    @property
    def step(self) -> int:
        """Steps this seat has finished: the next :meth:`select` is for ``step + 1``."""
        ...

    def metagame(self, until: float) -> dict[str, Any]:
        """Think until ``until`` (the start clock); what was done, for the log."""
        ...

    def observe(self, observation: Observation, until: float | None = None,
                legal: Sequence[str] | None = None) -> None:
        """Take what the seat is told after a step (None before the first), with our
        legal moves when the manager tells them; any update of beliefs takes a share
        of the time left until ``until``. GameError when it does not fit the game."""
        ...

    def legal(self) -> list[str]:
        """Our legal moves as far as they are known (empty: none known, or the match
        is over): the agent's fallback when a choice comes late."""
        ...

    def select(self, until: float) -> tuple[str, dict[str, Any]]:
        """Our move, chosen before ``until``, and the decision record for the log."""
        ...

    def goals(self) -> list[int] | None:
        """The goal values (role order) of the match's end, if this brain knows them."""
        ...

    def stop(self) -> None:
        """The match is over: let go of what the brain holds (it is not asked again)."""
        ...
