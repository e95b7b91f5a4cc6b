"""The ``ws`` target of ``ggp bench fuzz``: the match server's websocket protocol.

One JSON message (a mutant of a message of every type, :func:`gdl.fuzz.mutate.mutate_message`)
goes to a real match server (``ggp serve`` on 127.0.0.1, a subprocess), on a logged-in
connection seated in a match of its own, so ``ready``/``move``/``abort`` mutants meet a
real match (a ``hello``/``rejoin``/``watch``/``unwatch`` mutant goes on a fresh
connection: the spectators' path); a ``ping``
follows, which must be answered. An ``error`` reply is a clean error unless its code
is ``internal``; a traceback in the server's log (one a match's task logs later
counts on the mutant during which it appeared), or a dead server, is an internal
error; no pong within the time limit is a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import websockets

from gdl.fuzz.mutate import mutate_message
from gdl.fuzz.tally import Progress, Tally, Target
from solvers.locations import REPO

WS_GAME = "simultaneous_tictactoe.kif"  # a bundled game (games/gdl)
RESEAT_EVERY = 100  # mutants; an aborted or finished seat is replaced this often


def ws_seeds(admin_token: str, match: str) -> list[dict[str, Any]]:
    """Messages of every type; ``match`` is the fuzzer's own seat (see :func:`_seated`)."""
    return [
        {"type": "hello", "name": "fuzzer", "token": "0123456789abcdef"},
        {"type": "rejoin", "match": match, "token": "0123456789abcdef", "name": "fuzzer"},
        {"type": "ready", "match": match},
        {"type": "move", "match": match, "step": 1, "move": "(mark 1 1)", "role": "x"},
        {"type": "ping", "nonce": 7},
        {"type": "pong", "nonce": 7},
        {"type": "create", "game": WS_GAME, "players": ["random", "first"], "startclock": 1,
         "playclock": 1, "seed": 3, "admin_token": admin_token},
        {"type": "list", "admin_token": admin_token},
        {"type": "abort", "match": match, "admin_token": admin_token},
        {"type": "hello", "name": "fuzzer2", "token": "0123456789abcdef",
         "admin_token": admin_token},
        {"type": "watch", "match": match},
        {"type": "unwatch", "match": match},
    ]


class ServerUnderTest:
    """``ggp serve`` on a free loopback port, its log in a file that is read as it grows."""

    def __init__(self, folder: Path, admin_token: str) -> None:
        self.folder, self.admin_token = folder, admin_token
        self.process: subprocess.Popen | None = None
        self.url = ""
        self._log_seen = 0

    def start(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}/"
        self.log = self.folder / "server.log"
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "ggp_cli", "serve", "--port", str(port),
                 "--db", str(self.folder / "fuzz.sqlite"), "--games", str(REPO / "games" / "gdl"),
                 "--admin-token", self.admin_token],
                cwd=self.folder, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                env={**os.environ, "PYTHONPATH": str(REPO)})

    def new_log(self) -> str:
        """What the server logged since the last call."""
        with open(self.log, "rb") as log:
            log.seek(self._log_seen)
            data = log.read()
        self._log_seen += len(data)
        return data.decode(errors="replace")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


async def _ws_connect(server: ServerUnderTest):
    deadline = time.monotonic() + 30
    while True:
        try:
            return await websockets.connect(server.url, max_size=None)
        except OSError:
            if time.monotonic() > deadline or server.process.poll() is not None:
                raise
            await asyncio.sleep(0.2)


async def _seated(server: ServerUnderTest):  # -> (connection, match id)
    """A logged-in connection seated in a match of its own (``ws:NAME`` against
    ``random``, long clocks), so ready/move/abort mutants meet a real match."""
    ws = await _ws_connect(server)
    name = f"fuzz{secrets.token_hex(3)}"
    # (the admin token registers the name: ggp serve registers no stranger's name)
    await ws.send(json.dumps({"type": "hello", "name": name, "token": secrets.token_hex(8),
                              "admin_token": server.admin_token}))
    await ws.send(json.dumps({"type": "create", "game": WS_GAME, "players": [f"ws:{name}", "random"],
                              "startclock": 60, "playclock": 60,
                              "admin_token": server.admin_token}))
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(10):
            while True:
                message = json.loads(await ws.recv())
                if message.get("type") == "offer":
                    return ws, message["match"]
    return ws, "m1"  # (creation refused: the mutants still go through the handler)


async def _ws_probe(ws, text: str, time_limit: float) -> tuple[str, str]:
    """Send one mutant, then a ping; the mutant's outcome from the replies before the pong."""
    nonce = secrets.token_hex(4)
    outcome, detail = "accepted", ""
    try:
        await ws.send(text)
        await ws.send(json.dumps({"type": "ping", "nonce": nonce}))
        stop = time.monotonic() + time_limit
        while True:
            reply = json.loads(await asyncio.wait_for(ws.recv(), stop - time.monotonic()))
            if reply.get("type") == "pong" and reply.get("nonce") == nonce:
                return outcome, detail
            if reply.get("type") == "error":
                if reply.get("code") == "internal":
                    return "internal", json.dumps(reply)
                outcome, detail = "error", reply.get("message", "")
    except TimeoutError:
        return "hang", f"no pong within {time_limit} s"
    except websockets.ConnectionClosed as exc:
        code = exc.rcvd.code if exc.rcvd is not None else None
        if code in (1000, 1008, 1009, 1013):  # normal, policy, too big, try later
            return "error", f"closed with {code}"
        return "internal", f"connection closed: {exc}"


async def _fuzz_ws(name: str, count: int, rng: random.Random, time_limit: float,
                   save: Path | None, progress: Progress, folder: Path) -> Tally:
    token = secrets.token_hex(16)
    tally = Tally(seeds=len(ws_seeds(token, "")))
    server = ServerUnderTest(folder, token)
    server.start()
    ws = None
    try:
        for number in range(count):
            if ws is None or number % RESEAT_EVERY == 0:
                if ws is not None:
                    await ws.close()
                ws, match = await _seated(server)
            seed = rng.choice(ws_seeds(token, match))
            mutant = mutate_message(seed, rng)
            # a first message (a login, or a spectator's: a socket that watches never logs
            # in): on a new connection
            if seed["type"] in ("hello", "rejoin", "watch", "unwatch"):
                async with await _ws_connect(server) as first:
                    outcome, detail = await _ws_probe(first, mutant, time_limit)
            else:
                outcome, detail = await _ws_probe(ws, mutant, time_limit)
                if outcome != "accepted" and outcome != "error" or detail.startswith("closed"):
                    await ws.close()
                    ws = None
            logged = server.new_log()
            if "Traceback" in logged and outcome != "hang":
                outcome, detail = "internal", logged
            if server.process.poll() is not None:
                outcome, detail = "internal", f"the server exited\n{logged}"
                server.start()
                ws = None
            tally.add(outcome, mutant, f"{seed['type']} mutant {mutant[:300]!r}\n{detail}",
                      save, name)
            progress(name, tally)
    finally:
        if ws is not None:
            await ws.close()
        server.stop()
    return tally


def fuzz_ws(name: str, count: int, rng: random.Random, time_limit: float, save: Path | None,
            progress: Progress) -> Tally:
    """``count`` websocket mutants to a fresh ``ggp serve`` (its files in a temporary
    folder); see the module docstring."""
    with tempfile.TemporaryDirectory(prefix="ggp-fuzz-") as folder:
        return asyncio.run(_fuzz_ws(name, count, rng, time_limit, save, progress, Path(folder)))


TARGET = Target("websocket messages to a real server", fuzz_ws)
