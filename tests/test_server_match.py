"""Real matches over real sockets on loopback: websocket agents and built-ins, faults."""

from __future__ import annotations

import asyncio

import pytest
from conftest import running_server
from test_server_support import Pennies, ScriptedAgent

from server.app import MatchServer
from server.records import Records


@pytest.fixture
async def server(tmp_path):
    async with running_server(tmp_path, grace=0.05, seat_wait=5) as srv:
        yield srv


async def test_ws_agent_against_builtin(server) -> None:
    alice = await ScriptedAgent(server.url, "alice").start()
    outcome = await server.play_match(Pennies(), ["ws:alice", "first"], startclock=2,
                                      playclock=2, seed=3)
    # both show heads (first legal) twice: row wins both rounds
    assert outcome.status == "completed"
    assert outcome.payoffs == [100.0, 0.0]
    assert outcome.errors == [["", ""], ["", ""]]
    offer = alice.of_type("offer")[0]
    assert offer["role"] == "row" and offer["roles"] == ["row", "col"]
    assert offer["game"]["format"] == "efg"
    assert "seed" not in offer  # the seed drives chance: agents must not foresee it
    steps = alice.of_type("step")
    # each role sees only its own moves
    assert steps[-1]["observation"] == ["heads", "heads"]
    assert [s["move"] for s in steps] == ["heads", "heads"]
    requests = alice.of_type("request")
    assert [r["step"] for r in requests] == [1, 2] and requests[0]["legal"] == ["heads", "tails"]
    await asyncio.sleep(0.05)
    assert alice.ends[outcome.match]["payoff"] == 100.0
    record = server.records.get_match(outcome.match)
    assert record["status"] == "completed" and record["payoffs"] == [100.0, 0.0]
    assert [s["moves"] for s in record["steps"]] == [["heads", "heads"], ["heads", "heads"]]
    await alice.stop()


async def test_faults_are_replaced_by_the_prechosen_random_move(server) -> None:
    # alice answers an illegal move, bob never answers: IL and TO, the match goes on
    alice = await ScriptedAgent(server.url, "alice", policy=lambda m: "edge").start()
    bob = await ScriptedAgent(server.url, "bob", policy=lambda m: None).start()
    outcome = await server.play_match(Pennies(turns=True), ["ws:alice", "ws:bob"],
                                      startclock=1, playclock=1, seed=11)
    assert outcome.status == "completed"
    assert outcome.errors == [["IL edge", "TO"], ["IL edge", "TO"], ["IL edge", ""]]
    again = await server.play_match(Pennies(turns=True), ["ws:alice", "ws:bob"],
                                    startclock=1, playclock=1, seed=11)
    # the replacements come from the seeded fault generator: same seed, same moves
    assert again.moves == outcome.moves
    assert outcome.moves[2][1] is None  # col does not act in round 3
    await alice.stop()
    await bob.stop()


async def test_unfilled_seat_aborts_and_is_recorded(server) -> None:
    server.seat_wait = 0.1
    outcome = await server.play_match(Pennies(), ["ws:nobody", "random"], startclock=1,
                                      playclock=1, seed=1)
    assert outcome.status == "aborted" and "nobody" in outcome.reason
    assert server.records.get_match(outcome.match)["status"] == "aborted"


async def test_heartbeats_and_client_pings(tmp_path) -> None:
    records = Records(tmp_path / "h.sqlite")
    async with MatchServer(records, port=0, heartbeat=0.05, registration="open") as server:
        agent = await ScriptedAgent(server.url, "hb").start()
        while len(agent.of_type("ping")) < 2:
            await asyncio.sleep(0.02)
        assert [p["nonce"] for p in agent.of_type("ping")[:2]] == [1, 2]
        await agent.ws.send('{"type": "ping", "nonce": "n"}')
        while not agent.of_type("pong"):
            await asyncio.sleep(0.02)
        assert agent.of_type("pong")[0] == {"type": "pong", "nonce": "n"}
        await agent.stop()
    records.close()


async def test_a_failing_game_aborts_only_its_match(server) -> None:
    class Broken(Pennies):
        def next_state(self, state, moves, rng):
            raise ZeroDivisionError("adapter bug")

    broken, fine = await asyncio.gather(
        server.play_match(Broken(), ["random", "random"], startclock=1, playclock=1, seed=1),
        server.play_match(Pennies(), ["first", "first"], startclock=1, playclock=1, seed=1))
    assert broken.status == "aborted" and "ZeroDivisionError" in broken.reason
    assert server.records.get_match(broken.match)["status"] == "aborted"
    assert fine.status == "completed" and fine.payoffs == [100.0, 0.0]


async def test_a_failing_player_is_ce_and_the_match_goes_on(server, monkeypatch) -> None:
    from server.players.builtin import RandomPlayer

    async def broken(self, request):
        raise RuntimeError("player bug")

    monkeypatch.setattr(RandomPlayer, "choose", broken)
    outcome = await server.play_match(Pennies(), ["random", "first"], startclock=1,
                                      playclock=1, seed=1)
    assert outcome.status == "completed"
    assert outcome.errors == [["CE", ""], ["CE", ""]]


@pytest.mark.parametrize(("clock", "margin"), [(1.0, 0.25), (4.0, 0.5)])
async def test_uct_keeps_its_margin_but_at_most_a_quarter_of_the_clock(
        clock: float, margin: float) -> None:
    """The agent's rule: on a 1 s clock both think ~0.75 s (not 0.5 s)."""
    import time
    from types import SimpleNamespace

    from server.players.base import StepRequest
    from server.players.builtin import UctPlayer
    from server.players.spec import parse_spec

    player = UctPlayer(parse_spec("uct"))
    thinking: list[float] = []

    def search(state, deadline: float):
        thinking.append(deadline - time.monotonic())
        return SimpleNamespace(best_move=lambda role: "(mark 1 1)")

    player.search, player._search = object(), search
    player.model = SimpleNamespace(state=lambda state: state, move_text=str)
    request = StepRequest(1, ("state",), None, ["(mark 1 1)", "(mark 1 2)"], clock, None)
    assert await player.choose(request) == "(mark 1 1)"
    assert clock - margin - 0.05 < thinking[0] <= clock - margin


async def test_a_game_without_goals_at_its_end_completes_at_zero(server) -> None:
    """chess.kif at its move limit: the match is kept, every role scores 0, with a note."""
    from gdl.formats import load_game_text

    game = load_game_text("gdl", "(role a) (role b) (init (step 0)) (legal a go) (legal b go) "
                          "(<= (next (step 1)) (true (step 0))) (<= terminal (true (step 1))) "
                          "(<= (goal a 100) (true (step 0))) (<= (goal b 0) (true (step 0)))",
                          name="goalless")
    outcome = await server.play_match(game, ["first", "random"], startclock=1, playclock=1)
    assert (outcome.status, outcome.payoffs) == ("completed", [0.0, 0.0])
    assert "role a has 0 goal values" in outcome.reason
    record = server.records.get_match(outcome.match)
    assert (record["status"], record["payoffs"]) == ("completed", [0.0, 0.0])
    assert record["reason"] == outcome.reason
