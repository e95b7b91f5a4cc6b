"""The tournament's overall row: each game's payoffs scaled to [0, 1] by its payoff range
(server/payoff_range.py), and ``ggp tournament --plot``."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import GAMES, shared_path
from scipy import stats
from test_solve_trace import png_size

from gdl.formats import load_game
from ggp_cli import main as ggp
from server.match import MatchOutcome
from server.payoff_range import PayoffRange, payoff_range
from server.plots import standings_plot
from server.records import Records
from server.tournament import Pairing, recorded_table, standings


def test_payoff_ranges_by_format() -> None:
    kuhn = load_game(shared_path("efg", "kuhn_from_course.efg"))
    assert payoff_range(kuhn) == PayoffRange(-2.0, 2.0, "terminal payoffs")
    ttt = load_game(GAMES / "gdl" / "simultaneous_tictactoe.kif")
    assert payoff_range(ttt) == PayoffRange(0.0, 100.0, "GDL goals 0-100")
    # rewards.osposg: rewards 0 and 1, discount 0.95, matches of at most 100 steps
    posg = load_game(shared_path("posg", "test", "rewards.osposg"))
    most = (1 - 0.95 ** 100) / (1 - 0.95)
    found = payoff_range(posg)
    assert found is not None and found.source == "rewards over the horizon"
    assert (found.low, found.high) == pytest.approx((-most, most))
    assert payoff_range(SimpleNamespace(format="efg")) is None


def test_overall_row_scales_two_games_with_different_ranges() -> None:
    rpss = load_game(shared_path("efg", "rpss_from_course.efg"))     # payoffs -2..2
    ttt = SimpleNamespace(name="ttt", format="gdl", roles=["x", "o"])  # goals 0..100
    pairings = [Pairing(rpss, (0, 1), 0, 1), Pairing(rpss, (1, 0), 0, 2),
                Pairing(ttt, (0, 1), 0, 3), Pairing(ttt, (1, 0), 0, 4)]
    outcomes = [MatchOutcome("a", "completed", [2.0, -2.0]),
                MatchOutcome("b", "completed", [1.0, -1.0]),     # B in seat 0: A gets -1
                MatchOutcome("c", "completed", [100.0, 0.0]),
                MatchOutcome("d", "completed", [50.0, 50.0])]
    table = {(s.entrant, s.game): s for s in standings(pairings, outcomes, ["A", "B"])}
    # A: (2+2)/4 = 1, (-1+2)/4 = 0.25, 100/100 = 1, 50/100 = 0.5
    a = table["A", "overall"]
    assert a.scores == [1.0, 0.25, 1.0, 0.5]
    assert a.mean == 0.6875
    sd = math.sqrt(sum((x - 0.6875) ** 2 for x in a.scores) / 3)
    assert a.ci95 == pytest.approx(stats.t.ppf(0.975, 3) * sd / 2)
    # B: (-2+2)/4 = 0, (1+2)/4 = 0.75, 0, 0.5
    assert table["B", "overall"].scores == [0.0, 0.75, 0.0, 0.5]
    assert table["B", "overall"].mean == 0.3125
    # the per-game rows keep each game's own payoffs
    assert table["A", "rpss_from_course"].mean == 0.5
    assert table["A", "ttt"].mean == 75.0
    # given ranges win over the games' own
    halved = standings(pairings, outcomes, ["A", "B"], {"ttt": PayoffRange(0, 200, "x")})
    assert next(s for s in halved if (s.entrant, s.game) == ("A", "overall")).scores == [
        1.0, 0.25, 0.5, 0.25]


def test_standings_plot_draws_each_game_and_the_overall_row(tmp_path) -> None:
    rpss = load_game(shared_path("efg", "rpss_from_course.efg"))
    pairings = [Pairing(rpss, (0, 1), r, r) for r in range(3)]
    outcomes = [MatchOutcome(str(r), "completed", [p, -p]) for r, p in enumerate([2.0, 1.0, 0.0])]
    table = standings(pairings, outcomes, ["A", "B"])
    panels = standings_plot(tmp_path / "s.png", table, "t")
    assert [p.title for p in panels] == ["rpss_from_course",
                                         "overall (payoffs scaled to [0, 1])"]
    assert panels[0].names == ["A", "B"] and panels[0].values == [1.0, -1.0]
    a = next(s for s in table if (s.entrant, s.game) == ("A", "rpss_from_course"))
    assert a.ci95 is not None
    assert panels[0].low[0] == pytest.approx(1.0 - a.ci95)
    assert panels[1].values == [0.75, 0.25]
    assert png_size(tmp_path / "s.png")[0] > 0


def test_tournament_plot_shows_the_recorded_standings(tmp_path: Path, capsys) -> None:
    games = [str(shared_path("efg", "rpss_from_course.efg")),
             str(GAMES / "gdl" / "goofspiel_2.kif")]
    db, plot = tmp_path / "t.sqlite", tmp_path / "t.png"
    assert ggp(["tournament", "--games", *games, "--players", "first", "random",
                "--swap-roles", "--playclock", "1", "--db", str(db), "--seed", "3",
                "--quiet", "--json", "--plot", str(plot)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["payoff_ranges"] == {
        "rpss_from_course": {"low": -2.0, "high": 2.0, "source": "terminal payoffs"},
        "goofspiel_2": {"low": 0.0, "high": 100.0, "source": "GDL goals 0-100"}}
    # the picture is the recorded standings drawn: the same bytes again
    records = Records(db)
    try:
        table, ranges = recorded_table(records.get_tournament(result["tournament"]),
                                       records.list_matches(result["tournament"], limit=-1))
    finally:
        records.close()
    assert [s.to_json() for s in table] == result["standings"]
    standings_plot(tmp_path / "again.png", table, f"tournament {result['tournament']}")
    assert (tmp_path / "again.png").read_bytes() == plot.read_bytes()
    # the text form says how the overall row was scaled
    assert ggp(["matches", "standings", result["tournament"], "--db", str(db)]) == 0
    assert "goofspiel_2 [0, 100] (GDL goals 0-100)" in capsys.readouterr().out
