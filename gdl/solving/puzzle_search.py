"""The goal search: a plan for a puzzle too big to expand whole.

A depth-first search over the GDL state machine (one player, no ``random`` role)
that stops as soon as a terminal state gives the player the game's highest goal
(:func:`goal_ceiling`): no plan can do better, so the plan found proves the value.

1. The ceiling is the largest goal value the rules can give the role: the numbers in
   its ``goal`` rule heads, or when a head's value is a variable, the grounded goal
   atoms of the compiled engine (the general engine: GDL's maximum, 100).
2. Depth first from the initial state, each state's moves ordered: those that end
   the game first, then by the goal value of the state they lead to, highest first (many puzzles define goals before the end:
   queens placed, lights on; equal ones in the engine's order), with a transposition
   table of the states entered: a state seen before is not entered
   again (what lies below it was or is being searched; a repeated state on the
   current path, a cycle, is cut the same way).
3. Every terminal state reached updates the best goal and its plan; the ceiling stops
   the search (``proved``). A search that runs out of states without reaching the
   ceiling has seen every reachable terminal state: its best goal is the value, also
   proved (the plan is then not necessarily the shortest).
4. The budget (:class:`gdl.budget.Budget`: states entered, seconds, resident memory)
   stops the search with the best goal so far, not proved; a progress line every
   :data:`~gdl.expansion.expand.PROGRESS_SECONDS`.

Puzzles with chance are not searched: a plan cannot prove an expected value.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from gdl.budget import Budget
from gdl.expansion.expand import Limits, roles_of
from gdl.reasoning.compile import CompiledMachine
from gdl.reasoning.state_machine import Move, State, StateMachine
from gdl.reasoning.terms import Const, Fn, Rule, Var
from solvers.errors import GameError, GameRuntimeError, LimitReached, UnsupportedGame

GDL_MAX_GOAL = 100     # GDL's goal values are integers in [0, 100]
CHECK_EVERY = 256      # states entered between two budget checks


@dataclass
class SearchResult:
    """What the goal search found: ``goal`` the best goal reached (None: no terminal
    state), ``plan`` the joint moves (role order) reaching it, ``proved`` whether that
    goal is the value (``reason`` says why or why not)."""

    ceiling: float
    goal: float | None = None
    plan: list[tuple[Move, ...]] = field(default_factory=list)
    proved: bool = False
    stopped: bool = False       # the budget stopped the search
    reason: str = ""
    states: int = 0
    seconds: float = 0.0


def goal_ceiling(rules: Sequence[Rule], machine: StateMachine, role: int) -> float:
    """The largest goal value the rules can give ``role`` (step 1); GameError when no
    goal rule names the role."""
    name = machine.roles[role]
    values: list[str] = []
    open_value = False
    for rule in rules:
        head = rule.head
        if not (isinstance(head, Fn) and head.name == "goal" and len(head.args) == 2):
            continue
        who, value = head.args
        if isinstance(who, Var) or (isinstance(who, Const) and who.name.lower() == name.lower()):
            if isinstance(value, Const):
                values.append(value.name)
            else:
                open_value = True
    if open_value and isinstance(machine, CompiledMachine):
        values, open_value = list(machine.possible_goals(role)), False
    if open_value:
        return float(GDL_MAX_GOAL)
    numbers = [int(v) for v in values if v.isdigit()]
    if not numbers:
        raise GameError(f"role {name} has no goal values: no goal rule gives it a number")
    return float(max(numbers))


def goal_search(machine: StateMachine, ceiling: float, *, budget: Budget | None = None,
                progress: Callable[[str], None] | None = None) -> SearchResult:
    """Steps 2-4 from the initial state; UnsupportedGame unless the game is a puzzle
    without a ``random`` role."""
    players, nature = roles_of(machine.roles)
    if len(players) != 1:
        raise UnsupportedGame(f"the goal search plays one-player games, not {len(players)}")
    if nature is not None:
        raise UnsupportedGame("the goal search takes puzzles without chance: this one has "
                              "a random role (solve it whole: raise --max-states)")
    return _Search(machine, players[0], ceiling, budget or Budget(), progress).run()


class _Search:
    def __init__(self, machine: StateMachine, player: int, ceiling: float, budget: Budget,
                 progress: Callable[[str], None] | None) -> None:
        self.machine, self.player, self.progress = machine, player, progress
        self.limits = Limits(budget)
        self.max_states = budget.max_states
        self.deadline = self.limits.deadline
        self.result = SearchResult(ceiling)
        self.seen: set[State] = set()

    def run(self) -> SearchResult:
        result = self.result
        try:
            self._search()
        except LimitReached as exc:
            result.stopped = True
            result.reason = exc.message.replace("expansion stopped", "goal search stopped")
        result.states = len(self.seen)
        result.seconds = time.perf_counter() - self.limits.start
        return result

    def _search(self) -> None:
        machine, player, result = self.machine, self.player, self.result
        # the path: per state entered, its (move, child) pairs best first and the
        # index of the pair being searched
        path: list[tuple[list[tuple[Move, State]], int]] = []
        state: State | None = machine.initial_state()
        while True:
            if state is not None and self._enter(state):
                if machine.is_terminal(state):
                    goal = float(machine.goals(state)[player])
                    if result.goal is None or goal > result.goal:
                        result.goal = goal
                        result.plan = [(pairs[i][0],) for pairs, i in path]
                    if goal >= result.ceiling:
                        result.proved = True
                        result.reason = "a plan reaches the highest goal the rules give"
                        return
                else:
                    path.append((self._children(state), -1))
            if not path:
                break
            pairs, i = path[-1]
            if i + 1 == len(pairs):
                path.pop()
                state = None
                continue
            path[-1] = (pairs, i + 1)
            state = pairs[i + 1][1]
        result.proved = result.goal is not None
        result.reason = "every reachable state was searched"

    def _children(self, state: State) -> list[tuple[Move, State]]:
        """(move, next state) of every legal move: terminal states first (a plan ends
        there at once), then the highest goal first (step 2's order; a state without
        a goal value counts lowest)."""
        machine, player = self.machine, self.player
        pairs = []
        for move in machine.legal_moves(state, player):
            pairs.append((move, machine.next_state(state, (move,))))
            self._check_clock()     # a slow engine: a state's children can take seconds
        return sorted(pairs, key=lambda pair: (not machine.terminal_after(state, pair[1]),
                                               -self._goal_or_none(pair[1])))

    def _goal_or_none(self, state: State) -> float:
        try:
            return float(self.machine.goals(state)[self.player])
        except GameRuntimeError:
            return -1.0

    def _check_clock(self) -> None:
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            self.limits.check(len(self.seen))

    def _enter(self, state: State) -> bool:
        """Enter ``state`` unless it was entered before; the budget checks."""
        seen = self.seen
        if state in seen:
            return False
        if self.max_states is not None and len(seen) >= self.max_states:
            raise LimitReached(f"goal search stopped: the budget of {self.max_states:,} "
                               "states was reached (raise --max-states)")
        seen.add(state)
        found = len(seen)
        self._check_clock()
        if found % CHECK_EVERY == 0 and self.limits.check(found) and self.progress:
            elapsed = time.perf_counter() - self.limits.start
            best = "none yet" if self.result.goal is None else f"{self.result.goal:g}"
            self.progress(f"goal search: {found:,} states, {found / max(elapsed, 1e-9):,.0f} "
                          f"states/s, best goal {best} of {self.result.ceiling:g}, "
                          f"{elapsed:.1f} s")
        return True
