"""Solving a GDL game of three or more players offline: load, expand, solve, certify
(what ``ggp solve GAME.kif`` runs for such a game; :mod:`gdl.cli.nplayer_solve` is its
front end).

1. Read the rules; load the state machine (the compiled engine when it fits).
2. Expand the game within the state, time and memory budgets into the n-player
   compact DAG (:func:`gdl.expansion.batch_expand.expand_joint`, batched when the game
   compiles).
3. Solve it with an n-player solver of :mod:`solvers.registry` (model ``nplayer``;
   ``spe``, backward induction: :mod:`solvers.nplayer.induction`) in the time left.
4. Certify the result by separate code (:mod:`solvers.nplayer.certificate`).

:class:`NPlayerSolveResult` gives the JSON object (the fields of a two-player solve,
``docs/solve-json.md``, keyed by role, plus ``notes``) and the strategy lines, one per
solved non-terminal state: ``{"node": [KIF facts], "strategy": {role: {move KIF:
probability}}, "values": {role: value}}``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gdl.budget import Budget
from gdl.expansion.batch_expand import DagExpansion, expand_joint
from gdl.reasoning.state_machine import StateMachine
from gdl.reasoning.terms import Rule
from gdl.solving.solve import (  # the two-player solve's helpers, shared
    load_for_solve,
    payoff_number,
    raise_hint,
    state_lines,
)
from solvers import registry
from solvers.errors import LimitReached
from solvers.nplayer.dag import JointDag, JointSolution
from solvers.nplayer.induction import check_selection
from solvers.progress import peak_rss_mb, solve_progress

SOLVERS = registry.names(registry.NPLAYER)
DEFAULT_SOLVER = SOLVERS[0]
FACTS_SHOWN = 6     # facts of a state named in a message


@dataclass
class NPlayerSolveResult:
    """One solved game of any number of players, with its timings."""

    name: str
    rules: list[Rule]
    engine: str
    expansion: DagExpansion
    solution: JointSolution
    certificate: dict
    load_seconds: float
    solve_seconds: float
    peak_rss_mb: float | None = None

    @property
    def dag(self) -> JointDag:
        return self.expansion.joint

    @property
    def roles(self) -> tuple[str, ...]:
        return self.dag.player_names

    @property
    def states(self) -> int:
        return self.dag.num_states

    @property
    def total_seconds(self) -> float:
        return self.load_seconds + self.expansion.seconds + self.solve_seconds

    def constant_sum(self) -> float | None:
        dag = self.dag
        sums = np.unique(dag.payoff[dag.terminal].sum(axis=1))
        return float(sums[0]) if sums.size == 1 else None

    def values(self) -> dict[str, float]:
        return {role: payoff_number(v) for role, v in
                zip(self.roles, self.solution.values[self.dag.root].tolist(), strict=True)}

    def root_strategy(self) -> dict[str, dict[str, float]]:
        line = next(self.strategy_lines([self.dag.root]), None)
        return {} if line is None else {
            role: {move: round(p, 12) for move, p in probs.items()}
            for role, probs in line["strategy"].items()}

    def strategy_lines(self, states: Iterable[int] | None = None) -> Iterator[dict]:
        """The ``--strategy`` lines: the solved non-terminal states in order (or ``states``),
        moves as the machine's KIF."""
        dag, solution = self.dag, self.solution
        if states is None:
            states = np.flatnonzero(solution.solved & ~dag.terminal).tolist()
        chosen = [s for s in states if not dag.terminal[s] and solution.solved[s]]
        return state_lines(self.expansion, chosen, self.roles,
                           lambda s, p: solution.state_strategy(dag, s, p),
                           lambda s: solution.values[s].tolist())

    def to_json(self) -> dict:
        dag = self.dag
        return {
            "solver": self.solution.solver,
            "values": self.values(),
            "root_strategy": self.root_strategy(),
            "nodes": int(np.count_nonzero(~dag.terminal)),
            "seconds": round(self.solve_seconds, 4),
            "certificate": self.certificate,
            "states": self.states,
            "expand_seconds": round(self.expansion.seconds, 4),
            "game": self.name,
            "engine": self.engine,
            "players": len(self.roles),
            "constant_sum": self.constant_sum(),
            "load_seconds": round(self.load_seconds, 4),
            "total_seconds": round(self.total_seconds, 4),
            "path": "dag",
            "transitions": self.expansion.transitions,
            "bytes_per_state": round(self.expansion.nbytes() / max(self.states, 1), 1),
            "peak_rss_mb": self.peak_rss_mb,
            "notes": self.solution.notes,
        }

    def summary(self) -> str:
        """The text output of ``ggp solve`` for this game."""
        dag, check, notes = self.dag, self.certificate, self.solution.notes or {}
        total = self.constant_sum()
        kind = f"constant-sum {total:g}" if total is not None else "general-sum"
        values = ", ".join(f"{role} {value:g}" for role, value in self.values().items())
        strategy = "; ".join(f"{role}: " + ", ".join(f"{m} {p:.4g}" for m, p in moves.items())
                             for role, moves in self.root_strategy().items()) or "-"
        return "\n".join([
            f"game {self.name} ({len(self.roles)} players, engine {self.engine}, loaded in "
            f"{self.load_seconds:.2f} s)",
            f"expanded: {self.states:,} states ({int(np.count_nonzero(~dag.terminal)):,} "
            f"non-terminal), {self.expansion.transitions:,} transitions, {kind}, in "
            f"{self.expansion.seconds:.2f} s",
            f"{self.solution.solver}: values {values} in {self.solve_seconds:.2f} s "
            f"({notes.get('turn_based_states', 0):,} turn-based, "
            f"{notes.get('pure_states', 0):,} pure simultaneous, "
            f"{notes.get('mixed_states', 0):,} mixed states)",
            f"tie rule: {notes.get('tie_rule', '-')}",
            "root strategy: " + strategy,
            f"certificate: max gain {check['max_gain']:.3g} ({check['worst_player']} at "
            f"state {check['worst_state']})"
            + ("" if check["ok"] else " (NOT an equilibrium within tolerance)"),
        ])


