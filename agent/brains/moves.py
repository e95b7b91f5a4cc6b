"""Moves from strategies and search results, shared by the brains."""

from __future__ import annotations

import random
from collections.abc import Hashable, Sequence

import numpy as np


def draw(weights: Sequence[float] | np.ndarray, rng: random.Random) -> int:
    """An index drawn with probability proportional to ``weights``."""
    weights = np.asarray(weights, dtype=float)
    cumulative = np.cumsum(weights / weights.sum())
    return min(int(np.searchsorted(cumulative, rng.random(), side="right")), len(weights) - 1)


def purified(strategy: np.ndarray, gamma: float) -> np.ndarray:
    """Drop moves with less than twice the share uniform exploration gives them."""
    kept = np.where(strategy >= 2 * gamma / len(strategy), strategy, 0.0)
    return kept / kept.sum() if kept.sum() > 0 else strategy


def search_move(result, role: int, chance: Sequence[int], simultaneous: str, gamma: float,
                rng: random.Random) -> Hashable:
    """The move a search result gives ``role``: drawn from the exact strategy when the
    root is proven, from the purified mean strategy at a simultaneous node searched by
    regret matching or EXP3, else the most visited."""
    strategy = result.strategy[role]
    choosers = sum(len(m) > 1 for r, m in enumerate(result.moves) if r not in chance)
    if result.proven or (choosers > 1 and simultaneous in ("rm", "exp3")):
        if not result.proven:
            strategy = purified(strategy, gamma)
        return result.moves[role][draw(strategy, rng)]
    return result.best_move(role)
