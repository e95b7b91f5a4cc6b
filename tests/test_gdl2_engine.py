"""GDL-II percepts (``sees``) in both engines, on the games of games/gdl2."""

from __future__ import annotations

import importlib
import random
import sys
from types import ModuleType

import pytest
from conftest import GAMES, shared_path

from gdl.reasoning.machine import StateMachine, load_machine

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


# ------------------------------------------------------------------ the oracle


def clingo_oracle() -> ModuleType:
    """../shared/oracle/clingo_oracle.py (skips without it or without clingo)."""
    pytest.importorskip("clingo")
    folder = str(shared_path("oracle", "clingo_oracle.py").parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return importlib.import_module("clingo_oracle")


def oracle_percepts(oracle: ModuleType, program: str, state: list[str],
                    moves: dict[str, str]) -> dict[str, list[str]]:
    """The oracle's ``sees`` atoms for a state and joint move, by role, sorted. The
    oracle's trace queries leave ``sees`` out, so this asks clingo directly."""
    import clingo

    facts = [f"true({oracle.asp_term(oracle.parse(f)[0])})." for f in state]
    facts += [f"does({oracle.asp_term(r)},{oracle.asp_term(oracle.parse(m)[0])})."
              for r, m in moves.items()]
    control = clingo.Control(["--warn=none"])
    control.add("base", [], program + "\n".join(facts))
    control.ground([("base", [])])
    seen: dict[str, set[str]] = {}
    models = 0
    with control.solve(yield_=True) as handle:
        for model in handle:
            models += 1
            for atom in model.symbols(atoms=True):
                if atom.name == "sees" and len(atom.arguments) == 2:
                    role, percept = (oracle.kif_str(a) for a in atom.arguments)
                    seen.setdefault(role, set()).add(percept)
    assert models == 1
    return {role: sorted(found) for role, found in seen.items()}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("path", GDL2, ids=lambda p: p.stem)
def test_percepts_equal_the_oracle_in_random_playouts(path, engine: str) -> None:
    """Percepts, and legal moves, next states, terminal and goals as well."""
    oracle = clingo_oracle()
    program = oracle.to_asp(oracle.parse(path.read_text()))
    reference = oracle.ClingoGDL(path.read_text())
    m = load_machine(path, engine=engine)
    rng = random.Random(11)
    checked = 0
    for _ in range(4):
        state = m.initial_state()
        while True:
            facts = m.state_to_kif(state)
            terminal = m.is_terminal(state)
            if terminal:
                expected = reference.query(facts)
                assert expected["terminal"]
                assert {r: [str(g)] for r, g in zip(m.roles, m.goals(state), strict=True)
                        if r in expected["goals"]} == expected["goals"]
                break
            joint = [rng.choice(m.legal_moves(state, r)) for r in range(len(m.roles))]
            moves = {role: m.move_to_kif(mv) for role, mv in zip(m.roles, joint, strict=True)}
            expected = reference.query(facts, moves)
            assert not expected["terminal"]
            assert {r: [m.move_to_kif(mv) for mv in m.legal_moves(state, i)]
                    for i, r in enumerate(m.roles)} == expected["legal"]
            seen = oracle_percepts(oracle, program, facts, moves)
            ours = m.percepts(state, joint)
            state = m.next_state(state, joint)
            assert m.state_to_kif(state) == expected["next"]
            assert {role: list(p) for role, p in zip(m.roles, ours, strict=True) if p} == \
                {role.lower(): p for role, p in seen.items()}
            checked += 1
    assert checked >= 8
