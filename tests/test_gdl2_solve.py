"""Solving GDL-II games exactly: expansion into an extensive-form game, ``ggp solve
GAME.kif --solver cfr|cfr+|dcfr|mccfr|lp`` and ``ggp convert``, with the games' known
values (../shared/reference/VALUES.md: Kuhn -1/18 chips, Leduc -0.0856064240780)."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from conftest import GAMES, shared_path

import ggp_cli
from gdl.gdl2.solve import solve_gdl2
from gdl.gdl2.tree import expand_gdl2, infoset_name
from gdl.reasoning.machine import load_machine
from solvers.errors import GameError, LimitReached
from solvers.extensive.efg_format import read_efg
from solvers.extensive.exploitability import nash_conv
from solvers.extensive.solve import solve
from solvers.extensive.strategy_io import strategy_dict
from solvers.extensive.tree_format import read_tree

GDL2 = GAMES / "gdl2"
KUHN_VALUE = 50 + 25 * Fraction(-1, 18)           # 48.6111: goal = 50 + 25 x chips
LEDUC_VALUE = 50 + 3 * -0.0856064240780            # goal = 50 + 3 x chips
MONTY_VALUE = Fraction(200, 3)                      # the car (100) two times in three


def run_json(capsys, argv: list[str]) -> dict:
    assert ggp_cli.main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_kuhn_lp_value_is_the_textbook_value_under_the_goal_map(capsys) -> None:
    out = run_json(capsys, ["solve", str(GDL2 / "kuhn_poker.kif"), "--solver", "lp", "--json"])
    assert out["solver"] == "lp"
    assert out["values"]["first"] == pytest.approx(float(KUHN_VALUE), abs=1e-9)
    assert out["values"]["second"] == pytest.approx(100 - float(KUHN_VALUE), abs=1e-9)
    assert out["nash_conv"] < 1e-9
    # the extensive form of Kuhn: 1 deal, 6 x 9 betting nodes; 6 + 6 information sets
    assert (out["nodes"], out["infosets"]) == (55, 12)
    assert out["root_strategy"] == {}  # each player's first move depends on its card


def test_kuhn_cfr_plus_reaches_a_thousandth_of_the_payoff_range(capsys) -> None:
    out = run_json(capsys, ["solve", str(GDL2 / "kuhn_poker.kif"), "--solver", "cfr+",
                            "--iterations", "100", "--json"])
    assert out["nash_conv"] < 1e-3 * 100  # goals span 0..100
    out = run_json(capsys, ["solve", str(GDL2 / "kuhn_poker.kif"), "--solver", "cfr+",
                            "--iterations", "1000", "--json"])
    # OpenSpiel's CFR+ on Kuhn after 1000 iterations: 0.000175 chips (x 25 here)
    assert out["nash_conv"] < 25 * 0.000175 * 1.01
    assert out["values"]["first"] == pytest.approx(float(KUHN_VALUE), abs=1e-3)


@pytest.mark.parametrize(("solver", "gap"), [("cfr", 0.1), ("dcfr", 0.1), ("mccfr", 2.0)])
def test_every_extensive_solver_takes_a_gdl2_game(capsys, solver: str, gap: float) -> None:
    out = run_json(capsys, ["solve", str(GDL2 / "kuhn_poker.kif"), "--solver", solver,
                            "--iterations", "2000", "--json"])
    assert out["solver"] == solver and out["nash_conv"] < gap
    assert out["values"]["first"] == pytest.approx(float(KUHN_VALUE), abs=gap)


def test_monty_hall_is_solved_at_two_thirds_by_switching(capsys, tmp_path) -> None:
    strategy = tmp_path / "monty.txt"
    out = run_json(capsys, ["solve", str(GDL2 / "monty_hall.kif"), "--solver", "lp", "--json",
                            "--strategy", str(strategy)])
    assert out["values"] == {"contestant": pytest.approx(float(MONTY_VALUE), abs=1e-9)}
    assert out["nash_conv"] == pytest.approx(0, abs=1e-9)
    lines = [line for line in strategy.read_text().splitlines() if "switch=" in line]
    assert len(lines) == 6  # 3 picks x 2 doors the host may open
    assert all("switch=1 " in line or line.endswith("switch=1") for line in lines)
    cfr = run_json(capsys, ["solve", str(GDL2 / "monty_hall.kif"), "--json"])  # cfr+
    assert cfr["solver"] == "cfr+"
    assert cfr["values"]["contestant"] == pytest.approx(float(MONTY_VALUE), abs=1e-3)


@pytest.mark.parametrize("engine", ["general", "compiled"])
def test_leduc_lp_value_equals_the_efg_leduc(engine: str) -> None:
    game = expand_gdl2(load_machine(GDL2 / "leduc_holdem.kif", engine=engine))
    assert game.perfect_recall and game.num_infosets == 288  # 2 x 144, as in Leduc
    result = solve(game, "lp")
    assert result.values[0] == pytest.approx(LEDUC_VALUE, abs=1e-7)
    efg = read_efg(shared_path("efg", "leduc_from_course.efg"))
    assert 50 + 3 * solve(efg, "lp").values[0] == pytest.approx(result.values[0], abs=1e-7)


def test_infoset_names_are_each_roles_own_history() -> None:
    game = expand_gdl2(load_machine(GDL2 / "kuhn_poker.kif"))
    sigma = strategy_dict(game, solve(game, "lp").strategy)
    # the first player's opening with the king: its own deal step, then bet or check
    king = infoset_name("first", [("noop", ("(your_card king)",))])
    assert set(sigma[king]) == {"bet", "check"}
    # second facing a bet with the jack folds in every equilibrium
    jack = infoset_name("second", [("noop", ("(your_card jack)",)),
                                   ("noop", ("(did first bet)",))])
    assert sigma[jack]["fold"] == pytest.approx(1)
    assert all(name.startswith(("first: ", "second: ")) for name in sigma)


@pytest.mark.parametrize("fmt", ["efg", "tree"])
def test_convert_writes_a_game_our_readers_solve_to_the_same_value(capsys, tmp_path,
                                                                   fmt: str) -> None:
    out = tmp_path / f"kuhn.{'efg' if fmt == 'efg' else 'txt'}"
    assert ggp_cli.main(["convert", str(GDL2 / "kuhn_poker.kif"), "--to", fmt, str(out)]) == 0
    assert "wrote 55 nodes" in capsys.readouterr().err
    game = read_efg(out) if fmt == "efg" else read_tree(out.read_text())
    assert (game.num_nodes, game.num_infosets) == (55, 12)
    assert solve(game, "lp").values[0] == pytest.approx(float(KUHN_VALUE), abs=1e-9)
    again = run_json(capsys, ["solve", str(out), "--solver", "lp", "--json"])
    assert list(again["values"].values())[0] == pytest.approx(float(KUHN_VALUE), abs=1e-9)


def test_convert_output_is_read_by_pygambit(tmp_path) -> None:
    gambit = pytest.importorskip("pygambit")
    out = tmp_path / "kuhn.efg"
    assert ggp_cli.main(["convert", str(GDL2 / "kuhn_poker.kif"), "--to", "efg", str(out)]) == 0
    game = gambit.read_efg(str(out))
    result = gambit.nash.lp_solve(game, rational=True)
    profile = result.equilibria[0]
    first = list(game.players)[0]   # (pygambit 16.7 indexes players by label only)
    assert profile.payoff(first) == KUHN_VALUE


def test_node_budget_and_deadline_stop_the_expansion_cleanly() -> None:
    machine = load_machine(GDL2 / "krieg_tictactoe.kif")
    with pytest.raises(LimitReached, match="more than 1,000 nodes"):
        expand_gdl2(machine, max_nodes=1000)
    with pytest.raises(LimitReached, match="time limit"):
        expand_gdl2(machine, deadline=0.0)


def test_bad_input_gives_one_line_and_a_non_zero_exit(capsys, tmp_path) -> None:
    kuhn = str(GDL2 / "kuhn_poker.kif")
    assert ggp_cli.main(["solve", str(GDL2 / "krieg_tictactoe.kif"), "--max-nodes", "500"]) == 1
    assert ggp_cli.main(["solve", kuhn, "--solver", "baseline"]) == 1
    assert ggp_cli.main(["convert", str(GAMES / "gdl" / "goofspiel_2.kif"), "--to", "efg",
                         str(tmp_path / "g.efg")]) == 1
    assert ggp_cli.main(["convert", kuhn, "--to", "efg", str(tmp_path)]) == 1  # a folder
    errors = capsys.readouterr().err.strip().splitlines()
    assert [line.split(":")[0] for line in errors] == ["error"] * 4
    # a GDL game given a GDL-II solver: a usage error (exit 2), as any unknown solver
    assert ggp_cli.main(["solve", str(GAMES / "gdl" / "goofspiel_2.kif"), "--solver", "lp"]) == 2
    assert "not a GDL-II game" in capsys.readouterr().err
    assert "more than 500 nodes" in errors[0] and "--solver cfr" in errors[1]
    assert "not a GDL-II game" in errors[2] and "is a folder" in errors[3]


def test_legal_moves_that_depend_on_hidden_information_are_refused() -> None:
    rules = """(role p) (role random)
    (init (step 0))
    (<= (legal random (hide ?x)) (true (step 0)) (side ?x))
    (<= (legal p noop) (true (step 0)))
    (<= (legal random noop) (true (step 1)))
    (<= (legal p (pick ?x)) (true (step 1)) (true (hidden ?y)) (side ?x) (distinct ?x ?y))
    (<= (next (hidden ?x)) (does random (hide ?x)))
    (<= (next (step 1)) (true (step 0)))
    (<= (next (step 2)) (true (step 1)))
    (<= (sees p nothing) (true (step 0)))
    (<= terminal (true (step 2)))
    (<= (goal p 50) (true (step 2)))
    (side a) (side b) (side c)"""
    with pytest.raises(GameError, match="cannot tell apart states where its legal moves differ"):
        expand_gdl2(load_machine(rules))


def test_an_efg_and_gdl2_kuhn_share_the_equilibrium_value() -> None:
    efg = read_efg(shared_path("efg", "kuhn_from_course.efg"))
    gdl2 = expand_gdl2(load_machine(GDL2 / "kuhn_poker.kif"))
    value = solve(efg, "lp").values[0]
    assert value == pytest.approx(-1 / 18, abs=1e-9)
    strategy = solve(gdl2, "lp").strategy
    assert nash_conv(gdl2, strategy).values[0] == pytest.approx(50 + 25 * value, abs=1e-9)


def test_a_player_looks_its_move_up_by_its_own_history() -> None:
    solution = solve_gdl2(load_machine(GDL2 / "kuhn_poker.kif"), solver="lp")
    assert solution.values["first"] == pytest.approx(float(KUHN_VALUE), abs=1e-9)
    dealt = ("noop", ["(your_card jack)"])
    assert solution.move_probabilities("second", [dealt, ("noop", ["(did first bet)"])]) == \
        {"call": pytest.approx(0), "fold": pytest.approx(1)}
    king = solution.move_probabilities("second", [("noop", ["(your_card king)"]),
                                                  ("noop", ["(did first check)"])])
    assert king == {"bet": pytest.approx(1), "check": pytest.approx(0)}  # always bet the king
    assert solution.move_probabilities("second", [dealt]) is None  # a forced noop
    monty = solve_gdl2(load_machine(GDL2 / "monty_hall.kif"), solver="cfr+", iterations=200)
    assert monty.move_probabilities("contestant", [("(choose 2)", []), ("noop", ["(opened 1)"])]
                                    )["switch"] > 0.99
