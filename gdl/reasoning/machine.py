"""The GDL state machine (ggp-base vocabulary) and the engine choice.

:func:`load_machine` reads a game (path, KIF text or parsed rules), validates it
and returns a :class:`StateMachine`: the compiled engine (part of ``gdl.reasoning.compile``)
when asked for or when ``engine="auto"`` and grounding fits its budget, else the
general engine :class:`GeneralMachine` (memoized top-down resolution compiled to
Python, :mod:`gdl.reasoning.topdown`), which handles every valid game. ``fallback_reason``
says why "auto" did not get the compiled engine.

General-engine states are frozensets of ground facts (hashable, hash cached, cheap
to copy); moves are ground values (``str`` or nested tuples, see :mod:`gdl.reasoning.prover`).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import random
import re
import threading
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

from gdl.reasoning.parser import parse_kif, parse_term
from gdl.reasoning.prover import Value, to_value, value_to_kif
from gdl.reasoning.terms import Fn, Rule, Spelling, term_to_kif
from gdl.reasoning.topdown import Frame, TopDownProgram
from solvers.errors import GameError, GameRuntimeError
from solvers.files import read_text
from solvers.recursion import RECURSION_LIMIT, deep_recursion

State = Hashable
Move = Hashable
ENGINES = ("auto", "compiled", "general")
# "compiled" asked for by name grounds with these limits instead of the default
# budget (auto's): othello-comp2007 needs 930,000 join steps and 8 s, then plays 6.7x
# faster than the general engine.
FORCED_COMPILE_STEPS = 5_000_000
FORCED_COMPILE_SECONDS = 300.0


# GDL-II's nature role need not have goals: it gets this value when it has none.
NATURE = "random"
NATURE_GOAL = 0

class StateMachine(ABC):
    """A GDL game as a state machine; both engines implement this."""

    roles: tuple[str, ...]
    engine_name: str
    fallback_reason: str | None = None
    name: str = "game"

    @abstractmethod
    def initial_state(self) -> State: ...

    @abstractmethod
    def legal_moves(self, state: State, role: int) -> tuple[Move, ...]:
        """Legal moves of ``role`` sorted by KIF string; raises GameRuntimeError when a
        role has none in a non-terminal state."""

    def legal_joint_moves(self, state: State) -> tuple[tuple[Move, ...], ...]:
        """The legal moves of every role, in role order."""
        return tuple(self.legal_moves(state, r) for r in range(len(self.roles)))

    @abstractmethod
    def next_state(self, state: State, joint: Sequence[Move]) -> State: ...

    @abstractmethod
    def is_terminal(self, state: State) -> bool: ...

    def terminal_after(self, parent: State, child: State) -> bool:
        """:meth:`is_terminal` of ``child``, a successor of the non-terminal ``parent``
        (an engine may test only what the move changed)."""
        return self.is_terminal(child)

    @abstractmethod
    def goals(self, state: State) -> tuple[int, ...]:
        """One goal value per role; GameRuntimeError when a role has zero or several."""

    def goal_values(self, state: State) -> tuple[tuple[str, ...], ...]:
        """Every goal value of every role as KIF strings (for traces and diagnostics);
        unlike :meth:`goals` this never raises for zero or several values."""
        try:
            return tuple((str(v),) for v in self.goals(state))
        except GameRuntimeError:
            return tuple(() for _ in self.roles)

    has_sees: bool = False  # the rules define GDL-II's ``sees``: the game is GDL-II

    @abstractmethod
    def percepts(self, state: State, joint: Sequence[Move]) -> tuple[tuple[str, ...], ...]:
        """What each role perceives after ``joint`` in ``state`` (GDL-II): per role in
        role order, the sorted KIF strings of every ``p`` with ``(sees ROLE p)`` true
        in ``state`` with ``does`` = ``joint``; empty tuples when the game has no ``sees``."""

    @abstractmethod
    def move_to_kif(self, move: Move) -> str: ...

    @abstractmethod
    def parse_move(self, kif: str, role: int) -> Move: ...

    @abstractmethod
    def state_to_kif(self, state: State) -> list[str]:
        """Sorted fact strings without the ``true`` wrapper."""

    @abstractmethod
    def state_from_kif(self, facts: list[str]) -> State: ...


def defines_sees(rules: Sequence[Rule]) -> bool:
    """Do the rules define GDL-II's ``sees`` (a GDL-II game)?"""
    return any(isinstance(r.head, Fn) and r.head.name == "sees" for r in rules)


