"""Support for the server's tests: a tiny playable game and a scripted websocket agent.

``Pennies``: two rounds; in each round ``row`` and ``col`` show heads or tails at
once; ``row`` wins a round when they match. Then, when ``turns=True``, a third round
where only ``row`` acts (``col`` has no legal move, as at an ``.efg`` node) and a chance
coin decides whether ``row``'s call counts. Payoffs: rounds won by each role x 50.
Observations: each role sees only its own moves (an imperfect-information game).

``ScriptedAgent``: a websocket agent that logs in and answers every request with a
policy (``first`` legal move by default), recording every message it got.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import Callable, Sequence
from typing import Any

from websockets.asyncio.client import connect

from server.protocol import normalize_move
from solvers.playable import PlayableGame


class Pennies:
    format = "efg"

    def __init__(self, turns: bool = False) -> None:
        self.name = "pennies"
        self.roles = ["row", "col"]
        self.turns = turns
        self.rounds = 3 if turns else 2

    def initial_state(self, rng: random.Random) -> tuple:
        return ()

    def is_terminal(self, state: tuple) -> bool:
        return len(state) == self.rounds

    def legal_moves(self, state: tuple, role: int) -> list[str]:
        if len(state) == 2:
            return ["call", "pass"] if role == 0 else []
        return ["heads", "tails"]

    def next_state(self, state: tuple, moves: Sequence[str | None], rng: random.Random) -> tuple:
        if len(state) == 2:
            return state + ((moves[0], rng.choice(["counts", "void"])),)
        return state + (tuple(moves),)

    def payoffs(self, state: tuple) -> list[float]:
        row = sum(50 for a, b in state[:2] if a == b)
        if len(state) == 3 and state[2] == ("call", "counts"):
            row += 50
        return [float(row), float(50 * self.rounds - row)]

    def observation(self, state: tuple, role: int) -> list[str | None]:
        return [step[role] if role < len(step) else None for step in state]

    hidden_information = True  # each role sees only its own moves

    def search_model(self) -> None:
        return None

    def state_text(self, state: tuple) -> str:
        return str(state)

    def description(self) -> dict[str, str]:
        return {"format": "efg", "name": self.name, "text": "EFG 2 R \"pennies\" { \"row\" \"col\" }"}


def test_fake_game_is_playable() -> None:
    game = Pennies(turns=True)
    assert isinstance(game, PlayableGame)
    state = game.initial_state(random.Random(0))
    for _ in range(2):
        state = game.next_state(state, ["heads", "heads"], random.Random(0))
    assert game.legal_moves(state, 1) == []
    state = game.next_state(state, ["call", None], random.Random(1))
    assert game.is_terminal(state)
    assert game.payoffs(state)[0] in (100.0, 150.0)


def first_legal(message: dict[str, Any]) -> Any:
    return message["legal"][0]


class ScriptedAgent:
    """A websocket agent for tests: ``policy(request) -> move`` (``None``: stay silent)."""

    def __init__(self, url: str, name: str, policy: Callable[[dict[str, Any]], Any] = first_legal,
                 token: str = "", max_matches: int = 1) -> None:
        self.url = url
        self.name = name
        self.policy = policy
        self.token = token or f"token-{name}-0123456789"
        self.max_matches = max_matches
        self.received: list[dict[str, Any]] = []
        self.ends: dict[str, dict[str, Any]] = {}
        self.task: asyncio.Task[None] | None = None
        self.welcomed = asyncio.Event()

    async def run(self, first: dict[str, Any] | None = None) -> None:
        async with connect(self.url) as ws:
            self.ws = ws
            await ws.send(json.dumps(first or {"type": "hello", "name": self.name,
                                               "token": self.token,
                                               "max_matches": self.max_matches}))
            async for data in ws:
                message = json.loads(data)
                self.received.append(message)
                kind = message["type"]
                if kind == "welcome":
                    self.welcomed.set()
                elif kind == "offer":
                    await ws.send(json.dumps({"type": "ready", "match": message["match"]}))
                elif kind == "request":
                    move = self.policy(message)
                    if move is not None:
                        await ws.send(json.dumps({"type": "move", "match": message["match"],
                                                  "step": message["step"], "move": move}))
                elif kind == "ping":
                    await ws.send(json.dumps({"type": "pong", "nonce": message["nonce"]}))
                elif kind in ("end", "abort"):
                    self.ends[message["match"]] = message

    async def start(self) -> ScriptedAgent:
        self.task = asyncio.create_task(self.run())
        await asyncio.wait_for(self.welcomed.wait(), 10)
        return self

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            try:
                await self.task
            except (asyncio.CancelledError, Exception):
                pass

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m["type"] == kind]


async def silent_in_a_match(server: Any, name: str, opponent: str,
                            playclock: float) -> tuple[ScriptedAgent, Any]:
    """A websocket agent that never moves, seated as ``row`` of a Pennies match that has
    sent it its first request."""
    agent = await ScriptedAgent(server.url, name, policy=lambda m: None).start()
    match = server.create_match(Pennies(), [f"ws:{name}", opponent], startclock=1,
                                playclock=playclock, seed=1)
    while not agent.of_type("request"):
        await asyncio.sleep(0.01)
    return agent, match


def kif_items(text: str) -> list[str]:
    """The top-level elements of a KIF list, each as normalised text."""
    tokens = re.findall(r"\(|\)|[^\s()]+", text)
    if not tokens or tokens[0] != "(" or tokens[-1] != ")":
        raise ValueError(f"not a list: {text[:80]!r}")
    items, current, depth = [], [], 0
    for token in tokens[1:-1]:
        current.append(token)
        depth += (token == "(") - (token == ")")
        if depth == 0:
            items.append(normalize_move("gdl", " ".join(current)))
            current = []
    return items


class GgpHttpTestPlayer:
    """A minimal GGP HTTP player (ggp-base's protocol) that plays the first legal move.

    It keeps its own state machine (``gdl.reasoning.machine``) from START and the joint moves of
    PLAY/STOP, as every GGP player must; ``messages`` records what the manager sent.
    """

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.machine: Any = None
        self.state: Any = None
        self.role = 0

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def close(self) -> None:
        self.server.close()
        await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(re.search(rb"Content-Length: (\d+)", head).group(1))
        body = (await reader.readexactly(length)).decode()
        self.messages.append(body)
        reply = self.reply(body).encode()
        writer.write(b"HTTP/1.0 200 OK\r\nContent-Type: text/acl\r\nContent-Length: "
                     + str(len(reply)).encode() + b"\r\n\r\n" + reply)
        await writer.drain()
        writer.close()

    def _advance(self, joint: str) -> None:
        if joint.upper() != "NIL":
            moves = [self.machine.parse_move(m, r) for r, m in enumerate(kif_items(joint))]
            self.state = self.machine.next_state(self.state, moves)

    def reply(self, body: str) -> str:
        from gdl.reasoning.machine import load_machine

        items = kif_items(body)
        kind = items[0].upper()
        if kind == "START":
            self.machine = load_machine(items[3][1:-1], engine="general")
            self.state = self.machine.initial_state()
            self.role = list(self.machine.roles).index(items[2])
            return "ready"
        if kind == "PLAY":
            self._advance(items[2])
            return self.machine.move_to_kif(self.machine.legal_moves(self.state, self.role)[0])
        if kind == "STOP":
            self._advance(items[2])
            return "done"
        return "aborted" if kind == "ABORT" else "busy"
