"""Monte Carlo CFR: chance sampling (vectorised) and outcome sampling.

Chance-sampled CFR (``../shared/seeds/003_*``; Zinkevich et al. 2007, Lanctot et al.,
"Monte Carlo Sampling for Regret Minimization in Extensive Games", NIPS 2009):

1. Each iteration, sample one outcome at every chance node (seeded generator).
2. Run the CFR iteration of :class:`.cfr.CFR` with the chance reach of every terminal
   replaced by 1 if all chance edges on its path were sampled and 0 otherwise (the
   sampled values are unbiased: sampling probability and chance probability cancel).
   The mask is one sparse product (terminals x chance edges) per iteration, so the
   pass stays vectorised.

Outcome-sampling MCCFR (Lanctot et al. 2009, section 3.2; as OpenSpiel's
``OutcomeSamplingSolver``), for games too big for full traversals:

1. For each player i in turn, sample one path from the root: chance by its
   probabilities, the other players by their current strategy, player i by
   epsilon * uniform + (1 - epsilon) * current strategy (epsilon = 0.6).
2. Walking back up, estimate each node's value as u_i(z) / q(suffix) along the sampled
   action (importance weights), and at i's information sets add the sampled
   counterfactual regrets (child value - node value) * pi_{-i} / q and the average
   strategy increment pi_i * sigma / q.
3. The average strategy converges to equilibrium in two-player zero-sum games.

Each outcome-sampling iteration touches one path, not the tree.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from solvers.extensive.cfr import CFR
from solvers.extensive.model import CHANCE, TERMINAL, ExtensiveGame
from solvers.extensive.sequence_form import SequenceForm


class ChanceSamplingCFR(CFR):
    name = "mccfr"

    def __init__(self, game: ExtensiveGame, seed: int = 0) -> None:
        super().__init__(game)
        self.rng = np.random.default_rng(seed)
        chance_nodes = np.flatnonzero(game.node_kind == CHANCE)
        starts, stops = game.child_start[chance_nodes], game.child_start[chance_nodes + 1]
        counts = stops - starts
        edges = np.concatenate([np.arange(a, b) for a, b in zip(starts, stops, strict=True)]) \
            if len(chance_nodes) else np.zeros(0, dtype=np.int64)
        self._edge_owner = np.repeat(np.arange(len(chance_nodes)), counts)
        probs = game.edge_prob[edges]
        cum = np.cumsum(probs)
        first = np.cumsum(counts) - counts
        # cumulative probability inside each node: [low, high) of every edge
        self._edge_high = cum - np.repeat(cum[first] - probs[first], counts)
        self._edge_low = self._edge_high - probs
        # the last edge of a node takes whatever rounding left above its cumulative sum
        self._edge_high[first + counts - 1] = np.inf
        self._paths = _terminal_chance_edges(game, edges)
        self._mask = None
        self._mask_iteration = -1

    def chance_weights(self) -> np.ndarray:
        if self._mask_iteration != self.iteration:
            u = self.rng.random(int(self._edge_owner.max(initial=-1)) + 1)[self._edge_owner]
            missed = ~((self._edge_low <= u) & (u < self._edge_high))
            self._mask = (self._paths @ missed.astype(np.float64) == 0).astype(np.float64)
            self._mask_iteration = self.iteration
        return self._mask


def _terminal_chance_edges(game: ExtensiveGame, edges: np.ndarray) -> sparse.csr_matrix:
    """Incidence matrix: terminal t x chance edge e, 1 if e lies on t's path."""
    position = np.full(len(game.children), -1, dtype=np.int64)
    position[edges] = np.arange(len(edges))
    rows: list[int] = []
    cols: list[int] = []
    parent, action, child_start = game.node_parent, game.node_action, game.child_start
    for t, node in enumerate(game.terminal_nodes.tolist()):
        while parent[node] >= 0:
            edge = position[child_start[parent[node]] + action[node]]
            if edge >= 0:
                rows.append(t)
                cols.append(int(edge))
            node = parent[node]
    data = np.ones(len(rows))
    return sparse.csr_matrix((data, (rows, cols)), shape=(len(game.terminal_nodes), len(edges)))


