"""Belief tracking for GDL-II: the states consistent with our own moves and percepts.

A GDL-II player learns after each step only the move played for it and its percepts
(``../shared/protocols/ggp-ii.md``). :class:`Belief` keeps the game states that agree
with that whole history, each with its probability when nature (``random``) and the
other players move uniformly at random (the Bayesian update of Monty Hall needs the
weights: the host's forced door makes switching win 2/3).

1. The start: the initial state, probability 1.
2. A step (:meth:`Belief.update`): for every state, every joint move whose own move is
   the one played for us (the others' moves enumerated while there are at most
   ``JOINT_ENUMERATION`` of them, else ``samples`` of them drawn per state); a child
   state is kept when our percepts after that joint move are the ones we got; its
   weight is the state's times the chance of the others' moves. Equal states merge.
3. While at most ``max_states`` states are consistent, the set is exact (enumerated).
   Beyond that it becomes ``particles`` states drawn by weight (systematic
   resampling): the set is then a sample, and later steps keep sampling.
4. Particle refill: when no state survives a step (a sample lost the true one, or the
   time ran out), states are drawn again from the start: random histories that agree
   with every step so far, others' moves drawn uniformly and rejected on a percept
   mismatch, until ``particles`` are found, the attempts are spent or the deadline.
5. Every loop checks the deadline: the belief is never the reason for a late move
   (a step cut short keeps the children found so far and is marked inexact).

Determinism: one ``random.Random(seed)``; states keep the order they were found in.
"""

from __future__ import annotations

import itertools
import math
import random
import time
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gdl.reasoning.machine import NATURE, StateMachine
from solvers.errors import GameError

State = Hashable
JOINT_ENUMERATION = 512  # joint moves of the others enumerated per state, above: sampled
REFILL_ATTEMPTS = 20  # random histories tried per particle wanted, at most


@dataclass(frozen=True)
class Observation:
    """What one GDL-II message tells a player: the turn, its own last move, its percepts."""

    turn: int
    last_move: str | None  # None before the first move
    percepts: tuple[str, ...] | None  # sorted KIF terms; None before the first move


def observation_of(message: Mapping[str, Any]) -> Observation:
    """An :class:`Observation` from the protocols' ``{"turn", "last_move", "percepts"}``;
    GameError when a field is malformed. NIL percepts after a move mean none."""
    turn, move, seen = message.get("turn"), message.get("last_move"), message.get("percepts")
    if not isinstance(turn, int) or turn < 0:
        raise GameError(f"GDL-II observation: turn must be an integer >= 0, got {turn!r}")
    if move is not None and not isinstance(move, str):
        raise GameError(f"GDL-II observation: last_move must be a move or null, got {move!r}")
    if seen is not None and not (isinstance(seen, list | tuple)
                                 and all(isinstance(p, str) for p in seen)):
        raise GameError(f"GDL-II observation: percepts must be a list of terms, got {seen!r}")
    if move is None:
        return Observation(turn, None, None)
    return Observation(turn, move, tuple(sorted(seen or ())))


def is_gdl2_observation(message: Any) -> bool:
    return isinstance(message, Mapping) and "turn" in message


