"""Conversions between :class:`~.model.SimultaneousGame` and :class:`~.dag.StateDag`.

So that every game the old path solves can be solved by the compact one and compared
(tests and ``ggp bench level`` run today's solvers on a DAG's converted game):

* :func:`game_to_dag`: node ``h`` becomes state ``h`` (decision: ``n0 x n1``, ``nk =
  1``; chance with ``k`` outcomes: a ``1 x 1`` state with ``nk = k``, so a chance node
  shared by several entries stays one state); distinct terminal payoff pairs become
  terminal states numbered after the nodes. A state's outcomes are equally likely, so
  a chance node with unequal probabilities repeats each outcome ``p * D`` times for
  the smallest common denominator ``D`` (at most ``MAX_DENOMINATOR``).
* :func:`dag_to_game`: non-terminal state ``s`` becomes decision node
  ``state_node[s]``; a joint move with ``nk > 1`` outcomes leads to its own chance node
  (probability ``1 / nk`` each); a joint move into a terminal state is a terminal entry.
* :func:`from_game_solution`: a :class:`~.solution.Solution` of ``dag_to_game``'s or
  ``game_to_dag``'s game as a :class:`~.dag_solution.DagSolution`, and
  :func:`to_game_solution` the way back for ``game_to_dag``'s DAGs (so each
  certificate can check the other path's solutions).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from solvers.errors import ValidationError
from solvers.simultaneous.dag import StateDag
from solvers.simultaneous.dag_solution import DagSolution, StrategyStore
from solvers.simultaneous.model import CHANCE, DECISION, TERMINAL, SimultaneousGame
from solvers.simultaneous.solution import Solution

MAX_DENOMINATOR = 1000


def _repeats(probs: np.ndarray, node: int) -> np.ndarray:
    """How often each outcome of a chance node is repeated so all are equally likely."""
    if np.all(np.abs(probs - probs[0]) <= 1e-12):
        return np.ones(len(probs), dtype=np.int64)
    fractions = [Fraction(float(p)).limit_denominator(MAX_DENOMINATOR) for p in probs]
    denominator = math.lcm(*(f.denominator for f in fractions))
    counts = np.array([int(f * denominator) for f in fractions], dtype=np.int64)
    if denominator > MAX_DENOMINATOR or np.abs(counts / denominator - probs).max() > 1e-12:
        raise ValidationError(f"chance node {node}: probabilities {probs.tolist()} are not "
                              f"multiples of 1/D for any D <= {MAX_DENOMINATOR}")
    return counts


def game_to_dag(game: SimultaneousGame) -> StateDag:
    """The game as a :class:`StateDag` (see the module docstring); node ``h`` is state ``h``."""
    n = game.num_nodes
    terminal = game.entry_child == TERMINAL
    pairs, payoff_id = np.unique(game.entry_payoff[terminal], axis=0, return_inverse=True)
    child = game.entry_child.astype(np.int64)
    child[terminal] = n + payoff_id.reshape(-1)
    repeat = np.ones(game.num_entries, dtype=np.int64)
    chance = np.flatnonzero(game.node_kind == CHANCE)
    nk = np.ones(n, dtype=np.int64)
    for node in chance.tolist():
        entries = game.entries(node)
        repeat[entries] = _repeats(game.entry_prob[entries], node)
        nk[node] = int(repeat[entries].sum())
    shape = np.where((game.node_kind == CHANCE)[:, None], 1, game.num_actions)
    s = n + len(pairs)
    n0, n1, nks = (np.zeros(s, dtype=np.uint16) for _ in range(3))
    n0[:n], n1[:n], nks[:n] = shape[:, 0], shape[:, 1], nk
    sizes = n0.astype(np.int64) * n1 * nks
    start = np.zeros(s + 1, dtype=np.int64)
    start[1:] = np.cumsum(sizes)
    payoff = np.zeros((s, 2))
    payoff[n:] = pairs
    dag = StateDag(n0=n0, n1=n1, nk=nks, entry_start=start,
                   entry_child=np.repeat(child, repeat).astype(np.int32), payoff=payoff,
                   root=game.root, player_names=game.player_names)
    dag.validate()
    return dag


def dag_to_game(dag: StateDag) -> tuple[SimultaneousGame, np.ndarray]:
    """(the DAG as a game, ``state_node`` [S]: each state's decision node, -1 if terminal)."""
    if dag.terminal[dag.root]:
        raise ValidationError("the root state is terminal: there is no game to play")
    nonterminal = np.flatnonzero(~dag.terminal)
    state_node = np.full(dag.num_states, TERMINAL, dtype=np.int64)
    state_node[nonterminal] = np.arange(nonterminal.size)
    cells = dag.n0[nonterminal].astype(np.int64) * dag.n1[nonterminal]
    cell_nk = np.repeat(dag.nk[nonterminal].astype(np.int64), cells)
    cell_first = np.cumsum(cell_nk) - cell_nk   # entries of non-terminal states, in order
    kid = dag.entry_child.astype(np.int64)
    entry_node = state_node[kid]                # -1: a terminal child
    entry_payoff = np.where((entry_node < 0)[:, None], dag.payoff[kid], 0.0)
    chance_cell = np.flatnonzero(cell_nk > 1)
    first_chance = nonterminal.size
    decision_child = entry_node[cell_first].copy()
    decision_child[chance_cell] = first_chance + np.arange(chance_cell.size)
    decision_payoff = entry_payoff[cell_first]
    decision_payoff[chance_cell] = 0.0
    chance_sizes = cell_nk[chance_cell]
    chance_entries = np.repeat(cell_first[chance_cell] - (np.cumsum(chance_sizes) - chance_sizes),
                               chance_sizes) + np.arange(int(chance_sizes.sum()))
    num_actions = np.concatenate([np.stack([dag.n0[nonterminal], dag.n1[nonterminal]], axis=1),
                                  np.stack([chance_sizes, np.ones_like(chance_sizes)], axis=1)])
    kind = np.concatenate([np.full(nonterminal.size, DECISION), np.full(chance_cell.size, CHANCE)])
    prob = np.concatenate([np.ones(cells.sum()), 1.0 / np.repeat(chance_sizes, chance_sizes)])
    game = SimultaneousGame.from_arrays(
        num_actions, np.concatenate([decision_child, entry_node[chance_entries]]),
        np.concatenate([decision_payoff, entry_payoff[chance_entries]]), node_kind=kind,
        entry_prob=prob, root=int(state_node[dag.root]), player_names=dag.player_names)
    return game, state_node


def from_game_solution(dag: StateDag, solution: Solution, state_node: np.ndarray) -> DagSolution:
    """A solution of the game of ``dag`` (``state_node``: each state's node, -1 for a
    terminal state) as a :class:`DagSolution`; a chance node's state plays ``(0, 0)``."""
    game = solution.game
    values = np.full((dag.num_states, 2), np.nan)
    solved = dag.terminal.copy()
    values[solved] = dag.payoff[solved]
    states = np.flatnonzero(state_node >= 0)
    nodes = state_node[states]
    keep = solution.solved[nodes]
    states, nodes = states[keep], nodes[keep]
    values[states] = solution.values[nodes]
    solved[states] = True
    store = StrategyStore(dag)
    chance = game.node_kind[nodes] == CHANCE
    one = np.ones((int(chance.sum()), 1))
    store.add(states[chance], one, one, np.zeros(int(chance.sum()), dtype=np.int8))
    states, nodes = states[~chance], nodes[~chance]
    codes = game.num_actions[nodes, 0].astype(np.int64) << 20 | game.num_actions[nodes, 1]
    for code in np.unique(codes):
        pick = codes == code
        m, n = int(code >> 20), int(code & 0xFFFFF)
        x = solution.strategy[0][game.action_start[0, nodes[pick]][:, None] + np.arange(m)]
        y = solution.strategy[1][game.action_start[1, nodes[pick]][:, None] + np.arange(n)]
        store.add(states[pick], x, y, solution.method[nodes[pick]])
    return store.result(solution.solver, solution.selection, values, solved,
                        solution.seconds, dict(solution.stats))


def to_game_solution(solution: DagSolution, game: SimultaneousGame) -> Solution:
    """A solution of ``game_to_dag(game)`` as a :class:`Solution` of ``game`` (node ``h`` is
    state ``h``), so the per-entry certificate can check it."""
    n = game.num_nodes
    decision = np.flatnonzero(game.node_kind == DECISION)
    strategy = []
    for p in (0, 1):
        counts = game.num_actions[decision, p].astype(np.int64)
        states = np.repeat(decision, counts)
        actions = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        strategy.append(solution.action_probability(states, p, actions))
    method = solution.method[:n].copy()
    method[game.node_kind == CHANCE] = -1
    return Solution(game=game, solver=solution.solver, selection=solution.selection,
                    strategy=(strategy[0], strategy[1]), values=solution.values[:n],
                    solved=solution.solved[:n], method=method, seconds=solution.seconds,
                    stats=dict(solution.stats))
