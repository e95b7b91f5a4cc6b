"""Interval heuristic, IH (thesis section 4.3, Algorithms 6-9), on arrays and on DAGs.

1. GETUTILITYINTERVALS (Algorithm 6): every node's utility interval ``Omega_h^p``, the
   smallest and largest payoff of player ``p`` at any terminal entry below ``h``
   (computed once for all nodes, bottom-up by levels, vectorised).
2. GETPIVOT (Algorithm 7): compare the intervals of entries in the same column (player
   0) or the same row (player 1): a strictly higher interval gives the better entry
   an *in* and the worse an *out*; overlapping intervals give an *in* to the larger
   mean (to both when the means are equal). The pivot is the entry with both *out*
   values 0 and the largest ``in0 + in1``, ties to the first in row-major order.
   (Computed for all nodes at once, vectorised, right after step 1.)
3. GETPBS (Algorithm 9): solve the pivot's child recursively (its pbs), then
4. TESTPIVOT (Algorithm 8): for every deviation ``(x', y)`` of player 0 whose interval
   maximum beats the pivot's value, take the deviation's value (a terminal entry's
   payoff; for a child, an equilibrium of its subgame worst for player 0, i.e.
   GETEQUILIBRIUM(sigma(x', y), 0, false)) and move the pivot there when it pays more;
   the same for player 1 along the row. If player 1's pass moved the pivot, repeat
   with the new pivot; the shared ``counter`` gives up after ``min(|A0|, |A1|)`` rounds.
5. A pivot that survives is a pure equilibrium of the node; otherwise solve every
   child (GETPBS) and the node's matrix (GETEQUILIBRIUM, as the baseline).

The result is a partial behavioral strategy (pbs) that is part of a subgame-perfect
equilibrium (Lemma 4.3.11); :mod:`.certificate` checks that independently.

Deviations from the printed pseudo-code (``../shared/reference/THESIS-NOTES.md``):

* Algorithm 8 lines 11-16 (and 21-26) nest the switch inside ``(x', y) in E_h``, so a
  terminal deviation that pays more would never move the pivot and the result would
  not be an equilibrium. We compute the equilibrium only for a child entry and switch
  whenever the deviation pays more (child: its worst equilibrium value for the
  deviator; terminal: its payoff).
* The repetition and the ``counter`` exist only in the prose (Algorithm 9 passes three
  arguments to the two-argument TESTPIVOT); we loop inside TESTPIVOT with a local
  counter and repeat only when player 1's pass moved the pivot (player 0's pass
  leaves a pivot that player 0 cannot improve in its column).
* When the pivot moves to a child entry, the subgame solved for the test *is* the new
  pivot's solution (Algorithm 9 lines 10-12 re-solve it): one solution per node, so
  the value the test assumed is the value used.
* GETEQUILIBRIUM(sigma(x', y), 0, false) asks for an SPE of the subgame with minimal
  utility for player 0. We solve the subgame like the baseline, choosing at its top
  node the equilibrium worst for player 0 (selection ``min0``: Algorithm 2 among pure
  equilibria, Algorithm 4 without one) and the run's selection below it; the exact
  minimum over all SPEs of a general-sum subgame is not computed. Any SPE of the
  subgame is a valid witness; in zero-sum games the value is unique anyway.
* The subgames of all deviations a pass may test are solved in one batch (player 1's
  for the current pivot too, before player 0's pass ends); when the pivot moves a few
  may go unused. This only saves numpy overhead: each is an SPE of its subgame.
* On a DAG every node is solved once (memoised): a node already solved (in the pbs or
  in a witness subgame) keeps its solution, so a shared node has one strategy.
  The witness for a deviation is then that solution, which need not be the worst
  equilibrium for the deviator in general-sum games; it is still an SPE of the
  subgame, which is all Lemma 4.3.11 needs.
* The thesis' pbs is the set of nodes where ``b'`` is defined: the pivot path, the
  children of mixed nodes, and the subgames solved to test pivots. ``solved`` is that
  set; ``Solution.reachable()`` the part reached with positive probability.

Public API: ``solve(game, selection="first", progress=None, time_limit=None,
max_nodes=None) -> PartialSolution``; :func:`utility_intervals`, :func:`in_out` and
:func:`get_pivot` are exposed for tests and reuse.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np

from solvers.errors import LimitReached
from solvers.matrix.equilibrium import PURE
from solvers.simultaneous.baseline import SolverState, solve_subgames
from solvers.simultaneous.model import CHANCE, SimultaneousGame, concat_ranges, require_budget
from solvers.simultaneous.solution import PartialSolution


def utility_intervals(game: SimultaneousGame) -> tuple[np.ndarray, np.ndarray]:
    """GETUTILITYINTERVALS for all nodes: (omega_min [N, 2], omega_max [N, 2])."""
    lo = np.full((game.num_nodes, 2), np.inf)
    hi = np.full((game.num_nodes, 2), -np.inf)
    for level in game.levels:
        sizes = np.diff(game.entry_start)[level]
        idx = concat_ranges(game.entry_start[level], sizes)
        child = game.entry_child[idx]
        has = (child >= 0)[:, None]
        entry_lo = np.where(has, lo[np.maximum(child, 0)], game.entry_payoff[idx])
        entry_hi = np.where(has, hi[np.maximum(child, 0)], game.entry_payoff[idx])
        # a chance outcome of probability 0 cannot bound the expected value
        impossible = (game.entry_prob[idx] == 0)[:, None]
        entry_lo = np.where(impossible, np.inf, entry_lo)
        entry_hi = np.where(impossible, -np.inf, entry_hi)
        offsets = np.cumsum(sizes) - sizes
        lo[level] = np.minimum.reduceat(entry_lo, offsets, axis=0)
        hi[level] = np.maximum.reduceat(entry_hi, offsets, axis=0)
    return lo, hi


def in_out(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The *in* and *out* values [..., 2, m, n] of Algorithm 7 from entry intervals [..., 2, m, n].

    Player 0 compares entries of one column, player 1 entries of one row.
    """
    ins = np.zeros(lo.shape, dtype=np.int64)
    outs = np.zeros(lo.shape, dtype=np.int64)
    for p in (0, 1):
        # [..., k, other]: the k compared actions first (rows for player 0, columns for 1)
        a_lo = lo[..., p, :, :] if p == 0 else np.swapaxes(lo[..., p, :, :], -1, -2)
        a_hi = hi[..., p, :, :] if p == 0 else np.swapaxes(hi[..., p, :, :], -1, -2)
        mean = (a_lo + a_hi) / 2
        # ordered pairs (x, y): x's interval entirely above y's gives in to x, out to y
        beats = a_lo[..., :, None, :] > a_hi[..., None, :, :]
        beaten = np.swapaxes(beats, -3, -2)
        overlap = ~beats & ~beaten
        wins = beats | (overlap & (mean[..., :, None, :] >= mean[..., None, :, :]))
        k = a_lo.shape[-2]
        other = ~np.eye(k, dtype=bool)[:, :, None]
        count_in = (wins & other).sum(axis=-2)
        count_out = (beaten & other).sum(axis=-2)
        if p == 1:
            count_in, count_out = np.swapaxes(count_in, -1, -2), np.swapaxes(count_out, -1, -2)
        ins[..., p, :, :], outs[..., p, :, :] = count_in, count_out
    return ins, outs


