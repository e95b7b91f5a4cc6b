"""Solving a GDL puzzle offline (one role besides an optional ``random``): what
``ggp solve PUZZLE.kif`` runs (:mod:`gdl.cli.solve_puzzle` is its front end).

1. Read the rules and load the state machine; the role's highest goal value
   (:func:`gdl.solving.puzzle_search.goal_ceiling`; a role no goal rule names is an
   error, before any expansion).
2. Solver ``plan`` (the default): expand the whole game into a JointDag
   (:func:`gdl.expansion.batch_expand.expand_joint`) and solve it exactly
   (:func:`solvers.nplayer.puzzle.solve`: the highest value, then the fewest steps),
   certified by :func:`solvers.nplayer.puzzle_certificate.check`. Under a time limit
   the expansion gets :data:`EXACT_TIME_SHARE` of it, so that a fallback has time left.
3. When the expansion hits its budget (states, seconds or memory) or finds a cycle of
   states (said on a progress line), or with solver ``goal-search``: the goal search
   (:func:`gdl.solving.puzzle_search.goal_search`) in what is left of the budget. Its
   certificate replays its plan through the state machine. Puzzles with chance are
   not searched (a plan cannot prove an expected value): their budget error stands.

:class:`PuzzleResult` gives the JSON object (``docs/solve-json.md``), the plan as
trace lines in the oracle's format (``../shared/oracle/README.md``) and, with chance,
one policy line per state.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gdl.budget import Budget
from gdl.expansion.batch_expand import DagExpansion, expand_joint
from gdl.expansion.expand import PROGRESS_SECONDS, roles_of
from gdl.reasoning.state_machine import Move, StateMachine
from gdl.reasoning.terms import Rule
from gdl.reasoning.trace import step_record
from gdl.solving.puzzle_search import goal_ceiling, goal_search
from gdl.solving.solve import load_for_solve, payoff_number
from gdl.solving.store import node_line
from solvers import registry
from solvers.errors import GameError, LimitReached
from solvers.nplayer.dag import JointSolution
from solvers.nplayer.puzzle import solve as solve_plan
from solvers.progress import peak_rss_mb

EXACT_TIME_SHARE = 2 / 3    # of a time limit, for the exact plan's expansion and solve
CYCLE = "form a cycle"      # in the expansion's and the level order's cycle errors
SOLVERS = registry.names(registry.PUZZLE)


@dataclass
class PuzzleResult:
    """One solved puzzle (see the module docstring); ``plan`` holds joint moves in
    role order (None with chance: a policy, not a plan), ``steps`` the plan's length
    (expected with chance)."""

    name: str
    rules: list[Rule]
    machine: StateMachine
    role: int
    solver: str
    value: float
    ceiling: float
    plan: list[tuple[Move, ...]] | None
    steps: float
    proved: bool
    certificate: dict
    states: int
    load_seconds: float
    expand_seconds: float
    solve_seconds: float
    fallback: str | None = None
    expansion: DagExpansion | None = None
    solution: JointSolution | None = None     # solver "plan"
    peak_rss_mb: float | None = None

    @property
    def role_name(self) -> str:
        return self.machine.roles[self.role]

    @property
    def chance(self) -> bool:
        return self.plan is None

    def root_strategy(self) -> dict[str, dict[str, float]]:
        """The first move of the plan (with chance: the root's chosen move)."""
        if self.plan:
            return {self.role_name: {self.machine.move_to_kif(self.plan[0][self.role]): 1.0}}
        if self.expansion is not None and self.solution is not None:
            line = next(policy_lines(self.expansion, self.solution,
                                     [self.expansion.joint.root]), None)
            return {} if line is None else line["strategy"]
        return {}

    def plan_kif(self) -> list[str] | None:
        """The player's moves of the plan as KIF."""
        if self.plan is None:
            return None
        return [self.machine.move_to_kif(joint[self.role]) for joint in self.plan]

    def to_json(self) -> dict:
        total = self.load_seconds + self.expand_seconds + self.solve_seconds
        return {
            "solver": self.solver,
            "values": {self.role_name: payoff_number(self.value)},
            "root_strategy": self.root_strategy(),
            "plan_length": payoff_number(self.steps),
            "plan": self.plan_kif(),
            "proved": self.proved,
            "highest_goal": payoff_number(self.ceiling),
            "certificate": self.certificate,
            "states": self.states,
            "seconds": round(self.solve_seconds, 4),
            "expand_seconds": round(self.expand_seconds, 4),
            "load_seconds": round(self.load_seconds, 4),
            "total_seconds": round(total, 4),
            "game": self.name,
            "engine": self.machine.engine_name,
            "chance": self.chance,
            "fallback": self.fallback,
            "peak_rss_mb": self.peak_rss_mb,
        }

    def solution_lines(self) -> Iterator[dict]:
        """The ``--save`` lines (``{"node", "strategy", "values"}``): every non-terminal
        state of the exact solution, or the states along the goal search's plan."""
        if self.expansion is not None and self.solution is not None:
            return policy_lines(self.expansion, self.solution)
        return self._plan_lines()

    def _plan_lines(self) -> Iterator[dict]:
        machine, role = self.machine, self.role_name
        state = machine.initial_state()
        for joint in self.plan or ():
            yield node_line(machine.state_to_kif(state),
                            {role: {machine.move_to_kif(joint[self.role]): 1.0}},
                            {role: payoff_number(self.value)})
            state = machine.next_state(state, joint)

    def strategy_lines(self) -> Iterator[dict]:
        """``--strategy``: the plan as oracle trace lines, or with chance one policy
        line per non-terminal state."""
        if self.plan is not None:
            return plan_trace(self.machine, self.plan)
        assert self.expansion is not None and self.solution is not None
        return policy_lines(self.expansion, self.solution)


def solve_puzzle(source: str | Path, solver: str | None = None, *,
                 budget: Budget | None = None, engine: str = "auto",
                 progress: Callable[[str], None] | None = None) -> PuzzleResult:
    """Steps 1-3 for a puzzle file; ``solver`` None: ``plan``, falling back to
    ``goal-search`` (``plan`` given: no fallback)."""
    if solver is not None:
        registry.solver(solver, registry.PUZZLE)
    loaded = load_for_solve(source, engine, budget)
    return solve_puzzle_machine(loaded.machine, loaded.rules, loaded.name, solver,
                                budget=loaded.budget, progress=progress,
                                load_seconds=loaded.seconds)


def solve_puzzle_machine(machine: StateMachine, rules: list[Rule], name: str,
                         solver: str | None = None, *, budget: Budget,
                         progress: Callable[[str], None] | None = None,
                         load_seconds: float = 0.0) -> PuzzleResult:
    """Steps 1-3 for a loaded puzzle (the agent's start clock calls this)."""
    players, nature = roles_of(machine.roles)
    if len(players) != 1:
        raise GameError(f"{name}: a puzzle has one role besides random, not {len(players)}")
    role = players[0]
    ceiling = goal_ceiling(rules, machine, role)
    common = {"name": name, "rules": rules, "machine": machine, "role": role,
              "ceiling": ceiling, "load_seconds": load_seconds}
    fallback, tried = None, 0.0
    if solver != "goal-search":
        exact = budget if budget.time_limit is None else dataclasses.replace(
            budget, time_limit=budget.time_limit * EXACT_TIME_SHARE)
        tried = time.perf_counter()
        try:
            return _exact(machine, exact, progress, common)
        except GameError as exc:
            tried = time.perf_counter() - tried
            # a budget reached, or a cycle (the search cuts cycles: a plan may exist)
            if solver == "plan" or nature is not None or not (
                    isinstance(exc, LimitReached) or CYCLE in exc.message):
                raise
            fallback = exc.message
            if progress is not None:
                progress(f"plan: {exc.message}; falling back to the goal search")
    return _search(machine, budget, progress, common, fallback, tried)


def _exact(machine: StateMachine, budget: Budget, progress: Callable[[str], None] | None,
           common: dict) -> PuzzleResult:
    """Step 2."""
    expansion = expand_joint(machine, budget=budget, progress=progress)
    dag = expansion.joint
    if progress is not None:
        progress(f"expand: {dag.num_states:,} states, {expansion.transitions:,} transitions "
                 f"in {expansion.seconds:.2f} s")
    start = time.perf_counter()
    left = None
    if budget.time_limit is not None:
        left = budget.time_limit - (start - (budget.started or start))
    solution = solve_plan(dag, _level_progress(progress, start) if progress else None, left)
    certify = registry.MODELS[registry.PUZZLE].certify
    assert certify is not None
    certificate = certify(dag, solution)
    seconds = time.perf_counter() - start
    chance = bool((dag.nk > 1).any())
    return PuzzleResult(**common, solver="plan", value=float(solution.values[dag.root, 0]),
                        plan=None if chance else dag_plan(expansion, solution),
                        steps=float(solution.steps[dag.root]),  # type: ignore[index]
                        proved=bool(certificate["ok"]), certificate=certificate,
                        states=dag.num_states, expand_seconds=expansion.seconds,
                        solve_seconds=seconds, expansion=expansion, solution=solution,
                        peak_rss_mb=round(peak_rss_mb(), 1))


def _level_progress(progress: Callable[[str], None],
                    start: float) -> Callable[[int, int], None]:
    """A line every PROGRESS_SECONDS while the levels are solved."""
    last = [start]

    def report(done: int, total: int) -> None:
        now = time.perf_counter()
        if now - last[0] >= PROGRESS_SECONDS:
            last[0] = now
            progress(f"plan: {done:,} of {total:,} states solved, {now - start:.1f} s")

    return report


def _search(machine: StateMachine, budget: Budget, progress: Callable[[str], None] | None,
            common: dict, fallback: str | None, tried: float) -> PuzzleResult:
    """Step 3 (``tried``: the seconds the exact plan spent before it gave up)."""
    found = goal_search(machine, common["ceiling"], budget=budget, progress=progress)
    if found.goal is None and found.stopped:
        raise GameError(f"{common['name']}: no terminal state reached within the budget: "
                        f"{found.reason}")
    if found.goal is None:
        raise GameError(f"{common['name']}: none of its {found.states:,} reachable states is "
                        "terminal, so the game need not end")
    certificate = replay_certificate(machine, found.plan, common["role"], found.goal)
    certificate["search"] = found.reason
    return PuzzleResult(**common, solver="goal-search", value=found.goal, plan=found.plan,
                        steps=float(len(found.plan)), proved=found.proved and certificate["ok"],
                        certificate=certificate, states=found.states, expand_seconds=tried,
                        solve_seconds=found.seconds, fallback=fallback,
                        peak_rss_mb=round(peak_rss_mb(), 1))


def dag_plan(expansion: DagExpansion, solution: JointSolution) -> list[tuple[Move, ...]]:
    """The solution's plan from the root as joint moves in role order (no chance)."""
    dag, machine = expansion.joint, expansion.machine
    slots = [*expansion.players] + ([expansion.nature] if expansion.nature is not None else [])
    plan: list[tuple[Move, ...]] = []
    s = dag.root
    while not dag.terminal[s]:
        chosen = int(np.argmax(solution.state_strategy(dag, s, 0)))
        moves = expansion.moves(s)
        assert moves is not None
        joint: list[Move] = [None] * len(machine.roles)
        for slot, role in enumerate(slots):
            joint[role] = moves[slot][chosen if slot == 0 else 0]
        plan.append(tuple(joint))
        s = int(dag.entry_child[dag.entry_start[s] + chosen])
    return plan


def plan_trace(machine: StateMachine, plan: list[tuple[Move, ...]]) -> Iterator[dict]:
    """The plan as oracle trace records from the initial state, a terminal one last."""
    state = machine.initial_state()
    for joint in plan:
        record = step_record(machine, state)
        state = machine.next_state(state, joint)
        record["moves"] = {role: machine.move_to_kif(m)
                           for role, m in zip(machine.roles, joint, strict=True)}
        record["next"] = machine.state_to_kif(state)
        yield record
    record = step_record(machine, state)
    record["moves"] = {}
    yield record


def replay_certificate(machine: StateMachine, plan: list[tuple[Move, ...]], role: int,
                       goal: float) -> dict:
    """The plan replayed through the machine: legal moves only, non-terminal until the
    last step, which must end the game with ``goal``."""
    state = machine.initial_state()
    for step, joint in enumerate(plan):
        if machine.is_terminal(state) or joint[role] not in machine.legal_moves(state, role):
            return {"ok": False, "plan_steps": len(plan), "failed_step": step}
        state = machine.next_state(state, joint)
    reached = float(machine.goals(state)[role]) if machine.is_terminal(state) else None
    return {"ok": reached == goal, "plan_goal": reached, "plan_steps": len(plan)}


def policy_lines(expansion: DagExpansion, solution: JointSolution,
                 states: list[int] | None = None) -> Iterator[dict]:
    """With chance: one strategy line per non-terminal state (or ``states``), with the
    state's ``steps``."""
    dag, machine = expansion.joint, expansion.machine
    role = machine.roles[expansion.players[0]]
    for s in np.flatnonzero(~dag.terminal).tolist() if states is None else states:
        if dag.terminal[s]:
            continue
        chosen = int(np.argmax(solution.state_strategy(dag, s, 0)))
        moves = expansion.moves(s)
        assert moves is not None
        line = node_line(expansion.state_to_kif(s),
                         {role: {machine.move_to_kif(moves[0][chosen]): 1.0}},
                         {role: payoff_number(solution.values[s, 0])})
        line["steps"] = payoff_number(solution.steps[s])
        yield line


