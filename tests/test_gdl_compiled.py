"""The compiled GDL engine against SWI-Prolog oracle traces and the general engine."""

from __future__ import annotations

import json
import pickle
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, shared_path

from gdl.reasoning.compile import CompiledMachine, compile_machine
from gdl.reasoning.ground import Budget
from gdl.reasoning.parser import parse_kif
from solvers.errors import GameError, GameRuntimeError, LimitReached

TTT = """
(role x) (role o)
(init (cell 1 b)) (init (cell 2 b)) (init (control x))
(<= (legal ?p (mark ?c)) (true (control ?p)) (true (cell ?c b)))
(<= (legal o noop) (true (control x)))
(<= (legal x noop) (true (control o)))
(<= (next (cell ?c ?p)) (does ?p (mark ?c)))
(<= (next (cell ?c ?v)) (true (cell ?c ?v)) (not (marked ?c)))
(<= (marked ?c) (does ?p (mark ?c)))
(<= (next (control o)) (true (control x)))
(<= (next (control x)) (true (control o)))
(<= terminal (not open))
(<= open (true (cell ?c b)))
(<= (goal ?p 50) (role ?p))
"""


def corpus_game(name: str) -> Path:
    path = shared_path("gdl-corpus", "repository", f"{name}.kif")
    return path


