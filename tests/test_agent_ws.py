"""The websocket client against our match server on loopback (protocol v1)."""

from __future__ import annotations

import asyncio

import pytest
from conftest import running_server, shared_path

from agent.brains.options import BrainOptions
from agent.gamer import Gamer
from agent.ws_client import WsAgent, run_client
from gdl.formats import load_game
from server.app import MatchServer


async def test_ping_is_answered_and_foreign_requests_ignored() -> None:
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    agent = WsAgent(Gamer(), send)
    await agent.handle({"type": "ping", "nonce": 7}, 0.0)
    await agent.handle({"type": "request", "match": "not-ours", "step": 1, "legal": ["a"],
                        "deadline": 1}, 0.0)
    await agent.handle({"type": "mystery"}, 0.0)
    assert sent == [{"type": "pong", "nonce": 7}]


@pytest.fixture
async def server(tmp_path):
    async with running_server(tmp_path, grace=0.2, seat_wait=10) as srv:
        yield srv


async def play_against(server: MatchServer, game, seats: list[str], **clocks):
    gamer = Gamer(BrainOptions(seed=1))
    client = asyncio.ensure_future(run_client(server.url, "ours", gamer, max_matches=1,
                                              margin=0.3))
    try:
        outcome = await server.play_match(game, seats, seed=5, **clocks)
        status = await asyncio.wait_for(client, 10)
    finally:
        client.cancel()
        gamer.close()
    return outcome, status, gamer.decisions


async def test_posg_match_with_stage_strategies(server) -> None:
    game = load_game(shared_path("posg", "test", "rewards.osposg"))
    outcome, status, decisions = await play_against(server, game, ["ws:ours", "random"],
                                                    startclock=4, playclock=1)
    assert outcome.status == "completed", outcome.reason
    assert status == 0
    assert all(errors[0] == "" for errors in outcome.errors)
    assert decisions and all(d["method"] == "equilibrium" for d in decisions)


async def test_gdl_match_over_websocket(server) -> None:
    pytest.importorskip("gdl.playable")
    game = load_game(shared_path("gdl-corpus", "repository", "ticTacToe.kif"))
    outcome, status, decisions = await play_against(server, game, ["random", "ws:ours"],
                                                    startclock=2, playclock=1)
    assert outcome.status == "completed", outcome.reason
    assert all(errors == ["", ""] for errors in outcome.errors)
    assert outcome.payoffs[1] >= 50  # tic-tac-toe: the search never loses to random
    # the moves were the brain's (a fallback, if the machine is very loaded, is legal too)
    assert {d["method"] for d in decisions} & {"exact", "exact-exploit", "proven", "mcts"}


async def test_efg_match_plays_the_equilibrium_strategy(server) -> None:
    pytest.importorskip("solvers.extensive.playable")
    game = load_game(shared_path("efg", "kuhn_from_course.efg"))
    outcome, status, decisions = await play_against(server, game, ["ws:ours", "random"],
                                                    startclock=5, playclock=1)
    assert outcome.status == "completed", outcome.reason
    assert all(errors[0] == "" for errors in outcome.errors)
    assert decisions and all(d["method"] == "equilibrium" for d in decisions)


async def test_lost_connection_is_reopened_and_missed_steps_replayed(server, monkeypatch) -> None:
    """The agent's socket is cut after its second move and it may only come back 2.5 s
    later: the steps in between are CE; after the rejoin (same token) it catches up
    from the offer's history and plays the brain's legal moves to the end."""
    import agent.ws_client as ws_client

    real_connect = ws_client.websockets.connect
    connections = 0

    async def slow_second_connect(url: str, **options):  # the network comes back late
        nonlocal connections
        connections += 1
        if connections > 1:
            await asyncio.sleep(2.5)
        return await real_connect(url, **options)

    monkeypatch.setattr(ws_client.websockets, "connect", slow_second_connect)
    game = load_game(shared_path("gdl-corpus", "repository", "connectFour.kif"))
    gamer = Gamer(BrainOptions(seed=1))
    client = asyncio.ensure_future(run_client(server.url, "ours", gamer, max_matches=1,
                                              margin=0.3))

    async def cut_after_two_moves() -> int:
        while len(gamer.decisions) < 2:
            await asyncio.sleep(0.05)
        conn = server.lobby.by_name["ours"]
        conn.ws.transport.abort()  # no close frame: a network failure
        return len(gamer.decisions)

    cutter = asyncio.ensure_future(cut_after_two_moves())
    try:
        outcome = await server.play_match(game, ["ws:ours", "random"], seed=5,
                                          startclock=3, playclock=1)
        status = await asyncio.wait_for(client, 10)
        cut_at = await cutter
    finally:
        client.cancel()
        cutter.cancel()
        gamer.close()
    assert outcome.status == "completed", outcome.reason
    assert status == 0
    ours = [errors[0] for errors in outcome.errors]
    assert "CE" in ours  # steps were missed while the socket was down...
    first_missed = ours.index("CE")
    assert first_missed >= cut_at - 1
    back = [e for e in ours[first_missed:] if e != "CE"]
    assert back and all(e == "" for e in back)  # ...then legal moves, in time, again
    assert all(not e.startswith("IL") for e in ours)
    after = gamer.decisions[cut_at:]
    assert after and after[-1]["method"] != "fallback"  # the brain plays again


async def test_a_refused_login_ends_the_client_with_one_line(server) -> None:
    """A name registered with another secret is refused (bad-secret): the client used to
    reconnect and say hello again for ever; it now stops with the server's reason."""
    from solvers.errors import GameError

    first = Gamer(BrainOptions(seed=1))
    owner = asyncio.ensure_future(run_client(server.url, "carol", first, token="a" * 16))
    try:
        for _ in range(100):  # the first login registers the name with its secret
            if "carol" in server.lobby.by_name:
                break
            await asyncio.sleep(0.05)
        squatter = Gamer(BrainOptions(seed=2))
        try:
            with pytest.raises(GameError, match="refused 'carol': (bad-secret|name-in-use)"):
                await asyncio.wait_for(run_client(server.url, "carol", squatter,
                                                  token="b" * 16), 10)
        finally:
            squatter.close()
    finally:
        owner.cancel()
        first.close()


async def test_a_name_the_operator_did_not_register_ends_the_client(tmp_path) -> None:
    """On a server whose names the operator registers (``ggp serve`` by default), a new
    name is refused (``not-registered``): the client stops with the reason."""
    from solvers.errors import GameError

    gamer = Gamer(BrainOptions(seed=1))
    try:
        async with running_server(tmp_path, registration="closed") as srv:
            with pytest.raises(GameError, match="refused 'dora': not-registered"):
                await asyncio.wait_for(run_client(srv.url, "dora", gamer, token="d" * 16), 30)
    finally:
        gamer.close()
