"""``ggp bench agent --opponent URL`` (issue 29, item 4): matches against a GGP HTTP
player through our server, results appended as they finish, ``--resume``, the summary."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import shared_path

import ggp_cli
from server.bench.versus import Plan, _our_moves, match_line, run, summary
from server.tournament import ci95_half
from solvers.errors import GameError


def test_a_match_line_counts_shares_and_faults() -> None:
    result = {"status": "completed", "payoffs": [25.0, 75.0],
              "errors": [["", "TO"], ["", ""], ["IL", "TO"]]}
    line = match_line(result, "g", 3, seat=1, rate=1234.5)
    assert line["share"] == 75.0 and line["steps"] == 3
    assert line["our_faults"] == {"TO": 2, "IL": 0, "CE": 0}
    assert line["their_faults"] == {"TO": 0, "IL": 1, "CE": 0}
    assert not line["opponent_failed"]
    assert match_line(result, "g", 3, seat=0, rate=None)["opponent_failed"]  # 2 TO of 3
    assert match_line({"payoffs": [0.0, 0.0], "errors": []}, "g", 0, 0, None)["share"] == 50


def test_our_moves_give_the_playout_rate_and_the_fallback_moves(tmp_path: Path) -> None:
    log = tmp_path / "agent.log"
    before = "2026-11-29 03:11:20,001 agent INFO move x {'playouts': 7, 'time': 1.0}\n"
    log.write_text(
        before
        + "2026-11-29 03:11:21,001 agent INFO move (move 2 4 3 5) {'step': 11, "
          "'playouts': 200000, 'nodes': 3, 'method': 'mcts', 'time': 4.0}\n"
        + "2026-11-29 03:11:34,015 agent WARNING fallback move: no answer in time\n"
        + "2026-11-29 03:11:34,015 agent INFO move noop {'method': 'fallback', "
          "'reason': 'no answer in time', 'legal_known': True, 'answer_time': 4.504}\n"
        + "2026-11-29 03:11:38,015 agent INFO move noop {'step': 13, 'method': 'forced', "
          "'playouts': 100000, 'time': 1.0}\n")
    assert _our_moves(log, len(before)) == (60_000.0, 1)   # 300,000 playouts in 5 s
    assert _our_moves(tmp_path / "none.log", 0) == (None, None)
    rows = summary([match_line({"payoffs": [100, 0], "errors": []}, "a", 0, 0, 10.0, 2),
                    match_line({"payoffs": [0, 100], "errors": []}, "a", 1, 1, 30.0, 1)])
    assert rows.splitlines()[0].endswith("our fallbacks") and rows.splitlines()[1].endswith(" 3")


def test_the_interval_is_student_t() -> None:
    # n = 4, mean 50, sample sd 57.735: t(0.975, 3) = 3.182 -> 3.182 * 57.735 / 2 = 91.86
    assert ci95_half([100, 0, 100, 0]) == pytest.approx(91.86, abs=0.01)
    assert ci95_half([100]) is None
    # within the share's range 0..100 it covers all of it: undefined, as in ggp tournament
    # (a screen against Sancho printed "50.0 ± 635.3" for one win and one loss)
    assert ci95_half([100, 0, 100, 0], (0, 100)) is None
    assert ci95_half([100, 100, 0, 100, 100, 100], (0, 100)) == pytest.approx(42.84, abs=0.01)
    row = next(r for r in summary([match_line({"payoffs": p, "errors": []}, "a", k, 0, None)
                                   for k, p in enumerate(([100, 0], [0, 100]))]).splitlines()
               if r.startswith("a "))
    assert "50.0 (wide)" in row


def test_the_summary_leaves_out_matches_the_opponent_failed() -> None:
    lines = [match_line({"payoffs": [100, 0], "errors": [["", ""]]}, "a", 0, 0, 10.0),
             match_line({"payoffs": [0, 100], "errors": [["", ""]]}, "a", 1, 1, 30.0),
             match_line({"payoffs": [100, 0], "errors": [["", "TO"]]}, "b", 0, 0, None)]
    text = summary(lines)
    row = next(r for r in text.splitlines() if r.startswith("a "))
    assert "100.0 ±  0.0" in row and "20" in row       # two wins, 20 playouts/s on average
    b = next(r for r in text.splitlines() if r.startswith("b "))
    assert b.split()[1] == "0"                           # no valid match, one failed


@pytest.mark.slow
def test_our_agent_against_a_gpp_http_player_and_resume(tmp_path: Path, capsys) -> None:
    game = shared_path("gdl-corpus", "repository", "ticTacToe.kif")
    results = tmp_path / "vs.jsonl"
    opponent = f"{sys.executable} -m ggp_cli agent --http {{port}} --enhancements none --quiet"
    argv = ["bench", "agent", "--opponent", "http://127.0.0.1:19911", "--opponent-command",
            opponent, "--games", str(game), "--matches", "2", "--startclock", "3",
            "--playclock", "1", "--cores", "none", "--results", str(results)]
    assert ggp_cli.main(argv) == 0
    lines = [json.loads(x) for x in results.read_text().splitlines()]
    assert [(x["match"], x["seat"]) for x in lines] == [(0, 0), (1, 1)]
    for line in lines:   # tic-tac-toe: a full board or a line, every move answered in time
        assert line["status"] == "completed" and 5 <= line["steps"] <= 9
        assert line["our_faults"] == line["their_faults"] == {"TO": 0, "IL": 0, "CE": 0}
        assert line["playouts_per_second"] > 0 and line["our_fallbacks"] == 0
        # what was run, so that the file describes itself
        assert (line["startclock"], line["playclock"], line["agent_args"]) == (3, 1, "")
    capsys.readouterr()
    assert ggp_cli.main([*argv, "--resume"]) == 0           # nothing left to play
    out = capsys.readouterr().out
    assert "match" not in out.split("game ")[0] and len(results.read_text().splitlines()) == 2
    assert ggp_cli.main([*argv[:-1], str(tmp_path / "new.jsonl"), "--summary"]) == 1


def test_resume_refuses_a_file_run_with_other_settings(tmp_path: Path) -> None:
    results = tmp_path / "vs.jsonl"
    line = {**match_line({"payoffs": [100, 0], "errors": [["", ""]]}, "g", 0, 0, 10.0),
            "startclock": 30.0, "playclock": 5.0, "agent_args": "--exploration 0.3"}
    results.write_text(json.dumps(line) + "\n")
    plan = Plan("http://127.0.0.1:1", None, [], 2, 30.0, 5.0, 0, (), ["--exploration", "0.7"])
    with pytest.raises(GameError, match="agent_args '--exploration 0.3'.*another --results"):
        run(plan, results, resume=True)
    with pytest.raises(GameError, match="playclock 5.0"):
        run(replace(plan, playclock=15.0, agent_args=["--exploration", "0.3"]), results,
            resume=True)
    # the same settings, or a line from before the fields existed: nothing left to play
    run(replace(plan, agent_args=["--exploration", "0.3"]), results, resume=True)
    old = {k: v for k, v in line.items() if k not in ("startclock", "playclock", "agent_args")}
    results.write_text(json.dumps(old) + "\n")
    run(plan, results, resume=True)
    assert results.read_text().count("\n") == 1