def pivots(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """GETPIVOT for a stack of nodes' entry intervals [b, 2, m, n]: flat pivot index or -1.

    The pivot has both *out* values 0 and the largest ``in0 + in1``; ties go to the
    first entry in row-major order.
    """
    ins, outs = in_out(lo, hi)
    b = lo.shape[0]
    candidate = ((outs[:, 0] == 0) & (outs[:, 1] == 0)).reshape(b, -1)
    total = np.where(candidate, (ins[:, 0] + ins[:, 1]).reshape(b, -1), -1)
    return np.where(candidate.any(axis=1), total.argmax(axis=1), -1)


def get_pivot(lo: np.ndarray, hi: np.ndarray) -> tuple[int, int] | None:
    """GETPIVOT for one node from its entry intervals [2, m, n]: the pivot or ``None``."""
    flat = int(pivots(lo[None], hi[None])[0])
    return None if flat < 0 else divmod(flat, lo.shape[2])


def all_pivots(game: SimultaneousGame, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """[N]: every decision node's pivot (flat entry index, -1 for none), by shape batches.

    GETPIVOT only reads the utility intervals, which Algorithm 6 computes for every
    node anyway, so counting the in/out values for all nodes in one vectorised pass
    costs less than doing it node by node along the recursion.
    """
    result = np.full(game.num_nodes, -1, dtype=np.int64)
    decision = np.flatnonzero(game.node_kind != CHANCE)
    shapes = game.num_actions[decision]
    codes = shapes[:, 0].astype(np.int64) * (1 << 20) + shapes[:, 1]
    for code in np.unique(codes):
        nodes = decision[codes == code]
        m, n = int(code >> 20), int(code & ((1 << 20) - 1))
        idx = game.entry_start[nodes][:, None] + np.arange(m * n)
        child = game.entry_child[idx]
        has = (child >= 0)[..., None]
        e_lo = np.where(has, lo[np.maximum(child, 0)], game.entry_payoff[idx])
        e_hi = np.where(has, hi[np.maximum(child, 0)], game.entry_payoff[idx])
        # [k, m*n, 2] -> [k, 2, m, n]
        e_lo = np.moveaxis(e_lo, -1, 1).reshape(-1, 2, m, n)
        e_hi = np.moveaxis(e_hi, -1, 1).reshape(-1, 2, m, n)
        for start in range(0, len(nodes), 4096):  # bounded memory for wide matrices
            part = slice(start, start + 4096)
            result[nodes[part]] = pivots(e_lo[part], e_hi[part])
    return result


class _IntervalHeuristic:
    def __init__(self, state: SolverState, lo: np.ndarray, hi: np.ndarray,
                 deadline: float | None, progress: Callable[[int, int], None] | None) -> None:
        self.state, self.game = state, state.game
        self.lo, self.hi = lo, hi
        self.pivot = all_pivots(state.game, lo, hi)
        self.deadline = deadline
        self.progress = progress
        self.tol = 1e-9 * max(1.0, float(np.abs(self.game.entry_payoff).max(initial=0.0)))

    def entry(self, node: int, i: int, j: int) -> int:
        return int(self.game.entry_start[node]) + i * self.game.shape(node)[1] + j

    def entry_value(self, e: int) -> np.ndarray:
        child = int(self.game.entry_child[e])
        return self.state.values[child] if child >= 0 else self.game.entry_payoff[e]

    def deviation_tops(self, entries: list[int], player: int, value: float) -> list[int]:
        """Unsolved children of the deviations TESTPIVOT may look at for ``player``: child
        entries whose interval maximum beats the pivot's value."""
        g, solved = self.game, self.state.solved
        return [int(g.entry_child[e]) for e in entries
                if g.entry_child[e] >= 0 and value < self.hi_of(e, player) - self.tol
                and not solved[g.entry_child[e]]]

    def prepare(self, tops0: list[int], tops1: list[int]) -> None:
        """Solve the deviations' subgames in one batch, each as GETEQUILIBRIUM(child, p, false).

        TESTPIVOT compares them one by one; solving them together (and player 1's
        deviations from the current pivot before player 0's pass has finished, so a
        few may go unused when the pivot moves) only saves numpy overhead: every
        solved subgame is an SPE of its subgame, so the pbs stays part of an SPE.
        """
        if tops0 or tops1:
            solve_subgames(self.state, {"min0": tops0, "min1": tops1}, self.deadline)
            stats = self.state.stats
            stats["witness subgames"] = stats.get("witness subgames", 0) + len(tops0) + len(tops1)

    def test_pivot(self, node: int, pivot: tuple[int, int] | None) -> tuple[int, int] | None:
        """TESTPIVOT (Algorithm 8 with the fixes in the module docstring)."""
        if pivot is None:
            return None
        g = self.game
        if g.height[node] == 0:  # terminal node: the pivot is a pure equilibrium (Lemma 4.3.9)
            return pivot
        m, n = g.shape(node)
        x, y = pivot
        counter = 0
        while True:
            counter += 1
            if counter > min(m, n):
                return None
            value = self.entry_value(self.entry(node, x, y))
            column = [self.entry(node, x2, y) for x2 in range(m) if x2 != x]
            row = [self.entry(node, x, y2) for y2 in range(n) if y2 != y]
            self.prepare(self.deviation_tops(column, 0, float(value[0])),
                         self.deviation_tops(row, 1, float(value[1])))
            for e in column:
                if value[0] < self.hi_of(e, 0) - self.tol and value[0] < self.entry_value(e)[0] - self.tol:
                    x = int(g.entry_row[e])
                    value = self.entry_value(e)
            row = [self.entry(node, x, y2) for y2 in range(n) if y2 != y]
            self.prepare([], self.deviation_tops(row, 1, float(value[1])))
            moved = False
            for e in row:
                if value[1] < self.hi_of(e, 1) - self.tol and value[1] < self.entry_value(e)[1] - self.tol:
                    y, moved = int(g.entry_col[e]), True
                    value = self.entry_value(e)
            if not moved:
                return x, y

    def hi_of(self, e: int, player: int) -> float:
        child = int(self.game.entry_child[e])
        return float(self.hi[child, player] if child >= 0 else self.game.entry_payoff[e, player])

    def get_pbs(self, node: int) -> None:
        """GETPBS (Algorithm 9): solve ``node`` (memoised), recursing along pivots."""
        state, g = self.state, self.game
        if state.solved[node]:
            return
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise LimitReached(f"time limit reached after {int(state.solved.sum())} nodes")
        if g.node_kind[node] == CHANCE:
            self.solve_children_then(node)
            return
        flat = int(self.pivot[node])
        pivot = None if flat < 0 else divmod(flat, g.shape(node)[1])
        if pivot is not None:
            child = int(g.entry_child[self.entry(node, *pivot)])
            if child >= 0:
                self.get_pbs(child)
        final = self.test_pivot(node, pivot)
        if final is None:  # no pure equilibrium found: solve every child, then the matrix
            self.solve_children_then(node)
            return
        x, y = final
        m, n = g.shape(node)
        state.strategy[0][g.action_start[0, node]:g.action_start[0, node] + m] = np.eye(m)[x]
        state.strategy[1][g.action_start[1, node]:g.action_start[1, node] + n] = np.eye(n)[y]
        state.values[node] = self.entry_value(self.entry(node, x, y))
        state.method[node] = PURE
        state.solved[node] = True
        if self.progress is not None:
            self.progress(int(state.solved.sum()), g.num_nodes)

    def solve_children_then(self, node: int) -> None:
        for child in np.unique(self.game.children(node)).tolist():
            self.get_pbs(child)
        self.state.solve_level(np.array([node]))


def solve(game: SimultaneousGame, selection: str = "first",
          progress: Callable[[int, int], None] | None = None,
          time_limit: float | None = None, max_nodes: int | None = None) -> PartialSolution:
    """The interval heuristic: a pbs that is part of a subgame-perfect equilibrium."""
    require_budget(game, max_nodes)
    start = time.perf_counter()
    state = SolverState(game, selection)
    lo, hi = utility_intervals(game)
    deadline = None if time_limit is None else start + time_limit
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * int(game.height.max()) + 1000))
    try:
        _IntervalHeuristic(state, lo, hi, deadline, progress).get_pbs(game.root)
    except LimitReached as exc:
        exc.partial = state.result(PartialSolution, "ih", start)
        raise
    finally:
        sys.setrecursionlimit(limit)
    return state.result(PartialSolution, "ih", start)
