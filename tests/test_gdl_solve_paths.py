"""``ggp solve``'s two paths agree, the compact ``--save`` format round-trips, budgets stop cleanly.

The DAG path (batched expansion, level-batched solve, DAG certificate) against the
per-entry reference path: the same values at every state (an equilibrium may differ
where a state has several), certified; the ``.npz`` file gives the same strategies
and values as the JSON-lines file of the same solution.
"""

from __future__ import annotations

import json

import pytest
from conftest import GAMES, shared_path

import ggp_cli
from gdl.solving.solve import solve_game
from gdl.solving.store import find_solution, load_solution
from gdl.solving.store_npz import NpzSolution

TICTACTOE = GAMES / "gdl" / "simultaneous_tictactoe.kif"


def corpus(name: str):
    return shared_path("gdl-corpus", "repository", f"{name}.kif")


def by_state(result) -> dict[frozenset, dict]:
    return {frozenset(line["node"]): line for line in result.strategy_lines()}


@pytest.mark.parametrize("solver", ["baseline", "ih"])
@pytest.mark.parametrize("game", ["tictactoe", "roshambo2", "gt_chicken", "gt_prisoner",
                                  "gt_centipede"])
def test_dag_and_model_paths_agree_state_by_state(game, solver) -> None:
    path = TICTACTOE if game == "tictactoe" else corpus(game)
    model = solve_game(path, solver, path="model")
    dag = solve_game(path, solver)
    assert dag.path == "dag" and model.path == "model"
    assert dag.values() == model.values()
    assert (dag.states, dag.nodes, dag.transitions) == (model.states, model.nodes,
                                                       model.transitions)
    assert dag.certificate["ok"] and model.certificate["ok"]
    lines, reference = by_state(dag), by_state(model)
    assert set(lines) == set(reference)          # the same support
    for state, line in reference.items():
        assert lines[state]["values"] == pytest.approx(line["values"], abs=1e-9)
    if game == "tictactoe":   # VALUES.md: 12,829 states
        assert dag.states == 12_829 and dag.values() == {"p0": 50.0, "p1": 50.0}


def test_json_has_the_old_fields_and_the_scale_figures(capsys) -> None:
    assert ggp_cli.main(["solve", str(TICTACTOE), "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"solver", "values", "root_strategy", "nodes", "seconds", "certificate", "states",
            "expand_seconds", "game", "engine", "constant_sum", "load_seconds",
            "total_seconds", "path", "transitions", "bytes_per_state", "peak_rss_mb"} <= set(out)
    assert out["path"] == "dag" and out["transitions"] == 131_214
    assert out["values"] == {"p0": 50.0, "p1": 50.0} and out["constant_sum"] == 100.0
    assert 0 < out["bytes_per_state"] <= 200
    assert out["root_strategy"] == {"p0": {"(mark 1 1)": 1.0}, "p1": {"(mark 1 1)": 1.0}}


@pytest.mark.parametrize("option, hint", [("--max-states=500", "raise --max-states"),
                                          ("--memory-mb=0.001", "raise --memory-mb")])
def test_budgets_stop_with_one_line(option, hint, capsys) -> None:
    assert ggp_cli.main(["solve", str(TICTACTOE), option, "--quiet"]) != 0
    err = capsys.readouterr().err.strip()
    assert hint in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("solver", ["baseline", "ih"])
def test_npz_round_trip_equals_json_lines(tmp_path, solver) -> None:
    path = corpus("gt_chicken")
    jsonl, npz = tmp_path / "a" / "chicken.jsonl", tmp_path / "b" / "chicken.npz"
    jsonl.parent.mkdir()
    npz.parent.mkdir()
    for target in (jsonl, npz):
        assert ggp_cli.main(["solve", str(path), "--solver", solver, "--quiet",
                             "--save", str(target)]) == 0
    text = path.read_text()
    stored = find_solution(npz.parent, text)
    assert isinstance(stored, NpzSolution) and stored.solver == solver
    reference = load_solution(jsonl)
    assert len(stored) == len(reference) > 0
    assert stored.values == reference.values == {"white": 100.0, "black": 60.0}
    for facts, (strategies, values) in reference.entries.items():
        assert stored.state_values(facts) == values
        got = stored.strategy(facts)
        assert set(got) == set(strategies)
        for role, probs in strategies.items():
            assert got[role] == pytest.approx(probs, abs=1e-12)
    assert stored.strategy(["(not a fact)"]) is None


def test_npz_fast_path_by_the_compiled_machines_state(tmp_path) -> None:
    from gdl.reasoning.machine import load_machine

    target = tmp_path / "ttt.npz"
    assert ggp_cli.main(["solve", str(TICTACTOE), "--quiet", "--save", str(target)]) == 0
    stored = NpzSolution(target)
    machine = load_machine(TICTACTOE)
    assert stored.bind(machine)
    state = machine.initial_state()
    assert stored.strategy_at(state) == stored.strategy(machine.state_to_kif(state))
    assert stored.values_at(state) == {"p0": 50.0, "p1": 50.0}
    general = load_machine(TICTACTOE, engine="general")
    assert not stored.bind(general) and stored.strategy_at(state) is None


def test_a_broken_npz_is_skipped_or_refused(tmp_path) -> None:
    (tmp_path / "x.npz").write_bytes(b"PK\x03\x04 not a zip")
    assert find_solution(tmp_path, "(role a) (role b)") is None
    with pytest.raises(Exception, match="not a compact GDL solution"):
        NpzSolution(tmp_path / "x.npz")


@pytest.mark.parametrize("solver, options, hint", [
    ("baseline", {"memory_mb": 0.5}, "raise --memory-mb"),
    ("ih", {"time_limit": 1e-9}, "raise --time-limit")])
def test_the_solve_phase_stops_with_one_line(solver, options, hint) -> None:
    from gdl.expansion.batch_expand import expand_dag
    from gdl.reasoning.machine import load_machine
    from gdl.solving.solve import solve_dag_expansion
    from solvers.errors import LimitReached

    expansion = expand_dag(load_machine(TICTACTOE))
    with pytest.raises(LimitReached) as stop:
        solve_dag_expansion(expansion, solver, **options)
    assert stop.value.message.startswith(f"{solver} stopped: ") and hint in stop.value.message
    assert "\n" not in stop.value.message


def test_doab_on_the_dag_path_equals_the_baseline() -> None:
    path = corpus("chickentictactoe")
    doab = solve_game(path, "doab", path="dag")
    baseline = solve_game(path, "baseline")
    assert doab.path == "dag" and doab.certificate["ok"]
    assert doab.values() == baseline.values() == {"xplayer": 40.451179733,
                                                  "oplayer": 59.548820267}
    report = doab.to_json()
    assert report["nodes_total"] == 11_093 and 0 < report["nodes_evaluated"] <= 11_093
    root = next(doab.strategy_lines())
    assert root["values"] == doab.values()