def oracle_trace(game: Path, playouts: int, seed: int, tmp_path: Path,
                 table: bool = False) -> list[dict]:
    """Random playouts written by the SWI-Prolog oracle (skips without swipl), as
    ``trace.sh`` does; ``table`` adds SWI tabling for left-recursive rules."""
    oracle = shared_path("oracle")
    if shutil.which("swipl") is None:
        pytest.skip("SWI-Prolog (swipl) is not installed")
    out = tmp_path / f"{game.stem}.jsonl"
    program = tmp_path / f"{game.stem}.pl"
    translate = [sys.executable, str(oracle / "kif2lp.py"), "pl", str(game)]
    program.write_text(subprocess.run(translate + (["--table"] if table else []), check=True,
                                      capture_output=True, text=True, timeout=60).stdout)
    flags = "set_prolog_flag(gdl_tabling, true), " if table else ""
    goal = f"{flags}set_random(seed({seed})), trace_playouts({playouts}, '{out}')"
    run = subprocess.run(["swipl", "-q", "-g", goal, "-t", "halt", str(oracle / "gdl_oracle.pl"),
                          str(program)], capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        pytest.skip(f"the oracle cannot run {game.stem}: {run.stderr[-200:]}")
    return [json.loads(line) for line in out.read_text().splitlines() if line.strip()]


def replay(machine: CompiledMachine, steps: list[dict]) -> int:
    """Follow an oracle trace with ``machine``, comparing every query; the number of
    steps checked. The oracle lower-cases symbols, so strings compare lower-cased."""
    state = None
    checked = 0
    expected_next: list[str] = []
    for step in steps:
        if state is None or step["state"] != expected_next:  # a new playout starts
            state = machine.initial_state()
        assert [f.lower() for f in machine.state_to_kif(state)] == step["state"]
        assert machine.is_terminal(state) == step["terminal"]
        goals = [step["goals"][role.lower()] for role in machine.roles]
        if all(len(values) == 1 for values in goals):
            assert machine.goals(state) == tuple(int(values[0]) for values in goals)
        else:
            with pytest.raises(GameRuntimeError):
                machine.goals(state)
        for r, role in enumerate(machine.roles):
            legal = step["legal"][role.lower()]
            if legal or step["terminal"]:
                moves = machine.legal_moves(state, r)
                assert [machine.move_to_kif(m).lower() for m in moves] == legal
            else:
                with pytest.raises(GameRuntimeError):
                    machine.legal_moves(state, r)
        checked += 1
        if step["terminal"]:
            state = None
            continue
        joint = []
        for r, role in enumerate(machine.roles):
            by_kif = {machine.move_to_kif(m).lower(): m for m in machine.legal_moves(state, r)}
            joint.append(by_kif[step["moves"][role.lower()]])
        state = machine.next_state(state, joint)
        expected_next = step["next"]
        assert [f.lower() for f in machine.state_to_kif(state)] == expected_next
    return checked


# ------------------------------------------------------------------- small exact games


def test_inline_game_queries() -> None:
    machine = compile_machine(parse_kif(TTT), name="tiny")
    assert machine.roles == ("x", "o") and machine.engine_name == "compiled"
    s0 = machine.initial_state()
    assert machine.state_to_kif(s0) == ["(cell 1 b)", "(cell 2 b)", "(control x)"]
    assert [machine.move_to_kif(m) for m in machine.legal_moves(s0, 0)] == ["(mark 1)", "(mark 2)"]
    assert [machine.move_to_kif(m) for m in machine.legal_moves(s0, 1)] == ["noop"]
    mark1, noop = machine.legal_moves(s0, 0)[0], machine.legal_moves(s0, 1)[0]
    s1 = machine.next_state(s0, [mark1, noop])
    assert machine.state_to_kif(s1) == ["(cell 1 x)", "(cell 2 b)", "(control o)"]
    assert not machine.is_terminal(s1)
    s2 = machine.next_state(s1, [machine.parse_move("noop", 0), machine.parse_move("(mark 2)", 1)])
    assert machine.state_to_kif(s2) == ["(cell 1 x)", "(cell 2 o)", "(control x)"]
    assert machine.is_terminal(s2) and machine.goals(s2) == (50, 50)
    assert machine.state_from_kif(machine.state_to_kif(s2)) == s2
    assert hash(s2) == hash(machine.state_from_kif(["(control x)", "(cell 2 o)", "(cell 1 x)"]))
    with pytest.raises(GameError):
        machine.state_from_kif(["(cell 3 b)"])
    with pytest.raises(GameError):
        machine.parse_move("(mark", 0)


def test_one_spelling_per_symbol_whatever_its_case() -> None:
    # corpus alexChess writes nextFile and nextfile; wargame03 VerticalTerrorist
    machine = compile_machine(parse_kif("""(role a) (init p) (NextFile 1 2)
        (<= (legal a (go ?x)) (true p) (nextfile ?x ?y))
        (<= (legal a stay) (true p))
        (<= (next q) (does a (GO 1)))
        (<= (goal a 0) (true p)) (<= (goal a 100) (true q)) (<= terminal (true q))"""))
    s0 = machine.initial_state()
    moves = machine.legal_moves(s0, 0)
    assert [machine.move_to_kif(m) for m in moves] == ["(go 1)", "stay"]
    s1 = machine.next_state(s0, [machine.parse_move("(Go 1)", 0)])
    assert machine.state_to_kif(s1) == ["q"] and machine.goals(s1) == (100,)


def test_pickles_by_compiling_again() -> None:
    machine = compile_machine(parse_kif(TTT), name="tiny")
    copy = pickle.loads(pickle.dumps(machine))
    assert copy.name == "tiny" and copy.roles == machine.roles
    s0 = copy.initial_state()
    assert copy.state_to_kif(s0) == machine.state_to_kif(machine.initial_state())
    assert [copy.move_to_kif(m) for m in copy.legal_moves(s0, 0)] == ["(mark 1)", "(mark 2)"]


def test_runtime_errors_no_legal_move_and_goals() -> None:
    rules = parse_kif("""(role a) (init p)
        (<= (next q) (true p))
        (<= (legal a go) (true p))
        (<= (goal a 10) (true q)) (<= (goal a 20) (true q))""")
    machine = compile_machine(rules)
    s0 = machine.initial_state()
    with pytest.raises(GameRuntimeError, match="zero|0 goal"):
        machine.goals(s0)
    s1 = machine.next_state(s0, machine.legal_moves(s0, 0))
    with pytest.raises(GameRuntimeError, match="no legal move"):
        machine.legal_moves(s1, 0)
    with pytest.raises(GameRuntimeError, match="2 goal values"):
        machine.goals(s1)


def test_recursion_is_iterated_to_its_fixpoint() -> None:
    rules = parse_kif("""(role a) (init (on 1)) (succ 1 2) (succ 2 3) (succ 3 4)
        (<= (reach ?x) (true (on ?x)))
        (<= (reach ?y) (reach ?x) (succ ?x ?y))
        (<= (legal a (go ?x)) (true (on ?x)) (succ ?x ?y))
        (<= (next (on ?y)) (does a (go ?x)) (succ ?x ?y))
        (<= terminal (reach 4) (not (reach 5)) (true (on 3)))
        (<= (goal a 100) (true (on 3)))""")
    machine = compile_machine(rules)
    s = machine.initial_state()
    steps = 0
    while not machine.is_terminal(s):
        s = machine.next_state(s, [machine.legal_moves(s, 0)[0]])
        steps += 1
    assert steps == 2 and machine.state_to_kif(s) == ["(on 3)"] and machine.goals(s) == (100,)


def test_budget_gives_limit_reached() -> None:
    with pytest.raises(LimitReached, match="grounding exceeds"):
        compile_machine(parse_kif(TTT), budget=Budget(max_steps=10))
    # the clock counts whatever the steps: joins are planned before any step is spent
    spent = Budget(max_seconds=0.0)
    with pytest.raises(LimitReached, match="grounding exceeds 0 s"):
        compile_machine(parse_kif(TTT), budget=spent)
    assert spent.steps == 0


def test_chess_does_not_fit_a_small_budget() -> None:
    game = corpus_game("chess")
    with pytest.raises(LimitReached, match="grounding exceeds 20000 join steps"):
        compile_machine(parse_kif(game.read_text(), str(game)), budget=Budget(max_steps=20_000))


# --------------------------------------------------------------------- oracle traces

CORPUS = ["ticTacToe", "connectFour", "breakthrough", "ticTicToe", "conn4",
          "tictactoe_3player", "nim1", "pentago", "blocker", "knightThrough", "hanoi",
          "eightPuzzle", "connectFourSimultaneous", "doubletictactoe", "sheepAndWolf",
          "dotsAndBoxes"]


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_game_matches_oracle(name: str, tmp_path: Path) -> None:
    game = corpus_game(name)
    machine = compile_machine(parse_kif(game.read_text(), str(game)), name=name)
    assert replay(machine, oracle_trace(game, 2, 7, tmp_path)) > 0


def prover_tests() -> list[str]:
    folder = REPO.parent / "shared" / "gdl-corpus" / "prover-tests"
    return sorted(p.stem for p in folder.glob("*.kif")) if folder.is_dir() else []


@pytest.mark.parametrize("name", prover_tests())
def test_prover_edge_case_matches_oracle(name: str, tmp_path: Path) -> None:
    game = shared_path("gdl-corpus", "prover-tests", f"{name}.kif")
    rules = parse_kif(game.read_text(), str(game))
    try:
        from gdl.reasoning.validate import validate
    except ImportError:
        validate = None
    if validate is not None:
        try:
            validate(rules)
        except GameError:
            pytest.skip("an invalid game (the validator rejects it)")
    try:
        machine = compile_machine(rules, name=name)
    except LimitReached as exc:  # "auto" falls back to the general engine
        assert "unsafe" in exc.message
        pytest.skip(f"the compiled engine declines: {exc.message}")
    assert replay(machine, oracle_trace(game, 3, 3, tmp_path, table=True)) > 0


# ----------------------------------------------------------- against the general engine


@pytest.mark.parametrize("name", ["ticTacToe", "connectFour", "breakthrough", "ticTicToe"])
def test_agrees_with_general_engine(name: str) -> None:
    machine_module = pytest.importorskip("gdl.reasoning.machine")
    game = corpus_game(name)
    rules = parse_kif(game.read_text(), str(game))
    fast = compile_machine(rules, name=name)
    general = machine_module.GeneralMachine(rules, name=name)
    rng = random.Random(5)
    for _ in range(3):
        a, b = fast.initial_state(), general.initial_state()
        while True:
            assert fast.state_to_kif(a) == general.state_to_kif(b)
            assert fast.is_terminal(a) == general.is_terminal(b)
            if fast.is_terminal(a):
                assert fast.goals(a) == general.goals(b)
                break
            joint_a, joint_b = [], []
            for r in range(len(fast.roles)):
                moves_a = fast.legal_moves(a, r)
                moves_b = general.legal_moves(b, r)
                assert [fast.move_to_kif(m) for m in moves_a] == \
                    [general.move_to_kif(m) for m in moves_b]
                i = rng.randrange(len(moves_a))
                joint_a.append(moves_a[i])
                joint_b.append(moves_b[i])
            a, b = fast.next_state(a, joint_a), general.next_state(b, joint_b)


# ----------------------------------------------------------------------- the bench


def test_bench_measures_whole_tic_tac_toe_playouts() -> None:
    from gdl.bench.gdl import bench_engine, bench_oracle

    game = corpus_game("ticTacToe")
    ours = bench_engine(game, "compiled", 0.2, seed=1)
    assert ours.steps_per_second and ours.playouts > 0
    # a tic-tac-toe playout lasts 5 to 9 moves; the last one may be cut by the clock
    assert 5 * ours.playouts <= ours.steps <= 9 * (ours.playouts + 1)
    oracle = bench_oracle(game, 0.2, seed=1)
    if oracle.steps_per_second is None:
        pytest.skip(oracle.note)
    assert 5 * oracle.playouts <= oracle.steps <= 9 * oracle.playouts
