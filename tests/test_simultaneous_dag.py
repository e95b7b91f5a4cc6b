"""The compact model's solvers against today's: same values, both certificates agree.

Every game here is solved by the old path (:mod:`solvers.simultaneous.baseline` and
``interval_heuristic`` on a ``SimultaneousGame``) and by the new one (``solve_dag`` on
a ``StateDag``): random games and DAGs with nature, the thesis' examples, corpus GDL
games and simultaneous tic-tac-toe (VALUES.md).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from conftest import GAMES, shared_path
from test_simultaneous_solvers import bos_with_book, figure_4_7, figure_4_12

from gdl.expansion.expand import expand
from gdl.reasoning.machine import load_machine
from solvers.errors import GameError, LimitReached
from solvers.matrix import compiled, solve_batch
from solvers.matrix.block_lp import solve_block_lp
from solvers.matrix.dominance import eliminate_dominated
from solvers.matrix.level_batch import solve_level_batch, solve_level_groups
from solvers.matrix.lp import maximin
from solvers.matrix.selection import SELECTIONS
from solvers.simultaneous import baseline, certificate, dag_certificate, interval_heuristic
from solvers.simultaneous.dag import StateDag
from solvers.simultaneous.dag_convert import (
    dag_to_game,
    from_game_solution,
    game_to_dag,
    to_game_solution,
)
from solvers.simultaneous.dag_solve import solve_dag
from solvers.simultaneous.model import SimultaneousGame, SimultaneousGameBuilder
from solvers.simultaneous.random_games import full_game, random_dag, variable_game

OLD = {"baseline": baseline.solve, "ih": interval_heuristic.solve}


def compare(game: SimultaneousGame, solver: str, selection: str = "first"):
    """Solve ``game`` both ways; assert equal values and both certificates on both."""
    old = OLD[solver](game, selection)
    dag = game_to_dag(game)
    new = solve_dag(dag, solver, selection)
    n = game.num_nodes
    assert np.array_equal(new.solved[:n], old.solved)
    assert np.abs(new.values[:n][old.solved] - old.values[old.solved]).max() <= 1e-9
    new_cert = dag_certificate.check(dag, new)
    assert new_cert["ok"], new_cert
    assert certificate.check(game, to_game_solution(new, game))["ok"]
    assert certificate.check(game, old)["ok"]
    return old, new, new_cert



@pytest.fixture(params=["compiled simplex", "block LP"])
def lp_path(request, monkeypatch) -> str:
    """The level solver's LP step both ways: the compiled simplex on every call, or
    HiGHS' block LP with the per-shape reductions."""
    if request.param == "compiled simplex":
        if not compiled.SIMPLEX.enabled:
            pytest.skip("numba is not installed (or GGP_NUMBA=0)")
        monkeypatch.setattr(compiled, "MIN_GAMES", 0)
    else:
        monkeypatch.setattr(compiled.SIMPLEX, "enabled", False)
    return request.param


# ---------------------------------------------------------------- matrix games
def test_dominance_removes_exactly_the_dominated_actions() -> None:
    # row 1 is dominated by row 0; column 2 by column 0 (player 1 minimises u0); the
    # 2x2 left, rows (3, 1) and (0, 2), has no dominated action
    u0 = np.array([[[3.0, 1.0, 4.0], [2.0, 0.0, 3.0], [0.0, 2.0, 1.0]]])
    rows, cols = eliminate_dominated(u0, -u0, np.full(1, 1e-9))
    assert rows.tolist() == [[True, False, True]] and cols.tolist() == [[True, True, False]]
    # iterated: row 1 (2, 0) is dominated only once column 2 (where it pays 5) is gone
    u0 = np.array([[[3.0, 1.0, 4.0], [2.0, 0.0, 5.0], [0.0, 2.0, 1.0]]])
    rows, cols = eliminate_dominated(u0, -u0, np.full(1, 1e-9))
    assert rows.tolist() == [[True, False, True]] and cols.tolist() == [[True, True, False]]
    # rock-paper-scissors has no dominated action
    rps = np.array([[[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]]])
    rows, cols = eliminate_dominated(rps, -rps, np.full(1, 1e-9))
    assert rows.all() and cols.all()


