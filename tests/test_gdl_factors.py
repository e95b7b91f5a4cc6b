"""Factors of a grounded game (gdl/reasoning/factors.py) and the search of one factor's
game (the ``factor`` switch: agent/search/graph.py, agent/brains/gdl.py).

1. The analysis: connectFourSimultaneous splits into its two boards, each with its
   cells, its control facts and the drops onto it, as Sancho splits it (its game
   characteristics: ``num_factors`` 2, the cells of each board); chinook into two as
   well (Sancho: 2); games that do not split give one factor.
2. One factor's transitions (the frozen playout network's steps, and the graph's
   children): the factor's facts move as in the whole game, the others stand still.
3. A graph search of one board of connectFourSimultaneous finds a win on it, and the
   agent searches the factor that holds its legal moves.
"""

from __future__ import annotations

import random
import time

import numpy as np
import pytest
from test_gdl_playout_kernels import game, game_path, reached

import gdl.reasoning.kernels
from agent.brains.gdl import GdlBrain
from agent.brains.options import BrainOptions, GameSpec
from agent.search.graph import KERNELS, GraphSearch
from agent.search.mcts import AgentConfig, parse_enhancements
from gdl.reasoning.batch_machine import pack_ints, unpack_int
from gdl.reasoning.factors import factor_summary, factors, moving_facts

pytestmark = pytest.mark.skipif(not gdl.reasoning.kernels.KERNELS.enabled,
                                reason="numba is not installed (or GGP_NUMBA=0)")


def board_of(fact: tuple) -> str:
    """connectFourSimultaneous: the board of (cell x y board player) or (control role board)."""
    return fact[3] if fact[0] == "cell" else fact[2]


def test_connect_four_simultaneous_splits_into_its_two_boards() -> None:
    machine, net = game("connectFourSimultaneous")
    found = factors(net.batch)
    assert len(found) == 2
    facts, moves = machine._facts, list(machine._move_atoms)
    boards = set()
    for factor in found:
        (board,) = {board_of(facts[i]) for i in factor.facts}
        boards.add(board)
        assert set(factor.facts) == {i for i, f in enumerate(facts) if board_of(f) == board}
        # both roles' drops onto the board: (does role (drop x board))
        assert set(factor.moves) == {i for i, m in enumerate(moves) if m[2][2] == board}
        assert len(factor.facts) == 2 * 48 + 2 and len(factor.moves) == 16
    assert boards == {"1", "2"}
    assert factor_summary(net.batch) == {
        "factors": 2, "factor_sizes": [{"facts": 98, "moves": [8, 8]}] * 2}


@pytest.mark.parametrize("name, count", [("chinook", 2), ("dualConnect4", 2),
                                         ("connectFour", 1), ("breakthrough", 1),
                                         ("knightThrough", 1)])
def test_games_split_where_their_parts_never_meet(name: str, count: int) -> None:
    _, net = game(name)
    found = factors(net.batch)
    assert len(found) == count
    # a partition: no fact or move in two factors
    assert sum(len(f.facts) for f in found) == len({i for f in found for i in f.facts})
    assert sum(len(f.moves) for f in found) == len({i for f in found for i in f.moves})
    if count == 1:
        assert found[0].facts == tuple(range(net.batch.n_facts))


def test_one_factors_steps_move_its_facts_and_leave_the_others() -> None:
    machine, net = game("connectFourSimultaneous")
    factor = factors(net.batch)[0]
    keep = moving_facts(net.batch, factor)
    # the other board's cells stand still; whose turn it is there goes on
    facts = machine._facts
    assert {facts[i][0] for i in np.flatnonzero(~keep)} == {"cell"}
    assert keep.sum() == 98 + 2
    frozen = net.frozen(keep)
    states, joints = reached(machine, seed=7, playouts=6, steps=30)
    pairs = [(s, j) for s, j in zip(states, joints, strict=True) if j is not None]
    packed = pack_ints([s for s, _ in pairs], net.n_words)
    joint = np.array([[m.bit_length() - 1 for m in j] for _, j in pairs], dtype=np.int64)
    whole, alone = net.step(packed, joint), frozen.step(packed, joint)
    mask = sum(1 << int(i) for i in np.flatnonzero(keep))
    for t, (state, _) in enumerate(pairs):
        after = unpack_int(whole.children[t])
        kept = unpack_int(alone.children[t])
        assert kept & mask == after & mask            # the factor moves as in the game
        assert kept & ~mask == state & ~mask          # the other board stands still
        assert (whole.legal[t] == alone.legal[t]).all()
    assert len(pairs) > 80


