"""``grave`` in the graph search (agent/search/graph_kernels.py ``_amaf_backup``,
``_amaf_slots``, ``_ucb``; issue 29 item 2, "RAVE/GRAVE where it helps"): AMAF
statistics per move slot, GRAVE's blend at the deepest well-visited node.

1. A backup counts, at each node of the path, the moves its choosers played there or
   later (in the tree or the playout), by the reward of the role that plays them.
2. Selection blends a move's mean with its AMAF mean at the reference node (the
   deepest of the descent with ``grave_ref`` visits where the role chooses), found
   by the move, not the slot; unvisited moves go first by their AMAF means.
3. In a real search every slot's AMAF visits cover its own visits, through a
   compaction of the pool, and a won tic-tac-toe position is proven.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from graph_kernel_args import backup_grave, select_grave
from test_agent_search import TICTACTOE, play

from agent.search.graph import KERNELS, GraphSearch
from agent.search.mcts import AgentConfig, parse_enhancements
from gdl.reasoning.machine import load_machine

GRAVE = parse_enhancements("default,grave,no-material")


@pytest.fixture(scope="module", autouse=True)
def graph_kernels():
    if KERNELS.load() is None:
        pytest.skip("numba is not available")


def test_a_backup_counts_the_moves_played_at_a_node_or_after_it() -> None:
    # node 0: role 0 chooses move 0, 1 or 2; each leads to node 1, where role 1
    # chooses move 3 or 4. The descent plays 0 then 4; its playout plays 2 (role 0)
    # and 5 (role 1, a move no node here has). Role 0 wins.
    kern = KERNELS.loaded
    size = np.array([[3, 1], [1, 2]], dtype=np.int32)
    slot_move = np.array([0, 1, 2, 6, 7, 3, 4], dtype=np.int32)   # 6, 7: the noops
    slot_base, child_base = np.array([0, 4], dtype=np.int64), np.array([0, 3], dtype=np.int64)
    rave = np.zeros((7, 2), dtype=np.float32)
    played = np.zeros((1, 8), dtype=np.bool_)
    played[0, [2, 5]] = True
    kern.backup(1, np.array([[1.0, 0.0]]), np.zeros(1, dtype=np.bool_), False, False, -1,
                0.0, np.zeros(2), np.zeros(2, dtype=np.bool_), np.ones(2),
                np.array([0, 0, 0, 1, 1, 1, 0, 1], dtype=np.int64),
                np.array([[0, 1]], dtype=np.int64), np.array([[0, 1]], dtype=np.int64),
                np.zeros((1, 2, 2)), np.array([2], dtype=np.int64), np.zeros(2, dtype=np.bool_),
                np.zeros(2, dtype=np.bool_), np.zeros((2, 2)), np.zeros((2, 2)), size,
                slot_base, slot_move, np.zeros(7), child_base, np.full(5, -1, dtype=np.int32),
                np.zeros(0, dtype=np.float32), np.zeros(8), np.zeros(8),
                np.full(8, -1, dtype=np.int64), 0, *backup_grave(8, rave, played))
    # node 0: move 0 (its own) and 2 (the playout's) by role 0's reward 1; move 1 never
    assert rave[:3].tolist() == [[1.0, 1.0], [0.0, 0.0], [1.0, 1.0]]
    # node 1: move 4 (its own) by role 1's reward 0; move 3 never; the noops never
    assert rave[3:].tolist() == [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [1.0, 0.0]]


def _line() -> dict[str, np.ndarray]:
    """Node 0 (100 visits): role 0 chooses move 0 or 1, both to node 1 (10 visits),
    where role 1 chooses move 2 or 3, both to node 2 (10 visits), where role 0
    chooses move 1 or 0 (its slots in the other order) to terminals 3 and 4. Every
    visited move has the mean 0.5; the AMAF means at node 0 favour move 0, those at
    node 2 favour move 1."""
    size = np.array([[2, 1], [1, 2], [2, 1], [0, 0], [0, 0]], dtype=np.int32)
    slot_move = np.array([0, 1, 8, 9, 2, 3, 1, 0, 8], dtype=np.int32)
    rave = np.zeros((9, 2), dtype=np.float32)
    rave[[0, 1]] = [[40, 36], [40, 4]]     # node 0: move 0 at 0.9, move 1 at 0.1
    rave[[6, 7]] = [[5, 4], [5, 1]]        # node 2: move 1 at 0.8, move 0 at 0.2
    return dict(size=size, slot_move=slot_move, rave=rave,
                slot_base=np.array([0, 3, 6, 9, 9], dtype=np.int64),
                child_base=np.array([0, 2, 4, 6, 6], dtype=np.int64),
                child=np.array([1, 1, 2, 2, 3, 4], dtype=np.int32),
                terminal=np.array([False, False, False, True, True]),
                count=np.array([100.0, 10.0, 10.0, 0.0, 0.0]),
                visits=np.full(9, 4.0), totals=np.full(9, 2.0))


def _descend(g: dict[str, np.ndarray], grave_ref: float) -> list[int]:
    """The joint moves of one descent from node 0 (no exploration term)."""
    kern = KERNELS.loaded
    path_node, path_joint = np.zeros((1, 8), dtype=np.int64), np.zeros((1, 8), dtype=np.int64)
    path_len = np.zeros(1, dtype=np.int64)
    kern.select(0, 1, 0.0, 0.0, False, -1, 0.0, np.zeros(5), np.array([7], dtype=np.uint64),
                np.zeros(2, dtype=np.bool_), g["terminal"], np.zeros(5, dtype=np.bool_),
                g["count"], np.zeros((5, 2)), g["size"], g["slot_base"], g["visits"],
                g["totals"], g["child_base"], g["child"], np.zeros(0, dtype=np.int32),
                np.zeros(0, dtype=np.float32), path_node, path_joint, np.zeros((1, 8, 2)),
                path_len, np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64),
                *select_grave(10, g["slot_move"], g["rave"], grave_ref))
    return path_joint[0, :path_len[0]].tolist()


def test_selection_blends_in_the_amaf_means_of_the_deepest_well_visited_node() -> None:
    g = _line()
    # node 0 (100 visits) is role 0's reference at node 2: its move 0 (slot 1 there)
    assert _descend(g, 50.0)[::2] == [0, 1]
    # with no node visited enough, each node's own: node 2's move 1 (slot 0)
    assert _descend(g, math.inf)[::2] == [0, 0]
    # off (no AMAF statistics): equal means, ties at random; both slots get taken
    g["rave"] = np.zeros((0, 2), dtype=np.float32)
    assert {_descend(g, 50.0)[2] for _ in range(40)} == {0, 1}


def test_unvisited_moves_go_first_by_their_amaf_means() -> None:
    g = _line()
    g["visits"][[6, 7]] = 0.0   # node 2's two moves unvisited
    g["totals"][[6, 7]] = 0.0
    g["visits"][0], g["totals"][0] = 0.0, 0.0   # node 0's move 0 too: it goes first
    assert _descend(g, math.inf)[::2] == [0, 0]   # then node 2's move 1, by its own AMAF
    assert _descend(g, 50.0)[::2] == [0, 1]       # or node 0's (its move 0: slot 1)


@pytest.fixture(scope="module")
def tictactoe():
    return load_machine(TICTACTOE, engine="compiled")


def _covered(search: GraphSearch, slots: int) -> None:
    """Every chooser's slot has at least its own visits in AMAF visits (each descent
    through it counts its own move), and AMAF reward totals within those visits; over
    ``slots`` slots checked."""
    g = search.graph
    checked = 0
    for node in range(g.nodes):
        if g.terminal[node]:
            continue
        first = g.slot_base[node]
        for r in range(2):
            n = g.size[node, r]
            if n > 1:
                s = slice(first, first + n)
                assert (g.slot_rave[s, 0] >= g.slot_visits[s] - 1e-6).all()
                assert (g.slot_rave[s, 1] <= g.slot_rave[s, 0] + 1e-6).all()
                checked += n
            first += n
    assert checked > slots


def test_a_real_search_keeps_amaf_statistics_through_compaction(tictactoe) -> None:
    search = GraphSearch(tictactoe, AgentConfig(enhancements=GRAVE, seed=4))
    assert search.grave and len(search.graph.slot_rave) == len(search.graph.slot_move)
    state = tictactoe.initial_state()
    search.search(state, playouts=6_000)
    _covered(search, 1_000)
    # two plies on, from a state the graph has: over half full or not, what is kept
    # keeps its statistics (the pool is compacted when over half full)
    search.graph.capacity = search.graph.nodes + 1   # forces the compaction
    state = play(tictactoe, ["(mark 2 2)", "(mark 1 1)"])
    before = search.graph.nodes
    search.search(state, playouts=2_000)
    assert search.graph.nodes < before + 2_000   # compacted: the other lines dropped
    _covered(search, 300)


def test_a_won_position_is_proven_with_grave(tictactoe) -> None:
    # x holds 1 1 and 2 2, o 1 2 and 3 3, x to move: a fork wins (value 100)
    state = play(tictactoe, ["(mark 1 1)", "(mark 1 2)", "(mark 2 2)", "(mark 3 3)"])
    search = GraphSearch(tictactoe, AgentConfig(enhancements=GRAVE, seed=2))
    result = search.search(state, playouts=20_000)
    assert result.proven and list(result.value) == [100, 0]
