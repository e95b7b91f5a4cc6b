"""The .efg form of Definition 4.1.9: export, import, pygambit, the command line, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import shared_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ggp_cli import main as ggp
from solvers.errors import GameError, UnsupportedGame
from solvers.extensive.efg_format import read_efg
from solvers.simultaneous import baseline, interval_heuristic
from solvers.simultaneous.efg_export import efg_text, tree_size
from solvers.simultaneous.efg_import import from_extensive, read_simultaneous_efg
from solvers.simultaneous.model import SimultaneousGameBuilder
from solvers.simultaneous.random_games import full_game, variable_game


def round_trip(game):
    return from_extensive(read_efg(efg_text(game)))


@pytest.mark.parametrize("make", [full_game, variable_game])
def test_round_trip_keeps_the_game(make):
    for seed in range(5):
        game = make(3, 2, seed)
        back = round_trip(game)
        assert back.num_nodes == game.num_nodes
        def payoffs(g):
            return np.sort(g.entry_payoff[g.entry_child < 0], axis=0)
        assert np.array_equal(payoffs(back), payoffs(game))  # floats survive exactly
        assert baseline.solve(back).root_values == baseline.solve(game).root_values


def test_dag_and_chance_unfold():
    b = SimultaneousGameBuilder(("row", "col"))
    leaf = b.add_node(1, 2)
    b.set_entries(leaf, [[-1, -1]], [[(1, 0), (0, 1)]])
    coin = b.add_chance([0.5, 0.5], labels=("H", "T"))
    b.set_child(coin, 0, 0, leaf)
    b.set_terminal(coin, 1, 0, (0.25, 0.75))
    root = b.add_node(2, 1, ("x", "y"))
    b.set_child(root, 0, 0, leaf)
    b.set_child(root, 1, 0, coin)
    game = b.build(root=root)
    assert tree_size(game) == 3 + (2 + 2) + (1 + (2 + 2) + 1)
    back = round_trip(game)
    assert back.num_nodes == 4  # the shared leaf is written twice
    assert back.player_names == ("row", "col")
    assert baseline.solve(back).root_values == pytest.approx(baseline.solve(game).root_values)


def test_zero_sum_root_value_equals_pygambit_lp(tmp_path):
    gbt = pytest.importorskip("pygambit")
    for a, d, full in [(2, 2, True), (3, 1, True), (2, 3, False), (3, 2, False)]:
        for seed in range(3):
            game = (full_game if full else variable_game)(a, d, seed, zero_sum=True)
            path = tmp_path / f"g{a}{d}{seed}.efg"
            path.write_text(efg_text(game))
            peer = gbt.read_efg(str(path))
            eq = gbt.nash.lp_solve(peer, rational=False).equilibria[0]
            theirs = float(eq.payoff(list(peer.players)[0]))
            for solve in (baseline.solve, interval_heuristic.solve):
                assert solve(game).root_values[0] == pytest.approx(theirs, abs=1e-9)


def test_rock_paper_superscissors_is_simultaneous():
    game = read_simultaneous_efg(shared_path("efg", "rpss_from_course.efg"))
    assert game.num_nodes == 1
    assert baseline.solve(game).root_values == pytest.approx((0, 0), abs=1e-12)  # VALUES.md


def test_other_files_are_refused_clearly():
    path = shared_path("efg", "kuhn_from_course.efg")
    with pytest.raises(UnsupportedGame, match="not a simultaneous-move game"):
        read_simultaneous_efg(path)


def test_cli_random_game_and_solve(tmp_path, capsys):
    out = tmp_path / "g.efg"
    assert ggp(["random-game", "--actions", "2", "--depth", "3", "--full", "--zero-sum",
                "--seed", "2", "--out", str(out)]) == 0
    capsys.readouterr()
    strategy = tmp_path / "s.jsonl"
    assert ggp(["solve", str(out), "--solver", "ih", "--json", "--strategy", str(strategy)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) == {"solver", "values", "root_strategy", "nodes", "seconds",
                           "certificate"}
    assert result["solver"] == "ih" and result["nodes"] == 85
    assert result["certificate"]["max_gain"] <= 1e-9
    expected = baseline.solve(full_game(2, 3, 2, zero_sum=True)).root_values
    assert list(result["values"].values()) == pytest.approx(list(expected))
    lines = [json.loads(line) for line in strategy.read_text().splitlines()]
    assert lines[0]["node"] == "/" and set(lines[0]) == {"node", "strategy", "values"}
    root = lines[0]["strategy"]["player 0"]
    assert set(root) == {"a1", "a2"} and sum(root.values()) == pytest.approx(1)


BAD_FILES = {
    "malformed": 'EFG 2 R "x" { "A" "B" }\n""\np "" 1 1 "" { "a" } 0\nt "" 1 "" { 1 2 \n',
    "not simultaneous": 'EFG 2 R "x" { "A" "B" }\n""\np "" 1 1 "" { "a" "b" } 0\n'
                        't "" 1 "" { 1, 2 }\nt "" 2 "" { 3, 4 }\n',
    "three players": 'EFG 2 R "x" { "A" "B" "C" }\n""\nt "" 1 "" { 1, 2, 3 }\n',
    "nan payoff": 'EFG 2 R "x" { "A" "B" }\n""\np "" 1 1 "" { "a" } 0\n'
                  'p "" 2 1 "" { "b" } 0\nt "" 1 "" { nan, 1 }\n',
    "empty actions": 'EFG 2 R "x" { "A" "B" }\n""\np "" 1 1 "" { } 0\n',
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_files_give_one_line_errors(name, tmp_path, capsys):
    path = tmp_path / "bad.efg"
    path.write_text(BAD_FILES[name])
    assert ggp(["solve", str(path), "--solver", "baseline"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err


def test_node_budget_at_the_cli(tmp_path, capsys):
    path = tmp_path / "g.efg"
    assert ggp(["random-game", "--actions", "2", "--depth", "3", "--full", "--seed", "1",
                "--out", str(path)]) == 0
    assert ggp(["solve", str(path), "--solver", "ih", "--max-nodes", "20"]) == 1
    assert "budget" in capsys.readouterr().err


VALID = efg_text(variable_game(2, 2, 3))


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(VALID) - 1), st.integers(1, 8), st.text(max_size=6))
def test_fuzzed_files_never_crash(start, length, insert):
    text = VALID[:start] + insert + VALID[start + length:]
    try:
        game = from_extensive(read_efg(text))
    except GameError:
        return
    assert baseline.solve(game).solved.all()


@pytest.mark.parametrize("a, d", [(2, 1), (2, 4), (3, 2), (3, 3)])
def test_lemma_4_1_11_node_counts(a, d):
    game = full_game(a, d, 0)
    assert game.num_nodes == ((a * a) ** (d + 1) - 1) // (a * a - 1)
    assert tree_size(game) == (a ** (2 * d + 3) - 1) // (a - 1)
