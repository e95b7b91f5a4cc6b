"""Baseline algorithm (thesis Algorithm 5) on the compact model, level by level.

1. Order the states by height (:func:`.dag.heights`: every child of a state of height
   ``h`` has a smaller height), so the states of one height are independent.
2. Terminal states take their payoffs. For each height from 1 up, take the level's
   states in chunks of at most ``CHUNK_ENTRIES`` entries (the only [E, 2] float array
   ever built is a chunk's): an entry's value is its child's; a joint move with nature
   (``nk > 1``) takes the mean over its ``nk`` outcomes.
3. Group the chunk's states by shape and solve all their matrices together with
   :func:`solvers.matrix.level_batch.solve_level_groups` (pure equilibria by the
   selection rule, general-sum games by today's per-game path, constant-sum games by
   support enumeration when small, else dominance, 2x2 closed forms and block LPs
   pooled over the shapes).
4. Keep per state only its values and its compact strategy
   (:class:`.dag_solution.StrategyStore`): the result is a subgame-perfect equilibrium.

Memory: the DAG (30 bytes per state, 4 per entry), the solution (22 bytes per state
plus the mixed states' side table) and, while solving, the level order (4 bytes per
state) and one chunk; computing the heights first takes about 45 bytes per state
(:func:`.dag.heights` on 5 entries per state), freed before the solution is built. ``memory_mb`` refuses a solve whose estimate is
over the budget; ``time_limit`` stops between chunks with :class:`LimitReached`
carrying the partial solution.

Public API: ``solve(dag, selection="first", progress=None, time_limit=None,
memory_mb=None) -> DagSolution``; ``progress(done, total)``, called after every chunk,
counts non-terminal states.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from solvers.errors import LimitReached
from solvers.matrix.equilibrium import METHOD_NAMES
from solvers.matrix.level_batch import solve_level_groups
from solvers.matrix.selection import check_selection
from solvers.simultaneous.dag import StateDag, heights
from solvers.simultaneous.dag_solution import DagSolution, StrategyStore
from solvers.simultaneous.model import concat_ranges

Progress = Callable[[int, int], None]

#: entries per chunk of a level (the chunk's arrays take about 60 bytes an entry)
CHUNK_ENTRIES = 1 << 21
#: bytes per state the solve holds besides the DAG: values 16, pure 4, method 1,
#: solved 1, level order 4, and the mixed states' side table (about 20 when a third
#: of the states are mixed); computing the heights takes about 45 before all that
SOLVE_BYTES_PER_STATE = 46


def estimate_bytes(dag: StateDag) -> int:
    """What a solve of ``dag`` holds at its peak, roughly (the DAG included)."""
    return (dag.nbytes() + SOLVE_BYTES_PER_STATE * dag.num_states
            + 60 * min(CHUNK_ENTRIES, dag.num_entries))


def check_memory(dag: StateDag, memory_mb: float | None) -> None:
    if memory_mb is not None and estimate_bytes(dag) > memory_mb * 2**20:
        raise LimitReached(f"solving {dag.num_states} states needs about "
                           f"{estimate_bytes(dag) / 2**20:.0f} MB, over the budget of {memory_mb:.0f} MB")


def level_order(dag: StateDag, height: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(states sorted by height, offsets of each height in it); ``height`` if known."""
    height = heights(dag) if height is None else height
    order = np.argsort(height, kind="stable")
    if dag.num_states < 2**31:    # held through the solve: 4 bytes a state, not 8
        order = order.astype(np.int32)
    bounds = np.zeros(int(height.max(initial=0)) + 2, dtype=np.int64)
    bounds[1:] = np.cumsum(np.bincount(height))
    return order, bounds


def chunks(dag: StateDag, states: np.ndarray, limit: int = CHUNK_ENTRIES):
    """Consecutive runs of ``states`` holding at most ``limit`` entries (>= 1 state)."""
    total = np.cumsum(dag.entry_start[states + 1] - dag.entry_start[states])
    start = 0
    while start < len(states):
        base = total[start - 1] if start else 0
        stop = max(start + 1, int(np.searchsorted(total, base + limit, side="right")))
        yield states[start:stop]
        start = stop


