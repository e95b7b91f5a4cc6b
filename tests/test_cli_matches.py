"""Records at the command line (issue 14, item 20): ``ggp matches list`` with a header,
dates and fault counts; ``ggp matches tournaments`` and ``ggp matches standings ID`` show
a finished tournament again, scored as when it ran."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest
from conftest import shared_path

from ggp_cli import main as ggp


def test_list_has_header_dates_and_faults(tmp_path, capsys) -> None:
    game = shared_path("efg", "rpss_from_course.efg")
    db = str(tmp_path / "m.sqlite")
    # "random?delay=1.5" answers after its 0.2 s play clock and 1 s of grace: a timeout
    assert ggp(["match", str(game), "--players", "first", "random?delay=1.5", "--playclock",
                "0.2", "--seed", "2", "--db", db, "--json"]) == 0
    played = json.loads(capsys.readouterr().out)
    late = sum(1 for step in played["errors"] if step[1])
    assert late > 0
    assert ggp(["matches", "list", "--db", db]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split() == ["started", "match", "status", "players", "payoffs", "faults",
                              "reason"]
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  " + re.escape(played["match"]), row)
    assert f"  0 {late}" in row
    assert ggp(["matches", "list", "--db", db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["faults"] == [0, late]


def test_standings_of_a_finished_tournament_again(tmp_path, capsys) -> None:
    game = shared_path("efg", "kuhn_from_course.efg")
    db = str(tmp_path / "t.sqlite")
    assert ggp(["tournament", "--games", str(game), "--players", "first", "random", "random",
                "--swap-roles", "--playclock", "1", "--db", db, "--json", "--seed", "5",
                "--quiet"]) == 0
    ran = json.loads(capsys.readouterr().out)
    assert ggp(["matches", "tournaments", "--db", db]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split()[:4] == ["started", "tournament", "status", "matches"]
    assert f"{ran['tournament']}  completed  6 " in row
    assert ggp(["matches", "standings", ran["tournament"], "--db", db, "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["standings"] == ran["standings"]  # recomputed from the match records
    assert ggp(["matches", "standings", ran["tournament"], "--db", db]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0].startswith(f"tournament {ran['tournament']} (completed, started ")
    assert text[1].split()[:4] == ["player", "game", "n", "mean"]
    assert {line.split()[0] for line in text[2:-1]} == {"first", "random", "random#2"}
    # the last line says how the overall row was scaled
    assert text[-1].startswith("overall: each game's payoffs scaled to [0, 1]")
    assert text[-1].endswith("kuhn_from_course [-2, 2] (terminal payoffs)")
    assert ggp(["matches", "standings", "--db", db]) == 1
    assert "needs a tournament id" in capsys.readouterr().err
    assert ggp(["matches", "standings", "tournament.none", "--db", db]) == 1
    assert "no tournament 'tournament.none'" in capsys.readouterr().err


def test_standings_of_a_tournament_stopped_early(tmp_path, capsys) -> None:
    game = shared_path("efg", "rpss_from_course.efg")
    db = tmp_path / "t.sqlite"
    assert ggp(["tournament", "--games", str(game), "--players", "first", "random",
                "--swap-roles", "--rounds", "2", "--playclock", "1", "--db", str(db),
                "--json", "--seed", "9", "--quiet"]) == 0
    ran = json.loads(capsys.readouterr().out)
    # as if killed after three matches: the fourth never recorded, no standings saved
    dropped = ran["matches"][3]
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM steps WHERE match=?", (dropped["match"],))
        conn.execute("DELETE FROM matches WHERE id=?", (dropped["match"],))
        conn.execute("UPDATE tournaments SET status='aborted', standings=NULL")
    conn.close()
    assert ggp(["matches", "standings", ran["tournament"], "--db", str(db), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["status"] == "aborted"
    overall = {s["player"]: s for s in again["standings"] if s["game"] == "overall"}
    assert overall["first"]["matches"] == overall["random"]["matches"] == 3
    # the three left score as they did: first's payoffs in the matches it played
    first = [m["payoffs"][m["players"].index("first")] for m in ran["matches"][:3]]
    game_row = next(s for s in again["standings"]
                    if s["player"] == "first" and s["game"] != "overall")
    assert game_row["mean"] == pytest.approx(sum(first) / 3)
    # overall: scaled by the range saved with the tournament (rpss's terminal payoffs
    # run from -2 to 2)
    assert ran["payoff_ranges"][game_row["game"]] == {"low": -2.0, "high": 2.0,
                                                      "source": "terminal payoffs"}
    assert overall["first"]["mean"] == pytest.approx(sum((x + 2) / 4 for x in first) / 3)
