"""Expand a GDL game into the simultaneous-move model: a DAG keyed by state.

Algorithm (the game of the thesis' Definition 4.1.1, built from a GGP state
machine; repeated states merged through a transposition table, ARCHITECTURE.md
invariant 2, so the size is the number of reachable states, not of histories):

1. The players are the roles other than ``random`` (:func:`roles_of`: any number
   from one, a puzzle; the per-entry model of :func:`expand` takes exactly two,
   :func:`players_of`). A ``random`` role is nature and plays each of its legal
   moves with equal probability (GDL-II).
2. Breadth-first from the root state with a table state -> index. For each
   non-terminal state the legal moves of every role are computed once, then the
   next state of every joint move (player 0's move x player 1's move x ... x
   nature's move). A role with one legal move is a 1-action side of the matrix, so
   turn-based games expand too.
3. Terminal states are not nodes: an entry reaching one is a terminal entry whose
   payoffs are the goal values; the game is constant-sum when every terminal
   state's goals add to the same number.
4. An entry where nature has k > 1 legal moves leads to a chance node over the k
   next states, each with probability 1/k.
5. The model orders the nodes bottom-up (levels); a cycle of states, which a
   finite game cannot have, is reported with one of its states.
6. Budgets (states found, seconds, resident memory: :class:`gdl.budget.Budget`) are
   checked as states are found and stop the expansion with :class:`~solvers.errors.LimitReached`;
   progress lines (states found, states/s) are printed during long expansions.

The same function expands the subgame below any state (``root=``), which is how
the agent solves online within a budget.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from gdl.budget import Budget, resident_mb
from gdl.reasoning.state_machine import NATURE, Move, State, StateMachine
from solvers.errors import LimitReached, UnsupportedGame, ValidationError
from solvers.progress import RateClock
from solvers.simultaneous.model import CHANCE, DECISION, TERMINAL, SimultaneousGame

PROGRESS_SECONDS = 2.0      # between two progress lines
CHECK_EVERY = 256           # states between two memory checks (time: every state)


@dataclass
class StateGraph:
    """The reachable states of a game as arrays and lists indexed by state number.

    State 0 is the root. For a non-terminal state ``s``: ``moves[s]`` is a tuple of
    the legal moves per role (role order) and ``successors[s]`` the next-state
    numbers of every joint move, shape ``(n0, ..., n{R-1}, k)`` (each player's move in
    player order, then nature's; ``k`` = 1 without nature). For a terminal state
    ``moves[s]`` and ``successors[s]`` are ``None`` and ``payoffs[s]`` holds the
    players' goals.
    """

    machine: StateMachine
    players: tuple[int, ...]           # role indices of player 0, player 1, ...
    nature: int | None                 # role index of ``random``, if any
    states: list[State] = field(default_factory=list)
    moves: list[tuple[tuple[Move, ...], ...] | None] = field(default_factory=list)
    successors: list[np.ndarray | None] = field(default_factory=list)
    payoffs: dict[int, tuple[float, ...]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def n_states(self) -> int:
        return len(self.states)

    @property
    def n_terminal(self) -> int:
        return len(self.payoffs)

    @property
    def constant_sum(self) -> float | None:
        """The common goal sum of every terminal state, or None (general-sum)."""
        sums = {sum(goals) for goals in self.payoffs.values()}
        return sums.pop() if len(sums) == 1 else None


def roles_of(roles: Sequence[str]) -> tuple[tuple[int, ...], int | None]:
    """(role indices of the players, any number from one; role index of nature or
    None). Raises UnsupportedGame when no role is declared or ``random`` is the only one.
    """
    if not roles:  # (an empty file: say it as `ggp check` does)
        raise UnsupportedGame("the game declares no role")
    nature = roles.index(NATURE) if NATURE in roles else None
    players = tuple(i for i in range(len(roles)) if i != nature)
    if not players:
        raise UnsupportedGame("the game's only role is random: there is no player to solve for")
    return players, nature


def players_of(roles: Sequence[str]) -> tuple[tuple[int, int], int | None]:
    """(role indices of the two players, role index of nature or None), for the
    paths that take two-player games only.

    Raises UnsupportedGame unless the game has exactly two roles besides ``random``.
    """
    players, nature = roles_of(roles)
    if len(players) != 2:
        raise UnsupportedGame(two_players_only(roles, players))
    return (players[0], players[1]), nature


def two_players_only(roles: Sequence[str], players: Sequence[int]) -> str:
    """The refusal of a game of ``players`` (role indices) by a two-player path."""
    names = ", ".join(roles[i] for i in players)
    count = f"{len(players)} player{'' if len(players) == 1 else 's'}"
    return (f"{count} ({names}): not supported by exact solvers, which handle games of "
            "exactly two players (plus an optional random role)")


def expand_states(machine: StateMachine, root: State | None = None, *,
                  budget: Budget | None = None,
                  progress: Callable[[str], None] | None = None) -> StateGraph:
    """Every state reachable from ``root`` (default: the initial state), steps 1-6;
    ``budget``'s expansion limits (default: :class:`gdl.budget.Budget`'s)."""
    budget = Budget() if budget is None else budget
    players, nature = roles_of(machine.roles)
    graph = StateGraph(machine, players, nature)
    explorer = Explorer(graph, budget, progress)
    explorer.run(machine.initial_state() if root is None else root)
    return graph


class Explorer:
    """The breadth-first search of :func:`expand_states` with its budget checks."""

    def __init__(self, graph: StateGraph, budget: Budget,
                 progress: Callable[[str], None] | None) -> None:
        self.graph = graph
        self.budget = budget
        self.progress = progress
        self.index: dict[State, int] = {}
        machine = graph.machine
        # Joint moves are enumerated as (player 0, player 1, ..., nature) and handed
        # to the machine in role order.
        self.slots = [*graph.players] + ([graph.nature] if graph.nature is not None else [])
        self.n_players = len(graph.players)
        self.in_role_order = self.slots == list(range(len(machine.roles)))
        self.limits = Limits(budget)
        self.max_states = -1 if budget.max_states is None else budget.max_states

    def run(self, root: State) -> None:
        graph = self.graph
        self._number(root)
        if graph.moves[0] is None:
            raise UnsupportedGame("the root state is terminal: there is nothing to solve")
        # Breadth first: states are expanded in the order they are numbered, so the
        # list of states is the work queue.
        moves = graph.moves
        expand_one = self._expand
        s = 0
        while s < len(moves):
            if moves[s] is not None:
                expand_one(s)
            s += 1
        graph.seconds = time.perf_counter() - self.limits.start
        if self.progress is not None and self.limits.rate.due(len(graph.states)):
            self._report()

    def _number(self, state: State) -> int:
        """Number a new state; compute its moves, or its payoffs if it is terminal."""
        graph, machine = self.graph, self.graph.machine
        number = len(graph.states)
        self.index[state] = number
        graph.states.append(state)
        graph.successors.append(None)
        if number == self.max_states:
            raise LimitReached(f"expansion stopped: the budget of {number:,} states was "
                               f"reached after {time.perf_counter() - self.limits.start:.1f} s "
                               "(raise --max-states)")
        if number % CHECK_EVERY == 0:
            self._check_budget()
        if machine.is_terminal(state):
            graph.moves.append(None)
            goals = machine.goals(state)
            graph.payoffs[number] = tuple(float(goals[p]) for p in graph.players)
        else:
            graph.moves.append(machine.legal_joint_moves(state))
        return number

    def _expand(self, number: int) -> None:
        """The next state of every joint move of a non-terminal state, numbered."""
        graph = self.graph
        deadline = self.limits.deadline
        if deadline is not None and time.perf_counter() >= deadline:
            self._check_budget()
        state = graph.states[number]
        per_slot = [graph.moves[number][r] for r in self.slots]  # type: ignore[index]
        get = self.index.get
        new = self._number
        next_state = graph.machine.next_state
        if self.in_role_order:
            joints = itertools.product(*per_slot)
        else:
            joints = (_reorder(combo, self.slots) for combo in itertools.product(*per_slot))
        numbers = []
        append = numbers.append
        for joint in joints:
            child = next_state(state, joint)
            found = get(child)
            append(new(child) if found is None else found)
        shape = [len(m) for m in per_slot]
        if len(shape) == self.n_players:   # no nature: one outcome
            shape.append(1)
        graph.successors[number] = np.array(numbers, dtype=np.int64).reshape(shape)

    def _check_budget(self) -> None:
        if self.limits.check(len(self.graph.states)) and self.progress is not None:
            self._report()

    def _report(self) -> None:
        elapsed = time.perf_counter() - self.limits.start
        found = len(self.graph.states)
        self.progress(f"expand: {found:,} states found, {self.limits.rate.per_second(found):,.0f} "
                      f"states/s, resident +{self.limits.resident_growth():,.0f} MB, "
                      f"{elapsed:.1f} s")  # type: ignore[misc]


class Limits:
    """The time and memory budget of one expansion, timed from its start, and the clock
    of its progress lines (shared by the per-state and the batched search)."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.start = time.perf_counter()
        self.rate = RateClock(PROGRESS_SECONDS)
        self.base_memory = resident_mb()
        clock = self.start if budget.started is None else budget.started
        self.deadline = None if budget.time_limit is None else clock + budget.time_limit

    def resident_growth(self) -> float:
        """MB of resident memory gained since the expansion started."""
        return resident_mb() - self.base_memory

    def check(self, found: int, *more: int) -> bool:
        """Raise LimitReached when the time limit or the memory budget (resident growth)
        is reached, ``found`` states found; True when a progress line is due (``more``:
        other counts whose rates the line gives, see :class:`RateClock`)."""
        budget, now = self.budget, time.perf_counter()
        if budget.sample is not None:
            budget.sample(now - self.start, found)
        if self.deadline is not None and now >= self.deadline:
            raise LimitReached(f"expansion stopped: the time limit of {budget.time_limit:g} s "
                               f"was reached with {found:,} states found (raise --time-limit)")
        if budget.memory_mb is not None and self.resident_growth() >= budget.memory_mb:
            raise LimitReached(f"expansion stopped: the memory budget of "
                               f"{budget.memory_mb:,g} MB was reached with {found:,} "
                               "states found (raise --memory-mb)")
        return self.rate.due(found, *more)


