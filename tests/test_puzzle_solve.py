"""Puzzles (one role besides random), issue 30 item 1: the DAG solver and its
certificate on hand-built DAGs, hand-derivable games (tests/data/puzzles), a plain
brute force over the rules on corpus puzzles, plans replayed by the general engine
and the clingo oracle, the goal search, and bad input through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, shared_path

from gdl.budget import Budget
from gdl.reasoning.machine import load_machine
from gdl.reasoning.state_machine import State, StateMachine
from gdl.solving.puzzle_search import goal_ceiling, goal_search
from gdl.solving.puzzle_solve import solve_puzzle
from ggp_cli import main as ggp
from solvers.errors import UnsupportedGame
from solvers.nplayer.dag import JointDag
from solvers.nplayer.puzzle import solve
from solvers.nplayer.puzzle_certificate import check

PUZZLES = REPO / "tests" / "data" / "puzzles"


def dag_of(children: dict[int, list[list[int]]], goals: dict[int, float]) -> JointDag:
    """A one-player JointDag: ``children[s]`` lists each move's outcomes (nature's,
    equally likely; all moves of a state have as many), ``goals`` the terminal states."""
    n = len(children) + len(goals)
    counts = np.zeros((n, 1), dtype=np.uint16)
    nk = np.zeros(n, dtype=np.uint16)
    entries: list[int] = []
    sizes = np.zeros(n, dtype=np.int64)
    payoff = np.zeros((n, 1))
    for s in range(n):
        if s in goals:
            payoff[s, 0] = goals[s]
            continue
        counts[s, 0], nk[s] = len(children[s]), len(children[s][0])
        entries += [c for move in children[s] for c in move]
        sizes[s] = len(children[s]) * len(children[s][0])
    start = np.concatenate([[0], np.cumsum(sizes)])
    dag = JointDag(counts, nk, start, np.array(entries, dtype=np.int32), payoff, 0, ("p",))
    dag.validate()
    return dag


# ------------------------------------------------------------------ the DAG solver


def test_highest_value_then_fewest_steps() -> None:
    # 0: a -> 1 (50, ends), b -> 2; 2: a -> 4 -> 3 (100 in 2), b -> 3 (100 in 1)
    dag = dag_of({0: [[1], [2]], 2: [[4], [3]], 4: [[3]]}, {1: 50, 3: 100})
    solution = solve(dag)
    assert solution.values[:, 0].tolist() == [100, 50, 100, 100, 100]
    assert solution.steps.tolist() == [2, 0, 1, 0, 1]
    assert solution.strategy.tolist() == [0, 1, 0, 1, 1]    # b at 0, b at 2
    certificate = check(dag, solution)
    assert certificate["ok"] and certificate["plan_goal"] == 100 and certificate["plan_steps"] == 2


def test_equal_moves_go_to_the_first() -> None:
    dag = dag_of({0: [[1], [2]]}, {1: 70, 2: 70})
    assert solve(dag).strategy.tolist() == [1, 0]


def test_chance_expected_value_and_steps() -> None:
    # 0: one move, nature: 100 or state 2; 2: 40 whatever nature does, or 100 / 0 -> 50
    dag = dag_of({0: [[1, 2]], 2: [[3, 3], [4, 5]]}, {1: 100, 3: 40, 4: 100, 5: 0})
    solution = solve(dag)
    assert solution.values[0, 0] == pytest.approx(75.0)
    assert solution.steps[0] == pytest.approx(1.5)
    assert check(dag, solution)["ok"]


def test_certificate_catches_a_worse_move_and_a_wrong_value() -> None:
    dag = dag_of({0: [[1], [2]], 2: [[4], [3]], 4: [[3]]}, {1: 50, 3: 100})
    worse = solve(dag)
    worse.strategy[:2] = [1, 0]                 # 50 at the root
    worse.values[0, 0], worse.steps[0] = 50, 1
    found = check(dag, worse)
    assert not found["ok"] and found["max_gain"] == 50
    longer = solve(dag)
    longer.strategy[2:4] = [1, 0]               # 100 at state 2 in 2 steps, not 1
    longer.steps[2], longer.steps[0] = 2, 3
    found = check(dag, longer)
    assert not found["ok"] and found["steps_gain"] == 1
    wrong = solve(dag)
    wrong.values[2, 0] = 90
    assert check(dag, wrong)["value_error"] == 10


# ------------------------------------------------------------------ hand-derivable games


def test_hanoi_three_discs_in_seven_moves() -> None:
    result = solve_puzzle(PUZZLES / "hanoi3.kif")
    assert (result.value, result.steps, result.proved) == (100, 7, True)
    assert result.plan_kif() == ["(puton disc1 pillar3)", "(puton disc2 pillar2)",
                                 "(puton disc1 disc2)", "(puton disc3 pillar3)",
                                 "(puton disc1 pillar1)", "(puton disc2 disc3)",
                                 "(puton disc1 disc2)"]
    assert result.certificate["ok"]


def test_gamble_with_chance() -> None:
    result = solve_puzzle(PUZZLES / "gamble.kif")
    assert result.value == pytest.approx(75) and result.steps == pytest.approx(1.5)
    assert result.chance and result.plan is None
    lines = list(result.strategy_lines())
    assert [(line["node"], line["strategy"], line["values"], line["steps"]) for line in lines] \
        == [(["(stage first)"], {"player": {"gamble": 1.0}}, {"player": 75.0}, 1.5),
            (["(stage second)"], {"player": {"again": 1.0}}, {"player": 50.0}, 1.0)]
    assert result.root_strategy() == {"player": {"gamble": 1.0}}


def test_shortcut_takes_the_fewest_steps() -> None:
    result = solve_puzzle(PUZZLES / "shortcut.kif")
    assert (result.value, result.plan_kif()) == (100, ["(go short)", "walk"])


# ------------------------------------------------------------------ brute force


def brute_force(machine: StateMachine, state: State, memo: dict) -> tuple[float, int]:
    """(value, fewest steps to it) by plain depth-first recursion over the rules."""
    if state in memo:
        return memo[state]
    if machine.is_terminal(state):
        found = (float(machine.goals(state)[0]), 0)
    else:
        found = max(((v, -(s + 1)) for v, s in
                     (brute_force(machine, machine.next_state(state, (m,)), memo)
                      for m in machine.legal_moves(state, 0))))
        found = (found[0], -found[1])
    memo[state] = found
    return found


@pytest.mark.parametrize("name", ["maze", "hanoi", "blocks"])
def test_brute_force_agrees_on_corpus_puzzles(name: str) -> None:
    path = shared_path("gdl-corpus", "repository", f"{name}.kif")
    machine = load_machine(path, engine="general")
    sys.setrecursionlimit(10_000)
    value, steps = brute_force(machine, machine.initial_state(), {})
    result = solve_puzzle(path)
    assert (result.value, result.steps) == (value, steps)


# ------------------------------------------------------------------ replays


@pytest.mark.parametrize("name", ["hanoi3.kif", "shortcut.kif"])
def test_plan_replays_under_the_general_engine(name: str) -> None:
    result = solve_puzzle(PUZZLES / name)
    machine = load_machine(PUZZLES / name, engine="general")
    state = machine.initial_state()
    for move in result.plan_kif() or []:
        assert not machine.is_terminal(state)
        state = machine.next_state(state, [machine.parse_move(move, 0)])
    assert machine.is_terminal(state) and machine.goals(state)[0] == result.value


@pytest.mark.parametrize("path", [PUZZLES / "hanoi3.kif", "maze", "hanoi"],
                         ids=lambda p: Path(p).stem)
def test_plan_replays_under_the_clingo_oracle(path, tmp_path, capsys) -> None:
    pytest.importorskip("clingo")
    oracle = shared_path("oracle", "clingo_oracle.py")
    game = path if isinstance(path, Path) else shared_path("gdl-corpus", "repository",
                                                           f"{path}.kif")
    out = tmp_path / "plan.jsonl"
    assert ggp(["solve", str(game), "--strategy", str(out), "--json", "--quiet"]) == 0
    claimed = json.loads(capsys.readouterr().out)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    last = records[-1]
    assert last["terminal"] and last["moves"] == {} and len(records) == claimed["plan_length"] + 1
    assert last["goals"] == {r: [f"{v:g}"] for r, v in claimed["values"].items()}
    run = subprocess.run([sys.executable, str(oracle), str(game), str(out)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and f"checked {len(records)} steps, 0 mismatches" in run.stdout


# ------------------------------------------------------------------ the goal search


def test_goal_search_proves_hanoi() -> None:
    machine = load_machine(PUZZLES / "hanoi3.kif")
    found = goal_search(machine, 100.0, budget=Budget(max_states=10_000))
    assert found.proved and found.goal == 100
    state = machine.initial_state()
    for joint in found.plan:
        state = machine.next_state(state, joint)
    assert machine.is_terminal(state) and machine.goals(state)[0] == 100


def test_goal_search_stops_unproved_within_its_budget() -> None:
    path = PUZZLES / "lights.kif"
    result = solve_puzzle(path, "goal-search", budget=Budget(max_states=50))
    assert (result.value, result.proved, result.states) == (50, False, 50)
    assert "budget of 50 states" in result.certificate["search"]
    assert result.certificate["ok"]                 # the plan does reach 50
    exhausted = solve_puzzle(path, "goal-search")
    assert (exhausted.value, exhausted.proved) == (50, True)
    assert exhausted.ceiling == 100 == exhausted.to_json()["highest_goal"]


def test_goal_ceiling_from_grounded_goals() -> None:
    # queens' goal heads carry a variable: the grounded goal atoms give 100
    path = shared_path("gdl-corpus", "repository", "queens.kif")
    from gdl.reasoning.machine import read_rules
    rules, _ = read_rules(path)
    assert goal_ceiling(rules, load_machine(path), 0) == 100


def test_goal_search_refuses_chance() -> None:
    with pytest.raises(UnsupportedGame, match="random role"):
        goal_search(load_machine(PUZZLES / "gamble.kif"), 100.0)


def test_fallback_to_the_goal_search(capsys) -> None:
    assert ggp(["solve", str(PUZZLES / "hanoi3.kif"), "--max-states", "100", "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["solver"] == "goal-search" and out["proved"] and out["values"] == {"player": 100}
    assert "falling back to the goal search" in captured.err


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(("name", "code", "line"), [
    ("zero.kif", 2, "zero: no plan reaches a goal above 0 for player (value 0; the plan is "
     "the fewest steps to an end)"),
    ("no_goal_role.kif", 1, "error: role player has no goal values: no goal rule gives it "
     "a number"),
    ("cycle.kif", 1, "error: cycle: none of its 2 reachable states is terminal, so the game "
     "need not end"),
    ("endless.kif", 1, "error: endless: no terminal state reached within the budget: goal "
     "search stopped: the budget of 300 states was reached (raise --max-states)"),
])
def test_bad_input_gets_one_line(name: str, code: int, line: str, capsys) -> None:
    assert ggp(["solve", str(PUZZLES / name), "--quiet", "--max-states", "300"]) == code
    assert capsys.readouterr().err.strip().splitlines() == [line]


def test_a_cycle_is_reported_with_solver_plan(capsys) -> None:
    assert ggp(["solve", str(PUZZLES / "cycle.kif"), "--solver", "plan"]) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "error: the game's states form a cycle, so the game need not end; a repeated "
        "state: {(at a)}")


def test_puzzle_options_and_solvers_are_checked(capsys) -> None:
    hanoi = str(PUZZLES / "hanoi3.kif")
    assert ggp(["solve", hanoi, "--solver", "baseline"]) == 1
    assert "is a puzzle (one role): solve it with --solver plan or goal-search" \
        in capsys.readouterr().err
    assert ggp(["solve", hanoi, "--ray", "auto"]) == 1
    assert "--ray is not available for puzzles" in capsys.readouterr().err
    two = str(REPO / "tests" / "data" / "connectFour.kif")
    assert ggp(["solve", two, "--solver", "plan"]) == 1
    assert "--solver plan solves puzzles (one role)" in capsys.readouterr().err
