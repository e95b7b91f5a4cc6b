"""The compiled whole playouts (gdl/reasoning/playout_net.py, gdl/reasoning/playout_kernels.py)
against the per-state compiled engine (itself checked against SWI-Prolog traces in
tests/test_gdl_compiled.py), and the agent's playouts over them.

1. Transitions: on states reached by seeded random playouts of 20 corpus and bundled
   games (turn-based, simultaneous, 3 roles, 1 role, recursive views, ``random``),
   the kernels' step mode gives the engine's legal moves of every role, terminal
   flag, goal atoms and next state.
2. Playouts: every playout's recorded moves replay as legal moves in the engine, end
   where it says (terminal, or the step limit) with the rewards the engine's goals
   give; the outcome distribution of uniform tic-tac-toe playouts is the exact one
   (computed by enumerating the game).
3. Seeds, MAST and Gibbs, chance roles; the agent's BatchPlayouts on the kernels.
"""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest
from conftest import GAMES, REPO, shared_path

import gdl.reasoning.kernels
from agent.search.playouts import NEUTRAL, BatchPlayouts, PlayoutPolicy, make_playouts
from gdl.reasoning.batch_machine import batch_machine_of, pack_ints, unpack_int
from gdl.reasoning.machine import load_machine
from gdl.reasoning.playout_net import playout_net_of

pytestmark = pytest.mark.skipif(not gdl.reasoning.kernels.KERNELS.enabled,
                                reason="numba is not installed (or GGP_NUMBA=0)")

# (game, where): corpus games from ../shared, bundled ones from games/
TRANSITION_GAMES = (
    "ticTacToe", "connectFour", "breakthroughSuicideSmall", "reversi", "knightThrough",
    "3pConnectFour", "blocker", "chickentictactoe", "connectFourSimultaneous", "dualConnect4",
    "doubletictactoe", "roshambo2", "gt_prisoner", "nim1", "sheepAndWolf", "pentagoSuicide",
    "atariGoVariant_7x7", "hanoi", "eightPuzzle", "gdl2/monty_hall", "gdl2/leduc_holdem",
)
SLOW = {"knightThrough", "reversi"}
# one player picks a or b three times; only a, a, a scores (100), anything else 0
PICKS = (REPO / "tests" / "data" / "picks.kif").read_text()
# nature flips a coin, then p guesses it: p's values must not bias nature's flip
COIN_GUESS = """
(role random) (role p)
(init (flip))
(<= (legal random (coin h)) (true (flip))) (<= (legal random (coin t)) (true (flip)))
(<= (legal p noop) (true (flip)))
(<= (legal p (guess h)) (true (shown ?c))) (<= (legal p (guess t)) (true (shown ?c)))
(<= (legal random noop) (true (shown ?c)))
(<= (next (shown ?c)) (does random (coin ?c)))
(<= (next (said ?c ?g)) (true (shown ?c)) (does p (guess ?g)))
(<= terminal (true (said ?c ?g)))
(<= (goal p 100) (true (said h ?g))) (<= (goal p 0) (true (said t ?g)))
(<= (goal random 0) terminal)
"""


def game_path(name: str):
    if "/" in name:
        return GAMES / f"{name}.kif"
    return shared_path("gdl-corpus", "repository", f"{name}.kif")


def game(name: str):
    machine = load_machine(game_path(name), engine="compiled")
    return machine, playout_net_of(batch_machine_of(machine))


def reached(machine, seed: int, playouts: int, steps: int) -> tuple[list, list]:
    """States of seeded random playouts (terminal ones too) and a random joint move
    at each (None at a terminal state)."""
    rng = random.Random(seed)
    states, joints = [], []
    for _ in range(playouts):
        state = machine.initial_state()
        for _ in range(steps):
            if machine.is_terminal(state):
                break
            joint = [rng.choice(legal) for legal in machine.legal_joint_moves(state)]
            states.append(state)
            joints.append(joint)
            state = machine.next_state(state, joint)
        states.append(state)
        joints.append(None if machine.is_terminal(state) else
                      [rng.choice(legal) for legal in machine.legal_joint_moves(state)])
    return states, joints


def column(move: int) -> int:
    return move.bit_length() - 1


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n
                                  for n in TRANSITION_GAMES])
