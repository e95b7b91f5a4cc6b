"""Hostile clients (issue 14): each script attacks the server and asserts the safe behaviour.

Name squatting, duplicate logins, stolen seats and finished-match logins (item 1);
Control messages without the operator's token, limits on what ``create`` may start,
``http://`` players at hosts not allowed (item 2); huge integers, paths out of the game
folders, non-finite numbers and long illegal moves (items 3-5).
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from conftest import GAMES, running_server
from test_server_support import Pennies, ScriptedAgent, silent_in_a_match
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from ggp_cli import main as ggp
from server import protocol
from server.protocol import ProtocolError, parse_message
from server.records import Records

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
    """Send, and the answer (``finished`` reports of earlier creates are skipped)."""
    await ws.send(message if isinstance(message, str) else json.dumps(message))
    while (reply := json.loads(await asyncio.wait_for(ws.recv(), 5)))["type"] == "finished":
        pass
    return reply


def control(server, message: dict) -> dict:
    """A control message as the operator sends it (with the server's admin token)."""
    token = server.admin_token
    return {**message, **({"admin_token": token} if token else {})}


# --- item 1: agent identities ---

async def test_a_squatter_cannot_take_a_registered_name(tmp_path) -> None:
    async with running_server(tmp_path, seat_wait=5,
                              agents={"carol": "carols-own-secret"}) as srv:
        async with connect(srv.url) as ws:  # mallory is first, but carol is registered
            reply = await ask(ws, {"type": "hello", "name": "carol", "token": "guess-0123456"})
            assert reply["code"] == "bad-secret" and "carol" in reply["message"]
        carol = await ScriptedAgent(srv.url, "carol", token="carols-own-secret").start()
        outcome = await srv.play_match(Pennies(), ["ws:carol", "first"], startclock=1,
                                       playclock=1, seed=1)
        assert outcome.errors == [["", ""], ["", ""]] and carol.ends[outcome.match]
        await carol.stop()


async def test_first_login_registers_the_name_for_good(tmp_path) -> None:
    async with running_server(tmp_path) as srv:
        alice = await ScriptedAgent(srv.url, "alice", token="alice-secret-1").start()
        await alice.stop()
    async with running_server(tmp_path) as srv:  # a restart: the name is still hers
        async with connect(srv.url) as ws:
            reply = await ask(ws, {"type": "hello", "name": "alice", "token": "mallory-guess"})
            assert reply["code"] == "bad-secret"
            reply = await ask(ws, {"type": "hello", "name": "alice", "token": "alice-secret-1"})
            assert reply["type"] == "welcome"
    records = Records(tmp_path / "matches.sqlite")
    stored = records._run(records._query, "SELECT * FROM agents")
    records.close()
    assert [(r["name"], r["source"]) for r in stored] == [("alice", "login")]
    assert "alice-secret-1" not in stored[0]["secret_hash"]
    assert b"alice-secret-1" not in (tmp_path / "matches.sqlite").read_bytes()


async def test_a_duplicate_live_login_is_refused(server) -> None:
    alice = await ScriptedAgent(server.url, "alice").start()
    async with connect(server.url) as ws:
        reply = await ask(ws, {"type": "hello", "name": "alice", "token": alice.token})
        assert reply["code"] == "name-in-use"
        reply = await ask(ws, {"type": "hello", "name": "alice", "token": "other-token-1"})
        assert reply["code"] == "bad-secret"
        # the match goes to the one live alice
        outcome = await server.play_match(Pennies(), ["ws:alice", "first"], startclock=1,
                                          playclock=1, seed=1)
        assert outcome.errors == [["", ""], ["", ""]] and alice.ends[outcome.match]
    await alice.stop()


async def test_a_rejoin_takes_over_and_tells_the_previous_connection(server) -> None:
    alice, match = await silent_in_a_match(server, "alice", "first", playclock=2)
    async with connect(server.url) as ws:
        assert (await ask(ws, {"type": "rejoin", "match": match.id,
                               "token": "not-alices-token"}))["code"] == "bad-token"
        reply = await ask(ws, {"type": "rejoin", "match": match.id, "token": alice.token})
        assert reply["type"] == "welcome" and reply["name"] == "alice"
        with pytest.raises(ConnectionClosed) as closed:  # the previous connection is closed
            await asyncio.wait_for(alice.task, 5)
        assert closed.value.rcvd.code == 1008
        told = alice.received[-1]
        assert told["type"] == "error" and told["code"] == "taken-over"  # once told why
        async for data in ws:
            message = json.loads(data)
            if message["type"] == "request":
                await ws.send(json.dumps({"type": "move", "match": match.id,
                                          "step": message["step"], "move": "tails"}))
            elif message["type"] == "end":
                break
    outcome = server.finished[match.id]
    assert outcome.status == "completed" and outcome.errors[-1] == ["", ""]


async def test_a_finished_match_and_any_token_is_no_login(server) -> None:
    alice = await ScriptedAgent(server.url, "alice").start()
    outcome = await server.play_match(Pennies(), ["ws:alice", "first"], startclock=1,
                                      playclock=1, seed=1)
    await alice.stop()
    async with connect(server.url) as ws:
        for token in ("any-token-123", "another-one-456"):
            reply = await ask(ws, {"type": "rejoin", "match": outcome.match, "token": token,
                                   "name": "alice"})
            assert reply["code"] == "bad-token"
        reply = await ask(ws, {"type": "move", "match": outcome.match, "step": 1,
                               "move": "heads"})
        assert reply["code"] == "not-logged-in"
        await ask(ws, {"type": "rejoin", "match": outcome.match, "token": "third-guess-789"})
        with pytest.raises(ConnectionClosed):  # three bad secrets: the socket is closed
            await asyncio.wait_for(ws.recv(), 5)
    async with connect(server.url) as ws:  # alice's own token: her login, and the end
        reply = await ask(ws, {"type": "rejoin", "match": outcome.match, "token": alice.token})
        assert reply == {**reply, "type": "welcome", "name": "alice"}
        assert (await ask(ws, {"type": "ping"}))["type"] == "end"


@pytest.mark.parametrize(("text", "mode", "error"), [
    ("carol secret-of-carol\n", 0o644, "others may read it; chmod 600"),
    ("carol secret-of-carol\n", 0o640, "others may read it"),
    ("# names\n\ncarol\n", 0o600, ":3: expected NAME SECRET"),
    ("car ol secret-of-carol\n", 0o600, ":1: expected NAME SECRET"),
    ("carol short\n", 0o600, ":1: a secret is 8-128"),
    ("c/rol secret-of-carol\n", 0o600, ":1: a name is"),
    ("carol secret-of-carol\ncarol other-secret\n", 0o600, ":2: carol is listed twice"),
])
def test_agents_file_is_private_and_checked(tmp_path, text, mode, error) -> None:
    from server.credentials import read_agents_file
    from solvers.errors import GameError

    file = tmp_path / "agents"
    file.write_text(text)
    file.chmod(mode)
    with pytest.raises(GameError, match=error.replace("(", r"\(")):
        read_agents_file(file)
    file.write_text("# NAME SECRET\ncarol secret#of-carol\n  dave   dave-secret-2  \n")
    file.chmod(0o600)
    assert read_agents_file(file) == {"carol": "secret#of-carol", "dave": "dave-secret-2"}


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


# --- item 2: the operator's token, limits, server-side request forgery ---

@pytest.mark.parametrize("token", [None, "", "wrong-token-0123456789", "x" * 256])
async def test_control_messages_need_the_admin_token(server, token) -> None:
    alice, match = await silent_in_a_match(server, "alice", "random", playclock=30)
    extra = {} if token is None else {"admin_token": token}
    controls = [{"type": "list"}, {"type": "abort", "match": match.id},
                {"type": "create", "game": GAME.name, "players": ["random", "random"]}]
    async with connect(server.url) as ws:  # before any login, then logged in
        for message in controls:
            reply = await ask(ws, {**message, **extra})
            assert reply["code"] == "not-allowed" and reply["ref"] == message["type"]
        await ask(ws, {"type": "hello", "name": "mallory", "token": "mallory-secret-1"})
        for message in controls:
            reply = await ask(ws, {**message, **extra})
            assert reply["code"] == "not-allowed"
        assert list(server.matches) == [match.id] and match.abort_reason is None
        listing = await ask(ws, control(server, {"type": "list"}))
        assert [row["match"] for row in listing["matches"]] == [match.id]
        assert await ask(ws, control(server, {"type": "abort", "match": match.id})) == {
            "type": "aborted", "match": match.id}
    await alice.stop()


async def test_create_is_limited_in_matches_and_launched_agents(tmp_path, game_dir,
                                                                monkeypatch) -> None:
    launched = []
    monkeypatch.setattr(asyncio, "create_subprocess_exec",
                        lambda *a, **k: launched.append(a))
    async with running_server(tmp_path, game_dirs=[game_dir], max_running=2,
                              max_agents=1) as srv, connect(srv.url) as ws:
        slow = {"type": "create", "game": GAME.name, "players": ["random?delay=30", "random"]}
        for _ in range(2):
            assert (await ask(ws, control(srv, slow)))["type"] == "created"
        reply = await ask(ws, control(srv, slow))
        assert reply["code"] == "too-many" and "at most 2" in reply["message"]
        await srv.abort(next(iter(srv.matches)))
        reply = await ask(ws, control(srv, {"type": "create", "game": GAME.name,
                                            "players": ["agent", "agent:b"]}))
        assert reply["code"] == "too-many" and "at most 1" in reply["message"]
        assert launched == [] and len(srv.matches) == 1


SSRF_TARGETS = ["http://10.255.255.1:80", "http://169.254.169.254", "http://example.com:9147",
                "http://127.1:{port}", "http://0x7f000001:{port}", "http://[::ffff:127.0.0.1]:{port}",
                "http://localhost.example.com:{port}", "http://127.0.0.1.nip.io:{port}"]


async def test_http_players_only_at_allowed_hosts_and_no_connection_tried(tmp_path, game_dir,
                                                                          monkeypatch) -> None:
    from server.players import http

    tried = []

    async def no_connection(*args, **kwargs):
        tried.append(args)
        raise OSError("the test forbids connections")

    monkeypatch.setattr(http.asyncio, "open_connection", no_connection)
    listener = await asyncio.start_server(lambda r, w: tried.append("accepted"), "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    async with running_server(tmp_path, game_dirs=[game_dir],
                              http_allow=["localhost", f"127.0.0.1:{port + 1}"]) as srv, \
            connect(srv.url) as ws:
        targets = [t.format(port=port) for t in SSRF_TARGETS] + [f"http://127.0.0.1:{port}"]
        for target in targets:
            reply = await ask(ws, control(srv, {"type": "create", "game": GAME.name,
                                                "players": [target, "random"]}))
            assert reply["code"] == "not-allowed" and "--allow-http" in reply["message"], target
        created = await ask(ws, control(srv, {"type": "create", "game": GAME.name, "playclock": 1,
                                              "players": [f"http://localhost:{port}", "random"]}))
        assert created["type"] == "created"  # an allowed host is called (here: refused)
        await asyncio.wait_for(ws.recv(), 30)
    listener.close()
    assert tried and all(args[0] == "localhost" for args in tried)


@pytest.mark.slow
def test_serve_makes_a_private_token_file_or_takes_the_variable(tmp_path) -> None:
    import os
    import signal
    import subprocess
    import sys

    from conftest import REPO

    def serve(*extra: str, env: dict | None = None) -> tuple[subprocess.Popen, list[str]]:
        process = subprocess.Popen([sys.executable, "-m", "ggp_cli", "serve", "--port", "0",
                                    "--db", str(tmp_path / "s.sqlite"), *extra], cwd=REPO,
                                   stdout=subprocess.PIPE, text=True,
                                   env={**os.environ, "GGP_ADMIN_TOKEN": "", **(env or {})})
        return process, [process.stdout.readline() for _ in range(1 if env else 2)]

    file = tmp_path / "token"
    process, lines = serve("--admin-token-file", str(file))
    try:
        assert lines[1].strip() == f"admin token in {file} (readable only by you)"
        assert file.stat().st_mode & 0o777 == 0o600 and len(file.read_text().strip()) >= 32
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    assert not file.exists()  # the token dies with the server
    process, lines = serve("--admin-token-file", str(file),
                           env={"GGP_ADMIN_TOKEN": "from-the-environment-1"})
    try:
        assert lines[0].startswith("serving on ") and not file.exists()
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    short = subprocess.run([sys.executable, "-m", "ggp_cli", "serve", "--admin-token", "short",
                            "--db", str(tmp_path / "s.sqlite")], cwd=REPO, capture_output=True,
                           text=True)
    assert short.returncode == 1 and "16-256 printable" in short.stderr


# --- item 15: agent?solutions=DIR; item 16: ggp match --port ---

async def test_launched_agent_gets_solutions_and_its_secret_privately(server, tmp_path,
                                                                      monkeypatch) -> None:
    from solvers.errors import GameError

    launches = []

    async def launch(*args, **kwargs):
        launches.append((args, kwargs["env"]))
        raise OSError("not in this test")

    monkeypatch.setattr(asyncio, "create_subprocess_exec", launch)
    monkeypatch.setenv("GGP_ADMIN_TOKEN", "the-operators-token-1")
    solutions = tmp_path / "solutions"
    solutions.mkdir()
    outcome = await server.play_match(Pennies(), [f"agent?solutions={solutions}&seed=3",
                                                  "first"], startclock=1, playclock=1)
    assert outcome.status == "aborted" and "cannot launch" in outcome.reason
    (args, env), = launches
    assert args[args.index("--solutions") + 1] == str(solutions.resolve())
    assert args[args.index("--seed") + 1] == "3"
    name = args[args.index("--name") + 1]
    assert server.identities.holds(name, env["GGP_AGENT_TOKEN"])  # not on the command line
    assert env["GGP_AGENT_TOKEN"] not in args and "GGP_ADMIN_TOKEN" not in env
    for spec, error in [(f"agent?solutions={tmp_path / 'absent'}", "does not exist"),
                        ("agent?seed=99999999999999999999", "seed must be"),
                        ("agent?simultaneous=--exec", "duct or rm"),
                        ("agent?python=x", "agent options")]:
        with pytest.raises(GameError, match=error):
            server.create_match(Pennies(), [spec, "first"])


async def test_match_listens_on_the_port_given(tmp_path) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    match = asyncio.ensure_future(asyncio.to_thread(ggp, [
        "match", str(GAME), "--players", "ws:alice", "random", "--port", str(port),
        "--playclock", "1", "--db", str(tmp_path / "m.sqlite")]))
    for _ in range(600):  # until the embedded server listens there
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            break
        except OSError:
            assert not match.done(), match.result()
            await asyncio.sleep(0.05)
    alice = await ScriptedAgent(f"ws://127.0.0.1:{port}/", "alice").start()
    assert await asyncio.wait_for(match, 60) == 0
    assert list(alice.ends.values())[0]["type"] == "end"
    await alice.stop()


def test_serve_refuses_an_agents_file_others_may_read(tmp_path, capsys) -> None:
    file = tmp_path / "agents"
    file.write_text("carol secret-of-carol\n")
    file.chmod(0o644)
    assert ggp(["serve", "--agents", str(file), "--db", str(tmp_path / "s.sqlite")]) == 1
    assert f"{file}: holds secrets but others may read it" in capsys.readouterr().err
    assert not (tmp_path / "s.sqlite").exists()


def test_the_command_line_may_name_any_http_player() -> None:
    from server.players.http import HttpAllowList, http_allowed
    from server.players.spec import parse_spec

    allowed = HttpAllowList(http_allowed(["http://ggp.example.org:9147", "http://[fe80::1]"]))
    for spec in ("http://ggp.example.org:9147", "http://[fe80::1]:80", "http://localhost:1"):
        allowed.check(parse_spec(spec))
    with pytest.raises(ProtocolError):
        allowed.check(parse_spec("http://ggp.example.org:9148"))
