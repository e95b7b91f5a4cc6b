"""The batched playouts' engine on the start clock: built once per match, within a
share of the clock left; where it does not build in time the match is played one
playout at a time."""

from __future__ import annotations

import asyncio
import time

import pytest

from agent.brains.gdl import GdlBrain
from agent.brains.options import BrainOptions, GameSpec
from agent.gamer import Gamer
from solvers.numba_switch import numba_allowed

# two roles take turns adding 1 or 2; whoever reaches 5 wins
RACE = ("(role a) (role b) (init (sum 0)) (init (control a)) "
        "(plus 0 1 1) (plus 0 2 2) (plus 1 1 2) (plus 1 2 3) (plus 2 1 3) (plus 2 2 4) "
        "(plus 3 1 4) (plus 3 2 5) (plus 4 1 5) (plus 4 2 5) (add 1) (add 2) "
        "(<= (legal ?r (add ?n)) (true (control ?r)) (add ?n)) "
        "(<= (legal a noop) (true (control b))) (<= (legal b noop) (true (control a))) "
        "(<= (next (sum ?m)) (true (sum ?s)) (does ?r (add ?n)) (plus ?s ?n ?m)) "
        "(<= (next (control b)) (true (control a))) (<= (next (control a)) (true (control b))) "
        "(<= (next (won ?r)) (does ?r (add ?n)) (true (sum ?s)) (plus ?s ?n 5)) "
        "(<= terminal (true (won ?r))) "
        "(<= (goal ?r 100) (true (won ?r))) "
        "(<= (goal a 0) (true (won b))) (<= (goal b 0) (true (won a)))")
OPTIONS = BrainOptions(seed=1, engine="compiled",
                       enhancements=("batch", "mast", "solver", "vmean"))


def test_the_batched_engine_is_built_once_and_shared_by_the_matchs_searches() -> None:
    brain = GdlBrain(GameSpec("gdl", RACE), "a", OPTIONS, until=time.monotonic() + 30)
    assert brain.search.batched and brain.search.agent.on("vmean")
    built = brain.machine.batch_machine
    assert built is not None and brain.search.playouts.batch is built
    # "mastcost"'s trial searches and the search after it take the same engine
    assert brain._new_search(("batch", "solver")).playouts.batch is built
    # the pre-solve's batched expansion too: a adds 2, and b cannot stop a reaching 5
    info = brain.metagame(time.monotonic() + 2)
    assert "value [100.0, 0.0]" in info["presolve"] and brain.machine.batch_machine is built


def test_with_no_start_clock_left_the_match_plays_one_playout_at_a_time() -> None:
    brain = GdlBrain(GameSpec("gdl", RACE), "a", OPTIONS, until=time.monotonic())
    assert brain.machine.batch_machine is None and not brain.search.batched
    assert brain.search.agent.enhancements == ("mast", "solver")


def test_a_spare_worker_loads_the_compiled_kernels_while_idle() -> None:
    if not numba_allowed():
        pytest.skip("numba is switched off (GGP_NUMBA=0) or absent")

    async def start() -> dict:
        gamer = Gamer(BrainOptions(seed=1))
        try:
            # (a generous limit: numba's first compile on a loaded machine)
            assert await gamer.ready(timeout=600, kernels=True)
            # a 2 s start clock is under KERNEL_CLOCK: the match would not load them
            return await gamer.start(GameSpec("gdl", RACE), "a", time.monotonic() + 2.0)
        finally:
            gamer.close()

    info = asyncio.run(start())
    assert info["kernels"] is True and "value [100.0, 0.0]" in info["presolve"]
