"""The payoff range of a game, by which a tournament's overall row scales each game's
payoffs to [0, 1] before averaging (Kuhn's chips and tic-tac-toe's 0-100 goals become
comparable).

Where the range comes from, by format (``source`` says which, in the output):

* GDL: goals are 0..100 by the GDL specification (``GDL goals 0-100``);
* ``.efg`` and tree format: the least and the greatest payoff of any player at any
  terminal node (``terminal payoffs``);
* one-sided POSG: P1's payoff is the discounted sum of rewards over at most the match
  horizon H, so it lies in ``[min(r, 0), max(r, 0)] * (1 - d^H) / (1 - d)`` and P2's is
  its negative (``rewards over the horizon``);
* any other game (and a recorded game whose range was not saved): the least and the
  greatest payoff seen in its completed matches (``observed``).

A game whose range is a single number scales every payoff to 0.5.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from solvers.extensive.model import TERMINAL
from solvers.extensive.playable import ExtensivePlayable
from solvers.posg.playable import PosgPlayable


@dataclass(frozen=True)
class PayoffRange:
    low: float
    high: float
    source: str

    def scale(self, payoff: float) -> float:
        """``payoff`` mapped to [0, 1] (0.5 when the range is one number)."""
        if self.high <= self.low:
            return 0.5
        return (payoff - self.low) / (self.high - self.low)

    def to_json(self) -> dict[str, Any]:
        return {"low": self.low, "high": self.high, "source": self.source}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PayoffRange:
        return cls(float(data["low"]), float(data["high"]), str(data["source"]))

    def text(self) -> str:
        return f"[{self.low:g}, {self.high:g}] ({self.source})"


GDL_RANGE = PayoffRange(0.0, 100.0, "GDL goals 0-100")


def payoff_range(game: Any) -> PayoffRange | None:
    """The range of a playable game (module docstring); None when only the matches can
    tell (:func:`observed_range`)."""
    if isinstance(game, ExtensivePlayable):
        model = game.game
        payoffs = np.asarray(model.node_utility)[np.asarray(model.node_kind) == TERMINAL]
        return PayoffRange(float(payoffs.min()), float(payoffs.max()), "terminal payoffs")
    if isinstance(game, PosgPlayable):
        model = game.model
        rewards = np.asarray(model.r_value, dtype=float)
        d, horizon = float(model.discount), game.horizon
        steps = horizon if d == 1.0 else (1.0 - d ** horizon) / (1.0 - d)
        low = min(float(rewards.min(initial=0.0)), 0.0) * steps
        high = max(float(rewards.max(initial=0.0)), 0.0) * steps
        return PayoffRange(min(low, -high), max(high, -low), "rewards over the horizon")
    if getattr(game, "format", None) == "gdl":
        return GDL_RANGE
    return None


def observed_range(payoffs: Iterable[Iterable[float]]) -> PayoffRange:
    """The least and greatest payoff of some matches (one list per match)."""
    values = [float(x) for match in payoffs for x in match]
    if not values:
        return PayoffRange(0.0, 0.0, "observed")
    return PayoffRange(min(values), max(values), "observed")


def format_ranges(ranges: dict[str, PayoffRange]) -> str:
    """The note under a standings table saying how the overall row was scaled."""
    parts = [f"{game} {r.text()}" for game, r in sorted(ranges.items())]
    return ("overall: each game's payoffs scaled to [0, 1] by its payoff range before "
            "averaging: " + "; ".join(parts))
