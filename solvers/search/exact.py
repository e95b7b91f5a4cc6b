"""Exact values of game nodes, and an exhaustive endgame solver over the state DAG.

Backward induction on a simultaneous-move game graph (thesis' baseline idea; Bošanský
et al., Artificial Intelligence 2016, section 4, "backward induction"):

1. A terminal node's value is its goal vector.
2. A node where one role chooses (turn-based) takes the child that maximises that
   role's goal (max^n, Luckhardt & Irani 1986); ties go to the first move in the
   machine's order. A child worth the maximal goal (100) ends the scan early.
3. A node where only chance (a ``random`` role) has several moves takes the average.
4. A node where two roles choose at once, in a constant-sum game, takes the value of
   the matrix game of its children's values (an LP, :mod:`.matrix_game`).
5. Anything else (3+ simultaneous choosers, general-sum matrices, chance mixed with
   choices) has no single exact value here: the node is left to sampling.

:func:`exact_backup` is the per-node step (the MCTS backs proven values up with it,
MCTS-Solver, Winands et al. 2008); :func:`solve_exact` runs it depth-first with a
transposition table, within a node budget and a deadline.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np

from solvers.errors import GameError, LimitReached, UnsupportedGame
from solvers.recursion import RECURSION_LIMIT, deep_recursion
from solvers.search.game import SearchGame, safe_goals
from solvers.search.matrix_game import solve_matrix_game

GOAL_MAX = 100.0
Joint = tuple[int, ...]
ChildValue = Callable[[Joint], "np.ndarray | None"]


@dataclass(frozen=True)
class NodeShape:
    """How many moves each role has at a node, and who really chooses."""

    sizes: tuple[int, ...]
    choosers: tuple[int, ...]  # non-chance roles with more than one move
    chance: tuple[int, ...]  # chance roles with more than one move

    @classmethod
    def of(cls, moves: Sequence[Sequence[object]], chance_roles: Sequence[int]) -> NodeShape:
        sizes = tuple(len(m) for m in moves)
        multi = [r for r, n in enumerate(sizes) if n > 1]
        return cls(sizes, tuple(r for r in multi if r not in chance_roles),
                   tuple(r for r in multi if r in chance_roles))

    def joint(self, choice: dict[int, int]) -> Joint:
        return tuple(choice.get(r, 0) for r in range(len(self.sizes)))


@dataclass
class ExactValue:
    """A node's exact goal vector and the strategy of each chooser (move -> probability)."""

    value: np.ndarray
    strategies: dict[int, np.ndarray] = field(default_factory=dict)


def exact_backup(shape: NodeShape, child_value: ChildValue) -> ExactValue | None:
    """The node's exact value from its children's, or None (unknown child / no rule)."""
    if shape.chance and shape.choosers:
        return None
    if shape.chance:
        return _chance_backup(shape, child_value)
    if not shape.choosers:
        value = child_value(shape.joint({}))
        return None if value is None else ExactValue(value)
    if len(shape.choosers) == 1:
        return _max_backup(shape, child_value)
    if len(shape.choosers) == 2:
        return _matrix_backup(shape, child_value)
    return None


def _chance_backup(shape: NodeShape, child_value: ChildValue) -> ExactValue | None:
    total = None
    combos = itertools.product(*(range(shape.sizes[r]) for r in shape.chance))
    count = 0
    for combo in combos:
        value = child_value(shape.joint(dict(zip(shape.chance, combo, strict=True))))
        if value is None:
            return None
        total = value.copy() if total is None else total + value
        count += 1
    return ExactValue(total / count)


def _max_backup(shape: NodeShape, child_value: ChildValue) -> ExactValue | None:
    role = shape.choosers[0]
    best, best_move, unknown = None, 0, False
    for move in range(shape.sizes[role]):
        value = child_value(shape.joint({role: move}))
        if value is None:
            unknown = True
            continue
        if best is None or value[role] > best[role]:
            best, best_move = value, move
            if value[role] >= GOAL_MAX:
                break
    if best is None or (unknown and best[role] < GOAL_MAX):
        return None
    strategy = np.zeros(shape.sizes[role])
    strategy[best_move] = 1.0
    return ExactValue(best, {role: strategy})


def _matrix_backup(shape: NodeShape, child_value: ChildValue) -> ExactValue | None:
    row, col = shape.choosers
    values = np.empty((shape.sizes[row], shape.sizes[col], len(shape.sizes)))
    for i in range(shape.sizes[row]):
        for j in range(shape.sizes[col]):
            value = child_value(shape.joint({row: i, col: j}))
            if value is None:
                return None
            values[i, j] = value
    sums = values[:, :, row] + values[:, :, col]
    if np.ptp(sums) > 1e-9:  # general-sum: no single value
        return None
    x, y, _ = solve_matrix_game(values[:, :, row])
    expected = np.einsum("i,j,ijk->k", x, y, values)
    return ExactValue(expected, {row: x, col: y})


@dataclass
class EndgameResult:
    """The solved root: its moves per role, exact value and chooser strategies."""

    moves: tuple[tuple[Hashable, ...], ...]
    exact: ExactValue
    nodes: int


class _NotExact(Exception):
    pass


def solve_exact(game: SearchGame, state: Hashable, *, chance_roles: Sequence[int] = (),
                node_budget: int = 100_000, deadline: float | None = None,
                table: dict[Hashable, np.ndarray] | None = None) -> EndgameResult:
    """Solve the subgame at ``state`` exactly (see the module docstring).

    ``table`` (state -> goal vector) is read and filled, so solved states carry over
    between calls. Raises :class:`LimitReached` past ``node_budget`` new nodes or
    ``deadline`` (a ``time.monotonic()`` value), :class:`UnsupportedGame` when some
    node has no exact value under the rules above.
    """
    memo: dict[Hashable, np.ndarray] = {} if table is None else table
    roles = range(len(game.roles))
    expanded = 0

    def moves_at(node_state: Hashable) -> list[tuple[Hashable, ...]]:
        return [tuple(game.legal_moves(node_state, r)) for r in roles]

    def value(node_state: Hashable) -> np.ndarray:
        nonlocal expanded
        known = memo.get(node_state)
        if known is not None:
            return known
        expanded += 1
        if expanded > node_budget:
            raise LimitReached(f"endgame larger than {node_budget} nodes")
        if deadline is not None and time.monotonic() > deadline:
            raise LimitReached("endgame solve ran out of time")
        if game.is_terminal(node_state):
            result = safe_goals(game, node_state)
        else:
            result = backup(node_state).value
        memo[node_state] = result
        return result

    def backup(node_state: Hashable) -> ExactValue:
        try:
            moves = moves_at(node_state)
        except GameError as exc:  # no legal move: the game is ill-defined here
            raise _NotExact(str(exc)) from None
        shape = NodeShape.of(moves, chance_roles)
        exact = exact_backup(shape, lambda joint: value(
            game.next_state(node_state, [moves[r][joint[r]] for r in roles])))
        if exact is None:
            raise _NotExact("a node has no exact value (3+ simultaneous choosers, "
                            "general-sum simultaneous moves or chance with choices)")
        return exact

    try:
        if game.is_terminal(state):
            raise UnsupportedGame("the state is terminal: there is no move to choose")
        with deep_recursion:  # one Python frame per move: long games recurse deep
            root = backup(state)
        return EndgameResult(tuple(moves_at(state)), root, expanded)
    except _NotExact as exc:
        raise UnsupportedGame(str(exc)) from None
    except RecursionError:  # what is solved so far stays in the table
        raise LimitReached(f"endgame deeper than the recursion limit ({RECURSION_LIMIT})") \
            from None
