"""``ggp solve GAME.kif``: the JSON contract, strategy and solution files, clean errors."""

from __future__ import annotations

import json

import pytest

import ggp_cli
from gdl.reasoning.parser import parse_kif
from gdl.solving.store import find_solution

# Two rounds of matching pennies: the matcher scores when the coins match; goals are
# the matcher's share of the two rounds (0, 50, 100): value 50, both uniform.
PENNIES = """
(role matcher) (role mismatcher)
(init (round 0)) (init (score 0))
(succ 0 1) (succ 1 2)
(side heads) (side tails)
(<= (legal ?r (show ?s)) (role ?r) (side ?s))
(<= (next (round ?n)) (true (round ?m)) (succ ?m ?n))
(<= (next (score ?n)) (true (score ?m)) (succ ?m ?n)
    (does matcher (show ?s)) (does mismatcher (show ?s)))
(<= (next (score ?m)) (true (score ?m))
    (does matcher (show ?s)) (does mismatcher (show ?t)) (distinct ?s ?t))
(<= terminal (true (round 2)))
(<= (goal matcher 0) (true (score 0)))
(<= (goal matcher 50) (true (score 1)))
(<= (goal matcher 100) (true (score 2)))
(<= (goal mismatcher 100) (true (score 0)))
(<= (goal mismatcher 50) (true (score 1)))
(<= (goal mismatcher 0) (true (score 2)))
"""
THREE = "(role a) (role b) (role c) (init s) (<= (legal ?r go) (role ?r)) (<= terminal (true s))"


@pytest.fixture
def pennies(tmp_path):
    path = tmp_path / "pennies.kif"
    path.write_text(PENNIES)
    return path


@pytest.mark.parametrize("solver", ["baseline", "ih"])
def test_json_contract(pennies, capsys, solver) -> None:
    assert ggp_cli.main(["solve", str(pennies), "--solver", solver, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"solver", "values", "nodes", "seconds", "certificate", "states",
            "expand_seconds"} <= set(out)
    assert out["solver"] == solver
    assert out["values"] == {"matcher": 50.0, "mismatcher": 50.0}
    # states: the root, 2 after round 1, 3 terminal scores after round 2
    assert out["states"] == 6 and out["nodes"] == 3
    assert out["certificate"]["max_gain"] <= 1e-9
    assert out["constant_sum"] == 100.0


def test_strategy_file_and_saved_solution(pennies, tmp_path, capsys) -> None:
    strategy, saved = tmp_path / "s.jsonl", tmp_path / "solutions" / "pennies.jsonl.gz"
    saved.parent.mkdir()
    assert ggp_cli.main(["solve", str(pennies), "--strategy", str(strategy),
                         "--save", str(saved), "--quiet"]) == 0
    summary = capsys.readouterr().out
    assert "values matcher 50, mismatcher 50" in summary and "6 states" in summary
    lines = [json.loads(line) for line in strategy.read_text().splitlines()]
    assert len(lines) == 3
    root = lines[0]
    assert root["node"] == ["(round 0)", "(score 0)"]
    assert root["strategy"]["matcher"] == pytest.approx({"(show heads)": 0.5,
                                                           "(show tails)": 0.5})
    # the agent finds the solution from the same rules written differently
    rules = parse_kif(PENNIES.replace("?r", "?who"))
    solution = find_solution(saved.parent, rules)
    assert solution is not None and len(solution) == 3
    assert solution.strategy(["(score 0)", "(round 0)"]) == root["strategy"]
    assert solution.state_values(["(round 1)", "(score 1)"]) == {"matcher": 75.0,
                                                                 "mismatcher": 25.0}


def test_errors_are_one_line(tmp_path, pennies, capsys) -> None:
    three = tmp_path / "three.kif"
    three.write_text(THREE)
    assert ggp_cli.main(["solve", str(three)]) == 1     # the n-player path's check
    assert "role a has 0 goal values in state {s}" in capsys.readouterr().err
    assert ggp_cli.main(["solve", str(pennies), "--max-states", "3"]) == 1
    err = capsys.readouterr().err
    assert "budget of 3 states" in err and "Traceback" not in err
    assert ggp_cli.main(["solve", str(pennies), "--time-limit", "1e-6"]) == 1
    assert "time limit of 1e-06 s was reached" in capsys.readouterr().err
    assert ggp_cli.main(["solve", str(tmp_path / "missing.kif")]) == 1
    assert "cannot read" in capsys.readouterr().err
    assert ggp_cli.main(["solve", str(pennies), "--selection", "best"]) == 1
    assert "unknown equilibrium selection" in capsys.readouterr().err
    assert ggp_cli.main(["solve", str(pennies), "--solver", "cfr"]) == 2
    broken = tmp_path / "broken.kif"
    broken.write_text("(role a) (role b")
    assert ggp_cli.main(["solve", str(broken)]) == 1
    assert "broken.kif:1:" in capsys.readouterr().err


def test_solver_time_limit_is_reported(pennies, monkeypatch) -> None:
    import dataclasses

    from gdl.expansion.expand import expand
    from gdl.reasoning.machine import load_machine
    from gdl.solving.solve import solve_expansion
    from solvers import registry
    from solvers.errors import LimitReached

    def slow(*args, **kwargs):
        raise LimitReached("time limit reached after solving 1 of 3 nodes")

    monkeypatch.setitem(registry.SOLVERS, "baseline",
                        dataclasses.replace(registry.SOLVERS["baseline"], solve=slow))
    with pytest.raises(LimitReached, match=r"baseline stopped: time limit reached after "
                                           r"solving 1 of 3 nodes \(raise --time-limit\)"):
        solve_expansion(expand(load_machine(pennies)), "baseline", time_limit=1.0)


def test_outputs_into_missing_folders_are_created_and_reported(pennies, tmp_path, capsys) -> None:
    strategy = tmp_path / "new" / "deeper" / "s.jsonl"
    saved = tmp_path / "solutions" / "pennies.jsonl"
    assert ggp_cli.main(["solve", str(pennies), "--strategy", str(strategy), "--save",
                         str(saved), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert f"wrote the strategy to {strategy}" in err
    assert f"saved 3 states to {saved}" in err
    assert len(strategy.read_text().splitlines()) == 3
    assert find_solution(saved.parent, parse_kif(PENNIES)) is not None


@pytest.mark.parametrize("option", ["--save", "--strategy"])
def test_an_unwritable_output_fails_before_the_solve(pennies, tmp_path, capsys, monkeypatch,
                                                     option) -> None:
    from gdl.cli import solve as solve_cli

    def never(*args, **kwargs):
        raise AssertionError("the game was solved before the output was checked")

    monkeypatch.setattr(solve_cli, "solve_game", never)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for target, words in ((blocker / "out.jsonl", "cannot write there"),
                          (tmp_path, "is a folder")):
        assert ggp_cli.main(["solve", str(pennies), option, str(target)]) == 1
        captured = capsys.readouterr()
        assert captured.err.startswith(f"error: {option} {target}: {words}")
        assert captured.out == "" and len(captured.err.splitlines()) == 1
