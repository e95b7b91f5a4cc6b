"""``terminal`` tested through what a move changed equals the full test."""

from __future__ import annotations

import random

import pytest

from gdl.reasoning.compile import CompiledMachine
from gdl.reasoning.machine import load_machine
from gdl.reasoning.terminal_delta import CALIBRATION
from tests.conftest import GAMES, shared_path

# board games whose terminal reads lines, an open board (negated whole in the
# simultaneous ones), a step counter or piece counts
CORPUS = ["connectFour", "connectFourSimultaneous", "dualConnect4", "nineBoardTicTacToe",
          "pentagoSuicide", "breakthrough", "breakthroughSuicideSmall", "knightThrough",
          "doubletictactoe", "ticTacToe", "tictactoe_3d_small_2player", "sheepAndWolf",
          "catcha_mouse", "point_grab", "chickentictactoe", "bomberman2p", "checkers",
          "blocker", "pacman3p", "chinook"]
PLAYOUTS = 40
# games whose playouts run long (checkers ~100 steps, pacman3p ~45): fewer of them still
# give over 2 * CALIBRATION pairs (and _pairs goes on until there are)
LONG_PLAYOUTS = {"checkers": 6, "pacman3p": 15}


def _pairs(machine: CompiledMachine, playouts: int = PLAYOUTS,
           least: int = 2 * CALIBRATION) -> list[tuple[int, int]]:
    """(parent, child) pairs along ``playouts`` random playouts or more, until there
    are ``least``: parents are never terminal."""
    rng, out = random.Random(11), []
    while playouts > 0 or len(out) < least:
        playouts -= 1
        state, steps = machine.initial_state(), 0
        while not machine.is_terminal(state) and steps < 200:
            joint = [rng.choice(legal) for legal in machine.legal_joint_moves(state)]
            child = machine.next_state(state, joint)
            out.append((state, child))
            state, steps = child, steps + 1
    return out


def _check(machine: CompiledMachine, playouts: int = PLAYOUTS) -> None:
    pairs = _pairs(machine, playouts)
    expected = [machine.is_terminal(child) for _, child in pairs]
    assert any(expected)
    # through the calibration, and then whichever test it chose
    assert [machine.terminal_after(p, c) for p, c in pairs] == expected
    assert machine._delta_terminal.samples is None
    delta = machine._delta_terminal
    if delta.tests:   # the flat form itself, whatever the timing chose
        assert [delta._delta(p, c) for p, c in pairs] == expected


@pytest.mark.parametrize("name", CORPUS)
def test_terminal_after_a_move_equals_the_full_test(name: str) -> None:
    machine = load_machine(shared_path("gdl-corpus", "repository", f"{name}.kif"),
                           engine="compiled")
    _check(machine, LONG_PLAYOUTS.get(name, PLAYOUTS))


def test_terminal_after_on_a_bundled_game() -> None:
    _check(load_machine(GAMES / "gdl" / "simultaneous_tictactoe.kif", engine="compiled"))


def test_a_negation_that_multiplies_out_is_kept_whole() -> None:
    # not boardOpen: boardOpen is 14 columns' "top cell neither red nor black",
    # 2^14 conjunctions negated; kept as one test over the top row's 28 bits
    machine = load_machine(shared_path("gdl-corpus", "repository",
                                       "connectFourSimultaneous.kif"), engine="compiled")
    _check(machine)
    assert machine._delta_terminal.tests


RECURSIVE = """
(role a) (init (at 0)) (succ 0 1) (succ 1 2) (succ 2 3)
(link 0 1) (link 1 2) (link 2 0) (link 2 3)
(<= (legal a go) (true (at ?x)))
(<= (next (at ?y)) (true (at ?x)) (succ ?x ?y))
(<= (reach ?y) (true (at ?y)))
(<= (reach ?y) (link ?x ?y) (reach ?x))
(<= terminal (true (at 3)) (reach 3))
(<= (goal a 100) (true (at 3)))
(<= (goal a 0) (not (true (at 3))))
"""


def test_a_recursive_terminal_gets_the_full_test() -> None:
    machine = load_machine(RECURSIVE, engine="compiled")
    pairs = _pairs(machine, playouts=1, least=0)
    assert [machine.terminal_after(p, c) for p, c in pairs] == [False, False, True]
    assert not machine._delta_terminal.tests and machine._delta_terminal.use_full
