"""GETEQUILIBRIUM for bimatrix games (thesis Algorithm 5, lines 15-23), batched.

For a stack of games ``u0, u1`` [b, m, n] of one shape:

1. pure equilibria for all games at once (Algorithms 1/2, :mod:`.pure`): no LP is paid
   where a pure equilibrium answers;
2. games left without one (:func:`solve_mixed`): 2x2 games by the closed form
   (:mod:`.closed_form`), other small games (at most ``SUPPORT_PAIR_LIMIT`` support
   pairs: up to 5x5) by batched support enumeration (:mod:`.support_enumeration`; for
   the rule ``first`` one support size at a time);
3. games still left (large, or degenerate ones the enumeration misses): the maximin LP
   when the game is zero- or constant-sum (``u0 + u1`` constant up to the tolerance;
   Algorithm 3), one scipy call each; general-sum games by Lemke-Howson from label 0
   for the rule ``first`` (:mod:`.lemke_howson`, all games of the stack in one batch),
   by the MIP Nash program with the rule's objective otherwise (Algorithm 4; and for a
   game Lemke-Howson leaves unfinished), one scipy call each. The LP's and the MIP's
   strategies are then *polished*: the indifference equations on the solver's
   supports are solved exactly (least squares) and kept when they are at least as good,
   so the strategies are exact to rounding error, not to HiGHS' 1e-7 tolerances.

The equilibrium kept among several follows the selection rule (:mod:`.selection`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solvers.matrix.closed_form import solve_2x2
from solvers.matrix.lemke_howson import lemke_howson
from solvers.matrix.lp import solve_lp
from solvers.matrix.mip import solve_mip
from solvers.matrix.polish_batch import deviation_gains
from solvers.matrix.pure import pure_equilibrium_mask, select_pure, tolerance
from solvers.matrix.selection import check_selection, score
from solvers.matrix.support_enumeration import first_by_size, support_enumeration, support_pairs

PURE, CLOSED_FORM, SUPPORT, LP, MIP, LEMKE_HOWSON = range(6)
METHOD_NAMES = ("pure", "closed form 2x2", "support enumeration", "LP", "MIP", "Lemke-Howson")
#: support enumeration is used while a shape has at most this many support pairs (5x5: 226)
SUPPORT_PAIR_LIMIT = 256
#: games per support-enumeration batch are capped so a batch holds about this many floats
SUPPORT_BATCH_FLOATS = 2_000_000


@dataclass
class MatrixSolutions:
    """Equilibria of a stack of games: strategies, values and the method that found each."""

    x: np.ndarray
    y: np.ndarray
    values: np.ndarray
    method: np.ndarray


def is_constant_sum(u0: np.ndarray, u1: np.ndarray, tol: np.ndarray) -> np.ndarray:
    """[b]: whether ``u0 + u1`` is the same in every entry (zero-sum after a shift)."""
    total = u0 + u1
    return (total.max(axis=(-2, -1)) - total.min(axis=(-2, -1))) <= tol


def deviation_gain(u0: np.ndarray, u1: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    """The larger of the two players' best pure deviation gains at ``(x, y)``."""
    rows, cols = u0 @ y, x @ u1
    return max(float(rows.max() - x @ rows), float(cols.max() - cols @ y))


def _indifferent(a: np.ndarray) -> np.ndarray:
    """Least-squares ``p`` with ``a p = v 1``, ``sum p = 1``."""
    k_rows, k_cols = a.shape
    system = np.zeros((k_rows + 1, k_cols + 1))
    system[:k_rows, :k_cols] = a
    system[:k_rows, k_cols] = -1.0
    system[k_rows, :k_cols] = 1.0
    rhs = np.zeros(k_rows + 1)
    rhs[-1] = 1.0
    return np.linalg.lstsq(system, rhs, rcond=None)[0][:k_cols]


