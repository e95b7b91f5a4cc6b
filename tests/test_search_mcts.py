"""SM-MCTS and the exact endgame solver on small games with known values."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest
from test_search_games import (
    BIASED,
    ROSHAMBO,
    ChanceThenChoice,
    Lock,
    MatrixGame,
    ThreeTakeaway,
    TicTacToe,
)

from solvers.errors import LimitReached, UnsupportedGame
from solvers.search import MCTS, SearchConfig, solve_exact
from solvers.search.matrix_game import safe_best_response, solve_matrix_game


def play(game: TicTacToe, moves: list[str]) -> tuple:
    state = game.initial_state()
    for move in moves:
        joint = ["noop", "noop"]
        joint[state[1]] = move
        state = game.next_state(state, joint)
    return state


def test_matrix_game_lp_matches_closed_form() -> None:
    x, y, value = solve_matrix_game(np.array(BIASED, dtype=float))
    assert value == pytest.approx(300 / 7)
    assert x == pytest.approx([2 / 7, 5 / 7], abs=1e-7)
    assert y == pytest.approx([3 / 7, 4 / 7], abs=1e-7)  # 100 y0 = 20 y0 + 60 (1 - y0)


def test_matrix_game_saddle_point() -> None:
    x, y, value = solve_matrix_game(np.array([[30, 40], [10, 90]], dtype=float))
    assert value == 30 and list(x) == [1, 0] and list(y) == [1, 0]


def test_exact_tictactoe_is_a_draw() -> None:
    game = TicTacToe()
    result = solve_exact(game, game.initial_state())
    assert list(result.exact.value) == [50, 50]


def test_exact_three_player_maxn() -> None:
    game = ThreeTakeaway()
    result = solve_exact(game, game.initial_state())
    assert list(result.exact.value) == [50, 50, 0]
    assert list(result.exact.strategies[0]) == [0, 1]  # take 2


def test_exact_chance_averages() -> None:
    game = ChanceThenChoice()
    result = solve_exact(game, game.initial_state(), chance_roles=[0])
    assert list(result.exact.value) == [0, 50]


def test_exact_simultaneous_uses_the_lp() -> None:
    game = MatrixGame(BIASED)
    result = solve_exact(game, game.initial_state())
    assert result.exact.value[0] == pytest.approx(300 / 7)
    assert result.exact.strategies[1] == pytest.approx([3 / 7, 4 / 7], abs=1e-7)


def test_exact_limits() -> None:
    game = TicTacToe()
    with pytest.raises(LimitReached):
        solve_exact(game, game.initial_state(), node_budget=100)
    general_sum = MatrixGame([[10, 20], [30, 40]])
    general_sum.goals = lambda state: (10, 10) if state == (0, 0) else (0, 0)
    with pytest.raises(UnsupportedGame):
        solve_exact(general_sum, general_sum.initial_state())


class Corridor:
    """One player walks ``length`` steps (two ways each step) to a goal of 100."""

    roles = ("walker",)

    def __init__(self, length: int) -> None:
        self.length = length

    def initial_state(self) -> int:
        return 0

    def is_terminal(self, state: int) -> bool:
        return state >= self.length

    def legal_moves(self, state: int, role: int) -> tuple:
        return ("left", "right")

    def next_state(self, state: int, joint) -> int:
        return state + 1

    def goals(self, state: int) -> tuple[int]:
        return (100,)


def test_exact_solves_long_games_and_reports_too_deep_ones() -> None:
    # 5,000 moves deep: far past Python's default recursion limit of 1,000 frames
    solved = solve_exact(Corridor(5_000), 0)
    assert solved.exact.value.tolist() == [100.0] and solved.nodes == 5_000
    with pytest.raises(LimitReached, match="deeper than the recursion limit"):
        solve_exact(Corridor(60_000), 0)


class Loop(Corridor):
    """The walker can also stay where it is: the state graph has cycles."""

    def legal_moves(self, state: int, role: int) -> tuple:
        return ("stay", "step")

    def next_state(self, state: int, joint) -> int:
        return state + (joint[0] == "step")

    def goals(self, state: int) -> tuple[int]:
        return (0 if state >= self.length else 100,)  # never terminal before the end


def test_a_descent_never_goes_round_a_cycle() -> None:
    class Recorded(MCTS):
        def _back_up(self, path, reward, settled) -> None:
            nodes = [id(node) for node, _, _ in path]
            assert len(nodes) == len(set(nodes))  # each state once per descent
            super()._back_up(path, reward, settled)

    search = Recorded(Loop(6), SearchConfig(seed=3))
    result = search.search(0, playouts=400)
    assert result.playouts == 400 and result.value[0] == 0.0  # every line ends at 0
    assert search.nodes == 7


def test_uct_finds_the_winning_move_and_proves_it() -> None:
    game = TicTacToe()
    # x: 1 1, 1 2; o: 2 1, 2 2; x to move wins with (mark 1 3)
    state = play(game, ["(mark 1 1)", "(mark 2 1)", "(mark 1 2)", "(mark 2 2)"])
    result = MCTS(game, SearchConfig(seed=3)).search(state, playouts=2000)
    assert result.best_move(0) == "(mark 1 3)"
    assert result.proven and list(result.value) == [100, 0]
    assert result.best_move(1) == "noop"


def test_uct_blocks_the_threat() -> None:
    game = TicTacToe()
    # o must block x's row 1 at (mark 1 3)
    state = play(game, ["(mark 1 1)", "(mark 2 2)", "(mark 1 2)"])
    result = MCTS(game, SearchConfig(seed=1)).search(state, playouts=3000)
    assert result.best_move(1) == "(mark 1 3)"
    assert result.value[1] <= 50.0 + 1e-9  # o cannot win from here


def test_solver_proves_a_tictactoe_draw() -> None:
    game = TicTacToe()
    state = play(game, ["(mark 2 2)", "(mark 1 1)"])
    result = MCTS(game, SearchConfig(seed=0)).search(state, playouts=40000)
    assert result.proven and list(result.value) == [50, 50]
    assert result.playouts < 40000  # stopped early once proven


def test_rm_converges_to_the_mixed_equilibrium() -> None:
    game = MatrixGame(BIASED)
    search = MCTS(game, SearchConfig(simultaneous="rm", solver=False, seed=5))
    result = search.search(game.initial_state(), playouts=20000)
    assert result.strategy[0] == pytest.approx([2 / 7, 5 / 7], abs=0.06)
    assert result.strategy[1] == pytest.approx([3 / 7, 4 / 7], abs=0.06)
    assert result.value[0] == pytest.approx(300 / 7, abs=4)


def test_rm_on_roshambo_is_near_uniform_and_samples() -> None:
    game = MatrixGame(ROSHAMBO)
    result = MCTS(game, SearchConfig(simultaneous="rm", solver=False, seed=2)).search(
        (), playouts=10000)
    assert result.strategy[0] == pytest.approx([1 / 3] * 3, abs=0.06)
    rng = random.Random(0)
    assert {result.sample_move(0, rng) for _ in range(60)} == {"m0", "m1", "m2"}


def test_solver_backs_up_the_matrix_value() -> None:
    game = MatrixGame(BIASED)
    result = MCTS(game, SearchConfig(simultaneous="duct", seed=1)).search((), playouts=100)
    assert result.proven and result.value[0] == pytest.approx(300 / 7)


def test_puzzle_and_chance_and_three_players() -> None:
    lock = Lock()
    result = MCTS(lock, SearchConfig(seed=4)).search((), playouts=3000)
    assert result.best_move(0) == "(dial 2)" and result.proven and result.value[0] == 100
    coin = ChanceThenChoice()
    result = MCTS(coin, SearchConfig(seed=4), chance_roles=[0]).search((), playouts=200)
    assert result.proven and list(result.value) == [0, 50]
    takeaway = ThreeTakeaway()
    result = MCTS(takeaway, SearchConfig(seed=4)).search((4, 0), playouts=500)
    assert result.proven and result.best_move(0) == "(take 2)"


def test_anytime_deadline_and_determinism() -> None:
    game = TicTacToe()
    result = MCTS(game).search(game.initial_state(), deadline=time.monotonic() - 1)
    assert result.playouts == 0 and len(result.moves[0]) == 9
    runs = [MCTS(game, SearchConfig(seed=9)).search(game.initial_state(), playouts=300)
            for _ in range(2)]
    assert all(np.array_equal(a, b) for a, b in zip(*(r.visits for r in runs), strict=True))


def test_tree_is_reused_and_pruned() -> None:
    game = TicTacToe()
    search = MCTS(game, SearchConfig(seed=1, max_nodes=400, solver=False))
    search.search(game.initial_state(), playouts=1000)
    assert search.nodes <= 401
    later = play(game, ["(mark 2 2)"])
    search.search(later, playouts=10)
    assert search.nodes < 400  # only the subtree below the new root was kept
    with pytest.raises(ValueError):
        search.search(later)


def test_matrix_game_against_an_independent_check() -> None:
    rng = np.random.default_rng(4)
    for _ in range(30):
        payoff = rng.integers(0, 5, size=(rng.integers(1, 6), rng.integers(1, 6))) * 25.0
        x, y, value = solve_matrix_game(payoff)
        # certificate: neither player gains by deviating to any pure strategy
        assert (x @ payoff).min() >= value - 1e-6
        assert (payoff @ y).max() <= value + 1e-6
        assert x.sum() == pytest.approx(1) and y.sum() == pytest.approx(1)


def test_safe_best_response_exploits_only_within_the_value() -> None:
    # row 1 weakly dominates: both rows guarantee 50; against column 0 row 1 earns 70
    x = safe_best_response(np.array([[50.0, 50.0], [70.0, 50.0]]), 50.0, 0)
    assert x == pytest.approx([0, 1], abs=1e-7)
    # matching-pennies-like: the only safe strategy is the equilibrium itself
    x = safe_best_response(np.array(BIASED, dtype=float), 300 / 7, 0)
    assert x == pytest.approx([2 / 7, 5 / 7], abs=1e-6)
