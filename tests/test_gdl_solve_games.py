"""Solving GDL games offline: values and strategies checked by hand-derivable facts.

Simultaneous tic-tac-toe against ../shared/reference/VALUES.md; small corpus games
against symmetry, dominance and their known equilibria; every result certified.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from conftest import GAMES, shared_path
from scipy.optimize import linprog

from gdl.expansion.expand import Budget, expand
from gdl.reasoning.machine import load_machine
from gdl.solving.solve import solve_expansion, solve_game, strategy_lines
from solvers.errors import LimitReached

TICTACTOE = GAMES / "gdl" / "simultaneous_tictactoe.kif"
THESIS = GAMES / "gdl" / "simultaneous_tictactoe_thesis.kif"


def corpus(name: str):
    return shared_path("gdl-corpus", "repository", f"{name}.kif")


def root_strategies(result) -> dict[str, dict[str, float]]:
    lines = strategy_lines(result.expansion, result.solution)
    root = next(lines)
    assert root["node"] == result.expansion.node_facts(0)
    return root["strategy"]


def certified(result) -> bool:
    return result.certificate["ok"] and result.certificate["max_gain"] <= 1e-9


@pytest.fixture(scope="module")
def tictactoe():
    return expand(load_machine(TICTACTOE))


@pytest.fixture(scope="module")
def solved(tictactoe):
    return {solver: solve_expansion(tictactoe, solver) for solver in ("baseline", "ih")}


@pytest.mark.parametrize("solver", ["baseline", "ih"])
def test_simultaneous_tictactoe_is_a_draw(tictactoe, solved, solver) -> None:
    solution, check, _ = solved[solver]
    # VALUES.md: value 50 / 50 (constant-sum, 12,829 states, 7,950 non-terminal)
    assert solution.root_values == pytest.approx((50.0, 50.0), abs=1e-9)
    assert check["ok"] and check["max_gain"] <= 1e-9
    assert tictactoe.graph.n_states == 12_829
    if solver == "ih":   # a partial strategy: fewer states than the whole game
        assert 0 < solution.support().size < tictactoe.game.num_nodes


def test_symmetric_positions_have_mirrored_values(tictactoe, solved) -> None:
    solution = solved["baseline"][0]
    game = tictactoe.game
    children = game.entry_child[game.entries(0)].reshape(9, 9)
    # p0 in a corner and p1 in the centre, then the roles swapped: the board with x
    # and o exchanged, so the values are exchanged too
    a, b = solution.values[children[0, 4]], solution.values[children[4, 0]]
    assert a == pytest.approx(b[::-1], abs=1e-9)


LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def thesis_variant_reference(keeper_takes_last: bool = False) -> tuple[float, int]:
    """(p0's value, number of states) of section 5.1's variant, computed independently
    of GDL and of our solvers: the board rules written directly, backward induction
    with a saddle point or scipy's LP at each state (boards are 9-tuples of x/o/b).
    ``keeper_takes_last``: the other reading of the last blank cell (the keeper of
    the clash on it marks it) instead of a draw."""
    states = set()

    def outcome(board) -> float | None:
        x, o = (any(all(board[i] == m for i in line) for line in LINES) for m in "xo")
        if x != o:
            return 100.0 if x else 0.0
        return 50.0 if x or board.count("b") < (1 if keeper_takes_last else 2) else None

    def matrix_value(a: np.ndarray) -> float:
        if a.min(1).max() == a.max(0).min():
            return float(a.min(1).max())
        m, n = a.shape
        res = linprog(np.r_[np.zeros(m), -1.0], A_ub=np.hstack([-a.T, np.ones((n, 1))]),
                      b_ub=np.zeros(n), A_eq=np.r_[np.ones(m), 0.0][None], b_eq=[1.0],
                      bounds=[(0, None)] * m + [(None, None)], method="highs")
        return float(res.x[-1])

    def marked(board, cells) -> tuple:
        out = list(board)
        for cell, mark in cells:
            out[cell] = mark
        return tuple(out)

    @cache
    def value(board, keeper, clash) -> float:
        states.add((board, keeper, clash))
        end = outcome(board)
        if end is not None:
            return end
        blank = [i for i in range(9) if board[i] == "b"]
        if clash is None:
            return matrix_value(np.array([[value(board, keeper, i) if i == j else
                                           value(marked(board, [(i, "x"), (j, "o")]), keeper, None)
                                           for j in blank] for i in blank]))
        keep, pick = ("o", "x") if keeper == 1 else ("x", "o")
        options = [value(marked(board, [(clash, keep), (j, pick)]), 1 - keeper, None)
                   for j in blank if j != clash]
        if not options:   # the last cell: only the keeper marks
            return value(marked(board, [(clash, keep)]), 1 - keeper, None)
        return max(options) if keeper == 1 else min(options)   # the other player picks

    return value(tuple("b" * 9), 1, None), len(states)


def test_thesis_variant_favours_the_first_keeper() -> None:
    result = solve_game(THESIS, "baseline", path="model")
    assert certified(result)
    # p1 keeps his choice at the first clash; the value is unique (constant-sum)
    assert result.values() == {"p0": 37.5, "p1": 62.5}
    reference, states = thesis_variant_reference()
    assert reference == pytest.approx(37.5) and states == result.expansion.graph.n_states
    # the reading of the last blank cell does not change the value
    assert thesis_variant_reference(keeper_takes_last=True)[0] == pytest.approx(37.5)
    ih = solve_expansion(result.expansion, "ih")[0]
    assert ih.root_values == pytest.approx((37.5, 62.5), abs=1e-9)


@pytest.mark.parametrize("solver", ["baseline", "ih"])
def test_roshambo2_is_rock_paper_scissors_with_a_dominated_rock(solver) -> None:
    result = solve_game(corpus("roshambo2"), solver, path="model")
    assert certified(result)
    assert result.values() == {"white": 50.0, "black": 50.0}     # symmetric game
    for role, strategy in root_strategies(result).items():
        # well beats rock and scissors, so rock is dominated; paper > well >
        # scissors > paper is a cycle: uniform, as in rock-paper-scissors
        assert "rock" not in strategy, role
        assert strategy == pytest.approx({"paper": 1 / 3, "scissors": 1 / 3, "well": 1 / 3})


@pytest.mark.parametrize("solver", ["baseline", "ih"])
def test_prisoners_dilemma_defects_in_every_round(solver) -> None:
    result = solve_game(corpus("gt_prisoner"), solver, path="model")
    assert certified(result)
    assert result.expansion.graph.constant_sum is None
    # defect strictly dominates in each round and the score adds up: 20 x (1, 1)
    assert result.values() == {"white": 20.0, "black": 20.0}
    for line in strategy_lines(result.expansion, result.solution):
        assert line["strategy"] == {"white": {"defect": 1.0}, "black": {"defect": 1.0}}


def test_chicken_equilibrium_follows_the_selection_rule() -> None:
    first = solve_game(corpus("gt_chicken"), "baseline", path="model")
    assert certified(first)
    # moves sorted by KIF: straight, swerve. The first pure equilibrium in row-major
    # order is (straight, swerve), played in all 20 rounds: 20 x (5, 3)
    assert first.values() == {"white": 100.0, "black": 60.0}
    assert root_strategies(first) == {"white": {"straight": 1.0}, "black": {"swerve": 1.0}}
    # the best equilibrium for black is the mirror image
    mirrored = solve_game(corpus("gt_chicken"), "baseline", selection="max1", path="model")
    assert certified(mirrored)
    assert mirrored.values() == {"white": 60.0, "black": 100.0}
    ih = solve_expansion(first.expansion, "ih")[0]
    assert ih.root_values == pytest.approx((100.0, 60.0))


def test_blocker_endgame_subgame() -> None:
    """A blocker endgame: the crosser holds (1 2) (2 2) (3 2) and three cells of row 4
    are open, each completing his bridge. Different cells: the crosser wins; the
    same cell: it is blocked and the last two cells are matching pennies (50).
    So the root is 100 off the diagonal and 50 on it: both uniform, value 250/3."""
    machine = load_machine(corpus("blocker"))
    facts = []
    for x in range(1, 5):
        for y in range(1, 5):
            mark = "crosser" if (y == 2 and x < 4) else "b" if x == 4 and y < 4 else "blk"
            facts.append(f"(cell {x} {y} {mark})")
    expansion = expand(machine, root=machine.state_from_kif(facts))
    for solver in ("baseline", "ih"):
        solution, check, _ = solve_expansion(expansion, solver)
        assert check["ok"]
        assert solution.root_values == pytest.approx((250 / 3, 100 - 250 / 3))
        for player in (0, 1):
            assert solution.node_strategy(0, player) == pytest.approx([1 / 3] * 3)


def test_whole_blocker_game_does_not_fit_a_small_budget() -> None:
    with pytest.raises(LimitReached, match="budget of 2,000 states"):
        solve_game(corpus("blocker"), "ih", budget=Budget(max_states=2_000), path="model")


def test_turn_based_tictactoe_expands_through_noop_sides() -> None:
    result = solve_game(corpus("ticTacToe"), "baseline", path="model")
    # the 5,478 legal positions of tic-tac-toe; perfect play draws
    assert result.expansion.graph.n_states == 5_478
    assert result.values() == {"xplayer": 50.0, "oplayer": 50.0}
    assert result.expansion.game.shape(0) == (9, 1)      # oplayer's noop
    assert certified(result)


def test_centipede_ends_at_once() -> None:
    """Backward induction in the centipede game: continuing costs the mover 1 and
    gives the other 3, who then ends the game; so every mover finishes at once."""
    result = solve_game(corpus("gt_centipede"), "baseline", path="model")
    assert certified(result)
    assert result.values() == {"white": 5.0, "black": 0.0}
    for line in strategy_lines(result.expansion, result.solution):
        mover = "white" if "(control white)" in line["node"] else "black"
        assert line["strategy"][mover] == {"finish": 1.0}
