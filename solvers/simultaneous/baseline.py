"""Baseline algorithm (thesis Algorithm 5, SOLVEGAME/SOLVENODE), batched over node levels.

1. Order the nodes bottom-up: ``game.levels[k]`` holds the nodes whose longest path
   to a terminal node has length ``k``, so all their children are already solved (on
   a DAG each node is solved once and its value reused by every parent: memoised).
2. For a level, build each node's matrix: a terminal entry keeps its payoffs, an
   entry with a child gets the child's equilibrium payoffs (Algorithm 5, line 9).
3. Solve the matrices of one shape together with GETEQUILIBRIUM
   (:func:`solvers.matrix.solve_batch`: pure equilibrium first, then the 2x2 closed
   form / support enumeration, then the LP for zero- and constant-sum matrices or
   the MIP); chance nodes take the expected value of their entries.
4. The strategies of all nodes form a subgame-perfect equilibrium (Theorem 4.2.1);
   the equilibrium kept where there are several follows ``selection``.

Public API: ``solve(game, selection="first", progress=None, time_limit=None,
max_nodes=None) -> Solution`` (:mod:`.solution`). ``progress(done, total)`` is called
after every level; past ``time_limit`` seconds or over ``max_nodes`` nodes it raises
:class:`~solvers.errors.LimitReached` (after a time limit its ``partial`` is the
Solution of the nodes solved so far, ``solved`` marking them). :func:`solve_subgames` solves the unsolved nodes
below some nodes (the interval heuristic's GETEQUILIBRIUM on subgames).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from solvers.errors import LimitReached
from solvers.matrix import solve_batch
from solvers.matrix.selection import check_selection
from solvers.simultaneous.model import CHANCE, SimultaneousGame, concat_ranges, require_budget
from solvers.simultaneous.solution import Solution

Progress = Callable[[int, int], None]


class SolverState:
    """Values, strategies and the solved mask shared by the baseline and the IH."""

    def __init__(self, game: SimultaneousGame, selection: str) -> None:
        self.game = game
        self.selection = check_selection(selection)
        self.values = np.full((game.num_nodes, 2), np.nan)
        self.solved = np.zeros(game.num_nodes, dtype=bool)
        self.method = np.full(game.num_nodes, -1, dtype=np.int8)
        self.strategy = (np.zeros(int(game.action_start[0, -1])),
                         np.zeros(int(game.action_start[1, -1])))
        self.stats: dict[str, int] = {}
        self.has_chance = bool((game.node_kind == CHANCE).any())
        shapes = game.num_actions[game.node_kind != CHANCE]
        self.single_shape = (int(shapes[0, 0]), int(shapes[0, 1])) \
            if len(shapes) and (shapes == shapes[0]).all() else None
        self.scratch = np.zeros(game.num_nodes, dtype=bool)  # all False between uses

    def result(self, kind: type[Solution], solver: str, start: float) -> Solution:
        """The state as a (partial) solution, timed from ``start``."""
        return kind(game=self.game, solver=solver, selection=self.selection,
                    strategy=self.strategy, values=self.values, solved=self.solved,
                    method=self.method, seconds=time.perf_counter() - start, stats=self.stats)

    def matrices(self, nodes: np.ndarray, n0: int, n1: int) -> tuple[np.ndarray, np.ndarray]:
        """[k, n0, n1] payoff matrices of same-shape nodes, children's values propagated."""
        g = self.game
        idx = g.entry_start[nodes][:, None] + np.arange(n0 * n1)
        child = g.entry_child[idx]
        vals = np.where((child >= 0)[..., None], self.values[np.maximum(child, 0)],
                        g.entry_payoff[idx])
        return vals[..., 0].reshape(-1, n0, n1), vals[..., 1].reshape(-1, n0, n1)

    def solve_level(self, nodes: np.ndarray, selection: str | None = None) -> None:
        """Solve nodes whose children are all solved (GETEQUILIBRIUM per node)."""
        g = self.game
        chance = nodes[g.node_kind[nodes] == CHANCE] if self.has_chance else nodes[:0]
        if chance.size:
            idx = concat_ranges(g.entry_start[chance], np.diff(g.entry_start)[chance])
            child = g.entry_child[idx]
            vals = np.where((child >= 0)[:, None], self.values[np.maximum(child, 0)],
                            g.entry_payoff[idx]) * g.entry_prob[idx, None]
            owner = np.repeat(np.arange(chance.size), np.diff(g.entry_start)[chance])
            for p in (0, 1):
                self.values[chance, p] = np.bincount(owner, weights=vals[:, p],
                                                     minlength=chance.size)
        decision = nodes[g.node_kind[nodes] != CHANCE] if self.has_chance else nodes
        for group, (n0, n1) in self.shape_groups(decision):
            u0, u1 = self.matrices(group, n0, n1)
            sol = solve_batch(u0, u1, selection or self.selection)
            self.strategy[0][g.action_start[0][group][:, None] + np.arange(n0)] = sol.x
            self.strategy[1][g.action_start[1][group][:, None] + np.arange(n1)] = sol.y
            self.values[group] = sol.values
            self.method[group] = sol.method
        self.solved[nodes] = True

    def shape_groups(self, nodes: np.ndarray):
        """(nodes of one shape, (n0, n1)) for the decision ``nodes``."""
        if nodes.size == 0:
            return
        if self.single_shape is not None:
            yield nodes, self.single_shape
            return
        shapes = self.game.num_actions[nodes]
        codes = shapes[:, 0].astype(np.int64) * (1 << 20) + shapes[:, 1]
        for code in np.unique(codes):
            yield nodes[codes == code], (int(code >> 20), int(code & ((1 << 20) - 1)))

    def unsolved_below(self, tops: np.ndarray) -> np.ndarray:
        """The unsolved nodes of the subgames rooted at ``tops`` (including unsolved tops)."""
        g = self.game
        seen = self.scratch
        frontier = np.unique(tops)
        frontier = frontier[~self.solved[frontier]]
        seen[frontier] = True
        found = [frontier]
        while frontier.size:
            idx = concat_ranges(g.entry_start[frontier], np.diff(g.entry_start)[frontier])
            kids = g.entry_child[idx]
            kids = kids[kids >= 0]
            kids = kids[~self.solved[kids] & ~seen[kids]]
            seen[kids] = True  # marks before dedup, so repeated kids appear once below
            kids = np.unique(kids)
            found.append(kids)
            frontier = kids
        nodes = np.concatenate(found)
        seen[nodes] = False
        return nodes


