"""``mastcost``: on the start clock the agent drops MAST where it costs over a fifth
of the playouts, and keeps it where it pays for itself in speed."""

from __future__ import annotations

import time

from conftest import shared_path

from agent.worker import BrainOptions, GameSpec, GdlBrain

# one role picks 30 of 120 numbers, each once: the legal moves change every step (no
# cached Gibbs distribution comes back), and a Gibbs draw scans up to 120 moves where a
# uniform one takes one
PICKS = ("(role p) (init (step 0)) "
         + " ".join(f"(num {n})" for n in range(120)) + " "
         + " ".join(f"(succ {n} {n + 1})" for n in range(30)) + " "
         "(<= (legal p (pick ?n)) (num ?n) (not (true (picked ?n)))) "
         "(<= (next (picked ?n)) (does p (pick ?n))) "
         "(<= (next (picked ?n)) (true (picked ?n))) "
         "(<= (next (step ?m)) (true (step ?n)) (succ ?n ?m)) "
         "(<= terminal (true (step 30))) "
         "(<= (goal p 100) (true (picked 7))) (<= (goal p 0) (not (true (picked 7))))")


def _metagame(text: str, role: str) -> tuple[GdlBrain, dict]:
    brain = GdlBrain(GameSpec("gdl", text), role, BrainOptions(seed=1),
                     until=time.monotonic() + 30)
    return brain, brain.metagame(time.monotonic() + 4.5)   # the suite's start clock


def test_mast_is_dropped_where_its_draws_cost_over_a_fifth_of_the_playouts() -> None:
    brain, info = _metagame(PICKS, "p")
    assert info["mast"].startswith("off: ")
    assert float(info["mast"].split()[1].rstrip("x")) < 0.8
    assert not brain.search.agent.on("mast") and brain.search.agent.on("mastcost")


def test_mast_stays_where_it_shortens_the_playouts() -> None:
    # knightThrough: MAST learns the captures and advances, its playouts end sooner
    # and it runs about 2.7x the playouts of uniform ones
    text = shared_path("gdl-corpus", "repository", "knightThrough.kif").read_text()
    brain, info = _metagame(text, "white")
    assert info["mast"].startswith("on: ")
    assert float(info["mast"].split()[1].rstrip("x")) > 1.0
    assert brain.search.agent.on("mast")


def test_without_mastcost_there_is_no_trial() -> None:
    brain = GdlBrain(GameSpec("gdl", PICKS), "p",
                     BrainOptions(seed=1, enhancements=("mast", "gibbs", "solver")),
                     until=time.monotonic() + 30)
    assert "mast" not in brain.metagame(time.monotonic() + 2.0)
    assert brain.search.agent.on("mast")
