"""``ggp check`` and ``ggp playout``: the GDL engine at the command line.

``ggp check GAME.kif [--time-limit S] [--memory-mb M]``: parse and validate; print a
short summary (roles, rule and relation counts, whether moves are simultaneous where
one short random playout shows it, the engine "auto" picks), or every problem with
``file:line:col`` and exit 1. The whole check runs within ``--time-limit`` (60 s) and
``--memory-mb`` of resident growth (2,048 MB) (:func:`gdl.budget.watched`): a game
whose queries blow up (a 300-argument relation over {0, 1} has 2^300 rows) stops with
one line naming the phase and the limit, exit 1.

``ggp playout GAME --count N --seed S [--trace OUT.jsonl] [--json] [--engine E]``:
N random playouts (every role picks uniformly among its legal moves with one
seeded generator); ``--trace`` writes the oracle's JSON-lines format
(``../shared/oracle/README.md``); ``--json`` prints
``{"engine", "playouts", "steps", "seconds", "steps_per_second"}``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

from gdl.budget import watched
from gdl.reasoning.general_machine import GeneralMachine
from gdl.reasoning.machine import ENGINES, load_machine, read_rules
from gdl.reasoning.state_machine import StateMachine
from gdl.reasoning.topdown import LEVEL_MOVE, LEVEL_STATE
from gdl.reasoning.trace import playout_records, random_joint_move, write_record
from gdl.reasoning.validate import problems_of
from solvers.errors import GameError

PROGRESS_SECONDS = 10.0
SIMULTANEITY_STEPS = 100  # of the random playout `ggp check` looks at
SIMULTANEITY_SECONDS = 2.0
CHECK_SECONDS = 60.0
CHECK_MEMORY_MB = 2048.0


def check_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ggp check", description="Parse and validate a GDL "
                                     "game; print a summary or every problem.")
    parser.add_argument("game", type=Path, help="a .kif file")
    parser.add_argument("--time-limit", type=float, default=CHECK_SECONDS, metavar="S",
                        help="seconds for the whole check (default %(default)g)")
    parser.add_argument("--memory-mb", type=float, default=CHECK_MEMORY_MB, metavar="M",
                        help="resident memory growth allowed, in MB (default %(default)g)")
    args = parser.parse_args(argv)
    if args.time_limit <= 0 or args.memory_mb <= 0:
        raise GameError("--time-limit and --memory-mb must be positive")
    with watched(args.time_limit, args.memory_mb) as watch:
        watch.doing = "while reading the rules"
        rules, name = read_rules(args.game)
        watch.doing = "while validating the rules"
        problems = problems_of(rules, str(args.game))
        if problems:
            for problem in problems:
                print(problem)
            print(f"{args.game}: invalid GDL, {len(problems)} problem"
                  f"{'s' if len(problems) > 1 else ''}")
            return 1
        watch.doing = "while preparing the general engine"
        machine = GeneralMachine(rules, name=name)
        relations = {r.head.name for r in rules}
        levels = {level: sum(1 for r in relations if machine.program.level.get(r) == level)
                  for level in (LEVEL_STATE, LEVEL_MOVE)}
        facts = sum(1 for r in rules if r.is_fact)
        kind = "GDL-II (players see only their moves and sees percepts)" if machine.has_sees \
            else "GDL"
        print(f"{args.game}: valid {kind}")
        print(f"roles ({len(machine.roles)}): {' '.join(machine.roles)}")
        print(f"rules: {len(rules) - facts} rules and {facts} facts over {len(relations)} "
              f"relations ({len(relations) - levels[LEVEL_STATE] - levels[LEVEL_MOVE]} static, "
              f"{levels[LEVEL_STATE]} state-dependent, {levels[LEVEL_MOVE]} move-dependent)",
              flush=True)
        watch.doing = "while playing a random playout"
        print(f"moves: {_simultaneity(machine)}", flush=True)
        watch.doing = "while choosing the engine (grounding)"
        engine = load_machine(rules, name=name)
    reason = f" ({engine.fallback_reason})" if engine.fallback_reason else ""
    print(f"engine: {engine.engine_name}{reason}")
    return 0


def _simultaneity(machine: StateMachine) -> str:
    """Whether several roles choose at once, as far as one short playout shows."""
    rng = random.Random(0)
    state = machine.initial_state()
    deadline = time.monotonic() + SIMULTANEITY_SECONDS
    for step in range(SIMULTANEITY_STEPS):
        if machine.is_terminal(state) or time.monotonic() > deadline:
            return f"no simultaneous choice seen in {step} random steps"
        legal = machine.legal_joint_moves(state)
        choosing = sum(1 for moves in legal if len(moves) > 1)
        if choosing > 1:
            return f"simultaneous ({choosing} roles choose at step {step} of a random playout)"
        state = machine.next_state(state, [rng.choice(moves) for moves in legal])
    return f"no simultaneous choice seen in {SIMULTANEITY_STEPS} random steps"


def playout_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ggp playout", description="Random playouts of a "
                                     "GDL game: speed, and oracle-format traces.")
    parser.add_argument("game", type=Path, help="a .kif file")
    parser.add_argument("--count", type=int, default=1, help="number of playouts (1)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (0)")
    parser.add_argument("--trace", type=Path, help="write the playouts here as JSON lines")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--engine", choices=ENGINES, default="auto",
                        help="compiled, general, or auto: compiled when the game grounds "
                        "within its budget (default auto)")
    parser.add_argument("--max-steps", type=int, default=None,
                        help="end a playout after this many steps (default: at terminal)")
    args = parser.parse_args(argv)
    if args.count < 0:
        raise GameError("--count must be at least 0")
    machine = load_machine(args.game, engine=args.engine)
    rng = random.Random(args.seed)
    steps = 0
    start = last_report = time.perf_counter()
    trace = args.trace.open("w", encoding="utf-8") if args.trace else None
    try:
        for done in range(args.count):
            if trace is not None:
                for record in playout_records(machine, rng, args.max_steps):
                    write_record(trace, record)
                    steps += bool(record["moves"])
            else:
                steps += _playout(machine, rng, args.max_steps)
            now = time.perf_counter()
            if not args.json and now - last_report > PROGRESS_SECONDS:
                last_report = now
                print(f"... {done + 1}/{args.count} playouts, {steps} steps, "
                      f"{now - start:.0f}s", file=sys.stderr, flush=True)
    finally:
        if trace is not None:
            trace.close()
    seconds = time.perf_counter() - start
    result = {"engine": machine.engine_name, "playouts": args.count, "steps": steps,
              "seconds": round(seconds, 6),
              "steps_per_second": round(steps / seconds, 1) if seconds > 0 else 0.0}
    if args.json:
        print(json.dumps(result))
    else:
        reason = f" (fallback: {machine.fallback_reason})" if machine.fallback_reason else ""
        print(f"{args.count} playouts, {steps} steps in {seconds:.2f}s: "
              f"{result['steps_per_second']} steps/s, engine {machine.engine_name}{reason}")
    return 0


def _playout(machine: StateMachine, rng: random.Random, max_steps: int | None) -> int:
    """Steps of one random playout (same random choices as :func:`playout_records`)."""
    state = machine.initial_state()
    steps = 0
    while not machine.is_terminal(state) and (max_steps is None or steps < max_steps):
        state = machine.next_state(state, random_joint_move(machine, state, rng))
        steps += 1
    return steps
