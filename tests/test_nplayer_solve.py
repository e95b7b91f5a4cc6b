"""Games of three or more players: backward induction (solvers/nplayer/induction.py),
its certificate, and ``ggp solve`` on them (gdl/solving/nplayer_solve.py)."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import shared_path

import ggp_cli
from gdl.expansion.batch_expand import expand_joint
from gdl.reasoning.machine import load_machine, read_rules
from gdl.reasoning.state_machine import State, StateMachine
from gdl.solving.nplayer_solve import solve_nplayer_game
from gdl.solving.solve import solve_game
from solvers.nplayer import stage_mixed
from solvers.nplayer.certificate import check
from solvers.nplayer.dag import JointDag
from solvers.nplayer.induction import solve

DATA = Path(__file__).parent / "data"
TIE = DATA / "nplayer_tie.kif"
PENNIES = DATA / "nplayer_pennies.kif"
needs_gambit = pytest.mark.skipif(not stage_mixed.available(),
                                  reason="pygambit (the optional extra nplayer) is absent")


def load(path: Path) -> StateMachine:
    rules, name = read_rules(path)
    return load_machine(rules, name=name, filename=str(path))


# ---- the tie rule (tests/data/nplayer_tie.kif, values derived in its comment)

@pytest.mark.parametrize(("selection", "values", "opening"), [
    ("first", {"a": 40.0, "b": 0.0, "c": 0.0}, "y"),
    ("welfare", {"a": 100.0, "b": 50.0, "c": 10.0}, "x"),
])
def test_tie_rule_changes_the_values(selection, values, opening) -> None:
    result = solve_nplayer_game(TIE, selection=selection)
    assert result.values() == values
    assert result.root_strategy() == {"a": {opening: 1.0}, "b": {"noop": 1.0},
                                      "c": {"noop": 1.0}}
    assert result.certificate["ok"] and result.certificate["max_gain"] == 0.0
    notes = result.solution.notes
    assert notes["tie_rule"].startswith(selection + ":")
    assert (notes["turn_based_states"], notes["pure_states"], notes["mixed_states"]) == (2, 0, 0)
    # b's state is worth (0, 50, 100) under first, (100, 50, 10) under welfare either way
    lines = list(result.strategy_lines())
    b_line = next(line for line in lines if "(control b)" in line["node"])
    assert b_line["values"] == ({"a": 0.0, "b": 50.0, "c": 100.0} if selection == "first"
                                else {"a": 100.0, "b": 50.0, "c": 10.0})


def test_certificate_catches_a_bad_move() -> None:
    result = solve_nplayer_game(TIE)
    dag, solution = result.dag, result.solution
    root = solution.strategy_start[dag.root]
    solution.strategy[root:root + 2] = [1.0, 0.0]        # a plays x: worth 0, not 40
    found = check(dag, solution)
    assert not found["ok"] and found["max_gain"] == 40.0
    assert (found["worst_state"], found["worst_player"]) == (dag.root, "a")


# ---- a stage game without a pure equilibrium (tests/data/nplayer_pennies.kif)

@needs_gambit
def test_three_player_pennies_mixed() -> None:
    result = solve_nplayer_game(PENNIES)
    for role, value in result.values().items():
        assert value == pytest.approx(50.0, abs=1e-6), role
    for role, probs in result.root_strategy().items():
        assert probs == pytest.approx({"h": 0.5, "t": 0.5}, abs=1e-6), role
    assert result.certificate["max_gain"] < 1e-6
    notes = result.solution.notes
    assert notes["mixed_states"] == 1 and notes["mixed_max_regret"] < 1e-6
    assert set(notes["mixed_methods"]) <= {"logit+newton", "logit", "gnm+newton", "gnm"}


@needs_gambit
def test_mixed_stage_games_of_random_payoffs() -> None:
    """Random 3- and 4-player stage games (most have no pure equilibrium): the profile
    found leaves every player a regret below 1e-9 of the payoff range, by the
    module's own check and by a brute force over every pure deviation."""
    rng = np.random.default_rng(7)
    for shape in [(2, 2, 2), (3, 2, 3), (3, 3, 3), (2, 2, 2, 2)]:
        payoff = rng.integers(0, 101, size=(*shape, len(shape))).astype(float)
        found = stage_mixed.solve_stage(payoff, "test")
        assert found.regret < 1e-7
        x = found.strategies
        for p in range(len(shape)):
            assert x[p].min() >= 0 and abs(x[p].sum() - 1) < 1e-12
            value = stage_mixed.expected_payoffs(payoff, x)[p]
            for move in range(shape[p]):
                pure = np.eye(shape[p])[move]
                deviation = stage_mixed.expected_payoffs(payoff, (*x[:p], pure, *x[p + 1:]))
                assert deviation[p] <= value + 1e-7


