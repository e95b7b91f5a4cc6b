"""Issue 32, items 2-7: hostile clients against the match server.

Item 2, memory held by sockets that never log in (frame and nonce limits, the login
deadline over what is sent too); item 3, lone surrogates from the wire; item 4, slots
and names without credentials (registration, idle spectators, limits per address);
item 5, ``Origin``; item 6, guessing (lockouts per address, the hash on its own thread,
one log line per interval); item 7, the database's mode and the 404 page's words.
Clients bind other loopback addresses (127.0.0.2, ...) to stand for other machines.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import threading
import time
from pathlib import Path

import pytest
from conftest import running_server
from test_server_support import Pennies, ScriptedAgent
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from ggp_cli import main as ggp
from server import identities
from server.guard import FREE_FAILURES, Failures
from server.records import Records


async def ask(ws, message: dict | str) -> dict:
    await ws.send(message if isinstance(message, str) else json.dumps(message))
    return json.loads(await asyncio.wait_for(ws.recv(), 10))


async def closed_code(ws, within: float = 10) -> int | None:
    """The close code the server sends (None: dropped without one), reading what comes."""
    try:
        while True:
            await asyncio.wait_for(ws.recv(), within)
    except ConnectionClosed as exc:
        return None if exc.rcvd is None else exc.rcvd.code


def hello(name: str, **extra: str) -> dict:
    return {"type": "hello", "name": name, "token": f"secret-of-{name}", **extra}


# --- item 2: what a socket that never logs in may make the server hold ---

async def test_big_frames_before_a_login_close_the_socket(tmp_path) -> None:
    async with running_server(tmp_path) as srv:
        async with connect(srv.url, max_size=None) as ws:
            await ws.send(json.dumps({"type": "ping", "nonce": "x" * (1 << 20)}))
            assert await closed_code(ws) == 1009  # 1 MB: over the 64 KiB before a login
        async with connect(srv.url) as ws:  # the nonce a pong echoes is small
            reply = await ask(ws, {"type": "ping", "nonce": "x" * 300})
            assert reply["code"] == "bad-field" and "256 bytes" in reply["message"]
            assert await ask(ws, {"type": "ping", "nonce": "x" * 200}) == {
                "type": "pong", "nonce": "x" * 200}


async def test_the_login_deadline_covers_a_socket_that_never_reads(tmp_path) -> None:
    async with running_server(tmp_path, login_timeout=1) as srv:
        ws = await connect(srv.url, max_queue=1)  # it reads nothing: the pongs pile up
        started = time.monotonic()
        try:
            for _ in range(200):
                await ws.send(json.dumps({"type": "ping", "nonce": "y" * 250}))
        except ConnectionClosed:
            pass
        while srv.sockets and time.monotonic() - started < 20:
            await asyncio.sleep(0.05)
        assert srv.sockets == 0  # let go within the deadline and the hang-up, never held
        ws.transport.abort()


# --- item 3: lone surrogates ---

SURROGATE = '"\\ud800"'


async def surrogate_agent(url: str, name: str) -> list[dict]:
    """Answers each request with a lone surrogate first, then a move; the errors it got."""
    errors = []
    async with connect(url) as ws:
        await ws.send(json.dumps(hello(name)))
        async for data in ws:
            message = json.loads(data)
            if message["type"] == "offer":
                await ws.send(json.dumps({"type": "ready", "match": message["match"]}))
            elif message["type"] == "request":
                head = f'{{"type": "move", "match": "{message["match"]}", ' \
                       f'"step": {message["step"]}, "move": '
                await ws.send(head + SURROGATE + "}")
                await ws.send(head + json.dumps(message["legal"][0]) + "}")
            elif message["type"] == "error":
                errors.append(message)
            elif message["type"] == "end":
                return errors
    return errors


async def test_a_lone_surrogate_is_refused_and_the_match_goes_on(tmp_path, caplog) -> None:
    async with running_server(tmp_path, grace=0.05, seat_wait=10) as srv:
        eve = asyncio.create_task(surrogate_agent(srv.url, "eve"))
        match = srv.create_match(Pennies(), ["ws:eve", "first"], startclock=1, playclock=3,
                                 seed=1)
        async with connect(srv.url) as spectator, connect(srv.url) as before_login:
            reply = await ask(before_login, '{"type": "ping", "nonce": ' + SURROGATE + '}')
            assert reply["code"] == "bad-json" and "surrogate" in reply["message"]
            await spectator.send(json.dumps({"type": "watch", "match": match.id}))
            seen = [json.loads(await asyncio.wait_for(spectator.recv(), 30))]
            while seen[-1]["type"] not in ("ended", "error"):
                seen.append(json.loads(await asyncio.wait_for(spectator.recv(), 30)))
        errors = await eve
        outcome = await srv.tasks.get(match.id, asyncio.sleep(0)) or srv.finished[match.id]
        assert [e["code"] for e in errors] == ["bad-json", "bad-json"]  # one per step
        assert outcome.status == "completed" and outcome.errors == [["", ""], ["", ""]]
        assert seen[-1]["type"] == "ended"  # the spectator stayed to the end
        status, _ = await asyncio.to_thread(fetch, f"http://127.0.0.1:{srv.port}/matches/"
                                                   f"{match.id}")
        assert status == 200
    assert "Traceback" not in caplog.text


def fetch(url: str) -> tuple[int, str]:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_a_surrogate_an_older_server_recorded_still_reads(tmp_path, capsys) -> None:
    db = tmp_path / "old.sqlite"
    records = Records(db)
    asyncio.run(records.import_match({
        "id": "old.1", "game": "g", "format": "efg", "roles": ["a", "b"],
        "players": ["ws:eve", "first"], "seed": 1, "startclock": 1.0, "playclock": 1.0,
        "tournament": None, "status": "completed", "reason": None, "payoffs": [1, 0],
        "initial_state": "()", "description": {"format": "efg", "name": "g"},
        "started": 1.0, "finished": 2.0,
        "steps": [{"step": 1, "moves": ["x", "y"], "errors": ["IL \ud800", ""],
                   "state": "(x)", "time": 1.5}]}))
    records.close()
    assert ggp(["matches", "show", "old.1", "--db", str(db)]) == 0
    assert "IL \ufffd" in capsys.readouterr().out


# --- item 4: names and slots without credentials ---

async def test_new_names_need_the_operator(tmp_path) -> None:
    async with running_server(tmp_path, registration="closed",
                              agents={"carol": "carols-secret-1"}) as srv:
        async with connect(srv.url) as ws:
            reply = await ask(ws, hello("mallory"))
            assert reply["code"] == "not-registered"
            reply = await ask(ws, hello("mallory", admin_token="wrong-admin-token-123"))
            assert reply["code"] == "not-allowed"
            reply = await ask(ws, hello("dora", admin_token=srv.admin_token))
            assert reply["type"] == "welcome"  # the operator's token registers a name
        async with connect(srv.url) as ws:
            assert (await ask(ws, {"type": "hello", "name": "carol",
                                   "token": "carols-secret-1"}))["type"] == "welcome"
        async with connect(srv.url) as ws:  # dora is registered for good
            assert (await ask(ws, hello("dora")))["type"] == "welcome"
        stored = srv.records._run(srv.records._query, "SELECT name FROM agents")
        assert sorted(r["name"] for r in stored) == ["carol", "dora"]


async def test_an_embedded_server_registers_the_names_its_seats_wait_for(tmp_path) -> None:
    async with running_server(tmp_path, registration="seats", seat_wait=10) as srv:
        async with connect(srv.url) as ws:
            assert (await ask(ws, hello("stranger")))["code"] == "not-registered"
        match = srv.create_match(Pennies(), ["ws:alice", "first"], startclock=1, playclock=1,
                                 seed=1)
        while "alice" not in srv.lobby.waiting:
            await asyncio.sleep(0.01)
        alice = await ScriptedAgent(srv.url, "alice").start()
        outcome = await srv.tasks[match.id]
        assert outcome.status == "completed" and outcome.errors == [["", ""], ["", ""]]
        await alice.stop()


async def test_the_names_of_a_commands_seats_register_before_their_match(tmp_path) -> None:
    """``ggp match``/``tournament`` print where to log in before a match claims its seats
    (a tournament's later matches much later): the names of its ws: seats register from
    the first hello; no other name does."""
    async with running_server(tmp_path, registration="seats", seat_names=["bob"]) as srv:
        async with connect(srv.url) as ws:
            assert (await ask(ws, hello("bob")))["type"] == "welcome"
        async with connect(srv.url) as ws:
            assert (await ask(ws, hello("stranger")))["code"] == "not-registered"
        async with connect(srv.url) as ws:  # bob's secret is now bob's
            assert (await ask(ws, hello("bob", token="another-secret")))["code"] == \
                "bad-secret"


async def test_a_thousand_fresh_names_register_nothing_and_lock_nobody_out(tmp_path) -> None:
    async with running_server(tmp_path, registration="closed", login_timeout=5,
                              agents={"real": "real-secret-123"}) as srv:
        async def squat(n: int) -> None:
            async with connect(srv.url, local_addr=("127.0.0.9", 0)) as ws:
                for k in range(3):
                    await ws.send(json.dumps(hello(f"squat{n}-{k}")))
                await closed_code(ws)

        for start in range(0, 1024 // 3, 32):
            await asyncio.gather(*(squat(n) for n in range(start, start + 32)))
        assert srv.records._run(srv.records._query, "SELECT name FROM agents") == [
            {"name": "real"}]
        async with connect(srv.url, local_addr=("127.0.0.2", 0)) as ws:
            assert (await ask(ws, {"type": "hello", "name": "real",
                                   "token": "real-secret-123"}))["type"] == "welcome"


async def test_idle_and_unknown_match_spectators_time_out(tmp_path) -> None:
    async with running_server(tmp_path, login_timeout=0.5) as srv:
        async with connect(srv.url) as ws:
            reply = await ask(ws, {"type": "watch", "match": "no.such.match"})
            assert reply["code"] == "unknown-match"
            started = time.monotonic()
            assert await closed_code(ws) == 1008
            assert time.monotonic() - started < 5
        while srv.spectators.sockets and time.monotonic() - started < 10:
            await asyncio.sleep(0.02)
        assert not srv.spectators.sockets


async def test_idle_spectators_make_room_for_one_that_watches(tmp_path) -> None:
    async with running_server(tmp_path, max_spectators=2) as srv:
        idle = [await connect(srv.url, local_addr=(f"127.0.0.{n}", 0)) for n in (3, 4)]
        for ws in idle:
            assert (await ask(ws, {"type": "watch", "match": "x.1"}))["code"] == \
                "unknown-match"
        match = srv.create_match(Pennies(), ["first", "first?delay=0.5"], startclock=1,
                                 playclock=3, seed=1)
        async with connect(srv.url, local_addr=("127.0.0.7", 0)) as ws:
            assert (await ask(ws, {"type": "watch", "match": match.id}))["type"] == \
                "watching"
        assert await closed_code(idle[0]) == 1008  # the oldest idle one made room
        for ws in idle:
            await ws.close()
        await srv.tasks[match.id]


async def test_limits_apply_per_client_address(tmp_path) -> None:
    async with running_server(tmp_path, max_per_address=4, max_spectators=8) as srv:
        hogs = [await connect(srv.url, local_addr=("127.0.0.5", 0)) for _ in range(4)]
        for ws in hogs:
            await ws.send(json.dumps({"type": "watch", "match": "x.1"}))
        async with connect(srv.url, local_addr=("127.0.0.5", 0)) as extra:
            reply = json.loads(await extra.recv())
            assert reply["code"] == "server-full" and "one address" in reply["message"]
        match = srv.create_match(Pennies(), ["first", "first?delay=0.5"], startclock=1,
                                 playclock=3, seed=1)
        async with connect(srv.url, local_addr=("127.0.0.6", 0)) as other:  # another client
            assert (await ask(other, {"type": "watch", "match": match.id}))["type"] == \
                "watching"
        for ws in hogs:
            await ws.close()
        await srv.tasks[match.id]


@pytest.mark.slow
def test_server_memory_stays_bounded_whatever_clients_send(tmp_path) -> None:
    """Items 2 and 4 against a real ``ggp serve``: the issue's floods, at once, reading
    nothing; the server's resident memory stays under 500 MB and a real agent still logs
    in and a spectator still watches."""
    from test_client import Lines

    agents = tmp_path / "agents"
    agents.write_text("real real-secret-123\n")
    agents.chmod(0o600)
    serve = Lines("serve", "--port", "0", "--db", str(tmp_path / "m.sqlite"), "--agents",
                  str(agents))
    try:
        url = serve.next().split()[2].rstrip("/")
        peak = asyncio.run(flood(url, serve.process.pid))
    finally:
        serve.process.terminate()
        serve.rest()
    assert peak < 500, f"the server grew to {peak:.0f} MB"


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def flood(url: str, pid: int) -> float:
    peak = 0.0
    done = asyncio.Event()

    async def watch_memory() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, rss_mb(pid))
            await asyncio.sleep(0.1)

    async def quietly(coro) -> None:
        try:
            await coro
        except (ConnectionClosed, OSError, TimeoutError, InvalidStatus):
            pass

    async def no_hello(n: int) -> None:  # pings with 1 MB nonces, then 4 MiB frames
        async with connect(url, max_size=None, max_queue=1,
                           local_addr=(f"127.0.1.{n}", 0)) as ws:
            for _ in range(20):
                await ws.send(json.dumps({"type": "ping", "nonce": "n" * (1 << 20)}))
            for _ in range(70):
                await ws.send("x" * (4 << 20))

    async def big_but_allowed(n: int) -> None:  # 63 KiB frames, as fast as it can
        async with connect(url, max_queue=1, local_addr=(f"127.0.2.{n}", 0)) as ws:
            for _ in range(400):
                await ws.send(json.dumps({"type": "ping", "nonce": 1, "pad": "p" * 63000}))

    async def pinging_spectator(n: int) -> None:
        async with connect(url, max_queue=1, local_addr=(f"127.0.3.{n}", 0)) as ws:
            await ws.send(json.dumps({"type": "watch", "match": "nothing.1"}))
            for _ in range(1000):
                await ws.send(json.dumps({"type": "ping", "nonce": "s" * 256}))

    async def unknown_watcher(n: int) -> None:
        async with connect(url, local_addr=(f"127.0.4.{n % 200 + 1}", 0)) as ws:
            await ws.send(json.dumps({"type": "watch", "match": "nothing.1"}))
            await asyncio.sleep(30)

    async def fresh_names(n: int) -> None:
        async with connect(url, local_addr=(f"127.0.5.{n % 200 + 1}", 0)) as ws:
            for k in range(3):
                await ws.send(json.dumps(hello(f"fresh{n}-{k}")))
            await asyncio.sleep(30)

    monitor = asyncio.create_task(watch_memory())
    attacks = [no_hello(n) for n in range(1, 11)] + [big_but_allowed(n) for n in range(1, 11)]
    attacks += [pinging_spectator(n) for n in range(1, 4)]
    attacks += [unknown_watcher(n) for n in range(256)] + [fresh_names(n) for n in range(342)]
    flooding = [asyncio.create_task(quietly(a)) for a in attacks]
    await asyncio.sleep(8)
    async with connect(url, local_addr=("127.0.6.1", 0)) as ws:  # a real agent, meanwhile
        assert (await ask(ws, {"type": "hello", "name": "real",
                               "token": "real-secret-123"}))["type"] == "welcome"
    async with connect(url, local_addr=("127.0.6.2", 0)) as ws:  # and a spectator
        assert (await ask(ws, {"type": "watch", "match": "nothing.1"}))["code"] == \
            "unknown-match"
    for task in flooding:
        task.cancel()
    await asyncio.gather(*flooding, return_exceptions=True)
    done.set()
    await monitor
    return peak


# --- item 5: Origin ---

async def test_websockets_from_other_sites_pages_are_refused(tmp_path) -> None:
    async with running_server(tmp_path) as srv:
        rebound = f"ws://evil.example:{srv.port}/"  # a DNS-rebinding page: Host = Origin
        for url, origin in [(srv.url, "http://evil.example"), (srv.url, "null"),
                            (srv.url, f"http://127.0.0.1:{srv.port + 1}"),
                            (rebound, f"http://evil.example:{srv.port}")]:
            with pytest.raises(InvalidStatus) as refused:
                await connect(url, host="127.0.0.1", port=srv.port,
                              additional_headers={"Origin": origin})
            assert refused.value.response.status_code == 403, origin
        with pytest.raises(InvalidStatus) as refused:  # two Origins: refused, no failure
            await connect(srv.url, additional_headers=[("Origin", "http://a"),
                                                       ("Origin", "http://b")])
        assert refused.value.response.status_code == 400
        for own in (f"http://127.0.0.1:{srv.port}", f"http://localhost:{srv.port}"):
            url = own.replace("http", "ws") + "/"
            async with connect(url, host="127.0.0.1", port=srv.port,
                               additional_headers={"Origin": own}) as ws:
                assert (await ask(ws, {"type": "ping", "nonce": 1}))["type"] == "pong"
        async with connect(srv.url) as ws:  # no Origin: an agent or a tool
            assert (await ask(ws, {"type": "ping", "nonce": 2}))["type"] == "pong"


# --- item 6: guessing ---

async def test_guessing_is_locked_out_per_address_and_hashes_off_the_pages(
        tmp_path, monkeypatch, caplog) -> None:
    hashed: list[str] = []
    verify = identities.verify_secret

    def counted(secret: str, stored: str) -> bool:
        hashed.append(threading.current_thread().name)
        return verify(secret, stored)

    monkeypatch.setattr(identities, "verify_secret", counted)
    caplog.set_level(logging.INFO)
    async with running_server(tmp_path, registration="closed",
                              agents={"carol": "carols-secret-1"}) as srv:
        srv.identities._known.clear()  # as after a restart: each check is a slow hash
        codes = []
        for n in range(28):
            async with connect(srv.url, local_addr=("127.0.0.7", 0)) as ws:
                codes.append((await ask(ws, {"type": "hello", "name": "carol",
                                             "token": f"guess-number-{n}"}))["code"])
        assert codes[:FREE_FAILURES] == ["bad-secret"] * FREE_FAILURES
        assert codes[-1] == "locked-out" and codes.count("bad-secret") <= FREE_FAILURES + 2
        assert len(hashed) == codes.count("bad-secret")
        assert all(name.startswith("secret-hash") for name in hashed)
        async with connect(srv.url, local_addr=("127.0.0.8", 0)) as ws:  # carol, elsewhere
            assert (await ask(ws, {"type": "hello", "name": "carol",
                                   "token": "carols-secret-1"}))["type"] == "welcome"
        async with connect(srv.url, local_addr=("127.0.0.10", 0)) as ws:  # admin tokens
            await ws.send(json.dumps({"type": "watch", "match": "x.1"}))  # (stays open)
            assert json.loads(await ws.recv())["code"] == "unknown-match"
            for n in range(500):
                await ws.send(json.dumps({"type": "list", "admin_token": f"wrong-{n:08}"}))
            replies = [json.loads(await ws.recv())["code"] for _ in range(500)]
        assert replies.count("not-allowed") <= FREE_FAILURES + 2
        assert replies[-1] == "locked-out"
    failures = [r for r in caplog.records if r.name == "server.guard"]
    assert 1 <= len(failures) <= 3  # once per interval and address, not once each


def test_failures_back_off_and_forget() -> None:
    now = [0.0]
    failures = Failures(clock=lambda: now[0])
    for _ in range(FREE_FAILURES):
        failures.fail("a", "logins")
    assert failures.locked("a") == 0 and failures.locked("b") == 0
    waits = []
    for _ in range(4):
        failures.fail("a", "logins")
        waits.append(failures.locked("a"))
    assert waits == [1.0, 2.0, 4.0, 8.0]
    now[0] += 3600
    assert failures.locked("a") == 0


# --- item 7: the database's mode, the 404 page ---

def test_the_database_is_private(tmp_path) -> None:
    db = tmp_path / "m.sqlite"
    records = Records(db)
    asyncio.run(records.register_agent("x", "hash"))
    for path in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        if path.exists():
            assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, path
    records.close()


async def test_the_404_page_names_a_match(tmp_path) -> None:
    async with running_server(tmp_path) as srv:
        status, page = await asyncio.to_thread(fetch, f"http://127.0.0.1:{srv.port}"
                                                      "/matches/bad%20id")
    assert status == 404 and "no such match:" in page and "matche:" not in page
