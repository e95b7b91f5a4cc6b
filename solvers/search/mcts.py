"""Simultaneous-move Monte Carlo tree search (SM-MCTS) with exact-value backups.

Algorithm (Lanctot, Lisý & Winands, "Monte Carlo Tree Search in Simultaneous Move
Games with Applications to Goofspiel", CGW 2013; Bošanský, Lisý, Lanctot, Čermák &
Winands, "Algorithms for computing strategies in two-player simultaneous move
games", Artificial Intelligence 235, 2016, section 5; Kocsis & Szepesvári 2006 for
UCT; Winands, Björnsson & Saito 2008 for MCTS-Solver):

1. Select: from the root, at each node every role that has a choice picks a move on
   its own statistics (decoupled): UCB1 on the mean reward of its moves when it is
   the only chooser (UCT) or with ``simultaneous="duct"``; regret matching mixed
   with ``rm_gamma`` exploration with ``simultaneous="rm"``. A chance role (GDL's
   ``random``) picks uniformly. Nodes are keyed by state (a transposition table),
   so repeated states share statistics.
2. Expand: the first state outside the table becomes a node (while the table is
   below ``max_nodes``). A state the descent has already been through (states
   repeat in some games) ends the descent too: it is played out from there.
3. Simulate: uniform random joint moves to a terminal state (or MAST moves,
   Finnsson & Björnsson 2008, with ``mast_epsilon``); the goal vector, scaled to
   [0, 1], is the reward.
4. Back up: every node on the path updates, for each of its choosers, the visit
   count and reward sum of the move taken; regret matching adds
   ``r / sigma(a)`` to the taken move's regret and subtracts ``r`` from all, and
   adds ``sigma`` to the mean strategy. When the reward came from a terminal or
   proven node, the node tries :func:`.exact.exact_backup` and becomes proven
   when its children's exact values decide it (MCTS-Solver); proven nodes are not
   sampled below.
5. Repeat until the deadline or the playout count; the root's result gives, per
   role, a strategy: the exact one when proven, else the visit distribution
   (UCT/DUCT) or the mean strategy (RM), and a value estimate.

The tree persists between calls: searching from a later state reuses what was
found below it; unreachable nodes are dropped when the table gets large.
Determinism: one ``random.Random(seed)``; ties among unvisited moves are broken by
it, among equal UCB scores by the first move in the machine's order.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np

from solvers.errors import GameError
from solvers.search.exact import ExactValue, NodeShape, exact_backup
from solvers.search.game import SearchGame, safe_goals

SIMULTANEOUS_POLICIES = ("duct", "rm")
MAX_PATH = 100_000  # a guard against games whose play never ends


@dataclass
class SearchConfig:
    """Tuning of :class:`MCTS` (defaults suit GDL goals 0..100 scaled to [0, 1])."""

    simultaneous: str = "duct"  # "duct" (decoupled UCT) or "rm" (regret matching)
    exploration: float = 0.7  # UCB1 constant C in q + C sqrt(ln N / n)
    rm_gamma: float = 0.1  # uniform exploration mixed into regret matching
    solver: bool = True  # back up exact values (MCTS-Solver)
    # MAST playouts (Finnsson & Björnsson 2008): with probability 1 - mast_epsilon a
    # role plays its legal move with the best average reward seen anywhere so far;
    # 0 disables it (uniform playouts, the plain UCT baseline).
    mast_epsilon: float = 0.0
    max_nodes: int = 200_000  # memory budget: nodes kept in the table
    seed: int = 0

    def __post_init__(self) -> None:
        if self.simultaneous not in SIMULTANEOUS_POLICIES:
            raise ValueError(f"simultaneous must be one of {SIMULTANEOUS_POLICIES}")


class _Node:
    """Statistics of one state; per-role vectors exist only for roles with a choice.

    The vectors are Python lists, not numpy arrays: they hold a handful of entries
    and are touched one entry at a time, where numpy's per-call overhead made the
    whole search ~3x slower (measured on tic-tac-toe with the compiled engine)."""

    __slots__ = ("moves", "shape", "count", "reward_sum", "visits", "totals", "regrets",
                 "strategy_sum", "children", "exact", "terminal")

    def __init__(self, moves: list[tuple[Hashable, ...]], shape: NodeShape,
                 n_roles: int, exact: ExactValue | None, terminal: bool) -> None:
        self.moves = moves
        self.shape = shape
        self.count = 0
        self.reward_sum = [0.0] * n_roles
        self.visits: dict[int, list[int]] = {r: [0] * shape.sizes[r] for r in shape.choosers}
        self.totals: dict[int, list[float]] = {r: [0.0] * shape.sizes[r] for r in shape.choosers}
        self.regrets: dict[int, list[float]] = {}
        self.strategy_sum: dict[int, list[float]] = {}
        self.children: dict[tuple[int, ...], Hashable] = {}
        self.exact = exact
        self.terminal = terminal


@dataclass
class SearchResult:
    """What a search found at its root state."""

    moves: tuple[tuple[Hashable, ...], ...]  # legal moves per role
    strategy: tuple[np.ndarray, ...]  # per role, a probability per move
    value: np.ndarray  # expected goal per role (0..100)
    proven: bool  # value and strategies are exact
    playouts: int
    elapsed: float
    nodes: int
    visits: tuple[np.ndarray, ...] = field(default_factory=tuple)  # per role and move
    mean: tuple[np.ndarray, ...] = field(default_factory=tuple)  # mean goal per move (NaN: unvisited)
    recycled: int = 0  # times the node pool was full and freed within the search

    def best_move(self, role: int) -> Hashable:
        """The most probable move of ``role`` (ties: first in the machine's order)."""
        return self.moves[role][int(np.argmax(self.strategy[role]))]

    def sample_move(self, role: int, rng: random.Random) -> Hashable:
        """A move of ``role`` drawn from its strategy."""
        weights = self.strategy[role]
        return self.moves[role][_sample(weights / weights.sum(), rng)]


def _sample(probabilities: np.ndarray, rng: random.Random) -> int:
    index = int(np.searchsorted(np.cumsum(probabilities), rng.random(), side="right"))
    return min(index, len(probabilities) - 1)


class MCTS:
    """SM-MCTS over a :class:`~solvers.search.game.SearchGame` (module docstring).

    ``chance_roles``: indices of roles played by nature (GDL's ``random`` role);
    they pick uniformly and never choose strategically.
    """

    def __init__(self, game: SearchGame, config: SearchConfig | None = None, *,
                 chance_roles: Sequence[int] = ()) -> None:
        self.game = game
        self.config = config or SearchConfig()
        self.chance_roles = tuple(chance_roles)
        self._n_roles = len(game.roles)
        self._rng = random.Random(self.config.seed)
        self._table: dict[Hashable, _Node] = {}
        self._mast: dict[tuple[int, Hashable], list[float]] = {}  # (role, move) -> [sum, n]

    @property
    def nodes(self) -> int:
        return len(self._table)

    def search(self, state: Hashable, *, deadline: float | None = None,
               playouts: int | None = None) -> SearchResult:
        """Search from ``state`` until ``deadline`` (``time.monotonic()``) or ``playouts``.

        At least one limit is required. A proven root stops the search early.
        """
        if deadline is None and playouts is None:
            raise ValueError("search needs a deadline or a playout count")
        started = time.monotonic()
        if len(self._table) > self.config.max_nodes // 2:
            self._keep_reachable(state)
        root = self._table.get(state) or self._expand(state, force=True)
        if root.terminal:
            raise GameError("search from a terminal state: there is no move to choose")
        done = 0
        while root.exact is None and (playouts is None or done < playouts):
            if deadline is not None and time.monotonic() >= deadline:
                break
            if self._iterate(state, root, deadline):
                done += 1
        return self._result(root, done, time.monotonic() - started)

    # -- one iteration ------------------------------------------------------------

    def _iterate(self, state: Hashable, node: _Node, deadline: float | None) -> bool:
        path: list[tuple[_Node, tuple[int, ...], dict[int, float]]] = []
        played: list[tuple[int, Hashable]] = []  # (role, move) of the playout, for MAST
        on_path = {state}
        while True:
            if node.exact is not None:
                reward, settled = (node.exact.value / 100.0).tolist(), True
                break
            joint, probs = self._select(node)
            path.append((node, joint, probs))
            state = self._child_state(state, node, joint)
            child = self._enter(state, on_path)
            if child is None:
                reward, settled = self._playout(state, deadline, played), False
                break
            on_path.add(state)
            if len(path) % 1024 == 0 and (len(path) > MAX_PATH or (
                    deadline is not None and time.monotonic() >= deadline)):
                return False  # a descent longer than the time left
            node = child
        if reward is None:
            return False
        self._back_up(path, reward, settled)
        if self.config.mast_epsilon > 0:
            self._update_mast(path, played, reward)
        return True

    def _child_state(self, state: Hashable, node: _Node, joint: tuple[int, ...]) -> Hashable:
        """The state after ``joint`` at ``node`` (remembered in the node)."""
        child_state = node.children.get(joint)
        if child_state is None:
            child_state = self.game.next_state(
                state, [node.moves[r][joint[r]] for r in range(self._n_roles)])
            node.children[joint] = child_state
        return child_state

    def _enter(self, state: Hashable, on_path: set, parent: Hashable | None = None
               ) -> _Node | None:
        """The node a descent goes on from at ``state``, or None where it stops for a
        playout: a new state (expanded when the table has room) or one this descent
        has been through (states repeat in some games: the descent would go round
        the cycle), unless its exact value is known."""
        child = self._table.get(state)
        if child is None or state in on_path:
            if child is None:
                child = self._expand(state, parent=parent)
            if child is None or child.exact is None:
                return None
        return child

    def _expand(self, state: Hashable, force: bool = False, parent: Hashable | None = None
                ) -> _Node | None:
        """The new node of ``state`` (None when the table is full); ``parent``, a
        non-terminal state it follows, lets :meth:`terminal_after` test only what the
        move changed."""
        if not force and len(self._table) >= self.config.max_nodes:
            return None
        game = self.game
        if (game.is_terminal(state) if parent is None else game.terminal_after(parent, state)):
            node = _Node([], NodeShape((), (), ()), self._n_roles,
                         ExactValue(safe_goals(game, state)), True)
        else:
            try:
                moves = [tuple(game.legal_moves(state, r)) for r in range(self._n_roles)]
            except GameError:  # a role without a legal move: treat as a dead end
                node = _Node([], NodeShape((), (), ()), self._n_roles,
                             ExactValue(np.zeros(self._n_roles)), True)
            else:
                node = _Node(moves, NodeShape.of(moves, self.chance_roles),
                             self._n_roles, None, False)
        self._table[state] = node
        return node

    def _select(self, node: _Node) -> tuple[tuple[int, ...], dict[int, float]]:
        shape = node.shape
        joint = [0] * len(shape.sizes)
        probs: dict[int, float] = {}
        use_rm = len(shape.choosers) > 1 and self.config.simultaneous == "rm"
        for r in shape.choosers:
            if use_rm:
                joint[r], probs[r] = self._select_rm(node, r)
            else:
                joint[r] = self._select_ucb(node, r)
        for r in shape.chance:
            joint[r] = self._rng.randrange(shape.sizes[r])
        return tuple(joint), probs

    def _select_ucb(self, node: _Node, role: int) -> int:
        visits = node.visits[role]
        if node.count < len(visits) or 0 in visits:
            unvisited = [i for i, v in enumerate(visits) if v == 0]
            return unvisited[self._rng.randrange(len(unvisited))]
        totals, c, log_n = node.totals[role], self.config.exploration, math.log(node.count)
        best, best_score = 0, -math.inf
        for i, v in enumerate(visits):
            score = totals[i] / v + c * math.sqrt(log_n / v)
            if score > best_score:
                best, best_score = i, score
        return best

    def _select_rm(self, node: _Node, role: int) -> tuple[int, float]:
        size = node.shape.sizes[role]
        regrets = node.regrets.get(role)
        if regrets is None:
            regrets = node.regrets[role] = [0.0] * size
            node.strategy_sum[role] = [0.0] * size
        positive = [r if r > 0.0 else 0.0 for r in regrets]
        total = sum(positive)
        gamma = self.config.rm_gamma
        if total > 0.0:
            sigma = [(1.0 - gamma) * p / total + gamma / size for p in positive]
        else:
            sigma = [1.0 / size] * size
        sums = node.strategy_sum[role]
        point, move = self._rng.random(), size - 1
        for i, p in enumerate(sigma):
            sums[i] += p
            point -= p
            if point < 0.0 and move == size - 1:
                move = i
        return move, sigma[move]

    def _playout(self, state: Hashable, deadline: float | None,
                 played: list[tuple[int, Hashable]]) -> list[float] | None:
        game, rng, roles = self.game, self._rng, range(self._n_roles)
        mast = self.config.mast_epsilon > 0
        try:
            for _ in range(MAX_PATH):
                if game.is_terminal(state):
                    return (safe_goals(game, state) / 100.0).tolist()
                if deadline is not None and time.monotonic() >= deadline:
                    return None
                if mast:
                    joint = [self._mast_move(r, game.legal_moves(state, r)) for r in roles]
                    played.extend(enumerate(joint))
                else:
                    joint = [rng.choice(game.legal_moves(state, r)) for r in roles]
                state = game.next_state(state, joint)
        except GameError:  # ill-defined line of play: worth nothing to anyone
            return [0.0] * self._n_roles
        return None

    def _mast_move(self, role: int, legal: Sequence[Hashable]) -> Hashable:
        if len(legal) == 1 or self._rng.random() < self.config.mast_epsilon:
            return self._rng.choice(legal)
        # unseen moves count as 0.5 (a middling reward), so they still get tried
        best, best_score = legal[0], -1.0
        for move in legal:
            stats = self._mast.get((role, move))
            score = stats[0] / stats[1] if stats else 0.5
            if score > best_score:
                best, best_score = move, score
        return best

    def _update_mast(self, path, played: list[tuple[int, Hashable]],
                     reward: list[float]) -> None:
        tree_moves = [(r, node.moves[r][joint[r]]) for node, joint, _ in path
                      for r in node.shape.choosers]
        for role, move in tree_moves + played:
            stats = self._mast.get((role, move))
            if stats is None:
                self._mast[(role, move)] = [reward[role], 1.0]
            else:
                stats[0] += reward[role]
                stats[1] += 1.0

    def _back_up(self, path: list[tuple[_Node, tuple[int, ...], dict[int, float]]],
                 reward: list[float], settled: bool) -> None:
        for node, joint, probs in reversed(path):
            node.count += 1
            sums = node.reward_sum
            for r, value in enumerate(reward):
                sums[r] += value
            for r in node.shape.choosers:
                move, value = joint[r], reward[r]
                node.visits[r][move] += 1
                node.totals[r][move] += value
                if r in probs:  # regret matching, importance-sampled reward estimate
                    regrets = node.regrets[r]
                    for i in range(len(regrets)):
                        regrets[i] -= value
                    regrets[move] += value / probs[r]
            if settled and self.config.solver:
                node.exact = exact_backup(node.shape, lambda j, n=node: self._child_exact(n, j))
                settled = node.exact is not None

    def _child_exact(self, node: _Node, joint: tuple[int, ...]) -> np.ndarray | None:
        child_state = node.children.get(joint)
        if child_state is None:
            return None
        child = self._table.get(child_state)
        return None if child is None or child.exact is None else child.exact.value

    # -- results and memory -------------------------------------------------------

    def _result(self, root: _Node, playouts: int, elapsed: float) -> SearchResult:
        shape = root.shape
        strategies, visits, means = [], [], []
        for r in range(self._n_roles):
            visits.append(np.array(root.visits.get(r, [0] * shape.sizes[r]), dtype=float))
            totals = np.array(root.totals.get(r, [0.0] * shape.sizes[r]))
            with np.errstate(invalid="ignore", divide="ignore"):
                means.append(np.where(visits[-1] > 0, 100.0 * totals / visits[-1], np.nan))
            strategies.append(self._root_strategy(root, r))
        if root.exact is not None:
            value = root.exact.value.copy()
        elif root.count:
            value = np.array(root.reward_sum) / root.count * 100.0
        else:
            value = np.full(self._n_roles, np.nan)
        return SearchResult(tuple(root.moves), tuple(strategies), value,
                            root.exact is not None, playouts, elapsed, len(self._table),
                            tuple(visits), tuple(means))

    def _root_strategy(self, root: _Node, role: int) -> np.ndarray:
        size = root.shape.sizes[role]
        if root.exact is not None and role in root.exact.strategies:
            return root.exact.strategies[role].copy()
        for stats in (root.strategy_sum.get(role), root.visits.get(role)):
            if stats is not None and sum(stats) > 0:
                return np.array(stats, dtype=float) / sum(stats)
        return np.full(size, 1.0 / size)

    def _keep_reachable(self, root_state: Hashable) -> None:
        """Drop every node not reachable from ``root_state`` (the game moved on)."""
        kept: dict[Hashable, _Node] = {}
        frontier = [root_state]
        while frontier:
            state = frontier.pop()
            node = self._table.get(state)
            if node is None or state in kept:
                continue
            kept[state] = node
            frontier.extend(node.children.values())
        self._table = kept
