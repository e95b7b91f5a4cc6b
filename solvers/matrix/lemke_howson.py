"""Lemke-Howson for bimatrix games, batched: all games of one shape pivot in lockstep.

(Lemke and Howson 1964; von Stengel, *Computing equilibria for two-person games*,
Handbook of Game Theory 3, 2002, section 3.) For a stack ``u0, u1`` [b, m, n]:

1. Shift each player's payoffs to ``[1, 2]`` (a positive affine map per player and
   game: the equilibria do not change, every entry is positive as the method needs).
2. Two tableaux per game, one column per *label*: labels ``0..m-1`` are player 0's
   actions, ``m..m+n-1`` player 1's. ``P``: ``B^T x + s = 1`` (n rows; column ``i`` is
   ``x_i``, column ``m + j`` the slack ``s_j``); ``Q``: ``r + A y = 1`` (m rows; column
   ``i`` is ``r_i``, column ``m + j`` is ``y_j``). A label is *present* in a tableau
   when its variable there is non-basic. The start (the artificial equilibrium
   ``x = y = 0``) has every label present exactly once.
3. Drop the missing label ``k``: its variable enters the tableau where it is basic-free
   (``P`` for ``k < m``). The leaving variable's label is now present twice; its
   variable in the *other* tableau enters next. The games alternate tableaux in
   step, so a step is one batched ratio test and pivot. A game stops when the label
   leaving is ``k``: every label is present, which is an equilibrium; ``x`` and ``y``
   are the basic values, normalised.
4. Ratio test: the lexicographic rule (the right-hand side, then the columns of the
   starting basis), so degenerate games cannot cycle and still end at an equilibrium.

The result is the equilibrium at the end of the path from label ``k`` (``k = 0``, the
first action of player 0, by default): deterministic, so the same game always keeps
the same equilibrium. A game still pivoting after ``max_steps`` is reported not done.
"""

from __future__ import annotations

import numpy as np

#: a pivot column entry counts as positive above this (the tableaux hold O(1) numbers)
PIVOT_EPS = 1e-12
#: ratios within this (relative) of the minimum tie and go to the next lexicographic key
TIE_EPS = 1e-11


def _tableaux(u0: np.ndarray, u1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(P [b, n, m+n+1], Q [b, m, m+n+1]) of step 2, payoffs shifted as in step 1."""
    b, m, n = u0.shape

    def shifted(u: np.ndarray) -> np.ndarray:
        low = u.min(axis=(1, 2), keepdims=True)
        spread = np.maximum(u.max(axis=(1, 2), keepdims=True) - low, 1e-300)
        return 1.0 + (u - low) / spread

    a, bb = shifted(u0), shifted(u1)
    p = np.zeros((b, n, m + n + 1))
    p[:, :, :m] = np.swapaxes(bb, 1, 2)
    p[:, np.arange(n), m + np.arange(n)] = 1.0
    p[:, :, -1] = 1.0
    q = np.zeros((b, m, m + n + 1))
    q[:, np.arange(m), np.arange(m)] = 1.0
    q[:, :, m:m + n] = a
    q[:, :, -1] = 1.0
    return p, q


def _leaving_rows(t: np.ndarray, enter: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """[g]: each game's pivot row for entering column ``enter[g]`` by the lexicographic
    ratio test over the columns ``keys`` (right-hand side first); -1 when unbounded."""
    g = np.arange(t.shape[0])
    column = t[g, :, enter]                                   # [g, rows]
    candidate = column > PIVOT_EPS
    safe = np.where(candidate, column, 1.0)
    for key in keys:
        ratio = np.where(candidate, t[:, :, key] / safe, np.inf)
        low = ratio.min(axis=1, keepdims=True)
        candidate &= ratio <= low + TIE_EPS * np.maximum(np.abs(low), 1.0)
        if (candidate.sum(axis=1) <= 1).all():
            break
    return np.where(candidate.any(axis=1), candidate.argmax(axis=1), -1)


def _pivot(t: np.ndarray, row: np.ndarray, enter: np.ndarray) -> np.ndarray:
    """The tableaux [g, rows, cols] after pivoting on (``row[g]``, ``enter[g]``)."""
    g = np.arange(t.shape[0])
    pivot_row = t[g, row] / t[g, row, enter][:, None]
    t = t - t[g, :, enter][:, :, None] * pivot_row[:, None, :]
    t[g, row] = pivot_row
    return t


def lemke_howson(u0: np.ndarray, u1: np.ndarray, label: int = 0, max_steps: int | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x [b, m], y [b, n], done [b]): the equilibria at the end of the Lemke-Howson
    paths from ``label`` for a stack of games [b, m, n] (see the module docstring);
    rows where ``done`` is false are zeros."""
    u0 = np.asarray(u0, dtype=np.float64)
    u1 = np.asarray(u1, dtype=np.float64)
    b, m, n = u0.shape
    if not 0 <= label < m + n:
        raise ValueError(f"label {label} is not an action of a {m}x{n} game")
    max_steps = max_steps if max_steps is not None else 100 * (m + n)
    tableaux = list(_tableaux(u0, u1))
    basis = [np.tile(m + np.arange(n), (b, 1)), np.tile(np.arange(m), (b, 1))]
    keys = [np.r_[m + n, m + np.arange(n)], np.r_[m + n, np.arange(m)]]
    active = np.arange(b)
    enter = np.full(b, label)
    done = np.zeros(b, dtype=bool)
    side = 0 if label < m else 1
    for _ in range(max_steps):
        if active.size == 0:
            break
        t, base = tableaux[side], basis[side]
        row = _leaving_rows(t[active], enter[active], keys[side])
        stuck = row < 0                     # cannot happen with positive payoffs; be safe
        active, row = active[~stuck], row[~stuck]
        t[active] = _pivot(t[active], row, enter[active])
        leaving = base[active, row]
        base[active, row] = enter[active]
        finished = leaving == label
        done[active[finished]] = True
        enter[active] = leaving
        active = active[~finished]
        side = 1 - side
    x = _basic_values(tableaux[0], basis[0], 0, m)
    y = _basic_values(tableaux[1], basis[1], m, n)
    ok = done & (x.sum(axis=1) > 0) & (y.sum(axis=1) > 0)
    x = np.where(ok[:, None], x / np.where(ok, x.sum(axis=1), 1.0)[:, None], 0.0)
    y = np.where(ok[:, None], y / np.where(ok, y.sum(axis=1), 1.0)[:, None], 0.0)
    return x, y, ok


def _basic_values(t: np.ndarray, basis: np.ndarray, first: int, count: int) -> np.ndarray:
    """[b, count]: the values of the variables labelled ``first..first+count-1`` (their
    right-hand side where basic, 0 where not), clipped at 0 (rounding)."""
    b, rows = basis.shape
    out = np.zeros((b, count))
    own = (basis >= first) & (basis < first + count)
    g, r = np.nonzero(own)
    out[g, basis[g, r] - first] = np.maximum(t[g, r, -1], 0.0)
    return out
