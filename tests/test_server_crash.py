"""Crash safety: kill the server process mid-tournament, restart it, nothing is lost."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from conftest import REPO, shared_path


def snapshot(db: Path) -> dict[str, dict]:
    """Every match with its steps, read as a separate process would (WAL readers)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        matches = {row[0]: {"status": row[1], "payoffs": row[2], "reason": row[3]}
                   for row in conn.execute("SELECT id, status, payoffs, reason FROM matches")}
        for mid, match in matches.items():
            match["steps"] = conn.execute("SELECT step, moves, errors, state FROM steps "
                                          "WHERE match=? ORDER BY step", (mid,)).fetchall()
    return matches


def ggp(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ggp_cli", *args], cwd=REPO, **kwargs)


def test_kill_mid_tournament_then_restart(tmp_path) -> None:
    game = shared_path("posg", "test", "rewards.osposg")  # 100 steps a match
    db = tmp_path / "matches.sqlite"
    tournament = ggp("tournament", "--games", str(game), "--players", "random?delay=0.002",
                     "first?delay=0.002", "random", "--swap-roles", "--rounds", "3",
                     "--concurrency", "2", "--db", str(db), "--quiet", "--seed", "5",
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        before: dict[str, dict] = {}
        for _ in range(3000):  # until some matches are done and others are in flight
            time.sleep(0.02)
            if db.exists():
                try:
                    before = snapshot(db)
                except sqlite3.OperationalError:  # tables not created yet
                    continue
                statuses = [m["status"] for m in before.values()]
                if statuses.count("completed") >= 2 and "running" in statuses:
                    break
            assert tournament.poll() is None, tournament.stderr.read().decode()
        tournament.send_signal(signal.SIGKILL)
        tournament.wait()
    finally:
        if tournament.poll() is None:
            tournament.kill()
            tournament.wait()
    finished = {mid: m for mid, m in before.items() if m["status"] == "completed"}
    assert len(finished) >= 2 and len(finished) < 18

    # restart: the server marks what it finds running as aborted
    server = ggp("serve", "--port", "0", "--db", str(db), stdout=subprocess.PIPE,
                 stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout.readline().startswith("serving on ws://127.0.0.1:")
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0
    after = snapshot(db)
    for mid, match in finished.items():
        assert after[mid] == match  # intact, step by step
        assert len(match["steps"]) > 0 and json.loads(match["payoffs"])[0] == \
            -json.loads(match["payoffs"])[1]
    interrupted = [m for mid, m in after.items() if mid not in finished]
    assert interrupted, "the kill came while matches were running"
    assert {m["status"] for m in after.values()} <= {"completed", "aborted"}
    for match in interrupted:
        if match["status"] == "aborted":
            assert match["reason"] == "server restarted"
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT status FROM tournaments").fetchall() == [("aborted",)]
    # and the records read back through the CLI, as ggp-base JSON
    mid = next(iter(finished))
    export = subprocess.run([sys.executable, "-m", "ggp_cli", "matches", "export", mid, "--db",
                             str(db)], cwd=REPO, capture_output=True, text=True, check=True)
    record = json.loads(export.stdout)
    assert record["matchId"] == mid and record["isCompleted"] and not record["isAborted"]
    assert len(record["moves"]) == len(finished[mid]["steps"]) == len(record["states"]) - 1
