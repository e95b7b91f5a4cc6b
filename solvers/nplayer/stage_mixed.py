"""A mixed equilibrium of an n-player normal-form stage game, from pygambit.

Used by :mod:`solvers.nplayer.induction` only at stage games without a pure
equilibrium. pygambit is an optional extra (``pip install .[nplayer]``): it is imported
on first use, and without it :class:`MixedSolverMissing` says which state needed it.

Method: Gambit's logit quantal-response path (``pygambit.nash.logit_solve``), which
follows the principal branch from the centroid to a Nash equilibrium and always
returns exactly one, for any number of players. Its stopping rule is a regret
(``MAX_REGRET`` of the payoff range). When the regret we recompute here is above
``ACCEPT_REGRET`` (a degenerate game where the path ends short of a good
approximation), Gambit's global Newton method (``gnm_solve``) is tried as well and the
profile with the smaller regret is kept; the regret reached is reported either way.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solvers.errors import GameError

#: logit_solve's acceptance criterion, relative to the stage game's payoff range
MAX_REGRET = 1e-12
#: a regret (relative) above which gnm_solve is tried too
ACCEPT_REGRET = 1e-9
EXTRA = "nplayer"


class MixedSolverMissing(GameError):
    """A stage game needs a mixed equilibrium and pygambit is not installed."""


@dataclass(frozen=True)
class MixedEquilibrium:
    """One mixed equilibrium: each player's move probabilities, how it was found, and
    its largest deviation gain over the players (in the stage game's payoffs)."""

    strategies: tuple[np.ndarray, ...]
    method: str
    regret: float


def _gambit():  # noqa: ANN202 - the module, or MixedSolverMissing
    try:  # deferred: pygambit is the optional extra (a C++ build), needed only here
        import pygambit
    except ImportError:
        return None
    return pygambit


def available() -> bool:
    return _gambit() is not None


def expected_payoffs(payoff: np.ndarray, strategies: tuple[np.ndarray, ...]) -> np.ndarray:
    """[R]: every player's expected payoff in a stage game ``payoff[*counts, R]``."""
    out = payoff
    for x in strategies:    # contract player 0's axis first, then the next one's
        out = np.tensordot(x, out, axes=(0, 0))
    return out


def regret(payoff: np.ndarray, strategies: tuple[np.ndarray, ...]) -> float:
    """The largest gain of a pure deviation by any player."""
    worst = 0.0
    for p in range(len(strategies)):
        out = np.moveaxis(payoff[..., p], p, 0)
        for q, x in enumerate(strategies):
            if q != p:
                out = np.tensordot(out, x, axes=(1, 0))   # axis 1 is the next other player
        worst = max(worst, float(out.max() - strategies[p] @ out))
    return worst


def solve_stage(payoff: np.ndarray, where: str) -> MixedEquilibrium:
    """A mixed equilibrium of ``payoff[*counts, R]`` (``where`` names the state for the
    message when pygambit is missing)."""
    gbt = _gambit()
    if gbt is None:
        raise MixedSolverMissing(
            f"{where}: this stage game has no pure equilibrium and a mixed one needs "
            f"pygambit (install the optional extra: pip install '.[{EXTRA}]')")
    low, high = float(payoff.min()), float(payoff.max())
    scale = high - low if high > low else 1.0
    unit = (payoff - low) / scale            # Gambit's regret criterion is relative anyway
    game = gbt.Game.from_arrays(*(unit[..., p] for p in range(unit.shape[-1])))
    found = [("logit", gbt.nash.logit_solve(game, maxregret=MAX_REGRET).equilibria)]
    best = _best(game, found, unit)
    if best.regret > ACCEPT_REGRET:
        found.append(("gnm", gbt.nash.gnm_solve(game).equilibria))
        best = _best(game, found, unit)
    return MixedEquilibrium(best.strategies, best.method, best.regret * scale)


def _best(game, found: list, unit: np.ndarray) -> MixedEquilibrium:  # noqa: ANN001
    best = None
    for method, profiles in found:
        for profile in profiles:
            strategies = tuple(_normalized([float(profile[s]) for s in player.strategies])
                               for player in game.players)
            gain = regret(unit, strategies)
            if best is None or gain < best.regret:
                best = MixedEquilibrium(strategies, method, gain)
    if best is None:
        raise GameError("pygambit returned no equilibrium for a stage game")
    return best


def _normalized(probs: list[float]) -> np.ndarray:
    x = np.clip(np.asarray(probs, dtype=float), 0.0, None)
    return x / x.sum()