def test_transitions_equal_the_per_state_engine(name: str) -> None:
    machine, net = game(name)
    states, joints = reached(machine, seed=7, playouts=12, steps=60)
    roles = len(machine.roles)
    joint_columns = np.array([[column(m) for m in joint] if joint else [-1] * roles
                              for joint in joints], dtype=np.int64)
    out = net.step(pack_ints(states, net.n_words), joint_columns)
    assert out.terminal.sum() >= 1 and (~out.terminal).sum() >= len(states) // 2
    owner = net.batch.move_role
    for i, (state, joint) in enumerate(zip(states, joints, strict=True)):
        assert bool(out.terminal[i]) == machine.is_terminal(state)
        goal_mask = machine._goal_fn(state)   # the engine's goal atoms, in the same order
        assert [bool(goal_mask >> g & 1) for g in range(out.goal.shape[1])] == out.goal[i].tolist()
        legal = machine._legal_all(state)   # every role's legal moves, also at the end
        assert tuple(tuple(1 << int(c) for c in np.flatnonzero(out.legal[i] & (owner == r)))
                     for r in range(roles)) == legal
        if joint is not None:
            assert unpack_int(out.children[i]) == machine.next_state(state, joint)


def replay(machine, start: int, moves: np.ndarray) -> tuple[int, bool]:
    """The state after ``moves`` (a joint move of columns a step), each checked
    legal and played from a non-terminal state; and whether it is terminal."""
    state = start
    for joint in moves:
        assert not machine.is_terminal(state)
        legal = machine.legal_joint_moves(state)
        assert all(1 << int(m) in legal[r] for r, m in enumerate(joint))
        state = machine.next_state(state, [1 << int(m) for m in joint])
    return state, machine.is_terminal(state)


@pytest.mark.parametrize("name", ["ticTacToe", "connectFour", "breakthroughSuicideSmall",
                                  "blocker", "3pConnectFour", "gdl2/monty_hall"])
@pytest.mark.parametrize("limit", [10_000, 6])
def test_playouts_replay_as_legal_lines_and_score_their_end(name: str, limit: int) -> None:
    machine, net = game(name)
    states, _ = reached(machine, seed=3, playouts=4, steps=12)
    starts = ([s for s in states if not machine.is_terminal(s)] * 120)[:120]   # two words
    chance = [r for r, role in enumerate(machine.roles) if role == "random"]
    result = net.play(pack_ints(starts, net.n_words), limit=limit, seed=11, chance=chance,
                      record=True, trace_steps=200)
    assert result.work >= result.steps.max() and len(starts) > 64
    for k, start in enumerate(starts):
        steps = int(result.steps[k])
        moves = result.trace[k, :steps]
        assert (moves >= 0).all() and (result.trace[k, steps:] == -1).all()
        assert set(np.flatnonzero(result.played[k])) == set(moves.ravel().tolist())
        end, terminal = replay(machine, start, moves)
        reward = result.rewards[k].tolist()
        if terminal:
            assert reward == [g / 100 for g in machine.goals(end)]
        else:   # cut off at the limit: the goals there, neutral where not defined
            assert steps == limit
            mask = machine._goal_fn(end)
            held = [[g for g in range(len(net.batch.goal_role))
                     if mask >> g & 1 and net.batch.goal_role[g] == r]
                    for r in range(len(machine.roles))]
            assert reward == [net.batch.goal_value[h[0]] / 100 if len(h) == 1 else
                              NEUTRAL for h in held]


def exact_outcomes(machine, state, memo: dict) -> dict[tuple, Fraction]:
    """The distribution of goal vectors of uniform random play from ``state``."""
    if state in memo:
        return memo[state]
    if machine.is_terminal(state):
        memo[state] = {machine.goals(state): Fraction(1)}
        return memo[state]
    options = machine.legal_joint_moves(state)
    joints = [[]]
    for legal in options:
        joints = [j + [m] for j in joints for m in legal]
    out: dict[tuple, Fraction] = {}
    for joint in joints:
        for goals, p in exact_outcomes(machine, machine.next_state(state, joint), memo).items():
            out[goals] = out.get(goals, Fraction(0)) + p / len(joints)
    memo[state] = out
    return out


def test_uniform_tic_tac_toe_outcomes_have_the_exact_distribution() -> None:
    machine, net = game("ticTacToe")
    exact = exact_outcomes(machine, machine.initial_state(), {})
    assert sum(exact.values()) == 1 and len(exact) == 3
    k = 20_000
    result = net.play(pack_ints([machine.initial_state()] * k, net.n_words), limit=10_000,
                      seed=5)
    seen = {tuple(r) for r in (result.rewards * 100).round().astype(int).tolist()}
    assert seen == set(exact)
    for goals, p in exact.items():   # 4 standard deviations at most 0.014
        share = np.mean((np.round(result.rewards * 100) == goals).all(axis=1))
        assert abs(share - float(p)) < 0.014, (goals, share, float(p))
    assert 5 <= result.steps.min() and result.steps.max() == 9


