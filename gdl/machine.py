"""The GDL state machine (ggp-base vocabulary) and the engine choice.

:func:`load_machine` reads a game (path, KIF text or parsed rules), validates it
and returns a :class:`StateMachine`: the compiled engine (part of ``gdl.compile``)
when asked for or when ``engine="auto"`` and grounding fits its budget, else the
general engine :class:`GeneralMachine` (bottom-up evaluation, :mod:`gdl.prover`),
which handles every valid game. ``fallback_reason`` says why "auto" did not get
the compiled engine.

States are frozensets of fact ids (hashable, hash cached, cheap to copy); moves
are ground values (``str`` or nested tuples, see :mod:`gdl.prover`).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from pathlib import Path

from gdl.parser import parse_kif, parse_term
from gdl.prover import (
    LEVEL_MOVE,
    LEVEL_STATE,
    LEVEL_STATIC,
    Context,
    Program,
    Value,
    to_value,
    value_to_kif,
)
from gdl.terms import Fn, Rule, Spelling, term_to_kif
from solvers.errors import GameError, GameRuntimeError
from solvers.files import read_text

State = Hashable
Move = Hashable
ENGINES = ("auto", "compiled", "general")


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

    @abstractmethod
    def move_to_kif(self, move: Move) -> str: ...

    @abstractmethod
    def parse_move(self, kif: str, role: int) -> Move: ...

    @abstractmethod
    def state_to_kif(self, state: State) -> list[str]:
        """Sorted fact strings without the ``true`` wrapper."""

    @abstractmethod
    def state_from_kif(self, facts: list[str]) -> State: ...


def _ground_value(kif: str, spelling: Spelling) -> Value:
    """The value of a ground KIF term in the rules' spelling; GameError if not ground."""
    term = spelling.term(parse_term(kif))
    try:
        return to_value(term)
    except GameError:
        raise GameError(f"expected a ground term, found {kif!r}") from None


