"""The native interval heuristic on the StateDag against today's (the conversion path).

Today's IH is :func:`interval_heuristic.solve` on ``dag_to_game(dag)``, mapped back with
``from_game_solution``. The native one (``solve_dag(dag, "ih")``) must solve the same
states, give the same values (within 1e-9), keep the same pure strategies, and be
certified by the DAG certificate; random DAGs with nature (constant- and general-sum,
all selection rules), the thesis' examples, and GDL games expanded by the batched
expansion (``../shared``'s corpus skipped cleanly when absent).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from conftest import GAMES
from test_simultaneous_dag import corpus
from test_simultaneous_solvers import bos_with_book, figure_4_7, figure_4_12

from gdl.bench.level import ih_today, peak_bytes
from gdl.expansion.batch_expand import expand_dag
from gdl.reasoning.machine import load_machine
from solvers.errors import LimitReached
from solvers.matrix.selection import SELECTIONS
from solvers.simultaneous import dag_certificate, dag_ih
from solvers.simultaneous.dag import StateDag
from solvers.simultaneous.dag_convert import game_to_dag
from solvers.simultaneous.dag_solve import solve_dag
from solvers.simultaneous.random_games import full_game, random_dag, variable_game


def same_as_today(dag: StateDag, selection: str = "first"):
    """Assert parity with today's IH and the certificate; return (today's, native)."""
    old = ih_today(dag, selection)
    new = solve_dag(dag, "ih", selection)
    assert np.array_equal(new.solved, old.solved)
    solved = old.solved
    assert np.abs(new.values[solved] - old.values[solved]).max() <= 1e-9
    assert np.isnan(new.values[~solved]).all()
    # pure strategies are found by the same code in the same order: the same actions,
    # and the same states mixed (constant-sum ones may keep another optimal strategy)
    assert np.array_equal(new.pure, old.pure)
    assert np.array_equal(new.mixed_states, old.mixed_states)
    cert = dag_certificate.check(dag, new)
    assert cert["ok"], cert
    assert cert["unsolved_reached"] == 0
    return old, new


# ---------------------------------------------------------------- random games
@pytest.mark.parametrize("zero_sum", [True, False])
def test_random_dags_with_nature(zero_sum) -> None:
    for seed in range(25):
        dag = random_dag(4, 5, 20, seed, zero_sum=zero_sum, outcomes=1 + seed % 3)
        same_as_today(dag)


@pytest.mark.parametrize("zero_sum", [True, False])
def test_random_games_as_dags(zero_sum) -> None:
    for seed in range(10):
        same_as_today(game_to_dag(variable_game(4, 3, seed, zero_sum=zero_sum)))
        same_as_today(game_to_dag(full_game(3, 3, seed, zero_sum=zero_sum)))


@pytest.mark.parametrize("selection", SELECTIONS)
def test_selection_rules_on_general_sum_dags(selection) -> None:
    for seed in range(6):
        same_as_today(random_dag(3, 4, 10, seed, outcomes=2), selection)
        same_as_today(game_to_dag(variable_game(3, 3, seed)), selection)


def test_thesis_examples() -> None:
    for make in (bos_with_book, figure_4_7, figure_4_12):
        same_as_today(game_to_dag(make()))
    # Example 4.1.22: IH keeps (1, 1) where the baseline's first SPE pays (2, 1)
    _, new = same_as_today(game_to_dag(bos_with_book()))
    assert new.root_values == (1, 1)


def test_partial_strategy_skips_states() -> None:
    """IH's point: it leaves states unsolved, and deviations into them are bounded."""
    dag = random_dag(4, 6, 200, 1, zero_sum=True)
    old, new = same_as_today(dag)
    assert 0 < new.solved[~dag.terminal].sum() < (~dag.terminal).sum() // 4
    assert new.stats["pure"] > 0


# ---------------------------------------------------------------- limits and memory
def test_time_limit_gives_a_partial_solution() -> None:
    dag = random_dag(4, 6, 200, 2, zero_sum=True, outcomes=2)
    with pytest.raises(LimitReached, match="time limit") as caught:
        solve_dag(dag, "ih", time_limit=0.0)
    partial = caught.value.partial
    assert partial.solver == "ih" and not partial.solved[dag.root]
    with pytest.raises(LimitReached, match="over the budget"):
        solve_dag(dag, "ih", memory_mb=0.01)
    seen: list[tuple[int, int]] = []
    solution = solve_dag(dag, "ih", progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (int((solution.solved & ~dag.terminal).sum()), int((~dag.terminal).sum()))


def test_memory_per_state_is_the_dags_not_the_conversions() -> None:
    dag = random_dag(4, 10, 3000, 0, zero_sum=True)      # 33,001 states, 169,000 entries
    new = peak_bytes(lambda: dag_ih.solve(dag))
    old = peak_bytes(lambda: ih_today(dag))
    per_state = new / dag.num_states
    # intervals 32, heights 4, pivot 4, values 16, pure 4, method 1, solved 1, scratch 1,
    # the level order while computing intervals, and one chunk's entry arrays
    assert per_state <= dag_ih.IH_BYTES_PER_STATE + 60 * dag.num_entries / dag.num_states
    assert new * 3 < old


# ---------------------------------------------------------------- GDL games
@cache
def expanded_dag(path: str) -> StateDag:
    return expand_dag(load_machine(path)).dag


@pytest.mark.parametrize("name", ["roshambo2", "ticTicToe", "gt_chicken", "gt_prisoner", "gt_tinfoil"])
def test_corpus_games(name) -> None:
    same_as_today(expanded_dag(corpus(name)))


def test_corpus_values() -> None:
    _, new = same_as_today(expanded_dag(corpus("roshambo2")))
    assert new.root_values == pytest.approx((50.0, 50.0))


@pytest.mark.parametrize("kif", ["simultaneous_tictactoe", "simultaneous_tictactoe_thesis"])
def test_simultaneous_tictactoe(kif) -> None:
    _, new = same_as_today(expanded_dag(str(GAMES / "gdl" / f"{kif}.kif")))
    # VALUES.md and docs/solving-gdl.md
    expected = (50.0, 50.0) if kif == "simultaneous_tictactoe" else (37.5, 62.5)
    assert new.root_values == pytest.approx(expected, abs=1e-9)


@pytest.mark.slow
def test_chickentictactoe() -> None:
    same_as_today(expanded_dag(corpus("chickentictactoe")))
