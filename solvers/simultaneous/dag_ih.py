"""The interval heuristic (thesis Algorithms 6-9) natively on the compact model.

The same algorithm as :mod:`.interval_heuristic` (read its docstring for the steps and
for where we deviate from the printed pseudo-code), on a :class:`~.dag.StateDag`'s
arrays, at the DAG's footprint:

1. GETUTILITYINTERVALS and GETPIVOT for all states, level by level in height order
   (:func:`intervals_and_pivots`), vectorised over chunks of a level: per state only
   ``lo[S, 2]``, ``hi[S, 2]`` and a pivot ``int32[S]``; the entries' intervals exist
   for one chunk at a time.
2. GETPBS / TESTPIVOT per state along the pivots (a recursion, as the algorithm is),
   reading the DAG's arrays; every state is solved once (memoised).
3. Matrix games (a state without a surviving pivot) and witness subgames (GETEQUILIBRIUM
   of a deviation's subgame) go through the baseline's machinery
   (:class:`.dag_baseline.LevelSolver`, :func:`solvers.matrix.level_batch.solve_level_groups`):
   the unsolved states below the tops, level by level, each level solved in one batch.

Nature: a joint move with ``nk > 1`` outcomes is what the per-entry model
(:func:`.dag_convert.dag_to_game`) makes a chance node of its own, so the heuristic
treats such a *cell* as that node: its interval is the min / max over its outcomes,
its value their mean, solving it solves its distinct outcome states in id order, and a
deviation into it is a witness whose outcome states are solved with the run's rule.
Everything is visited in the order today's IH visits the converted game, so the same
states are solved by the same rule, and values equal today's.

Differences from today's IH on the converted game: constant-sum matrix games without a
pure equilibrium are solved by the level-batched methods (support enumeration, closed
forms, block LPs) instead of the per-game LP, so a mixed state may keep another optimal
strategy of the same value (never a pure one: pure equilibria are found by the same
code); chance values are means rather than probability-weighted sums (rounding only).

Memory: the DAG, and per state about ``IH_BYTES_PER_STATE`` bytes (heights 4, intervals
32, pivot 4, values 16, pure 4, method 1, solved 1, a scratch mark 1) plus the mixed
states' side table; one chunk's entry arrays while computing the intervals.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np

from solvers.errors import LimitReached
from solvers.matrix.equilibrium import PURE
from solvers.simultaneous.dag import StateDag, heights
from solvers.simultaneous.dag_baseline import (
    CHUNK_ENTRIES,
    LevelSolver,
    chunks,
    joint_move_values,
    level_order,
    shape_groups,
)
from solvers.simultaneous.dag_solution import DagSolution
from solvers.simultaneous.interval_heuristic import pivots
from solvers.simultaneous.model import concat_ranges

Progress = Callable[[int, int], None]

#: bytes per state the solve holds besides the DAG (module docstring), with room for
#: the mixed states' side table
IH_BYTES_PER_STATE = 80
#: entries per chunk of a level while computing intervals and pivots (about 60 bytes
#: an entry: the entries' and joint moves' intervals and the pivots' inputs)
INTERVAL_CHUNK_ENTRIES = 1 << 19
#: states per GETPIVOT batch (its in/out counts take about 50 bytes per entry and action)
PIVOT_BATCH = 4096


def estimate_bytes(dag: StateDag) -> int:
    """What a solve of ``dag`` holds at its peak, roughly (the DAG included)."""
    return (dag.nbytes() + IH_BYTES_PER_STATE * dag.num_states
            + 60 * min(CHUNK_ENTRIES, dag.num_entries))


def cell_intervals(dag: StateDag, states: np.ndarray, lo: np.ndarray, hi: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lo, hi [C, 2], offset of each state's cells): the joint moves' utility intervals,
    min / max over nature's outcomes."""
    sizes = dag.entry_start[states + 1] - dag.entry_start[states]
    child = dag.entry_child[concat_ranges(dag.entry_start[states], sizes)]
    c_lo, c_hi = lo[child], hi[child]
    cells = dag.n0[states].astype(np.int64) * dag.n1[states]
    nk = dag.nk[states]
    if (nk > 1).any():
        cell_nk = np.repeat(nk.astype(np.int64), cells)
        first = np.cumsum(cell_nk) - cell_nk
        c_lo = np.minimum.reduceat(c_lo, first, axis=0)
        c_hi = np.maximum.reduceat(c_hi, first, axis=0)
    return c_lo, c_hi, np.cumsum(cells) - cells


