"""POSG files as playable games, and the solved strategies used in play."""

from __future__ import annotations

import random

import numpy as np
import pytest
from conftest import shared_path
from test_posg_hsvi import GUESS

from gdl.formats import load_game, load_game_text
from solvers.errors import GameRuntimeError
from solvers.playable import PlayableGame
from solvers.posg.playable import DEFAULT_HORIZON, PosgPlayable
from solvers.posg.policy import equilibrium_strategy


def _playout(game: PosgPlayable, seed: int, strategies=(None, None)):
    rng = random.Random(seed)
    state = game.initial_state(rng)
    while not game.is_terminal(state):
        moves = []
        for role, strategy in enumerate(strategies):
            legal = game.legal_moves(state, role)
            if strategy is None:
                moves.append(rng.choice(legal))
            else:
                weights = strategy(role, game.observation(state, role), legal)
                assert len(weights) == len(legal) and sum(weights) == pytest.approx(1.0)
                moves.append(rng.choices(legal, weights=weights)[0])
        state = game.next_state(state, moves, rng)
    return state


def test_rewards_payoff_is_discounted_sum() -> None:
    path = shared_path("posg", "test", "rewards.osposg")
    game = PosgPlayable.from_text(path.read_text(), "rewards", str(path), horizon=6)
    assert isinstance(game, PlayableGame) and game.roles == ("P1", "P2")
    state = _playout(game, 0)
    assert state[0] == 6                      # stopped by the horizon
    assert game.payoffs(state) == pytest.approx([1 + 0.95 ** 2 + 0.95 ** 4,
                                                 -(1 + 0.95 ** 2 + 0.95 ** 4)])
    assert game.description()["format"] == "posg"


def test_peg03_stops_at_absorbing_state_and_observations() -> None:
    path = shared_path("posg", "pursuit-evasion", "peg03.osposg")
    game = load_game(path)
    assert isinstance(game, PosgPlayable) and game.horizon == DEFAULT_HORIZON
    end = game.model.state_names.index("end")
    finals = [_playout(game, seed) for seed in range(20)]
    assert all(s[1] == end for s in finals)   # random pursuers still catch the evader
    assert finals == [_playout(game, seed) for seed in range(20)]   # seeded
    assert all(game.payoffs(s)[0] == -game.payoffs(s)[1] > 0 for s in finals)
    state = game.initial_state(random.Random(1))
    p1, p2 = game.observation(state, 0), game.observation(state, 1)
    assert p1 == {"step": 0, "partition": 4, "last_action": None, "observation": None}
    assert p2["state"] == game.model.state_names[state[1]] and "state" not in p1
    with pytest.raises(GameRuntimeError):
        game.next_state(state, ["no-such-move", game.legal_moves(state, 1)[0]], random.Random())


def test_equilibrium_strategy_guessing_game() -> None:
    game = load_game_text("posg", GUESS, name="guess")
    strategy = equilibrium_strategy(game, time_limit=5.0, epsilon=1e-3)
    # at P1's uniform belief P2 moves so that the next state is L or R with
    # probability 1/2 each: P1 learns nothing and scores 1/2 per step (value 5)
    to_l = [strategy(1, game.observation((0, s, -1, -1, -1, 0.0), 1), ["to-L", "to-R"])[0]
            for s in (0, 1)]
    assert 0.5 * to_l[0] + 0.5 * to_l[1] == pytest.approx(0.5, abs=1e-6)
    p1 = strategy(0, game.observation((0, 0, -1, -1, -1, 0.0), 0), ["guess-L", "guess-R"])
    assert sum(p1) == pytest.approx(1.0) and min(p1) >= 0
    final = _playout(game, 0, (strategy, strategy))
    assert final[0] == DEFAULT_HORIZON


def test_equilibrium_strategy_peg03_beats_random_evader() -> None:
    path = shared_path("posg", "pursuit-evasion", "peg03.osposg")
    game = load_game(path)
    strategy = equilibrium_strategy(game, time_limit=4.0)
    # the pursuers' strategy guarantees at least its lower bound against any evader;
    # against a random one they catch it at once or soon after
    vs_random = [game.payoffs(_playout(game, seed, (strategy, None)))[0] for seed in range(10)]
    assert np.mean(vs_random) > 70
