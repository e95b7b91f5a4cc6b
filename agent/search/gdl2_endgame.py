"""The exact best response over a small belief, for the end of a GDL-II game.

The belief (:class:`agent.search.belief.Belief`) weighs states as if the other roles
moved uniformly at random; against that model the best move is an expectimax over
our information sets:

1. The value of a belief (states with probabilities, none terminal) is the best, over
   our legal moves, of the expected value after the step.
2. After our move, every state and every joint move of the others (each with its
   chance) gives a child; children are grouped by the percepts we would get (what we
   can tell apart). A group's terminal children count their goal; the others form the
   next belief, valued recursively.
3. Beliefs are memoized (states and rounded probabilities); past ``max_nodes``
   beliefs or the deadline, :class:`LimitReached`: the search then decides.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Hashable

from agent.search.belief import JOINT_ENUMERATION
from gdl.reasoning.machine import StateMachine
from solvers.errors import LimitReached

State = Hashable


class BestResponse:
    """Expectimax for ``role`` of ``machine`` (module docstring)."""

    def __init__(self, machine: StateMachine, role: int, deadline: float,
                 max_nodes: int = 20_000) -> None:
        self.machine = machine
        self.role = role
        self.deadline = deadline
        self.max_nodes = max_nodes
        self.others = [r for r in range(len(machine.roles)) if r != role]
        self.memo: dict[frozenset, float] = {}

    def move_values(self, belief: dict[State, float]) -> dict[Hashable, float]:
        """Each of our legal moves' expected goal (0..100) from ``belief`` (normalised,
        non-terminal states); LimitReached when it does not fit the budget."""
        machine = self.machine
        first = next(iter(belief))
        return {move: self._after(belief, move)
                for move in machine.legal_moves(first, self.role)}

    def _value(self, belief: dict[State, float]) -> float:
        key = frozenset((s, round(p, 9)) for s, p in belief.items())
        known = self.memo.get(key)
        if known is None:
            if len(self.memo) >= self.max_nodes:
                raise LimitReached(f"more than {self.max_nodes} beliefs")
            if time.monotonic() > self.deadline:
                raise LimitReached("no time for the exact endgame")
            known = self.memo[key] = max(self.move_values(belief).values())
        return known

    def _after(self, belief: dict[State, float], move: Hashable) -> float:
        machine = self.machine
        groups: dict[tuple[str, ...], dict[State, float]] = {}
        for state, p in belief.items():
            if time.monotonic() > self.deadline:  # (a big belief takes a while per move)
                raise LimitReached("no time for the exact endgame")
            if move not in machine.legal_moves(state, self.role):
                continue
            options = [machine.legal_moves(state, r) for r in self.others]
            combos = list(itertools.product(*options))
            if len(combos) > JOINT_ENUMERATION:
                raise LimitReached(f"{len(combos)} joint moves of the others")
            share = p / len(combos)
            for others in combos:
                joint = list(others)
                joint.insert(self.role, move)
                seen = machine.percepts(state, joint)[self.role]
                child = machine.next_state(state, joint)
                group = groups.setdefault(seen, {})
                group[child] = group.get(child, 0.0) + share
        value = 0.0
        for group in groups.values():
            rest: dict[State, float] = {}
            for child, p in group.items():
                if machine.is_terminal(child):
                    value += p * machine.goals(child)[self.role]
                else:
                    rest[child] = p
            mass = sum(rest.values())
            if mass > 0:
                value += mass * self._value({c: p / mass for c, p in rest.items()})
        return value
