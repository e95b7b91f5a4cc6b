"""Moves that win by themselves (gdl/reasoning/win_moves.py) and the playouts that take
them (the ``wins`` switch: gdl/reasoning/playout_kernels.py, agent/search/playouts.py).

1. The analysis, against the per-state engine: breakthrough's and knightThrough's
   winning moves are exactly the moves onto the far row; each one, wherever it is
   legal on states reached by random play, ends the game with its role's best goal;
   connectFour, connectFourSimultaneous and reversi (wins need more than one move's
   fact, or the other role's) have none.
2. The compiled playouts with ``wins``: their lines replay as legal in the engine and
   score their end; at every step where the mover has a winning move, it plays one
   (so the playout ends there, won); without the switch they miss some.
3. With ``defend`` too (anti-decisive moves): the lines still replay and score their
   end, and a move after which the other role can win at once is played only when
   every legal move of its role allows that.
4. The agent's batched playouts, compiled and numpy: from a state where the mover has
   a winning move, every playout scores the win.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from test_gdl_playout_kernels import game, reached, replay

import gdl.reasoning.kernels
from agent.search.playouts import BatchPlayouts, PlayoutPolicy
from gdl.reasoning.batch_machine import pack_ints
from gdl.reasoning.win_moves import winning_moves, winning_moves_of

pytestmark = pytest.mark.skipif(not gdl.reasoning.kernels.KERNELS.enabled,
                                reason="numba is not installed (or GGP_NUMBA=0)")


def moves_of(machine) -> list:
    return list(machine._move_atoms)


def far_row(move) -> bool:
    """A move onto the mover's last row: (does white (move x1 y1 x2 8)), black's to 1."""
    _, role, action = move
    return action != "noop" and action[4] == ("8" if role == "white" else "1")


def winners(machine, state, wins: np.ndarray) -> list[tuple[int, int]]:
    """(role, move column) of the legal winning moves at ``state``."""
    legal = machine.legal_joint_moves(state)
    return [(r, int(c)) for r, moves in enumerate(legal) for c in np.flatnonzero(wins)
            if 1 << int(c) in moves]


@pytest.mark.parametrize("name", ["breakthrough", "knightThrough"])
def test_a_race_games_winning_moves_are_its_moves_onto_the_far_row(name: str) -> None:
    machine, net = game(name)
    wins = winning_moves(net.batch)
    assert [i for i, move in enumerate(moves_of(machine)) if far_row(move)] \
        == np.flatnonzero(wins).tolist()
    states, _ = reached(machine, seed=5, playouts=40, steps=80)
    tried = 0
    for state in states:
        if machine.is_terminal(state):
            continue
        legal = machine.legal_joint_moves(state)
        for role, column in winners(machine, state, wins):
            joint = [moves[0] for moves in legal]
            joint[role] = 1 << column
            child = machine.next_state(state, joint)
            assert machine.is_terminal(child) and machine.goals(child)[role] == 100
            tried += 1
    assert tried >= 20


@pytest.mark.parametrize("name", ["connectFour", "connectFourSimultaneous", "reversi"])
def test_games_won_by_several_facts_have_no_move_that_wins_by_itself(name: str) -> None:
    _, net = game(name)
    assert not winning_moves_of(net.batch).any()


def test_compiled_playouts_with_wins_play_every_winning_move_they_can() -> None:
    machine, net = game("breakthrough")
    wins = winning_moves(net.batch)
    states, _ = reached(machine, seed=7, playouts=6, steps=40)
    starts = ([s for s in states if not machine.is_terminal(s)] * 30)[:100]
    missed = {}
    for taking in (True, False):
        result = net.play(pack_ints(starts, net.n_words), limit=10_000, seed=3,
                          trace_steps=300, wins=taking)
        missed[taking] = 0
        for k, start in enumerate(starts):
            moves = result.trace[k, :int(result.steps[k])]
            end, terminal = replay(machine, start, moves)
            assert terminal and result.rewards[k].tolist() == [g / 100 for g in machine.goals(end)]
            state = start
            for joint in moves:
                could = winners(machine, state, wins)
                if could:
                    won = any(int(joint[r]) == c for r, c in could)
                    missed[taking] += not won
                    if taking:
                        assert won
                state = machine.next_state(state, [1 << int(m) for m in joint])
    assert missed[True] == 0 and missed[False] > 10


def leaves_a_win(machine, state, joint, role: int, column: int, wins: np.ndarray) -> bool:
    """Whether ``role`` playing move ``column`` (the others as in ``joint``) leaves
    another role a legal winning move in a non-terminal state."""
    child = machine.next_state(state, [1 << (column if r == role else int(m))
                                       for r, m in enumerate(joint)])
    return not machine.is_terminal(child) and any(
        r != role for r, _ in winners(machine, child, wins))


def test_compiled_playouts_that_defend_leave_a_win_in_one_only_when_they_must() -> None:
    machine, net = game("breakthrough")
    wins = winning_moves(net.batch)
    states, _ = reached(machine, seed=11, playouts=6, steps=40)
    starts = ([s for s in states if not machine.is_terminal(s)] * 30)[:100]
    result = net.play(pack_ints(starts, net.n_words), limit=10_000, seed=5, mode=2,
                      temperature=0.2, values=np.random.default_rng(2).random(net.n_moves),
                      record=True, trace_steps=300, wins=True, defend=True)
    forced = 0
    for k, start in enumerate(starts):
        moves = result.trace[k, :int(result.steps[k])]
        assert set(moves.ravel().tolist()) <= set(np.flatnonzero(result.played[k]).tolist())
        end, terminal = replay(machine, start, moves)
        assert terminal and result.rewards[k].tolist() == [g / 100 for g in machine.goals(end)]
        state = start
        for joint in moves:
            legal = machine.legal_joint_moves(state)
            chooser = [r for r, options in enumerate(legal) if len(options) > 1]
            if len(chooser) == 1 and leaves_a_win(machine, state, joint, chooser[0],
                                                  int(joint[chooser[0]]), wins):
                forced += 1
                assert all(leaves_a_win(machine, state, joint, chooser[0],
                                        int(m).bit_length() - 1, wins)
                           for m in legal[chooser[0]])
            state = machine.next_state(state, [1 << int(m) for m in joint])
    assert forced >= 1


@pytest.mark.parametrize("compiled", [True, False])
def test_the_agents_playouts_with_wins_score_a_win_in_one(compiled: bool, monkeypatch) -> None:
    machine, net = game("knightThrough")
    wins = winning_moves(net.batch)
    states, _ = reached(machine, seed=9, playouts=40, steps=60)
    ready = [(s, winners(machine, s, wins)) for s in states if not machine.is_terminal(s)]
    ready = [(s, could[0][0]) for s, could in ready if could]
    assert len(ready) >= 5
    playouts = BatchPlayouts(machine, PlayoutPolicy(mast=True, temperature=0.2, wins=True),
                             (), random.Random(1))
    if not compiled:
        monkeypatch.setattr(playouts, "net", None)
    for state, role in ready[:5]:
        rewards, _ = playouts.run_packed(pack_ints([state] * 200, net.n_words), None)
        assert (rewards[:, role] == 1.0).all()
