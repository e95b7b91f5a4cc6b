"""The general GDL engine: memoized top-down resolution compiled to Python.

:class:`GeneralMachine` (see :mod:`gdl.reasoning.topdown`) handles every valid game;
:func:`gdl.reasoning.machine.load_machine` gives it when the compiled engine is not
asked for or does not fit. Its states are frozensets of ground facts (hashable, hash
cached, cheap to copy); moves are ground values (``str`` or nested tuples, see
:mod:`gdl.reasoning.prover`).
"""

from __future__ import annotations

import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from gdl.reasoning.parser import parse_term
from gdl.reasoning.prover import Value, to_value, value_to_kif
from gdl.reasoning.state_machine import NATURE, NATURE_GOAL, Move, State, StateMachine, defines_sees
from gdl.reasoning.terms import Fn, Rule, Spelling, term_to_kif
from gdl.reasoning.topdown import LEGAL_LAZILY, Frame, TopDownProgram
from solvers.errors import GameError, GameRuntimeError
from solvers.recursion import RECURSION_LIMIT, deep_recursion


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
    CALIBRATION_MOVES = 1000

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
        CALIBRATION_STEPS steps or CALIBRATION_SECONDS), for join planning. A role
        with more than CALIBRATION_MOVES legal moves chooses among its first ones."""
        rng = random.Random(0)
        deadline = time.monotonic() + self.CALIBRATION_SECONDS
        states: list[State] = []
        try:
            state = self.initial_state()
            while len(states) < self.CALIBRATION_STEPS and time.monotonic() < deadline:
                states.append(state)
                if self.is_terminal(state):
                    break
                state = self.next_state(state, [
                    rng.choice(self.legal_moves_upto(state, r, self.CALIBRATION_MOVES))
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

    def _ask(self, query: str, state: State, does: dict | None = None, args: tuple = (),
             consume: Callable[[Any], Any] | None = None) -> Any:
        """Run a query (with ``args`` after the frame; ``consume`` takes its answers
        while the query's tables are held). Running out of recursion means a cyclic
        derivation: the program switches to tabling and the query runs again (see
        :mod:`gdl.reasoning.topdown`). An interrupted query may leave unfinished
        tables: frames and memos are dropped."""
        with self._lock, deep_recursion:
            while True:
                frame = self._frame(state)
                if does is not None:
                    frame = Frame(self.program, state, does, frame)  # type: ignore[arg-type]
                try:
                    found = self.program.queries[query](frame, *args)
                    return found if consume is None else consume(found)
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
        if not moves:
            self._no_legal_move(state, role)
        return moves

    def legal_moves_upto(self, state: State, role: int, limit: int) -> tuple[Move, ...]:
        """:meth:`StateMachine.legal_moves_upto`: derived one at a time, so the first
        moves of a role that has millions come without the others."""
        def first(rows: Iterable[tuple]) -> tuple[Move, ...]:
            moves: dict[Move, None] = {}
            for _role, move in rows:
                if move not in moves:
                    if len(moves) == limit:  # there are more: the first ones, as they came
                        return tuple(moves)
                    moves[move] = None
            return tuple(sorted(moves, key=self._kif))  # all of them: as legal_moves

        with self._lock:
            frame = self._frames.get(state)
            if frame is not None and frame.legal is not None:  # listed already
                moves = frame.legal.get(role, ())[:limit]
            else:
                moves = self._ask(LEGAL_LAZILY, state, args=(self._role_values[role],),
                                  consume=first)
        if not moves:
            self._no_legal_move(state, role)
        return moves

    def _no_legal_move(self, state: State, role: int) -> None:
        """GameRuntimeError unless ``state`` is terminal."""
        if not self.is_terminal(state):
            raise GameRuntimeError(f"role {self.roles[role]} has no legal move in the "
                                   f"non-terminal state {self.describe(state)}")

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
                    f"in state {self.describe(state)}")
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
