"""Hostile and careless GGP managers against a live HTTP player (issue 14, items 6-8):
ABORT or STOP during a long PLAY, a new START during a search, huge / NaN / negative
clocks, a START that is never followed up. Each asserts the safe behaviour: a
well-formed reply, and the agent free for the next match."""

from __future__ import annotations

import asyncio
import re
import time

import pytest
from conftest import shared_path
from test_agent_matches import Agents, post
from test_agent_robustness import TINY, raw

from agent.brains.options import BrainOptions, GameSpec
from agent.gamer import Gamer, Worker, bounded_clock

pytest.importorskip("gdl.reasoning.machine")
from gdl.reasoning.machine import load_machine  # noqa: E402

LONG = 600  # a play clock no test waits for: a reply before it means the search was cancelled
PATIENCE = 20  # seconds a test waits for a reply that must come at once


def connect_four() -> str:
    text = shared_path("gdl-corpus", "repository", "connectFour.kif").read_text()
    return re.sub(r";[^\n]*", "", text)


def first_moves(text: str) -> set[str]:
    machine = load_machine(text, engine="general")
    state = machine.initial_state()
    return {machine.move_to_kif(m) for m in machine.legal_moves(state, 0)}


async def long_play(port: int) -> asyncio.Task:
    """START connectFour with a long play clock, then a PLAY that searches until cancelled."""
    text = connect_four()
    assert await post(port, f"(START m1 red ({text}) 1 {LONG})", 5) == "ready"
    play = asyncio.ensure_future(post(port, "(PLAY m1 NIL)", PATIENCE))
    await asyncio.sleep(1.0)  # the worker is searching now
    assert not play.done()
    return play


async def test_abort_during_a_long_play_frees_the_agent() -> None:
    agents = Agents(1)
    async with agents as (port,):
        play = await long_play(port)
        assert await post(port, "(ABORT m1)", PATIENCE) == "aborted"
        assert await play in first_moves(connect_four())  # the cancelled PLAY: a legal move
        assert await post(port, "(info)", 5) == "( ( name agent0 ) ( status available ) )"
        # the next match's spare workers, started at the ABORT, have loaded (on a loaded
        # machine that takes longer than the 1 s clocks below)
        assert await agents.players[0].gamer.ready()
        assert await post(port, f"(START m2 p ({TINY}) 1 1)", 5) == "ready"
        assert await post(port, "(PLAY m2 NIL)", 3) == "(go 2)"  # searched, not a fallback
        assert await post(port, "(STOP m2 ((go 2)))", 3) == "done"


async def test_stop_during_a_long_play_cancels_the_search() -> None:
    agents = Agents(1)
    async with agents as (port,):
        play = await long_play(port)
        assert await post(port, "(STOP m1 ((drop 1) noop))", PATIENCE) == "done"
        assert await play in first_moves(connect_four())
        decision = agents.players[0].gamer.decisions[-1]
        assert decision["method"] == "fallback" and decision["reason"] == "the match ended"
        # the worker dropped the search and stayed alive: it could still say the goals
        assert agents.players[0].results["m1"] == [0, 0]
        assert await agents.players[0].gamer.ready()  # (see the test above)
        assert await post(port, f"(START m2 p ({TINY}) 1 1)", 5) == "ready"
        assert await post(port, "(PLAY m2 NIL)", 3) == "(go 2)"


async def test_a_new_start_cancels_the_search_in_flight() -> None:
    gamer = Gamer(BrainOptions(seed=0))
    try:
        assert await gamer.ready()  # as the agent does when it starts
        await gamer.start(GameSpec("gdl", connect_four()), "red", time.monotonic() + 1)
        play = asyncio.ensure_future(gamer.play(None, time.monotonic() + LONG))
        await asyncio.sleep(1.0)
        # a cold worker (no spare during a match): a start clock with a margin for a
        # loaded machine, where its imports take seconds
        await asyncio.wait_for(gamer.start(GameSpec("gdl", TINY), "p",
                                           time.monotonic() + PATIENCE / 2), PATIENCE)
        assert await asyncio.wait_for(play, 1) in first_moves(connect_four())
        assert await gamer.play(None, time.monotonic() + 3) == "(go 2)"
        assert gamer.decisions[-1]["method"] != "fallback"
    finally:
        gamer.close()


