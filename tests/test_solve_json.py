"""One JSON shape for every ``ggp solve`` (issue 14, items 21 and 22; docs/solve-json.md):
``values`` is an object keyed by player name in every family, and ``root_strategy``
({player: {action: probability}}) shows the opening move in JSON and in text."""

from __future__ import annotations

import json

import pytest
from conftest import shared_path

from ggp_cli import main as ggp

# rpss_from_course.efg: P1's payoffs r [0, -1, 1], p [1, 0, -2], s [-1, 2, 0] against
# r, p, s. The matrix is skew-symmetric, so the value is 0 and the equilibrium makes
# -y + z = x - 2z = -x + 2y = 0: (x, y, z) = (1/2, 1/4, 1/4) for both players.
RPSS = {"r": 0.5, "p": 0.25, "s": 0.25}


def _solve(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert ggp(["solve", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _text(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert ggp(["solve", *argv]) == 0
    return capsys.readouterr().out


def test_gdl_roshambo_values_and_thirds(capsys) -> None:
    game = str(shared_path("gdl-corpus", "repository", "roshambo2.kif"))
    out = _solve(capsys, game, "--quiet")
    assert out["values"] == {"white": 50.0, "black": 50.0}
    thirds = {"paper": pytest.approx(1 / 3), "scissors": pytest.approx(1 / 3),
              "well": pytest.approx(1 / 3)}
    assert out["root_strategy"] == {"white": thirds, "black": thirds}
    assert "root strategy: white: paper 0.3333, scissors 0.3333, well 0.3333; black: " \
        in _text(capsys, game, "--quiet")


def test_gdl_nim_winning_move(capsys) -> None:
    # heaps 1, 5, 4, 2: nim-sum 2, and only emptying heap d (2 xor 2 = 0) makes it 0
    game = str(shared_path("gdl-corpus", "repository", "nim1.kif"))
    out = _solve(capsys, game, "--quiet", "--solver", "ih")
    assert out["values"] == {"player1": 100.0, "player2": 0.0}
    assert out["root_strategy"] == {"player1": {"(reduce d 0)": 1.0}, "player2": {"noop": 1.0}}


@pytest.mark.parametrize("solver", ["baseline", "ih", "lp", "cfr+"])
def test_efg_families_share_the_shape(capsys, solver) -> None:
    game = str(shared_path("efg", "rpss_from_course.efg"))
    out = _solve(capsys, game, "--solver", solver, *(["--iterations", "3000"]
                                                     if solver == "cfr+" else []))
    assert out["values"] == {"Player 1": pytest.approx(0, abs=1e-3),
                             "Player 2": pytest.approx(0, abs=1e-3)}
    expected = {a: pytest.approx(p, abs=2e-2 if solver == "cfr+" else 1e-9)
                for a, p in RPSS.items()}
    assert out["root_strategy"] == {"Player 1": expected, "Player 2": expected}
    assert "root strategy: Player 1: r 0.5" in _text(capsys, game, "--solver", solver) \
        or solver == "cfr+"


def test_extensive_leaves_out_a_dealt_opening(capsys) -> None:
    out = _solve(capsys, str(shared_path("tree-format", "kuhn_mit.txt")), "--solver", "lp")
    assert out["values"] == {"P1": pytest.approx(-1 / 18), "P2": pytest.approx(1 / 18)}
    assert out["root_strategy"] == {}


def test_exploitability_values_by_player(capsys, tmp_path) -> None:
    game = str(shared_path("efg", "rpss_from_course.efg"))
    strategy = tmp_path / "s.txt"
    _solve(capsys, game, "--solver", "lp", "--strategy", str(strategy))
    assert ggp(["exploitability", game, "--strategy", str(strategy), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["values"] == {"Player 1": pytest.approx(0), "Player 2": pytest.approx(0)}
    assert set(out["best_response_values"]) == {"Player 1", "Player 2"}


def test_posg_bounds_by_player_and_opening(capsys) -> None:
    # rewards 1 in A (then B), 0 in B (then A), from A: 1 / (1 - 0.95^2) = 10.2564
    game = str(shared_path("posg", "test", "rewards.osposg"))
    out = _solve(capsys, game, "--time-limit", "10")
    lower, upper = out["lower"], out["upper"]
    assert round(lower, 4) == round(upper, 4) == 10.2564
    assert out["value_bounds"] == {"P1": [lower, upper], "P2": [-upper, -lower]}
    # P1 has one action, "action"; P2 sees the state, so its opening is left out
    assert out["root_strategy"] == {"P1": {"action": 1.0}}
    assert "root strategy: P1: " in _text(capsys, game, "--time-limit", "10")
