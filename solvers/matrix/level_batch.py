"""GETEQUILIBRIUM for all nodes of a level at once: the scale path's matrix solver.

For the games of a level (or a chunk of it), given as stacks ``u0, u1`` [b, m, n], one
stack per shape:

1. pure equilibria for all games at once, chosen by the selection rule by the same
   code as :func:`.equilibrium.solve_batch` (:func:`.equilibrium.pure_step`), so
   values are identical wherever a pure equilibrium is kept;
2. general-sum games left without one, per shape, by the same code as
   :func:`.equilibrium.solve_batch` (:func:`.equilibrium.solve_mixed`: the 2x2 closed
   form; support enumeration up to 5x5, one support size at a time for ``first``;
   then, for ``first``, Lemke-Howson from label 0 on the whole stack at once, for the
   other rules the MIP with the rule's objective), so the selection rule keeps the
   same mixed equilibrium on both paths;
3. constant-sum games of small shapes (at most ``SMALL_PAIRS`` support pairs: 2xn,
   3x3), when there are enough of them, by batched support enumeration
   (:mod:`.support_enumeration`: one batched linear solve, cheaper than an LP there);
4. the other constant-sum games: iterated elimination of strictly dominated rows and
   columns (:mod:`.dominance`), then those reduced to 2x2 by the closed form
   (:mod:`.closed_form`), vectorised (a result that is not a distribution, from a
   degenerate game, goes on to step 5);
5. the rest of *all shapes* padded to the largest shape (padding is not alive) and
   solved in block LPs (:mod:`.block_lp`: many games per HiGHS call), then polished
   together (:mod:`.polish_batch`).

With the compiled simplex (:mod:`.compiled` decides, :mod:`.simplex_kernels` has it),
steps 3-4 are skipped: every constant-sum game left, of every shape, goes padded to
one kernel call (a tableau simplex per game in compiled code, about 1 us for a 6x6
game where HiGHS takes about 50 us in a block LP and the per-shape passes add their
Python and numpy overhead); a game it cannot certify goes on to the block LP, and
all are polished.

Constant-sum games have a unique value, so steps 3-5 give the values of the per-game
LP; only which optimal strategies are kept may differ.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from solvers.matrix import compiled
from solvers.matrix.block_lp import solve_block_lp
from solvers.matrix.closed_form import solve_2x2
from solvers.matrix.dominance import eliminate_dominated
from solvers.matrix.equilibrium import (
    CLOSED_FORM,
    LP,
    SUPPORT,
    MatrixSolutions,
    enumerate_supports,
    is_constant_sum,
    pure_step,
    put,
    solve_mixed,
)
from solvers.matrix.polish_batch import polish_batch
from solvers.matrix.pure import tolerance
from solvers.matrix.selection import check_selection
from solvers.matrix.support_enumeration import support_pairs

#: constant-sum shapes with at most this many support pairs use support enumeration
#: when at least ``SMALL_GAMES`` games of the shape are left (2xn: n(n-1)/2, 3x3: 10,
#: 3x4: 22; measured here on 3,000 games, enumeration takes half the block LP's time
#: on 2x3 and 2x4, the same on 3x3, twice as long on 3x4; a few games pay its fixed
#: cost per call, while the pooled LP adds only its time per game)
SMALL_PAIRS = 10
SMALL_GAMES = 32
#: the compiled simplex's strategies are polished above this relative deviation gain
POLISH_GAIN = 1e-14


def _closed_form_reduced(u0: np.ndarray, u1: np.ndarray, rows: np.ndarray, cols: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, y, ok) for games whose alive actions form a 2x2 game (step 4)."""
    b, m, n = u0.shape
    r = np.nonzero(rows)[1].reshape(b, 2)
    c = np.nonzero(cols)[1].reshape(b, 2)
    g = np.arange(b)[:, None, None]
    sx, sy, _ = solve_2x2(u0[g, r[:, :, None], c[:, None, :]], u1[g, r[:, :, None], c[:, None, :]])
    ok = np.isfinite(sx).all(axis=1) & np.isfinite(sy).all(axis=1)
    ok &= (sx >= 0).all(axis=1) & (sy >= 0).all(axis=1)
    x, y = np.zeros((b, m)), np.zeros((b, n))
    x[np.arange(b)[:, None], r] = np.where(ok[:, None], sx, 0.0)
    y[np.arange(b)[:, None], c] = np.where(ok[:, None], sy, 0.0)
    return x, y, ok


