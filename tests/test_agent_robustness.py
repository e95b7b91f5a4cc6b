"""The live HTTP player under bad input, match bookkeeping, and a crashing worker."""

from __future__ import annotations

import asyncio

import pytest
from conftest import shared_path
from test_agent_matches import Agents, post, run_match

pytest.importorskip("gdl.reasoning.machine")

TINY = ("(role p) (init (at 0)) (legal p (go 2)) (legal p stay)"
        " (<= (next (at 2)) (does p (go 2))) (<= (next (at 1)) (does p stay))"
        " (<= terminal (true (at 2))) (<= terminal (true (at 1)))"
        " (<= (goal p 100) (true (at 2))) (<= (goal p 0) (true (at 1)))"
        " (<= (goal p 0) (true (at 0)))")


async def raw(port: int, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    writer.write_eof()
    reply = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    return reply


async def test_bad_input_gets_clear_replies_and_the_player_stays_up() -> None:
    async with Agents(1) as (port,):
        assert (await raw(port, b"GARBAGE\r\n\r\n")).startswith(b"HTTP/1.0 400 Bad Request")
        reply = await raw(port, b"POST / HTTP/1.0\r\nContent-Length: 8\r\n\r\n(PLAY m1")
        assert reply.startswith(b"HTTP/1.0 400") and b"unbalanced" in reply
        reply = await raw(port, b"POST / HTTP/1.0\r\nContent-Length: 90\r\n\r\n(INFO)")
        assert b"closed before Content-Length bytes" in reply
        reply = await raw(port, b"POST / HTTP/1.0\r\nContent-Length: 8\r\n\r\n(DANCE )")
        assert b"unknown message type 'DANCE'" in reply
        options = await raw(port, b"OPTIONS / HTTP/1.1\r\n\r\n")
        assert options.startswith(b"HTTP/1.0 200 OK") and options.endswith(b"\r\n\r\n")
        invalid = await post(port, "(START m1 p ((role p) (<= (legal p ?x) (true (at ?y)))) 1 1)", 3)
        assert invalid.startswith("error: ")  # unsafe variable: an invalid game
        assert await post(port, "( INFO )", 2) == "( ( name agent0 ) ( status available ) )"
        get = await raw(port, b"GET /%28%20info%20%29 HTTP/1.0\r\n\r\n")
        assert get.endswith(b"( ( name agent0 ) ( status available ) )")


async def test_match_bookkeeping() -> None:
    async with Agents(1) as (port,):
        assert await post(port, "(PLAY nosuchmatch NIL)", 2) == "busy"
        assert await post(port, f"(START m1 p ({TINY}) 1 1)", 3) == "ready"
        assert await post(port, f"(START m1 p ({TINY}) 1 1)", 3) == "ready"  # repeated
        assert await post(port, f"(START m2 p ({TINY}) 1 1)", 3) == "busy"
        assert await post(port, "(info)", 2) == "busy"
        assert await post(port, "(PLAY m2 NIL)", 2) == "busy"
        assert await post(port, "(PLAY m1 NIL)", 2) == "(go 2)"  # the only 100
        assert await post(port, "(STOP m1 ((go 2)))", 2) == "done"
        assert await post(port, f"(START m2 p ({TINY}) 1 1)", 3) == "ready"
        assert await post(port, "(ABORT m2)", 2) == "aborted"
        assert await post(port, "(ABORT m2)", 2) == "busy"
        assert await post(port, f"(PREVIEW ({TINY}) 1)", 2) == "ready"
        assert await post(port, "(info)", 2) == "( ( name agent0 ) ( status available ) )"


async def test_crashed_worker_falls_back_to_a_legal_move() -> None:
    path = shared_path("gdl-corpus", "repository", "ticTacToe.kif")
    agents = Agents(2, crash_at_step=3)
    async with agents as ports:
        record = await run_match(path, ports, 1, 1.0)
    # the worker died in step 3's search after saying the legal moves: a legal answer
    assert record["errors"][2] == ["", ""]
    assert record["goals"] in ([100, 0], [50, 50], [0, 100])
    for player in agents.players:
        assert player.gamer.decisions[2]["method"] == "fallback"
        assert player.gamer.decisions[2]["legal_known"]
