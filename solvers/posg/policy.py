"""Playing a one-sided POSG from its HSVI bounds (Horák et al., AI 2023).

P1 plays the lower-bound stage strategy at its current belief: the strategy the
alpha-vectors certify. P2 plays its upper-bound stage strategy at P1's belief,
conditioned on the state it sees. Both track P1's belief b over the current partition:

1. Start from the initial partition and belief.
2. At each step solve the stage LP at (partition, b): P1 takes the lower-bound game
   (``stage_lp.lower_stage``), P2 the upper-bound game (``stage_lp.upper_stage``);
   play the mixed action (P2: the joint probabilities p(s, a2) divided by b(s)).
3. After P1's action a1 and observation o, the next belief is
   ``b'(s') ~ sum_(s, a2) p(s, a2) Pr[o, s' | s, a1, a2]`` with the P2 strategy p of
   that stage game (P1: the dual of its LP; P2: its own). If the observation had
   probability 0 under p (P2 deviated), P2 is assumed uniform; if still impossible,
   the belief becomes uniform over the new partition.

:func:`equilibrium_strategy` wraps this for the agent and the server's solver-backed
player: ``strategy(role, observation, legal) -> weights over legal``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from solvers.errors import GameRuntimeError
from solvers.posg.hsvi import Hsvi
from solvers.posg.model import PosgModel
from solvers.posg.stage_lp import StageSolution, lower_stage, upper_stage

DEFAULT_SOLVE_SECONDS = 5.0
DEFAULT_EPSILON = 0.5
OFF_BELIEF_MIX = 0.1        # weight of the seen state when P1's belief excludes it
STAGE_CACHE_SIZE = 10_000


class PosgStrategy:
    """Stage strategies of both players from solved HSVI bounds."""

    def __init__(self, solver: Hsvi) -> None:
        self.solver = solver
        self.model: PosgModel = solver.model
        # beliefs repeat in play (the initial one, beliefs after frequent observations):
        # keep each stage solution, keyed by (kind, partition, rounded belief)
        self._stages: dict[tuple[str, int, bytes], StageSolution] = {}

    def _stage(self, kind: str, partition: int, belief: np.ndarray) -> StageSolution:
        key = (kind, partition, np.round(belief, 12).tobytes())
        stage = self._stages.get(key)
        if stage is None:
            block = self.model.partition_block(partition)
            if kind == "lower":
                stage, _ = lower_stage(block, belief, self.solver.lower, self.model.discount)
            else:
                stage = upper_stage(block, belief, self.solver.upper, self.model.discount)
            if len(self._stages) >= STAGE_CACHE_SIZE:
                self._stages.clear()
            self._stages[key] = stage
        return stage

    @classmethod
    def solve(cls, model: PosgModel, time_limit: float = DEFAULT_SOLVE_SECONDS,
              epsilon: float = DEFAULT_EPSILON) -> PosgStrategy:
        solver = Hsvi(model, presolve_time=time_limit / 2)
        solver.solve(epsilon, time_limit / 2)
        return cls(solver)

    def p1_mixed(self, partition: int, belief: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """P1's mixed action over the partition's playable actions, and the P2 strategy
        (joint over (state, P2 action) rows) to update the belief with."""
        stage = self._stage("lower", partition, belief)
        return stage.p1, stage.p2

    def p2_mixed(self, partition: int, belief: np.ndarray,
                 state: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """P2's mixed action at ``state`` (over its playable actions), the joint strategy
        and the belief it was computed at."""
        block = self.model.partition_block(partition)
        i = int(self.model.local_index[state])
        if belief[i] < 1e-9:
            belief = (1 - OFF_BELIEF_MIX) * belief
            belief[i] += OFF_BELIEF_MIX
        stage = self._stage("upper", partition, belief)
        rows = stage.p2[block.row_start[i]:block.row_start[i + 1]]
        total = rows.sum()
        mixed = rows / total if total > 0 else np.full(len(rows), 1.0 / len(rows))
        return mixed, stage.p2, belief

    def next_belief(self, partition: int, belief: np.ndarray, joint: np.ndarray, a1: int,
                    observation: int) -> tuple[int, np.ndarray]:
        """(next partition, next belief) after ``a1`` and ``observation``."""
        block = self.model.partition_block(partition)
        branch = next((br for br in block.branches if block.a1[br.a1_index] == a1
                       and br.observation == observation), None)
        if branch is None:
            raise GameRuntimeError(f"observation {observation} cannot follow P1 action {a1} "
                                   f"in partition {partition}")
        uniform = belief[block.row_state] / np.diff(block.row_start)[block.row_state]
        for p2 in (joint, uniform):
            beta = p2 @ branch.trans
            if beta.sum() > 1e-12:
                return branch.target, beta / beta.sum()
        n = branch.trans.shape[1]
        return branch.target, np.full(n, 1.0 / n)


@dataclass
class _Track:
    step: int
    partition: int
    belief: np.ndarray
    joint: np.ndarray | None = None


def equilibrium_strategy(game: Any, time_limit: float = DEFAULT_SOLVE_SECONDS,
                         epsilon: float = DEFAULT_EPSILON,
                         ) -> Callable[[int, dict, Sequence[str]], list[float]]:
    """``strategy(role, observation, legal) -> weights`` for a :class:`PosgPlayable`.

    Solves the game once (``time_limit`` seconds); the returned function keeps P1's
    belief per role from the observations it is shown, one call per step (a call with
    ``step`` 0 starts a new match).
    """
    strategy = PosgStrategy.solve(game.model, time_limit, epsilon)
    model = game.model
    tracks: dict[int, _Track] = {}

    def advance(role: int, observation: dict) -> _Track:
        step = int(observation["step"])
        track = tracks.get(role)
        if step == 0 or track is None or step != track.step + 1 or track.joint is None:
            p = int(observation["partition"])
            if p == model.initial_partition and step == 0:
                belief = model.initial_belief.copy()
            else:                      # joined late: nothing known inside the partition
                belief = np.full(len(model.partition_states[p]), 1.0 / len(model.partition_states[p]))
            track = _Track(step, p, belief)
        else:
            a1 = game.a1_labels.index(observation["last_action"])
            o = model.obs_names.index(observation["observation"])
            p, belief = strategy.next_belief(track.partition, track.belief, track.joint, a1, o)
            track = _Track(step, p, belief)
        tracks[role] = track
        return track

    def choose(role: int, observation: dict, legal: Sequence[str]) -> list[float]:
        track = advance(role, observation)
        if role == 0:
            mixed, track.joint = strategy.p1_mixed(track.partition, track.belief)
            labels = [game.a1_labels[a] for a in model.a1_playable[track.partition]]
        else:
            s = int(observation["state_index"])
            mixed, track.joint, track.belief = strategy.p2_mixed(
                track.partition, track.belief, s)
            labels = [game.a2_labels[a] for a in model.a2_playable[s]]
        weight = dict(zip(labels, mixed, strict=True))
        return [float(weight.get(move, 0.0)) for move in legal]

    return choose
