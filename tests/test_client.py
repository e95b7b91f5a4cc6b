"""Live text and the client (issue 15, items 3, 4, 7): ``ggp match`` and ``ggp matches show
--follow`` print every step while it is played, ``ggp client`` creates, lists, watches
and aborts matches on a running server, ``ggp matches export`` embeds rules and states.

Liveness is shown without timing: a websocket agent driven by the test plays one
seat, so the match cannot go on until the test has read the line of the step just
played. Every printed line is compared with the line the records give for that step.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import queue
import sqlite3
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, shared_path
from websockets.sync.client import ClientConnection, connect

from ggp_cli import main as ggp
from server.app import MatchServer
from server.live import header_lines, result_line, step_line
from server.records import Records

CONNECT_FOUR = REPO / "tests" / "data" / "connectFour.kif"
TOKEN = "client-test-admin-token-0123456789"
WAIT = 60.0  # seconds a line may take before the test fails (instead of hanging)


def recorded_lines(db: Path, match: str) -> list[str]:
    """The lines of a match as its records give them (header, steps, result)."""
    records = Records(db)
    try:
        record = records.get_match(match)
    finally:
        records.close()
    roles = record["roles"]
    return header_lines(record["id"], record["game"], roles, record["players"]) + [
        step_line(s["step"], roles, s["moves"], s["errors"], s["times"])
        for s in record["steps"]] + [result_line(roles, record["status"], record["payoffs"],
                                                 record["reason"])]


class Lines:
    """A child ``ggp`` whose output lines are read by threads (a test never blocks on
    a pipe: a line that does not come in ``WAIT`` seconds fails the test)."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "ggp_cli", *args], cwd=REPO,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)
        self.queues: dict[str, queue.Queue[str | None]] = {"out": queue.Queue(),
                                                           "err": queue.Queue()}
        self.seen: list[str] = []  # the stdout lines read so far
        for pipe, lines in ((self.process.stdout, self.queues["out"]),
                            (self.process.stderr, self.queues["err"])):
            threading.Thread(target=self._read, args=(pipe, lines), daemon=True).start()

    @staticmethod
    def _read(pipe: Any, lines: queue.Queue[str | None]) -> None:
        for line in pipe:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    def next(self, stream: str = "out") -> str:
        try:
            line = self.queues[stream].get(timeout=WAIT)
        except queue.Empty:
            raise AssertionError(f"no line in {WAIT} s after {self.seen[-3:]}") from None
        if line is None:
            raise AssertionError(f"the process ended after {self.seen[-3:]}: "
                                 f"{self.drain('err')}")
        if stream == "out":
            self.seen.append(line)
        return line

    def drain(self, stream: str) -> list[str]:
        """The stream's lines until the process closes it."""
        lines = []
        while (line := self.queues[stream].get(timeout=WAIT)) is not None:
            lines.append(line)
        return lines

    def rest(self) -> list[str]:
        """Every stdout line until the process ends (its status is checked by the caller)."""
        self.seen += self.drain("out")
        self.process.wait(timeout=WAIT)
        return self.seen

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


@contextmanager
def agent(url: str, name: str, admin_token: str | None = None) -> Iterator[ClientConnection]:
    """A websocket agent logged in as ``name``, played by the test (a server that does not
    register names for anyone needs the operator's ``admin_token`` in the hello)."""
    with connect(url, max_size=None) as ws:
        hello = {"type": "hello", "name": name, "token": f"{name}-secret-123"}
        ws.send(json.dumps(hello if admin_token is None
                           else {**hello, "admin_token": admin_token}))
        reply = json.loads(ws.recv(timeout=WAIT))
        assert reply["type"] == "welcome", reply
        yield ws


def play(ws: ClientConnection, after_step: Any) -> dict[str, Any]:
    """Play the seat (always its first legal move); after each step, ``after_step(n)``
    runs before the seat answers again. Returns the ``end`` message."""
    while True:
        message = json.loads(ws.recv(timeout=WAIT))
        if message["type"] == "offer":
            ws.send(json.dumps({"type": "ready", "match": message["match"]}))
        elif message["type"] == "request":
            ws.send(json.dumps({"type": "move", "match": message["match"],
                                "step": message["step"], "move": message["legal"][0]}))
        elif message["type"] == "step":
            after_step(message["step"])
        elif message["type"] in ("end", "abort"):
            return message


