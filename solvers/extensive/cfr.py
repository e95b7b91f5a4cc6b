"""Counterfactual regret minimisation (CFR) with alternating updates, vectorised.

Zinkevich, Johanson, Bowling & Piccione, "Regret Minimization in Games with Incomplete
Information", NIPS 2007; update conventions as OpenSpiel's ``CFRSolver`` (Lanctot et
al., 2019) so that NashConv per iteration matches it:

1. Start with zero regrets and the uniform current strategy.
2. Iteration t, for each player p in turn (alternating updates):
   a. realization plans of every player under the current strategy;
   b. counterfactual values v(I,a) and v(I) = sum_a sigma(I,a) v(I,a) of p's
      information sets (one bottom-up sequence-form pass, :mod:`.sequence_form`);
   c. regret R(I,a) += v(I,a) - v(I);
   d. average-strategy numerator += weight_t * x_p(I,a) (p's own reach times sigma);
   e. the hook of the variant (CFR+: clip regrets at 0; DCFR: discount);
   f. regret matching: sigma(I,.) proportional to max(R(I,.), 0), uniform if none
      is positive. Player p+1 then sees p's new strategy.
3. The average strategy (numerator normalised per information set) converges to a Nash
   equilibrium in two-player zero-sum games.

Subclasses change only steps 2d-2e (:mod:`.cfr_plus`, :mod:`.discounted_cfr`) or the
chance weights of step 2b (:mod:`.mccfr`).
"""

from __future__ import annotations

import numpy as np

from solvers.extensive.model import ExtensiveGame
from solvers.extensive.sequence_form import SequenceForm


class CFR:
    """Vanilla CFR; ``iterate(n)`` then ``average_strategy()``."""

    name = "cfr"

    def __init__(self, game: ExtensiveGame) -> None:
        game.require_perfect_recall(self.name)
        self.game = game
        self.form = SequenceForm(game)
        self.regret = np.zeros(self.form.A)
        self.policy_sum = np.zeros(self.form.A)
        self.sigma = self.form.uniform.copy()
        self.iteration = 0
        # realization plans of the current strategy, refreshed per player as it changes
        self._x = self.form.realization(self.sigma)

    def iterate(self, iterations: int = 1) -> None:
        form = self.form
        P = form.P
        for _ in range(iterations):
            self.iteration += 1
            for p in range(P):
                x = self._x
                weights = form.terminal_weights(x, p, self.chance_weights())
                v, infoset_value = form.counterfactual_values(p, self.sigma, weights)
                a = form.player_actions[p]
                self.regret[a] += v[P + a.start:P + a.stop] - infoset_value[form.action_infoset[a]]
                self.policy_sum[a] += self.average_weight() * x[P + a.start:P + a.stop]
                self.after_update(a)
                form.regret_matching(p, self.regret, self.sigma)
                form.realization(self.sigma, out=x, players=range(p, p + 1))

    def chance_weights(self) -> np.ndarray | None:
        """Chance reach of every terminal for this pass (``None``: the exact one)."""
        return None

    def average_weight(self) -> float:
        """Weight of this iteration in the average strategy."""
        return 1.0

    def after_update(self, actions: slice) -> None:
        """Variant hook after one player's regrets and average are updated."""

    def average_strategy(self) -> np.ndarray:
        return self.form.normalise(self.policy_sum)

    def current_strategy(self) -> np.ndarray:
        return self.sigma.copy()