def _reorder(combo: tuple[Move, ...], slots: Sequence[int]) -> tuple[Move, ...]:
    """A joint move from (player 0, player 1, ..., nature) order into role order."""
    joint: list[Move] = [None] * len(slots)
    for move, role in zip(combo, slots, strict=True):
        joint[role] = move
    return tuple(joint)


@dataclass
class Expansion:
    """A GDL game (or the subgame below a state) as a simultaneous-move game.

    Decision node ``h`` is the non-terminal state ``node_state[h]`` of ``graph``
    (node 0 is the root); chance nodes (nature's moves) have ``node_state`` -1.
    Action labels are the players' moves as KIF strings.
    """

    game: SimultaneousGame
    graph: StateGraph                # of a two-player game
    node_state: np.ndarray        # [N] state number of each node, -1 for chance nodes
    state_node: np.ndarray        # [S] node of each state, -1 for terminal states

    @property
    def machine(self) -> StateMachine:
        return self.graph.machine

    @property
    def player_roles(self) -> tuple[str, str]:
        roles = self.graph.machine.roles
        return roles[self.graph.players[0]], roles[self.graph.players[1]]

    def node_facts(self, node: int) -> list[str]:
        """The GDL state of a decision node as sorted KIF facts."""
        return self.machine.state_to_kif(self.graph.states[int(self.node_state[node])])

    def node_of(self, state: State) -> int | None:
        """The decision node of a GDL state, or None if it is not one."""
        number = self._index().get(state)
        if number is None or self.state_node[number] < 0:
            return None
        return int(self.state_node[number])

    def _index(self) -> dict[State, int]:
        if not hasattr(self, "_state_index"):
            self._state_index = {s: i for i, s in enumerate(self.graph.states)}
        return self._state_index