@pytest.fixture(scope="module")
def graph_kernels():
    if KERNELS.load() is None:
        pytest.skip("the graph's kernels do not load")


def test_a_factors_search_finds_the_win_on_its_board(graph_kernels) -> None:
    machine, net = game("connectFourSimultaneous")
    drop = {(r, m[2][1], m[2][2]): 1 << i for i, m in enumerate(machine._move_atoms)
            for r in (0, 1) if m[1] == machine.roles[r]}

    def play(moves: list[tuple[str, str]]) -> int:
        state = machine.initial_state()
        for red, black in moves:   # (column, board) pairs: red's drop and black's
            state = machine.next_state(state, [drop[(0, *red)], drop[(1, *black)]])
        return state

    # red drops on board 1 at the odd steps, black at the even ones: red holds columns
    # 1-3 of its bottom row, black's drops there and on board 2 stand apart; step 7
    # is red's on board 1, where (drop 4 1) wins
    state = play([(("1", "1"), ("1", "2")), (("8", "2"), ("8", "1")),
                  (("2", "1"), ("3", "2")), (("8", "2"), ("7", "1")),
                  (("3", "1"), ("5", "2")), (("6", "2"), ("8", "1"))])
    assert not machine.is_terminal(state)
    board = next(f for f in factors(net.batch) if drop[(0, "4", "1")].bit_length() - 1
                 in f.moves)
    config = AgentConfig(enhancements=parse_enhancements("default"), seed=2)
    search = GraphSearch(machine, config, role=0, factor=board)
    result = search.search(state, playouts=3_000)
    assert result.best_move(0) == drop[(0, "4", "1")]
    assert result.value[0] == pytest.approx(100.0)
    # from the start, the board's game goes on, the roles taking turns on it (with
    # the other board's turns frozen too, after one step nobody could move there:
    # every line would end at once, worth 0, as the first try of this switch did)
    search = GraphSearch(machine, config, role=0, factor=board)
    result = search.search(machine.initial_state(), playouts=5_000)
    assert not result.proven and 30 < result.value[0] < 80
    g = search.graph
    deep = [n for n in range(g.nodes) if not g.terminal[n] and g.count[n] >= 5]
    assert len(deep) > 50
    # two steps on, red's turn on board 1 again: board 2's cells changed, yet the
    # board's game finds its root in the graph (kept as at its first search)
    state = play([(("4", "1"), ("4", "2")), (("5", "2"), ("5", "1"))])
    assert search.node_of(state) < 0 <= search.node_of(search.in_factor(state))
    reused = g.count[search.node_of(search.in_factor(state))]
    assert reused > 20
    assert search.search(state, playouts=100).playouts == 100


def test_the_agent_searches_the_factor_holding_its_moves(graph_kernels) -> None:
    spec = GameSpec("kif", game_path("connectFourSimultaneous").read_text(), "cfs")
    options = BrainOptions(enhancements=parse_enhancements("default,factor"), seed=1)
    brain = GdlBrain(spec, "red", options)
    info = brain.metagame(time.monotonic() + 3)
    assert info["factors"] == 2 and len(brain.factored) == 2
    # the factors share the pool (the whole game's search keeps its own bound)
    assert [s.graph.capacity for s in brain.factored] == [options.graph_nodes // 2] * 2
    rng = random.Random(3)
    for _ in range(4):
        searcher = brain._searcher()
        ours = brain.machine.legal_moves(brain.state, brain.role)
        assert searcher in brain.factored
        assert all(searcher.factor_moves[m.bit_length() - 1] for m in ours)
        move, played = brain.select(time.monotonic() + 0.5)
        assert played["method"] == "mcts" and played["playouts"] > 0
        other = rng.choice(brain.machine.legal_moves(brain.state, 1))
        brain.advance([move, brain.machine.move_to_kif(other)])