@pytest.mark.parametrize("shape", [(2, 3), (4, 4), (5, 5), (7, 3), (9, 9)])
def test_block_lp_equals_per_game_lp(shape) -> None:
    rng = np.random.default_rng(sum(shape))
    u = rng.uniform(-1.0, 1.0, (100, *shape))
    x, y = solve_block_lp(u, np.ones((100, shape[0]), bool), np.ones((100, shape[1]), bool),
                          block_games=32)
    value = np.einsum("bi,bij,bj->b", x, u, y)
    assert value == pytest.approx([maximin(a)[1] for a in u], abs=1e-9)
    # (x, y) is an equilibrium: no pure deviation pays
    assert (np.einsum("bij,bj->bi", u, y).max(axis=1) - value).max() <= 1e-9
    assert (value - np.einsum("bi,bij->bj", x, u).min(axis=1)).max() <= 1e-9


@pytest.mark.parametrize("shape", [(1, 4), (2, 3), (4, 4), (5, 5), (7, 3), (9, 9)])
def test_compiled_simplex_equals_per_game_lp(shape) -> None:
    pytest.importorskip("numba")
    from solvers.matrix.simplex_kernels import solve_zero_sum_batch

    rng = np.random.default_rng(sum(shape))
    # uniform payoffs, and small integers: ties, degenerate games, pure saddle points
    for u in (rng.uniform(-1.0, 1.0, (100, *shape)), rng.integers(0, 3, (100, *shape)) * 50.0):
        rows, cols = np.ones((100, shape[0]), bool), np.ones((100, shape[1]), bool)
        if shape[0] > 1:
            rows[::3, 0] = False     # some games restricted to their alive actions
        x, y, gain = solve_zero_sum_batch(u, rows, cols)
        assert gain.max() <= 1e-12
        assert (x[~rows] == 0).all() and (y[~cols] == 0).all()
        value = np.einsum("bi,bij,bj->b", x, u, y)
        assert value == pytest.approx([maximin(a[r][:, c])[1] for a, r, c in zip(u, rows, cols, strict=True)],
                                      abs=1e-9)
        # (x, y) is an equilibrium of the alive game: no pure deviation pays
        alive_rows = np.where(rows, np.einsum("bij,bj->bi", u, y), -np.inf)
        assert (alive_rows.max(axis=1) - value).max() <= 1e-9
        assert (value - np.einsum("bi,bij->bj", x, u).min(axis=1)).max() <= 1e-9


@pytest.mark.parametrize("selection", SELECTIONS)
@pytest.mark.parametrize("shape", [(2, 2), (3, 3), (3, 5), (6, 6)])
def test_level_batch_values_equal_solve_batch(shape, selection, lp_path) -> None:
    rng = np.random.default_rng(7)
    u0 = rng.integers(0, 4, (60, *shape)).astype(float)   # ties: several equilibria
    for u1 in (10.0 - u0, rng.integers(0, 4, (60, *shape)).astype(float)):
        new = solve_level_batch(u0, u1, selection)
        old = solve_batch(u0, u1, selection)
        assert np.abs(new.values - old.values).max() <= 1e-9
        pure = old.method == 0
        # where a pure equilibrium is kept it is the same one
        assert np.array_equal(new.x[pure], old.x[pure]) and np.array_equal(new.y[pure], old.y[pure])


def test_level_groups_pool_shapes_with_dominated_actions(lp_path) -> None:
    rng = np.random.default_rng(3)
    stacks = []
    for shape in [(2, 5), (4, 4), (6, 3), (7, 7)]:
        u0 = rng.integers(0, 9, (40, *shape)).astype(float)
        u0[:, 0] = u0[:, -1] + 1.0        # row 0 strictly dominates the last row
        stacks.append((u0, 100.0 - u0))
    for (u0, _), sol in zip(stacks, solve_level_groups(stacks), strict=True):
        assert sol.values[:, 0] == pytest.approx([maximin(a)[1] for a in u0], abs=1e-9)
        assert (sol.x[:, -1] == 0).all()  # never plays a dominated row
        assert np.allclose(sol.values.sum(axis=1), 100.0)


# ---------------------------------------------------------------- random games
@pytest.mark.parametrize("solver", ["baseline", "ih"])
@pytest.mark.parametrize("zero_sum", [True, False])
def test_random_games_equal_the_old_path(solver, zero_sum, lp_path) -> None:
    for seed in range(5):
        compare(variable_game(4, 3, seed, zero_sum=zero_sum), solver)
        compare(full_game(3, 2, seed, zero_sum=zero_sum), solver)


