"""The agent on puzzles and games of three or more players: the start-clock solve
(:mod:`agent.brains.gdl_joint`) and solutions stored by ``ggp solve --save``, played as
``ggp solve`` found them (issue 30, item 4)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import ggp_cli
from agent.brains.gdl import GdlBrain
from agent.brains.options import BrainOptions, GameSpec

DATA = Path(__file__).parent / "data"
# hanoi3's plan as `ggp solve` finds it: 2^3 - 1 moves
HANOI3_PLAN = ["(move 1 c)", "(move 2 b)", "(move 1 2)", "(move 3 c)", "(move 1 a)",
               "(move 2 3)", "(move 1 2)"]


def brain(name: str, role: str, **options) -> GdlBrain:
    text = (DATA / f"{name}.kif").read_text()
    return GdlBrain(GameSpec("gdl", text, name), role, BrainOptions(seed=1, **options))


def play_alone(player: GdlBrain) -> list[str]:
    """A puzzle played to its end by its only role: the moves chosen."""
    moves = []
    while not player.machine.is_terminal(player.state):
        move, info = player.select(time.monotonic() + 5)
        assert info["method"] == "solution"
        moves.append(move)
        player.advance([move])
    return moves


def test_a_puzzle_is_solved_on_the_start_clock_and_its_plan_played() -> None:
    player = brain("hanoi3", "player")
    info = player.metagame(time.monotonic() + 30)
    # every non-terminal state of the 89 (27 are terminal: the step limit ends the rest)
    assert info["presolve"] == "plan: value 100 in 7 steps, 89 states, 62 kept"
    assert play_alone(player) == HANOI3_PLAN
    assert player.goals() == [100]


def test_three_players_are_solved_on_the_start_clock() -> None:
    """nim3: a takes 1 first (the tie rule's first best move), as `ggp solve` says."""
    player = brain("nim3", "a")
    info = player.metagame(time.monotonic() + 30)
    assert info["presolve"].startswith("spe: values {'a': 0.0, 'b': 0.0, 'c': 100.0}")
    move, played = player.select(time.monotonic() + 5)
    assert (move, played["method"], played["value"]) == ("(take 1)", "solution", 0.0)


@pytest.mark.parametrize(("game", "role"), [("hanoi3", "player"), ("nim3", "b")])
def test_solutions_saved_by_ggp_solve_are_played(tmp_path, game: str, role: str) -> None:
    assert ggp_cli.main(["solve", str(DATA / f"{game}.kif"), "--quiet",
                         "--save", str(tmp_path / f"{game}.jsonl")]) == 0
    player = brain(game, role, solutions=str(tmp_path))
    info = player.metagame(time.monotonic() + 30)
    assert info["solution"] == str(tmp_path / f"{game}.jsonl") and "presolve" not in info
    assert "playouts" not in info   # the solution plays every move: no tree on the start clock
    if game == "hanoi3":
        assert play_alone(player) == HANOI3_PLAN
    else:   # b's first turn follows a's (take 1)
        player.advance(["(take 1)", "noop", "noop"])
        move, played = player.select(time.monotonic() + 5)
        assert played["method"] == "solution" and played["value"] == 0.0
        assert player.solution.strategy(player.machine.state_to_kif(player.state))["b"] == {
            move: 1.0}
