"""Bimatrix equilibria: the fast exact paths cross-checked against the LP and the MIP."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers.matrix import deviation_gain, pure_equilibria, solve_batch, solve_matrix
from solvers.matrix.equilibrium import CLOSED_FORM, LP, PURE, SUPPORT
from solvers.matrix.lp import maximin
from solvers.matrix.mip import solve_mip


def test_prisoners_dilemma():
    u0 = [[3, 0], [4, 1]]  # Figure 2.1, rows/cols (D, C)
    x, y, v, method = solve_matrix(u0, np.transpose(u0))
    assert method == "pure" and x.tolist() == [0, 1] and y.tolist() == [0, 1]
    assert v.tolist() == [1, 1]


def test_bach_or_stravinsky_selection():
    u0, u1 = [[2, 0], [0, 1]], [[1, 0], [0, 2]]
    assert pure_equilibria(u0, u1) == [(0, 0), (1, 1)]
    assert solve_matrix(u0, u1, "first")[2].tolist() == [2, 1]
    assert solve_matrix(u0, u1, "max1")[2].tolist() == [1, 2]
    assert solve_matrix(u0, u1, "min0")[2].tolist() == [1, 2]
    # over all equilibria the MIP finds the mixed one (2/3, 2/3) as the worst for player 0
    x, y = solve_mip(np.array(u0, float), np.array(u1, float), "min0")
    assert x @ np.array(u0) @ y == pytest.approx(2 / 3)


def test_figure_4_6_root_matrix():
    # propagated payoffs at the root of Figure 4.5: the baseline finds (b, L) = (3, 3)
    u = np.array([[[1, 2], [0, 0]], [[3, 3], [1, 2]]], float)
    x, y, v, _ = solve_matrix(u[..., 0], u[..., 1])
    assert x.tolist() == [0, 1] and y.tolist() == [1, 0] and v.tolist() == [3, 3]


def test_matching_pennies_closed_form():
    u0 = np.array([[1, -1], [-1, 1]], float)
    x, y, v, method = solve_matrix(u0, -u0)
    assert method == "closed form 2x2"
    assert np.allclose(x, 0.5) and np.allclose(y, 0.5) and np.allclose(v, 0)


def _random_games(rng, count, m, n, kind):
    if kind == "uniform":
        u0 = rng.uniform(-1, 1, (count, m, n))
        u1 = rng.uniform(-1, 1, (count, m, n))
    else:  # degenerate: few distinct integer payoffs, many ties
        u0 = rng.integers(0, 3, (count, m, n)).astype(float)
        u1 = rng.integers(0, 3, (count, m, n)).astype(float)
    return u0, u1


SHAPES = [(2, 2), (2, 3), (3, 2), (3, 3), (3, 4), (4, 4), (2, 5), (5, 5)]


@pytest.mark.parametrize("kind", ["uniform", "degenerate"])
def test_zero_sum_values_equal_the_lp(kind):
    rng = np.random.default_rng(7)
    checked = 0
    methods = set()
    for m, n in SHAPES + [(6, 7)]:  # 6x7: too many support pairs, the LP answers
        u0, _ = _random_games(rng, 100, m, n, kind)
        shift = 5.0 if kind == "degenerate" else 0.0  # constant-sum, not zero-sum
        sol = solve_batch(u0, shift - u0)
        methods |= set(sol.method.tolist())
        for g in range(len(u0)):
            _, value, _ = maximin(u0[g])
            assert sol.values[g, 0] == pytest.approx(value, abs=1e-8)
            assert sol.values[g, 1] == pytest.approx(shift - value, abs=1e-8)
            assert deviation_gain(u0[g], shift - u0[g], sol.x[g], sol.y[g]) <= 1e-9
            checked += 1
    assert checked == 900 and LP in methods


@pytest.mark.parametrize("kind", ["uniform", "degenerate"])
def test_general_sum_results_are_equilibria(kind):
    rng = np.random.default_rng(11)
    methods = set()
    for m, n in SHAPES:
        u0, u1 = _random_games(rng, 250, m, n, kind)
        for selection in ("first", "welfare", "min1"):
            sol = solve_batch(u0, u1, selection)
            methods |= set(sol.method.tolist())
            for g in range(len(u0)):
                assert deviation_gain(u0[g], u1[g], sol.x[g], sol.y[g]) <= 1e-9 * 3
    assert {PURE, CLOSED_FORM, SUPPORT} <= methods


@pytest.mark.parametrize(("selection", "expected"), [("first", "Lemke-Howson"),
                                                     ("welfare", "MIP"), ("max1", "MIP")])
def test_large_games_without_pure_equilibria(selection, expected):
    # 6x6 has too many support pairs to enumerate; a cyclic "who matches whom" game
    # has no pure equilibrium (and is general-sum), so Lemke-Howson (first) or the
    # MIP with the rule's objective answers
    u0 = np.eye(6) * 2.0
    u1 = np.roll(np.eye(6), 1, axis=1) + 0.5 * np.eye(6)[::-1]
    x, y, v, method = solve_matrix(u0, u1, selection)
    assert method == expected
    assert deviation_gain(u0, u1, x, y) <= 1e-9


@pytest.mark.parametrize("selection", ["welfare", "max0", "min1"])
def test_support_enumeration_optimum_equals_the_mip(selection):
    """Without pure equilibria, non-degenerate games: best enumerated == MIP optimum."""
    rng = np.random.default_rng(3)
    compared = 0
    for m, n in [(2, 2), (3, 3), (3, 4), (4, 4)]:
        u0, u1 = _random_games(rng, 400, m, n, "uniform")
        sol = solve_batch(u0, u1, selection)
        mixed = np.flatnonzero(sol.method != PURE)[:25]
        for g in mixed:
            x, y = solve_mip(u0[g], u1[g], selection)
            assert deviation_gain(u0[g], u1[g], x, y) <= 1e-6
            mine = {"welfare": sol.values[g].sum(), "max0": sol.values[g, 0],
                    "min1": -sol.values[g, 1]}[selection]
            theirs = {"welfare": x @ (u0[g] + u1[g]) @ y, "max0": x @ u0[g] @ y,
                      "min1": -(x @ u1[g] @ y)}[selection]
            assert mine == pytest.approx(theirs, abs=1e-6)
            compared += 1
    assert compared >= 80


def test_algorithm_2_picks_the_best_pure_equilibrium():
    rng = np.random.default_rng(5)
    u0, u1 = _random_games(rng, 300, 3, 3, "degenerate")
    for selection, key in [("max0", lambda a, b: a), ("min0", lambda a, b: -a),
                           ("welfare", lambda a, b: a + b)]:
        sol = solve_batch(u0, u1, selection)
        for g in range(len(u0)):
            pure = pure_equilibria(u0[g], u1[g])
            if pure:
                best = max(key(u0[g][e], u1[g][e]) for e in pure)
                assert key(*sol.values[g]) == best
                first = pure[0]
                assert solve_matrix(u0[g], u1[g])[2].tolist() == [u0[g][first], u1[g][first]]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.integers(1, 4), st.integers(1, 4), st.data())
def test_any_small_integer_game(m, n, data):
    cells = st.integers(-3, 3)
    u0 = np.array(data.draw(st.lists(cells, min_size=m * n, max_size=m * n)), float).reshape(m, n)
    u1 = np.array(data.draw(st.lists(cells, min_size=m * n, max_size=m * n)), float).reshape(m, n)
    x, y, v, _ = solve_matrix(u0, u1, data.draw(st.sampled_from(["first", "welfare", "max1"])))
    assert deviation_gain(u0, u1, x, y) <= 1e-9
    assert v == pytest.approx([x @ u0 @ y, x @ u1 @ y])


@pytest.mark.parametrize("kind", ["uniform", "degenerate"])
def test_single_game_path_matches_the_batch(kind):
    rng = np.random.default_rng(9)
    for m, n in [(2, 2), (3, 3), (2, 4), (4, 4)]:
        u0, u1 = _random_games(rng, 60, m, n, kind)
        for selection in ("first", "welfare", "min0"):
            batch = solve_batch(u0, u1, selection)
            for g in range(len(u0)):
                one = solve_batch(u0[g:g + 1], u1[g:g + 1], selection)
                # identical choices; mixed ones may differ in the last bit (other batch shapes)
                assert np.allclose(one.x[0], batch.x[g], rtol=0, atol=1e-12)
                assert np.allclose(one.y[0], batch.y[g], rtol=0, atol=1e-12)
                assert np.allclose(one.values[0], batch.values[g], rtol=0, atol=1e-12)


def test_lp_duals_are_the_column_players_strategy():
    rng = np.random.default_rng(13)
    for _ in range(60):
        m, n = rng.integers(2, 7, size=2)
        u0 = rng.uniform(-1, 1, (m, n))
        x, value, y = maximin(u0)
        assert deviation_gain(u0, -u0, x, y) <= 1e-7
        assert x @ u0 @ y == pytest.approx(value, abs=1e-7)
