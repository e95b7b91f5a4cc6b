"""The spectator subscription (``watch``): what a spectator sees equals the records."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, running_server, shared_path
from test_server_support import Pennies
from websockets.asyncio.client import connect

from gdl.formats import load_game
from server.spectators import Spectator
from server.web.board import state_view

CONNECT_FOUR = REPO / "tests" / "data" / "connectFour.kif"


async def watch_to_end(url: str, match_id: str) -> list[dict[str, Any]]:
    async with connect(url, max_size=None) as ws:
        await ws.send(json.dumps({"type": "watch", "match": match_id}))
        messages = []
        async for data in ws:
            messages.append(json.loads(data))
            if messages[-1]["type"] in ("ended", "error") or (
                    messages[-1]["type"] == "watching"
                    and messages[-1]["status"] in ("completed", "aborted")):
                return messages
    return messages


async def test_a_spectator_sees_every_step_the_records_hold(tmp_path: Path) -> None:
    game = load_game(CONNECT_FOUR)
    async with running_server(tmp_path, grace=0.05) as srv:
        match = srv.create_match(game, ["random", "random"], startclock=1, playclock=1, seed=5)
        messages = await watch_to_end(srv.url, match.id)
        await srv.tasks.get(match.id, asyncio.sleep(0))
        record = srv.records.get_match(match.id)
    first = messages[0]
    assert first["type"] == "watching" and first["roles"] == ["red", "black"]
    assert first["players"] == ["random", "random"] and first["game"]["format"] == "gdl"
    steps = first["history"] + [m for m in messages if m["type"] == "played"]
    assert [s["step"] for s in steps] == [s["step"] for s in record["steps"]]
    assert [s["moves"] for s in steps] == [s["moves"] for s in record["steps"]]
    assert [s["errors"] for s in steps] == [s["errors"] for s in record["steps"]]
    assert all(t is not None and t >= 0 for s in steps for t in s["times"])
    assert messages[-1] == {"type": "ended", "match": match.id, "status": "completed",
                            "payoffs": record["payoffs"], "reason": None}
    # the board: 7 x 6 cells, one piece per drop played so far, never a piece removed
    final = [m for m in messages if m["type"] == "played"][-1]["view"]["grid"]
    assert final["columns"] == list("1234567") and final["rows"] == list("654321")
    drops = sum(1 for s in steps for move in s["moves"] if move != "noop")
    assert sum(1 for row in final["cells"] for c in row if c) == drops
    clocks = [m for m in messages if m["type"] == "clock"]
    assert clocks and all(0 < c["deadline"] <= 1 for c in clocks)


async def test_a_finished_match_is_answered_from_the_records(tmp_path: Path) -> None:
    game = load_game(CONNECT_FOUR)
    async with running_server(tmp_path, grace=0.05) as srv:
        outcome = await srv.play_match(game, ["random", "random"], startclock=1, playclock=1,
                                       seed=2)
    async with running_server(tmp_path) as srv:  # a new server: only the records know it
        (watching,) = await watch_to_end(srv.url, outcome.match)
    assert watching["status"] == "completed" and watching["payoffs"] == outcome.payoffs
    assert [s["moves"] for s in watching["history"]] == outcome.moves
    cells = watching["view"]["grid"]["cells"]
    assert sum(1 for row in cells for c in row if c) == \
        sum(1 for moves in outcome.moves for m in moves if m != "noop")


async def test_spectator_errors(tmp_path: Path) -> None:
    async with running_server(tmp_path, max_spectators=1) as srv:
        async with connect(srv.url) as ws:
            await ws.send(json.dumps({"type": "watch", "match": "no.such.match"}))
            assert json.loads(await ws.recv())["code"] == "unknown-match"
            await ws.send(json.dumps({"type": "hello", "name": "eve", "token": "0123456789"}))
            assert json.loads(await ws.recv())["code"] == "spectator"
            match = srv.create_match(Pennies(), ["first", "first?delay=5"], startclock=1,
                                     playclock=10, seed=1)
            await ws.send(json.dumps({"type": "watch", "match": match.id}))
            assert json.loads(await ws.recv())["type"] == "watching"
            async with connect(srv.url) as second:  # over the cap of spectator sockets
                await second.send(json.dumps({"type": "watch", "match": "x"}))
                assert json.loads(await second.recv())["code"] == "server-full"
            await srv.abort(match.id)
        async with connect(srv.url) as agent:
            await agent.send(json.dumps({"type": "hello", "name": "bob",
                                         "token": "0123456789"}))
            assert json.loads(await agent.recv())["type"] == "welcome"
            await agent.send(json.dumps({"type": "watch", "match": "x"}))
            assert json.loads(await agent.recv())["code"] == "spectator"


class StuckSocket:
    """A socket whose reader never reads: every send waits for ever."""

    def __init__(self) -> None:
        self.closed_with: tuple[int, str] | None = None

    async def send(self, text: str) -> None:
        await asyncio.Event().wait()

    async def close(self, code: int, reason: str) -> None:
        self.closed_with = (code, reason)


async def test_a_slow_spectator_is_cut_off_and_never_waited_for() -> None:
    ws = StuckSocket()
    spectator = Spectator(ws, queue_size=2)  # type: ignore[arg-type]
    for n in range(4):  # one in the stuck send, two queued, the fourth overflows
        spectator.offer(f"message {n}")  # returns at once: the match loop never waits
        await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert spectator.closed and ws.closed_with is not None and ws.closed_with[0] == 1008


def test_views_of_tree_and_posg_states() -> None:
    kuhn = load_game(shared_path("efg", "kuhn_from_course.efg"))
    rng = random.Random(0)
    state = kuhn.initial_state(rng)
    view = state_view(kuhn, state)
    assert view["kind"] == "tree" and [a for a, _ in view["path"]] == ["chance"]
    acting = next(r for r in range(2) if kuhn.legal_moves(state, r))
    assert view["to_move"] == kuhn.roles[acting]
    move = kuhn.legal_moves(state, acting)[0]
    after = state_view(kuhn, kuhn.next_state(state, [move if r == acting else None
                                                     for r in range(2)], rng))
    assert after["path"][-1] == [kuhn.roles[acting], move]
    posg_file = sorted(shared_path("posg", "pursuit-evasion").rglob("*.osposg"))[0]
    posg = load_game(posg_file)
    view = state_view(posg, posg.initial_state(rng))
    assert view["kind"] == "posg" and view["step"] == 0 and view["last_actions"] is None


@pytest.mark.parametrize("kind", ["watch", "unwatch"])
def test_watch_messages_parse(kind: str) -> None:
    from server.protocol import parse_message
    assert parse_message(json.dumps({"type": kind, "match": "m.1"})) == \
        {"type": kind, "match": "m.1"}


KUHN = REPO / "games" / "gdl2" / "kuhn_poker.kif"


async def test_hidden_information_is_redacted_while_the_match_runs(tmp_path: Path) -> None:
    """A player could watch its own GDL-II match: anonymous spectators see who acted,
    times and fault codes but no move and no state until the end; the admin token sees
    everything; a wrong token is refused."""
    game = load_game(KUHN)
    async with running_server(tmp_path, grace=0.05, admin_token="operator-secret") as srv:
        match = srv.create_match(game, ["random?delay=0.1", "random?delay=0.1"],
                                 startclock=1, playclock=1, seed=3)
        async with connect(srv.url) as ws:
            await ws.send(json.dumps({"type": "watch", "match": match.id,
                                      "admin_token": "wrong-token"}))
            assert json.loads(await ws.recv())["code"] == "not-allowed"
        anonymous, admin = await asyncio.gather(
            watch_to_end(srv.url, match.id), watch_full(srv.url, match.id, "operator-secret"))
        await srv.tasks.get(match.id, asyncio.sleep(0))
        record = srv.records.get_match(match.id)
    moves = [s["moves"] for s in record["steps"]]
    assert anonymous[0]["status"] != "completed" and anonymous[0]["hidden"] is True
    live = anonymous[0]["history"] + [m for m in anonymous if m["type"] == "played"]
    assert [s["step"] for s in live] == [s["step"] for s in record["steps"]]
    assert all(m in (None, "?") for s in live for m in s["moves"])
    assert [[m is None for m in s["moves"]] for s in live] == [[m is None for m in ms]
                                                              for ms in moves]
    views = [anonymous[0]["view"]] + [m["view"] for m in anonymous if m["type"] == "played"]
    assert all(v["kind"] == "text" and "hidden" in v["text"] for v in views)
    cards = ("jack", "queen", "king")
    assert not any(c in json.dumps(m) for m in anonymous[:-1] for c in cards)
    # the end shows what was held back
    assert [s["moves"] for s in anonymous[-1]["history"]] == moves
    assert any(c in json.dumps(anonymous[-1]["view"]) for c in cards)
    full = admin[0]["history"] + [m for m in admin if m["type"] == "played"]
    assert admin[0]["hidden"] is False and [s["moves"] for s in full] == moves


async def watch_full(url: str, match_id: str, token: str) -> list[dict[str, Any]]:
    async with connect(url, max_size=None) as ws:
        await ws.send(json.dumps({"type": "watch", "match": match_id, "admin_token": token}))
        messages = []
        async for data in ws:
            messages.append(json.loads(data))
            if messages[-1]["type"] in ("ended", "error"):
                return messages
    return messages
