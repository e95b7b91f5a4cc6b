""".efg / tree games through the PlayableGame interface, and the equilibrium strategy."""

from __future__ import annotations

import random

import pytest
from conftest import shared_path

from gdl.formats import load_game, load_game_text
from solvers.errors import GameRuntimeError
from solvers.extensive.playable import ExtensivePlayable, equilibrium_strategy
from solvers.playable import PlayableGame


def play(game: PlayableGame, seed: int) -> tuple[list[float], list[dict]]:
    """A random match; returns the payoffs and every observation seen."""
    rng = random.Random(seed)
    state = game.initial_state(rng)
    seen = []
    while not game.is_terminal(state):
        moves: list[str | None] = []
        actors = 0
        for role in range(len(game.roles)):
            legal = game.legal_moves(state, role)
            obs = game.observation(state, role)
            if legal:
                actors += 1
                assert obs["infoset"] and obs["actions"] == legal
                seen.append(obs)
            else:
                assert obs == {}
            moves.append(rng.choice(legal) if legal else None)
        assert actors == 1
        state = game.next_state(state, moves, rng)
    return game.payoffs(state), seen


def test_loader_gives_a_playable_game_for_both_formats():
    efg = load_game(shared_path("efg", "kuhn_from_course.efg"))
    tree = load_game(shared_path("tree-format", "kuhn_mit.txt"))
    for game, fmt in ((efg, "efg"), (tree, "tree")):
        assert isinstance(game, PlayableGame) and isinstance(game, ExtensivePlayable)
        assert game.format == fmt and game.description()["format"] == fmt
        assert len(game.roles) == 2
        for seed in range(30):
            payoffs, seen = play(game, seed)
            assert sum(payoffs) == 0 and abs(payoffs[0]) in (1, 2)
            assert all(set(obs) == {"infoset", "actions"} for obs in seen)


def test_seeded_matches_replay_and_chance_follows_its_probabilities():
    game = load_game(shared_path("efg", "zerosum_efg_from_sequence_form_STOC94_paper.efg"))
    assert play(game, 5) == play(game, 5)
    rng = random.Random(1)
    starts = [game.initial_state(rng) for _ in range(5000)]
    # chance picks "4" (the terminal "nothing", payoff 5) with probability 0.4
    nothing = sum(1 for s in starts if game.is_terminal(s))
    assert nothing / 5000 == pytest.approx(0.4, abs=0.03)
    assert game.payoffs(next(s for s in starts if game.is_terminal(s))) == [5.0, -5.0]


def test_outcomes_on_inner_nodes_are_accumulated():
    text = ('EFG 2 R "g" { "a" "b" }\np "" 1 1 "I" { "x" "y" } 1 "fee" { -1 1 }\n'
            't "" 2 "win" { 3 -3 }\nt "" 0\n')
    game = load_game_text("efg", text, name="g")
    state = game.initial_state(random.Random(0))
    assert game.payoffs(game.next_state(state, ["x", None], random.Random(0))) == [2.0, -2.0]
    assert game.payoffs(game.next_state(state, ["y", None], random.Random(0))) == [-1.0, 1.0]
    with pytest.raises(GameRuntimeError, match="not a legal move"):
        game.next_state(state, ["z", None], random.Random(0))


def test_equilibrium_strategy_on_kuhn_is_the_unique_second_player_strategy():
    game = load_game(shared_path("efg", "kuhn_from_course.efg"))
    strategy = equilibrium_strategy(game)
    # Kuhn's second player has a unique equilibrium strategy (Kuhn 1950)
    assert strategy["/C:?Q/P1:r"]["c"] == pytest.approx(1 / 3, abs=1e-7)
    assert strategy["/C:?J/P1:c"]["r"] == pytest.approx(1 / 3, abs=1e-7)
    assert strategy["/C:?K/P1:r"]["c"] == pytest.approx(1.0, abs=1e-7)
    assert strategy["/C:?J/P1:r"]["c"] == pytest.approx(0.0, abs=1e-7)
    # the table is also a policy(role, observation, legal) -> weights
    state = next(s for s in range(game.game.num_nodes)
                 if game.observation(s, 1).get("infoset") == "/C:?Q/P1:r")
    legal = game.legal_moves(state, 1)
    weights = strategy(1, game.observation(state, 1), legal)
    assert weights == pytest.approx([1 / 3 if m == "c" else 2 / 3 for m in legal], abs=1e-7)
    assert strategy(0, {"infoset": "unknown"}, ["a", "b"]) == [1.0, 1.0]


def test_equilibrium_strategy_uses_cfr_plus_for_general_sum_games():
    game = load_game(shared_path("efg", "bhg1.efg"))
    strategy = equilibrium_strategy(game, time_limit=0.5)
    assert set(strategy) == set(game.game.infoset_names)
    for probs in strategy.values():
        assert sum(probs.values()) == pytest.approx(1.0)
