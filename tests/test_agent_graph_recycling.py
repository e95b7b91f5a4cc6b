"""The graph search's node pool within a move (agent.search.graph, issue 29 item 2: "a
bounded node pool with recycling"): a full pool drops its least visited nodes and
goes on expanding, the graph stays consistent, proofs still come out exact, and a
pool sized by a wide root grows to the narrower nodes the game reaches."""

from __future__ import annotations

import time

import numpy as np
import pytest
from conftest import shared_path
from test_agent_graph import GRAPH, graph_kernels  # noqa: F401 (the kernels, autouse)
from test_agent_search import TICTACTOE, play

import agent.search.graph as graph_module
from agent.search.graph import GraphSearch
from agent.search.mcts import AgentConfig
from gdl.reasoning.machine import load_machine
from solvers.search import solve_exact


def _check_links(search: GraphSearch, machine, nodes: range) -> int:
    """Every known child of ``nodes`` holds the state its joint move leads to, and the
    state table finds every node; the children checked."""
    g, checked = search.graph, 0
    roles = len(machine.roles)
    for node in nodes:
        assert search.node_of(search.state_of(node)) == node
        if g.terminal[node]:
            continue
        sizes = [int(s) for s in g.size[node]]
        moves = [search._moves(node, r) for r in range(roles)]
        for joint, child in enumerate(search._child_nodes(node).tolist()):
            if child < 0:
                continue
            index = np.unravel_index(joint, sizes)
            chosen = [moves[r][int(index[r])] for r in range(roles)]
            assert machine.next_state(search.state_of(node), chosen) == search.state_of(child)
            checked += 1
    return checked


def test_a_full_pool_recycles_its_least_visited_nodes_within_a_move() -> None:
    machine = load_machine(shared_path("gdl-corpus", "repository", "connectFour.kif"),
                           engine="compiled")
    search = GraphSearch(machine, AgentConfig(enhancements=GRAPH, graph_nodes=2_000, seed=4))
    state = machine.initial_state()
    result = search.search(state, playouts=40_000)
    g, root = search.graph, search.node_of(state)
    # one move of 40,000 playouts filled the 2,000 nodes again and again
    assert result.recycled >= 5 and g.nodes <= 2_000 and result.playouts == 40_000
    # what was kept is consistent: the root's visits are its moves' visits, its
    # rewards their totals, every kept child is the state its move leads to
    visits, totals = search.slots(root, 0)
    assert visits.sum() == g.count[root] == result.playouts
    assert totals.sum() == pytest.approx(g.rsum[root, 0])
    assert _check_links(search, machine, range(min(g.nodes, 300))) > 200
    # and the search went on expanding below the root's best move after the pool filled
    best = search._child_nodes(root)[int(np.argmax(visits))]
    assert g.count[best] > 0.3 * result.playouts


def test_proofs_need_not_fit_in_the_pool(tictactoe) -> None:
    # x holds 1 1, o 1 2, x to move: a win (a fork by 2 2 or 3 1 or 2 1); the third
    # seed's proof grows 252 nodes in a pool that has room; in 160 it recycles and
    # still proves the exact value (a full pool without recycling never would)
    state = play(tictactoe, ["(mark 1 1)", "(mark 1 2)"])
    exact = solve_exact(tictactoe, state, node_budget=100_000).exact.value
    recycled = 0
    for seed in (1, 2, 3):
        search = GraphSearch(tictactoe, AgentConfig(enhancements=GRAPH, graph_nodes=160,
                                                    seed=seed))
        result = search.search(state, playouts=50_000)
        assert result.proven and list(result.value) == list(exact) == [100, 0]
        recycled += result.recycled
        g = search.graph
        for node in np.flatnonzero(g.proven[:g.nodes]):   # every proof kept is exact
            kept = solve_exact(tictactoe, search.state_of(int(node)), node_budget=100_000)
            assert list(g.value[node] * 100) == list(kept.exact.value)
    assert recycled >= 1


@pytest.fixture(scope="module")
def tictactoe():
    return load_machine(TICTACTOE, engine="compiled")


def test_a_pool_sized_by_a_wide_root_grows_to_the_nodes_the_game_reaches(monkeypatch) -> None:
    # nineBoardTicTacToe: 81 first moves, at most 9 after. With 3 MB for the pool the
    # root's width allows some 1,400 nodes; the mean width of the nodes the first
    # move's search made allows more, so the pool grows between moves, and within a
    # move it recycles rather than grow its arrays past the bytes allowed
    monkeypatch.setattr(graph_module, "GRAPH_BYTES", 3 << 20)
    machine = load_machine(shared_path("gdl-corpus", "repository", "nineBoardTicTacToe.kif"),
                           engine="compiled")
    search = GraphSearch(machine, AgentConfig(enhancements=GRAPH, seed=2))
    first = search.graph.capacity
    assert first < 2_000
    state, capacities, recycled = machine.initial_state(), [], 0
    for _ in range(6):
        result = search.search(state, playouts=6_000)
        recycled += result.recycled
        capacities.append(search.graph.capacity)
        assert search.graph.nodes <= search.graph.capacity
        assert search.graph.pool_bytes() <= 3 << 20
        state = machine.next_state(state, [result.best_move(r) for r in range(2)])
    assert max(capacities) > 2 * first and recycled >= 1
    g = search.graph
    assert _check_links(search, machine, range(min(g.nodes, 200))) > 100


def test_a_doubling_that_could_pass_the_deadline_waits_for_the_next_move() -> None:
    # the slot and child pools double as a move's nodes fill them; a doubling of
    # breakthrough's 8 M slots took 0.64 s, and made moves late at 5 s clocks
    machine = load_machine(shared_path("gdl-corpus", "repository", "connectFour.kif"),
                           engine="compiled")
    search = GraphSearch(machine, AgentConfig(enhancements=GRAPH, seed=5))
    g, state = search.graph, machine.initial_state()
    slots = len(g.slot_move)
    search._grow_rate = 1.0   # as if a doubling took a second a byte: never in time
    result = search.search(state, deadline=time.monotonic() + 30.0)
    # it stopped before the doubling, long before the deadline, the pools as they were
    assert result.elapsed < 20.0 and len(g.slot_move) == slots
    assert g.meta[1] + search.round_size * search._widest[0] > slots
    search._grow_rate = 4e-9
    search.search(state, playouts=result.playouts + 20_000)   # the next move grows
    assert len(g.slot_move) > slots and search._grow_rate != 4e-9
    assert _check_links(search, machine, range(200)) > 150
