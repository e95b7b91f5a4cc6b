"""``ggp solve PUZZLE.kif``: a one-player game (besides an optional ``random``), the
front end of :mod:`gdl.solving.puzzle_solve`; :mod:`gdl.cli.solve` hands puzzles here.

    ggp solve PUZZLE.kif [--solver plan|goal-search] [--json] [--strategy OUT.jsonl]
              [--save FILE] [--max-states N] [--time-limit S] [--memory-mb M] [--engine E]
              [--quiet]

No ``--solver``: the exact plan, falling back to the goal search when the expansion
hits its budget. The result: a summary, or with ``--json`` one object
(``docs/solve-json.md``). ``--strategy`` writes the plan as trace lines in the
oracle's format (``../shared/oracle/clingo_oracle.py GAME.kif OUT.jsonl`` replays
it), or with chance one policy line per state. ``--save`` stores the solution for the
agent (JSON lines, :mod:`gdl.solving.store`): every state of the exact solution, or
the states along the goal search's plan. Exit status: 0; 1 for an error or a
failed certificate; 2 when no plan reaches a goal above 0 (the result is printed,
its value 0, with one line on stderr saying so).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from gdl.cli.solve_outputs import outputs_of, refuse_first
from gdl.solving.puzzle_solve import PuzzleResult, solve_puzzle
from gdl.solving.store import save_solution

NO_GOAL_EXIT = 2
OPTIONS_OF_TWO_PLAYERS = (("--path", "path"), ("--ray", "ray"),
                          ("--shards", "shards"), ("--trace", "trace"), ("--plot", "plot"))


def puzzle_main(args: argparse.Namespace, stderr: Callable[[str], None]) -> int:
    """Solve the puzzle ``args.game`` with the options ``ggp solve`` parsed."""
    given = [flag for flag, name in OPTIONS_OF_TWO_PLAYERS if getattr(args, name) is not None]
    if args.selection != "first":
        given.append("--selection")
    refuse_first(given, "puzzles", f"{args.game} is a puzzle (one role): ")
    out = outputs_of(args)
    strategy_path, save_path = out.strategy, out.save
    result = solve_puzzle(args.game, args.solver, budget=out.budget, engine=args.engine,
                          progress=None if args.quiet else stderr)
    if save_path is not None:
        count = save_solution(save_path, rules=result.rules, game=result.name,
                              roles=(result.role_name,), solver=result.solver,
                              values={result.role_name: result.value},
                              lines=result.solution_lines())
        stderr(f"saved {count:,} states to {save_path}")
    if strategy_path is not None:
        with open(strategy_path, "w", encoding="utf-8") as out:
            for line in result.strategy_lines():
                out.write(json.dumps(line, sort_keys=True) + "\n")
        stderr(f"wrote the {'policy' if result.chance else 'plan'} to {strategy_path}")
    print(json.dumps(result.to_json()) if args.json else summary(result))
    if not result.certificate.get("ok", False):
        return 1
    if result.value <= 0:
        stderr(f"{result.name}: no plan reaches a goal above 0 for {result.role_name} "
               f"(value 0; the plan is the fewest steps to an end)")
        return NO_GOAL_EXIT
    return 0


def summary(result: PuzzleResult) -> str:
    steps = "expected steps" if result.chance else "steps"
    proof = ("proved" if result.proved else
             f"not proved: the highest goal the rules give is {result.ceiling:g}")
    lines = [f"game {result.name} (engine {result.machine.engine_name}, puzzle for "
             f"{result.role_name}, loaded in {result.load_seconds:.2f} s)",
             f"{result.solver}: value {result.value:g} ({proof}) in {result.steps:g} {steps}; "
             f"{result.states:,} states, expanded in {result.expand_seconds:.2f} s, "
             f"solved in {result.solve_seconds:.2f} s"]
    if result.fallback:
        lines.append(f"(the exact plan gave up: {result.fallback})")
    plan = result.plan_kif()
    if plan is not None:
        lines.append("plan: " + " ".join(plan))
    check = result.certificate
    lines.append("certificate: " + ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else
                                            f"{k} {v}" for k, v in check.items()))
    return "\n".join(lines)