def solve_nplayer_game(source: str | Path, solver: str = DEFAULT_SOLVER, *,
                       budget: Budget | None = None, engine: str = "auto",
                       selection: str = "first",
                       progress: Callable[[str], None] | None = None) -> NPlayerSolveResult:
    """Steps 1-4 for a game file of any number of players."""
    registry.solver(solver, registry.NPLAYER)
    check_selection(selection)
    loaded = load_for_solve(source, engine, budget)
    return solve_nplayer_machine(loaded.machine, loaded.rules, loaded.name, solver,
                                 budget=loaded.budget, selection=selection,
                                 progress=progress, load_seconds=loaded.seconds)


def solve_nplayer_machine(machine: StateMachine, rules: list[Rule], name: str,
                          solver: str = DEFAULT_SOLVER, *, budget: Budget,
                          selection: str = "first",
                          progress: Callable[[str], None] | None = None,
                          load_seconds: float = 0.0) -> NPlayerSolveResult:
    """Steps 2-4 for a loaded game (the agent's start clock calls this)."""
    entry = registry.solver(solver, registry.NPLAYER)
    certify = registry.MODELS[registry.NPLAYER].certify_dag
    assert entry.solve_dag is not None and certify is not None
    start = time.perf_counter() if budget.started is None else budget.started
    left = None
    expansion = expand_joint(machine, budget=budget, progress=progress)
    dag = expansion.joint
    if progress is not None:
        progress(f"expanded: {dag.num_states:,} states, {expansion.transitions:,} "
                 f"transitions in {expansion.seconds:.2f} s")
    if budget.time_limit is not None:
        left = max(budget.time_limit - (time.perf_counter() - start), 1e-3)
    solve_start = time.perf_counter()
    try:
        solution = entry.solve_dag(
            dag, selection=selection, time_limit=left, memory_mb=budget.memory_mb,
            progress=solve_progress(progress, solver) if progress else None,
            where=lambda s: _state_text(expansion, s))
    except LimitReached as exc:
        raise LimitReached(f"{solver} stopped: {exc.message} ({raise_hint(exc.message)})"
                           ) from None
    seconds = time.perf_counter() - solve_start
    return NPlayerSolveResult(name, rules, machine.engine_name, expansion, solution,
                              certify(dag, solution), load_seconds, seconds,
                              round(peak_rss_mb(), 1))


def _state_text(expansion: DagExpansion, s: int) -> str:
    facts = expansion.state_to_kif(s)
    shown = " ".join(facts[:FACTS_SHOWN]) + (" ..." if len(facts) > FACTS_SHOWN else "")
    return f"state {s} ({shown})"
