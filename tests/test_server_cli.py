"""The command lines: ggp match, ggp tournament, ggp matches, ggp serve (with control messages)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys

import pytest
from conftest import REPO, shared_path
from websockets.asyncio.client import connect

from ggp_cli import main as ggp


def test_match_json_and_records(tmp_path, capsys) -> None:
    game = shared_path("posg", "test", "rewards.osposg")
    db = tmp_path / "m.sqlite"
    assert ggp(["match", str(game), "--players", "first", "random", "--seed", "3",
                "--playclock", "1", "--db", str(db), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "completed" and result["roles"] == ["P1", "P2"]
    assert result["payoffs"][0] == -result["payoffs"][1]
    # the same seed replays the same match (first and seeded random are deterministic)
    assert ggp(["match", str(game), "--players", "first", "random", "--seed", "3",
                "--playclock", "1", "--db", str(db), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["moves"] == result["moves"] and again["payoffs"] == result["payoffs"]
    assert ggp(["matches", "list", "--db", str(db)]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert len(listing) == 3 and all("completed" in line for line in listing[1:])
    assert ggp(["matches", "show", result["match"], "--db", str(db)]) == 0
    shown = capsys.readouterr().out
    assert shown.splitlines()[-1].startswith("result: P1=")
    assert f"step {len(result['moves'])}:" in shown
    assert ggp(["matches", "export", result["match"], "--db", str(db)]) == 0
    export = json.loads(capsys.readouterr().out)
    assert export["moves"] == result["moves"] and export["goalValues"] == result["payoffs"]
    assert export["errors"] == result["errors"]


def test_text_log_and_bad_input(tmp_path, capsys) -> None:
    game = shared_path("posg", "test", "rewards.osposg")
    db = str(tmp_path / "m.sqlite")
    assert ggp(["match", str(game), "--players", "first", "first", "--db", db]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("match rewards.") and out[1] == "seats: P1=first, P2=first"
    assert out[2].startswith("step 1: P1 ") and out[-1].startswith("result: P1=")
    assert ggp(["match", str(game), "--players", "first", "alphabeta", "--db", db]) == 1
    assert "unknown player 'alphabeta'" in capsys.readouterr().err
    assert ggp(["match", str(game), "--players", "first", "--db", db]) == 1
    assert "2 roles" in capsys.readouterr().err
    assert ggp(["match", str(game), "--players", "first", "first", "--games",
                str(tmp_path), "--db", db]) == 1
    assert "may only come from" in capsys.readouterr().err
    assert ggp(["matches", "show", "no.such.match", "--db", db]) == 1
    assert "no match" in capsys.readouterr().err
    assert ggp(["matches", "list", "--db", str(tmp_path / "absent.sqlite")]) == 1


def test_tournament_json(tmp_path, capsys) -> None:
    game = shared_path("posg", "test", "rewards.osposg")
    db = str(tmp_path / "t.sqlite")
    assert ggp(["tournament", "--games", str(game), "--players", "first", "random",
                "--swap-roles", "--rounds", "2", "--concurrency", "3", "--playclock", "1",
                "--db", db, "--json", "--seed", "1"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert "4/4 matches" in captured.err  # the progress bar
    assert len(result["matches"]) == 4 and {m["status"] for m in result["matches"]} == {
        "completed"}
    overall = {s["player"]: s for s in result["standings"] if s["game"] == "overall"}
    assert set(overall) == {"first", "random"}
    assert overall["first"]["matches"] == 4
    assert overall["first"]["wins"] + overall["first"]["draws"] + overall["first"]["losses"] == 4
    # zero-sum: the two means are opposite; overall, scaled to [0, 1] by a range
    # symmetric about 0, they add to 1
    rows = {(s["player"], s["game"]): s for s in result["standings"]}
    assert rows["first", "rewards"]["mean"] == pytest.approx(-rows["random", "rewards"]["mean"])
    assert overall["first"]["mean"] + overall["random"]["mean"] == pytest.approx(1.0)
    assert result["payoff_ranges"]["rewards"]["source"] == "rewards over the horizon"
    assert ggp(["tournament", "--games", str(game), "--players", "first", "--db", db]) == 1


def test_game_workers_play_the_same_tournament_and_match(tmp_path, capsys) -> None:
    # --workers N computes the games in worker processes (server/engine.py), as ggp serve
    # does: the same seeds give the same matches, move for move
    game = str(REPO / "games" / "gdl" / "simultaneous_tictactoe.kif")
    runs = []
    for workers in ("0", "1"):
        assert ggp(["tournament", "--games", game, "--players", "first", "random",
                    "--swap-roles", "--playclock", "1", "--seed", "5", "--workers", workers,
                    "--db", str(tmp_path / f"t{workers}.sqlite"), "--json", "--quiet"]) == 0
        matches = json.loads(capsys.readouterr().out)["matches"]
        assert ggp(["match", game, "--players", "random", "first", "--seed", "7",
                    "--workers", workers, "--db", str(tmp_path / f"m{workers}.sqlite"),
                    "--json", "--quiet"]) == 0
        one = json.loads(capsys.readouterr().out)
        runs.append(([(m["status"], m["payoffs"]) for m in matches],
                     one["moves"], one["payoffs"]))
    assert runs[0] == runs[1]
    assert all(status == "completed" for status, _ in runs[0][0]) and len(runs[0][1]) >= 5
    assert ggp(["tournament", "--games", game, "--players", "first", "random", "--ray",
                "local:2", "--workers", "1", "--db", str(tmp_path / "r.sqlite")]) == 1
    assert "--workers is for one machine's server" in capsys.readouterr().err


async def test_serve_creates_matches_only_from_its_game_folders(tmp_path) -> None:
    games = tmp_path / "games"
    games.mkdir()
    shutil.copy(shared_path("posg", "test", "rewards.osposg"), games / "rewards.osposg")
    (tmp_path / "secret.osposg").write_text("not for you")
    server = subprocess.Popen([sys.executable, "-m", "ggp_cli", "serve", "--port", "0", "--db",
                               str(tmp_path / "s.sqlite"), "--games", str(games)], cwd=REPO,
                              stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().split()[2]
        token = (tmp_path / "s.sqlite.admin-token").read_text().strip()
        async with connect(url) as ws:
            async def ask(message: dict) -> dict:
                await ws.send(json.dumps({**message, "admin_token": token}))
                return json.loads(await ws.recv())

            for name in ["../secret.osposg", "/etc/passwd", "missing.kif"]:
                reply = await ask({"type": "create", "game": name, "players": ["random"] * 2})
                assert reply["code"] == "bad-game", reply
            # nothing in a message chooses what the server runs
            reply = await ask({"type": "create", "game": "rewards.osposg",
                               "players": ["agent?python=/bin/sh", "random"]})
            assert reply["code"] == "bad-game" and "agent options" in reply["message"]
            reply = await ask({"type": "create", "game": "rewards.osposg",
                               "players": ["agent?solutions=/no/such/folder", "random"]})
            assert reply["code"] == "bad-game" and "does not exist" in reply["message"]
            created = await ask({"type": "create", "game": "rewards.osposg",
                                 "players": ["first", "random"], "playclock": 1, "seed": 2})
            assert created["type"] == "created" and created["roles"] == ["P1", "P2"]
            finished = json.loads(await ws.recv())
            assert finished["type"] == "finished" and finished["status"] == "completed"
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0


def test_serve_exits_130_on_ctrl_c(tmp_path) -> None:
    """Issue 32, item 21: Ctrl-C (SIGINT) stopped ``ggp serve`` with exit 0, where every
    other command exits 130; SIGTERM, the normal way to stop a service, still gives 0."""
    server = subprocess.Popen([sys.executable, "-m", "ggp_cli", "serve", "--port", "0", "--db",
                               str(tmp_path / "s.sqlite")], cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout.readline().startswith("serving on ")
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=60) == 130
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert not (tmp_path / "s.sqlite.admin-token").exists()


def test_demo_says_where_it_records(capsys) -> None:
    """Issue 32, item 21: ``ggp demo`` wrote matches.sqlite in the current folder without
    saying so; its help and its ``== ggp match`` line name the file."""
    assert ggp(["demo", "--help"]) == 0
    assert "matches.sqlite in the current folder" in " ".join(capsys.readouterr().out.split())
