"""``ggp solve FILE.osposg``: the JSON contract, progress on stderr, clean errors."""

from __future__ import annotations

import json

from conftest import shared_path

from ggp_cli import main


def test_solve_rewards_json(capsys) -> None:
    path = shared_path("posg", "test", "rewards.osposg")
    code = main(["solve", str(path), "--epsilon", "1e-6", "--time-limit", "10", "--json"])
    out, err = capsys.readouterr()
    assert code == 0
    result = json.loads(out)
    assert list(result)[:5] == ["lower", "upper", "gap", "seconds", "iterations"]
    assert set(result) - set(list(result)[:5]) == {"solver", "value_bounds", "root_strategy"}
    assert round(result["lower"], 4) == round(result["upper"], 4) == 10.2564
    assert result["gap"] <= 1e-6
    assert "lower 10.256410" in err and "vectors" in err and "points" in err


def test_solve_plain_text(capsys) -> None:
    path = shared_path("posg", "test", "rewards.osposg")
    assert main(["solve", str(path), "--time-limit", "10"]) == 0
    assert "value in [10.256410, 10.256410]" in capsys.readouterr().out


def test_invalid_files_one_line_exit_1(capsys) -> None:
    for name, line in (("discount", 1), ("is_not_distribution", 10),
                       ("multi_partition_transition", 12)):
        path = shared_path("posg", "test", f"{name}.osposg")
        assert main(["solve", str(path), "--json"]) == 1
        out, err = capsys.readouterr()
        assert out == ""
        assert err.count("\n") == 1 and f"{path}:{line}:" in err


def test_bad_options(capsys, tmp_path) -> None:
    path = shared_path("posg", "test", "rewards.osposg")
    assert main(["solve", str(path), "--epsilon", "0"]) == 1
    assert main(["solve", str(tmp_path / "missing.osposg")]) == 1
    assert "cannot read" in capsys.readouterr().err
