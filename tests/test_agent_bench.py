"""``ggp bench agent --ceiling``: a clairvoyant seat of a solved game.

Told the opponent's move, it takes the move with the best exact value against it, so
the value it can expect never falls: every match ends at or above the game's value
(50 on simultaneous tic-tac-toe), and above it whenever the opponent errs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent.bench import main
from solvers.errors import GameError

GAMES = Path(__file__).resolve().parent.parent / "games" / "gdl"


def test_the_clairvoyant_seat_never_ends_below_the_value(capsys: pytest.CaptureFixture) -> None:
    game = str(GAMES / "simultaneous_tictactoe.kif")
    assert main([game, "--opponent", "random", "--ceiling", "--matches", "6",
                 "--playclock", "0.01", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    seats = re.findall(r"seat (\d) goals \[(\d+), (\d+)\]", out)
    assert len(seats) == 6
    scores = [int(goals[int(seat)]) for seat, *goals in seats]
    assert min(scores) >= 50 and sum(scores) > 50 * 6  # random play errs
    chose, lost = map(int, re.search(r"chose (\d+) times; (\d+) of", out).groups())
    assert 0 < lost <= chose


def test_the_ceiling_needs_a_two_player_game(tmp_path: Path) -> None:
    game = tmp_path / "three.kif"
    game.write_text("(role a) (role b) (role c) (init on) (legal a go) (legal b go) "
                    "(legal c go) (<= terminal (true on)) (goal a 0) (goal b 0) (goal c 0)")
    with pytest.raises(GameError, match="two-player"):
        main([str(game), "--ceiling", "--matches", "1"])