class _Group:
    """One shape's stack: its solutions so far and the games left for the LP."""

    def __init__(self, u0: np.ndarray, u1: np.ndarray, selection: str) -> None:
        self.u0, self.u1, self.selection = u0, u1, selection
        b, m, n = u0.shape
        self.tol = tolerance(u0, u1)
        self.sol, rest = pure_step(u0, u1, self.tol, selection)
        self.zero = self.lp = rest[:0]
        self.rows, self.cols = np.zeros((0, m), bool), np.zeros((0, n), bool)
        if rest.size == 0:
            return
        constant = is_constant_sum(u0[rest], u1[rest], self.tol[rest])
        general = rest[~constant]
        if general.size:
            put(self.sol, general, solve_mixed(u0[general], u1[general], self.tol[general], selection))
        self.zero = rest[constant]

    def take_all(self) -> None:
        """Every constant-sum game left goes to the LP whole (the compiled simplex)."""
        self.lp = self.zero
        self.rows = np.ones((self.zero.size, self.u0.shape[1]), bool)
        self.cols = np.ones((self.zero.size, self.u0.shape[2]), bool)

    def reduce(self) -> None:
        """Steps 3-4: small shapes by support enumeration, the others by dominance and
        2x2 closed forms; what is left goes to the block LP."""
        u0, u1, zero, tol = self.u0, self.u1, self.zero, self.tol
        _, m, n = u0.shape
        if zero.size >= SMALL_GAMES and support_pairs(m, n) <= SMALL_PAIRS:
            sx, sy, sv, found = enumerate_supports(u0[zero], u1[zero], self.selection, tol[zero])
            put(self.sol, zero[found], MatrixSolutions(sx[found], sy[found], sv[found],
                                                       np.full(int(found.sum()), SUPPORT, dtype=np.int8)))
            zero = zero[~found]
        if zero.size:
            rows, cols = eliminate_dominated(u0[zero], u1[zero], tol[zero])
            small = np.flatnonzero((rows.sum(axis=1) == 2) & (cols.sum(axis=1) == 2))
            done = np.zeros(zero.size, dtype=bool)
            if small.size:
                sx, sy, ok = _closed_form_reduced(u0[zero[small]], u1[zero[small]],
                                                  rows[small], cols[small])
                self.put_strategies(zero[small[ok]], sx[ok], sy[ok], CLOSED_FORM)
                done[small[ok]] = True
            self.lp, self.rows, self.cols = zero[~done], rows[~done], cols[~done]

    def put_strategies(self, games: np.ndarray, x: np.ndarray, y: np.ndarray, method: int) -> None:
        """Strategies of constant-sum games; their values follow."""
        a0, a1 = self.u0[games], self.u1[games]
        self.sol.x[games], self.sol.y[games], self.sol.method[games] = x, y, method
        self.sol.values[games, 0] = np.einsum("bi,bij,bj->b", x, a0, y)
        self.sol.values[games, 1] = np.einsum("bi,bij,bj->b", x, a1, y)


def _pad(pending: list[_Group]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(u0, u1, rows, cols): the games left for the LP, padded to the largest shape.

    Padding is not alive (the LP ignores it) and pays each player less than any real
    payoff for the actions that are his own padding (so a polish never finds a
    deviation there); the other player's padding is never played."""
    m = max(g.u0.shape[1] for g in pending)
    n = max(g.u0.shape[2] for g in pending)
    total = sum(g.lp.size for g in pending)
    low = -1.0 - 2.0 * max(max(float(np.abs(g.u0[g.lp]).max()), float(np.abs(g.u1[g.lp]).max()))
                           for g in pending)
    u0, u1 = np.zeros((total, m, n)), np.zeros((total, m, n))
    rows, cols = np.zeros((total, m), bool), np.zeros((total, n), bool)
    at = 0
    for g in pending:
        k, gm, gn = g.lp.size, g.u0.shape[1], g.u0.shape[2]
        part = slice(at, at + k)
        u0[part, :gm, :gn], u1[part, :gm, :gn] = g.u0[g.lp], g.u1[g.lp]
        u0[part, gm:, :] = low
        u1[part, :, gn:] = low
        rows[part, :gm], cols[part, :gn] = g.rows, g.cols
        at += k
    return u0, u1, rows, cols


def _solve_pooled(u0: np.ndarray, u1: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                  kernel: ModuleType | None) -> tuple[np.ndarray, np.ndarray]:
    """Step 5: (x, y) of the padded constant-sum games, polished: the block LP's all,
    the compiled simplex's where their deviation gain is over ``POLISH_GAIN`` of the
    payoff scale (its vertices are exact to rounding, but a polish still cuts the
    gains of goofspiel_7's 5x5 games from 3e-12 to 2e-13; most games are already at
    rounding, and polishing all of them took half the time of full_game(3, 5))."""
    if kernel is None:
        return polish_batch(u0, u1, *solve_block_lp(u0, rows, cols))
    x, y, gain = kernel.solve_zero_sum_batch(u0, rows, cols)
    left = np.flatnonzero(gain > kernel.GAIN_TOLERANCE)
    if left.size:
        x[left], y[left] = solve_block_lp(u0[left], rows[left], cols[left])
    rough = np.flatnonzero(gain > POLISH_GAIN)
    if rough.size:
        x[rough], y[rough] = polish_batch(u0[rough], u1[rough], x[rough], y[rough])
    return x, y


def solve_level_groups(stacks: list[tuple[np.ndarray, np.ndarray]], selection: str = "first"
                       ) -> list[MatrixSolutions]:
    """Equilibria of several stacks [b, m, n] of games (one shape each), LPs pooled."""
    check_selection(selection)
    groups = [_Group(np.asarray(u0, float), np.asarray(u1, float), selection) for u0, u1 in stacks]
    kernel = compiled.simplex(sum(g.zero.size for g in groups))
    for g in groups:
        if g.zero.size and kernel is not None:
            g.take_all()
        elif g.zero.size:
            g.reduce()
    pending = [g for g in groups if g.lp.size]
    if pending:
        u0, u1, rows, cols = _pad(pending)
        x, y = _solve_pooled(u0, u1, rows, cols, kernel)
        at = 0
        for g in pending:
            k, gm, gn = g.lp.size, g.u0.shape[1], g.u0.shape[2]
            g.put_strategies(g.lp, x[at:at + k, :gm], y[at:at + k, :gn], LP)
            at += k
    return [g.sol for g in groups]


def solve_level_batch(u0: np.ndarray, u1: np.ndarray, selection: str = "first") -> MatrixSolutions:
    """Equilibria of one stack of games [b, m, n] (see the module docstring)."""
    return solve_level_groups([(u0, u1)], selection)[0]
