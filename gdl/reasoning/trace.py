"""Playout traces in the oracle's JSON-lines format, and replaying them.

Format (``../shared/oracle/README.md``), one JSON object per step::

    {"state": [facts], "legal": {role: [moves]}, "terminal": bool,
     "goals": {role: [values]}, "moves": {role: move}, "next": [facts]}

Facts and moves are KIF strings, lists sorted; a terminal step has ``moves == {}``
and no ``next``. The oracle lower-cases every symbol, so replay compares
case-insensitively and never parses the oracle's strings back into our terms: it
walks our own states from the initial state, picking our move whose KIF matches
the recorded one.

Replay (per playout): 1. start at our initial state; 2. compare state, legal moves
of every role, terminal flag and goal values with the record; 3. unless terminal,
play the recorded joint move and compare the next state; 4. continue from our
next state (the next record starts a new playout after a terminal step).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from gdl.reasoning.state_machine import Move, State, StateMachine
from solvers.errors import FormatError, GameRuntimeError


def legal_or_empty(machine: StateMachine, state: State, role: int) -> tuple[Move, ...]:
    """Legal moves, or () where the game defines none (reported by the caller)."""
    try:
        return machine.legal_moves(state, role)
    except GameRuntimeError:
        return ()


def step_record(machine: StateMachine, state: State) -> dict[str, Any]:
    """The trace record of ``state`` without ``moves``/``next``."""
    roles = machine.roles
    goal_values = machine.goal_values(state)
    return {
        "state": machine.state_to_kif(state),
        "legal": {role: sorted(machine.move_to_kif(m) for m in legal_or_empty(machine, state, i))
                  for i, role in enumerate(roles)},
        "terminal": machine.is_terminal(state),
        "goals": {role: sorted(goal_values[i]) for i, role in enumerate(roles)},
    }


def random_joint_move(machine: StateMachine, state: State, rng: random.Random) -> list[Move]:
    """One uniformly random legal move per role (GameRuntimeError if a role has none)."""
    return [rng.choice(machine.legal_moves(state, r)) for r in range(len(machine.roles))]


def playout_records(machine: StateMachine, rng: random.Random,
                    max_steps: int | None = None) -> Iterator[dict[str, Any]]:
    """The trace records of one random playout."""
    state = machine.initial_state()
    steps = 0
    while True:
        record = step_record(machine, state)
        if record["terminal"] or (max_steps is not None and steps >= max_steps):
            record["moves"] = {}
            yield record
            return
        joint = random_joint_move(machine, state, rng)
        state = machine.next_state(state, joint)
        steps += 1
        record["moves"] = {role: machine.move_to_kif(m)
                           for role, m in zip(machine.roles, joint, strict=True)}
        record["next"] = machine.state_to_kif(state)
        yield record


def write_record(out: IO[str], record: dict[str, Any]) -> None:
    out.write(json.dumps(record, sort_keys=True) + "\n")


def read_trace(path: str | Path) -> list[dict[str, Any]]:
    """The records of a trace file (FormatError on a line that is not JSON)."""
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise FormatError(f"{path}:{number}: not a JSON trace record: {exc.msg}") from None
    return records


def _lower(items: Sequence[str]) -> list[str]:
    return sorted(item.lower() for item in items)


def _difference(ours: Sequence[str], theirs: Sequence[str]) -> str:
    a, b = set(_lower(ours)), set(_lower(theirs))
    return f"ours only {sorted(a - b)[:6]}, oracle only {sorted(b - a)[:6]}"


def replay(machine: StateMachine, records: Sequence[dict[str, Any]],
           max_mismatches: int = 10) -> tuple[int, list[str]]:
    """(steps checked, mismatches) of ``machine`` against oracle trace records."""
    problems: list[str] = []
    state: State | None = None
    diverged = False
    checked = 0
    for number, record in enumerate(records, start=1):
        if len(problems) >= max_mismatches:
            break
        if not diverged:
            if state is None:
                state = machine.initial_state()
            try:
                problem, state = _check_step(machine, state, record)
            except GameRuntimeError as exc:
                problem, state = f"{exc}", None
            checked += 1
            if problem:
                problems.append(f"record {number}: {problem}")
                diverged = True  # skip the rest of this playout
        if not record.get("moves"):  # a playout ends here; the next record starts one
            state, diverged = None, False
    return checked, problems


def _check_step(machine: StateMachine, state: State,
                record: dict[str, Any]) -> tuple[str | None, State | None]:
    if _lower(machine.state_to_kif(state)) != _lower(record["state"]):
        return "state differs: " + _difference(machine.state_to_kif(state), record["state"]), None
    ours = step_record(machine, state)
    if ours["terminal"] != record["terminal"]:
        return f"terminal: ours {ours['terminal']}, oracle {record['terminal']}", None
    for role in machine.roles:
        theirs_legal = record["legal"].get(role.lower(), record["legal"].get(role, []))
        if _lower(ours["legal"][role]) != _lower(theirs_legal):
            return f"legal moves of {role}: " + _difference(ours["legal"][role], theirs_legal), None
        theirs_goals = record["goals"].get(role.lower(), record["goals"].get(role, []))
        if _lower(ours["goals"][role]) != _lower(theirs_goals):
            return f"goals of {role}: ours {ours['goals'][role]}, oracle {theirs_goals}", None
    moves = record.get("moves") or {}
    if not moves:
        return None, None
    joint = []
    for index, role in enumerate(machine.roles):
        wanted = str(moves.get(role.lower(), moves.get(role, ""))).lower()
        match = [m for m in machine.legal_moves(state, index)
                 if machine.move_to_kif(m).lower() == wanted]
        if not match:
            return f"oracle move {wanted!r} of {role} is not legal for us", None
        joint.append(match[0])
    following = machine.next_state(state, joint)
    if _lower(machine.state_to_kif(following)) != _lower(record["next"]):
        return "next state differs: " + _difference(machine.state_to_kif(following),
                                                    record["next"]), None
    return None, following
