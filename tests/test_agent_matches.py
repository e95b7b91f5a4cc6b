"""Complete matches between our agents through a GGP HTTP game manager on loopback.

The manager here is a minimal loop that speaks to the players exactly as ggp-base's
GameServer does (one HTTP/1.0 POST per message, START/PLAY/STOP, the previous joint
move in role order) and records per step the moves and the error codes (``TO``,
``IL <move>``), so the tests check the records: no timeouts, no illegal moves.
"""

from __future__ import annotations

import asyncio
import re
import socket
import sys
import time
from pathlib import Path

import pytest
from conftest import shared_path

from agent.brains.options import BrainOptions
from agent.gamer import Gamer
from agent.http_player import GgpPlayer, serve

pytest.importorskip("gdl.reasoning.machine")
from gdl.reasoning.machine import load_machine  # noqa: E402

ENGINE = "auto"
MARGIN = 0.25


async def post(port: int, message: str, timeout: float) -> str | None:
    """Send one message as ggp-base does; the reply body, or None on timeout/error."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5)
        body = message.encode()
        writer.write(b"POST / HTTP/1.0\r\nAccept: text/delim\r\nHost: 127.0.0.1\r\n"
                     b"Sender: GAMESERVER\r\nReceiver: player\r\nContent-Type: text/acl\r\n"
                     + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        await writer.drain()
        data = await asyncio.wait_for(reader.read(), timeout)
        writer.close()
    except (TimeoutError, OSError):
        return None
    head, _, reply = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200 OK")
    assert f"Content-Length: {len(reply)}".encode() in head
    return reply.decode().strip()


async def timed_post(port: int, message: str, timeout: float) -> tuple[str | None, float]:
    started = time.monotonic()
    answer = await post(port, message, timeout)
    return answer, time.monotonic() - started


async def run_match(path: Path, ports: list[int], start_clock: float, play_clock: float,
                    match_id: str = "test.match") -> dict:
    """A ggp-base-like record: moves and errors per step, goal values."""
    text = re.sub(r";[^\n]*", "", path.read_text())  # managers send rules without comments
    machine = load_machine(text, engine=ENGINE)
    roles = machine.roles
    replies = await asyncio.gather(*(
        post(port, f"(START {match_id} {role} ({text}) {start_clock} {play_clock})",
             start_clock + 1) for port, role in zip(ports, roles, strict=True)))
    assert replies == ["ready"] * len(roles)
    state, previous = machine.initial_state(), "NIL"
    record: dict = {"moves": [], "errors": [], "answer_times": [], "choices": []}
    while not machine.is_terminal(state):
        timed = await asyncio.gather(*(
            timed_post(port, f"(PLAY {match_id} {previous})", play_clock + 1) for port in ports))
        answers = [answer for answer, _ in timed]
        record["answer_times"].append([seconds for _, seconds in timed])
        joint, errors = [], []
        record["choices"].append([len(machine.legal_moves(state, r)) for r in range(len(roles))])
        for r, answer in enumerate(answers):
            legal = machine.legal_moves(state, r)
            kif = {machine.move_to_kif(m): m for m in legal}
            move = None
            if answer is not None:
                try:
                    move = machine.parse_move(answer, r)
                except Exception:
                    move = None
            if move is None or move not in legal:
                errors.append("TO" if answer is None else f"IL {answer}")
                move = legal[0]
            else:
                errors.append("")
            joint.append(move)
            assert machine.move_to_kif(move) in kif
        record["moves"].append([machine.move_to_kif(m) for m in joint])
        record["errors"].append(errors)
        state = machine.next_state(state, joint)
        previous = "(" + " ".join(record["moves"][-1]) + ")"
    stops = await asyncio.gather(*(post(port, f"(STOP {match_id} {previous})", play_clock + 1)
                                   for port in ports))
    assert stops == ["done"] * len(roles)
    record["goals"] = list(machine.goals(state))
    return record


class Agents:
    """In-process GGP HTTP players on free loopback ports."""

    def __init__(self, count: int, player_options: dict | None = None, **gamer_options) -> None:
        self.count = count
        self.gamer_options = gamer_options
        self.player_options = player_options or {}
        self.players: list[GgpPlayer] = []
        self.servers: list[asyncio.Server] = []

    async def __aenter__(self) -> list[int]:
        for i in range(self.count):
            gamer = Gamer(BrainOptions(engine=ENGINE, seed=i), **self.gamer_options)
            player = GgpPlayer(f"agent{i}", gamer, margin=MARGIN, **self.player_options)
            self.players.append(player)
            self.servers.append(await serve(player, "127.0.0.1", 0))
        return [s.sockets[0].getsockname()[1] for s in self.servers]

    async def __aexit__(self, *exc: object) -> None:
        for server, player in zip(self.servers, self.players, strict=True):
            server.close()
            await server.wait_closed()
            player.gamer.close()


def assert_clean(record: dict) -> None:
    assert all(code == "" for step in record["errors"] for code in step), record["errors"]


@pytest.mark.parametrize("game, clocks", [
    ("ticTacToe", (1, 0.6)),   # one complete match early; the others (~20 s each) last
    pytest.param("ticTicToe", (1, 0.6), marks=pytest.mark.slow),
    pytest.param("connectFour", (1, 0.5), marks=pytest.mark.slow),
    pytest.param("3pttc", (1, 0.5), marks=pytest.mark.slow),
])
async def test_agents_play_complete_matches(game: str, clocks: tuple[float, float]) -> None:
    path = shared_path("gdl-corpus", "repository", f"{game}.kif")
    machine = load_machine(path, engine=ENGINE)
    async with Agents(len(machine.roles)) as ports:
        record = await run_match(path, ports, *clocks)
    assert_clean(record)
    assert all(0 <= g <= 100 for g in record["goals"])
    if len(machine.roles) == 2:
        assert sum(record["goals"]) == 100  # these games are constant-sum


async def test_puzzle_is_solved() -> None:
    path = shared_path("gdl-corpus", "repository", "maze.kif")
    async with Agents(1) as ports:
        record = await run_match(path, ports, 1, 0.6)
    assert_clean(record)
    assert record["goals"] == [100]  # maze's only full score: fetch the gold, bring it back


@pytest.mark.slow
async def test_our_server_drives_ggp_agent_http_processes(tmp_path) -> None:
    """``ggp agent --http`` processes seated as ``http://`` players by our match server."""
    pytest.importorskip("gdl.playable")
    from gdl.formats import load_game
    from server.app import MatchServer
    from server.records import Records, ggp_base_json

    game = load_game(shared_path("gdl-corpus", "repository", "ticTacToe.kif"))
    ports = [free_port(), free_port()]
    agents = [await asyncio.create_subprocess_exec(
        sys.executable, "-m", "ggp_cli", "agent", "--http", str(port), "--name", f"p{port}",
        "--margin", "0.3", "--quiet") for port in ports]
    try:
        for port in ports:
            await wait_for_info(port)
        records = Records(tmp_path / "matches.sqlite")
        async with MatchServer(records, port=0) as server:
            outcome = await server.play_match(
                game, [f"http://127.0.0.1:{port}" for port in ports], startclock=4,
                playclock=1.5, seed=3)
        record = ggp_base_json(records.get_match(outcome.match))
        records.close()
    finally:
        for process in agents:
            process.terminate()
            await process.wait()
    assert outcome.status == "completed", outcome.reason
    assert all(errors == ["", ""] for errors in record["errors"]), record["errors"]  # no TO/IL
    assert record["goalValues"] == [50, 50]  # both sides play tic-tac-toe perfectly


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def wait_for_info(port: int) -> None:
    for _ in range(100):
        if await post(port, "(INFO)", 2) is not None:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"no agent on port {port}")


KEYWORDS = {"role", "init", "true", "next", "legal", "does", "goal", "terminal", "distinct",
            "not", "or", "and", "base", "input", "<="}


def scrambled(text: str) -> str:
    """Every symbol but keywords and numbers renamed consistently, as managers may."""
    names: dict[str, str] = {}

    def rename(match: re.Match) -> str:
        word = match.group()
        if word.lower() in KEYWORDS or word.startswith("?") or word.isdigit():
            return word
        return names.setdefault(word, f"z{len(names)}q")

    return re.sub(r"[^\s()]+", rename, re.sub(r";[^\n]*", "", text))


@pytest.mark.slow
async def test_scrambled_symbols_play_the_same(tmp_path: Path) -> None:
    original = shared_path("gdl-corpus", "repository", "ticTacToe.kif")
    path = tmp_path / "scrambled.kif"
    path.write_text(scrambled(original.read_text()))
    assert "mark" not in path.read_text()
    async with Agents(2) as ports:
        # a start clock with a margin for a loaded machine: both solve the game in it
        record = await run_match(path, ports, 10, 0.6)
    assert_clean(record)
    assert record["goals"] == [50, 50]  # still perfect tic-tac-toe on both sides