class Belief:
    """The states consistent with one role's history (module docstring)."""

    def __init__(self, machine: StateMachine, role: int, *, max_states: int = 2000,
                 particles: int = 500, samples: int = 64, seed: int = 0) -> None:
        self.machine = machine
        self.role = role
        self.max_states = max_states
        self.particles = particles
        self.samples = samples
        self.rng = random.Random(seed)
        self.others = [r for r in range(len(machine.roles)) if r != role]
        self.weights: dict[State, float] = {machine.initial_state(): 1.0}
        self.exact = True  # the set is every consistent state (not a sample)
        self.history: list[tuple[Hashable, tuple[str, ...]]] = []  # (own move, percepts)
        self.refills = 0

    # -- reading it ------------------------------------------------------------------

    @property
    def states(self) -> list[State]:
        return list(self.weights)

    def probabilities(self) -> dict[State, float]:
        total = sum(self.weights.values())
        return {s: w / total for s, w in self.weights.items()}

    def sample(self, rng: random.Random) -> State:
        """One state drawn by weight."""
        states = list(self.weights)
        return rng.choices(states, weights=list(self.weights.values()))[0]

    def likeliest(self) -> State:
        if not self.weights:  # (a refill found nothing: the error was reported then)
            raise GameError("no game state agrees with the moves and percepts received")
        return max(self.weights, key=self.weights.__getitem__)

    def condition(self, terminal: bool) -> bool:
        """Keep only the terminal states (the match is over: STOP) or only the others
        (we are asked to move); False, changing nothing, when none would remain."""
        kept = {s: w for s, w in self.weights.items()
                if self.machine.is_terminal(s) == terminal}
        if not kept:
            return False
        self.weights = kept
        return True

    # -- a step --------------------------------------------------------------------------

    def update(self, move_kif: str, percepts: Sequence[str],
               deadline: float | None = None) -> None:
        """Take one step: ``move_kif`` was played for us and we saw ``percepts``."""
        move = self.machine.parse_move(move_kif, self.role)
        seen = tuple(sorted(percepts))
        self.history.append((move, seen))
        children: dict[State, float] = {}
        complete = True
        for state, weight in self.weights.items():
            if deadline is not None and time.monotonic() > deadline:
                complete = False
                break
            for child, chance in self._children(state, move, seen):
                children[child] = children.get(child, 0.0) + weight * chance
        if not children:
            self.weights = {}
            self._refill(deadline)
            return
        self.weights = children
        if not complete:
            self.exact = False
        if len(children) > self.max_states:
            self._resample()

    def take_joint(self, joint: Sequence[Hashable]) -> tuple[str, ...]:
        """Take a step whose whole joint move we were told (a GDL game master): the
        state is then known. Our percepts in it."""
        state = self.likeliest()
        seen = self.machine.percepts(state, joint)[self.role]
        self.history.append((joint[self.role], seen))
        self.weights = {self.machine.next_state(state, joint): 1.0}
        return seen

    def _children(self, state: State, move: Hashable,
                  seen: tuple[str, ...]) -> list[tuple[State, float]]:
        """The consistent children of ``state`` and the chance of the others' moves
        leading to each (sampled children carry equal shares of the state's mass)."""
        machine = self.machine
        if machine.is_terminal(state) or move not in machine.legal_moves(state, self.role):
            return []
        options = [machine.legal_moves(state, r) for r in self.others]
        count = math.prod(len(o) for o in options)
        if count <= JOINT_ENUMERATION:
            combos: Any = itertools.product(*options)
            chance = 1.0 / count
        else:
            combos = [tuple(self.rng.choice(o) for o in options) for _ in range(self.samples)]
            chance = 1.0 / self.samples
            self.exact = False
        found = []
        for others in combos:
            joint = self._joint(move, others)
            if machine.percepts(state, joint)[self.role] == seen:
                found.append((machine.next_state(state, joint), chance))
        return found

    def _joint(self, move: Hashable, others: Sequence[Hashable]) -> list[Hashable]:
        joint = list(others)
        joint.insert(self.role, move)
        return joint

    def _resample(self) -> None:
        """``particles`` states by weight (systematic resampling); repeats add up."""
        states = list(self.weights)
        weights = list(self.weights.values())
        total = sum(weights)
        step = total / self.particles
        point = self.rng.random() * step
        cumulative, index = weights[0], 0
        kept: dict[State, float] = {}
        for _ in range(self.particles):
            while point > cumulative and index < len(states) - 1:
                index += 1
                cumulative += weights[index]
            kept[states[index]] = kept.get(states[index], 0.0) + 1.0
            point += step
        self.weights = kept
        self.exact = False

    # -- particle refill -------------------------------------------------------------------

    def _refill(self, deadline: float | None) -> None:
        """Particles drawn from the start along the whole history (step 3)."""
        self.refills += 1
        self.exact = False
        found: dict[State, float] = {}
        for _ in range(self.particles * REFILL_ATTEMPTS):
            if len(found) >= self.particles or (
                    deadline is not None and time.monotonic() > deadline):
                break
            state = self._random_history()
            if state is not None:
                found[state] = found.get(state, 0.0) + 1.0
        if not found:
            raise GameError("no game state agrees with the moves and percepts received "
                            f"({len(self.history)} steps)")
        self.weights = found

    def _random_history(self) -> State | None:
        """One state at the end of a random history that agrees with ours (each step
        draws among the consistent children by weight), None at a dead end."""
        state = self.machine.initial_state()
        for move, seen in self.history:
            children = self._children(state, move, seen)
            if not children:
                return None
            state = self.rng.choices([c for c, _ in children],
                                     weights=[w for _, w in children])[0]
        return state


def chance_roles(machine: StateMachine) -> tuple[int, ...]:
    """Indices of GDL-II's nature role (played by the game master, uniformly)."""
    return tuple(i for i, r in enumerate(machine.roles) if r == NATURE)