def joint_move_values(dag: StateDag, states: np.ndarray, values: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """(cell values [C, 2], offset of each state's cells): the matrices of ``states``,
    row-major, nature's outcomes averaged."""
    sizes = dag.entry_start[states + 1] - dag.entry_start[states]
    entry = values[dag.entry_child[concat_ranges(dag.entry_start[states], sizes)]]
    cells = dag.n0[states].astype(np.int64) * dag.n1[states]
    nk = dag.nk[states]
    if (nk > 1).any():
        cell_nk = np.repeat(nk.astype(np.int64), cells)
        entry = np.add.reduceat(entry, np.cumsum(cell_nk) - cell_nk, axis=0) / cell_nk[:, None]
    return entry, np.cumsum(cells) - cells


def shape_groups(dag: StateDag, states: np.ndarray):
    """(positions in ``states`` of one shape, (n0, n1)) pairs."""
    codes = dag.n0[states].astype(np.int64) << 16 | dag.n1[states]
    if (codes == codes[0]).all():
        yield np.arange(len(states)), (int(codes[0] >> 16), int(codes[0] & 0xFFFF))
        return
    for code in np.unique(codes):
        yield np.flatnonzero(codes == code), (int(code >> 16), int(code & 0xFFFF))


class LevelSolver:
    """Values, solved mask and strategy store of one backward induction."""

    def __init__(self, dag: StateDag, selection: str) -> None:
        self.dag = dag
        self.selection = check_selection(selection)
        self.values = np.full((dag.num_states, 2), np.nan)
        terminal = dag.terminal
        self.values[terminal] = dag.payoff[terminal]
        self.solved = terminal.copy()
        self.store = StrategyStore(dag)
        self.stats: dict[str, int] = {}

    def solve_states(self, states: np.ndarray, selection: str | None = None) -> None:
        """Solve ``states``, whose children are all solved (GETEQUILIBRIUM per state), by
        ``selection`` (the solve's rule if ``None``)."""
        cell_values, cell_start = joint_move_values(self.dag, states, self.values)
        groups, stacks = [], []
        for pos, (m, n) in shape_groups(self.dag, states):
            u = cell_values[cell_start[pos][:, None] + np.arange(m * n)]
            groups.append(states[pos])
            stacks.append((u[..., 0].reshape(-1, m, n), u[..., 1].reshape(-1, m, n)))
        for group, sol in zip(groups, solve_level_groups(stacks, selection or self.selection), strict=True):
            self.values[group] = sol.values
            self.store.add(group, sol.x, sol.y, sol.method)
        self.solved[states] = True

    def result(self, solver: str, start: float) -> DagSolution:
        methods = self.store.method[self.solved & ~self.dag.terminal]
        self.stats.update({name: int(np.count_nonzero(methods == k))
                           for k, name in enumerate(METHOD_NAMES)})
        return self.store.result(solver, self.selection, self.values, self.solved,
                                 time.perf_counter() - start, self.stats)


def solve(dag: StateDag, selection: str = "first", progress: Progress | None = None,
          time_limit: float | None = None, memory_mb: float | None = None) -> DagSolution:
    """The baseline on a :class:`StateDag`: a subgame-perfect equilibrium, compactly."""
    check_memory(dag, memory_mb)
    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    order, bounds = level_order(dag)    # first: its temporaries then need no room beside the solution
    state = LevelSolver(dag, selection)
    total, done = int(np.count_nonzero(~dag.terminal)), 0
    try:
        for h in range(1, len(bounds) - 1):
            for part in chunks(dag, order[bounds[h]:bounds[h + 1]]):
                state.solve_states(part)
                done += len(part)
                if progress is not None:
                    progress(done, total)
                if deadline is not None and time.perf_counter() > deadline:
                    raise LimitReached(f"time limit reached after solving {done} of {total} states")
    except LimitReached as exc:
        exc.partial = state.result("baseline", start)
        raise
    return state.result("baseline", start)
