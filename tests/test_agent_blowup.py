"""Item 9 of issue 32: games whose grounding blows up still get legal moves, from the
general prover one at a time (agent.brains.legal, GeneralMachine.legal_moves_upto)."""

from __future__ import annotations

import time

from agent.brains.factory import make_brain
from agent.brains.gdl import SEARCHABLE_MOVES
from agent.brains.legal import LEGAL_LISTED, LegalBrain
from agent.brains.options import BrainOptions, GameSpec
from gdl.reasoning.machine import load_machine

DIGITS = " ".join(f"(num {i})" for i in range(21))
# one role with 21^5 = 4.08 M legal moves
WIDE = f"""(role p) (init (step 0)) {DIGITS}
(<= (legal p (pick ?a ?b ?c ?d ?e)) (num ?a) (num ?b) (num ?c) (num ?d) (num ?e))
(<= (next (step 1)) (true (step 0)))
(<= terminal (true (step 1)))
(goal p 100)"""
VARS = " ".join(f"?x{i}" for i in range(300))
# a 300-argument relation over {0, 1}: 2^300 rows; the only legal move is go
HUGE = f"""(role p) (init (step 0)) (bit 0) (bit 1)
(<= (big {VARS}) {" ".join(f"(bit ?x{i})" for i in range(300))})
(<= (legal p go) (true (step 0)))
(<= (next (step 1)) (true (step 0)))
(<= (next (odd)) (big {" ".join("1" for _ in range(300))}))
(<= terminal (true (step 1)))
(goal p 100)"""


def test_the_general_machine_lists_the_first_of_millions_of_moves() -> None:
    machine = load_machine(WIDE, engine="general", name="wide")
    started = time.monotonic()
    moves = machine.legal_moves_upto(machine.initial_state(), 0, 5)
    assert len(moves) == 5 and time.monotonic() - started < 30
    assert all(machine.move_to_kif(m).startswith("(pick ") for m in moves)


def test_the_legal_brain_answers_legal_moves_of_both_blowups() -> None:
    wide = LegalBrain(GameSpec("gdl", WIDE, "wide"), "p")
    legal = wide.legal()
    assert len(legal) == LEGAL_LISTED and all(m.startswith("(pick ") for m in legal)
    huge = LegalBrain(GameSpec("gdl", HUGE, "huge"), "p")
    assert huge.legal() == ["go"]
    assert huge.select(time.monotonic() + 1)[0] == "go"
    huge.observe(["go"])
    assert huge.legal() == [] and huge.goals() == [100]


def test_the_gdl_brain_plays_a_first_legal_move_of_a_role_too_wide_to_search() -> None:


    brain = make_brain(GameSpec("gdl", WIDE, "wide"), "p", BrainOptions(engine="general"),
                       time.monotonic() + 30)
    assert len(brain.legal()) == SEARCHABLE_MOVES
    info = brain.metagame(time.monotonic() + 2)
    assert "none" in info.get("search", "")
    move, info = brain.select(time.monotonic() + 2)
    assert move.startswith("(pick ") and info["method"] == "first-legal"
