"""Results of the simultaneous-move solvers: behavioral strategies and node values as arrays.

A :class:`Solution` (baseline) holds, for every node ``h``, both players' mixed
strategies ``b_0(h)``, ``b_1(h)`` and the node's equilibrium payoffs ``U(b | h)``. A
:class:`PartialSolution` (interval heuristic) holds them only for the nodes the
algorithm solved: its *support* (the partial behavioral strategy, the nodes reached
with positive probability from the root) and the *witness* subgames it solved to test
pivots. Strategies are flat per player: node ``h``'s actions are
``strategy[p][action_start[p, h]:action_start[p, h + 1]]`` (see :mod:`.model`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from solvers.report import mixed, player_keys
from solvers.simultaneous.model import SimultaneousGame, concat_ranges


@dataclass
class Solution:
    """A subgame-perfect equilibrium of the whole game (all nodes solved)."""

    game: SimultaneousGame
    solver: str
    selection: str
    strategy: tuple[np.ndarray, np.ndarray]
    values: np.ndarray  # [N, 2], NaN where not solved
    solved: np.ndarray  # [N] bool
    method: np.ndarray  # [N] int8: matrix method (solvers.matrix.equilibrium), -1 chance/unsolved
    seconds: float = 0.0
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def root_values(self) -> tuple[float, float]:
        v = self.values[self.game.root]
        return float(v[0]), float(v[1])

    def node_strategy(self, node: int, player: int) -> np.ndarray:
        start = self.game.action_start[player]
        return self.strategy[player][start[node]:start[node + 1]]

    def root_strategy(self) -> dict[str, dict[str, float]]:
        """``{player: {action: probability}}`` at the root (empty when chance starts)."""
        g = self.game
        if g.is_chance(g.root) or not self.solved[g.root]:
            return {}
        keys = player_keys(g.player_names)
        return {keys[p]: mixed(g.actions(g.root, p), self.node_strategy(g.root, p).tolist())
                for p in (0, 1)}

    def entry_weights(self) -> np.ndarray:
        """[E]: probability of every entry given its node is reached (0 in unsolved nodes)."""
        g = self.game
        weights = g.entry_prob.copy()
        e = np.flatnonzero(g.entry_action[0] >= 0)
        weights[e] = (self.strategy[0][g.entry_action[0, e]]
                      * self.strategy[1][g.entry_action[1, e]])
        return np.where(self.solved[g.entry_node], weights, 0.0)

    def support(self) -> np.ndarray:
        """supp(b): the nodes where the strategy is defined (Definition 4.3.2)."""
        return np.flatnonzero(self.solved)

    def reachable(self) -> np.ndarray:
        """Nodes reached with positive probability from the root, in breadth-first order."""
        g = self.game
        weights = self.entry_weights()
        seen = np.zeros(g.num_nodes, dtype=bool)
        seen[g.root] = True
        order = [np.array([g.root])]
        frontier = order[0]
        while frontier.size:
            idx = concat_ranges(g.entry_start[frontier], np.diff(g.entry_start)[frontier])
            idx = idx[(g.entry_child[idx] >= 0) & (weights[idx] > 0)]
            kids = np.unique(g.entry_child[idx])
            frontier = kids[~seen[kids]]
            seen[frontier] = True
            order.append(frontier)
        return np.concatenate(order)


@dataclass
class PartialSolution(Solution):
    """The interval heuristic's partial behavioral strategy (pbs) and its witnesses.

    ``support()`` is supp(b'), the nodes where the pbs is defined (``solved``): the
    pivot path, the children of mixed nodes and the subgames solved to test pivots;
    ``reachable()`` is its part reached with positive probability. Deviation entries
    whose child was never solved are covered by the utility-interval maximum.
    """
