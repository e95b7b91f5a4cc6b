"""The cheapest brain (:class:`LegalBrain`): our legal moves from the rules text alone.

The agent keeps one beside the real brain, in a light worker process of its own
(:mod:`agent.gamer`), for its fallback move: when the real brain has no legal list
ready (a cold worker still importing, a game still being built, a worker that
crashed or ran out of memory), this one has. It uses the general engine
(:class:`gdl.reasoning.general_machine.GeneralMachine`: no grounding to blow up,
static relations too large to list are called top-down) and derives at most
:data:`LEGAL_LISTED` legal moves one at a time, so a role with 21^5 of them costs
no more than one with 21. It follows the match by the joint moves only: a GDL-II
observation (our own move and percepts) is a GameError, and the agent stops asking.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent.brains.base import Observation
from agent.brains.options import BrainOptions, GameSpec, role_index
from gdl.reasoning.machine import load_machine
from solvers.errors import GameError

LEGAL_LISTED = 64  # legal moves listed for the fallback's random choice


class LegalBrain:
    """Our legal moves at each step (module docstring); a :class:`agent.brains.base.Brain`.

    Joint moves are kept as told and applied when the legal moves are asked for, one
    step at a time: a request cancelled in between leaves the state of a whole step."""

    def __init__(self, spec: GameSpec, role: str, options: BrainOptions | None = None,
                 until: float | None = None) -> None:
        if spec.format != "gdl":
            raise GameError(f"the legal brain plays GDL, not {spec.format}")
        self.machine = load_machine(spec.text, engine="general", name=spec.name)
        self.role = role_index(self.machine.roles, role)
        self.state = self.machine.initial_state()
        self.step = 0
        self._told: list[Sequence[str]] = []  # joint moves not applied yet

    def metagame(self, until: float) -> dict[str, Any]:
        return {"engine": self.machine.engine_name, "brain": "legal"}

    def observe(self, observation: Observation, until: float | None = None,
                legal: Sequence[str] | None = None) -> None:
        if isinstance(observation, Mapping):
            raise GameError("a GDL-II observation: the legal brain follows joint moves only")
        if observation is not None:
            self._told.append(list(observation))
            self.step += 1

    def _catch_up(self) -> None:
        while self._told:
            self.state = self.machine.next_state(self.state,
                                                 self.machine.parse_joint(self._told[0]))
            del self._told[0]

    def legal(self) -> list[str]:
        self._catch_up()
        if self.machine.is_terminal(self.state):
            return []
        return [self.machine.move_to_kif(m) for m in
                self.machine.legal_moves_upto(self.state, self.role, LEGAL_LISTED)]

    def select(self, until: float) -> tuple[str, dict[str, Any]]:
        legal = self.legal()
        if not legal:
            raise GameError("no move to choose: the match is over")
        return legal[0], {"step": self.step + 1, "method": "first-legal"}

    def goals(self) -> list[int] | None:
        self._catch_up()
        return list(self.machine.goals(self.state))

    def stop(self) -> None:
        self._told = []
