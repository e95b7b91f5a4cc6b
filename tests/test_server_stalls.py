"""Issue 32, item 1: the server's stalls are never charged to the players.

An answer's time runs from the request to when its bytes reached the server; a stall of
the server's event loop (a long callback, a descheduled process) in between is the
server's, so a player that answered at once is never recorded ``TO`` for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import random
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from conftest import running_server
from test_server_support import Pennies, ScriptedAgent

from server import loop_clock


def after(seconds: float) -> Callable[[dict[str, Any]], str]:
    """A policy: the first legal move, ``seconds`` after the request."""
    def policy(message: dict[str, Any]) -> str:
        time.sleep(seconds)  # (the agent's own loop, in its own thread)
        return message["legal"][0]
    return policy


class ThreadAgent:
    """A :class:`ScriptedAgent` on an event loop of its own, in a thread: it answers even
    while the server's loop is stalled."""

    def __init__(self, url: str, name: str, policy: Callable[[dict[str, Any]], Any]) -> None:
        self.agent = ScriptedAgent(url, name, policy)
        self.welcomed = threading.Event()
        self.thread = threading.Thread(target=asyncio.run, args=(self._run(),), daemon=True)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.task = asyncio.create_task(self.agent.run())
        await self.agent.welcomed.wait()
        self.welcomed.set()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task

    async def start(self) -> ThreadAgent:
        self.thread.start()
        assert await asyncio.to_thread(self.welcomed.wait, 10)
        return self

    async def stop(self) -> None:
        if self.loop is not None and self.task is not None:
            self.loop.call_soon_threadsafe(self.task.cancel)
        await asyncio.to_thread(self.thread.join, 10)


class Staller:
    """A match listener that blocks the server's loop for ``seconds`` from 0.05 s after
    each step's requests (as a page rendered on the loop once did)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def begun(self, match, state) -> None:
        pass

    def turn(self, match, acting) -> None:
        asyncio.get_running_loop().call_later(0.05, time.sleep, self.seconds)

    def stepped(self, match, state) -> None:
        pass

    def ended(self, match) -> None:
        pass


async def test_a_stall_of_the_loop_is_not_the_players_timeout(tmp_path) -> None:
    async with running_server(tmp_path, grace=0.05, seat_wait=10) as srv:
        bot = await ThreadAgent(srv.url, "quick", after(0.2)).start()  # during the stall
        try:
            match = srv.create_match(Pennies(), ["ws:quick", "first"], startclock=2,
                                     playclock=1, seed=1)
            match.listener = Staller(2.5)  # > the play clock + grace, at every step
            outcome = await asyncio.wait_for(srv.tasks[match.id], 60)
        finally:
            await bot.stop()
        record = srv.records.get_match(match.id)
    assert outcome.status == "completed"
    assert outcome.errors == [["", ""], ["", ""]], outcome.errors  # no TO for the stalls
    for step in record["steps"]:  # the answer times leave the server's stall out
        assert step["times"][0] < 1.0, step["times"]
    assert loop_clock.running().stalls >= 2


async def test_a_really_late_answer_is_still_a_timeout(tmp_path) -> None:
    async with running_server(tmp_path, grace=0.05, seat_wait=10) as srv:
        agent = await ScriptedAgent(srv.url, "silent", policy=lambda m: None).start()
        outcome = await srv.play_match(Pennies(), ["ws:silent", "first"], startclock=1,
                                       playclock=0.3, seed=1)
        await agent.stop()
        record = srv.records.get_match(outcome.match)
    assert [e[0] for e in outcome.errors] == ["TO", "TO"]
    assert all(0.3 <= s["times"][0] < 5 for s in record["steps"])


# --- pages and records reads: off the loop, and within a budget per address ---

def long_record(n: int = 1500, size: int = 8) -> dict[str, Any]:
    """A finished GDL match of ``n`` steps on a ``size`` x ``size`` board, as recorded."""
    rng = random.Random(1)
    board = {(x, y): "b" for x in range(1, size + 1) for y in range(1, size + 1)}

    def text(k: int) -> str:
        cells = " ".join(f"(cell {x} {y} {v})" for (x, y), v in sorted(board.items()))
        return f"( {cells} (step {k}) )"

    initial, steps = text(0), []
    for k in range(1, n + 1):
        board[rng.randint(1, size), rng.randint(1, size)] = rng.choice("xob")
        steps.append({"step": k, "moves": [f"(mark {k})", "noop"], "errors": ["", ""],
                      "state": text(k), "time": 1.0 + k})
    return {"id": "long.1", "game": "long", "format": "gdl", "roles": ["x", "o"],
            "players": ["first", "first"], "seed": 1, "startclock": 1.0, "playclock": 1.0,
            "tournament": None, "status": "completed", "reason": None, "payoffs": [50, 50],
            "initial_state": initial, "description": {"format": "gdl", "name": "long"},
            "started": 1.0, "finished": 2.0, "steps": steps}


def get(port: int, path: str, source: str = "127.0.0.1") -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60,
                                            source_address=(source, 0))
    try:
        connection.request("GET", path)
        answer = connection.getresponse()
        return answer.status, dict(answer.getheaders()), answer.read()
    finally:
        connection.close()


async def test_a_long_match_page_never_stalls_the_loop(tmp_path) -> None:
    """The issue's 1,000-step page took 2.1 s of the event loop; now the loop's longest
    gap while it is made is a small part of the time the page takes (the same work on
    the loop would make the gap the whole of it), whatever the machine's load."""
    async with running_server(tmp_path) as srv:
        await srv.records.import_match(long_record())
        gaps: list[float] = []

        async def ticker() -> None:
            loop = asyncio.get_running_loop()
            last = loop.time()
            while True:
                await asyncio.sleep(0.005)
                now = loop.time()
                gaps.append(now - last)
                last = now

        ticking = asyncio.create_task(ticker())
        await asyncio.sleep(0.05)
        started = time.perf_counter()
        (status, _, body), (page, _, _) = await asyncio.gather(
            asyncio.to_thread(get, srv.port, "/api/matches/long.1"),
            asyncio.to_thread(get, srv.port, "/matches/long.1?step=700"))
        took = time.perf_counter() - started
        ticking.cancel()
    assert status == 200 and page == 200
    assert len(json.loads(body)["views"]) == 1501
    assert max(gaps) < max(0.1, took / 4), (max(gaps), took)


