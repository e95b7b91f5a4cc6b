"""Expansion of games of any number of players into the JointDag (gdl.expansion).

The batched path must equal the per-state one state for state (counts, nature's
outcomes, children, payoffs, moves) for puzzles (with and without a coin), three
players turn-based and simultaneous (with nature among the roles) and a corpus
game of three players; state counts are checked by hand and against the
SWI-Prolog oracle's reachable/1. Every test runs with the compiled kernels and with
the numpy fallback (test_gdl_batch_expand's fixture).
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, shared_path
from test_gdl_batch_expand import (
    UNLIMITED,
    assert_same_graph,
    kernels,  # noqa: F401  (autouse: numba, then numpy)
)
from test_gdl_solve_expand import NIM

from gdl.expansion.batch_expand import DagExpansion, expand_dag, expand_joint, from_graph
from gdl.expansion.expand import expand, expand_states, players_of, roles_of
from gdl.reasoning.machine import load_machine
from gdl.reasoning.state_machine import State, StateMachine
from solvers.errors import UnsupportedGame

DATA = REPO / "tests" / "data"
HANOI3, COINWALK, NIM3, PICKSUM3 = (DATA / f"{name}.kif" for name in
                                    ("hanoi3", "coinwalk", "nim3", "picksum3"))


def compare(machine: StateMachine, root: State | None = None) -> DagExpansion:
    """The batched expansion, checked against the per-state one."""
    batched = expand_joint(machine, root, budget=UNLIMITED)
    reference = from_graph(expand_states(machine, root, budget=UNLIMITED))
    assert_same_graph(batched, reference)
    return batched


def kif_moves(expansion: DagExpansion, s: int) -> list[list[str]]:
    moves = expansion.moves(s)
    assert moves is not None
    return [[expansion.machine.move_to_kif(m) for m in slot] for slot in moves]


def test_puzzle_hanoi() -> None:
    result = compare(load_machine(HANOI3, engine="compiled"))
    dag = result.joint
    assert result.players == (0,) and result.nature is None and dag.num_players == 1
    assert dag.num_states == 89           # the oracle's count (test_reachable_states_...)
    assert kif_moves(result, 0) == [["(move 1 b)", "(move 1 c)"]]
    assert dag.counts[0].tolist() == [2] and dag.nk[0] == 1
    # the tower stands on c in one state only: after the 7 moves of the optimum
    won = np.flatnonzero(dag.payoff[:, 0] == 100)
    assert len(won) == 1 and "(step 7)" in result.state_to_kif(int(won[0]))
    assert (dag.payoff[~dag.terminal] == 0).all()
    with pytest.raises(UnsupportedGame, match="1 player .player.: not supported by exact"):
        result.dag  # noqa: B018  (the two-player StateDag)


def test_puzzle_with_a_coin() -> None:
    result = compare(load_machine(COINWALK, engine="compiled"))
    dag = result.joint
    assert result.players == (0,) and result.nature == 1
    assert dag.num_states == 10           # by hand: see the game's comment
    assert kif_moves(result, 0) == [["step", "wait"], ["heads", "tails"]]
    assert dag.counts[0].tolist() == [2] and dag.nk[0] == 2
    # entries (walker, coin) row-major: a step lands on heads; waiting ignores the coin
    children = dag.children(0)
    assert children.shape == (2, 2) and children[1, 0] == children[1, 1] == children[0, 1]
    assert result.state_to_kif(int(children[0, 0])) == ["(pos 1)", "(round 1)"]
    assert result.state_to_kif(int(children[0, 1])) == ["(pos 0)", "(round 1)"]
    ends = dag.terminal
    assert sorted(dag.payoff[ends, 0].tolist()) == [0, 40, 70, 100]


def test_three_players_turn_based() -> None:
    result = compare(load_machine(NIM3, engine="compiled"))
    dag = result.joint
    assert result.players == (0, 1, 2) and dag.player_names == ("a", "b", "c")
    assert dag.num_states == 9            # by hand: see the game's comment
    assert dag.counts[0].tolist() == [2, 1, 1]
    assert kif_moves(result, 0) == [["(take 1)", "(take 2)"], ["noop"], ["noop"]]
    assert sorted(dag.payoff[dag.terminal].tolist()) == [[0, 0, 100], [0, 100, 0],
                                                         [100, 0, 0]]
    # b moves next: a state where only the second player has a choice
    second = int(dag.children(0)[0, 0, 0, 0])
    assert dag.counts[second].tolist() == [1, 2, 1]
    assert expand_states(result.machine, budget=UNLIMITED).constant_sum == 100.0


def test_three_players_simultaneous_with_nature_amid_the_roles() -> None:
    result = compare(load_machine(PICKSUM3, engine="compiled"))
    dag = result.joint
    # roles a, b, random, c: the players are a, b, c; nature's outcomes vary fastest
    assert result.players == (0, 1, 3) and result.nature == 2
    assert dag.player_names == ("a", "b", "c")
    assert kif_moves(result, 0) == [["(pick 0)", "(pick 1)"],
                                    ["(pick 0)", "(pick 1)", "(pick 2)"],
                                    ["(pick 0)", "(pick 1)"], ["(coin 0)", "(coin 1)"]]
    # by hand: the root, totals 0-3 after round 1 and after round 2; the entries:
    # 2 * 3 * 2 * 2 at the root, then 2 * 3 * (2 + 1 + 3 + 2) * 2 after round 1
    assert dag.num_states == 9 and dag.num_entries == 24 + 96
    children = dag.children(0)
    assert children.shape == (2, 3, 2, 2)
    total = {int(children[x, y, w, k]): (x + y + w + k) % 4
             for x in range(2) for y in range(3) for w in range(2) for k in range(2)}
    for s, value in total.items():
        assert f"(total {value})" in result.state_to_kif(s)
    # c's moves at total 3 are 1 and 3: the state's counts are (2, 3, 2), nature 2
    three = next(s for s, value in total.items() if value == 3)
    assert dag.counts[three].tolist() == [2, 3, 2] and dag.nk[three] == 2
    assert kif_moves(result, three)[2] == ["(pick 1)", "(pick 3)"]
    with pytest.raises(UnsupportedGame, match="3 players .a, b, c.: not supported by exact"):
        result.dag  # noqa: B018


def test_corpus_puzzle_hanoi() -> None:
    machine = load_machine(shared_path("gdl-corpus", "repository", "hanoi.kif"),
                           engine="compiled")
    assert compare(machine).joint.num_states == 2_753


def late_state(machine: StateMachine, steps: int, seed: int) -> State:
    """The state after ``steps`` random joint moves (the subgames below are small)."""
    rng = random.Random(seed)
    state = machine.initial_state()
    for _ in range(steps):
        legal = machine.legal_joint_moves(state)
        state = machine.next_state(state, tuple(rng.choice(moves) for moves in legal))
        assert not machine.is_terminal(state)
    return state


def test_corpus_three_player_subgame() -> None:
    # tic-tac-toe of three players on 5 x 5 (whole: millions of states), below move 17
    machine = load_machine(shared_path("gdl-corpus", "repository", "tictactoe_3player.kif"),
                           engine="compiled")
    root = late_state(machine, 17, seed=3)
    result = compare(machine, root)
    assert result.state(0) == root and result.joint.num_players == 3
    assert result.joint.num_states == 3_216


def oracle_reachable(game: Path, tmp_path: Path) -> int:
    """The SWI-Prolog oracle's count of reachable states (skips without it)."""
    oracle = shared_path("oracle")
    if shutil.which("swipl") is None:
        pytest.skip("SWI-Prolog (swipl) is not installed")
    program = tmp_path / f"{game.stem}.pl"
    program.write_text(subprocess.run([sys.executable, str(oracle / "kif2lp.py"), "pl",
                                       str(game)], check=True, capture_output=True,
                                      text=True, timeout=60).stdout)
    run = subprocess.run(["swipl", "-q", "-g", "reachable(C), write(C), nl", "-t", "halt",
                          str(oracle / "gdl_oracle.pl"), str(program)],
                         capture_output=True, text=True, timeout=120, check=True)
    return int(run.stdout.split()[-1])