def solve_nodes(state: SolverState, nodes: np.ndarray, progress: Progress | None = None,
                deadline: float | None = None, tops: dict[str, np.ndarray] | None = None) -> None:
    """Solve ``nodes`` (closed under unsolved children) bottom-up, one level at a time.

    ``tops`` maps a selection rule to nodes solved with it instead of the state's rule.
    """
    heights = state.game.height[nodes]
    order = np.argsort(heights, kind="stable")
    nodes, heights = nodes[order], heights[order]
    done = 0
    for level in np.split(nodes, np.flatnonzero(np.diff(heights)) + 1):
        rest = level
        for selection, special in (tops or {}).items():
            mark = state.scratch
            mark[special] = True
            chosen = mark[rest]
            mark[special] = False
            if chosen.any():
                state.solve_level(rest[chosen], selection)
                rest = rest[~chosen]
        if rest.size:
            state.solve_level(rest)
        done += level.size
        if progress is not None:
            progress(done, nodes.size)
        if deadline is not None and time.perf_counter() > deadline:
            raise LimitReached(f"time limit reached after solving {done} of {nodes.size} nodes")


def solve_subgames(state: SolverState, tops: dict[str, list[int]],
                   deadline: float | None = None) -> None:
    """Solve every unsolved node of the subgames at the ``tops`` (selection -> nodes), each
    top with its selection. All subgames are solved together, level by level, so their
    matrices are batched.
    """
    arrays = {rule: np.array(nodes, dtype=np.int64) for rule, nodes in tops.items() if nodes}
    if not arrays:
        return
    nodes = state.unsolved_below(np.concatenate(list(arrays.values())))
    if nodes.size:
        solve_nodes(state, nodes, deadline=deadline, tops=arrays)


def solve(game: SimultaneousGame, selection: str = "first", progress: Progress | None = None,
          time_limit: float | None = None, max_nodes: int | None = None) -> Solution:
    """The baseline algorithm: a subgame-perfect equilibrium with the payoffs at every node."""
    require_budget(game, max_nodes)
    start = time.perf_counter()
    state = SolverState(game, selection)
    deadline = None if time_limit is None else start + time_limit
    try:
        solve_nodes(state, np.arange(game.num_nodes), progress, deadline)
    except LimitReached as exc:  # the solved subgames are a useful partial result
        exc.partial = state.result(Solution, "baseline", start)
        raise
    return state.result(Solution, "baseline", start)
