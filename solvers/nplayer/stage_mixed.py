"""A mixed equilibrium of an n-player normal-form stage game, from pygambit.

Used by :mod:`solvers.nplayer.induction` only at stage games without a pure
equilibrium. pygambit is an optional extra (``pip install .[nplayer]``): it is imported
on first use, and without it :class:`MixedSolverMissing` says which state needed it.

Method: Gambit's logit quantal-response path (``pygambit.nash.logit_solve``), which
follows the principal branch from the centroid to a Nash equilibrium and always
returns exactly one, for any number of players. Its stopping rule is a regret
(``MAX_REGRET`` of the payoff range); the profile is then refined by Newton's method
on its support (:func:`polish`: every support move equally good, method
``logit+newton``), kept when that lowers the regret we recompute. When the regret we recompute here is above
``ACCEPT_REGRET`` (a degenerate game where the path ends short of a good
approximation), Gambit's global Newton method (``gnm_solve``) is tried as well and the
profile with the smaller regret is kept; the regret reached is reported either way.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solvers.errors import GameError

#: logit_solve's acceptance criterion, relative to the stage game's payoff range: a
#: start for Newton's method (tighter ones cost much more: 1e-12 took 24 s on a random
#: 3x3x3 game where 1e-8 takes 0.1 s, and 1e-10 8 s on a degenerate 2x3x2x3 one)
MAX_REGRET = 1e-8
#: a regret (relative) above which gnm_solve is tried too
ACCEPT_REGRET = 1e-9
#: moves played with more than this probability form the support Newton's method keeps
SUPPORT = 1e-6
NEWTON_STEPS = 20
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


def deviation_payoffs(payoff: np.ndarray, strategies: tuple[np.ndarray, ...],
                      p: int) -> np.ndarray:
    """Player ``p``'s payoff for each of its moves against the others' strategies."""
    out = np.moveaxis(payoff[..., p], p, 0)
    for q, x in enumerate(strategies):
        if q != p:
            out = np.tensordot(out, x, axes=(1, 0))   # axis 1 is the next other player
    return out


def regret(payoff: np.ndarray, strategies: tuple[np.ndarray, ...]) -> float:
    """The largest gain of a pure deviation by any player."""
    worst = 0.0
    for p, x in enumerate(strategies):
        out = deviation_payoffs(payoff, strategies, p)
        worst = max(worst, float(out.max() - x @ out))
    return worst


def polish(payoff: np.ndarray, strategies: tuple[np.ndarray, ...]
           ) -> tuple[np.ndarray, ...] | None:
    """Newton's method on the support of an approximate equilibrium: every player
    indifferent between its support's moves (each payoff equal to an unknown value
    ``v_p``), probabilities summing to 1. The payoffs are multilinear, so the Jacobian's
    column for ``x_q(b)`` is exact: the payoffs with ``x_q`` set to move ``b``. None when
    it leaves the simplex."""
    r = len(strategies)
    support = [np.flatnonzero(x > SUPPORT) for x in strategies]
    x = [s.copy() for s in strategies]
    for p in range(r):
        x[p][np.setdiff1d(np.arange(x[p].size), support[p])] = 0.0
    size = sum(len(s) for s in support)
    for _ in range(NEWTON_STEPS):
        current = tuple(x)
        values = [deviation_payoffs(payoff, current, p) for p in range(r)]
        v = [float(x[p] @ values[p]) for p in range(r)]
        residual = np.concatenate([np.concatenate([values[p][support[p]] - v[p]
                                                   for p in range(r)]),
                                   [x[p].sum() - 1 for p in range(r)]])
        if np.abs(residual).max() < 1e-15:
            break
        jacobian = np.zeros((size + r, size + r))
        column = 0
        for q in range(r):
            for b in support[q]:
                pure = np.zeros_like(x[q])
                pure[b] = 1.0
                moved = (*current[:q], pure, *current[q + 1:])
                jacobian[:size, column] = np.concatenate(
                    [deviation_payoffs(payoff, moved, p)[support[p]] if p != q
                     else np.zeros(len(support[p])) for p in range(r)])
                jacobian[size + q, column] = 1.0
                column += 1
        rows = np.cumsum([0] + [len(s) for s in support])
        for p in range(r):                    # d(payoff - v_p) / d v_p = -1
            jacobian[rows[p]:rows[p + 1], size + p] = -1.0
        step = np.linalg.lstsq(jacobian, residual, rcond=None)[0]
        flat = np.concatenate([x[p][support[p]] for p in range(r)]) - step[:size]
        if (flat < -1e-12).any():
            return None
        for p in range(r):
            x[p][support[p]] = np.clip(flat[rows[p]:rows[p + 1]], 0.0, None)
    return tuple(_normalized(xp, 0.0) for xp in x)


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
            raw = [np.asarray([float(profile[s]) for s in player.strategies])
                   for player in game.players]
            first = tuple(_normalized(x, 0.0) for x in raw)
            polished = polish(unit, first)
            for strategies, how in ((polished, method + "+newton"), (first, method)):
                if strategies is None:
                    continue
                gain = regret(unit, strategies)
                if best is None or gain < best.regret:
                    best = MixedEquilibrium(strategies, how, gain)
    if best is None:
        raise GameError("pygambit returned no equilibrium for a stage game")
    return best


def _normalized(probs: np.ndarray, drop: float) -> np.ndarray:
    """``probs`` without those at or below ``drop``, summing to 1."""
    x = np.where(probs > drop, probs, 0.0)
    return x / x.sum()
