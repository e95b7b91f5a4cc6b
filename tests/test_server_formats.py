"""Real matches over loopback for each input format, websocket, HTTP and built-in players mixed.

What each role sees is checked against the format's rule: GDL every joint move, .efg
and tree only the role's information set, POSG P1 its partition and observation and P2
the state.
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
import sys

import pytest
from conftest import GAMES, REPO, running_server, shared_path
from test_server_support import GgpHttpTestPlayer, ScriptedAgent

from gdl.formats import load_game
from server.bench.server import run_bench
from server.records import ggp_base_json


@pytest.fixture
async def server(tmp_path):
    async with running_server(tmp_path, grace=0.2, seat_wait=10) as srv:
        yield srv


def random_legal(seed: int):
    rng = random.Random(seed)
    return lambda message: rng.choice(message["legal"])


async def test_gdl_ws_http_and_builtin_players(server) -> None:
    pytest.importorskip("gdl.playable")
    game = load_game(shared_path("gdl-corpus", "repository", "ticTacToe.kif"))
    http = GgpHttpTestPlayer()
    url = await http.start()
    xp = await ScriptedAgent(server.url, "xp", policy=random_legal(3)).start()
    outcome = await server.play_match(game, ["ws:xp", url], startclock=3, playclock=3, seed=1)
    assert outcome.status == "completed", outcome.reason
    assert all(e == ["", ""] for e in outcome.errors)
    assert sorted(outcome.payoffs) in ([0.0, 100.0], [50.0, 50.0])
    # the HTTP player got the GGP conversation: START, PLAY NIL, every joint move, STOP
    kinds = [m.split()[1] for m in http.messages]
    assert kinds == ["START"] + ["PLAY"] * len(outcome.moves) + ["STOP"]
    assert http.messages[1].endswith("NIL )")
    for message, joint in zip(http.messages[2:], outcome.moves, strict=True):
        assert " ".join(joint) in message
    # GDL roles see every joint move: the websocket agent's step results carry them
    for step, joint in zip(xp.of_type("step"), outcome.moves, strict=True):
        text = json.dumps(step["observation"])
        assert all(json.dumps(move)[1:-1] in text for move in joint)
    # uct against the HTTP player, and the ggp-base export holds the states as KIF facts
    outcome = await server.play_match(game, [url, "uct?playouts=50"], startclock=3,
                                      playclock=3, seed=2)
    assert outcome.status == "completed" and all(e == ["", ""] for e in outcome.errors)
    export = ggp_base_json(server.records.get_match(outcome.match))
    assert len(export["states"]) == len(outcome.moves) + 1
    assert "cell" in export["states"][-1]
    await xp.stop()
    await http.close()


@pytest.mark.parametrize("parts", [("efg", "kuhn_from_course.efg"),
                                   ("tree-format", "kuhn_mit.txt")])
async def test_extensive_games_hide_private_information(server, parts) -> None:
    pytest.importorskip("solvers.extensive.playable")
    game = load_game(shared_path(*parts))
    a = await ScriptedAgent(server.url, "a").start()
    b = await ScriptedAgent(server.url, "b").start()
    outcome = await server.play_match(game, ["ws:a", "ws:b"], startclock=2, playclock=2,
                                      seed=6)
    assert outcome.status == "completed", outcome.reason
    assert sum(outcome.payoffs) == pytest.approx(0.0)  # Kuhn poker is zero-sum
    # only the player to move is asked; the other role's move is null for that step
    for agent, role in ((a, 0), (b, 1)):
        asked = [r["step"] for r in agent.of_type("request")]
        assert asked == [step for step, joint in enumerate(outcome.moves, start=1)
                         if joint[role] is not None]
    # each sees its own information set: the two views of the same steps differ
    assert [s["observation"] for s in a.of_type("step")] != \
        [s["observation"] for s in b.of_type("step")]
    # chance is the server's, from the seed: the same seed replays the same deal
    again = await server.play_match(game, ["ws:a", "ws:b"], startclock=2, playclock=2, seed=6)
    assert again.moves == outcome.moves and again.payoffs == outcome.payoffs
    # and a solver-backed built-in against a random one
    mixed = await server.play_match(game, ["solver", "random"], startclock=2, playclock=2,
                                    seed=7)
    assert mixed.status == "completed" and all(e == ["", ""] for e in mixed.errors)
    await a.stop()
    await b.stop()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_gdl_our_agent_over_http_against_our_agent_over_ws(server) -> None:
    pytest.importorskip("gdl.playable")
    game = load_game(GAMES / "gdl" / "simultaneous_tictactoe.kif")
    port = free_port()
    http_agent = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "ggp_cli", "agent", "--http", str(port), "--quiet", cwd=REPO)
    try:
        for _ in range(200):  # until it listens
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            except OSError:
                await asyncio.sleep(0.05)
        outcome = await server.play_match(game, [f"http://127.0.0.1:{port}", "agent"],
                                          startclock=5, playclock=2, seed=3)
    finally:
        http_agent.terminate()
        await http_agent.wait()
    assert outcome.status == "completed", outcome.reason
    # the GGP HTTP conversation with our agent worked at every step (how good its
    # moves are under a loaded machine is the agent's business: IL/TO are its faults)
    assert all(e[0] != "CE" for e in outcome.errors), outcome.errors
    assert sum(outcome.payoffs) == 100.0


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
    # launched, connected and seated: the agent stayed reachable at every step
    assert all(e[0] != "CE" for e in outcome.errors), outcome.errors


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


async def test_uct_builtin_beats_first_legal_on_both_sides(server) -> None:
    pytest.importorskip("gdl.playable")
    game = load_game(shared_path("gdl-corpus", "repository", "ticTacToe.kif"))
    for seats, uct_role in ((["uct?playouts=300", "first"], 0),
                            (["first", "uct?playouts=300"], 1)):
        outcome = await server.play_match(game, seats, startclock=1, playclock=10, seed=1)
        assert outcome.status == "completed"
        assert outcome.payoffs[uct_role] == 100.0, (seats, outcome.moves)


async def test_solver_builtin_plays_the_solved_gdl_game(server) -> None:
    pytest.importorskip("gdl.playable")
    from server.players.base import SeatInfo
    from server.players.builtin import SolverPlayer
    from server.players.spec import parse_spec

    game = load_game(GAMES / "gdl" / "simultaneous_tictactoe.kif")
    player = SolverPlayer(parse_spec("solver"))
    await player.start(SeatInfo("m", game, 0, 30.0, 5.0, 1))
    solved = player.policy
    assert solved is not None  # solved inside the start clock, not left to uct
    # the baseline's root value is the reference one (shared/reference/VALUES.md: 50 / 50)
    start = game.initial_state(random.Random(0))
    root = solved.expansion.node_of(start[0])
    assert solved.solution.values[root].tolist() == pytest.approx([50.0, 50.0])
    legal = game.legal_moves(start, 0)
    assert sum(solved.weights(start[0], "p0", legal)) == pytest.approx(1.0)
    # played from what the seat is told: the first step's observation starts the match
    assert solved(0, game.observation(start, 0), legal) == solved.weights(start[0], "p0", legal)
    outcome = await server.play_match(game, ["solver", "random"], startclock=30, playclock=2,
                                      seed=1)
    assert outcome.status == "completed" and all(e == ["", ""] for e in outcome.errors)