@contextmanager
def server_thread(tmp_path: Path) -> Iterator[MatchServer]:
    """An in-process ``ggp serve`` (its own event loop in a thread), games from tmp_path."""
    games = tmp_path / "games"
    games.mkdir()
    (games / "connectFour.kif").write_text(CONNECT_FOUR.read_text())
    records = Records(tmp_path / "served.sqlite")
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server = MatchServer(records, port=0, game_dirs=[games], admin_token=TOKEN, seat_wait=120)
    try:
        asyncio.run_coroutine_threadsafe(server.start(), loop).result(WAIT)
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.close(), loop).result(WAIT)
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()
        records.close()


def client(server: MatchServer, *args: str, token: str | None = TOKEN) -> list[str]:
    return ["client", "--server", server.url.rstrip("/"), *args,
            *(["--token", token] if token else [])]


@pytest.mark.slow
def test_match_and_follow_print_each_step_as_it_is_played(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite"
    match = Lines("match", str(CONNECT_FOUR), "--players", "ws:alice", "random", "--port", "0",
                  "--startclock", "60", "--playclock", "60", "--db", str(db))
    follower = None
    try:
        waiting = match.next("err")  # "waiting for websocket agents on ws://127.0.0.1:PORT/"
        assert waiting.startswith("waiting for websocket agents on ws://127.0.0.1:")
        match_id = None

        def after_step(step: int) -> None:
            nonlocal follower, match_id
            if follower is None:
                header = [match.next(), match.next()]
                match_id = header[0].split()[1].rstrip(":")
                assert header[1] == "seats: red=ws:alice, black=random"
                follower = Lines("matches", "show", match_id, "--follow", "--db", str(db))
                assert [follower.next(), follower.next()] == header
            # the step's line is out while the match waits for alice's next move
            assert match.next().startswith(f"step {step}: red ")
            assert follower.next() == match.seen[-1]

        with agent(waiting.split()[-1], "alice") as ws:
            end = play(ws, after_step)
        assert end["type"] == "end"
        lines = match.rest()
        assert match.process.returncode == 0
        assert lines == recorded_lines(db, match_id)  # moves, times and faults as recorded
        assert follower.rest() == lines and follower.process.returncode == 0
        assert len(lines) > 9 and " s" in lines[2]  # the answer times are printed
    finally:
        match.stop()
        if follower is not None:
            follower.stop()


@pytest.mark.slow
def test_a_tournament_says_where_its_websocket_fill_logs_in(tmp_path: Path) -> None:
    # the fill's seat is a ws: agent although no player is: it is told where to log in
    tournament = Lines("tournament", "--games", str(CONNECT_FOUR), "--players", "random",
                       "--fill", "ws:bob", "--startclock", "2", "--playclock", "2",
                       "--db", str(tmp_path / "t.sqlite"))
    try:
        waiting = tournament.next("err")
        assert waiting.startswith("waiting for websocket agents on ws://127.0.0.1:")
        with agent(waiting.split()[-1], "bob") as ws:   # two matches: the fill sits in each role
            ends = [play(ws, lambda step: None) for _ in range(2)]
        assert [end["type"] for end in ends] == ["end", "end"]
        standings = tournament.rest()
        assert tournament.process.returncode == 0
        assert any("ws:bob" in line for line in standings), standings
    finally:
        tournament.stop()


@pytest.mark.slow
def test_client_creates_lists_watches_and_aborts(tmp_path: Path, capsys) -> None:
    with server_thread(tmp_path) as server:
        base = server.url.rstrip("/")
        assert ggp(client(server, "create", "connectFour.kif", "--players", "ws:carol",
                          "random", "--startclock", "60", "--playclock", "60", "--json")) == 0
        created = json.loads(capsys.readouterr().out)
        match_id = created["match"]
        assert created["url"] == f"http://127.0.0.1:{server.port}/matches/{match_id}"
        assert created["roles"] == ["red", "black"]
        with urllib.request.urlopen(created["url"], timeout=WAIT) as page:  # wip/web's page
            assert page.status == 200 and match_id in page.read().decode()
        watcher = Lines("client", "--server", base, "watch", match_id)
        try:
            listed: list[str] = []

            def after_step(step: int) -> None:
                if step == 1:
                    assert [watcher.next(), watcher.next()] == [
                        f"match {match_id}: connectFour", "seats: red=ws:carol, black=random"]
                    assert ggp(client(server, "list")) == 0
                    listed.extend(capsys.readouterr().out.splitlines())
                assert watcher.next().startswith(f"step {step}: red ")

            with agent(base, "carol", TOKEN) as ws:
                play(ws, after_step)
            lines = watcher.rest()
            assert watcher.process.returncode == 0
        finally:
            watcher.stop()
        assert lines == recorded_lines(tmp_path / "served.sqlite", match_id)
        assert listed[0].split() == ["match", "game", "step", "players"]
        assert listed[1].split()[:3] == [match_id, "connectFour", "2"]  # the step asked now

        # abort: a match whose ws seat never comes waits for it; the operator ends it
        assert ggp(client(server, "create", "--players", "ws:nobody", "random",
                          "connectFour.kif")) == 0
        waiting = capsys.readouterr().out.strip()
        assert ggp(client(server, "abort", waiting, token="wrong-token-0123456789")) == 1
        assert "refused the admin token" in capsys.readouterr().err
        assert waiting in server.matches  # still running
        assert ggp(client(server, "abort", waiting)) == 0
        assert capsys.readouterr().out.strip() == f"aborted {waiting}"
        assert ggp(client(server, "watch", waiting, token=None)) == 1  # it ended aborted
        assert capsys.readouterr().out.splitlines()[-1].startswith("result: aborted")

        # one clear line and a non-zero exit for each mistake
        for args, token, error in [
                (("abort", "no.such.match"), TOKEN, "unknown match: no running match"),
                (("watch", "no.such.match"), None, "unknown match: no match 'no.such.match'"),
                (("list",), "wrong-token-0123456789", "refused the admin token"),
                (("create", "absent.kif", "--players", "random", "random"), TOKEN,
                 "no game 'absent.kif' in the game folders"),
                (("create", "connectFour.kif", "--players", "nonsense"), TOKEN,
                 "unknown player 'nonsense'"),
                (("watch", "bad id!"), None, "is not a match id")]:
            assert ggp(client(server, *args, token=token)) == 1, args
            err = capsys.readouterr().err
            assert error in err and err.count("\n") == 1, (args, err)
        port = server.port
    for url, error in [(f"ws://127.0.0.1:{port}", "connection refused"),
                       ("http://127.0.0.1:9147", "not a ws://HOST:PORT URL"),
                       ("ws://127.0.0.1:99999", "not a URL"),
                       ("ws://127.0.0.1:9147/x?y=1", "give only ws://HOST:PORT")]:
        assert ggp(["client", "--server", url, "watch", "m.1"]) == 1
        err = capsys.readouterr().err
        assert error in err and err.count("\n") == 1, err


def test_serve_logs_logins_and_matches_without_secrets(tmp_path: Path, capsys) -> None:
    """A real ``ggp serve``: ``ggp client`` with the token file it writes, one log line
    per login, spectator, match start and end on its stderr, and no token in them."""
    games = tmp_path / "games"
    games.mkdir()
    (games / "connectFour.kif").write_text(CONNECT_FOUR.read_text())
    db = tmp_path / "s.sqlite"
    serve = Lines("serve", "--port", "0", "--db", str(db), "--games", str(games))
    log: list[str] = []
    try:
        url = serve.next().split()[2].rstrip("/")
        serve.next()  # where the admin token is
        token_file = str(db) + ".admin-token"
        with agent(url, "dora", Path(token_file).read_text().strip()) as ws:
            assert ggp(["client", "--server", url, "--token-file", token_file, "create",
                        "connectFour.kif", "--players", "random", "ws:dora", "--playclock",
                        "30"]) == 0
            match_id = capsys.readouterr().out.strip()
            play(ws, lambda step: None)
        assert ggp(["client", "--server", url, "watch", match_id]) == 0
        assert capsys.readouterr().out.splitlines() == recorded_lines(db, match_id)
        assert ggp(["client", "--server", url, "--token", "wrong-token-0123456789",
                    "list"]) == 1
        token = Path(token_file).read_text().strip()
    finally:
        serve.process.terminate()
        log = serve.drain("err")
        serve.rest()
    assert serve.process.returncode == 0
    text = "\n".join(log)
    for needle in ("agent dora logged in from 127.0.0.1:", f"match {match_id} started: "
                   "connectFour, random vs ws:dora", f"match {match_id} completed: red=",
                   "spectator from 127.0.0.1:", "agent dora disconnected",
                   "1 failed admin tokens from 127.0.0.1"):
        assert needle in text, needle
    assert token not in text and "dora-secret" not in text


def test_export_embeds_rules_and_every_state(tmp_path: Path, capsys) -> None:
    db = str(tmp_path / "e.sqlite")
    assert ggp(["match", str(CONNECT_FOUR), "--players", "random", "first", "--db", db,
                "--seed", "3", "--quiet"]) == 0
    match_id = capsys.readouterr().out.split()[1].rstrip(":")
    assert ggp(["matches", "export", match_id, "--db", db]) == 0
    export = json.loads(capsys.readouterr().out)
    records = Records(db)
    record = records.get_match(match_id)
    records.close()
    rules = CONNECT_FOUR.read_text()
    assert export["gameRulesheet"] == rules
    assert export["gameRulesheetHash"] == hashlib.sha1(rules.encode()).hexdigest()
    assert export["states"] == [record["initial_state"]] + [s["state"] for s in record["steps"]]
    assert "(cell" in export["states"][-1]  # ggp-base's KIF list of facts
    assert export["moves"] == [s["moves"] for s in record["steps"]]
    assert export["answerTimes"] == [s["times"] for s in record["steps"]]
    assert export["goalValues"] == record["payoffs"] and export["isCompleted"]
    assert export["gameRoleNames"] == ["red", "black"] and export["randomSeed"] == 3
    assert export["playerNamesFromHost"] == ["random", "first"]
    assert len(export["stateTimes"]) == len(export["states"])


def test_export_of_efg_matches_gives_node_labels(tmp_path: Path, capsys) -> None:
    """Kuhn's nodes have no names: a state is the actions from the root, which the
    recorded moves (and the deal, chance's action) must spell out."""
    kuhn = shared_path("efg", "kuhn_from_course.efg")
    db = str(tmp_path / "k.sqlite")
    assert ggp(["tournament", "--games", str(kuhn), "--players", "random", "first",
                "--swap-roles", "--rounds", "2", "--playclock", "5", "--db", db, "--quiet",
                "--json", "--seed", "4"]) == 0
    tournament = json.loads(capsys.readouterr().out)
    assert ggp(["matches", "export", "--tournament", tournament["tournament"], "--db", db]) == 0
    exports = json.loads(capsys.readouterr().out)
    assert sorted(e["matchId"] for e in exports) == sorted(
        m["match"] for m in tournament["matches"])
    assert len(exports) == 4
    roles = ["Player 1", "Player 2"]
    for export in exports:
        deal = export["states"][0]
        assert deal.startswith("/chance:") and deal.count("/") == 1  # the cards dealt
        path = deal
        for moves, state in zip(export["moves"], export["states"][1:], strict=True):
            (role, move), = [(r, m) for r, m in zip(roles, moves, strict=True) if m]
            path += f"/{role}:{move}"
            assert state == path
        assert not any(s.isdigit() for s in export["states"])
    out = tmp_path / "out"
    assert ggp(["matches", "export", "--tournament", tournament["tournament"], "--db", db,
                "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"4 matches written to {out}"
    assert {p.stem for p in out.iterdir()} == {e["matchId"] for e in exports}
    assert json.loads((out / f"{exports[0]['matchId']}.json").read_text()) == exports[0]
    assert ggp(["matches", "export", "--tournament", "no.such", "--db", db]) == 1
    assert "no tournament 'no.such'" in capsys.readouterr().err


def test_a_database_from_before_times_and_rules_still_opens(tmp_path: Path, capsys) -> None:
    db = tmp_path / "old.sqlite"
    assert ggp(["match", str(CONNECT_FOUR), "--players", "first", "first", "--db", str(db),
                "--quiet"]) == 0
    match_id = capsys.readouterr().out.split()[1].rstrip(":")
    with sqlite3.connect(db) as old:  # back to the schema of the last release
        old.execute("ALTER TABLE steps DROP COLUMN times")
        old.execute("ALTER TABLE matches DROP COLUMN game_hash")
        old.execute("DROP TABLE games")
    assert ggp(["matches", "show", match_id, "--follow", "--db", str(db)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == recorded_lines(db, match_id) and " s" not in lines[2]  # no times known
    assert ggp(["matches", "export", match_id, "--db", str(db)]) == 0
    export = json.loads(capsys.readouterr().out)
    assert "gameRulesheet" not in export and export["answerTimes"][0] is None
    assert ggp(["matches", "show", match_id, "--follow", "--json", "--db", str(db)]) == 1
    assert "--follow goes with" in capsys.readouterr().err


def test_match_json_keeps_stdout_for_the_json(tmp_path: Path, capsys) -> None:
    """``--json``: the JSON alone on stdout, the step lines on stderr; ``--quiet``: none."""
    db = tmp_path / "j.sqlite"
    assert ggp(["match", str(CONNECT_FOUR), "--players", "first", "random", "--db", str(db),
                "--json", "--seed", "2"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert set(result) == {"match", "game", "roles", "players", "status", "payoffs",
                           "reason", "moves", "errors"}
    assert captured.err.splitlines() == recorded_lines(db, result["match"])[:-1]
    assert ggp(["match", str(CONNECT_FOUR), "--players", "first", "random", "--db", str(db),
                "--json", "--quiet", "--seed", "2"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and json.loads(captured.out)["moves"] == result["moves"]


def test_a_match_watched_from_the_records_keeps_its_times(tmp_path: Path, capsys) -> None:
    """A server that no longer holds a match (restarted) answers ``watch`` from the
    records: ``ggp client watch`` prints the same lines, answer times included."""
    db = tmp_path / "w.sqlite"
    assert ggp(["match", str(CONNECT_FOUR), "--players", "first", "random", "--db", str(db),
                "--quiet"]) == 0
    match_id = capsys.readouterr().out.split()[1].rstrip(":")

    async def watch() -> None:
        records = Records(db)
        try:
            async with MatchServer(records, port=0) as server:
                await asyncio.to_thread(ggp, ["client", "--server", server.url.rstrip("/"),
                                              "watch", match_id])
        finally:
            records.close()

    asyncio.run(watch())
    lines = capsys.readouterr().out.splitlines()
    assert lines == recorded_lines(db, match_id) and " s" in lines[2]


def test_the_client_starts_without_the_heavy_modules() -> None:
    """Issue 32, item 20: ``ggp client ... list`` took 5 s to start (the match engine,
    the game formats, numpy and scipy came with its imports); it needs none of them."""
    ran = subprocess.run([sys.executable, "-X", "importtime", "-m", "ggp_cli", "client",
                          "--server", "ws://127.0.0.1:1", "--token", "t" * 32, "list"],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    imported = {line.split("|")[-1].strip() for line in ran.stderr.splitlines()
                if line.startswith("import time:")}
    assert "websockets" in imported and "server.live" in imported  # (the form read)
    heavy = {"numpy", "scipy", "gdl.formats", "server.match", "server.records"}
    assert not heavy & imported, heavy & imported