@pytest.mark.parametrize("solver", ["baseline", "ih"])
@pytest.mark.parametrize("zero_sum", [True, False])
def test_random_dags_with_nature_equal_the_old_path(solver, zero_sum) -> None:
    for seed in range(5):
        dag = random_dag(4, 4, 12, seed, zero_sum=zero_sum, outcomes=3)
        game, state_node = dag_to_game(dag)
        old = OLD[solver](game)
        new = solve_dag(dag, solver)
        states = np.flatnonzero(state_node >= 0)
        solved = old.solved[state_node[states]]
        assert np.array_equal(new.solved[states], solved)
        gap = np.abs(new.values[states[solved]] - old.values[state_node[states[solved]]])
        assert gap.max() <= 1e-9, seed
        assert dag_certificate.check(dag, new)["ok"] and certificate.check(game, old)["ok"]
        # the converted game, with its chance nodes, back through game_to_dag
        compare(game, solver)


def test_selection_rules_on_general_sum_games() -> None:
    for selection in SELECTIONS:
        for seed in range(3):
            compare(variable_game(3, 3, seed), "baseline", selection)


def test_thesis_examples() -> None:
    for make in (bos_with_book, figure_4_7, figure_4_12):
        for solver in ("baseline", "ih"):
            compare(make(), solver)
    # Example 4.1.22: the first SPE pays (2, 1), the best for player 1 (1, 2); IH (1, 1)
    assert compare(bos_with_book(), "baseline")[1].root_values == (2, 1)
    assert compare(bos_with_book(), "baseline", "max1")[1].root_values == (1, 2)
    assert compare(bos_with_book(), "ih")[1].root_values == (1, 1)


def test_unequal_chance_probabilities_repeat_outcomes() -> None:
    b = SimultaneousGameBuilder()
    coin = b.add_chance([0.25, 0.75])
    b.set_terminal(coin, 0, 0, (4, -4))
    b.set_terminal(coin, 1, 0, (0, 0))
    root = b.add_node(1, 2)
    b.set_child(root, 0, 0, coin)
    b.set_terminal(root, 0, 1, (2, -2))
    game = b.build(root=root)
    dag = game_to_dag(game)
    assert int(dag.nk[coin]) == 4   # 1/4, 3/4: one outcome once, the other three times
    _, new, _ = compare(game, "baseline")
    assert new.values[coin].tolist() == [1.0, -1.0] and new.root_values == (1.0, -1.0)
    b2 = SimultaneousGameBuilder()
    odd = b2.add_chance([1 / np.pi, 1 - 1 / np.pi])
    b2.set_terminal(odd, 0, 0, (1, 1))
    b2.set_terminal(odd, 1, 0, (0, 0))
    with pytest.raises(GameError, match="multiples of 1/D"):
        game_to_dag(b2.build(root=odd))


# ---------------------------------------------------------------- certificates
def test_certificates_agree_on_a_wrong_strategy() -> None:
    for seed in range(6):
        game = variable_game(4, 3, seed, zero_sum=seed % 2 == 0)
        dag = game_to_dag(game)
        new = solve_dag(dag)
        wrong = to_game_solution(new, game)
        node = int(np.flatnonzero(game.num_actions[:, 0] >= 2)[0])
        start = int(game.action_start[0, node])
        wrong.strategy[0][start:start + 2] = [0.5, 0.5]      # not an equilibrium any more
        wrong.strategy[0][start + 2:int(game.action_start[0, node + 1])] = 0.0
        old_cert = certificate.check(game, wrong)
        identity = np.where(np.arange(dag.num_states) < game.num_nodes, np.arange(dag.num_states), -1)
        new_cert = dag_certificate.check(dag, from_game_solution(dag, wrong, identity))
        for key in ("max_gain", "value_error", "strategy_error"):
            assert new_cert[key] == pytest.approx(old_cert[key], abs=1e-12), (seed, key)
        assert new_cert["ok"] == old_cert["ok"]


