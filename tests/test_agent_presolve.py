"""The agent's exact solves on the scale path: the start-clock pre-solve, the endgame
solve and stored compact solutions, checked against the per-state exact search."""

from __future__ import annotations

import time

import numpy as np
import pytest
from conftest import shared_path

import ggp_cli
from agent.brains.gdl import GdlBrain
from agent.brains.options import BrainOptions, GameSpec
from solvers.search import solve_exact


def brain(name: str, **options) -> GdlBrain:
    text = shared_path("gdl-corpus", "repository", f"{name}.kif").read_text()
    return GdlBrain(GameSpec("gdl", text, name), "xplayer", BrainOptions(seed=1, **options))


def test_presolve_fills_the_exact_table_with_the_baselines_values() -> None:
    player = brain("chickentictactoe")
    report = player._baseline_presolve(time.monotonic() + 60, time.monotonic() + 60)
    assert report == "baseline: solved, 11093 states"   # the non-terminal states
    assert player.solution is None
    # chickentictactoe: value 40.4512 for xplayer (docs/solving-gdl.md's corpus table)
    assert player.exact[player.state] == pytest.approx([40.451179733, 59.548820267])
    some = list(player.exact)[5000]
    assert player.exact[some] == pytest.approx(
        solve_exact(player.machine, some, table={}).exact.value, abs=1e-9)


def test_a_presolve_over_the_table_budget_is_kept_as_a_compact_solution() -> None:
    player = brain("chickentictactoe", presolve_nodes=1_000)
    info = player.metagame(time.monotonic() + 60)
    assert info["presolve"] == "baseline: solved, 11,093 states (compact)"
    assert "playouts" not in info   # the solution plays: no tree is built on the start clock
    assert not player.exact and player.solution.bound   # read by the engine's int state
    assert player.solution.values_at(player.state) == pytest.approx(
        {"xplayer": 40.451179733, "oplayer": 59.548820267})
    machine, rng, state = player.machine, np.random.default_rng(5), player.state
    for _ in range(3):   # deeper states: the values of the per-state exact search
        legal = [machine.legal_moves(state, r) for r in range(2)]
        state = machine.next_state(state, [m[rng.integers(len(m))] for m in legal])
        exact = solve_exact(machine, state, table={}).exact.value
        assert list(player.solution.values_at(state).values()) == pytest.approx(exact, abs=1e-9)
    move, played = player.select(time.monotonic() + 5)
    assert played["method"] == "solution" and played["value"] == pytest.approx(40.451179733)
    assert player.solution.strategy_at(player.state)["xplayer"][move] > 0


def test_endgame_on_the_scale_path_equals_the_exact_search() -> None:
    import solvers.simultaneous.dag_solve  # noqa: F401  (as the start clock imports it)

    player = brain("chickentictactoe")
    rng = np.random.default_rng(3)
    machine = player.machine
    for _ in range(2):
        legal = [machine.legal_moves(player.state, r) for r in range(2)]
        player.advance([machine.move_to_kif(m[rng.integers(len(m))]) for m in legal])
    assert player._dag_endgame(time.monotonic() + 60, 100_000)
    reference: dict = {}
    solved = solve_exact(machine, player.state, table=reference)
    assert player.exact[player.state] == pytest.approx(solved.exact.value, abs=1e-9)
    assert set(reference) - set(player.exact) <= {s for s in reference if machine.is_terminal(s)}
    assert not player._dag_endgame(time.monotonic() + 60, 100_000)   # already solved


def test_the_agent_plays_a_stored_npz_solution_by_int_state(tmp_path) -> None:
    path = shared_path("gdl-corpus", "repository", "chickentictactoe.kif")
    assert ggp_cli.main(["solve", str(path), "--quiet", "--save",
                         str(tmp_path / "chicken.npz")]) == 0
    player = brain("chickentictactoe", solutions=str(tmp_path))
    assert player.solution is not None and player.solution.bound
    move, info = player.select(time.monotonic() + 5)
    assert info["method"] == "solution" and info["value"] == pytest.approx(40.451179733)


@pytest.mark.parametrize("ponder", [True, False])
def test_a_forced_move_ponders_until_its_answer_is_due(ponder: bool) -> None:
    # ticTacToe's oplayer has only noop at step 1: with "ponder" it searches xplayer's
    # choice until the answer is due, and the tree is the next move's start
    text = shared_path("gdl-corpus", "repository", "ticTacToe.kif").read_text()
    enhancements = ("mast", "gibbs", "solver", "reuse", "timing") + (("ponder",) if ponder else ())
    player = GdlBrain(GameSpec("gdl", text, "ticTacToe"), "oplayer",
                      BrainOptions(seed=1, enhancements=enhancements))
    move, info = player.select(time.monotonic() + 0.3)
    assert move == "noop" and info["method"] == "forced"
    if not ponder:
        assert "playouts" not in info and player.search.nodes == 0
        return
    assert info["playouts"] > 100
    root = player.search._table[player.state]
    assert sum(root.visits[0]) == root.count > 100   # xplayer's nine marks were searched
    player.advance(["(mark 2 2)", "noop"])
    assert player.search._table[player.state].count > 0   # the reply starts from there