def _ground_value(kif: str, spelling: Spelling) -> Value:
    """The value of a ground KIF term in the rules' spelling; GameError if not ground."""
    term = spelling.term(parse_term(kif))
    try:
        return to_value(term)
    except GameError:
        raise GameError(f"expected a ground term, found {kif!r}") from None


class GeneralMachine(StateMachine):
    """The general engine: memoized top-down resolution (see :mod:`gdl.reasoning.topdown`).

    States are frozensets of ground fact values.
    """

    engine_name = "general"
    CACHED_STATES = 32  # frames kept so legal/terminal/goals/next share derivations
    CALIBRATION_STEPS = 40
    CALIBRATION_SECONDS = 0.3

    def __init__(self, rules: Sequence[Rule], name: str = "game") -> None:
        self.name = name
        self._spelling = Spelling(list(rules))
        if self._spelling.mixed:
            rules = self._spelling.rules(list(rules))
        self.program = TopDownProgram(rules)
        self.has_sees = defines_sees(rules)
        role_terms = [r.head.args[0] for r in rules
                      if r.is_fact and isinstance(r.head, Fn) and r.head.name == "role"
                      and len(r.head.args) == 1]
        self.roles = tuple(term_to_kif(t) for t in role_terms)
        self._role_values = tuple(to_value(t) for t in role_terms)
        self._role_index = {v: i for i, v in enumerate(self._role_values)}
        self._frames: OrderedDict[State, Frame] = OrderedDict()
        self._kif_of: dict[Value, str] = {}
        # a built-in player may search in a thread while the match loop asks too:
        # frames and tables are shared, so one query at a time
        self._lock = threading.RLock()
        self.program.calibrate(self._random_walk())
        self._frames.clear()

    def _random_walk(self) -> list[State]:
        """The states of a short seeded random walk from the initial state (at most
        CALIBRATION_STEPS steps or CALIBRATION_SECONDS), for join planning."""
        rng = random.Random(0)
        deadline = time.monotonic() + self.CALIBRATION_SECONDS
        states: list[State] = []
        try:
            state = self.initial_state()
            while len(states) < self.CALIBRATION_STEPS and time.monotonic() < deadline:
                states.append(state)
                if self.is_terminal(state):
                    break
                state = self.next_state(state, [rng.choice(self.legal_moves(state, r))
                                                for r in range(len(self.roles))])
        except GameError:
            pass  # an ill-defined state: plan with what was seen
        return states

    def _kif(self, value: Value) -> str:
        text = self._kif_of.get(value)
        if text is None:
            text = self._kif_of[value] = value_to_kif(value)
        return text

    def _frame(self, state: State) -> Frame:
        frame = self._frames.get(state)
        if frame is None:
            frame = self._frames[state] = Frame(self.program, state)  # type: ignore[arg-type]
            if len(self._frames) > self.CACHED_STATES:
                self._frames.popitem(last=False)
        return frame

    def _ask(self, query: str, state: State, does: dict | None = None) -> Any:
        """Run a query. Running out of recursion means a cyclic derivation: the program
        switches to tabling and the query runs again (see :mod:`gdl.reasoning.topdown`). An
        interrupted query may leave unfinished tables: frames and memos are dropped."""
        with self._lock, deep_recursion:
            while True:
                frame = self._frame(state)
                if does is not None:
                    frame = Frame(self.program, state, does, frame)  # type: ignore[arg-type]
                try:
                    return self.program.queries[query](frame)
                except RecursionError:
                    self._frames.clear()
                    if self.program.tabling_on:
                        self.program.forget()
                        raise GameRuntimeError(
                            f"a derivation is deeper than {RECURSION_LIMIT} calls") from None
                    self.program.use_tabling()
                except BaseException:
                    self._frames.clear()
                    self.program.forget()
                    raise

    def initial_state(self) -> State:
        return frozenset(row[0] for row in self._ask("init", frozenset()))

    def legal_moves(self, state: State, role: int) -> tuple[Move, ...]:
        with self._lock:
            legal = self._legal_by_role(state)
        moves = legal.get(role, ())
        if not moves and not self.is_terminal(state):
            raise GameRuntimeError(f"role {self.roles[role]} has no legal move in the "
                                   f"non-terminal state {self._describe(state)}")
        return moves

    def _legal_by_role(self, state: State) -> dict[int, tuple[Move, ...]]:
        frame = self._frame(state)
        legal = frame.legal
        if legal is None:
            by_role: dict[int, list[Value]] = {}
            for role_value, move in self._ask("legal", state):
                index = self._role_index.get(role_value)
                if index is not None:
                    by_role.setdefault(index, []).append(move)
            legal = frame.legal = {i: tuple(sorted(moves, key=self._kif))
                                   for i, moves in by_role.items()}
        return legal

    def _does(self, joint: Sequence[Move]) -> dict:
        if len(joint) != len(self.roles):
            raise GameError(f"expected {len(self.roles)} moves (one per role), got {len(joint)}")
        return dict(zip(self._role_values, joint, strict=True))

    def next_state(self, state: State, joint: Sequence[Move]) -> State:
        return frozenset(row[0] for row in self._ask("next", state, self._does(joint)))

    def percepts(self, state: State, joint: Sequence[Move]) -> tuple[tuple[str, ...], ...]:
        seen: list[set[str]] = [set() for _ in self.roles]
        if self.has_sees:
            for role_value, percept in self._ask("sees", state, self._does(joint)):
                index = self._role_index.get(role_value)
                if index is not None:
                    seen[index].add(self._kif(percept))
        return tuple(tuple(sorted(found)) for found in seen)

    def is_terminal(self, state: State) -> bool:
        return bool(self._ask("terminal", state))

    def goal_values(self, state: State) -> tuple[tuple[str, ...], ...]:
        values: dict[int, set[str]] = {}
        for role_value, goal in self._ask("goal", state):
            index = self._role_index.get(role_value)
            if index is not None:
                values.setdefault(index, set()).add(value_to_kif(goal))
        return tuple(tuple(sorted(values.get(i, ()))) for i in range(len(self.roles)))

    def goals(self, state: State) -> tuple[int, ...]:
        result = []
        for role, found in zip(self.roles, self.goal_values(state), strict=True):
            if not found and role == NATURE:
                result.append(NATURE_GOAL)
                continue
            if len(found) != 1:
                raise GameRuntimeError(
                    f"role {role} has {len(found)} goal values ({', '.join(found) or 'none'}) "
                    f"in state {self._describe(state)}")
            if not (found[0].isascii() and found[0].isdigit() and len(found[0]) <= 9):
                raise GameRuntimeError(f"role {role} has a non-numeric or huge goal value "
                                       f"{found[0][:40]}")
            result.append(int(found[0]))
        return tuple(result)

    def move_to_kif(self, move: Move) -> str:
        return self._kif(move)  # type: ignore[arg-type]

    def parse_move(self, kif: str, role: int) -> Move:
        return _ground_value(kif, self._spelling)

    def state_to_kif(self, state: State) -> list[str]:
        return sorted(map(self._kif, state))  # type: ignore[call-overload]

    def state_from_kif(self, facts: list[str]) -> State:
        return frozenset(_ground_value(f, self._spelling) for f in facts)

    def _describe(self, state: State) -> str:
        facts = self.state_to_kif(state)
        shown = " ".join(facts[:12]) + (" ..." if len(facts) > 12 else "")
        return "{" + shown + "}"


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


