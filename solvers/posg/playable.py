"""One-sided POSG files as playable games (:class:`solvers.playable.PlayableGame`).

Roles ``("P1", "P2")``. P1 (the maximizer) is told its partition, its last action and
its last observation; P2 is told the state and the last joint action and observation
(P2 has perfect information in a one-sided POSG). Nature's moves (next state and
observation) are drawn from ``Pr[o, s' | s, a1, a2]`` with the generator passed in.

The game stops at an absorbing state (every joint action loops back with reward 0,
like ``end`` in the pursuit-evasion files) or after ``horizon`` steps. The default
horizon, 100, keeps what is cut off small: with the usual discount 0.95 the steps
after 100 weigh ``0.95**100`` (about 0.6%) of the rewards still to come; a match may
pass its own horizon. Payoffs are the discounted sum of rewards for P1 and its
negation for P2.

A state is the tuple ``(step, state, last a1, last a2, last observation, discounted
reward so far)``, with -1 for "none yet".
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from solvers.errors import GameRuntimeError
from solvers.posg.model import PosgModel
from solvers.posg.reader import read_posg

DEFAULT_HORIZON = 100

PosgState = tuple[int, int, int, int, int, float]


def unique_labels(names: Sequence[str]) -> list[str]:
    """Names as move strings; a name used twice gets ``#index`` so moves stay unique."""
    seen: dict[str, int] = {}
    for n in names:
        seen[n] = seen.get(n, 0) + 1
    return [n if seen[n] == 1 else f"{n}#{i}" for i, n in enumerate(names)]


def absorbing_states(model: PosgModel) -> np.ndarray:
    """States every joint action keeps with probability 1 and reward 0."""
    loops = np.zeros(model.n_states)
    np.add.at(loops, model.t_s, np.where(model.t_next == model.t_s, model.t_prob, 0.0))
    n_joint = np.array([len(model.a1_playable[model.partition_of[s]]) * len(model.a2_playable[s])
                        for s in range(model.n_states)])
    rewarded = np.zeros(model.n_states, dtype=bool)
    rewarded[model.r_s[model.r_value != 0]] = True
    return (np.abs(loops - n_joint) < 1e-9 * n_joint) & ~rewarded


class PosgPlayable:
    """A one-sided POSG as a playable game (see the module docstring)."""

    format = "posg"
    roles = ("P1", "P2")

    def __init__(self, model: PosgModel, name: str, text: str,
                 horizon: int = DEFAULT_HORIZON) -> None:
        if horizon < 1:
            raise GameRuntimeError(f"the horizon must be at least 1 step, got {horizon}")
        self.model = model
        self.horizon = horizon
        self._name = name
        self._text = text
        self.a1_labels = unique_labels(model.a1_names)
        self.a2_labels = unique_labels(model.a2_names)
        self._a1_index = {n: i for i, n in enumerate(self.a1_labels)}
        self._a2_index = {n: i for i, n in enumerate(self.a2_labels)}
        self._absorbing = absorbing_states(model)
        starts = np.searchsorted(model.t_s, np.arange(model.n_states + 1))
        self._t_start = starts
        self._rewards = {(int(s), int(a), int(b)): float(r) for s, a, b, r in zip(
            model.r_s, model.r_a1, model.r_a2, model.r_value, strict=True)}

    @classmethod
    def from_text(cls, text: str, name: str = "game", filename: str | None = None,
                  horizon: int = DEFAULT_HORIZON) -> PosgPlayable:
        return cls(read_posg(text, filename or name), name, text, horizon)

    @property
    def name(self) -> str:
        return self._name

    hidden_information = True  # P1 sees its partition, not the state

    def search_model(self) -> None:
        return None

    def state_text(self, state: PosgState) -> str:
        return str(state)

    def description(self) -> dict[str, str]:
        return {"format": "posg", "name": self._name, "text": self._text}

    def initial_state(self, rng: random.Random) -> PosgState:
        members = self.model.partition_states[self.model.initial_partition]
        weights = self.model.initial_belief
        s = int(members[_draw(weights, rng)])
        return (0, s, -1, -1, -1, 0.0)

    def is_terminal(self, state: PosgState) -> bool:
        return state[0] >= self.horizon or bool(self._absorbing[state[1]])

    def legal_moves(self, state: PosgState, role: int) -> list[str]:
        if self.is_terminal(state):
            return []
        s = state[1]
        if role == 0:
            return [self.a1_labels[a] for a in self.model.a1_playable[self.model.partition_of[s]]]
        return [self.a2_labels[a] for a in self.model.a2_playable[s]]

    def next_state(self, state: PosgState, moves: Sequence[str | None],
                   rng: random.Random) -> PosgState:
        step, s, _, _, _, total = state
        if self.is_terminal(state):
            raise GameRuntimeError("the game is over")
        a1 = self._move(moves[0], self._a1_index, self.legal_moves(state, 0), "P1")
        a2 = self._move(moves[1], self._a2_index, self.legal_moves(state, 1), "P2")
        m = self.model
        lo, hi = self._t_start[s], self._t_start[s + 1]
        sel = lo + np.flatnonzero((m.t_a1[lo:hi] == a1) & (m.t_a2[lo:hi] == a2))
        k = sel[_draw(m.t_prob[sel], rng)]
        reward = self._rewards.get((s, a1, a2), 0.0)
        total += m.discount ** step * reward
        return (step + 1, int(m.t_next[k]), a1, a2, int(m.t_o[k]), total)

    def _move(self, move: str | None, index: dict[str, int], legal: list[str], role: str) -> int:
        if move not in legal:
            raise GameRuntimeError(f"{role} move {move!r} is not legal here")
        return index[move]

    def payoffs(self, state: PosgState) -> list[float]:
        return [state[5], -state[5]]

    def observation(self, state: PosgState, role: int) -> dict[str, Any]:
        step, s, a1, a2, o, _ = state
        m = self.model
        seen: dict[str, Any] = {
            "step": step,
            "partition": int(m.partition_of[s]),
            "last_action": self.a1_labels[a1] if a1 >= 0 else None,
            "observation": m.obs_names[o] if o >= 0 else None,
        }
        if role == 1:
            seen.update(state=m.state_names[s], state_index=s,
                        last_actions=[self.a1_labels[a1], self.a2_labels[a2]] if a1 >= 0 else None)
        return seen


def _draw(weights: np.ndarray, rng: random.Random) -> int:
    cumulative = np.cumsum(weights)
    return min(int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right")),
               len(weights) - 1)