def expand(machine: StateMachine, root: State | None = None, *, budget: Budget | None = None,
           progress: Callable[[str], None] | None = None) -> Expansion:
    """The game below ``root`` (default: the initial state) as a simultaneous-move game
    (two-player games only: UnsupportedGame for others, before any expansion)."""
    players_of(machine.roles)
    return build_game(expand_states(machine, root, budget=budget, progress=progress))


def build_game(graph: StateGraph) -> Expansion:
    """The :class:`SimultaneousGame` of a state graph, built from whole arrays."""
    n_states = graph.n_states
    nonterminal = np.array([s for s in range(n_states) if graph.moves[s] is not None],
                           dtype=np.int64)
    state_node = np.full(n_states, TERMINAL, dtype=np.int64)
    state_node[nonterminal] = np.arange(len(nonterminal))
    payoff_of = np.zeros((n_states, 2))
    if graph.payoffs:
        terminal = np.fromiter(graph.payoffs, dtype=np.int64, count=len(graph.payoffs))
        payoff_of[terminal] = np.array(list(graph.payoffs.values()))
    shapes = np.array([graph.successors[s].shape for s in nonterminal], dtype=np.int64)
    outcomes = [graph.successors[s].reshape(-1, graph.successors[s].shape[2])
                for s in nonterminal]
    # Decision entries: (state, i, j); those where nature has k > 1 moves lead to a
    # chance node over the k outcomes. Chance nodes are numbered after decision nodes.
    chance_of_node = shapes[:, 2] > 1
    n_decision = len(nonterminal)
    entry_child: list[np.ndarray] = []
    entry_payoff: list[np.ndarray] = []
    chance_outcomes: list[np.ndarray] = []
    for node, rows in enumerate(outcomes):
        if chance_of_node[node]:
            first = n_decision + len(chance_outcomes)
            entry_child.append(np.arange(first, first + len(rows)))
            entry_payoff.append(np.zeros((len(rows), 2)))
            chance_outcomes.extend(rows)
        else:
            successors = rows[:, 0]
            entry_child.append(state_node[successors])
            entry_payoff.append(payoff_of[successors])
    num_actions = [shapes[:, :2]]
    node_kind = [np.full(n_decision, DECISION, dtype=np.int8)]
    entry_prob = [np.ones(sum(len(c) for c in entry_child))]
    if chance_outcomes:
        sizes = np.array([len(o) for o in chance_outcomes])
        flat = np.concatenate(chance_outcomes)
        num_actions.append(np.stack([sizes, np.ones_like(sizes)], axis=1))
        node_kind.append(np.full(len(sizes), CHANCE, dtype=np.int8))
        entry_child.append(state_node[flat])
        entry_payoff.append(payoff_of[flat])
        entry_prob.append(np.repeat(1.0 / sizes, sizes))
    try:
        game = SimultaneousGame.from_arrays(
            np.concatenate(num_actions), np.concatenate(entry_child),
            np.concatenate(entry_payoff), node_kind=np.concatenate(node_kind),
            entry_prob=np.concatenate(entry_prob), root=0,
            player_names=[graph.machine.roles[p] for p in graph.players],
            action_labels=_action_labels(graph, nonterminal, len(chance_outcomes)))
    except ValidationError as exc:
        # By construction every entry is set, payoffs are finite and action sets
        # non-empty: what the model refuses is a cycle.
        raise UnsupportedGame(_cycle_message(graph, exc)) from None
    node_state = np.concatenate([nonterminal, np.full(len(chance_outcomes), -1)])
    return Expansion(game, graph, node_state, state_node)


