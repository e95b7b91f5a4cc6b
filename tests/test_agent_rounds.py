"""The agent over GGP HTTP through many matches (issue #32, item 9): START/PLAY rounds
of the two blow-up games with every answer legal and the processes' memory bounded,
and a worker killed from outside replaced (the next PLAY and the next match still get
legal answers)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import time
from pathlib import Path

import pytest
from conftest import shared_path
from test_agent_blowup import HUGE, WIDE
from test_agent_matches import Agents, post

from agent.brains.legal import LegalBrain
from agent.brains.options import GameSpec
from gdl.reasoning.machine import load_machine

PICK = re.compile(r"\(pick( (1?[0-9]|20)){5}\)")     # one of WIDE's 21^5 moves
ROUNDS = 4           # of each game: 8 START/PLAY rounds


def clock_for_this_machine() -> float:
    """Start and play clocks: 6 s, or three times what the light worker's work on HUGE
    (the fallback's legal list) takes here and now, whichever is longer: a measured
    speed factor, so a loaded machine (2 cores, load 9: 4 s) does not fail the test."""
    started = time.monotonic()
    LegalBrain(GameSpec("gdl", HUGE, "huge"), "p").legal()
    return max(6.0, 3 * (time.monotonic() - started))


def children_rss_mb() -> float:
    """Resident memory of this process's children (the workers), in MB."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():    # ppid
            total += int(fields[21]) * os.sysconf("SC_PAGE_SIZE") / 2**20   # rss pages
    return total


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
async def test_blowup_games_get_legal_answers_round_after_round() -> None:
    memory: list[float] = []
    clock = clock_for_this_machine()
    async with Agents(1) as ports:
        for i in range(ROUNDS):
            for name, text, legal in (("wide", WIDE, PICK.fullmatch),
                                      ("huge", HUGE, lambda move: move == "go")):
                match = f"{name}{i}"
                assert await post(ports[0], f"(START {match} p ({text}) {clock} {clock})",
                                  clock + 5) == "ready"
                move = await post(ports[0], f"(PLAY {match} NIL)", clock + 5)
                assert move is not None and legal(move), (match, move)
                memory.append(children_rss_mb())
                assert await post(ports[0], f"(ABORT {match})", 10) == "aborted"
    # bounded: no growth from round to round (the huge game's 2^300 rows are never made)
    assert max(memory) < 4096, memory
    assert max(memory[-4:]) < max(memory[:4]) + 512, memory


def kill(process) -> None:
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


async def test_a_killed_worker_is_replaced() -> None:
    text = re.sub(r";[^\n]*", "", shared_path("gdl-corpus", "repository",
                                              "ticTacToe.kif").read_text())
    machine = load_machine(text)
    first = {machine.move_to_kif(m) for m in machine.legal_moves(machine.initial_state(), 0)}
    agents = Agents(1)
    async with agents as ports:
        gamer = agents.players[0].gamer
        assert await post(ports[0], f"(START m1 xplayer ({text}) 4 4)", 10) == "ready"
        kill(gamer._worker.process)                  # between START and the first PLAY
        # a replacement worker's move, or the light worker's legal list
        assert await post(ports[0], "(PLAY m1 NIL)", 10) in first
        assert await post(ports[0], "(ABORT m1)", 10) == "aborted"
        # the next match: a fresh worker plays it, and one killed in it is replaced too
        assert await post(ports[0], f"(START m2 xplayer ({text}) 4 4)", 10) == "ready"
        assert gamer._worker.alive
        kill(gamer._worker.process)
        assert await post(ports[0], "(PLAY m2 NIL)", 10) in first
        await asyncio.sleep(0)
        assert await post(ports[0], "(PLAY m2 ((mark 1 1) noop))", 10) is not None
        assert gamer._worker is not None and gamer._worker.alive   # restarted
        assert await post(ports[0], "(ABORT m2)", 10) == "aborted"
