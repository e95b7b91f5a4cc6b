"""GDL-II percepts (``sees``) in both engines, on the games of games/gdl2."""

from __future__ import annotations

import random

import pytest
from conftest import GAMES

from gdl.machine import StateMachine, load_machine

GDL2 = sorted((GAMES / "gdl2").glob("*.kif"))
ENGINES = ("general", "compiled")


def machine(name: str, engine: str) -> StateMachine:
    return load_machine(GAMES / "gdl2" / f"{name}.kif", engine=engine)


def play(m: StateMachine, moves: list[list[str]]) -> list[tuple[tuple[str, ...], ...]]:
    """The percepts of each step of a scripted play (moves as KIF, one per role)."""
    state = m.initial_state()
    seen = []
    for kifs in moves:
        joint = [m.parse_move(k, r) for r, k in enumerate(kifs)]
        assert all(mv in m.legal_moves(state, r) for r, mv in enumerate(joint)), kifs
        seen.append(m.percepts(state, joint))
        state = m.next_state(state, joint)
    assert m.is_terminal(state)
    return seen


@pytest.mark.parametrize("engine", ENGINES)
def test_kuhn_each_player_sees_only_its_own_card(engine: str) -> None:
    m = machine("kuhn_poker", engine)
    assert m.engine_name == engine and m.has_sees
    assert m.roles == ("first", "second", "random")
    seen = play(m, [["noop", "noop", "(deal queen king)"], ["bet", "noop", "noop"],
                    ["noop", "call", "noop"]])
    assert seen[0] == (("(your_card queen)",), ("(your_card king)",), ())
    assert seen[1] == (("(did first bet)",), ("(did first bet)",), ())
    assert seen[2] == (("(did second call)",), ("(did second call)",), ())


@pytest.mark.parametrize("engine", ENGINES)
def test_monty_hall_contestant_sees_the_opened_door_only(engine: str) -> None:
    m = machine("monty_hall", engine)
    seen = play(m, [["(choose 1)", "(hide_car 2)"], ["noop", "(open_door 3)"],
                    ["switch", "noop"]])
    assert seen == [((), ()), (("(opened 3)",), ()), ((), ())]
    # the host never opens the pick or the car: one door left to open here
    state = m.next_state(m.initial_state(), [m.parse_move("(choose 1)", 0),
                                             m.parse_move("(hide_car 2)", 1)])
    assert [m.move_to_kif(x) for x in m.legal_moves(state, 1)] == ["(open_door 3)"]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_gdl_game_has_no_percepts(engine: str) -> None:
    m = load_machine(GAMES / "gdl" / "goofspiel_2.kif", engine=engine)
    state = m.initial_state()
    joint = [m.legal_moves(state, r)[0] for r in range(len(m.roles))]
    assert not m.has_sees
    assert m.percepts(state, joint) == ((), ())


@pytest.mark.parametrize("path", GDL2, ids=lambda p: p.stem)
def test_engines_agree_on_percepts_in_random_playouts(path) -> None:
    general = load_machine(path, engine="general")
    compiled = load_machine(path, engine="compiled")
    assert general.has_sees and compiled.has_sees
    assert general.roles == compiled.roles
    rng = random.Random(7)
    for _ in range(30):
        a, b = general.initial_state(), compiled.initial_state()
        while not general.is_terminal(a):
            joint = [rng.choice(general.legal_moves(a, r)) for r in range(len(general.roles))]
            other = [compiled.parse_move(general.move_to_kif(mv), r) for r, mv in enumerate(joint)]
            assert general.percepts(a, joint) == compiled.percepts(b, other)
            a, b = general.next_state(a, joint), compiled.next_state(b, other)
        assert compiled.is_terminal(b) and general.goals(a) == compiled.goals(b)


@pytest.mark.parametrize("engine", ENGINES)
def test_krieg_a_move_on_an_occupied_cell_fails_and_only_the_mover_learns_it(engine: str) -> None:
    m = machine("krieg_tictactoe", engine)
    moves = [["(mark 2 2)", "noop"], ["noop", "(mark 2 2)"], ["(mark 1 1)", "noop"],
             ["noop", "(mark 1 3)"], ["(mark 3 3)", "noop"]]
    seen = play(m, moves)  # x wins on the diagonal; o's try on the centre failed
    assert seen == [(("(placed 2 2)",), ()), ((), ("(occupied 2 2)",)),
                    (("(placed 1 1)",), ()), ((), ("(placed 1 3)",)), (("(placed 3 3)",), ())]
    state = m.initial_state()
    for kifs in moves[:2]:
        state = m.next_state(state, [m.parse_move(k, r) for r, k in enumerate(kifs)])
    # o's failed try left the board as it was, the turn passed, and o will not try 2 2 again
    assert "(cell 2 2 x)" in m.state_to_kif(state)
    assert "(mark 2 2)" not in {m.move_to_kif(x) for x in m.legal_moves(state, 1)}
    assert m.legal_moves(state, 1) == (m.parse_move("noop", 1),)


@pytest.mark.parametrize("engine", ENGINES)
def test_leduc_players_see_ranks_the_board_and_the_betting(engine: str) -> None:
    m = machine("leduc_holdem", engine)
    seen = play(m, [["noop", "noop", "(deal q2 j1)"], ["raise", "noop", "noop"],
                    ["noop", "call", "noop"], ["noop", "noop", "(reveal j2)"],
                    ["check", "noop", "noop"], ["noop", "raise", "noop"],
                    ["fold", "noop", "noop"]])
    assert seen[0] == (("(your_card queen)",), ("(your_card jack)",), ())
    assert seen[3] == (("(board jack)",), ("(board jack)",), ())
    assert seen[6] == (("(did first fold)",), ("(did first fold)",), ())
