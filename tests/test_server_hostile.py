"""Hostile clients (issue 14): each script attacks the server and asserts the safe behaviour.

Huge integers, paths out of the game folders, non-finite numbers and long illegal moves
(items 3-5).
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from conftest import GAMES, running_server
from test_server_support import Pennies, ScriptedAgent
from websockets.asyncio.client import connect

from ggp_cli import main as ggp
from server import protocol
from server.protocol import ProtocolError, parse_message

GAME = GAMES / "gdl" / "simultaneous_tictactoe.kif"


@pytest.fixture
def game_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "games"
    folder.mkdir()
    shutil.copy(GAME, folder / GAME.name)
    return folder


@pytest.fixture
async def server(tmp_path, game_dir):
    async with running_server(tmp_path, grace=0.05, seat_wait=2, login_timeout=2,
                              game_dirs=[game_dir]) as srv:
        yield srv


async def ask(ws, message: dict | str) -> dict:
    await ws.send(message if isinstance(message, str) else json.dumps(message))
    return json.loads(await asyncio.wait_for(ws.recv(), 5))


def control(server, message: dict) -> dict:
    """A control message as the operator sends it (with the server's admin token)."""
    token = server.admin_token
    return {**message, **({"admin_token": token} if token else {})}


# --- item 3: huge integers ---

@pytest.mark.parametrize("field", ["seed", "step", "max_matches", "protocol"])
def test_integer_fields_are_bounded(field: str) -> None:
    base = {"seed": {"type": "create", "game": "g.kif", "players": ["random"]},
            "step": {"type": "move", "match": "m.1", "move": "x"},
            "max_matches": {"type": "hello", "name": "al", "token": "0123456789ab"},
            "protocol": {"type": "hello", "name": "al", "token": "0123456789ab"}}[field]
    for value in (2**63, 10**20, -1):
        with pytest.raises(ProtocolError) as info:
            parse_message(json.dumps({**base, field: value}))
        assert info.value.code == "bad-field" and field in info.value.message


async def test_huge_seed_is_refused_before_created_and_a_max_one_is_recorded(server) -> None:
    async with connect(server.url) as ws:
        for seed in (2**63, 10**20):
            reply = await ask(ws, control(server, {"type": "create", "game": GAME.name,
                                                   "players": ["random", "random"],
                                                   "seed": seed, "playclock": 1}))
            assert reply["type"] == "error" and reply["code"] == "bad-field", reply
        created = await ask(ws, control(server, {"type": "create", "game": GAME.name,
                                                 "players": ["random", "random"],
                                                 "seed": 2**63 - 1, "playclock": 1}))
        assert created["type"] == "created"
        finished = json.loads(await asyncio.wait_for(ws.recv(), 30))
        assert finished["status"] == "completed"
    assert server.records.get_match(created["match"])["seed"] == 2**63 - 1


@pytest.mark.parametrize(("argv", "message"), [
    (["match", str(GAME), "--players", "random", "random", "--seed", str(10**20)],
     "--seed: must be an integer in [0, 9223372036854775807]"),
    (["match", str(GAME), "--players", "random", "random", "--seed", "-1"], "--seed"),
    (["tournament", "--games", str(GAME), "--players", "random", "random",
      "--seed", str(2**63)], "--seed"),
    (["tournament", "--games", str(GAME), "--players", "random", "random",
      "--rounds", "0"], "--rounds"),
    (["tournament", "--games", str(GAME), "--players", "random", "random",
      "--concurrency", str(10**30)], "--concurrency"),
    (["serve", "--port", "70000"], "--port"),
    (["serve", "--max-connections", "0"], "--max-connections"),
    (["matches", "list", "--limit", "-5"], "--limit"),
    (["match", str(GAME), "--players", "random", "random?delay=1e300"], "delay"),
    (["match", str(GAME), "--players", "uct?playouts=1e30", "random"], "playouts"),
    (["match", str(GAME), "--players", "ws:x?wait=nan", "random"], "wait"),
])
def test_cli_integers_are_bounded(argv, message, tmp_path, capsys) -> None:
    status = ggp([*argv, "--db", str(tmp_path / "m.sqlite")])
    err = capsys.readouterr().err
    assert status in (1, 2) and message in err and "Traceback" not in err, err
    assert status == (1 if "?" in " ".join(argv) else 2)  # a usage error exits 2
    assert not (tmp_path / "m.sqlite").exists() or argv[0] == "matches"


# --- item 4: game paths ---

async def test_a_path_outside_the_game_folders_reveals_nothing(server, tmp_path,
                                                               game_dir) -> None:
    (tmp_path / "secret.kif").write_text("(role a)")
    async with connect(server.url) as ws:
        messages = []
        for name in ["../secret.kif", "../absent.kif", str(tmp_path / "secret.kif"),
                     "/etc/passwd", "missing.kif", "a\x00b.kif", "../" * 300 + "x"]:
            reply = await ask(ws, control(server, {"type": "create", "game": name,
                                                   "players": ["random"] * 2}))
            assert reply["code"] == "bad-game", reply
            assert str(game_dir) not in reply["message"]  # the server's folder
            messages.append(reply["message"].replace(repr(protocol.echo(name)), "NAME"))
        assert set(messages) == {"no game NAME in the game folders"}


async def test_errors_in_a_game_name_it_as_the_client_did(server, game_dir) -> None:
    (game_dir / "broken.kif").write_text("(role a)\n(init (f)\n")
    async with connect(server.url) as ws:
        reply = await ask(ws, control(server, {"type": "create", "game": "broken.kif",
                                               "players": ["random"]}))
    assert reply["code"] == "bad-game" and reply["message"].startswith("broken.kif:")
    assert str(game_dir) not in reply["message"]


# --- item 5: non-finite numbers, long illegal moves ---

@pytest.mark.parametrize("nonce", ["NaN", "Infinity", "-Infinity", "1e999", "[1, -1e400]"])
async def test_non_finite_numbers_are_refused_not_echoed(server, nonce) -> None:
    async with connect(server.url) as ws:
        reply = await ask(ws, '{"type": "ping", "nonce": ' + nonce + '}')
        assert reply["type"] == "error" and reply["code"] == "bad-json"
        raw = await ask(ws, '{"type": "ping", "nonce": 1e300}')
        assert raw == {"type": "pong", "nonce": 1e300}


def test_encode_never_emits_invalid_json() -> None:
    with pytest.raises(ValueError):
        protocol.encode({"type": "pong", "nonce": float("nan")})


async def test_a_long_illegal_move_is_stored_and_echoed_cut(server) -> None:
    long_move = "(mark " + "9" * 4000 + ")"
    mallory = await ScriptedAgent(server.url, "mallory", policy=lambda m: long_move).start()
    outcome = await server.play_match(Pennies(), ["ws:mallory", "first"], startclock=1,
                                      playclock=1, seed=1)
    await mallory.stop()
    fault = outcome.errors[0][0]
    assert fault == f"IL {long_move[:200]}...[cut, {len(long_move)} chars]"
    assert mallory.of_type("step")[0]["error"] == fault
    stored = server.records.get_match(outcome.match)["steps"][0]["errors"][0]
    assert stored == fault and len(stored) < 250
