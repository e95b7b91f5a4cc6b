"""Trap values: the agent's solved play steers toward the opponent's mistakes, safely.

On ticTicToe (simultaneous tic-tac-toe, value 50) solved at the start, a trap move
(``exact-trap``: a pure move chosen for the mistakes a fallible opponent may make)
must keep the exact value against every reply. (A move drawn from a mixed
equilibrium keeps it only in expectation.)
"""

from __future__ import annotations

import random
import time

import pytest
from conftest import shared_path

from agent.brains.gdl import GdlBrain
from agent.brains.options import BrainOptions, GameSpec
from solvers.search import solve_exact


@pytest.mark.parametrize("role", ["xplayer", "oplayer"])
def test_trap_moves_keep_the_exact_value_against_every_reply(role: str) -> None:
    text = shared_path("gdl-corpus", "repository", "ticTicToe.kif").read_text()
    brain = GdlBrain(GameSpec("gdl", text, "ticTicToe"), role, BrainOptions(seed=2))
    brain.metagame(time.monotonic() + 1)
    machine, me = brain.machine, brain.role
    root = solve_exact(machine, machine.initial_state(), node_budget=1_000_000,
                       table=brain.exact)  # the brain's own table, whatever the load
    brain.exact[machine.initial_state()] = root.exact.value
    other = 1 - me
    rng = random.Random(4)
    methods: list[str] = []
    for _ in range(4):  # matches against a random opponent
        state, last = machine.initial_state(), None
        brain.state, brain.step = state, 0
        while not machine.is_terminal(state):
            brain.advance(last)
            move, info = brain.select(time.monotonic() + 0.3)
            methods.append(info["method"])
            value = brain.exact[state][me] if state in brain.exact else None
            mine = machine.parse_move(move, me)
            replies = machine.legal_moves(state, other)
            if info["method"] == "exact-trap":
                assert value is not None
                for reply in replies:
                    joint = [None, None]
                    joint[me], joint[other] = mine, reply
                    kid = machine.next_state(state, joint)
                    got = (brain.exact[kid][me] if kid in brain.exact
                           else machine.goals(kid)[me])
                    assert got >= value - 1e-6, (info, move, machine.move_to_kif(reply))
            joint = [None, None]
            joint[me], joint[other] = mine, rng.choice(replies)
            last = [machine.move_to_kif(m) for m in joint]
            state = machine.next_state(state, joint)
    assert methods.count("exact-trap") >= 4
