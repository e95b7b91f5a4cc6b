"""Equilibrium selection: which equilibrium a solver keeps when a matrix game has several.

In general-sum games the parent's matrix depends on the equilibrium kept in each
child, so the rule changes the subgame-perfect equilibrium and the root payoffs
(THESIS-NOTES.md). The rules, the same everywhere in the project:

* ``first`` (default, as the thesis): the first pure equilibrium in row-major order
  (player 0's action, then player 1's). Without a pure one: the unique mixed one of a
  2x2 game; for larger games the first found by support enumeration (support size
  ascending, then supports in lexicographic order); past the enumeration limit (or in
  degenerate games it misses): zero- and constant-sum games by the LP (one value),
  general-sum ones by the equilibrium at the end of the Lemke-Howson path from label
  0 (:mod:`.lemke_howson`): deterministic, where the MIP with no objective (SOLVEMIP(G),
  used before) kept whichever equilibrium HiGHS met first, and batched.
* ``welfare``: the pure equilibrium with the largest u0 + u1 (Algorithm 2 with the sum
  as the score); without a pure one, the best mixed one (support enumeration, or the
  MIP maximising U0 + U1: these rules optimise over all equilibria, which a
  Lemke-Howson path does not).
* ``max0``, ``min0``, ``max1``, ``min1``: the same for one player's payoff (Algorithm 2
  and Algorithm 4 with the objective ``max``/``min U_p``).

Ties between equally good equilibria go to the first in the order above. In zero-sum
and constant-sum games every equilibrium has the same value, so the rule only picks
the strategies.
"""

from __future__ import annotations

import numpy as np

from solvers.errors import GameError

SELECTIONS = ("first", "welfare", "max0", "min0", "max1", "min1")


def check_selection(selection: str) -> str:
    if selection not in SELECTIONS:
        raise GameError(f"unknown equilibrium selection {selection!r}; use one of {', '.join(SELECTIONS)}")
    return selection


def score(selection: str, u0: np.ndarray, u1: np.ndarray) -> np.ndarray | None:
    """What the rule maximises, from both players' payoffs (``None`` for ``first``)."""
    if selection == "first":
        return None
    if selection == "welfare":
        return u0 + u1
    player_payoff = u0 if selection[-1] == "0" else u1
    return player_payoff if selection.startswith("max") else -player_payoff


def objective(selection: str) -> tuple[int | None, bool]:
    """(player, maximise) for the MIP; player ``None`` means no objective (``first``),
    ``-1`` the social welfare."""
    if selection == "first":
        return None, True
    if selection == "welfare":
        return -1, True
    return int(selection[-1]), selection.startswith("max")
