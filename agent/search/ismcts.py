"""Information set MCTS (ISMCTS) for GDL-II, single- or multiple-observer.

Cowling, Powley & Whitehouse, "Information Set Monte Carlo Tree Search", IEEE
TCIAIG 4(2), 2012, section V.C, with every role moving at every step as GDL has it:

1. Determinize: draw a state from the belief (:class:`agent.search.belief.Belief`), by
   its probability.
2. Select: every player role (with ``opponent_trees``; else only ours, the others
   playing uniformly at random, the model the belief's weights use: the search is
   then a best response to it) keeps its own tree, whose nodes are that role's
   information sets below the root: a child is keyed by the role's move and the
   percepts it got after the joint move, exactly what the role can tell apart. At each
   step each role in its tree picks among the moves legal in the determinization by
   UCB1 with availability counts (a move's exploration term uses how often it was
   available, not the node's visits: the paper's subset-armed bandit); a role with one
   legal move just plays it; ``random`` plays uniformly.
3. Expand: a role whose next information set has no node yet gets one (one per role and
   iteration, while under ``max_nodes``) and leaves its tree.
4. Simulate: once every role has left its tree, uniform random joint moves to a
   terminal state; the goals scaled to [0, 1] are the reward.
5. Back up: each role's visited nodes add the reward of that role to the moves it took.
6. Until the deadline (or ``iterations``), then the root's most visited move.

Determinism: one ``random.Random(seed)``; ties among unvisited moves are drawn by it.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Hashable
from dataclasses import dataclass

from agent.search.belief import Belief
from gdl.reasoning.machine import NATURE, StateMachine

MAX_STEPS = 10_000  # a guard against games whose play never ends


class _InfoNode:
    """One information set of one role: statistics per move, children by (move, percepts)."""

    __slots__ = ("visits", "reward", "available", "children")

    def __init__(self) -> None:
        self.visits: dict[Hashable, int] = {}
        self.reward: dict[Hashable, float] = {}
        self.available: dict[Hashable, int] = {}
        self.children: dict[tuple[Hashable, tuple[str, ...]], _InfoNode] = {}

    def select(self, moves: tuple[Hashable, ...], exploration: float,
               rng: random.Random) -> Hashable:
        for m in moves:
            self.available[m] = self.available.get(m, 0) + 1
        fresh = [m for m in moves if m not in self.visits]
        if fresh:
            return rng.choice(fresh)

        def ucb(m: Hashable) -> float:
            n = self.visits[m]
            return self.reward[m] / n + exploration * math.sqrt(math.log(self.available[m]) / n)

        return max(moves, key=ucb)

    def add(self, move: Hashable, reward: float) -> None:
        self.visits[move] = self.visits.get(move, 0) + 1
        self.reward[move] = self.reward.get(move, 0.0) + reward


@dataclass
class IsmctsResult:
    moves: list[Hashable]  # our legal moves seen at the root
    visits: list[int]
    means: list[float]  # mean reward in [0, 1]
    iterations: int
    nodes: int

    def best_move(self) -> Hashable:
        return self.moves[max(range(len(self.moves)), key=lambda i: (self.visits[i], -i))]


class ISMCTS:
    """ISMCTS over a GDL-II state machine for role ``role`` (module docstring)."""

    def __init__(self, machine: StateMachine, role: int, *, exploration: float = 0.7,
                 max_nodes: int = 200_000, seed: int = 0,
                 opponent_trees: bool = False) -> None:
        self.machine = machine
        self.role = role
        self.exploration = exploration
        self.max_nodes = max_nodes
        self.rng = random.Random(seed)
        # the roles with a tree: all players (MO-ISMCTS), or only us, the others then
        # moving uniformly at random as the belief assumes (a best response to that)
        self.players = [r for r, name in enumerate(machine.roles)
                        if name != NATURE and (opponent_trees or r == role)]

    def search(self, belief: Belief, deadline: float,
               iterations: int | None = None) -> IsmctsResult:
        roots = {r: _InfoNode() for r in self.players}
        nodes, done = len(roots), 0
        while time.monotonic() < deadline and (iterations is None or done < iterations):
            nodes += self._iterate(belief.sample(self.rng), roots, nodes < self.max_nodes)
            done += 1
        root = roots[self.role]
        moves = list(root.available)
        return IsmctsResult(moves, [root.visits.get(m, 0) for m in moves],
                            [root.reward.get(m, 0.0) / max(1, root.visits.get(m, 0))
                             for m in moves], done, nodes)

    def _iterate(self, state: Hashable, roots: dict[int, _InfoNode], grow: bool) -> int:
        machine, rng = self.machine, self.rng
        at: dict[int, _InfoNode | None] = dict(roots)
        paths: dict[int, list[tuple[_InfoNode, Hashable]]] = {r: [] for r in self.players}
        added = 0
        for _ in range(MAX_STEPS):
            if machine.is_terminal(state):
                break
            legal = [machine.legal_moves(state, r) for r in range(len(machine.roles))]
            joint = []
            for r, moves in enumerate(legal):
                node = at.get(r)
                if node is None or len(moves) == 1:
                    joint.append(moves[0] if len(moves) == 1 else rng.choice(moves))
                else:
                    move = node.select(moves, self.exploration, rng)
                    paths[r].append((node, move))
                    joint.append(move)
            if any(node is not None for node in at.values()):
                seen = machine.percepts(state, joint)
                for r, node in at.items():
                    if node is None:
                        continue
                    key = (joint[r], seen[r])
                    child = node.children.get(key)
                    if child is None and grow:
                        child = node.children[key] = _InfoNode()
                        added += 1
                        at[r] = None  # expanded: this role leaves its tree
                    else:
                        at[r] = child
            state = machine.next_state(state, joint)
        goals = machine.goals(state) if machine.is_terminal(state) else None
        for r, path in paths.items():
            reward = 0.5 if goals is None else goals[r] / 100.0
            for node, move in path:
                node.add(move, reward)
        return added