def test_the_same_seed_gives_the_same_playouts() -> None:
    machine, net = game("connectFour")
    packed = pack_ints([machine.initial_state()] * 150, net.n_words)
    values = np.linspace(0.0, 1.0, net.n_moves)
    for mode in (0, 1, 2):
        runs = [net.play(packed, limit=10_000, seed=seed, mode=mode, epsilon=0.4,
                         temperature=0.1, values=values, record=True, trace_steps=50)
                for seed in (21, 21, 22)]
        same, other = runs[:2], runs[2]
        for field in ("rewards", "played", "steps", "trace"):
            assert np.array_equal(getattr(same[0], field), getattr(same[1], field))
        assert not np.array_equal(same[0].trace, other.trace)


def test_mast_and_gibbs_bias_the_moves_but_not_nature() -> None:
    machine, net = game_text(PICKS)
    a, b = (column(machine.parse_move(m, 0)) for m in "ab")
    values = np.zeros(net.n_moves)
    values[a], values[b] = 1.0, 0.0
    packed = pack_ints([machine.initial_state()] * 4000, net.n_words)

    def wins(**policy) -> float:
        return float(net.play(packed, limit=100, seed=9, values=values, **policy).rewards.mean())

    # uniform: a three times in 1/8 of the playouts; epsilon-greedy (0.4) plays a
    # with 0.6 + 0.4 / 2 = 0.8 a step (0.512); Gibbs at 0.1: e^10 : 1 (all but always)
    assert abs(wins(mode=0) - 0.125) < 0.025
    assert abs(wins(mode=1, epsilon=0.4) - 0.512) < 0.035
    assert wins(mode=2, temperature=0.1) > 0.995
    # ties at random: equal values play like uniform
    values[b] = 1.0
    assert abs(wins(mode=1, epsilon=0.0) - 0.125) < 0.025
    # a tiny temperature underflows every weight but the best's: still legal draws
    values[a], values[b] = 0.0, 1.0
    assert wins(mode=2, temperature=1e-6) == 0.0
    # nature's coin stays fair whatever the values say
    coin, coin_net = game_text(COIN_GUESS)
    heads = column(coin.parse_move("(coin h)", 0))
    values = np.zeros(coin_net.n_moves)
    values[heads] = 1.0
    start = pack_ints([coin.initial_state()] * 4000, coin_net.n_words)
    for mode in (1, 2):
        result = coin_net.play(start, limit=100, seed=4, chance=[0], mode=mode, epsilon=0.0,
                               temperature=0.1, values=values)
        assert abs(result.rewards[:, 1].mean() - 0.5) < 0.03


def game_text(text: str):
    machine = load_machine(text, engine="compiled")
    return machine, playout_net_of(batch_machine_of(machine))


@pytest.fixture
def compiled_kernels(monkeypatch):
    """The compiled kernels in, for every batch size."""
    kernels = gdl.reasoning.kernels
    if kernels.compiled(kernels.MIN_ITEMS) is None:
        pytest.skip("the compiled kernels do not load")
    return kernels


def test_batch_playouts_run_on_the_kernels_at_every_size(compiled_kernels, monkeypatch) -> None:
    machine, _ = game("ticTacToe")
    policy = PlayoutPolicy(mast=True, temperature=0.1, record=True)
    playouts = make_playouts(machine, policy, (), random.Random(1), batched=True)
    assert isinstance(playouts, BatchPlayouts) and playouts.net is not None
    calls = []
    play = type(playouts.net).play
    monkeypatch.setattr(type(playouts.net), "play",
                        lambda self, *a, **k: calls.append(len(a[0])) or play(self, *a, **k))
    start = machine.initial_state()
    for k in (1, 5, 40, 300):
        outcomes = playouts.run([start] * k, None)
        assert len(outcomes) == k
        for reward, played in outcomes:
            assert sorted(reward) in ([0.0, 1.0], [0.5, 0.5])
            assert 5 <= len(played) <= 11 and {r for r, _ in played} == {0, 1}
    assert calls == [1, 5, 40, 300]
    assert playouts.mast.learned == 346 and playouts.mast.counts.sum() > 0
    # decisive moves stay on the numpy path; without numba there is no net
    decisive = make_playouts(machine, PlayoutPolicy(decisive=True), (), random.Random(1), True)
    assert len(decisive.run([start] * 40, None)) == 40 and calls == [1, 5, 40, 300]
    monkeypatch.setattr(compiled_kernels.KERNELS, "enabled", False)
    other, _ = game("connectFour")
    assert make_playouts(other, policy, (), random.Random(1), batched=True).net is None


def test_the_agents_compiled_playouts_follow_its_seed(compiled_kernels) -> None:
    machine, _ = game("connectFour")
    policy = PlayoutPolicy(mast=True, epsilon=0.4, record=True)
    start = [machine.initial_state()] * 100

    def outcomes(seed: int) -> list:
        playouts = make_playouts(machine, policy, (), random.Random(seed), batched=True)
        return [playouts.run(start, None) for _ in range(3)]   # (MAST learns in between)

    assert outcomes(1) == outcomes(1) != outcomes(2)
