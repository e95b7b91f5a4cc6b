"""``ggp bench corpus``: the table of solved games and the games that did not fit."""

from __future__ import annotations

import json

from conftest import shared_path

from gdl.solve_bench import main


def test_bench_solves_what_fits_and_says_why_the_rest_does_not(capsys) -> None:
    corpus = shared_path("gdl-corpus")
    assert main(["--corpus", str(corpus), "--only", "roshambo2,crossers3,blocker",
                 "--max-states", "5000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    roshambo = out["solved"]["roshambo2"]
    assert roshambo["states"] == 180 and roshambo["constant_sum"] == 100.0
    for solver in ("baseline", "ih"):
        assert roshambo[solver]["values"] == {"white": 50.0, "black": 50.0}
        assert roshambo[solver]["ok"]
    assert out["did_not_fit"]["crossers3"].startswith(
        "3 players (top, right, left): not supported by exact solvers")
    assert "budget of 5,000 states" in out["did_not_fit"]["blocker"]


def test_bench_table(capsys) -> None:
    corpus = shared_path("gdl-corpus")
    assert main(["--corpus", str(corpus), "--only", "gt_coordination,switches"]) == 0
    out = capsys.readouterr().out
    assert "| gt_coordination | 231 (210) | compiled |" in out
    assert "white 100 / black 100" in out
    assert "- switches: 3 players (red, white, blue): not supported by exact solvers" in out