@needs_gambit
def test_simultaneous_with_nature_certified() -> None:
    """tests/data/picksum3.kif: three players and a coin amid the roles, uneven move
    counts, two rounds; pure and mixed stage games, every gain within 1e-9."""
    result = solve_nplayer_game(DATA / "picksum3.kif")
    notes = result.solution.notes
    assert notes["pure_states"] > 0 and notes["mixed_states"] > 0
    assert result.certificate["ok"] and result.certificate["max_gain"] < 1e-9
    assert sum(result.values().values()) == pytest.approx(100.0)     # constant-sum


def test_pennies_without_pygambit_is_one_line(monkeypatch, capsys) -> None:
    monkeypatch.setattr(stage_mixed, "_gambit", lambda: None)
    assert ggp_cli.main(["solve", str(PENNIES), "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == ("error: state 0 ((step 0)): this stage game has no pure equilibrium and a "
                   "mixed one needs pygambit (install the optional extra: pip install "
                   "'.[nplayer]')")


def test_pure_simultaneous_stage_games() -> None:
    """Three players, 2x2x2, payoffs u_p = 1 when p matches player 0 (player 0: always
    1): both unanimous joint moves are equilibria; first takes (0, 0, 0) (welfare too:
    sum 3 for both). Then player 0 gets 1 at (1, 1, 1), 0.5 at (1, 0, 0), else 0: from
    (0, 0, 0) it gains by moving to (1, 0, 0), so (1, 1, 1) is the only one."""
    moves = list(itertools.product((0, 1), repeat=3))
    payoff = np.array([[1.0, a[1] == a[0], a[2] == a[0]] for a in moves])
    dag = joint_dag(payoff)
    sol = solve(dag)
    assert sol.values[0].tolist() == [1.0, 1.0, 1.0]
    assert [sol.state_strategy(dag, 0, p).tolist() for p in range(3)] == [[1, 0]] * 3
    assert sol.notes["pure_states"] == 1 and check(dag, sol)["max_gain"] == 0.0
    payoff[:, 0] = [1.0 if a == (1, 1, 1) else 0.5 if a == (1, 0, 0) else 0.0 for a in moves]
    sol = solve(joint_dag(payoff))
    assert [sol.state_strategy(dag, 0, p).tolist() for p in range(3)] == [[0, 1]] * 3


def joint_dag(payoff: np.ndarray) -> JointDag:
    """A one-step 2x2x2 game: root 0, terminal states 1-8 with ``payoff`` in row-major
    order of the joint moves."""
    counts = np.array([[2, 2, 2]] + [[0, 0, 0]] * 8, dtype=np.uint16)
    nk = np.array([1] + [0] * 8, dtype=np.uint16)
    start = np.array([0] + [8] * 9, dtype=np.int64)
    dag = JointDag(counts, nk, start, np.arange(1, 9, dtype=np.int32),
                   np.vstack([np.zeros(3), payoff]), 0, ("p0", "p1", "p2"))
    dag.validate()
    return dag


# ---- tictactoe_3player (5x5, three marks): a mid-game position's whole subgame

def brute_force(machine: StateMachine, state: State, players: tuple[int, ...],
                welfare: bool, memo: dict) -> tuple[float, ...]:
    """Plain backward induction over the machine, the tie rule by its definition: the
    mover's best move, first in legal order (welfare: then the largest sum)."""
    if state in memo:
        return memo[state]
    if machine.is_terminal(state):
        goals = machine.goals(state)
        value = tuple(float(goals[r]) for r in players)
    else:
        legal = [machine.legal_moves(state, r) for r in range(len(machine.roles))]
        movers = [p for p, r in enumerate(players) if len(legal[r]) > 1]
        assert len(movers) <= 1, "a turn-based game"
        mover = movers[0] if movers else 0
        best: tuple | None = None
        for joint in itertools.product(*legal):
            child = brute_force(machine, machine.next_state(state, list(joint)), players,
                                welfare, memo)
            key = (child[mover], sum(child)) if welfare else (child[mover],)
            if best is None or key > best[0]:
                best = (key, child)
        assert best is not None
        value = best[1]
    memo[state] = value
    return value


def position(machine: StateMachine, plies: int, spread: int = 0) -> State:
    """The state after ``plies`` joint moves, role ``r`` taking its legal move number
    ``7 * ply + spread * r`` (mod its count): a fixed game that does not end early."""
    state = machine.initial_state()
    for ply in range(plies):
        legal = [machine.legal_moves(state, r) for r in range(len(machine.roles))]
        state = machine.next_state(state, [moves[(7 * ply + spread * r) % len(moves)]
                                           for r, moves in enumerate(legal)])
        assert not machine.is_terminal(state)
    return state


@pytest.mark.parametrize("selection", ["first", "welfare"])
def test_tictactoe_3player_subgame_against_brute_force(selection) -> None:
    machine = load(shared_path("gdl-corpus", "repository", "tictactoe_3player.kif"))
    expansion = expand_joint(machine, position(machine, 16))
    dag = expansion.joint
    assert dag.num_players == 3 and dag.num_states == 6236
    solution = solve(dag, selection)
    certificate = check(dag, solution)
    assert certificate["ok"] and certificate["max_gain"] == 0.0
    memo: dict = {}
    brute_force(machine, expansion.state(dag.root), expansion.players,
                selection == "welfare", memo)
    for s in range(dag.num_states):
        assert tuple(solution.values[s]) == memo[expansion.state(s)], s


# ---- two players: the n-player solver agrees with the two-player baseline

def test_two_player_tictactoe_agrees_with_the_baseline() -> None:
    path = shared_path("gdl-corpus", "repository", "ticTacToe.kif")
    ours = solve_nplayer_game(path, "spe")
    assert ours.values() == solve_game(path, "baseline").values() == {
        "xplayer": 50.0, "oplayer": 50.0}
    assert ours.certificate["ok"] and ours.solution.notes["turn_based_states"] == 4520


@needs_gambit
def test_two_player_goofspiel_agrees_with_the_baseline() -> None:
    """Constant-sum with mixed stage games: every equilibrium has the same values."""
    path = Path(__file__).parent.parent / "games" / "gdl" / "goofspiel_3.kif"
    ours = solve_nplayer_game(path, "spe")
    theirs = solve_game(path, "baseline").values()
    assert ours.values() == pytest.approx(theirs, abs=1e-6)
    assert ours.certificate["max_gain"] < 1e-6 and ours.solution.notes["mixed_states"] > 0


# ---- the command line

def test_cli_json_and_strategy(tmp_path, capsys) -> None:
    out_path = tmp_path / "s.jsonl"
    assert ggp_cli.main(["solve", str(TIE), "--json", "--quiet", "--strategy",
                         str(out_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["solver"] == "spe" and out["players"] == 3
    assert out["values"] == {"a": 40.0, "b": 0.0, "c": 0.0}
    assert out["root_strategy"] == {"a": {"y": 1.0}, "b": {"noop": 1.0}, "c": {"noop": 1.0}}
    assert out["states"] == 5 and out["certificate"]["ok"]
    assert out["notes"]["tie_rule"].startswith("first:")
    assert {"seconds", "expand_seconds", "load_seconds", "total_seconds", "game", "engine",
            "transitions", "constant_sum", "peak_rss_mb"} <= set(out)
    lines = [json.loads(line) for line in out_path.read_text().splitlines()]
    assert [line["strategy"]["a"] for line in lines] == [{"y": 1.0}, {"noop": 1.0}]
    assert lines[1]["strategy"]["b"] == {"b1": 1.0}
    assert sorted(lines[1]["node"]) == ["(control b)"]


def test_cli_solver_spe_takes_two_player_games(capsys) -> None:
    path = shared_path("gdl-corpus", "repository", "ticTacToe.kif")
    assert ggp_cli.main(["solve", str(path), "--solver", "spe", "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["solver"] == "spe" and out["players"] == 2
    assert out["values"] == {"xplayer": 50.0, "oplayer": 50.0}
    assert out["certificate"]["max_gain"] == 0.0


@pytest.mark.parametrize(("argv", "message"), [
    (["--solver", "baseline"], "a game of 3 players is solved by --solver spe, not baseline"),
    (["--selection", "max0"], "unknown tie rule 'max0' for games of three or more players"),
    (["--ray", "auto"], "--ray is not available for games of three or more players"),
    (["--max-states", "2"], "budget of 2 states"),
])
def test_cli_bad_input_is_one_line(argv, message, capsys) -> None:
    assert ggp_cli.main(["solve", str(TIE), "--quiet", *argv]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_cli_game_without_a_legal_move(tmp_path, capsys) -> None:
    game = tmp_path / "stuck.kif"
    game.write_text(TIE.read_text().replace("(<= (legal b b2) (true (control b)))", "")
                    .replace("(<= (legal b b1) (true (control b)))", ""))
    assert ggp_cli.main(["solve", str(game), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "role b has no legal move" in err and err.count("\n") == 1


# ---- a simultaneous corpus game of three players

def test_simultaneous_corpus_game_switches() -> None:
    """switches: red, white and blue each set their own switch in one simultaneous step
    and get 100 for theirs on (a, c, e), 0 for off: (a, c, e) is the only pure
    equilibrium (each move is dominant), worth 100 to each."""
    path = shared_path("gdl-corpus", "repository", "switches.kif")
    start = time.perf_counter()
    result = solve_nplayer_game(path)
    seconds = time.perf_counter() - start
    assert result.values() == {"red": 100.0, "white": 100.0, "blue": 100.0}
    assert result.root_strategy() == {"red": {"a": 1.0}, "white": {"c": 1.0},
                                      "blue": {"e": 1.0}}
    assert result.states == 9 and result.solution.notes["pure_states"] == 1
    assert result.certificate["ok"] and result.certificate["max_gain"] == 0.0
    assert seconds < 30


@pytest.mark.slow
def test_pacman3p_subgame_certified() -> None:
    """pacman3p (pacman against two ghosts that move at once: simultaneous, general-sum)
    from step 90 of a fixed game: its whole subgame solved and certified."""
    machine = load(shared_path("gdl-corpus", "repository", "pacman3p.kif"))
    start = time.perf_counter()
    expansion = expand_joint(machine, position(machine, 90, spread=1))
    dag = expansion.joint
    solution = solve(dag)
    certificate = check(dag, solution)
    seconds = time.perf_counter() - start
    assert dag.num_states == 6589
    notes = solution.notes
    assert notes["pure_states"] > 0 and notes["turn_based_states"] > 0
    assert (notes["pure_states"] + notes["turn_based_states"] + notes["mixed_states"]
            == int(np.count_nonzero(~dag.terminal)))
    assert certificate["ok"] and certificate["max_gain"] == 0.0
    print(f"pacman3p from step 90: {dag.num_states} states, values "
          f"{solution.values[dag.root].tolist()}, {seconds:.1f} s")
