"""Trap values: which value-keeping move gives a fallible opponent the most ways to go
wrong, in a state whose subgame is in the exact table (:func:`trap_values`).

For each of our value-keeping moves in a state: what we expect if we go on keeping
the exact value and choosing the best trap while the opponent is fallible. The
opponent model: where it alone moves, uniformly at random (right against a random
player: 97.5% on ticTacToe); where both move at once, a move that keeps its exact
value with probability ``1 - TRAP_SLIP``, any move with ``TRAP_SLIP`` (a uniform model
there found no traps against UCT).
"""

from __future__ import annotations

import time
from collections.abc import Hashable

import numpy as np

from solvers.errors import GameError, LimitReached

# Trap values at simultaneous nodes: how often the opponent's move fails to keep its
# value (ticTicToe, 40 matches against UCT at 2,000 playouts a move: 0.2 and 0.5
# scored 57.5%, 1.0 (uniform) 50%).
TRAP_SLIP = 0.2


def trap_values(machine, me: int, state: Hashable, exact: dict[Hashable, np.ndarray],
                memo: dict[Hashable, float], until: float) -> dict[int, float]:
    """Trap value of each of our value-keeping moves at ``state`` (by index among our
    legal moves; module docstring). Empty when that subgame is not all in ``exact``
    or does not fit the time; ``memo`` keeps them by state (they only depend on it)."""
    try:
        return _Traps(machine, me, exact, memo, until).by_move(state)
    except (LimitReached, GameError, RecursionError):
        return {}


class _Traps:
    def __init__(self, machine, me: int, exact: dict[Hashable, np.ndarray],
                 memo: dict[Hashable, float], until: float) -> None:
        self.machine, self.me, self.exact, self.memo, self.until = machine, me, exact, memo, until

    def exact_of(self, state: Hashable) -> float:
        known = self.exact.get(state)
        if known is not None:
            return float(known[self.me])
        if self.machine.is_terminal(state):
            return float(self.machine.goals(state)[self.me])
        raise LimitReached("outside the exact table")

    def trap(self, state: Hashable) -> float:
        known = self.memo.get(state)
        if known is None:
            if time.monotonic() > self.until:
                raise LimitReached("no time for trap values")
            if self.machine.is_terminal(state):
                known = float(self.machine.goals(state)[self.me])
            else:
                moves = self.by_move(state)
                known = max(moves.values()) if moves else self.exact_of(state)
            self.memo[state] = known
        return known

    def by_move(self, state: Hashable) -> dict[int, float]:
        """Trap value of each of our value-keeping moves (one move: index 0)."""
        machine, me = self.machine, self.me
        legal = [machine.legal_moves(state, r) for r in range(len(machine.roles))]
        choosers = [r for r, m in enumerate(legal) if len(m) > 1]
        if len(choosers) > 2 or (len(choosers) == 2 and me not in choosers):
            raise LimitReached("not a two-player node")
        other = next((r for r in choosers if r != me), None)
        mine = range(len(legal[me]))
        theirs = range(len(legal[other])) if other is not None else range(1)
        kids = [[machine.next_state(state, [
            legal[r][i] if r == me else legal[r][j] if r == other else legal[r][0]
            for r in range(len(legal))]) for j in theirs] for i in mine]
        value = self.exact_of(state)
        values = [[self.exact_of(k) for k in row] for row in kids]
        keeps = [i for i in mine if min(values[i]) >= value - 1e-6]
        # (no pure move keeps the value: a mixed strategy does, with no steering)
        slip = TRAP_SLIP if me in choosers and other is not None else 1.0
        careful = [j for j in theirs if max(values[i][j] for i in mine) <= value + 1e-6]
        out = {}
        for i in keeps:
            anything = sum(map(self.trap, kids[i])) / len(kids[i])
            kept = (sum(self.trap(kids[i][j]) for j in careful) / len(careful)
                    if careful else anything)
            out[i] = (1 - slip) * kept + slip * anything
        return out
