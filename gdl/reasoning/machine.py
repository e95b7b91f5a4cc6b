"""The GDL state machine: :func:`load_machine`, the engine choice.

:func:`load_machine` reads a game (path, KIF text or parsed rules), validates it
and returns a :class:`~gdl.reasoning.state_machine.StateMachine`: the compiled engine
(:mod:`gdl.reasoning.compile`) when asked for or when ``engine="auto"`` and grounding
fits its budget, else the general engine
(:class:`~gdl.reasoning.general_machine.GeneralMachine`, memoized top-down resolution
compiled to Python), which handles every valid game. ``fallback_reason`` says why
"auto" did not get the compiled engine.

This module imports both engines; neither imports it. The interface and the engines'
names are importable from here too (``from gdl.reasoning.machine import StateMachine,
load_machine``), so a caller needs one module for the state machine.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

from gdl.budget import Budget
from gdl.reasoning.compile import compile_machine
from gdl.reasoning.general_machine import GeneralMachine
from gdl.reasoning.parser import parse_kif
from gdl.reasoning.state_machine import NATURE, NATURE_GOAL, Move, State, StateMachine, defines_sees
from gdl.reasoning.terms import Rule, term_to_kif
from gdl.reasoning.validate import validate
from solvers.errors import GameError
from solvers.files import read_text

__all__ = ["ENGINES", "NATURE", "NATURE_GOAL", "GeneralMachine", "Move", "State",
           "StateMachine", "defines_sees", "load_machine", "read_rules", "rules_hash"]

ENGINES = ("auto", "compiled", "general")
# "compiled" asked for by name grounds with these limits instead of the default
# budget (auto's): othello-comp2007 needs 930,000 join steps and 8 s, then plays 6.7x
# faster than the general engine.
FORCED_COMPILE_STEPS = 5_000_000
FORCED_COMPILE_SECONDS = 300.0


def read_rules(source: str | Path | list[Rule], name: str | None = None) -> tuple[list[Rule], str]:
    """(rules, name) from a path, KIF text or parsed rules."""
    if isinstance(source, list):
        return source, name or "game"
    path: Path | None = None
    if isinstance(source, Path):
        path = source
    elif "(" not in source and ";" not in source:
        path = Path(source)
    if path is not None:
        return parse_kif(read_text(path), str(path)), name or path.stem
    return parse_kif(source), name or "game"


def load_machine(source: str | Path | list[Rule], *, engine: str = "auto",
                 name: str | None = None, budget: Budget | None = None,
                 filename: str | None = None) -> StateMachine:
    """A validated game as a state machine (see the module docstring); ``budget`` (a
    :class:`gdl.budget.Budget`) limits the grounding of the compiled engine; ``filename``
    names the file of already parsed rules in problems found."""
    if engine not in ENGINES:
        raise GameError(f"unknown engine {engine!r} (one of {', '.join(ENGINES)})")
    rules, game_name = read_rules(source, name)
    validate(rules, filename or (str(source) if isinstance(source, Path) or (
        isinstance(source, str) and "(" not in source and ";" not in source) else None))
    reason: str | None = None
    if engine == "compiled" and budget is None:  # asked for by name: try much harder
        budget = Budget(max_steps=FORCED_COMPILE_STEPS, max_seconds=FORCED_COMPILE_SECONDS)
    if engine in ("auto", "compiled"):
        try:
            machine: StateMachine = compile_machine(rules, name=game_name, budget=budget)
            machine.fallback_reason = None
            return machine
        except GameError as exc:
            if engine == "compiled":
                raise
            reason = exc.message
        except (RecursionError, MemoryError, ValueError, KeyError, TypeError) as exc:
            # "auto" must still give a working machine; the reason names the failure
            if engine == "compiled":
                raise GameError(f"compiled engine failed: {type(exc).__name__}: {exc}"
                                ) from exc
            reason = f"compiled engine failed: {type(exc).__name__}: {exc}"
    machine = GeneralMachine(rules, name=game_name)
    machine.fallback_reason = reason
    return machine


def rules_hash(rules: Sequence[Rule]) -> str:
    """SHA-256 of the normalised rules: rule order and variable names do not matter."""
    texts = sorted({_canonical_variables(term_to_kif(rule)) for rule in rules})
    return hashlib.sha256("\n".join(texts).encode()).hexdigest()


def _canonical_variables(kif: str) -> str:
    """Variables renamed ?v0, ?v1... in order of first occurrence."""
    names: dict[str, str] = {}
    return _VARIABLE.sub(lambda m: names.setdefault(m.group(), f"?v{len(names)}"), kif)


_VARIABLE = re.compile(r"\?[^\s()]+")