async def test_expensive_reads_are_limited_per_address(tmp_path) -> None:
    async with running_server(tmp_path) as srv:
        answers = [await asyncio.to_thread(get, srv.port, f"/matches/none.{k}", "127.0.0.3")
                   for k in range(60)]
        statuses = [status for status, _, _ in answers]
        assert statuses[0] == 404 and 429 in statuses  # past the burst: too many
        refused = next(headers for status, headers, _ in answers if status == 429)
        assert int(refused["Retry-After"]) >= 1
        # another address reads on
        assert (await asyncio.to_thread(get, srv.port, "/matches/none.x", "127.0.0.4"))[0] == 404


async def _watch_finished(url: str, match_id: str, source: str) -> int:
    """A spectator of a finished match from ``source``: the steps of its ``watching``
    (the whole replay)."""
    from websockets.asyncio.client import connect

    async with connect(url, local_addr=(source, 0), max_size=None) as ws:
        await ws.send(json.dumps({"type": "watch", "match": match_id}))
        message = json.loads(await ws.recv())
    return len(message.get("history", ()))


@pytest.mark.slow
async def test_the_issues_flood_charges_no_timeouts(tmp_path) -> None:
    """Item 1's flood again: 10 tic-tac-toe matches between bots that answer at once
    (1 s play clock) while 20 clients, each from its own address (so that none is
    rate-limited), load a 1,500-step match's JSON, its page and its replay over the
    websocket, twice over: it gave 14 TO faults; now none (60-70 matches, 360-420 steps
    played during the reads), and every read is served (27 loads of one uncached page at
    once once lost connections: now they share one build, server/web/http.py)."""
    from gdl.formats import load_game
    from server.bench.server import DEFAULT_GAME

    game = load_game(str(DEFAULT_GAME))
    async with running_server(tmp_path, seat_wait=30) as srv:
        await srv.records.import_match(long_record())
        bots = [await ThreadAgent(srv.url, f"bot{k}", after(0.0)).start() for k in range(20)]
        try:
            reads: list[Any] = []
            for k in range(40):
                source = f"127.0.0.{10 + k % 20}"
                if k % 3 == 2:
                    reads.append(_watch_finished(srv.url, "long.1", source))
                else:
                    path = "/api/matches/long.1" if k % 3 == 0 else "/matches/long.1"
                    reads.append(asyncio.to_thread(get, srv.port, path, source))
            reading = asyncio.ensure_future(asyncio.gather(*reads))
            outcomes = []
            while not reading.done() or not outcomes:  # rounds of 10 matches meanwhile
                matches = [srv.create_match(game, [f"ws:bot{2 * m}", f"ws:bot{2 * m + 1}"],
                                            startclock=2, playclock=1, seed=len(outcomes) + m)
                           for m in range(10)]
                outcomes += await asyncio.wait_for(
                    asyncio.gather(*(srv.tasks[m.id] for m in matches)), 600)
            served = await asyncio.wait_for(reading, 600)
        finally:
            for bot in bots:
                await bot.stop()
    assert all(o.status == "completed" for o in outcomes)
    faults = [e for o in outcomes for step in o.errors for e in step if e]
    assert faults == [], faults
    assert all(r == 1500 if isinstance(r, int) else r[0] == 200 for r in served), \
        [r if isinstance(r, int) else r[0] for r in served]