class GeneralMachine(StateMachine):
    """The general engine: stratified bottom-up evaluation (see :mod:`gdl.prover`)."""

    engine_name = "general"
    CACHED_STATES = 32  # contexts kept so legal/terminal/goals/next share derivations

    def __init__(self, rules: Sequence[Rule], name: str = "game") -> None:
        self.name = name
        self._spelling = Spelling(list(rules))
        if self._spelling.mixed:
            rules = self._spelling.rules(list(rules))
        self.program = Program(rules)
        role_terms = [r.head.args[0] for r in rules
                      if r.is_fact and isinstance(r.head, Fn) and r.head.name == "role"
                      and len(r.head.args) == 1]
        self.roles = tuple(term_to_kif(t) for t in role_terms)
        self._role_values = tuple(to_value(t) for t in role_terms)
        self._role_index = {v: i for i, v in enumerate(self._role_values)}
        self._static = Context(self.program, LEVEL_STATIC)
        self._fact_ids: dict[Value, int] = {}
        self._facts: list[Value] = []
        self._contexts: OrderedDict[State, _StateInfo] = OrderedDict()
        self._kif_of: dict[Value, str] = {}  # moves and facts recur: print each once

    def _kif(self, value: Value) -> str:
        text = self._kif_of.get(value)
        if text is None:
            text = self._kif_of[value] = value_to_kif(value)
        return text

    # -- facts and states
    def _state(self, values: Sequence[Value]) -> frozenset[int]:
        ids = self._fact_ids
        out = []
        for value in values:
            fact_id = ids.get(value)
            if fact_id is None:
                fact_id = ids[value] = len(self._facts)
                self._facts.append(value)
            out.append(fact_id)
        return frozenset(out)

    def _info(self, state: State) -> _StateInfo:
        info = self._contexts.get(state)
        if info is not None:
            self._contexts.move_to_end(state)
        else:
            facts = self._facts
            true_rows = [(facts[i],) for i in state]  # type: ignore[attr-defined]
            info = _StateInfo(Context(self.program, LEVEL_STATE, self._static, {"true": true_rows}))
            self._contexts[state] = info
            if len(self._contexts) > self.CACHED_STATES:
                self._contexts.popitem(last=False)
        return info

    def initial_state(self) -> State:
        return self._state([row[0] for row in self._static.rows("init")])

    def legal_moves(self, state: State, role: int) -> tuple[Move, ...]:
        info = self._info(state)
        if info.legal is None:
            by_role: dict[int, list[Value]] = {}
            for role_value, move in info.context.rows("legal"):
                index = self._role_index.get(role_value)
                if index is not None:
                    by_role.setdefault(index, []).append(move)
            info.legal = {i: tuple(sorted(moves, key=self._kif))
                          for i, moves in by_role.items()}
        moves = info.legal.get(role, ())
        if not moves and not self.is_terminal(state):
            raise GameRuntimeError(f"role {self.roles[role]} has no legal move in the "
                                   f"non-terminal state {self._describe(state)}")
        return moves

    def next_state(self, state: State, joint: Sequence[Move]) -> State:
        if len(joint) != len(self.roles):
            raise GameError(f"expected {len(self.roles)} moves (one per role), got {len(joint)}")
        info = self._info(state)
        does = [(role, move) for role, move in zip(self._role_values, joint, strict=True)]
        context = Context(self.program, LEVEL_MOVE, info.context, {"does": does})
        return self._state([row[0] for row in context.rows("next")])

    def is_terminal(self, state: State) -> bool:
        return bool(self._info(state).context.rows("terminal"))

    def goal_values(self, state: State) -> tuple[tuple[str, ...], ...]:
        values: dict[int, set[str]] = {}
        for role_value, goal in self._info(state).context.rows("goal"):
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
            if not found[0].isdigit():
                raise GameRuntimeError(f"role {role} has a non-numeric goal value {found[0]}")
            result.append(int(found[0]))
        return tuple(result)

    def move_to_kif(self, move: Move) -> str:
        return self._kif(move)  # type: ignore[arg-type]

    def parse_move(self, kif: str, role: int) -> Move:
        return _ground_value(kif, self._spelling)

    def state_to_kif(self, state: State) -> list[str]:
        facts = self._facts
        kif = self._kif
        return sorted(kif(facts[i]) for i in state)  # type: ignore[attr-defined]

    def state_from_kif(self, facts: list[str]) -> State:
        return self._state([_ground_value(f, self._spelling) for f in facts])

    def _describe(self, state: State) -> str:
        facts = self.state_to_kif(state)
        shown = " ".join(facts[:12]) + (" ..." if len(facts) > 12 else "")
        return "{" + shown + "}"


class _StateInfo:
    __slots__ = ("context", "legal")

    def __init__(self, context: Context) -> None:
        self.context = context
        self.legal: dict[int, tuple[Value, ...]] | None = None


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
    """``gdl.compile.compile_machine`` when the compiled engine exists."""
    if importlib.util.find_spec("gdl.compile") is None:
        return None
    module = importlib.import_module("gdl.compile")
    return getattr(module, "compile_machine", None)


def load_machine(source: str | Path | list[Rule], *, engine: str = "auto",
                 name: str | None = None) -> StateMachine:
    """A validated game as a state machine (see the module docstring)."""
    from gdl.validate import validate

    if engine not in ENGINES:
        raise GameError(f"unknown engine {engine!r} (one of {', '.join(ENGINES)})")
    rules, game_name = read_rules(source, name)
    validate(rules, str(source) if isinstance(source, Path) or (
        isinstance(source, str) and "(" not in source and ";" not in source) else None)
    reason: str | None = None
    if engine in ("auto", "compiled"):
        factory = _compiled_factory()
        if factory is None:
            reason = "the compiled engine is not available"
        else:
            try:
                machine = factory(rules, name=game_name)
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