@pytest.mark.parametrize("game", [HANOI3, COINWALK, NIM3, PICKSUM3], ids=lambda p: p.stem)
def test_reachable_states_equal_the_oracles_count(game: Path, tmp_path: Path,
                                                  kernels: str) -> None:  # noqa: F811
    if kernels == "numpy":
        pytest.skip("the count does not depend on the kernels")
    expansion = expand_joint(load_machine(game, engine="compiled"), budget=UNLIMITED)
    assert expansion.joint.num_states == oracle_reachable(game, tmp_path)


# A puzzle whose states form a cycle: flipping on and off need not end.
CYCLE_PUZZLE = """
(role p) (init on)
(<= (legal p flip) (role p)) (<= (legal p stop) (role p))
(<= (next off) (true on) (does p flip))
(<= (next on) (true off) (does p flip))
(<= (next done) (does p stop))
(<= terminal (true done)) (<= (goal p 50) (role p))
"""


@pytest.mark.parametrize("batched", [True, False])
def test_a_puzzles_cycle_is_reported(batched: bool) -> None:
    with pytest.raises(UnsupportedGame, match=r"cycle.*repeated state: \{(on|off)\}"):
        expand_joint(load_machine(CYCLE_PUZZLE, engine="compiled"), batched=batched)


def test_two_player_paths_refuse_other_counts_and_roles_of_takes_any() -> None:
    machine = load_machine(NIM3, engine="compiled")
    message = "3 players (a, b, c): not supported by exact solvers"
    for two_player_only in (expand_dag, expand):
        with pytest.raises(UnsupportedGame, match=message.replace("(", r"\(").replace(")", r"\)")):
            two_player_only(machine)
    assert roles_of(["a", "random", "b", "c"]) == ((0, 2, 3), 1)
    assert roles_of(["solo"]) == ((0,), None)
    with pytest.raises(UnsupportedGame, match="^the game declares no role$"):
        roles_of([])
    with pytest.raises(UnsupportedGame, match="only role is random"):
        roles_of(["random"])
    with pytest.raises(UnsupportedGame, match="^1 player .solo.: not supported"):
        players_of(["solo"])


def test_two_player_expansion_keeps_its_state_dag() -> None:
    # a two-player game's DagExpansion: the StateDag is the JointDag's two columns
    result = expand_dag(load_machine(NIM, engine="compiled"), budget=UNLIMITED)
    dag, joint = result.dag, result.joint
    assert result.dag is dag and dag.n0.flags.c_contiguous  # cached, contiguous
    assert np.array_equal(np.stack([dag.n0, dag.n1], axis=1), joint.counts)
    assert dag.entry_child is joint.entry_child and dag.player_names == joint.player_names
