"""Heuristic search value iteration for one-sided POSGs.

Horák, Bošanský, Pěchouček: "Heuristic Search Value Iteration for One-Sided Partially
Observable Stochastic Games", AAAI 2017; Horák, Bošanský, Kovařík, Kiekintveld:
"Solving zero-sum one-sided partially observable stochastic games", Artificial
Intelligence (2023), doi:10.1016/j.artint.2022.103838 (its LP equations are cited by
number in ``stage_lp.py``).

1. Presolve (``presolve.py``): lower bound = P1 uniform (one alpha-vector per
   partition), upper bound = P1 seeing the state (one point per simplex vertex).
   The Lipschitz constant is ``delta = (max upper - min reward / (1 - discount)) / 2``:
   every alpha-vector of a P1 strategy lies in that range, so V* is delta-Lipschitz.
2. While ``UB(b0) - LB(b0) > epsilon`` and time remains, run one trial from
   (initial partition, b0) with ``rho = epsilon``:
   a. solve the lower- and upper-bound stage games at b (``stage_lp.py``) and make the
      point-based updates: add the new alpha-vector and the point (b, upper value);
   b. for every branch (a1, o) compute its probability under P1's upper-bound strategy
      and P2's lower-bound strategy, and the next belief; its weighted excess gap is
      ``probability * (UB(b') - LB(b') - rho')`` with
      ``rho' = (rho - 2 * delta * D) / discount`` (D: the neighbourhood parameter);
   c. if the largest weighted excess is positive, continue the trial at that branch,
      else stop; then, going back up the trial, repeat the updates of step a;
   d. when the alpha-vectors have doubled since the last pruning, keep only those
      that are the best at some visited belief (the points of the upper bound, b0).
3. Report ``LB(b0)``, ``UB(b0)`` and the gap; bounds are valid at every moment, so a
   time limit (or Ctrl-C) only widens the gap.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from solvers.posg.bounds import LowerBound, UpperBound
from solvers.posg.model import PartitionBlock, PosgModel
from solvers.posg.presolve import (
    TripleTable,
    perfect_information_upper_bound,
    uniform_lower_bound,
)
from solvers.posg.stage_lp import StageSolution, lower_stage, next_beliefs, upper_stage

MAX_DEPTH = 1000          # a trial never goes deeper (guards against a stuck trial)
PRUNE_GROWTH = 2.0        # prune the vectors when their number grew by this factor
NEIGHBOURHOOD = 1e-6      # D of the papers, capped below (1 - discount) * eps / (2 delta)


@dataclass(frozen=True)
class Progress:
    seconds: float
    lower: float
    upper: float
    iterations: int
    alpha_vectors: int
    points: int

    @property
    def gap(self) -> float:
        return self.upper - self.lower

    def line(self) -> str:
        return (f"{self.seconds:8.2f}s  iter {self.iterations:5d}  lower {self.lower:.6f}  "
                f"upper {self.upper:.6f}  gap {self.gap:.6f}  "
                f"vectors {self.alpha_vectors}  points {self.points}")


class Hsvi:
    """The bounds of a one-sided POSG and the HSVI trials that tighten them."""

    def __init__(self, model: PosgModel, presolve_time: float = 60.0) -> None:
        self.model = model
        table = TripleTable(model)
        low = uniform_lower_bound(model, table)
        high = perfect_information_upper_bound(model, time_limit=presolve_time, table=table)
        states = model.partition_states
        self.lower = LowerBound([low[s] for s in states])
        floor = model.reward_range()[0] / (1 - model.discount)
        self.delta = max(0.0, (float(high.max()) - floor) / 2)
        self.upper = UpperBound([high[s] for s in states], self.delta)
        self.iterations = 0
        self.interrupted = False
        self._pruned_size = self.lower.size()

    def bounds(self) -> tuple[float, float]:
        p, b = self.model.initial_partition, self.model.initial_belief
        return self.lower.value(p, b), self.upper.value(p, b)

    def _update(self, partition: int, belief: np.ndarray,
                ) -> tuple[PartitionBlock, StageSolution, StageSolution]:
        """Solve both stage games at the belief and add what they prove to the bounds."""
        block = self.model.partition_block(partition)
        gamma = self.model.discount
        low, alpha = lower_stage(block, belief, self.lower, gamma)
        high = upper_stage(block, belief, self.upper, gamma)
        self.lower.add(partition, alpha)
        self.upper.add(partition, belief, high.value)
        return block, low, high

    def trial(self, epsilon: float, deadline: float) -> int:
        """One exploration from the initial belief; returns its depth."""
        model, gamma = self.model, self.model.discount
        neighbourhood = NEIGHBOURHOOD
        if self.delta > 0:
            neighbourhood = min(neighbourhood, (1 - gamma) * epsilon / (4 * self.delta))
        partition, belief, rho = model.initial_partition, model.initial_belief, epsilon
        path: list[tuple[int, np.ndarray]] = []
        while time.monotonic() < deadline and len(path) < MAX_DEPTH:
            block, low, high = self._update(partition, belief)
            rho = (rho - 2 * self.delta * neighbourhood) / gamma
            options = next_beliefs(block, high.p1, low.p2)
            if not options:
                break
            targets = [(block.branches[k].target, b) for k, _, b in options]
            gaps = self.upper.values_at(targets) - np.array(
                [self.lower.value(q, b) for q, b in targets])
            weighted = np.array([prob for _, prob, _ in options]) * (gaps - rho)
            best = int(np.argmax(weighted))
            if weighted[best] <= 0:
                break
            path.append((partition, belief))
            partition, belief = targets[best]
        for partition, belief in reversed(path):
            if time.monotonic() >= deadline:
                break
            self._update(partition, belief)
        return len(path)

    def prune_lower(self) -> None:
        """Bounded pruning of the alpha-vectors at the visited beliefs: the upper
        bound's points (vertices and every belief a trial updated) and b0, so the
        reported lower bound never drops."""
        for p, points in enumerate(self.upper.points):
            if p == self.model.initial_partition:
                points = np.vstack([points, self.model.initial_belief])
            self.lower.prune(p, points)
        self._pruned_size = self.lower.size()

    def solve(self, epsilon: float, time_limit: float,
              progress: Callable[[Progress], None] | None = None,
              report_every: float = 1.0) -> Progress:
        """Run trials until the gap at b0 is at most ``epsilon`` or time is up."""
        start = time.monotonic()
        deadline = start + time_limit
        last_report = -np.inf

        def snapshot() -> Progress:
            lo, hi = self.bounds()
            return Progress(time.monotonic() - start, lo, hi, self.iterations,
                            self.lower.size(), self.upper.size())

        state = snapshot()
        try:
            while state.gap > epsilon and time.monotonic() < deadline:
                if progress and state.seconds - last_report >= report_every:
                    progress(state)
                    last_report = state.seconds
                self.trial(epsilon, deadline)
                self.iterations += 1
                if self.lower.size() > PRUNE_GROWTH * self._pruned_size:
                    self.prune_lower()
                state = snapshot()
        except KeyboardInterrupt:      # every update so far is valid: report the bounds
            self.interrupted = True
            state = snapshot()
        if progress:
            progress(state)
        return state
