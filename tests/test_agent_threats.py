"""Forced wins by threat sequences (agent/search/threats.py) and the ``threats`` check of
the search's move (agent/brains/gdl_threats.py).

1. Every win the threat search finds on random knightThrough and breakthrough states is
   a proof: replayed through the compiled machine, its move is legal and every reply
   of the defender is answered, to the end, within the plies it claims.
2. It applies where both roles have moves that win by themselves, not to connectFour.
3. A position of a match lost to Sancho (knightThrough, 2026-11-29, our agent black):
   the search played a move after which Sancho won in 5 plies. The check refutes it
   (a proof), and plays a move the threat search finds no forced loss after.
4. The agent, by default, builds the check on the start clock and plays, there, a move
   after which the threat search finds no forced loss (28 of the 30 have one).
5. Where both roles choose (chinook), the search's move stands.
6. The kernels' warm-up compiles the step the threat search calls (a match's first
   check compiled it within the move, past its deadline).
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np
import pytest
from test_gdl_playout_kernels import game, game_path, reached

from agent.brains import gdl
from agent.brains.gdl_threats import THREAT_PLIES, threat_move
from agent.brains.options import BrainOptions, GameSpec
from agent.search import graph
from agent.search.threats import ThreatSearch
from gdl.reasoning import kernels
from gdl.reasoning.batch_machine import pack_ints
from gdl.reasoning.win_moves import winning_moves_of

# knightThrough.1795917599357.1.a436 (versus-sancho-30-5-knightthrough at fabb99f): the
# first 25 moves (white's, then black's), then black's (ours) at step 26
MATCH = ["(move 2 2 3 4)", "(move 5 7 6 5)", "(move 7 2 5 3)", "(move 6 7 5 5)",
         "(move 3 4 5 5)", "(move 4 7 5 5)", "(move 5 3 6 5)", "(move 7 7 6 5)",
         "(move 8 1 7 3)", "(move 6 5 7 3)", "(move 5 2 7 3)", "(move 8 7 7 5)",
         "(move 7 3 8 5)", "(move 2 8 3 6)", "(move 3 1 2 3)", "(move 3 7 2 5)",
         "(move 2 1 3 3)", "(move 3 6 4 4)", "(move 2 3 4 4)", "(move 2 5 1 3)",
         "(move 3 2 1 3)", "(move 4 8 5 6)", "(move 4 4 6 5)", "(move 7 5 8 3)",
         "(move 6 2 8 3)"]
PLAYED = "(move 5 5 7 4)"


@pytest.fixture(scope="module", autouse=True)
def compiled():
    if kernels.compiled(kernels.MIN_ITEMS) is None or graph.KERNELS.load() is None:
        pytest.skip("the compiled kernels do not load")


def _search(name: str):
    machine, net = game(name)
    return machine, ThreatSearch(net, winning_moves_of(net.batch))


def _joint(machine, state, role: int, move: int) -> list[int]:
    legal = machine.legal_joint_moves(state)
    return [move if r == role else legal[r][0] for r in range(len(legal))]


def _proves(machine, threats: ThreatSearch, state, attacker: int, plies: int) -> bool:
    """Whether the threat search's win from ``state`` within ``plies`` holds, every
    reply replayed through ``machine``."""
    found = threats.forced_win(pack_ints([state], threats.net.n_words)[0], attacker, plies)
    if found is None or found.plies > plies:
        return False
    move = 1 << found.move
    assert move in machine.legal_joint_moves(state)[attacker]
    child = machine.next_state(state, _joint(machine, state, attacker, move))
    if machine.is_terminal(child):
        return machine.goals(child)[attacker] == 100
    if found.plies < 3:
        return False
    for reply in machine.legal_joint_moves(child)[1 - attacker]:
        grand = machine.next_state(child, _joint(machine, child, 1 - attacker, reply))
        if machine.is_terminal(grand):
            if machine.goals(grand)[attacker] != 100:
                return False
        elif not _proves(machine, threats, grand, attacker, found.plies - 2):
            return False
    return True


@pytest.mark.parametrize("name", ["knightThrough", "breakthrough"])
def test_every_forced_win_found_is_a_proof(name: str) -> None:
    machine, threats = _search(name)
    states, _ = reached(machine, seed=2, playouts=6, steps=60)
    by_plies: dict[int, int] = {}
    for state in states[::2]:
        if machine.is_terminal(state):
            continue
        mover = next(r for r, legal in enumerate(machine.legal_joint_moves(state))
                     if len(legal) > 1)
        found = threats.forced_win(pack_ints([state], threats.net.n_words)[0], mover, 5)
        if found is not None:
            by_plies[found.plies] = by_plies.get(found.plies, 0) + 1
            assert _proves(machine, threats, state, mover, found.plies)
    assert by_plies.get(1, 0) > 0 and by_plies.get(3, 0) > 0, by_plies


def test_it_applies_where_both_roles_have_winning_moves() -> None:
    assert _search("knightThrough")[1].applies
    assert not _search("connectFour")[1].applies


def _position(machine):
    """The state before our (black's) move at step 26 of the match lost to Sancho."""
    state = machine.initial_state()
    for step, kif in enumerate(MATCH):
        role = step % 2
        state = machine.next_state(state, _joint(machine, state, role,
                                                 machine.parse_move(kif, role)))
    return state


def test_the_move_that_lost_to_sancho_is_refuted_and_replaced() -> None:
    machine, threats = _search("knightThrough")
    state = _position(machine)
    black = 1
    moves = machine.legal_joint_moves(state)[black]
    played = machine.parse_move(PLAYED, black)
    after = machine.next_state(state, _joint(machine, state, black, played))
    assert _proves(machine, threats, after, 0, 5)   # white (Sancho) wins in 5
    # the search's result: the played move the most visited, the others by index
    visits = np.arange(len(moves), 0, -1, dtype=float)
    visits[moves.index(played)] = 10.0 * len(moves)
    result = SimpleNamespace(moves=(None, tuple(moves)), strategy=(None, visits / visits.sum()))
    info: dict = {}
    move = threat_move(threats, machine, state, black, result, played, float("inf"), info)
    assert move != played and info["threats"].endswith("refuted")
    child = machine.next_state(state, _joint(machine, state, black, move))
    found = threats.forced_win(pack_ints([child], threats.net.n_words)[0], 0, THREAT_PLIES)
    assert found is None


def test_the_agent_plays_a_move_the_threat_search_does_not_refute(monkeypatch) -> None:
    # time enough for the checks on a loaded machine: this tests what is played
    monkeypatch.setattr(gdl, "THREAT_SHARE", 0.6)
    text = game_path("knightThrough").read_text()
    brain = gdl.GdlBrain(GameSpec("gdl", text), "black", BrainOptions(seed=3, presolve_nodes=0),
                         until=time.monotonic() + 60)
    assert brain.metagame(time.monotonic() + 6)["threats"] == "on"
    machine, threats = brain.machine, brain._threats()
    brain.state = _position(machine)
    kif, info = brain.select(time.monotonic() + 5)
    child = machine.next_state(brain.state, _joint(machine, brain.state, 1,
                                                   machine.parse_move(kif, 1)))
    n_words = threats.net.n_words
    assert threats.forced_win(pack_ints([child], n_words)[0], 0, THREAT_PLIES) is None, info


def test_the_kernels_warm_up_compiles_the_step_the_threat_search_calls() -> None:
    from gdl.reasoning import playout_kernels

    playout_kernels.warm_up()
    warmed = set(playout_kernels.step.signatures)
    machine, threats = _search("breakthrough")
    threats.forced_win(pack_ints([machine.initial_state()], threats.net.n_words)[0], 0, 3)
    assert set(playout_kernels.step.signatures) == warmed and len(warmed) == 1


def test_where_both_roles_choose_the_searchs_move_stands() -> None:
    machine, threats = _search("chinook")
    assert threats.applies   # both roles have moves that win by themselves
    state = machine.initial_state()
    moves = machine.legal_joint_moves(state)
    assert min(len(m) for m in moves) > 1
    result = SimpleNamespace(moves=tuple(map(tuple, moves)),
                             strategy=tuple(np.full(len(m), 1.0 / len(m)) for m in moves))
    info: dict = {}
    chosen = moves[0][-1]
    assert threat_move(threats, machine, state, 0, result, chosen, float("inf"), info) == chosen
    assert "threats" not in info
