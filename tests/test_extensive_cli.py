"""ggp solve / ggp exploitability for .efg and tree files, strategy files, MCCFR."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import shared_path

import ggp_cli
from solvers.errors import FormatError
from solvers.extensive.efg_format import read_efg
from solvers.extensive.exploitability import nash_conv
from solvers.extensive.mccfr import ChanceSamplingCFR, OutcomeSamplingMCCFR
from solvers.extensive.strategy_io import read_strategy, strategy_dict, write_strategy


def run_json(capsys, argv: list[str]) -> dict:
    assert ggp_cli.main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("solver", ["cfr", "cfr+", "dcfr", "mccfr", "lp"])
def test_solve_json_contract_on_kuhn(capsys, solver):
    path = shared_path("tree-format", "kuhn_mit.txt")
    out = run_json(capsys, ["solve", str(path), "--solver", solver, "--iterations", "2000",
                            "--json"])
    assert set(out) == {"solver", "values", "root_strategy", "nash_conv", "iterations",
                        "seconds"}
    assert out["solver"] == solver
    assert out["root_strategy"] == {}  # Kuhn: each player's first move depends on its card
    assert out["values"]["P1"] == pytest.approx(-1 / 18, abs=0.02 if solver == "mccfr" else 2e-3)
    assert out["nash_conv"] < (0.05 if solver == "mccfr" else 5e-3)


def test_solve_writes_a_strategy_that_exploitability_reads(capsys, tmp_path):
    game_path = shared_path("efg", "leduc_from_course.efg")
    strategy = tmp_path / "leduc.txt"
    out = run_json(capsys, ["solve", str(game_path), "--solver", "lp", "--json",
                            "--strategy", str(strategy)])
    assert out["values"]["Player 1"] == pytest.approx(-0.0856064240780, abs=1e-10)
    lines = strategy.read_text().splitlines()
    assert len(lines) == 288 and all(line.startswith("infoset ") for line in lines)
    check = run_json(capsys, ["exploitability", str(game_path), "--strategy", str(strategy),
                              "--json"])
    assert check["nash_conv"] < 1e-9
    assert check["values"]["Player 1"] == pytest.approx(-0.0856064240780, abs=1e-9)


def test_time_limit_and_progress_lines(capsys, monkeypatch):
    from solvers.extensive import solve

    monkeypatch.setattr(solve, "PROGRESS_SECONDS", 0.0)  # a line after every chunk
    path = shared_path("tree-format", "leduc5_polimi.txt")
    assert ggp_cli.main(["solve", str(path), "--solver", "cfr", "--time-limit", "5"]) == 0
    captured = capsys.readouterr()
    assert "cfr: iteration " in captured.err
    assert "nash_conv:" in captured.out


def test_bad_inputs_give_one_line_errors(capsys, tmp_path):
    bad = tmp_path / "bad.efg"
    bad.write_text('EFG 2 R "g" { "a" }\np "" 1 1 "i" { "l" "r" } 0\nt "" 0\n')
    assert ggp_cli.main(["solve", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {bad}:2:") and err.count("\n") == 1
    game = shared_path("efg", "kuhn_from_course.efg")
    strategy = tmp_path / "s.txt"
    strategy.write_text("infoset /C:J? strategies c=0.5 r=0.6\n")
    assert ggp_cli.main(["exploitability", str(game), "--strategy", str(strategy)]) == 1
    assert "s.txt:1:1: probabilities of /C:J? add up to 1.1" in capsys.readouterr().err
    assert ggp_cli.main(["solve", str(shared_path("efg", "bhg1.efg")), "--solver", "lp"]) == 1
    assert "zero-sum" in capsys.readouterr().err


@pytest.mark.parametrize("solver", ["lp", "baseline"])
def test_kuhn_with_probabilities_summing_to_10_6_is_refused(capsys, tmp_path, solver):
    """Both readers of .efg (extensive and simultaneous) refuse it; before: 0.4467, exit 0."""
    text = shared_path("efg", "kuhn_from_course.efg").read_text()
    bad = tmp_path / "kuhn.efg"
    bad.write_text(text.replace('"JQ" 1/6', '"JQ" 5/6', 1))
    assert ggp_cli.main(["solve", str(bad), "--solver", solver, "--json"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"error: {bad}:")
    assert "node 0: chance probabilities sum to 5/3, not 1" in captured.err


@pytest.mark.parametrize("solver, source", [("lp", "kuhn_from_course.efg"),
                                            ("baseline", "rpss_from_course.efg")])
def test_strategy_into_a_missing_folder(capsys, tmp_path, solver, source):
    game = shared_path("efg", source)
    strategy = tmp_path / "out" / "new" / "strategy.txt"
    assert ggp_cli.main(["solve", str(game), "--solver", solver, "--strategy",
                         str(strategy), "--json"]) in (0, 1)
    captured = capsys.readouterr()
    assert json.loads(captured.out)["values"]
    assert f"wrote the strategy to {strategy}" in captured.err
    assert strategy.read_text().strip()


@pytest.mark.parametrize("solver", ["lp", "baseline"])
def test_an_unwritable_strategy_fails_before_reading_the_game(capsys, tmp_path, solver):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    target = blocker / "strategy.txt"
    # the game does not exist: the output is checked first, before any reading
    assert ggp_cli.main(["solve", str(tmp_path / "missing.efg"), "--solver", solver,
                         "--strategy", str(target)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: --strategy {target}: cannot write there")


def test_strategy_files_round_trip_with_spaces_in_actions():
    game = read_efg(shared_path("efg", "montyhal.efg"))
    sigma = game.uniform_strategy()
    text = write_strategy(game, sigma)
    assert "DOOR%20A=" in text and " DOOR A=" not in text
    back = read_strategy(game, text)
    assert np.allclose(back.sigma, sigma) and back.missing == []
    # files written before the %XX rule spelled the space '_': still read
    assert np.allclose(read_strategy(game, text.replace("%20", "_")).sigma, sigma)
    partial = read_strategy(game, text.splitlines()[0] + "\n")
    assert len(partial.missing) == game.num_infosets - 1
    named = strategy_dict(game, sigma)
    assert named["(1,1)"] == {"DOOR A": pytest.approx(1 / 3), "DOOR B": pytest.approx(1 / 3),
                              "DOOR C": pytest.approx(1 / 3)}


@pytest.mark.parametrize("text, words", [
    ("infoset nope strategies a=1\n", "no information set"),
    ("infoset /C:J? strategies c=1 x=0\n", "expected <action>=<probability>"),
    ("infoset /C:J? strategies c=-1 r=2\n", "negative"),
    ("infoset /C:J? strategies c=1\ninfoset /C:J? strategies c=1\n", "already given"),
    ("strategy /C:J? c=1\n", "expected 'infoset"),
])
def test_strategy_reader_errors(text, words):
    game = read_efg(shared_path("efg", "kuhn_from_course.efg"))
    with pytest.raises(FormatError, match=words):
        read_strategy(game, text, filename="s.txt")


def test_chance_sampling_is_seeded_and_converges():
    game = read_efg(shared_path("efg", "kuhn_from_course.efg"))
    runs = []
    for _ in range(2):
        run = ChanceSamplingCFR(game, seed=7)
        run.iterate(3000)
        runs.append(run.average_strategy())
    assert np.array_equal(runs[0], runs[1])
    result = nash_conv(game, runs[0])
    assert result.nash_conv < 0.05
    assert result.values[0] == pytest.approx(-1 / 18, abs=0.01)


def test_chance_sampling_samples_by_the_chance_probabilities():
    game = read_efg(shared_path("efg", "zerosum_efg_from_sequence_form_STOC94_paper.efg"))
    run = ChanceSamplingCFR(game, seed=3)
    hits = np.zeros(len(game.terminal_nodes))
    for i in range(4000):
        run.iteration = i + 1
        hits += run.chance_weights()
    # chance picks "4" (terminal "nothing") with probability 0.4
    assert hits[-1] / 4000 == pytest.approx(0.4, abs=0.03)
    # "1" (0.2) leads to the first five terminals, all sampled together
    assert np.all(hits[:5] == hits[0]) and hits[0] / 4000 == pytest.approx(0.2, abs=0.03)


def test_outcome_sampling_converges_on_kuhn():
    game = read_efg(shared_path("efg", "kuhn_from_course.efg"))
    run = OutcomeSamplingMCCFR(game, seed=1)
    run.iterate(8000)
    result = nash_conv(game, run.average_strategy())
    assert result.nash_conv < 0.1
    assert result.values[0] == pytest.approx(-1 / 18, abs=0.02)


def test_bench_cfr_reports_speed_and_the_openspiel_nash_conv(capsys):
    folder = shared_path("efg")
    rows = run_json(capsys, ["bench", "cfr", "--games", "kuhn", "--iterations", "100",
                             "--no-peers", "--json", "--efg-dir", str(folder)])
    assert [(r["game"], r["solver"]) for r in rows] == [("kuhn", "cfr"), ("kuhn", "cfr+")]
    # OpenSpiel 2.0.2's C++ solvers after 100 iterations (see test_extensive_solvers)
    assert rows[0]["nash_conv"] == pytest.approx(0.016451954631830412, rel=1e-9)
    assert rows[1]["nash_conv"] == pytest.approx(0.002388808202223369, rel=1e-9)
    assert all(r["it_per_s"] > 0 for r in rows)


def test_ctrl_c_stops_the_lp_inside_highs(capsys, monkeypatch):
    """SIGINT while HiGHS runs: one line saying how far it got, exit 130 (before: ignored
    until HiGHS finished). The first progress line of the LP sends the SIGINT."""
    import os
    import signal

    from solvers.cli import extensive as cli
    from solvers.extensive import highs_run

    monkeypatch.setattr(highs_run, "PROGRESS_SECONDS", 0.0)
    seen: list[str] = []

    def progress(line: str) -> None:
        seen.append(line)
        if line.startswith("lp:") and "iterations" in line and len(seen) < 50:
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(cli, "_progress", progress)
    path = shared_path("efg", "leduc_from_course.efg")
    assert ggp_cli.main(["solve", str(path), "--solver", "lp"]) == 130
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("interrupted: player 2's program stopped after ")
    assert len(captured.err.splitlines()) == 1
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_lp_deadline_stops_highs_and_keeps_the_first_value(monkeypatch):
    """Past the deadline HiGHS is interrupted; when player 2's program is solved already,
    the message gives the game value."""
    import time

    from solvers.errors import LimitReached
    from solvers.extensive import highs_run
    from solvers.extensive.sequence_form_lp import solve_lp

    game = read_efg(shared_path("efg", "leduc_from_course.efg"))
    monkeypatch.setattr(highs_run, "PROGRESS_SECONDS", 0.0)

    class Clock:  # HiGHS' clock, which jumps an hour once player 1's program runs
        offset = 0.0

        def monotonic(self) -> float:
            return time.monotonic() + self.offset

    clock = Clock()
    monkeypatch.setattr(highs_run, "time", clock)

    def progress(line: str) -> None:
        if "player 1's" in line:
            clock.offset = 3600.0

    with pytest.raises(LimitReached) as info:
        solve_lp(game, deadline=time.monotonic() + 600, progress=progress)
    message = str(info.value)
    assert message.startswith("the game value is -0.085606424078")
    assert "player 1's program stopped after" in message


def test_time_limit_covers_reading(capsys):
    path = shared_path("efg", "leduc_from_course.efg")
    assert ggp_cli.main(["solve", str(path), "--solver", "cfr", "--time-limit", "1e-9"]) == 1
    err = capsys.readouterr().err
    assert "the time limit was reached while reading" in err and len(err.splitlines()) == 1


def test_time_limit_covers_reading_for_the_simultaneous_solvers(capsys, tmp_path):
    game = tmp_path / "g.efg"
    assert ggp_cli.main(["random-game", "--actions", "2", "--depth", "2", "--out",
                         str(game)]) == 0
    capsys.readouterr()
    assert ggp_cli.main(["solve", str(game), "--solver", "baseline", "--time-limit",
                         "1e-9"]) == 1
    err = capsys.readouterr().err
    assert "the time limit was reached while reading" in err and len(err.splitlines()) == 1
