"""Real matches over loopback for each input format, websocket, HTTP and built-in players mixed.

What each role sees is checked against the format's rule: GDL every joint move, .efg
and tree only the role's information set, POSG P1 its partition and observation and P2
the state.
"""

from __future__ import annotations

import asyncio

import pytest
from conftest import shared_path
from test_server_support import ScriptedAgent

from gdl.loader import load_game
from server.app import MatchServer
from server.bench import run_bench
from server.records import Records, ggp_base_json


@pytest.fixture
async def server(tmp_path):
    records = Records(tmp_path / "matches.sqlite")
    async with MatchServer(records, port=0, grace=0.2, seat_wait=10) as srv:
        yield srv
    records.close()


def random_legal(seed: int):
    import random

    rng = random.Random(seed)
    return lambda message: rng.choice(message["legal"])


async def test_posg_ws_p1_against_solver_p2(server) -> None:
    game = load_game(shared_path("posg", "test", "rewards.osposg"))
    p1 = await ScriptedAgent(server.url, "p1", policy=random_legal(1)).start()
    outcome = await server.play_match(game, ["ws:p1", "solver"], startclock=1, playclock=2,
                                      seed=4)
    assert outcome.status == "completed"
    assert outcome.payoffs[0] == -outcome.payoffs[1]
    assert all(e == ["", ""] for e in outcome.errors)
    # P1 sees its partition and observation, never the state; its requests say so
    for message in p1.of_type("request") + p1.of_type("step"):
        assert set(message["observation"]) == {"step", "partition", "last_action",
                                               "observation"}
    assert p1.of_type("offer")[0]["game"]["format"] == "posg"
    await p1.stop()
    # and P2 (here the websocket agent) sees the state
    p2 = await ScriptedAgent(server.url, "p2", policy=random_legal(2)).start()
    outcome = await server.play_match(game, ["random", "ws:p2"], startclock=1, playclock=2,
                                      seed=4)
    assert outcome.status == "completed"
    assert "state" in p2.of_type("request")[0]["observation"]
    await p2.stop()
    record = ggp_base_json(server.records.get_match(outcome.match))
    assert record["isCompleted"] and len(record["moves"]) == len(outcome.moves)


async def test_launched_agent_plays_posg(server) -> None:
    game = load_game(shared_path("posg", "test", "rewards.osposg"))
    outcome = await server.play_match(game, ["agent", "random"], startclock=5, playclock=2,
                                      seed=4)
    assert outcome.status == "completed", outcome.reason
    assert all(e == ["", ""] for e in outcome.errors)  # the agent answered every step in time


async def test_bench_runs_all_matches_over_sockets(tmp_path) -> None:
    game = load_game(shared_path("posg", "test", "rewards.osposg"))
    for inproc in (False, True):
        report = await run_bench(game, 4, tmp_path / f"b{inproc}.sqlite", 30, inproc, 1)
        assert (report["completed"], report["aborted"], report["lost"]) == (4, 0, 0)
        assert report["steps"] >= 4 and report["relay_p99_ms"] >= report["relay_p50_ms"]


async def test_concurrent_formats_on_one_server(server) -> None:
    posg = load_game(shared_path("posg", "test", "rewards.osposg"))
    agents = [await ScriptedAgent(server.url, f"a{i}", policy=random_legal(i)).start()
              for i in range(4)]
    outcomes = await asyncio.gather(*(
        server.play_match(posg, [f"ws:a{2 * i}", f"ws:a{2 * i + 1}"], startclock=1,
                          playclock=2, seed=i) for i in range(2)),
        server.play_match(posg, ["first", "random"], startclock=1, playclock=2, seed=9))
    assert [o.status for o in outcomes] == ["completed"] * 3
    for agent in agents:
        await agent.stop()
