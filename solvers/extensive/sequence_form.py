"""Vectorised sequence-form operations shared by CFR, best responses and MCCFR.

For perfect-recall games a behavioural strategy ``sigma`` (one probability per global
action) has a *realization plan* ``x``: ``x[s]`` is the product of the owner's own
action probabilities along sequence ``s`` (Koller, Megiddo & von Stengel, STOC 1994;
von Stengel, GEB 1996). Every quantity CFR needs is a linear pass over these arrays:

1. Realization plans, top-down per (player, level) block:
   ``x[action] = x[parent sequence] * sigma[action]``.
2. Terminal weights for player ``p``: ``w[z] = chance(z) * u_p(z) * prod_{q != p} x_q(z)``.
3. Counterfactual values, bottom-up over ``p``'s levels: ``v = bincount(last p-sequence
   of z, w)``; then per level ``value(I) = sum_a sigma(I,a) v(I,a)`` (``np.add.reduceat``)
   is added to ``v[parent sequence of I]``. ``v(I,a)`` is then exactly the
   counterfactual value of taking ``a`` at ``I`` summed over the nodes of ``I`` (Zinkevich
   et al., NIPS 2007), and ``v[p]`` (the empty sequence) is ``p``'s expected utility.
4. Best responses: the same pass with ``max`` in place of the weighted sum.

Each pass costs a handful of numpy calls per level, not a Python call per node, and
each call's work is proportional to its level's size, so a pass is linear in the game
(a chain 100,000 nodes deep has 100,000 levels).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solvers.extensive.model import ExtensiveGame, equal_runs


@dataclass(frozen=True)
class Block:
    """One player's information sets at one level: contiguous ids and actions."""

    infosets: slice
    actions: slice
    # offsets of each information set's first action inside ``actions`` (reduceat)
    starts: np.ndarray
    # parent sequence of each information set / of each action (global sequences)
    infoset_parent: np.ndarray
    action_parent: np.ndarray
    # the range of ids the parent sequences lie in (see add_to_parents)
    parent_lo: int
    parent_hi: int

    def add_to_parents(self, v: np.ndarray, values: np.ndarray) -> None:
        """``v[parent of I] += values[I]`` for the level's information sets ``I``.

        The parents of a level are the previous level's actions (or the empty
        sequence), a short range of ids: a bincount over that range costs O(level)
        where one over all sequences made a chain quadratic; the sums are the same.
        """
        lo, hi = self.parent_lo, self.parent_hi
        v[lo:hi] += np.bincount(self.infoset_parent - lo, values, minlength=hi - lo)


