"""Sequence-form linear program for two-player zero-sum (or constant-sum) games.

Koller, Megiddo & von Stengel, "Fast Algorithms for Finding Randomized Strategies in
Game Trees", STOC 1994; von Stengel, GEB 14 (1996). Solved exactly by HiGHS
(:mod:`.highs_run`: Ctrl-C, the deadline and progress lines reach it).

1. Sequence-form constraints per player: E x = e with x(empty) = 1 and, for every
   information set I, sum_a x(I,a) = x(parent sequence of I); F y = f likewise.
2. Payoff matrix A[s1, s2] = sum of chance(z) * u_1(z) over terminals z whose last
   sequences are s1 and s2 (sparse).
3. Player 2: min_{y,p} e^T p  s.t.  E^T p - A y >= 0, F y = f, y >= 0 (p free);
   player 1: max_{x,q} f^T q  s.t.  F^T q - A^T x <= 0, E x = e, x >= 0 (q free).
   Both optima equal the game value for player 1.
4. Behavioural strategies: sigma(I,a) = x(I,a) / x(parent of I), uniform where the
   information set is unreachable.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from solvers.errors import GameError, LimitReached, UnsupportedGame
from solvers.extensive.highs_run import LPInterrupted, run_lp
from solvers.extensive.model import ExtensiveGame
from solvers.extensive.sequence_form import SequenceForm


@dataclass(frozen=True)
class LPSolution:
    values: list[float]
    strategy: np.ndarray
    # simplex iterations HiGHS used for the two programs
    iterations: int


def _constraints(form: SequenceForm, player: int) -> tuple[sparse.csr_matrix, np.ndarray]:
    """(E, e) for ``player`` over its local sequences (0 = empty, then its actions)."""
    game = form.game
    sets, acts = form.player_infosets[player], form.player_actions[player]
    n_sets, n_seq = sets.stop - sets.start, acts.stop - acts.start + 1
    rows = [0]
    cols = [0]
    vals = [1.0]
    parent = _local(form, player, game.infoset_parent_seq[sets])
    rows += list(range(1, n_sets + 1))
    cols += parent.tolist()
    vals += [-1.0] * n_sets
    rows += (game.action_infoset[acts] - sets.start + 1).tolist()
    cols += list(range(1, n_seq))
    vals += [1.0] * (n_seq - 1)
    matrix = sparse.csr_matrix((vals, (rows, cols)), shape=(n_sets + 1, n_seq))
    rhs = np.zeros(n_sets + 1)
    rhs[0] = 1.0
    return matrix, rhs


def _one_player(game: ExtensiveGame) -> LPSolution:
    """A one-player game against chance (Monty Hall): the LP's optimum is the player's
    best response, computed exactly bottom-up with no program to solve."""
    game.require_perfect_recall("the sequence-form LP")
    form = SequenceForm(game)
    weights = form.terminal_weights(form.realization(form.uniform), 0)
    value, choice = form.best_response(0, weights)
    return LPSolution([float(value) + 0.0], form.normalise(choice), 0)


def _local(form: SequenceForm, player: int, seqs: np.ndarray) -> np.ndarray:
    """Global sequence ids of ``player`` -> local ids (0 = empty sequence)."""
    start = form.player_actions[player].start
    return np.where(seqs < form.P, 0, seqs - form.P - start + 1)


def solve_lp(game: ExtensiveGame, time_limit: float | None = None, *,
             deadline: float | None = None,
             progress: Callable[[str], None] | None = None) -> LPSolution:
    """Exact equilibrium of a two-player constant-sum game (values and behavioural profile).

    Both programs together stop at ``deadline`` (``time.monotonic()``), or ``time_limit``
    seconds from now, with :class:`LimitReached`; Ctrl-C stops them with
    :class:`~.highs_run.LPInterrupted`. Either message tells the game value when player 2's
    program was already solved.
    """
    if game.num_players == 1:
        return _one_player(game)
    if game.num_players != 2:
        raise UnsupportedGame(f"the sequence-form LP needs 2 players, not {game.num_players}")
    if not game.is_zero_sum():
        raise UnsupportedGame("the sequence-form LP needs a zero-sum or constant-sum game "
                              "(use --solver cfr for general-sum games)")
    game.require_perfect_recall("the sequence-form LP")
    if deadline is None and time_limit is not None:
        deadline = time.monotonic() + time_limit
    form = SequenceForm(game)
    E, e = _constraints(form, 0)
    F, f = _constraints(form, 1)
    n1, n2 = E.shape[1], F.shape[1]
    s1 = _local(form, 0, game.terminal_seq[0])
    s2 = _local(form, 1, game.terminal_seq[1])
    A = sparse.csr_matrix((game.terminal_chance * game.terminal_utility[:, 0], (s1, s2)),
                          shape=(n1, n2))
    total = float(game.terminal_utility[0].sum()) if len(game.terminal_nodes) else 0.0

    # player 2: variables (y, p)
    second = run_lp(np.concatenate([np.zeros(n2), e]), sparse.hstack([A, -E.T]), np.zeros(n1),
                    sparse.hstack([F, sparse.csr_matrix((F.shape[0], E.shape[0]))]), f,
                    n2, E.shape[0], "player 2's program", deadline, progress)
    v1 = second.objective
    # player 1: variables (x, q), maximise f^T q
    try:
        first = run_lp(np.concatenate([np.zeros(n1), -f]), sparse.hstack([-A.T, F.T]),
                       np.zeros(n2),
                       sparse.hstack([E, sparse.csr_matrix((E.shape[0], F.shape[0]))]), e,
                       n1, F.shape[0], "player 1's program", deadline, progress)
    except (LimitReached, LPInterrupted) as exc:
        known = f"the game value is {v1:.12g} (player 2's program is solved); "
        raise type(exc)(known + str(exc)) from None
    value = -first.objective
    if not np.isclose(value, v1, atol=1e-6 * max(1.0, abs(value))):
        raise GameError(f"the LP's two sides disagree ({value} vs {v1}): numerical trouble")
    plan = np.zeros(form.A)
    plan[form.player_actions[0]] = first.x[1:]
    plan[form.player_actions[1]] = second.x[1:]
    strategy = form.normalise(np.maximum(plan, 0.0))
    # "+ 0.0" turns a -0.0 from the solver into 0.0 for printing
    return LPSolution([value + 0.0, total - value + 0.0], strategy,
                      first.iterations + second.iterations)
