"""The match database: group commit, failures isolated, restart marks running matches aborted."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from server.records import Records, ggp_base_json

ROW = {"id": "g.1", "game": "g", "format": "efg", "roles": ["a", "b"], "players": ["x", "y"],
       "seed": 1, "startclock": 1.0, "playclock": 1.0, "initial_state": "s0",
       "description": {"format": "efg", "name": "g"}}


async def test_concurrent_writes_share_commits_and_fail_alone(tmp_path) -> None:
    records = Records(tmp_path / "r.sqlite")
    await records.begin_match(ROW)
    jobs = [records.add_step("g.1", step, ["h", None], ["", ""], f"s{step}")
            for step in range(1, 51)]
    jobs.append(records.add_step("g.1", 7, ["t", None], ["TO", ""], "dup"))  # same step again
    results = await asyncio.gather(*jobs, return_exceptions=True)
    assert all(r is None for r in results[:-1])
    assert isinstance(results[-1], sqlite3.IntegrityError)
    await records.finish_match("g.1", "completed", [1.0, -1.0])
    record = records.get_match("g.1")
    assert [s["step"] for s in record["steps"]] == list(range(1, 51))
    assert record["steps"][6]["moves"] == ["h", None]
    export = ggp_base_json(record)
    assert export["states"][:2] == ["s0", "s1"] and export["moves"][0] == ["h", ""]
    assert export["goalValues"] == [1.0, -1.0] and export["isCompleted"]
    assert set(export) >= {"matchId", "startClock", "playClock", "previewClock", "startTime",
                           "randomToken", "playerNamesFromHost", "tournamentNameFromHost",
                           "scrambled", "states", "moves", "errors", "stateTimes",
                           "goalValues", "isCompleted", "isAborted"}
    records.close()


async def test_reopening_marks_running_matches_aborted(tmp_path) -> None:
    records = Records(tmp_path / "r.sqlite")
    await records.begin_match(ROW)
    await records.add_step("g.1", 1, ["h", "t"], ["", ""], "s1")
    records.close()  # as if the process died here: the match is still 'running'
    again = Records(tmp_path / "r.sqlite")
    record = again.get_match("g.1")
    assert (record["status"], record["reason"]) == ("aborted", "server restarted")
    assert len(record["steps"]) == 1
    again.close()


def test_unopenable_database_is_one_clear_error(tmp_path) -> None:
    from solvers.errors import GameError

    with pytest.raises(GameError, match="cannot open the match database"):
        Records(tmp_path / "no" / "such" / "dir.sqlite")


async def test_a_reader_beside_a_running_server_aborts_nothing(tmp_path) -> None:
    """`ggp matches list` opens the database while a tournament runs: the running
    match stays running (its owner is alive) and can still be finished."""
    server = Records(tmp_path / "r.sqlite")
    await server.begin_match(ROW)
    reader = Records(tmp_path / "r.sqlite")
    assert reader.get_match("g.1")["status"] == "running"
    reader.close()
    await server.add_step("g.1", 1, ["h", "t"], ["", ""], "s1")
    await server.finish_match("g.1", "completed", [1.0, -1.0])
    assert server.get_match("g.1")["status"] == "completed"
    server.close()