def intervals_and_pivots(dag: StateDag, height: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """GETUTILITYINTERVALS and GETPIVOT for every state: (lo [S, 2], hi [S, 2], pivot [S]).

    A state's interval is the min / max of its entries' (a terminal state's is its
    payoff); its pivot is a flat joint-move index (``i * n1 + j``) or -1, by
    :func:`.interval_heuristic.pivots` on the joint moves' intervals."""
    order, bounds = level_order(dag, height)
    lo = np.full((dag.num_states, 2), np.inf)
    hi = np.full((dag.num_states, 2), -np.inf)
    terminal = dag.terminal
    lo[terminal] = hi[terminal] = dag.payoff[terminal]
    pivot = np.full(dag.num_states, -1, dtype=np.int32)
    for h in range(1, len(bounds) - 1):
        for part in chunks(dag, order[bounds[h]:bounds[h + 1]], INTERVAL_CHUNK_ENTRIES):
            c_lo, c_hi, cell_start = cell_intervals(dag, part, lo, hi)
            lo[part] = np.minimum.reduceat(c_lo, cell_start, axis=0)
            hi[part] = np.maximum.reduceat(c_hi, cell_start, axis=0)
            for pos, (m, n) in shape_groups(dag, part):
                for at in range(0, pos.size, PIVOT_BATCH):
                    some = pos[at:at + PIVOT_BATCH]
                    idx = cell_start[some][:, None] + np.arange(m * n)
                    # [k, m*n, 2] -> [k, 2, m, n]
                    e_lo = np.moveaxis(c_lo[idx], -1, 1).reshape(-1, 2, m, n)
                    e_hi = np.moveaxis(c_hi[idx], -1, 1).reshape(-1, 2, m, n)
                    pivot[part[some]] = pivots(e_lo, e_hi)
    return lo, hi, pivot


class _DagIntervalHeuristic:
    def __init__(self, dag: StateDag, selection: str, deadline: float | None,
                 progress: Progress | None) -> None:
        self.dag = dag
        self.height = heights(dag)
        self.lo, self.hi, self.pivot = intervals_and_pivots(dag, self.height)
        self.level = LevelSolver(dag, selection)
        self.values, self.solved, self.store = self.level.values, self.level.solved, self.level.store
        # today's tolerance: 1e-9 of the largest payoff an entry of the converted game holds
        referenced = np.zeros(dag.num_states, dtype=bool)
        referenced[dag.entry_child] = True
        referenced &= dag.terminal
        self.tol = 1e-9 * max(1.0, float(np.abs(dag.payoff[referenced]).max(initial=0.0)))
        self.scratch = np.zeros(dag.num_states, dtype=bool)   # all False between uses
        self.deadline, self.progress = deadline, progress
        self.total = int(np.count_nonzero(~dag.terminal))
        self.done = 0
        self.witnesses = 0

    # -- the DAG's cells (joint moves) ---------------------------------------------
    def kids(self, s: int) -> np.ndarray:
        return self.dag.entry_child[self.dag.entry_start[s]:self.dag.entry_start[s + 1]]

    def cell_kids(self, s: int, cell: int) -> np.ndarray:
        nk = int(self.dag.nk[s])
        start = int(self.dag.entry_start[s]) + cell * nk
        return self.dag.entry_child[start:start + nk]

    def cell_values(self, s: int) -> np.ndarray:
        """[m*n, 2]: each joint move's value (NaN where an outcome is unsolved)."""
        return joint_move_values(self.dag, np.array([s]), self.values)[0]

    def cell_hi(self, s: int) -> np.ndarray:
        """[m*n, 2]: each joint move's interval maximum."""
        return cell_intervals(self.dag, np.array([s]), self.lo, self.hi)[1]

    def is_child(self, s: int, cell: int) -> bool:
        """Whether the converted game has a child node there (not a terminal entry)."""
        return self.dag.nk[s] > 1 or self.dag.n0[self.cell_kids(s, cell)[0]] > 0

    # -- GETPBS / TESTPIVOT ------------------------------------------------------------
    def get_pbs(self, s: int) -> None:
        """GETPBS (Algorithm 9): solve state ``s`` (memoised), recursing along pivots."""
        if self.solved[s]:
            return
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise LimitReached(f"time limit reached after {self.done} of {self.total} states")
        flat = int(self.pivot[s])
        if flat >= 0:
            self.solve_cell(s, flat)
        final = self.test_pivot(s, flat)
        if final is None:   # no pure equilibrium found: solve every child, then the matrix
            self.solve_children_then(s)
            return
        x, y = final
        n = int(self.dag.n1[s])
        self.values[s] = self.cell_values(s)[x * n + y]
        self.store.pure[s] = (x, y)
        self.store.method[s] = PURE
        self.solved[s] = True
        self.count(1)

    def solve_cell(self, s: int, cell: int) -> None:
        """GETPBS of a joint move's child: its state, or nature's distinct outcomes."""
        for kid in np.unique(self.cell_kids(s, cell)).tolist():
            self.get_pbs(kid)

    def solve_children_then(self, s: int) -> None:
        """Every child in today's order (the converted game's node ids: states by id,
        or with nature the joint moves in order), then the state's matrix game."""
        if self.dag.nk[s] == 1:
            for kid in np.unique(self.kids(s)).tolist():
                self.get_pbs(kid)
        else:
            for cell in range(int(self.dag.n0[s]) * int(self.dag.n1[s])):
                self.solve_cell(s, cell)
        self.level.solve_states(np.array([s]))
        self.count(1)

    def test_pivot(self, s: int, flat: int) -> tuple[int, int] | None:
        """TESTPIVOT (Algorithm 8 with the fixes in :mod:`.interval_heuristic`)."""
        if flat < 0:
            return None
        dag = self.dag
        m, n = int(dag.n0[s]), int(dag.n1[s])
        x, y = divmod(flat, n)
        if self.height[s] == 1 and dag.nk[s] == 1:   # all entries terminal (Lemma 4.3.9)
            return x, y
        hi = self.cell_hi(s)
        tol = self.tol
        for _ in range(min(m, n)):
            value = self.cell_values(s)[x * n + y]
            column = [x2 * n + y for x2 in range(m) if x2 != x]
            row = [x * n + y2 for y2 in range(n) if y2 != y]
            self.prepare(s, column, row, value, hi)
            values = self.cell_values(s)
            for c in column:
                if value[0] < hi[c, 0] - tol and value[0] < values[c, 0] - tol:
                    x, value = c // n, values[c]
            row = [x * n + y2 for y2 in range(n) if y2 != y]
            self.prepare(s, [], row, value, hi)
            values = self.cell_values(s)
            moved = False
            for c in row:
                if value[1] < hi[c, 1] - tol and value[1] < values[c, 1] - tol:
                    y, value, moved = c % n, values[c], True
            if not moved:
                return x, y
        return None

    def prepare(self, s: int, column: list[int], row: list[int], value: np.ndarray,
                hi: np.ndarray) -> None:
        """Solve the subgames of the deviations TESTPIVOT may look at (child cells whose
        interval maximum beats the pivot's value), each as GETEQUILIBRIUM(child, p, false):
        a state with the rule ``min<p>`` at its top, nature's outcomes with the run's rule."""
        tops: dict[str, list[int]] = {"min0": [], "min1": []}
        plain: list[int] = []
        for p, cells in ((0, column), (1, row)):
            for c in cells:
                if not (value[p] < hi[c, p] - self.tol and self.is_child(s, c)):
                    continue
                kids = self.cell_kids(s, c)
                open_kids = kids[~self.solved[kids]].tolist()
                if not open_kids:
                    continue
                self.witnesses += 1
                (tops[f"min{p}"] if self.dag.nk[s] == 1 else plain).extend(open_kids)
        if tops["min0"] or tops["min1"] or plain:
            self.solve_subgames(tops, plain)

    # -- witness subgames, by the baseline's level batches -----------------------------
    def unsolved_below(self, roots: np.ndarray) -> np.ndarray:
        """The unsolved states of the subgames at ``roots`` (including unsolved roots)."""
        dag, seen = self.dag, self.scratch
        frontier = np.unique(roots)
        frontier = frontier[~self.solved[frontier]]
        seen[frontier] = True
        found = [frontier]
        while frontier.size:
            sizes = dag.entry_start[frontier + 1] - dag.entry_start[frontier]
            kids = dag.entry_child[concat_ranges(dag.entry_start[frontier], sizes)]
            kids = kids[~self.solved[kids] & ~seen[kids]]
            seen[kids] = True
            frontier = np.unique(kids)
            found.append(frontier)
        states = np.concatenate(found).astype(np.int64)
        seen[states] = False
        return states

    def solve_subgames(self, tops: dict[str, list[int]], plain: list[int]) -> None:
        """Every unsolved state below the tops and ``plain``, bottom-up, a level at a time;
        a top is solved with its rule, the rest with the run's."""
        special = {rule: np.array(states, dtype=np.int64) for rule, states in tops.items() if states}
        roots = np.concatenate([*special.values(), np.array(plain, dtype=np.int64)])
        states = self.unsolved_below(roots)
        if not states.size:
            return
        height = self.height[states]
        order = np.argsort(height, kind="stable")
        states, height = states[order], height[order]
        for level in np.split(states, np.flatnonzero(np.diff(height)) + 1):
            rest = level
            for rule, chosen_states in special.items():   # min0 first, as today
                self.scratch[chosen_states] = True
                chosen = self.scratch[rest]
                self.scratch[chosen_states] = False
                if chosen.any():
                    self.solve_batch(rest[chosen], rule)
                    rest = rest[~chosen]
            if rest.size:
                self.solve_batch(rest)
            if self.deadline is not None and time.perf_counter() > self.deadline:
                raise LimitReached(f"time limit reached after {self.done} of {self.total} states")

    def solve_batch(self, states: np.ndarray, selection: str | None = None) -> None:
        for part in chunks(self.dag, states):
            self.level.solve_states(part, selection)
        self.count(states.size)

    def count(self, solved: int) -> None:
        self.done += solved
        if self.progress is not None:
            self.progress(self.done, self.total)

    def result(self, start: float) -> DagSolution:
        self.level.stats["witness subgames"] = self.witnesses
        return self.level.result("ih", start)


def solve(dag: StateDag, selection: str = "first", progress: Progress | None = None,
          time_limit: float | None = None, memory_mb: float | None = None) -> DagSolution:
    """The interval heuristic's partial behavioural strategy on ``dag``: part of a
    subgame-perfect equilibrium; unsolved states keep NaN values and ``solved`` false."""
    if memory_mb is not None and estimate_bytes(dag) > memory_mb * 2**20:
        raise LimitReached(f"the interval heuristic on {dag.num_states} states needs about "
                           f"{estimate_bytes(dag) / 2**20:.0f} MB, over the budget of {memory_mb:.0f} MB")
    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    ih = _DagIntervalHeuristic(dag, selection, deadline, progress)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * int(ih.height.max(initial=0)) + 1000))
    try:
        ih.get_pbs(dag.root)
    except LimitReached as exc:
        exc.partial = ih.result(start)
        raise
    finally:
        sys.setrecursionlimit(limit)
    return ih.result(start)
