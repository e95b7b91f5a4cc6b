"""Messages a new user meets (issue 14, items 14 and 19): the game after ``--players``,
the file named in GDL problems found by ``ggp solve``, the memory budget's advice,
"1 player"."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import REPO, shared_path

from gdl.expansion.batch_expand import expand_dag
from gdl.reasoning.machine import load_machine
from ggp_cli import main as ggp
from solvers.errors import UnsupportedGame

TICTACTOE = REPO / "games" / "gdl" / "simultaneous_tictactoe.kif"


def test_match_takes_the_game_after_the_players(tmp_path, capsys) -> None:
    game = shared_path("posg", "test", "rewards.osposg")
    db = str(tmp_path / "m.sqlite")
    before = ["match", str(game), "--players", "first", "first", "--db", db, "--json"]
    after = ["match", "--players", "first", "first", str(game), "--db", db, "--json"]
    assert ggp(before) == 0
    first = json.loads(capsys.readouterr().out)
    assert ggp(after) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["players"] == ["first", "first"] and second["roles"] == ["P1", "P2"]
    assert second["moves"] == first["moves"]  # "first" is deterministic: the same match


def test_match_without_a_game_says_so(tmp_path, capsys) -> None:
    assert ggp(["match", "--players", "uct", "random", "--db", str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ggp match: no game file given")
    assert "'random' is a player spec" in err and "required" not in err
    assert ggp(["match", "--players", "game.kif", "--db", str(tmp_path / "m")]) == 1
    assert "no player specs before 'game.kif'" in capsys.readouterr().err


def test_solve_names_the_file_of_a_gdl_problem(tmp_path, capsys) -> None:
    bad = tmp_path / "unsafe.kif"
    bad.write_text("(role a)\n(role b)\n(init (p))\n(<= (legal a ?x) (true (p)))\n")
    assert ggp(["check", str(bad)]) == 1
    checked = capsys.readouterr().out.splitlines()[0]
    assert checked.startswith(f"{bad}:4:1: unsafe rule")
    assert ggp(["solve", str(bad)]) == 1
    assert capsys.readouterr().err.strip() == f"error: invalid GDL: {checked}"


def test_memory_budget_says_how_to_raise_it() -> None:
    # a fresh process: in this one, memory freed by earlier tests is reused without
    # the resident size growing, so the budget would never be reached
    run = subprocess.run([sys.executable, "-m", "ggp_cli", "solve", str(TICTACTOE),
                          "--memory-mb", "0.001", "--quiet"], capture_output=True, text=True,
                         cwd=REPO, timeout=300)
    assert run.returncode == 1
    err = run.stderr
    assert "memory budget of 0.001 MB was reached" in err and "(raise --memory-mb)" in err


def test_one_player_is_singular(tmp_path, capsys) -> None:
    """A puzzle is solved now (tests/test_puzzle_solve.py); the two-player paths still
    refuse it, saying "1 player"."""
    one = tmp_path / "one.kif"
    one.write_text("(role a)\n(init (p))\n(<= (legal a x) (true (p)))\n"
                   "(<= (next (q)) (does a x))\n(<= terminal (true (q)))\n"
                   "(<= (goal a 100) (true (q)))\n")
    assert ggp(["solve", str(one), "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["values"] == {"a": 100.0}
    with pytest.raises(UnsupportedGame, match=r"^1 player \(a\): not supported"):
        expand_dag(load_machine(one))
