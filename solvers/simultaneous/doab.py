"""DOαβ: double oracle with serialized alpha-beta bounds, for constant-sum games.

After B. Bošanský, V. Lisý, M. Lanctot, J. Čermák and M. H. M. Winands, "Algorithms
for computing strategies in two-player simultaneous move games", Artificial
Intelligence 237 (2016) (BIαβ and DOαβ; first published by Bošanský, Lisý, Čermák,
Vítek and Pěchouček, "Using double-oracle method and serialized alpha-beta search for
pruning in simultaneous move games", IJCAI 2013). Values are player 0's payoffs
``u0``; the game must be constant-sum (``u0 + u1 = c`` at every terminal entry), so
``u1 = c - u0`` and every node has one value.

``solve_node(h, a, b)`` (DOαβ with the window ``(a, b)``) returns ``v`` with the
fail-soft contract: ``a < v < b`` is ``h``'s exact value, ``v <= a`` an upper bound,
``v >= b`` a lower bound.

1. A solved node returns its value (transposition table: every node is solved at most
   once; bounds found so far are kept per node too). A chance node is the expected value
   of its outcomes, each solved exactly.
2. Bounds: ``p``, the value of the serialized game where player 0 moves first and
   player 1 answers knowing his move, and ``o``, the one where player 1 moves first;
   ``p <= v(h) <= o``. Both come from alpha-beta over the serialized game (fail-soft,
   with a transposition table of bounds per node and game; chance nodes are expected
   values). ``o <= a`` or ``p >= b``: return that bound at once (pruned).
3. The restricted game starts with one action per player: player 0's first move in
   the first serialized game and player 1's in the second. (BIαβ, ``oracle=False``:
   it is the whole matrix, and only children whose bounds differ are solved; the
   best responses of step 5 then find nothing: backward induction pruned by the
   serialized bounds alone.)
4. Repeat: solve the restricted matrix game (children of its entries solved exactly,
   step 1 recursively; the matrix: a saddle point, else :mod:`solvers.matrix.simplex`)
   giving ``(v_s, x, y)``;
5. player 0's best response to ``y`` among all his actions with threshold ``t =
   max(a, v_s)``: an action whose optimistic value ``sum_j y_j o_ij`` (children's upper
   bounds) is at most ``t`` is skipped; otherwise its children in ``y``'s support are
   solved in turn, each with the window ``(need, o_ij)``, where ``need`` is the value
   the child must exceed for the action to beat ``t``; a child failing low tightens
   ``o_ij`` and discards the action. The same for player 1 against ``x``, threshold
   ``min(b, v_s)``;
6. no best response beats its threshold and ``a <= v_s <= b``: ``(x, y)`` is an
   equilibrium of the node, value ``v_s`` (solved). The best responses' values bound
   ``v(h)``: an upper bound ``<= a`` fails low (``y`` is kept as the witness), a lower
   bound ``>= b`` fails high (``x`` kept); otherwise add the best responses to the
   restricted game and go to 4.

The result is a :class:`~.solution.PartialSolution`: strategies and values at the
nodes solved exactly (every node reached under the returned strategy is), and at
nodes that only failed low or high the strategy that witnesses the bound (never in
``solved``). :mod:`.certificate` checks it independently: deviations into unsolved
nodes count with bounds it computes itself from the serialized games and from those
witness strategies, which hold in any constant-sum game.

Counts (``stats``): ``nodes_evaluated``, nodes where the double oracle ran (a matrix
game solved) or a chance node's expectation was taken; ``nodes_solved``; ``bound_nodes``,
nodes alpha-beta visited in either serialized game; ``restricted_games``, matrix games
solved; ``nodes_total``, the game's nodes (what full backward induction evaluates).

Public API: ``solve(game, selection="first", progress=None, time_limit=None,
max_nodes=None, oracle=True) -> PartialSolution`` (``selection`` is accepted for the
common solver signature; a constant-sum game's value does not depend on it);
``solve_biab(game, ...)`` is BIαβ.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable

import numpy as np

from solvers.errors import LimitReached, UnsupportedGame
from solvers.matrix.simplex import solve_zero_sum
from solvers.recursion import deep_recursion
from solvers.simultaneous.model import CHANCE, SimultaneousGame, require_budget
from solvers.simultaneous.solution import PartialSolution

INF = float("inf")
LOWER, UPPER = 0, 1  # the serialized games: player 0 moves first / player 1 moves first


def constant_sum(game: SimultaneousGame) -> float | None:
    """``c`` when ``u0 + u1 = c`` at every terminal entry (to 1e-9 of the payoff range)."""
    terminal = game.entry_child < 0
    total = game.entry_payoff[terminal].sum(axis=1)
    if total.size == 0:
        return 0.0
    if float(total.max() - total.min()) > 1e-9 * game.payoff_range():
        return None
    return float(total[0])


def _typed(code: str, values: np.ndarray) -> array:
    out = array(code)
    out.frombytes(np.ascontiguousarray(values, dtype=np.dtype(code)).tobytes())
    return out


class _Doab:
    def __init__(self, game: SimultaneousGame, c: float, deadline: float | None,
                 progress: Callable[[int, int], None] | None, oracle: bool) -> None:
        self.game, self.c, self.oracle = game, c, oracle
        self.deadline, self.progress = deadline, progress
        n = game.num_nodes
        # array.array, not lists: Python-speed indexing at 4-8 bytes per item (the
        # model may have 10^8 entries)
        self.child = _typed("i", game.entry_child)
        self.pay = _typed("d", game.entry_payoff[:, 0])
        self.prob = _typed("d", game.entry_prob)
        self.start = _typed("q", game.entry_start)
        self.rows = _typed("i", game.num_actions[:, 0])
        self.cols = _typed("i", game.num_actions[:, 1])
        self.chance = bytes((game.node_kind == CHANCE).astype(np.uint8))
        # serialized games: alpha-beta bounds per node, the first mover's best move
        self.s_lo = (array("d", [-INF]) * n, array("d", [-INF]) * n)
        self.s_hi = (array("d", [INF]) * n, array("d", [INF]) * n)
        self.s_move = (array("i", [0]) * n, array("i", [0]) * n)
        self.s_seen = bytearray(n)
        # the simultaneous game: bounds on v(h), solved values
        self.v_lo = array("d", [-INF]) * n
        self.v_hi = array("d", [INF]) * n
        self.solved = np.zeros(n, dtype=bool)
        self.values = np.full((n, 2), np.nan)
        self.strategy = (np.zeros(int(game.action_start[0, -1])),
                         np.zeros(int(game.action_start[1, -1])))
        self.evaluated = bytearray(n)
        self.n_solved = 0
        self.restricted_games = 0
        self.eps = 1e-12 * game.payoff_range()

    # ------------------------------------------------------------------ serialized games
    def serial(self, g: int, h: int, a: float, b: float) -> float:
        """Fail-soft alpha-beta on serialized game ``g`` at node ``h`` (step 2)."""
        lo, hi = self.s_lo[g][h], self.s_hi[g][h]
        if lo >= b or lo == hi:
            return lo
        if hi <= a:
            return hi
        a, b = max(a, lo), min(b, hi)
        self.s_seen[h] = 1
        s, child, pay = self.start[h], self.child, self.pay
        if self.chance[h]:
            v = 0.0
            for e in range(s, self.start[h + 1]):
                c = child[e]
                v += self.prob[e] * (pay[e] if c < 0 else self.serial(g, c, -INF, INF))
            self.s_lo[g][h] = self.s_hi[g][h] = v
            return v
        m, n = self.rows[h], self.cols[h]
        sign = 1.0 if g == LOWER else -1.0  # first mover maximises sign * u0
        first, second = (m, n) if g == LOWER else (n, m)
        # the first mover's window in his sign space
        alpha, top = (a, b) if g == LOWER else (-b, -a)
        best, move = -INF, 0
        for k in range(first):
            inner, beta = INF, top
            for q in range(second):
                e = s + (k * n + q if g == LOWER else q * n + k)
                c = child[e]
                if c < 0:
                    w = sign * pay[e]
                elif g == LOWER:
                    w = self.serial(g, c, alpha, beta)
                else:
                    w = -self.serial(g, c, -beta, -alpha)
                if w < inner:
                    inner = w
                    if inner <= alpha:
                        break
                    beta = min(beta, inner)
            if inner > best:
                best, move = inner, k
                if best >= top:
                    break
                alpha = max(alpha, best)
        v = sign * best
        self.s_move[g][h] = move  # the first mover's best move found: a starting action
        if v <= a:
            self.s_hi[g][h] = v
        elif v >= b:
            self.s_lo[g][h] = v
        else:
            self.s_lo[g][h] = self.s_hi[g][h] = v
        return v

    def bounds(self, h: int) -> tuple[float, float]:
        """(p, o): the serialized games' values, tightened by what DOαβ found at ``h``."""
        p = self.serial(LOWER, h, -INF, INF)
        o = self.serial(UPPER, h, -INF, INF)
        return max(p, self.v_lo[h]), min(o, self.v_hi[h])

    def entry_bounds(self, e: int) -> tuple[float, float]:
        c = self.child[e]
        if c < 0:
            return self.pay[e], self.pay[e]
        if self.solved[c]:
            v = float(self.values[c, 0])
            return v, v
        return self.bounds(c)

    # ------------------------------------------------------------------ DOαβ
    def solve_node(self, h: int, a: float, b: float) -> float:
        """DOαβ(h, a, b) with the fail-soft contract of the module docstring."""
        if self.solved[h]:
            return float(self.values[h, 0])
        if self.chance[h]:
            return self.solve_chance(h)
        p, o = self.bounds(h)
        if o <= a:
            return o
        if p >= b:
            return p
        self.tick(h)
        return self.double_oracle(h, a, b, p, o)

    def solve_chance(self, h: int) -> float:
        self.tick(h)
        v = 0.0
        for e in range(self.start[h], self.start[h + 1]):
            c = self.child[e]
            v += self.prob[e] * (self.pay[e] if c < 0 else self.solve_node(c, -INF, INF))
        self.finish(h, v)
        return v

    def double_oracle(self, h: int, a: float, b: float, lo_k: float, hi_k: float) -> float:
        """Steps 3-6 at decision node ``h``."""
        m, n, s = self.rows[h], self.cols[h], self.start[h]
        # cell bounds, filled when first needed (NaN: not looked at yet)
        lo_mat = np.full((m, n), np.nan)
        for e in range(s, s + m * n):
            if self.child[e] < 0:
                lo_mat.flat[e - s] = self.pay[e]
        hi_mat = lo_mat.copy()
        if self.oracle:
            rows, cols = [self.s_move[LOWER][h]], [self.s_move[UPPER][h]]
        else:  # BIαβ: the whole matrix; children whose bounds meet are not solved
            rows, cols = list(range(m)), list(range(n))
            for e in range(s, s + m * n):
                lo_mat.flat[e - s], hi_mat.flat[e - s] = self.entry_bounds(e)
        while True:
            for i in rows:  # the restricted game's children, exactly
                for j in cols:
                    if not lo_mat[i, j] == hi_mat[i, j]:  # also when not looked at (NaN)
                        lo_mat[i, j] = hi_mat[i, j] = self.solve_node(self.child[s + i * n + j], -INF, INF)
            x, y, v_s = self.restricted_game(lo_mat[np.ix_(rows, cols)])
            ibr, up = self.best_response(h, lo_mat, hi_mat, rows, cols, y, max(a, v_s), 1.0)
            jbr, down = self.best_response(h, lo_mat, hi_mat, cols, rows, x, min(b, v_s), -1.0)
            hi_k, lo_k = min(hi_k, up), max(lo_k, down)
            if ibr is None and jbr is None and a <= v_s <= b:
                self.store(h, rows, cols, x, y)
                self.solve_support(h, rows, cols, x, y)
                self.finish(h, v_s)
                return v_s
            if hi_k <= a:
                self.v_hi[h] = min(self.v_hi[h], hi_k)
                self.store(h, rows, cols, None, y)
                return hi_k
            if lo_k >= b:
                self.v_lo[h] = max(self.v_lo[h], lo_k)
                self.store(h, rows, cols, x, None)
                return lo_k
            if ibr is not None:
                rows.append(ibr)
            if jbr is not None:
                cols.append(jbr)

    def restricted_game(self, sub: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """(x, y, value) of the zero-sum matrix ``sub``: a saddle point directly (half of
        the restricted games), else the small tableau simplex (no scipy call)."""
        self.restricted_games += 1
        low, high = sub.min(axis=1), sub.max(axis=0)
        i, j = int(low.argmax()), int(high.argmin())
        if low[i] >= high[j] - self.eps:
            return np.eye(sub.shape[0])[i], np.eye(sub.shape[1])[j], float(sub[i, j])
        return solve_zero_sum(sub)

    def best_response(self, h: int, lo_mat: np.ndarray, hi_mat: np.ndarray, own: list[int],
                      opp: list[int], sigma: np.ndarray, t: float, sign: float
                      ) -> tuple[int | None, float]:
        """Step 5 for player 0 (``sign`` 1, rows) or 1 (``sign`` -1, columns): the best
        action outside ``own`` against ``sigma`` on ``opp`` if it beats ``t``, and the
        best response value (``t`` when none beats it), in player 0's payoffs."""
        n, s = self.cols[h], self.start[h]
        # in "sign space" the player maximises: his optimistic cell is hi (p0) or lo (p1)
        optimistic = hi_mat if sign > 0 else lo_mat
        support = sorted(((w, q) for q, w in zip(opp, sigma.tolist(), strict=True) if w > 0),
                         reverse=True)
        best, best_k = sign * t, None
        for k in range(self.rows[h] if sign > 0 else n):
            if k in own:
                continue  # in the restricted game: worth at most v_s against sigma
            cells = [((k, q) if sign > 0 else (q, k), w) for w, q in support]
            for c, _ in cells:
                if np.isnan(lo_mat[c]):
                    lo_mat[c], hi_mat[c] = self.entry_bounds(s + c[0] * n + c[1])
            opt = sum(w * sign * optimistic[c] for c, w in cells)
            for c, w in cells:
                if opt <= best + self.eps:
                    break
                if lo_mat[c] < hi_mat[c]:
                    # the cell must exceed ``need`` (sign space) for action k to beat ``best``
                    need = (best - (opt - w * sign * optimistic[c])) / w
                    self.solve_cell(h, c, lo_mat, hi_mat, sign * need, sign)
                    opt = sum(w2 * sign * optimistic[c2] for c2, w2 in cells)
            if opt > best + self.eps and all(lo_mat[c] == hi_mat[c] for c, _ in cells):
                best, best_k = opt, k
        return best_k, sign * best

    def solve_cell(self, h: int, c: tuple[int, int], lo_mat: np.ndarray, hi_mat: np.ndarray,
                   need: float, sign: float) -> None:
        """Solve cell ``c``'s child within the window the best response needs (above
        ``need`` for player 0, below it for player 1); a fail tightens the cell's bound."""
        lo, hi = float(lo_mat[c]), float(hi_mat[c])
        a, b = (max(need, lo), hi) if sign > 0 else (lo, min(need, hi))
        if a >= b:  # no room (rounding): the cell stays inexact, so the action is dropped
            return
        v = self.solve_node(self.child[self.start[h] + c[0] * self.cols[h] + c[1]], a, b)
        if sign > 0 and v <= a and a > lo:
            hi_mat[c] = min(hi, v)
        elif sign < 0 and v >= b and b < hi:
            lo_mat[c] = max(lo, v)
        else:
            lo_mat[c] = hi_mat[c] = v

    # ------------------------------------------------------------------ bookkeeping
    def store(self, h: int, rows: list[int], cols: list[int], x: np.ndarray | None,
              y: np.ndarray | None) -> None:
        """Keep the restricted game's strategies at ``h`` (equilibrium or witness)."""
        for p, actions, sigma in ((0, rows, x), (1, cols, y)):
            if sigma is not None:
                start = int(self.game.action_start[p, h])
                own = self.strategy[p][start:start + (self.rows[h], self.cols[h])[p]]
                own[:] = 0.0
                own[actions] = sigma

    def solve_support(self, h: int, rows: list[int], cols: list[int], x: np.ndarray,
                      y: np.ndarray) -> None:
        """Children reached under ``(x, y)`` whose value was known from bounds alone are
        solved too, so the strategy is defined wherever it leads."""
        for i, xi in zip(rows, x.tolist(), strict=True):
            for j, yj in zip(cols, y.tolist(), strict=True):
                c = self.child[self.start[h] + i * self.cols[h] + j]
                if xi > 0 and yj > 0 and c >= 0 and not self.solved[c]:
                    self.solve_node(c, -INF, INF)

    def finish(self, h: int, v: float) -> None:
        self.solved[h] = True
        self.n_solved += 1
        self.values[h] = (v, self.c - v)
        self.v_lo[h] = self.v_hi[h] = v

    def tick(self, h: int) -> None:
        if not self.evaluated[h]:
            self.evaluated[h] = 1
            if self.progress is not None:
                self.progress(self.n_solved, self.game.num_nodes)
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise LimitReached(f"time limit reached after {sum(self.evaluated):,} of "
                               f"{self.game.num_nodes:,} nodes evaluated")

    def result(self, start: float) -> PartialSolution:
        method = np.full(self.game.num_nodes, -1, dtype=np.int8)
        stats = {"nodes_total": self.game.num_nodes,
                 "nodes_evaluated": sum(self.evaluated),
                 "nodes_solved": int(self.solved.sum()),
                 "bound_nodes": sum(self.s_seen),
                 "restricted_games": self.restricted_games}
        return PartialSolution(game=self.game, solver="doab" if self.oracle else "biab",
                               selection="constant-sum",
                               strategy=self.strategy, values=self.values, solved=self.solved,
                               method=method, seconds=time.perf_counter() - start, stats=stats)


def solve(game: SimultaneousGame, selection: str = "first",
          progress: Callable[[int, int], None] | None = None,
          time_limit: float | None = None, max_nodes: int | None = None,
          oracle: bool = True) -> PartialSolution:
    """DOαβ (BIαβ without the ``oracle``) from the root: an equilibrium defined wherever
    it leads (module docstring)."""
    require_budget(game, max_nodes)
    c = constant_sum(game)
    if c is None:
        name = "doab" if oracle else "biab"
        raise UnsupportedGame(f"{name} solves constant-sum games only (u0 + u1 differs "
                              "between terminal entries); use --solver baseline or ih")
    start = time.perf_counter()
    run = _Doab(game, c, None if time_limit is None else start + time_limit, progress, oracle)
    try:
        with deep_recursion:
            run.solve_node(game.root, -INF, INF)
    except LimitReached as exc:
        exc.partial = run.result(start)
        raise
    return run.result(start)


def solve_biab(game: SimultaneousGame, selection: str = "first",
               progress: Callable[[int, int], None] | None = None,
               time_limit: float | None = None, max_nodes: int | None = None) -> PartialSolution:
    """BIαβ: backward induction pruned by the serialized bounds (step 3's variant)."""
    return solve(game, selection, progress, time_limit, max_nodes, oracle=False)


COUNT_FIELDS = ("nodes_evaluated", "nodes_total", "nodes_solved", "bound_nodes", "restricted_games")


def counts(solution: object) -> dict[str, int]:
    """The node counts of a DOαβ solution (``--json`` fields); {} for other solvers."""
    stats = getattr(solution, "stats", {})
    return {key: int(stats[key]) for key in COUNT_FIELDS if key in stats}


def counts_line(solution: object) -> str | None:
    """One summary line of the counts, against full backward induction."""
    found = counts(solution)
    if not found:
        return None
    name = getattr(solution, "solver", "doab")
    return (f"{name}: {found['nodes_evaluated']:,} of {found['nodes_total']:,} nodes "
            f"evaluated (backward induction evaluates all), {found['nodes_solved']:,} solved, "
            f"{found['restricted_games']:,} restricted matrix games, "
            f"{found['bound_nodes']:,} nodes in the serialized alpha-beta searches")