# ---------------------------------------------------------------- limits and memory
def test_limits_and_memory() -> None:
    dag = game_to_dag(full_game(2, 4, 0, zero_sum=True))
    with pytest.raises(LimitReached, match="over the budget"):
        solve_dag(dag, memory_mb=0.05)
    with pytest.raises(LimitReached, match="over the budget"):
        solve_dag(dag, "ih", memory_mb=0.05)
    with pytest.raises(LimitReached) as caught:
        solve_dag(dag, time_limit=0.0)
    partial = caught.value.partial
    assert 0 < partial.solved.sum() < dag.num_states
    assert dag_certificate.check(dag, partial)["max_gain"] <= 1e-12
    with pytest.raises(GameError, match="unknown solver"):
        solve_dag(dag, "cfr")
    bad = game_to_dag(full_game(2, 1, 0))
    bad.entry_child[0] = bad.num_states
    with pytest.raises(GameError, match="does not exist"):
        solve_dag(bad)
    bad.entry_child[0] = bad.root        # the root is its own child: a cycle
    with pytest.raises(GameError, match="cycle"):
        solve_dag(bad)
    one_sided = StateDag(n0=np.array([3, 0], np.uint16), n1=np.zeros(2, np.uint16),
                         nk=np.ones(2, np.uint16), entry_start=np.zeros(3, np.int64),
                         entry_child=np.zeros(0, np.int32), payoff=np.zeros((2, 2)))
    with pytest.raises(GameError, match="nature has none"):
        solve_dag(one_sided)
    seen: list[tuple[int, int]] = []
    solution = solve_dag(dag, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1][0] == seen[-1][1] == int((~dag.terminal).sum())
    # values 16, pure actions 4, method 1, solved 1; 2x2 mixed states add 56 each
    mixed = solution.mixed_states.size
    assert solution.nbytes() <= 22 * dag.num_states + 56 * mixed + 64


# ---------------------------------------------------------------- GDL games
@cache
def expanded(path: str) -> SimultaneousGame:
    return expand(load_machine(path)).game


def corpus(name: str) -> str:
    return str(shared_path("gdl-corpus", "repository", f"{name}.kif"))


@pytest.mark.parametrize("name", ["roshambo2", "ticTicToe", "gt_chicken", "gt_prisoner", "gt_tinfoil"])
@pytest.mark.parametrize("solver", ["baseline", "ih"])
def test_corpus_games_equal_the_old_path(name, solver) -> None:
    compare(expanded(corpus(name)), solver)


def test_corpus_values() -> None:
    roshambo = compare(expanded(corpus("roshambo2")), "baseline")[1]
    assert roshambo.root_values == pytest.approx((50.0, 50.0))
    chicken = expanded(corpus("gt_chicken"))
    assert compare(chicken, "baseline")[1].root_values == (100.0, 60.0)
    assert compare(chicken, "baseline", "max1")[1].root_values == (60.0, 100.0)


@pytest.mark.parametrize("solver", ["baseline", "ih"])
def test_simultaneous_tictactoe_values(solver) -> None:
    game = expanded(str(GAMES / "gdl" / "simultaneous_tictactoe.kif"))
    _, new, cert = compare(game, solver)
    # VALUES.md: 50 / 50, 7,950 non-terminal states
    assert new.root_values == pytest.approx((50.0, 50.0), abs=1e-9)
    assert game.num_nodes == 7_950 and cert["max_gain"] <= 1e-9


@pytest.mark.parametrize("solver", ["baseline", "ih"])
def test_thesis_variant_values(solver) -> None:
    game = expanded(str(GAMES / "gdl" / "simultaneous_tictactoe_thesis.kif"))
    # docs/solving-gdl.md: 37.5 / 62.5 by both solvers (SWI-Prolog oracle's state count)
    assert compare(game, solver)[1].root_values == pytest.approx((37.5, 62.5), abs=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["baseline", "ih"])
def test_chickentictactoe_equals_the_old_path(solver) -> None:
    game = expanded(corpus("chickentictactoe"))
    _, new, cert = compare(game, solver)
    assert cert["max_gain"] <= 1e-9
    if solver == "baseline":
        assert new.stats["LP"] > 1000


@pytest.mark.slow
def test_bench_level_quick_certifies_both_paths(capsys) -> None:
    from gdl.bench import level as level_bench
    assert level_bench.main(["--quick", "--scale-width", "300"]) == 0
    out = capsys.readouterr().out
    assert "simultaneous_tictactoe" in out and "certificates: all ok" in out
