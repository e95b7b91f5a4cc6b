"""A GDL-II match (rules with ``sees``), run inside the agent's worker process.

The player is told after each step only its own move and its percepts (the GGP-II
``PLAY``/``STOP`` of ``../shared/protocols/ggp-ii.md``, or the websocket observation
``{"turn", "last_move", "percepts"}`` of ``server/PROTOCOL.md``). :class:`Gdl2Brain`
is the :class:`agent.brains.base.Brain` of such a match (the GDL one is
:class:`agent.brains.gdl.GdlBrain`):

1. Start clock: when the game's imperfect-information tree is small (at most
   ``EXACT_NODES`` nodes), it is expanded into an extensive-form game and solved (CFR+,
   :mod:`agent.search.gdl2_exact`) for at most half the clock; the strategy is then played by
   drawing from it at our information set (our own moves and percepts so far).
2. Each step: the belief (:class:`agent.search.belief.Belief`) takes the move played
   for us and our percepts, within a share of the play clock.
3. The move: forced when there is one; the solved strategy when the information set is
   in it; else, while the belief is exact and small enough, the exact best response to
   uniformly random others (:mod:`agent.search.gdl2_endgame`, a quarter of the clock at
   most); else ISMCTS (:class:`agent.search.ismcts.ISMCTS`) over states drawn from the belief
   until the deadline, its most visited move.

A game master that speaks only GDL (``PLAY`` with the joint move) tells us every move:
then the belief follows the true state exactly (the percepts are computed here).
"""

from __future__ import annotations

import random
import time
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from agent.brains.base import Observation
from agent.brains.moves import draw
from agent.search.belief import Belief, is_gdl2_observation, observation_of
from agent.search.gdl2_endgame import BestResponse
from agent.search.gdl2_exact import solve_small_game
from agent.search.ismcts import ISMCTS
from gdl.reasoning.machine import StateMachine
from solvers.errors import LimitReached

BELIEF_SHARE = 0.5  # of the time to the deadline a belief update may take
EXACT_SHARE = 0.5  # of the start clock the exact solve may take
ENDGAME_SHARE = 0.25  # of the play clock the exact endgame may take


class Gdl2Brain:
    """One GDL-II match (module docstring); a :class:`agent.brains.base.Brain`."""

    def __init__(self, machine: StateMachine, role: int, options: Any) -> None:
        self.machine = machine
        self.role = role
        self.options = options
        self.rng = random.Random(options.seed)
        self.belief = Belief(machine, role, seed=options.seed)
        self.search = ISMCTS(machine, role, max_nodes=options.max_nodes, seed=options.seed)
        self.step = 0
        self.strategy: Any = None  # an agent.search.gdl2_exact.SolvedStrategy when solved
        self.info_key: tuple[tuple[str, tuple[str, ...]], ...] = ()  # our history as KIF

    # -- the match ----------------------------------------------------------------------

    def metagame(self, until: float) -> dict[str, Any]:
        started = time.monotonic()
        info: dict[str, Any] = {"engine": self.machine.engine_name, "gdl2": True,
                                "roles": len(self.machine.roles)}
        if self.step == 0:
            budget = started + EXACT_SHARE * (until - started)
            solved = solve_small_game(self.machine, budget, self.options.presolve_nodes)
            if isinstance(solved, str):
                info["exact"] = solved
            else:
                self.strategy = solved
                info["exact"] = solved.summary
        info["time"] = round(time.monotonic() - started, 3)
        return info

    def observe(self, observation: Observation, until: float | None = None,
                legal: Sequence[str] | None = None) -> None:
        """Take a step: a GDL-II observation (or a GDL joint move); None before the
        first. The belief update takes at most ``BELIEF_SHARE`` of the time to ``until``."""
        if observation is None:
            return
        if is_gdl2_observation(observation):
            seen = observation_of(observation)  # type: ignore[arg-type]
            if seen.last_move is None:
                return
            deadline = None if until is None else (
                time.monotonic() + BELIEF_SHARE * max(0.0, until - time.monotonic()))
            self.belief.update(seen.last_move, seen.percepts or (), deadline)
            # (as the expansion spells it: the strategy is looked up by that name)
            own = self.machine.move_to_kif(self.machine.parse_move(seen.last_move, self.role))
            step = (own, seen.percepts or ())
        else:  # the joint move: the state is known, the percepts follow from it
            moves = list(observation)  # type: ignore[arg-type]
            joint = self.machine.parse_joint(moves)
            step = (moves[self.role], self.belief.take_joint(joint))
        self.info_key += (step,)
        self.step += 1

    def legal(self) -> list[str]:
        self.belief.condition(terminal=False)  # asked to move: the match goes on
        state = self.belief.likeliest()
        if self.machine.is_terminal(state):
            return []
        return [self.machine.move_to_kif(m) for m in self.machine.legal_moves(state, self.role)]

    def goals(self) -> list[int]:
        """Our expected goals over the belief's terminal states (rounded)."""
        self.belief.condition(terminal=True)  # the match is over
        probabilities = self.belief.probabilities()
        mean = np.zeros(len(self.machine.roles))
        for state, p in probabilities.items():
            if self.machine.is_terminal(state):
                mean += p * np.asarray(self.machine.goals(state), dtype=float)
        return [round(float(v)) for v in mean]

    def select(self, until: float) -> tuple[str, dict[str, Any]]:
        started = time.monotonic()
        legal = self.legal()
        info: dict[str, Any] = {"step": self.step + 1, "belief": len(self.belief.weights),
                                "belief_exact": self.belief.exact}
        move = None
        if len(legal) == 1:
            move, info["method"] = legal[0], "forced"
        elif self.strategy is not None:
            weights = self.strategy.at(self.role, self.info_key, legal)
            if weights is not None:
                move = legal[draw(weights, self.rng)]
                info["method"] = "exact"
        if move is None and self.belief.exact:
            move = self._endgame_move(started + ENDGAME_SHARE * (until - started), info)
        if move is None:
            result = self.search.search(self.belief, until)
            info.update(method="ismcts", iterations=result.iterations, nodes=result.nodes)
            best: Hashable = result.best_move() if result.moves else None
            move = self.machine.move_to_kif(best) if best is not None else self.rng.choice(legal)
            if result.moves:
                info["value"] = round(100 * max(result.means), 2)
        info["time"] = round(time.monotonic() - started, 3)
        return move, info

    def _endgame_move(self, until: float, info: dict[str, Any]) -> str | None:
        """The exact best response to uniform others over the belief, if it fits."""
        try:
            values = BestResponse(self.machine, self.role, until).move_values(
                self.belief.probabilities())
        except LimitReached:
            return None
        best = max(values, key=values.__getitem__)  # (ties: the first legal move)
        info.update(method="endgame", value=round(values[best], 2))
        return self.machine.move_to_kif(best)

    def stop(self) -> None:
        self.strategy = None