def polish(u0: np.ndarray, u1: np.ndarray, x: np.ndarray, y: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """Re-solve the indifference equations on the supports of ``(x, y)``; keep the better."""
    s0, s1 = np.flatnonzero(x > 1e-7), np.flatnonzero(y > 1e-7)
    px, py = np.zeros_like(x), np.zeros_like(y)
    px[s0] = _indifferent(u1[np.ix_(s0, s1)].T)
    py[s1] = _indifferent(u0[np.ix_(s0, s1)])
    if px.min() < 0 or py.min() < 0:
        return x, y
    px, py = px / px.sum(), py / py.sum()
    if deviation_gain(u0, u1, px, py) <= deviation_gain(u0, u1, x, y):
        return px, py
    return x, y


def _single_pure(u0: np.ndarray, u1: np.ndarray, selection: str) -> MatrixSolutions | None:
    """The pure-equilibrium step for one small game in plain Python (numpy's per-call
    overhead dominates tiny matrices); the same rule and tolerance as the batched path."""
    a0, a1 = u0[0].tolist(), u1[0].tolist()
    m, n = len(a0), len(a0[0])
    tol = 1e-9 * max(1.0, max(max(abs(v) for v in r) for r in a0), max(max(abs(v) for v in r) for r in a1))
    col_max = [max(a0[i][j] for i in range(m)) - tol for j in range(n)]
    best, pick = None, None
    for i in range(m):
        row_max = max(a1[i]) - tol
        for j in range(n):
            if a0[i][j] >= col_max[j] and a1[i][j] >= row_max:
                if selection == "first":
                    pick = (i, j)
                    break
                rank = float(score(selection, np.float64(a0[i][j]), np.float64(a1[i][j])))
                if best is None or rank > best:
                    best, pick = rank, (i, j)
        if pick is not None and selection == "first":
            break
    if pick is None:
        return None
    i, j = pick
    x, y = np.zeros((1, m)), np.zeros((1, n))
    x[0, i] = y[0, j] = 1.0
    return MatrixSolutions(x, y, np.array([[a0[i][j], a1[i][j]]]), np.zeros(1, dtype=np.int8))


def pure_step(u0: np.ndarray, u1: np.ndarray, tol: np.ndarray, selection: str
              ) -> tuple[MatrixSolutions, np.ndarray]:
    """Step 1 for a stack [b, m, n]: the selected pure equilibria (method ``PURE``) and
    the games without one (their rows of the solutions are zeros, to be filled)."""
    b, m, n = u0.shape
    x, y = np.zeros((b, m)), np.zeros((b, n))
    values = np.zeros((b, 2))
    choice = select_pure(u0, u1, pure_equilibrium_mask(u0, u1, tol), selection)
    pure = np.flatnonzero(choice >= 0)
    i, j = choice[pure] // n, choice[pure] % n
    x[pure, i] = 1.0
    y[pure, j] = 1.0
    values[pure, 0], values[pure, 1] = u0[pure, i, j], u1[pure, i, j]
    return MatrixSolutions(x, y, values, np.full(b, PURE, dtype=np.int8)), np.flatnonzero(choice < 0)


def enumerate_supports(u0: np.ndarray, u1: np.ndarray, selection: str, tol: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`.support_enumeration.support_enumeration` (:func:`~.support_enumeration.first_by_size`
    for ``first``) in chunks of about ``SUPPORT_BATCH_FLOATS`` floats: (x, y, values, found)."""
    b, m, n = u0.shape
    chunk = max(1, SUPPORT_BATCH_FLOATS // (support_pairs(m, n) * (max(m, n) + 1) ** 2))
    x, y, values = np.zeros((b, m)), np.zeros((b, n)), np.zeros((b, 2))
    found = np.zeros(b, dtype=bool)
    for start in range(0, b, chunk):
        part = slice(start, start + chunk)
        x[part], y[part], values[part], found[part] = (
            first_by_size(u0[part], u1[part], tol[part]) if selection == "first"
            else support_enumeration(u0[part], u1[part], selection, tol[part]))
    return x, y, values, found


def solve_batch(u0: np.ndarray, u1: np.ndarray, selection: str = "first") -> MatrixSolutions:
    """Equilibria of a stack of games [b, m, n] (see the module docstring)."""
    check_selection(selection)
    u0 = np.asarray(u0, dtype=np.float64)
    u1 = np.asarray(u1, dtype=np.float64)
    b, m, n = u0.shape
    if b == 1 and m * n <= 16:
        single = _single_pure(u0, u1, selection)
        if single is not None:
            return single
    tol = tolerance(u0, u1)
    sol, rest = pure_step(u0, u1, tol, selection)
    if rest.size:
        put(sol, rest, solve_mixed(u0[rest], u1[rest], tol[rest], selection))
    return sol


def put(sol: MatrixSolutions, games: np.ndarray, part: MatrixSolutions) -> None:
    """Write ``part``'s rows into ``sol`` at ``games``."""
    sol.x[games], sol.y[games] = part.x, part.y
    sol.values[games], sol.method[games] = part.values, part.method


def solve_mixed(u0: np.ndarray, u1: np.ndarray, tol: np.ndarray, selection: str
                ) -> MatrixSolutions:
    """Steps 2-3 for a stack [b, m, n] of games without a pure equilibrium."""
    b, m, n = u0.shape
    x, y, values = np.zeros((b, m)), np.zeros((b, n)), np.zeros((b, 2))
    method = np.full(b, MIP, dtype=np.int8)
    rest = np.arange(b)
    if m == n == 2:
        x, y, values = solve_2x2(u0, u1)
        return MatrixSolutions(x, y, values, np.full(b, CLOSED_FORM, dtype=np.int8))
    if support_pairs(m, n) <= SUPPORT_PAIR_LIMIT:
        sx, sy, sv, found = enumerate_supports(u0, u1, selection, tol)
        x[found], y[found], values[found] = sx[found], sy[found], sv[found]
        method[found] = SUPPORT
        rest = rest[~found]
    constant = is_constant_sum(u0[rest], u1[rest], tol[rest])
    general = rest[~constant]
    if general.size and selection == "first":
        lx, ly, done = lemke_howson(u0[general], u1[general])
        done &= deviation_gains(u0[general], u1[general], lx, ly) <= 10 * tol[general]
        ok = general[done]
        x[ok], y[ok], method[ok] = lx[done], ly[done], LEMKE_HOWSON
        values[ok, 0] = np.einsum("bi,bij,bj->b", lx[done], u0[ok], ly[done])
        values[ok, 1] = np.einsum("bi,bij,bj->b", lx[done], u1[ok], ly[done])
        general = general[~done]
    per_game = [(g, LP) for g in rest[constant].tolist()] + [(g, MIP) for g in general.tolist()]
    for g, kind in per_game:
        a0, a1 = u0[g], u1[g]
        gx, gy = solve_lp(a0, a1) if kind == LP else solve_mip(a0, a1, selection)
        gx, gy = polish(a0, a1, gx, gy)
        x[g], y[g] = gx, gy
        values[g] = gx @ a0 @ gy, gx @ a1 @ gy
        method[g] = kind
    return MatrixSolutions(x, y, values, method)


def solve_matrix(u0: np.ndarray, u1: np.ndarray, selection: str = "first"
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """GETEQUILIBRIUM of one game: (x, y, (v0, v1), method name)."""
    u0 = np.asarray(u0, dtype=np.float64)
    u1 = np.asarray(u1, dtype=np.float64)
    if u0.ndim != 2 or u0.shape != u1.shape or 0 in u0.shape:
        raise ValueError(f"payoff matrices of shapes {u0.shape} and {u1.shape}")
    sol = solve_batch(u0[None], u1[None], selection)
    return sol.x[0], sol.y[0], sol.values[0], METHOD_NAMES[int(sol.method[0])]
