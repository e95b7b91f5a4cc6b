"""CFR+ (Tammelin, "Solving Large Imperfect Information Games Using CFR+", 2014).

As :class:`.cfr.CFR` with OpenSpiel's ``CFRPlusSolver`` conventions:

1. Alternating updates, as in CFR.
2. Regret matching+: after each player's update, cumulative regrets are clipped at 0.
3. Linear averaging: iteration t adds t * x_p(I,a) to the average-strategy numerator
   (OpenSpiel applies no averaging delay; we match it).
"""

from __future__ import annotations

import numpy as np

from solvers.extensive.cfr import CFR


class CFRPlus(CFR):
    name = "cfr+"

    def average_weight(self) -> float:
        return float(self.iteration)

    def after_update(self, actions: slice) -> None:
        np.maximum(self.regret[actions], 0.0, out=self.regret[actions])