async def test_the_worker_search_is_cancelled_in_place() -> None:
    """SIGUSR1 makes the worker drop its request at once and keep serving."""
    worker = Worker()
    try:
        seq = worker.send("start", GameSpec("gdl", connect_four()), "red", BrainOptions(),
                          [], time.monotonic() + LONG)
        assert (await worker.receive(seq, time.monotonic() + PATIENCE))[0] == "legal"
        await asyncio.sleep(1.0)  # metagaming until the far deadline
        worker.cancel()
        assert await worker.receive(seq, time.monotonic() + LONG) == ("cancelled", seq)
        assert worker.alive
        seq = worker.send("goals", None)
        assert await worker.receive(seq, time.monotonic() + PATIENCE) == ("goals", seq, [0, 0])
    finally:
        worker.close()


async def test_huge_clocks_are_bounded_by_max_clock() -> None:
    agents = Agents(1, player_options={"max_clock": 2.0})
    async with agents as (port,):
        text = connect_four()
        assert await post(port, f"(START m1 red ({text}) 1e308 1e308)", PATIENCE) == "ready"
        assert await post(port, "(PLAY m1 NIL)", PATIENCE) in first_moves(text)
        assert await post(port, "(ABORT m1)", PATIENCE) == "aborted"
        assert await agents.players[0].gamer.ready()  # the next match's spares have loaded
        # 1e400 reads as infinity: bounded too
        assert await post(port, f"(START m2 p ({TINY}) 1e400 1e400)", PATIENCE) == "ready"
        assert await post(port, "(PLAY m2 NIL)", PATIENCE) == "(go 2)"
        assert await post(port, "(ABORT m2)", PATIENCE) == "aborted"


async def test_nan_and_negative_clocks_are_refused() -> None:
    async with Agents(1) as (port,):   # one agent for all: a refusal leaves it available
        for clock in ["nan", "-1", "-inf", "1e", "0x10"]:
            body = f"(START m1 p ({TINY}) {clock} 1)".encode()
            reply = await raw(port, b"POST / HTTP/1.0\r\nContent-Length: %d\r\n\r\n%s"
                              % (len(body), body))
            assert reply.startswith(b"HTTP/1.0 400 Bad Request"), clock
            assert f"expected a start clock in seconds, found '{clock}'".encode() in reply
            assert await post(port, "(info)", 5) == "( ( name agent0 ) ( status available ) )"


def test_bounded_clock() -> None:
    assert bounded_clock(1e308, 3600) == 3600
    assert bounded_clock(float("inf"), 10) == 10
    assert bounded_clock(float("nan")) == 0 and bounded_clock(-5) == 0
    assert bounded_clock(2.5) == 2.5


async def test_a_forgotten_match_expires() -> None:
    # the grace is a margin for a loaded machine: PLAY m2 below comes just after 3 s
    agents = Agents(1, player_options={"expiry_grace": 2.0})
    async with agents as (port,):
        assert await post(port, f"(START m1 p ({TINY}) 0.5 0.5)", 5) == "ready"
        assert await post(port, "(info)", 5) == "busy"
        for _ in range(150):  # the last deadline was 0.5 s after the START, + 2 s grace
            if await post(port, "(info)", 5) != "busy":
                break
            await asyncio.sleep(0.1)
        assert await post(port, "(info)", 5) == "( ( name agent0 ) ( status available ) )"
        assert await post(port, "(PLAY m1 NIL)", 5) == "busy"  # that match is gone
        assert await agents.players[0].gamer.ready()  # the next match's spares have loaded
        sent = time.monotonic()
        assert await post(port, f"(START m2 p ({TINY}) 3 1)", 5) == "ready"
        while time.monotonic() < sent + 3:  # no expiry before the last deadline + grace
            assert await post(port, "(info)", 5) == "busy"
            await asyncio.sleep(0.3)
        assert await post(port, "(PLAY m2 NIL)", 3) == "(go 2)"
        assert await post(port, "(STOP m2 ((go 2)))", 5) == "done"


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_max_clock_option_is_checked(value: str) -> None:
    from agent.cli import main
    from solvers.errors import GameError

    with pytest.raises(GameError, match="--max-clock must be a positive number"):
        main(["--http", "9", "--max-clock", value])
