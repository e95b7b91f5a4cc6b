"""The exact values one GDL match knows, by state (:class:`ExactTable`).

Filled on the start clock by the pre-solve of a two-player game (the thesis'
baseline on the whole state DAG, as ``ggp solve``: batched expansion, level-batched
solve; a game too big for the table is kept as a compact solution instead), and on
each play clock by an endgame solve from the current state: the subgame on the scale
path first, then :func:`solvers.search.solve_exact`, which finds the subgame's
states in the table. After an endgame solve that does not fit, the next 1, 2, 4, ...
tries are skipped, so a big game stops paying for them.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Iterable
from contextlib import ExitStack

import numpy as np

from agent.brains.options import BrainOptions, GameSpec
from gdl.expansion.batch_expand import expand_dag
from gdl.expansion.expand import Budget
from gdl.reasoning import kernels
from gdl.solving.store_npz import NpzSolution, dag_solution_arrays
from solvers.errors import GameError, LimitReached, UnsupportedGame
from solvers.matrix import compiled
from solvers.search import EndgameResult, solve_exact
from solvers.simultaneous.dag_solve import solve_dag

# A batched expansion stops between chunks only: one chunk (or loading its compiled
# kernels) took 1.3-1.4 s on breakthroughSuicideSmall with a 0.07 s budget (1 s clock).
DAG_ENDGAME_SECONDS = 0.5


class ExactTable:
    """State -> exact goal values of one match (module docstring)."""

    def __init__(self, machine, chance: tuple[int, ...], options: BrainOptions) -> None:
        self.machine, self.chance, self.options = machine, chance, options
        self.players = len(machine.roles) - len(chance)
        self.values: dict[Hashable, np.ndarray] = {}
        self.trap_memo: dict[Hashable, float] = {}  # trap values by state (gdl_traps)
        self.possible = True  # False once some node had no exact value: never retried
        # after an endgame solve that did not fit, skip the next `_wait` tries (doubling)
        self._skip = 0
        self._wait = 1

    def clear(self) -> None:
        self.values.clear()
        self.trap_memo.clear()

    # -- the start clock ------------------------------------------------------------

    def presolve(self, spec: GameSpec, until: float, deadline: float
                 ) -> tuple[str, NpzSolution | None]:
        """The thesis' baseline on the whole state DAG, as ``ggp solve`` (the scale
        path: :func:`gdl.expansion.batch_expand.expand_dag`, batched for a compiled
        game, and :func:`~solvers.simultaneous.dag_solve.solve_dag`), until ``until``.
        Up to ``presolve_nodes`` states its values fill the table, so every move is
        then an exact one (with safe exploitation); a bigger game becomes a compact
        solution in memory (the ``--save`` file's arrays, ``deadline`` permitting),
        whose strategy the agent plays as a stored one's. The report, and the compact
        solution if there is one."""
        seconds = until - time.monotonic()
        if seconds <= 0.05:
            return "baseline: no time", None
        memory = self.options.memory_mb / 2 or None
        try:
            started = time.monotonic()
            budget = Budget(max_states=self.options.presolve_states, time_limit=seconds,
                            memory_mb=memory, started=time.perf_counter())
            expansion = expand_dag(self.machine, budget=budget)
            left = until - time.monotonic()
            if left <= 0:
                return "baseline: no time to solve", None
            solution = solve_dag(expansion.dag, "baseline", time_limit=left, memory_mb=memory)
            dag = expansion.dag
            if dag.num_states - int(dag.terminal.sum()) <= self.options.presolve_nodes:
                return f"baseline: solved, {self.fill(expansion, solution)} states", None
            # building the arrays sorts the states: about as long as expanding them
            if time.monotonic() + (time.monotonic() - started) / 2 > deadline:
                return f"baseline: solved {dag.num_states:,} states, no time to keep them", None
            compact = self.compact_solution(spec, expansion, solution)
        except (GameError, MemoryError) as exc:
            return f"baseline: {exc}", None
        return f"baseline: solved, {len(compact):,} states (compact)", compact

    def compact_solution(self, spec: GameSpec, expansion, solution) -> NpzSolution:
        """The solved game (a DagExpansion and its DagSolution) as a stored solution
        held in memory, read by the engine's int state."""
        roles = [self.machine.roles[p] for p in expansion.players]
        values = {r: float(v) for r, v in zip(roles, solution.root_values, strict=True)}
        arrays = dag_solution_arrays(expansion, solution, rules=spec.text,
                                     game=spec.name, roles=roles, solver="baseline",
                                     values=values)
        compact = NpzSolution("(start-clock pre-solve)", arrays)
        compact.bind(self.machine)
        return compact

    def fill(self, expansion, solution) -> int:
        """Put the solved non-terminal states' values (of a DagExpansion's DagSolution)
        into the table; their count."""
        dag = expansion.dag
        states = np.flatnonzero(solution.solved & ~dag.terminal)
        values = np.zeros((states.size, len(self.machine.roles)))
        values[:, list(expansion.players)] = solution.values[states]
        if expansion.packed is not None:   # engine ints from the packed rows at once
            width = 8 * expansion.packed.shape[1]
            data = np.ascontiguousarray(expansion.packed[states], dtype="<u8").tobytes()
            keys: Iterable[Hashable] = (int.from_bytes(data[k:k + width], "little")
                                        for k in range(0, len(data), width))
        else:
            keys = (expansion.state(s) for s in states.tolist())
        self.values.update(zip(keys, values, strict=True))
        return int(states.size)

    # -- the play clock -------------------------------------------------------------

    def endgame(self, state: Hashable, step: int, until: float) -> EndgameResult | str:
        """:meth:`solve` with the current node budget, unless this try is skipped."""
        if self._skip > 0:
            self._skip -= 1
            return "skipped"
        solved = self.solve(state, step, until, self.options.endgame_nodes)
        if isinstance(solved, str):
            self._skip, self._wait = self._wait, self._wait * 2
        else:
            self._wait = 1
        return solved

    def solve(self, state: Hashable, step: int, until: float, nodes: int
              ) -> EndgameResult | str:
        """The exact value of ``state`` within ``nodes`` new states and ``until``,
        or why not."""
        if not self.possible:
            return "impossible"
        if len(self.values) > 4 * self.options.presolve_nodes:  # memory: start over
            self.clear()
        try:
            now = time.monotonic()
            # the scale path first, for half the time: it fills the table, so the
            # search below only backs up the root; over its budget, the search goes on
            self.solve_subgame(state, step, now + (until - now) / 2, nodes)
            return solve_exact(self.machine, state, chance_roles=self.chance,
                               node_budget=nodes, deadline=until, table=self.values)
        except UnsupportedGame:
            self.possible = False  # some node has no exact value: never retry
            return "impossible"
        except LimitReached as exc:
            return f"too large ({exc})"
        except MemoryError:
            self.clear()
            return "out of memory"

    def solve_subgame(self, state: Hashable, step: int, until: float, nodes: int) -> bool:
        """Solve the subgame below ``state`` on the scale path (batched expansion,
        level-batched baseline) into the table; True when done.

        Only for a compiled machine after the first step (the start clock's pre-solve
        has the first), with at least ``DAG_ENDGAME_SECONDS``, and only where the
        values are those :func:`solvers.search.solve_exact` would find: a constant-sum
        subgame without nature (a general-sum equilibrium or a chance node is left to
        it)."""
        if (self.players != 2 or self.chance or step == 0
                or until - time.monotonic() < DAG_ENDGAME_SECONDS
                or self.machine.engine_name != "compiled" or state in self.values):
            return False
        memory = self.options.memory_mb / 4 or None
        try:
            with kernels_held(True):   # never a kernel load on a play clock
                expansion = expand_dag(self.machine, state, budget=Budget(
                    max_states=nodes, time_limit=until - time.monotonic(), memory_mb=memory))
            dag = expansion.dag
            if np.ptp(dag.payoff[dag.terminal].sum(axis=1)) > 1e-9 or (dag.nk > 1).any():
                return False
            solution = solve_dag(dag, "baseline", time_limit=max(until - time.monotonic(), 1e-3),
                                 memory_mb=memory)
        except (GameError, MemoryError):
            return False
        self.fill(expansion, solution)
        return True


def kernels_held(hold: bool) -> ExitStack:
    """The compiled kernels of the batched expansion and of the batched LPs, not
    loaded inside when ``hold`` (a load took 3-5 s on a loaded machine: a 4.5 s
    start clock's pre-solve ran 6 s over); numpy passes instead, within the time
    budget."""
    stack = ExitStack()
    if hold:
        stack.enter_context(kernels.KERNELS.held())
        stack.enter_context(compiled.SIMPLEX.held())
    return stack
