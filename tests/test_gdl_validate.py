"""Validation (GDL specification restrictions, located), run-time errors, and the
``ggp check`` / ``ggp playout`` command lines."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from conftest import shared_path

import ggp_cli
from gdl.reasoning.machine import load_machine, read_rules
from gdl.reasoning.parser import parse_kif
from gdl.reasoning.trace import read_trace, replay
from gdl.reasoning.validate import problems_of, validate
from solvers.errors import GameRuntimeError, ValidationError

BASE = "(role a)\n(init (s 0))\n(<= terminal (true (s 1)))\n(<= (legal a go) (true (s 0)))\n"


def problems(text: str) -> list[str]:
    return [str(p) for p in problems_of(parse_kif(BASE + text, "g.kif"), "g.kif")]


def test_corpus_tic_tac_toe_is_valid() -> None:
    rules, _ = read_rules(shared_path("gdl-corpus", "repository", "ticTacToe.kif"))
    assert problems_of(rules) == []
    validate(rules)


@pytest.mark.parametrize("text, expected", [
    # 1. arities (relations, functions, keywords)
    ("(p 1)\n(<= (q ?x) (p ?x ?x))", "g.kif:6:1: relation 'p' used with arity 2 here but 1 at line 5"),
    ("(p (f 1))\n(p (f 1 2))", "g.kif:6:1: function 'f' used with arity 2 here but 1 at line 5"),
    ("(<= (goal a) (true (s 1)))", "g.kif:5:1: 'goal' has arity 2, used with 1"),
    # 2. keyword placement and roles
    ("(<= (true (s 2)) (true (s 1)))", "g.kif:5:1: 'true' may not appear in a rule head"),
    ("(<= (p 1) (init (s 0)))", "g.kif:5:1: 'init' may not appear in a rule body"),
    ("(<= (role b) (true (s 1)))", "g.kif:5:1: 'role' may only appear in ground facts"),
    ("(role a)", "g.kif:5:1: role a declared twice"),
    # 3. dependency restrictions
    ("(<= (init (s 2)) (true (s 1)))", "g.kif:5:1: 'init' may not depend on 'true'"),
    ("(<= (goal a 100) (does a go))", "g.kif:5:1: 'goal' may not depend on 'does'"),
    # 4. safety
    ("(<= (p ?x) (true (s 1)))", "g.kif:5:1: unsafe rule: ?x must appear"),
    ("(<= (p 1) (true (s 1)) (not (q ?y)))", "g.kif:5:1: unsafe rule: ?y"),
    ("(<= (p 1) (true (s ?x)) (distinct ?x ?z))", "g.kif:5:1: unsafe rule: ?z"),
    ("(<= (p 1) (or (true (s ?x)) (true (s 0))) (distinct ?x 0))", "unsafe rule: ?x"),
    ("(q ?x)", "g.kif:5:1: fact (q ?x) has variables"),
    # 5. stratified negation
    ("(<= p (true (s 0)) (not q))\n(<= q (true (s 0)) (not p))",
     "g.kif:5:1: negation is not stratified: 'p' depends on 'not q'"),
    # 6. the recursion restriction
    ("(num 0)\n(<= (num (succ ?x)) (num ?x))", "g.kif:6:1: recursion restriction: argument ?x"),
])
def test_each_problem_is_found_and_located(text: str, expected: str) -> None:
    found = problems(text)
    assert any(expected in p for p in found), found


def test_no_role_and_all_problems_reported() -> None:
    rules = parse_kif("(<= (true p) q)\n(<= (r ?x) q)", "h.kif")
    with pytest.raises(ValidationError) as info:
        validate(rules, "h.kif")
    texts = [str(p) for p in info.value.problems]
    assert "h.kif: the game declares no role" in texts
    assert any(t.startswith("h.kif:1:1: 'true' may not") for t in texts)
    assert any(t.startswith("h.kif:2:1: unsafe rule: ?x") for t in texts)


def test_legal_recursion_is_accepted() -> None:
    assert problems("(edge 1 2)\n(edge 2 3)\n(<= (path ?x ?y) (edge ?x ?y))\n"
                    "(<= (path ?x ?z) (edge ?x ?y) (path ?y ?z))\n"
                    "(<= (goal a 100) (path 1 3))") == []


def test_no_legal_move_is_a_runtime_error() -> None:
    machine = load_machine(BASE + "(<= (next (s 1)) (does a go))\n(<= (goal a 0) (true (s ?x)))")
    state = machine.next_state(machine.initial_state(), machine.legal_joint_moves(
        machine.initial_state())[0])
    assert machine.is_terminal(state) and machine.legal_moves(state, 0) == ()
    stuck = load_machine("(role a)\n(init (s 0))\n(<= terminal (true (s 1)))\n(goal a 0)\n"
                         "(<= (legal a go) (true (s 1)))")
    with pytest.raises(GameRuntimeError, match="role a has no legal move in the non-terminal"):
        stuck.legal_moves(stuck.initial_state(), 0)


def test_pentago_has_a_role_with_two_goal_values() -> None:
    machine = load_machine(shared_path("gdl-corpus", "repository", "pentago.kif"),
                           engine="general")
    rng = random.Random(0)
    state = machine.initial_state()
    while not machine.is_terminal(state):
        state = machine.next_state(state, [rng.choice(m) for m in machine.legal_joint_moves(state)])
    with pytest.raises(GameRuntimeError, match="role black has 2 goal values"):
        machine.goals(state)
    assert machine.goal_values(state)[1] == ("0", "100")


def test_ggp_check(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    game = shared_path("gdl-corpus", "repository", "blocker.kif")
    assert ggp_cli.main(["check", str(game)]) == 0
    out = capsys.readouterr().out
    assert "roles (2): crosser blocker" in out
    assert "moves: simultaneous" in out
    bad = tmp_path / "bad.kif"
    bad.write_text(BASE + "(<= (p ?x) (true (s 1)))\n(<= (init (s 2)) (true (s 1)))\n")
    assert ggp_cli.main(["check", str(bad)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{bad}:5:1: unsafe rule")
    assert lines[1].startswith(f"{bad}:6:1: 'init' may not depend on 'true'")
    assert lines[2] == f"{bad}: invalid GDL, 2 problems"
    bad.write_text("(role a))")
    assert ggp_cli.main(["check", str(bad)]) == 1
    assert f"{bad}:1:9: unexpected ')'" in capsys.readouterr().err


def test_ggp_playout_json_and_trace(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    game = shared_path("gdl-corpus", "repository", "ticTacToe.kif")
    trace = tmp_path / "t.jsonl"
    argv = ["playout", str(game), "--count", "4", "--seed", "9", "--engine", "general"]
    assert ggp_cli.main(argv + ["--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) == {"engine", "playouts", "steps", "seconds", "steps_per_second"}
    assert result["engine"] == "general" and result["playouts"] == 4
    assert ggp_cli.main(argv + ["--trace", str(trace)]) == 0
    records = read_trace(trace)
    # the same seed gives the same playouts with and without a trace
    assert sum(1 for r in records if r["moves"]) == result["steps"]
    assert sum(1 for r in records if r["terminal"]) == 4
    first = records[0]
    assert set(first) == {"state", "legal", "terminal", "goals", "moves", "next"}
    assert first["state"] == sorted(first["state"]) and "(control xplayer)" in first["state"]
    assert first["legal"]["oplayer"] == ["noop"]
    assert replay(load_machine(game, engine="general"), records) == (len(records), [])


def test_negation_stratified_on_constants_is_accepted_and_evaluated() -> None:
    # corpus futoshiki5 / queens*: goal 100 is "not goal 0"; stratified per constant
    text = ("(role a)\n(init (s 0))\n(<= (legal a go) (true (s 0)))\n"
            "(<= (next (s 1)) (does a go))\n(<= terminal (true (s 1)))\n"
            "(<= (goal a 0) (true (s 0)))\n(<= (goal a 100) (not (goal a 0)))\n")
    assert problems_of(parse_kif(text)) == []
    machine = load_machine(text, engine="general")
    start = machine.initial_state()
    assert machine.goals(start) == (0,)
    assert machine.goals(machine.next_state(start, machine.legal_joint_moves(start)[0])) == (100,)
