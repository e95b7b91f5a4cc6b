"""Bad input over real sockets: each bad client gets a protocol error, everything else goes on."""

from __future__ import annotations

import asyncio
import contextlib
import json

import pytest
from conftest import running_server
from test_server_support import Pennies, ScriptedAgent, silent_in_a_match
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed


@pytest.fixture
async def server(tmp_path):
    async with running_server(tmp_path, grace=0.05, seat_wait=5, max_connections=12,
                           login_timeout=0.5, max_message_bytes=4096) as srv:
        yield srv


async def exchange(ws, message: str | bytes | dict) -> dict:
    await ws.send(json.dumps(message) if isinstance(message, dict) else message)
    return json.loads(await asyncio.wait_for(ws.recv(), 5))


async def test_garbage_gets_errors_while_a_match_goes_on(server) -> None:
    slow = lambda m: m["legal"][-1]  # noqa: E731 - tails, tails: col wins both rounds
    alice = await ScriptedAgent(server.url, "alice", policy=slow).start()
    match = server.create_match(Pennies(), ["ws:alice", "first?delay=0.3"], startclock=1,
                                playclock=3, seed=5)
    async with connect(server.url) as ws:
        assert (await exchange(ws, {"type": "move", "match": match.id, "step": 1,
                                    "move": "heads"}))["code"] == "not-logged-in"
        assert (await exchange(ws, {"type": "hello", "name": "mallory",
                                    "token": "mallory-secret-1"}))["type"] == "welcome"
        cases = [
            (b"\x00\x01binary", "bad-json"),
            ("{nope", "bad-json"),
            ({"type": "launch"}, "unknown-type"),
            (json.dumps({"type": "ping", "nonce": "x" * 5000}), "too-big"),
            ({"type": "hello", "name": "mallory", "token": "mallory-secret-1"},
             "already-logged-in"),
            ({"type": "move", "match": "no.such.match", "step": 1, "move": "heads"},
             "unknown-match"),
            ({"type": "move", "match": match.id, "step": 1, "move": "heads"}, "not-seated"),
            ({"type": "ready", "match": match.id}, "not-seated"),
            ({"type": "rejoin", "match": match.id, "token": "guessed-token-1"}, "bad-token"),
            ({"type": "abort", "match": "no.such.match"}, "not-allowed"),
            ({"type": "abort", "match": "no.such.match", "admin_token": server.admin_token},
             "unknown-match"),
        ]
        for message, code in cases:
            reply = await exchange(ws, message)
            assert reply["type"] == "error" and reply["code"] == code, (message, reply)
        assert await exchange(ws, {"type": "ping", "nonce": 42}) == {"type": "pong", "nonce": 42}
    # alice's own mistakes: a move for a role she does not play, for a step not open
    async with connect(server.url) as ws:
        await exchange(ws, {"type": "rejoin", "match": match.id, "token": alice.token})
        for message, code in [
                ({"type": "move", "match": match.id, "step": 1, "move": "tails", "role": "col"},
                 "wrong-role"),
                ({"type": "move", "match": match.id, "step": 9, "move": "tails"}, "wrong-step")]:
            reply = await exchange(ws, message)
            while reply["type"] != "error":
                reply = json.loads(await asyncio.wait_for(ws.recv(), 5))
            assert reply["code"] == code
    outcome = await server.tasks[match.id] if match.id in server.tasks else server.finished[match.id]
    assert outcome.status == "completed" and outcome.payoffs == [0.0, 100.0]
    await alice.stop()


async def test_too_big_frames_close_only_that_socket(server) -> None:
    ws = await connect(server.url, max_size=None)
    try:
        with contextlib.suppress(ConnectionClosed):  # the server may hang up mid-send
            await ws.send(json.dumps({"type": "ping", "nonce": "x" * (5 << 20)}))
        with pytest.raises(ConnectionClosed) as info:
            await asyncio.wait_for(ws.recv(), 5)
        assert info.value.rcvd is None or info.value.rcvd.code == 1009
    finally:
        with contextlib.suppress(Exception):  # the transport may already be gone
            await ws.close()
    bob = await ScriptedAgent(server.url, "bob").start()
    outcome = await server.play_match(Pennies(), ["random", "ws:bob"], startclock=1,
                                      playclock=1, seed=2)
    assert outcome.status == "completed"
    await bob.stop()


