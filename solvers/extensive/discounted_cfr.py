"""Discounted CFR (Brown & Sandholm, "Solving Imperfect-Information Games via
Discounted Regret Minimization", AAAI 2019), with alternating updates as OpenSpiel's
``DCFRSolver``.

1. Run a CFR iteration for player p (:class:`.cfr.CFR`).
2. After it, at iteration t, multiply p's positive cumulative regrets by
   t^alpha / (t^alpha + 1), the negative ones by t^beta / (t^beta + 1), and p's
   average-strategy numerator by (t / (t + 1))^gamma.
3. Defaults alpha = 3/2, beta = 0, gamma = 2 (the paper's recommended DCFR_{3/2,0,2}).
"""

from __future__ import annotations

import numpy as np

from solvers.extensive.cfr import CFR
from solvers.extensive.model import ExtensiveGame


class DiscountedCFR(CFR):
    name = "dcfr"

    def __init__(self, game: ExtensiveGame, alpha: float = 1.5, beta: float = 0.0,
                 gamma: float = 2.0) -> None:
        super().__init__(game)
        self.alpha, self.beta, self.gamma = alpha, beta, gamma

    def after_update(self, actions: slice) -> None:
        t = float(self.iteration)
        positive = t ** self.alpha / (t ** self.alpha + 1.0)
        negative = t ** self.beta / (t ** self.beta + 1.0)
        regret = self.regret[actions]
        regret *= np.where(regret > 0, positive, negative)
        self.policy_sum[actions] *= (t / (t + 1.0)) ** self.gamma
