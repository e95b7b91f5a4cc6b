"""``ggp bench corpus``: the table of solved games and the games that did not fit."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import shared_path

from gdl.bench.corpus import main

DATA = Path(__file__).parent / "data"


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
    assert "budget of 5,000 states" in out["did_not_fit"]["crossers3"]   # 3 players
    assert "budget of 5,000 states" in out["did_not_fit"]["blocker"]


def test_bench_table(capsys) -> None:
    corpus = shared_path("gdl-corpus")
    assert main(["--corpus", str(corpus), "--only", "gt_coordination"]) == 0
    out = capsys.readouterr().out
    assert "| gt_coordination | 231 (210) | compiled |" in out
    assert "white 100 / black 100" in out


def test_every_kind_in_one_table(capsys) -> None:
    """Puzzles and games of three players are solved as `ggp solve` solves them, beside
    the two-player ones, in one table with the counts by kind."""
    corpus = shared_path("gdl-corpus")
    assert main(["--corpus", str(corpus), "--only", "gt_coordination,switches,hanoi",
                 str(DATA / "nim3.kif")]) == 0
    out = capsys.readouterr().out
    assert "| switches | 3 | 9 | spe |" in out and "red 100 / white 100 / blue 100" in out
    assert "| hanoi | 1 | 2,753 | plan |" in out and "| player 100 | proved" in out
    assert "| 31 steps |" in out        # 2^5 - 1 moves: hanoi's five discs
    assert "| gt_coordination | 2 | 231 | baseline |" in out
    assert "| nim3 | 3 |" in out
    assert "Solved: puzzles 1 of 1, two players 1 of 1, three or more players 2 of 2" in out


def test_games_file_any_kind_both_paths_and_doab_column(tmp_path, capsys) -> None:
    corpus = shared_path("gdl-corpus")
    games = tmp_path / "games.txt"
    games.write_text("# two games\nroshambo2\ngt_chicken, ticTacToe\n")
    rows = {}
    for path in ("dag", "model"):
        assert main(["--corpus", str(corpus), "--games", str(games), "--path", path,
                     "--json"]) == 0
        rows[path] = json.loads(capsys.readouterr().out)["solved"]
    for path, solved in rows.items():
        assert set(solved) == {"roshambo2", "gt_chicken", "ticTacToe"}  # turn-based too
        assert solved["ticTacToe"]["states"] == 5_478 and solved["ticTacToe"]["path"] == path
        roshambo = solved["roshambo2"]
        assert roshambo["doab"]["values"] == roshambo["baseline"]["values"] == {
            "white": 50.0, "black": 50.0}
        assert roshambo["doab"]["nodes_total"] == 125 and roshambo["doab"]["ok"]
        assert solved["gt_chicken"]["doab"]["stopped"] is False   # general-sum: n/a
        assert solved["gt_chicken"]["baseline"]["values"] == {"white": 100.0, "black": 60.0}
    assert rows["dag"]["roshambo2"]["transitions"] == rows["model"]["roshambo2"]["transitions"]


def test_unknown_names_and_solvers_are_one_line_errors(tmp_path) -> None:
    import pytest

    from solvers.errors import GameError

    corpus = shared_path("gdl-corpus")
    with pytest.raises(GameError, match="not in .*LISTING.tsv: nosuchgame"):
        main(["--corpus", str(corpus), "--only", "roshambo2,nosuchgame"])
    with pytest.raises(GameError, match="--solvers: unknown cfr"):
        main(["--corpus", str(corpus), "--solvers", "baseline,cfr"])


def test_results_file_resumes_a_sweep_and_tables_what_it_holds(tmp_path, capsys) -> None:
    import pytest

    from gdl.bench.corpus import corpus_games
    from solvers.errors import GameError

    corpus = shared_path("gdl-corpus")
    assert len(corpus_games(corpus, two_player=True)) == 123   # the sweep
    results = tmp_path / "sweep.jsonl"
    base = ["--corpus", str(corpus), "--solvers", "baseline", "--max-states", "3000",
            "--results", str(results)]
    assert main([*base, "--only", "roshambo2,crossers3", "--json"]) == 0
    capsys.readouterr()
    with results.open("a") as out:   # a kill mid-write leaves a torn last line
        out.write('{"game": "nim1", "ro')
    with pytest.raises(GameError, match="already has 2 games: --resume"):
        main([*base, "--only", "roshambo2,nim1"])
    assert main([*base, "--only", "roshambo2,crossers3,nim1", "--resume", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["solved"]["roshambo2"]["baseline"]["values"] == {"white": 50.0, "black": 50.0}
    assert out["solved"]["nim1"]["baseline"]["values"] == {"player1": 100.0, "player2": 0.0}
    assert "budget of 3,000 states" in out["did_not_fit"]["crossers3"]
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert [r["game"] for r in rows] == ["roshambo2", "crossers3", "nim1"]   # each once
    with pytest.raises(GameError, match="--resume needs --results"):
        main(["--corpus", str(corpus), "--only", "roshambo2", "--resume"])