async def test_connection_flood_is_refused_and_idle_sockets_time_out(server) -> None:
    carol = await ScriptedAgent(server.url, "carol").start()
    match = server.create_match(Pennies(), ["ws:carol", "first?delay=0.3"], startclock=1,
                                playclock=3, seed=2)
    sockets = [await connect(server.url) for _ in range(11)]  # with carol: the limit, 12
    async with connect(server.url) as extra:
        reply = json.loads(await asyncio.wait_for(extra.recv(), 5))
        assert reply["code"] == "server-full"
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(extra.recv(), 5)
    # none of the flood said hello: the server closes them after the login deadline
    for ws in sockets:
        with pytest.raises(ConnectionClosed) as info:
            await asyncio.wait_for(ws.recv(), 5)
        assert info.value.rcvd.code == 1008
    # the match played on through the flood
    outcome = await server.tasks[match.id] if match.id in server.tasks \
        else server.finished[match.id]
    assert outcome.status == "completed" and outcome.payoffs == [100.0, 0.0]
    assert outcome.errors == [["", ""], ["", ""]]
    await carol.stop()


async def test_disconnected_agent_rejoins_and_a_lost_one_is_ce(server) -> None:
    state: dict[str, bool] = {"dropped": False}
    agent = ScriptedAgent(server.url, "dora")
    dropped = asyncio.Event()

    def drop_once(message: dict) -> str | None:
        if not state["dropped"]:
            state["dropped"] = True
            dropped.set()
            return None
        return "tails"

    agent.policy = drop_once
    await agent.start()
    match = server.create_match(Pennies(), ["ws:dora", "ws:gone"], startclock=1,
                                playclock=2.5, seed=8)
    gone = await ScriptedAgent(server.url, "gone", policy=lambda m: None).start()
    await asyncio.wait_for(dropped.wait(), 5)
    await agent.stop()  # the socket drops while step 1 is open
    await gone.stop()  # this one never comes back
    rejoined = ScriptedAgent(server.url, "dora", policy=lambda m: "tails")
    rejoined.task = asyncio.create_task(rejoined.run(
        {"type": "rejoin", "match": match.id, "token": agent.token}))
    outcome = await server.tasks[match.id]
    assert outcome.status == "completed"
    assert [e[0] for e in outcome.errors] == ["", ""]  # dora answered both steps in time
    assert [e[1] for e in outcome.errors] == ["CE", "CE"]
    offers = rejoined.of_type("offer")
    assert offers and offers[0]["rejoin"] is True and offers[0]["step"] == 1
    assert rejoined.of_type("request")[0]["deadline"] < 2.5
    await rejoined.stop()
    # a rejoin after the end learns how it ended
    async with connect(server.url) as ws:
        await ws.send(json.dumps({"type": "rejoin", "match": match.id, "token": agent.token}))
        replies = [json.loads(await asyncio.wait_for(ws.recv(), 5)) for _ in range(2)]
        assert [r["type"] for r in replies] == ["welcome", "end"]
        assert replies[1]["payoffs"] == outcome.payoffs


async def test_operator_abort_is_recorded_and_told(server) -> None:
    eve, match = await silent_in_a_match(server, "eve", "random", playclock=30)
    async with connect(server.url) as ws:
        reply = await exchange(ws, {"type": "abort", "match": match.id,
                                    "admin_token": server.admin_token})
        assert reply == {"type": "aborted", "match": match.id}
    await asyncio.sleep(0.05)
    assert eve.ends[match.id]["type"] == "abort"
    assert server.records.get_match(match.id)["status"] == "aborted"
    await eve.stop()


async def test_an_agent_that_stops_reading_is_cut_off(server, monkeypatch) -> None:
    from server import connections

    monkeypatch.setattr(connections, "SEND_TIMEOUT", 0.5)

    class Loud(Pennies):  # 4 MB observations fill any socket buffer
        def observation(self, state, role):
            return "x" * (4 << 20)

    ws = await connect(server.url, max_size=None, max_queue=1, close_timeout=0.1)
    await ws.send(json.dumps({"type": "hello", "name": "deaf", "token": "deaf-token-1"}))
    await ws.recv()  # welcome; from now on this client reads nothing
    outcome = await server.play_match(Loud(), ["ws:deaf", "first"], startclock=0.5,
                                      playclock=0.5, seed=1)
    ws.transport.abort()  # a polite close would wait for a reader that never reads
    assert outcome.status == "completed"
    assert outcome.errors[-1][0] in ("CE", "TO")
