"""``material`` (agent/search/material.py, the seed in agent/search/graph_kernels.py):
Sancho's piece heuristic.

1. The candidate piece sets are a board function's facts with its piece argument fixed:
   knightThrough's ``cell(?, ?, white)`` and ``cell(?, ?, black)``, 64 facts each.
2. Random games on the start clock find the material of the race games (each role's
   own pieces: their final count correlates with its goal) and none in connectFour or
   reversi, where discs are placed or flipped on every move.
3. The seed of a new edge is Sancho's: a capture under a reference node with 500 visits
   at a mean of 0.6 gets 6 visits at the value its formula gives; an edge that keeps
   the balance, and a node where both roles choose, get nothing.
4. ``explore``: UCB1's constant is Sancho's exploration bias from the random games'
   lengths, 0.7 of it with material: the race games about 0.3-0.4, connectFour 0.73.
5. The agent's start clock reports what it found and gives it to the graph search.
6. Both are default; a constant given to ``ggp agent --exploration`` turns ``explore`` off.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from test_gdl_playout_kernels import game, game_path

from agent.brains.gdl import GdlBrain
from agent.brains.options import BrainOptions, GameSpec
from agent.search import material
from agent.search.graph import KERNELS, GraphSearch
from agent.search.mcts import AgentConfig, parse_enhancements
from gdl.reasoning.batch_machine import pack_ints


@pytest.fixture(scope="module", autouse=True)
def graph_kernels():
    if KERNELS.load() is None:
        pytest.skip("numba is not available")


def sampled(name: str) -> tuple[material.Sample, object, object]:
    """1024 random games of ``name`` from its initial state (seeded: a deadline far
    off), the machine and its batched machine."""
    machine, _ = game(name)
    search = GraphSearch(machine, AgentConfig(enhancements=parse_enhancements("default")))
    found = material.sample(
        search.bm, machine.facts,
        lambda batch, rows: search.playouts._goals(batch, rows, terminal=True),
        pack_ints([machine.initial_state()], search.bm.n_words)[0],
        time.monotonic() + 120, np.random.default_rng(7))
    assert found is not None and len(found.lengths) >= material.SAMPLE_GAMES
    return found, machine, search.bm


def learnt(name: str) -> tuple[material.Material | None, str, object]:
    found, machine, bm = sampled(name)
    return *material.learn(found, bm), machine


def facts_of(mask: np.ndarray, machine) -> set:
    return {machine.facts[i] for i in range(len(machine.facts))
            if int(mask[i // 64]) >> (i % 64) & 1}


def test_piece_sets_are_a_board_functions_facts_with_the_piece_argument_fixed() -> None:
    machine, _ = game("knightThrough")
    sets = dict(material.piece_sets(machine.facts))
    assert sorted(sets) == ["cell(?, ?, black)", "cell(?, ?, white)"]
    for colour in ("black", "white"):
        chosen = [machine.facts[i] for i in sets[f"cell(?, ?, {colour})"]]
        assert len(chosen) == 64 and {f[3] for f in chosen} == {colour}


@pytest.mark.parametrize("name, function", [("knightThrough", "cell"),
                                            ("breakthrough", "cellHolds")])
def test_the_race_games_material_is_each_roles_own_pieces(name: str, function: str) -> None:
    found, why, machine = learnt(name)
    assert found is not None, why
    assert why.startswith("on: ") and why.endswith(" games")
    for role, colour in enumerate(("white", "black")):
        assert found.names[role] == f"{function}(?, ?, {colour})"
        pieces = facts_of(found.masks[role], machine)
        assert len(pieces) == 64 and {f[3] for f in pieces} == {colour}
        assert found.correlation[role] >= material.MIN_CORRELATION
    # 16 pieces each at the start: the full weight
    assert found.weight(pack_ints([machine.initial_state()], len(found.masks[0]))[0], 0) == 6


@pytest.mark.parametrize("name", ["connectFour", "reversi"])
def test_placing_and_flipping_games_have_no_material(name: str) -> None:
    found, why, _ = learnt(name)
    assert found is None and why.startswith("off: no piece set correlates")


@pytest.mark.parametrize("name, low, high", [("knightThrough", 0.3, 0.5),
                                              ("breakthrough", 0.25, 0.4),
                                              ("connectFour", 0.6, 0.85)])
def test_explore_takes_sanchos_bias_from_the_random_games_lengths(
        name: str, low: float, high: float) -> None:
    found, _, bm = sampled(name)
    has_material = material.learn(found, bm)[0] is not None
    c, why = material.exploration(found, has_material)
    lengths = found.lengths.astype(float)
    mean, sd = lengths.mean(), lengths.std()
    middle = (lengths.max() + lengths.min()) / 2
    bias = min(1.2, max(0.5, 15 / (mean + (middle - mean) * sd / mean) + 0.4))
    assert c == pytest.approx(bias * (0.7 if has_material else 1.0) * math.sqrt(0.5))
    # the race games (long random games, material) explore about half as much
    assert low < c < high and why.startswith(f"c = {c:.2f}: random games of {mean:.1f} steps")


def _seed_one(child: int, sizes: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, int]:
    """The seed of the new edge to packed state ``child`` (role 0's pieces are bits 0-3,
    role 1's bits 4-7) by role 0's second move at a root of 4 pieces each, 500 visits
    and role 0's mean 0.6; the root's move slots (visits, totals) and the count seeded."""
    kern = KERNELS.loaded
    masks = np.array([[0x0F], [0xF0]], dtype=np.uint64)
    state = np.array([[0xFF], [child]], dtype=np.uint64)
    count, rsum = np.array([500.0, 0.0]), np.array([[300.0, 200.0], [0.0, 0.0]])
    size = np.array([list(sizes), [0, 0]], dtype=np.int32)
    slot_base = np.zeros(2, dtype=np.int64)
    visits, totals = np.ones(sum(sizes)), np.full(sum(sizes), 0.5)
    path_node, path_joint = np.zeros((1, 4), dtype=np.int64), np.zeros((1, 4), dtype=np.int64)
    path_joint[0, 0] = 1
    seeded = kern.seed(np.zeros(1, dtype=np.int64), state[1:], np.array([1]), masks, 6.0,
                       200.0, np.zeros(2, dtype=np.bool_), state, count, rsum, size, slot_base,
                       visits, totals, path_node, path_joint, np.ones(1, dtype=np.int64))
    return visits, totals, seeded


def test_a_capture_is_seeded_as_sancho_seeds_it() -> None:
    visits, totals, seeded = _seed_one(0x7F, (2, 1))   # role 1 lost a piece: 4 against 3
    mean = (0.6 * 10 + 0.5) / 11                        # 500 visits: trust 10
    h = 1 / (1 + math.exp(-7 / 4 * (1 / 7)))            # the balance went from 0 to 1/7
    value = mean + (1 - mean) * (h - 0.5) / 0.5
    assert seeded == 1 and visits.tolist() == [1, 7, 1]
    assert totals[1] == pytest.approx(0.5 + 6 * value) and totals[[0, 2]].tolist() == [0.5, 0.5]


def test_a_move_that_keeps_the_balance_or_a_simultaneous_node_gets_no_seed() -> None:
    assert _seed_one(0xFF, (2, 1))[2] == 0     # nothing captured
    assert _seed_one(0x7F, (2, 2))[2] == 0     # both roles choose there


def test_the_start_clock_finds_the_material_and_gives_it_to_the_search() -> None:
    options = BrainOptions(seed=1, presolve_nodes=0,
                           enhancements=parse_enhancements("default,material,explore"))
    text = game_path("knightThrough").read_text()
    brain = GdlBrain(GameSpec("gdl", text), "white", options, until=time.monotonic() + 60)
    info = brain.metagame(time.monotonic() + 8)
    assert info["material"].startswith("on: white: cell(?, ?, white)"), info
    assert isinstance(brain.search, GraphSearch) and brain.search.material is not None
    assert brain.search.material.names == ("cell(?, ?, white)", "cell(?, ?, black)")
    assert info["explore"].startswith(f"c = {brain.search.exploration:.2f}: random games")
    assert 0.3 < brain.search.exploration < 0.5


def test_both_are_default_and_an_exploration_given_turns_explore_off() -> None:
    from agent.cli import _parser, brain_options

    default = brain_options(_parser().parse_args(["--http", "9147"]))
    assert {"material", "explore"} <= set(default.enhancements)
    assert default.exploration == 0.7           # replaced on the start clock by explore's
    given = brain_options(_parser().parse_args(["--http", "9147", "--exploration", "0.3"]))
    assert "explore" not in given.enhancements and "material" in given.enhancements
    assert given.exploration == 0.3