class OutcomeSamplingMCCFR:
    """Outcome-sampling MCCFR (see the module docstring); same API as :class:`.cfr.CFR`."""

    name = "mccfr-outcome"

    def __init__(self, game: ExtensiveGame, seed: int = 0, epsilon: float = 0.6) -> None:
        game.require_perfect_recall(self.name)
        self.game = game
        self.rng = np.random.default_rng(seed)
        self.epsilon = epsilon
        self.iteration = 0
        # plain lists: one path walk touches a few nodes, where Python scalars beat numpy
        self._regret = [0.0] * game.num_actions
        self._policy_sum = [0.0] * game.num_actions
        self._kind = game.node_kind.tolist()
        self._infoset = game.node_infoset.tolist()
        self._player = game.node_player.tolist()
        self._child_start = game.child_start.tolist()
        self._children = game.children.tolist()
        self._edge_prob = game.edge_prob.tolist()
        self._action_start = game.infoset_action_start.tolist()
        self._utility = game.node_utility.tolist()
        self._form = SequenceForm(game)

    def iterate(self, iterations: int = 1) -> None:
        for _ in range(iterations):
            self.iteration += 1
            for player in range(self.game.num_players):
                self._episode(player)

    def _policy(self, lo: int, hi: int) -> list[float]:
        """Regret matching at one information set."""
        positive = [r if r > 0.0 else 0.0 for r in self._regret[lo:hi]]
        total = sum(positive)
        if total > 0.0:
            return [r / total for r in positive]
        return [1.0 / (hi - lo)] * (hi - lo)

    def _episode(self, player: int) -> None:
        random = self.rng.random
        epsilon = self.epsilon
        node = 0
        # (first action, policy, sampling policy, sampled action, my, opp and sample
        # reach before the action, whether ``player`` acts)
        path = []
        my_reach = opp_reach = sample_reach = 1.0
        while self._kind[node] != TERMINAL:
            start = self._child_start[node]
            count = self._child_start[node + 1] - start
            if self._kind[node] == CHANCE:
                choice = _draw(self._edge_prob[start:start + count], random())
                node = self._children[start + choice]
                continue
            infoset = self._infoset[node]
            lo, hi = self._action_start[infoset], self._action_start[infoset + 1]
            policy = self._policy(lo, hi)
            mine = self._player[node] == player
            sampling = [epsilon / count + (1.0 - epsilon) * p for p in policy] if mine else policy
            choice = _draw(sampling, random())
            path.append((lo, policy, sampling, choice, my_reach, opp_reach, sample_reach, mine))
            if mine:
                my_reach *= policy[choice]
            else:
                opp_reach *= policy[choice]
            sample_reach *= sampling[choice]
            node = self._children[start + choice]
        value = self._utility[node][player]
        regret, policy_sum = self._regret, self._policy_sum
        for lo, policy, sampling, choice, my, opp, sample, mine in reversed(path):
            # only the sampled child has a (importance-weighted) value; the others 0
            sampled_value = value / sampling[choice]
            value = policy[choice] * sampled_value
            if mine:
                scale = opp / sample
                for k, p in enumerate(policy):
                    child = sampled_value if k == choice else 0.0
                    regret[lo + k] += (child - value) * scale
                    policy_sum[lo + k] += my * p / sample

    def average_strategy(self) -> np.ndarray:
        return self._form.normalise(np.array(self._policy_sum))


def _draw(probs: list[float], u: float) -> int:
    """Index drawn from a distribution by one uniform number (rounding goes to the last)."""
    target = u * sum(probs)
    total = 0.0
    for index, p in enumerate(probs):
        total += p
        if target < total:
            return index
    return len(probs) - 1