class SequenceForm:
    """Precomputed per-player, per-level blocks of an :class:`ExtensiveGame`."""

    def __init__(self, game: ExtensiveGame) -> None:
        self.game = game
        self.P = game.num_players
        self.S = game.num_sequences
        self.A = game.num_actions
        self.action_infoset = game.action_infoset
        counts = np.diff(game.infoset_action_start)
        self.uniform = 1.0 / counts[game.action_infoset] if self.A else np.zeros(0)
        self.terminal_seq = game.terminal_seq
        self.terminal_utility = np.ascontiguousarray(game.terminal_utility.T)
        self.terminal_chance = game.terminal_chance
        self.chance_utility = self.terminal_utility * self.terminal_chance
        self.blocks: list[list[Block]] = []
        self.player_actions: list[slice] = []
        self.player_infosets: list[slice] = []
        for p in range(self.P):
            infosets = game.player_infosets(p)
            actions = game.player_actions(p)
            self.player_infosets.append(slice(infosets.start, infosets.stop))
            self.player_actions.append(slice(actions.start, actions.stop))
            blocks = []
            # a player's information sets come sorted by level (build_game): one block
            # per run of equal levels, found in one pass (a chain has a level per node)
            levels = game.infoset_level[infosets.start:infosets.stop]
            for lo, hi in equal_runs(levels):
                i0, i1 = infosets.start + lo, infosets.start + hi
                a0, a1 = int(game.infoset_action_start[i0]), int(game.infoset_action_start[i1])
                parent = game.infoset_parent_seq[i0:i1]
                blocks.append(Block(slice(i0, i1), slice(a0, a1),
                                    game.infoset_action_start[i0:i1] - a0, parent,
                                    np.repeat(parent, counts[i0:i1]),
                                    int(parent.min()), int(parent.max()) + 1))
            self.blocks.append(blocks)
        # regret matching works per player on that player's action slice
        self.player_starts = [game.infoset_action_start[s.start:s.stop] - a.start
                              for s, a in zip(self.player_infosets, self.player_actions,
                                              strict=True)]
        self.player_local_infoset = [game.action_infoset[a] - s.start
                                     for s, a in zip(self.player_infosets, self.player_actions,
                                                     strict=True)]

    # ------------------------------------------------------------------ passes
    def realization(self, sigma: np.ndarray, out: np.ndarray | None = None,
                    players: range | None = None) -> np.ndarray:
        """Realization plans of all (or some) players in one global sequence vector."""
        x = np.ones(self.S) if out is None else out
        x[:self.P] = 1.0
        P = self.P
        for p in players if players is not None else range(P):
            for b in self.blocks[p]:
                a = b.actions
                np.multiply(x[b.action_parent], sigma[a], out=x[P + a.start:P + a.stop])
        return x

    def terminal_weights(self, x: np.ndarray, player: int,
                         chance: np.ndarray | None = None) -> np.ndarray:
        """``chance(z) * u_player(z) * prod_{q != player} x_q(z)`` for every terminal."""
        w = self.chance_utility[player] if chance is None else chance * self.terminal_utility[player]
        for q in range(self.P):
            if q != player:
                w = w * x[self.terminal_seq[q]]
        return w

    def counterfactual_values(self, player: int, sigma: np.ndarray,
                              weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(value per global sequence, value per information set) for ``player``.

        Only ``player``'s entries are meaningful; ``v[player]`` is the expected utility.
        """
        S, P = self.S, self.P
        v = np.bincount(self.terminal_seq[player], weights, minlength=S)
        infoset_value = np.zeros(self.game.num_infosets)
        for b in reversed(self.blocks[player]):
            a = b.actions
            values = np.add.reduceat(sigma[a] * v[P + a.start:P + a.stop], b.starts) \
                if len(b.starts) else np.zeros(0)
            infoset_value[b.infosets] = values
            b.add_to_parents(v, values)
        return v, infoset_value

    def best_response(self, player: int, weights: np.ndarray) -> tuple[float, np.ndarray]:
        """(best-response value, a pure best response as per-action 0/1) for ``player``.

        Ties go to the first action with the maximal value.
        """
        S, P = self.S, self.P
        v = np.bincount(self.terminal_seq[player], weights, minlength=S)
        choice = np.zeros(self.A)
        for b in reversed(self.blocks[player]):
            a = b.actions
            local = v[P + a.start:P + a.stop]
            best = np.maximum.reduceat(local, b.starts)
            counts = np.diff(np.append(b.starts, len(local)))
            # first maximal action of each information set
            is_best = local >= np.repeat(best, counts)
            first = np.minimum.reduceat(np.where(is_best, np.arange(len(local)), len(local)),
                                        b.starts)
            choice[a.start + first] = 1.0
            b.add_to_parents(v, best)
        return float(v[player]), choice

    def regret_matching(self, player: int, regret: np.ndarray, sigma: np.ndarray) -> None:
        """sigma <- positive regrets normalised per information set (uniform if none)."""
        a = self.player_actions[player]
        if a.start == a.stop:
            return
        positive = np.maximum(regret[a], 0.0)
        sums = np.add.reduceat(positive, self.player_starts[player])[self.player_local_infoset[player]]
        np.divide(positive, sums, out=sigma[a], where=sums > 0)
        np.copyto(sigma[a], self.uniform[a], where=sums <= 0)

    def normalise(self, weights: np.ndarray) -> np.ndarray:
        """Per-information-set normalisation of non-negative weights (uniform if all 0)."""
        if not self.A:
            return np.zeros(0)
        starts = self.game.infoset_action_start[:-1]
        sums = np.add.reduceat(weights, starts)[self.action_infoset]
        out = self.uniform.copy()
        np.divide(weights, sums, out=out, where=sums > 0)
        return out

    def expected_values(self, sigma: np.ndarray) -> np.ndarray:
        """Each player's expected utility when everybody plays ``sigma``."""
        x = self.realization(sigma)
        reach = self.terminal_chance.copy()
        for q in range(self.P):
            reach = reach * x[self.terminal_seq[q]]
        return self.terminal_utility @ reach
