"""The start-clock solve of a puzzle or of a game of three or more players.

As ``ggp solve`` solves them (:func:`gdl.solving.puzzle_solve.solve_puzzle_machine`:
the exact plan, else the goal search; :func:`gdl.solving.nplayer_solve.solve_nplayer_machine`:
a subgame-perfect equilibrium), within half the start clock and the pre-solve's
state and memory budgets. The solution's strategy lines become an in-memory stored
solution (:func:`gdl.solving.store.solution_in_memory`), which the brain plays as it
plays one given by ``--solutions``: the move drawn from the state's strategy. A
puzzle's goal search counts only when it proves its plan (the highest goal the rules
give); a plan short of it is left to the search.
"""

from __future__ import annotations

import time

from agent.brains.options import BrainOptions, GameSpec
from gdl.budget import Budget
from gdl.reasoning.machine import read_rules
from gdl.reasoning.state_machine import StateMachine
from gdl.solving.nplayer_solve import solve_nplayer_machine
from gdl.solving.puzzle_solve import solve_puzzle_machine
from gdl.solving.store import GdlSolution, solution_in_memory
from solvers.errors import GameError


def presolve_joint(machine: StateMachine, spec: GameSpec, players: int,
                   options: BrainOptions, until: float, deadline: float
                   ) -> tuple[str, GdlSolution | None]:
    """(report, solution or None): the game solved until ``until``, its strategy read
    into memory until ``deadline`` (``time.monotonic()`` times)."""
    kind = "plan" if players == 1 else "spe"
    if options.presolve_nodes <= 0:
        return f"{kind}: off (presolve_nodes 0)", None
    seconds = until - time.monotonic()
    if seconds <= 0.05:
        return f"{kind}: no time", None
    budget = Budget(max_states=options.presolve_nodes, time_limit=seconds,
                    memory_mb=options.memory_mb / 2 or None, started=time.perf_counter())
    rules, name = read_rules(spec.text, spec.name)
    try:
        if players == 1:
            puzzle = solve_puzzle_machine(machine, rules, name, budget=budget)
            if not puzzle.proved:
                return (f"{puzzle.solver}: goal {puzzle.value:g} of {puzzle.ceiling:g}, "
                        "not proved"), None
            role = puzzle.role_name
            lines, values = puzzle.solution_lines(), {role: puzzle.value}
            report = (f"{puzzle.solver}: value {puzzle.value:g} in {puzzle.steps:g} steps, "
                      f"{puzzle.states:,} states")
            roles: tuple[str, ...] = (role,)
        else:
            found = solve_nplayer_machine(machine, rules, name, budget=budget)
            if not found.certificate["ok"]:
                return "spe: certificate failed", None
            lines, values, roles = found.strategy_lines(), found.values(), found.roles
            report = f"spe: values {values}, {found.states:,} states"
    except (GameError, MemoryError) as exc:
        return f"{kind}: {exc}", None
    solution = solution_in_memory(lines, rules=rules, game=name, roles=roles, solver=kind,
                                  values=values, until=deadline)
    return f"{report}, {len(solution):,} kept", solution