def _compiled_factory():  # noqa: ANN202 - returns part B's factory or None
    """``gdl.reasoning.compile.compile_machine`` when the compiled engine exists."""
    if importlib.util.find_spec("gdl.reasoning.compile") is None:
        return None
    module = importlib.import_module("gdl.reasoning.compile")
    return getattr(module, "compile_machine", None)


def load_machine(source: str | Path | list[Rule], *, engine: str = "auto",
                 name: str | None = None, budget: Any = None,
                 filename: str | None = None) -> StateMachine:
    """A validated game as a state machine (see the module docstring); ``budget`` (a
    :class:`gdl.reasoning.ground.Budget`) limits the grounding of the compiled engine; ``filename``
    names the file of already parsed rules in problems found."""
    from gdl.reasoning.validate import validate

    if engine not in ENGINES:
        raise GameError(f"unknown engine {engine!r} (one of {', '.join(ENGINES)})")
    rules, game_name = read_rules(source, name)
    validate(rules, filename or (str(source) if isinstance(source, Path) or (
        isinstance(source, str) and "(" not in source and ";" not in source) else None))
    reason: str | None = None
    if engine == "compiled" and budget is None:  # asked for by name: try much harder
        from gdl.reasoning.ground import Budget

        budget = Budget(max_steps=FORCED_COMPILE_STEPS, max_seconds=FORCED_COMPILE_SECONDS)
    if engine in ("auto", "compiled"):
        factory = _compiled_factory()
        if factory is None:
            reason = "the compiled engine is not available"
        else:
            try:
                machine = factory(rules, name=game_name, budget=budget)
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
        if engine == "compiled":
            raise GameError(f"engine 'compiled' unavailable: {reason}")
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
