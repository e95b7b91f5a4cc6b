"""GdlGame: the PlayableGame view of a GDL game, played with random moves."""

from __future__ import annotations

import random

import pytest
from conftest import shared_path

from gdl.formats import load_game
from gdl.playable import GdlGame
from solvers.errors import GameError
from solvers.playable import PlayableGame

# GDL-II style: nature (`random`) hides a coin, the guesser then guesses it.
COIN = """
(role random) (role guesser)
(init (phase toss))
(<= (legal random (hide ?c)) (true (phase toss)) (coin ?c))
(<= (legal random noop) (true (phase guess)))
(<= (legal guesser noop) (true (phase toss)))
(<= (legal guesser (guess ?c)) (true (phase guess)) (coin ?c))
(coin heads) (coin tails)
(<= (next (hidden ?c)) (does random (hide ?c)))
(<= (next (hidden ?c)) (true (hidden ?c)))
(<= (next (phase guess)) (true (phase toss)))
(<= (next (guessed ?c)) (does guesser (guess ?c)))
(<= (next (phase done)) (true (phase guess)))
(<= terminal (true (phase done)))
(<= (goal guesser 100) (true (hidden ?c)) (true (guessed ?c)))
(<= (goal guesser 0) (true (hidden ?c)) (not (true (guessed ?c))))
(goal random 0)
"""


def play_random(game: PlayableGame, seed: int) -> tuple[list[float], int]:
    rng = random.Random(seed)
    state = game.initial_state(rng)
    steps = 0
    while not game.is_terminal(state):
        moves = [rng.choice(game.legal_moves(state, r)) for r in range(len(game.roles))]
        state = game.next_state(state, moves, rng)
        steps += 1
        assert game.observation(state, 0) == {"last_moves": state[1] and list(state[1])}
    return game.payoffs(state), steps


def test_tic_tac_toe_random_games() -> None:
    path = shared_path("gdl-corpus", "repository", "ticTacToe.kif")
    game = load_game(path)
    assert isinstance(game, GdlGame) and isinstance(game, PlayableGame)
    assert game.roles == ("xplayer", "oplayer")
    assert game.description() == {"format": "gdl", "name": "ticTacToe",
                                  "text": path.read_text()}
    outcomes = set()
    for seed in range(30):
        payoffs, steps = play_random(game, seed)
        assert 5 <= steps <= 9
        outcomes.add(tuple(payoffs))
    # wins for each side and draws all happen in 30 random games
    assert outcomes == {(100.0, 0.0), (0.0, 100.0), (50.0, 50.0)}


def test_first_observation_and_move_spelling() -> None:
    game = GdlGame.from_text(shared_path("gdl-corpus", "repository", "ticTacToe.kif")
                             .read_text(), name="ttt")
    rng = random.Random(0)
    state = game.initial_state(rng)
    assert game.observation(state, 1) == {"last_moves": None}
    assert len(game.legal_moves(state, 0)) == 9 and game.legal_moves(state, 1) == ["noop"]
    state = game.next_state(state, ["( MARK 2 2 )", "noop"], rng)  # any case and spacing
    assert game.observation(state, 1) == {"last_moves": ["(mark 2 2)", "noop"]}
    with pytest.raises(GameError, match="illegal move"):
        game.next_state(state, ["noop", "(mark 2 2)"], rng)


def test_nature_is_not_a_seat_and_is_drawn_from_the_rng() -> None:
    game = GdlGame.from_text(COIN, name="coin")
    assert game.roles == ("guesser",)
    assert game.machine.roles == ("random", "guesser")
    results = [play_random(game, seed) for seed in range(40)]
    assert {payoffs[0] for payoffs, _ in results} == {0.0, 100.0}
    assert all(steps == 2 for _, steps in results)
    # the same seed replays the same hidden coin
    assert play_random(game, 3) == play_random(game, 3)