def _cycle_message(graph: StateGraph, error: ValidationError) -> str:
    """Name a state on a cycle of the state graph (iterative DFS with colours)."""
    colour = [0] * graph.n_states        # 0 new, 1 on the path, 2 done
    shown = f"({error.message})"
    stack = [(0, iter(graph.successors[0].ravel().tolist()))]  # type: ignore[union-attr]
    colour[0] = 1
    while stack:
        s, children = stack[-1]
        for child in children:
            if colour[child] == 1:
                facts = " ".join(graph.machine.state_to_kif(graph.states[child])[:12])
                shown = f"a repeated state: {{{facts}}}"
                stack = []
                break
            successors = graph.successors[child]
            if colour[child] == 0 and successors is not None:
                colour[child] = 1
                stack.append((child, iter(successors.ravel().tolist())))
                break
        else:
            colour[s] = 2
            stack.pop()
    return f"the game's states form a cycle, so the game need not end; {shown}"


def _action_labels(graph: StateGraph, nonterminal: np.ndarray,
                   n_chance: int) -> list[tuple[tuple[str, ...], tuple[str, ...]] | None]:
    """Per decision node the two players' moves as KIF strings (chance: default labels)."""
    to_kif = graph.machine.move_to_kif
    # Many states share their legal moves: one KIF tuple per distinct move tuple.
    known: dict[tuple[Move, ...], tuple[str, ...]] = {}

    def labels(moves: tuple[Move, ...]) -> tuple[str, ...]:
        text = known.get(moves)
        if text is None:
            text = known[moves] = tuple(map(to_kif, moves))
        return text

    p0, p1 = graph.players
    result: list[tuple[tuple[str, ...], tuple[str, ...]] | None] = [
        (labels(graph.moves[s][p0]), labels(graph.moves[s][p1]))  # type: ignore[index]
        for s in nonterminal.tolist()]
    return result + [None] * n_chance
