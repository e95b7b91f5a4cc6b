"""The search over a graph of states in arrays (agent.search.graph, issue 29 item 2):
transpositions share a node, proven values equal the exact ones (solve_exact), draws,
chance and simultaneous saddle points are proven, pending visits are taken back, and
the node pool stays within its bound through a long match."""

from __future__ import annotations

import numpy as np
import pytest
from test_agent_search import PENNIES, PICKS, TICTACTOE, play

from agent.search.graph import KERNELS, GraphSearch, make_search
from agent.search.mcts import AgentConfig, AgentSearch, parse_enhancements
from gdl.reasoning.machine import load_machine
from solvers.search import solve_exact

GRAPH = parse_enhancements("default,graph")

# Pennies where b's coin only matters on heads: (h, h) and (h, t) give a 100 and 0,
# (t, *) 50 each: a's t is a saddle point (value 50 / 50).
SADDLE = """
(role a) (role b) (init s)
(<= (legal a (play ?x)) (coin ?x)) (<= (legal b (play ?x)) (coin ?x))
(coin h) (coin t)
(<= (next (win a)) (does a (play h)) (does b (play h)))
(<= (next (win b)) (does a (play h)) (does b (play t)))
(<= (next over) (true s))
(<= terminal (true over))
(<= (goal a 100) (true (win a))) (<= (goal a 0) (true (win b)))
(<= (goal a 50) (not (true (win a))) (not (true (win b))))
(<= (goal b 0) (true (win a))) (<= (goal b 100) (true (win b)))
(<= (goal b 50) (not (true (win a))) (not (true (win b))))
"""

# p picks a (a sure 40) or b (a fair coin: 100 or 0); value 50 by b.
GAMBLE = """
(role p) (role random) (init start)
(<= (legal p a) (true start)) (<= (legal p b) (true start))
(<= (legal p noop) (true coin))
(<= (legal random noop) (true start))
(<= (legal random heads) (true coin)) (<= (legal random tails) (true coin))
(<= (next coin) (does p b))
(<= (next safe) (does p a))
(<= (next won) (does random heads))
(<= (next lost) (does random tails))
(<= terminal (true safe)) (<= terminal (true won)) (<= terminal (true lost))
(<= (goal p 40) (true safe)) (<= (goal p 100) (true won)) (<= (goal p 0) (true lost))
(<= (goal p 0) (not (true safe)) (not (true won)) (not (true lost)))
"""


@pytest.fixture(scope="module", autouse=True)
def graph_kernels():
    """The graph's compiled kernels (the agent's spare worker loads them while idle)."""
    if KERNELS.load() is None:
        pytest.skip("numba is not available")


@pytest.fixture(scope="module")
def tictactoe():
    return load_machine(TICTACTOE, engine="compiled")


def test_the_graph_is_chosen_where_it_applies(tictactoe, monkeypatch) -> None:
    assert isinstance(make_search(tictactoe, AgentConfig(enhancements=GRAPH)), GraphSearch)
    with monkeypatch.context() as patched:   # its kernels not loaded yet: the other search
        patched.setattr(KERNELS, "loaded", None)
        assert isinstance(make_search(tictactoe, AgentConfig(enhancements=GRAPH)), AgentSearch)
    assert isinstance(make_search(tictactoe, AgentConfig()), GraphSearch)   # the default
    grave = make_search(tictactoe, AgentConfig(enhancements=parse_enhancements("default,grave")))
    assert isinstance(grave, GraphSearch) and grave.grave   # the graph has GRAVE too
    for switches, policy in (("default,no-graph", "duct"), ("default,leaf", "duct"),
                             ("default", "rm")):
        search = make_search(tictactoe, AgentConfig(enhancements=parse_enhancements(switches),
                                                    simultaneous=policy))
        assert isinstance(search, AgentSearch)
    general = load_machine(TICTACTOE, engine="general")
    assert isinstance(make_search(general, AgentConfig(enhancements=GRAPH)), AgentSearch)


def test_proven_nodes_carry_their_exact_values(tictactoe) -> None:
    # x holds 1 1 and 2 2, o 1 2 and 3 3, x to move: a fork wins (value 100)
    state = play(tictactoe, ["(mark 1 1)", "(mark 1 2)", "(mark 2 2)", "(mark 3 3)"])
    search = GraphSearch(tictactoe, AgentConfig(enhancements=GRAPH, seed=2))
    result = search.search(state, playouts=20_000)
    assert result.proven and list(result.value) == [100, 0]
    g = search.graph
    proven = np.flatnonzero(g.proven[:g.nodes])
    assert len(proven) > 3
    table: dict = {}
    for node in proven:
        s = search.state_of(int(node))
        assert list(g.value[node] * 100) == list(
            solve_exact(tictactoe, s, node_budget=100_000, table=table).exact.value)
    assert tictactoe.move_to_kif(result.best_move(0)) in ("(mark 2 1)", "(mark 3 1)")


def test_a_transposed_state_is_one_node(tictactoe) -> None:
    search = GraphSearch(tictactoe, AgentConfig(enhancements=GRAPH, seed=3))
    search.search(tictactoe.initial_state(), playouts=5_000)
    one = play(tictactoe, ["(mark 1 1)", "(mark 1 2)", "(mark 2 2)"])
    other = play(tictactoe, ["(mark 2 2)", "(mark 1 2)", "(mark 1 1)"])
    assert one == other
    node = search.node_of(one)
    assert node >= 0 and search.state_of(node) == one
    # every node is a distinct state
    g = search.graph
    states = {search.state_of(n) for n in range(g.nodes)}
    assert len(states) == g.nodes


def test_a_one_player_game_and_chance_are_proven() -> None:
    picks = load_machine(PICKS, engine="compiled")
    result = GraphSearch(picks, AgentConfig(enhancements=GRAPH)).search(
        picks.initial_state(), playouts=2_000)
    assert result.proven and list(result.value) == [100]
    assert picks.move_to_kif(result.best_move(0)) == "a"
    gamble = load_machine(GAMBLE, engine="compiled")
    search = GraphSearch(gamble, AgentConfig(enhancements=GRAPH), chance_roles=(1,))
    result = search.search(gamble.initial_state(), playouts=2_000)
    assert result.proven and result.value[0] == pytest.approx(50.0)
    assert gamble.move_to_kif(result.best_move(0)) == "b"


def test_simultaneous_nodes_are_proven_by_their_matrix_games() -> None:
    saddle = load_machine(SADDLE, engine="compiled")
    result = GraphSearch(saddle, AgentConfig(enhancements=GRAPH)).search(
        saddle.initial_state(), playouts=500)
    assert result.proven and list(result.value) == pytest.approx([50, 50])
    assert saddle.move_to_kif(result.best_move(0)) == "(play t)"
    # matching pennies: a mixed equilibrium, value 50 / 50, both coins half and half
    pennies = load_machine(PENNIES, engine="compiled")
    result = GraphSearch(pennies, AgentConfig(enhancements=GRAPH, seed=1)).search(
        pennies.initial_state(), playouts=500)
    assert result.proven and list(result.value) == pytest.approx([50, 50])
    assert list(result.strategy[0]) == pytest.approx([0.5, 0.5])
    assert list(result.strategy[1]) == pytest.approx([0.5, 0.5])


def test_pending_visits_are_taken_back(tictactoe) -> None:
    search = GraphSearch(tictactoe, AgentConfig(enhancements=GRAPH, seed=4))
    state = tictactoe.initial_state()
    search.search(state, playouts=3_000)
    g, root = search.graph, search.node_of(state)
    visits, totals = search.slots(root, 0)
    assert visits.sum() == g.count[root]
    # x's move totals add up to the rewards backed up through the root
    assert totals.sum() == pytest.approx(g.rsum[root, 0])
    # a round cut by the deadline leaves nothing pending
    search.search(state, deadline=0.0)
    assert search.slots(root, 0)[0].sum() == g.count[root]


def test_the_node_pool_stays_within_its_bound_through_a_long_match() -> None:
    from conftest import shared_path

    machine = load_machine(shared_path("gdl-corpus", "repository", "connectFour.kif"),
                           engine="compiled")
    search = GraphSearch(machine, AgentConfig(enhancements=GRAPH, graph_nodes=2_000, seed=5))
    state, sizes, compacted = machine.initial_state(), [], 0
    while not machine.is_terminal(state):   # self-play: every move searched
        before = search.graph.nodes
        result = search.search(state, playouts=1_500)
        compacted += search.graph.nodes < before
        assert search.graph.nodes <= 2_000
        sizes.append((len(search.graph.slot_move), len(search.graph.child)))
        joint = [result.best_move(r) for r in range(len(machine.roles))]
        state = machine.next_state(state, joint)
    # the pool filled and was compacted again and again; the slot and child pools
    # grew at the start, then stayed: memory is flat over the match
    assert len(sizes) > 15 and compacted > 5 and len(set(sizes[len(sizes) // 2:])) == 1


def test_the_pool_is_sized_by_bytes_and_its_slot_and_child_pools_grow_apart() -> None:
    from conftest import shared_path

    from agent.search.graph import (
        CHILD_BYTES,
        GRAPH_BYTES,
        JOINT_ARRAYS,
        RAVE_BYTES,
        SLOT_ARRAYS,
        SLOT_BYTES,
        Graph,
    )

    # turn-based connectFour (8 slots, 7 joint moves at the root) keeps the million
    # nodes; connectFourSimultaneous (16 slots, 64 joint moves) gets fewer, so that
    # nodes as wide as its root stay under GRAPH_BYTES with the pools at twice their use
    narrow = Graph.capacity_for(1_000_000, 2, 2, 1, 8, 7)
    wide = Graph.capacity_for(1_000_000, 2, 2, 1, 16, 64)
    assert narrow == 1_000_000 and 500_000 < wide < 700_000
    assert wide * 2 * (20 * 16 + 4 * 64) <= GRAPH_BYTES
    machine = load_machine(shared_path("gdl-corpus", "repository",
                                       "connectFourSimultaneous.kif"), engine="compiled")
    search = GraphSearch(machine, AgentConfig(enhancements=GRAPH, seed=5))
    assert search.graph.capacity == Graph.capacity_for(
        1_000_000, 2, search.bm.n_words, search.bm.outer_words, 16, 64)
    search.search(machine.initial_state(), playouts=20_000)
    g = search.graph
    # a simultaneous node has 4x as many children as move slots: only the child
    # pool grew past its first size, the slot pool (20 bytes an entry) did not
    slots, children = g.meta[1:3]
    assert children > 3 * slots and len(g.child) > len(g.slot_move)
    assert slots <= len(g.slot_move) and children <= len(g.child)
    # the sizes capacity_for counts are those of the arrays the pool holds
    pools = ("kern", "meta", "table", "child", *SLOT_ARRAYS, *JOINT_ARRAYS)
    own = sum(a.nbytes for name, a in vars(g).items()
              if isinstance(a, np.ndarray) and name not in pools)
    assert own // g.capacity + 8 == Graph.node_bytes(2, search.bm.n_words, search.bm.outer_words)
    assert SLOT_BYTES == sum(getattr(g, name)[:1].nbytes for name in SLOT_ARRAYS)
    kept = Graph(search.kern, 16, 2, search.bm.n_words, search.bm.outer_words, rave=True)
    assert kept.slot_rave[:1].nbytes == RAVE_BYTES   # under "grave": AMAF visits, total
    assert CHILD_BYTES == g.child.itemsize


def _pennies_value(lead: int | None, seed: int) -> tuple[float, GraphSearch]:
    """a's mean reward at matching pennies' root after 2,000 unproven playouts (the
    solver off, so that selection alone decides), with ``serial`` led by ``lead``."""
    pennies = load_machine(PENNIES, engine="compiled")
    switches = "default,no-solver" + (",serial" if lead is not None else "")
    search = GraphSearch(pennies, AgentConfig(enhancements=parse_enhancements(switches),
                                              seed=seed), role=lead or 0)
    state = pennies.initial_state()
    search.search(state, playouts=2_000)
    root = search.node_of(state)
    return search.graph.rsum[root, 0] / search.graph.count[root], search


def test_serial_nodes_let_the_other_role_answer_our_move() -> None:
    # matching pennies: decoupled UCT's coins stay near half and half (a's value 0.5);
    # under serial the answering role sees the lead's coin and beats it, so the
    # lead's value falls to the paranoid 0 (a leads) and the answer's rises to 1
    for seed in (1, 2):
        duct, _ = _pennies_value(None, seed)
        assert 0.25 < duct < 0.75
        led, search = _pennies_value(0, seed)
        assert led < 0.1
        g = search.graph
        root = search.node_of(search.machine.initial_state())
        block = g.joint_visits[g.child_base[root]:g.child_base[root] + 4]
        # joint moves (h, h), (h, t), (t, h), (t, t): b answers h with t and t with h
        assert block[1] + block[2] > 0.9 * block.sum()
        answered, _ = _pennies_value(1, seed)
        assert answered > 0.9


def test_serial_statistics_stay_in_step_through_a_match() -> None:
    from conftest import shared_path

    machine = load_machine(shared_path("gdl-corpus", "repository",
                                       "connectFourSimultaneous.kif"), engine="compiled")
    config = AgentConfig(enhancements=parse_enhancements("default,serial"), graph_nodes=3_000,
                         seed=6)
    search = GraphSearch(machine, config, role=1)
    state, compacted = machine.initial_state(), 0
    for _ in range(12):   # self-play, the pool compacted on the way
        before = search.graph.nodes
        result = search.search(state, playouts=1_500)
        compacted += search.graph.nodes < before
        state = machine.next_state(state, [result.best_move(r) for r in (0, 1)])
        if machine.is_terminal(state):
            break
    assert compacted >= 2
    g, checked = search.graph, 0
    for node in range(g.nodes):
        if g.terminal[node] or g.proven[node] or min(g.size[node]) < 2 or not g.count[node]:
            continue
        block = slice(g.child_base[node], g.child_base[node] + int(np.prod(g.size[node])))
        # every visit of the node went through one joint move, and the answering
        # role's (red's) rewards through its joint moves add up to its slots' totals
        assert g.joint_visits[block].sum() == g.count[node] == search.slots(node, 1)[0].sum()
        assert g.joint_total[block].sum() == pytest.approx(search.slots(node, 0)[1].sum(),
                                                           rel=1e-4, abs=1e-3)
        checked += 1
    assert checked > 100


def _exact_with_length(machine, state: int, memo: dict) -> tuple[tuple[float, ...], int]:
    """The exact values of ``state`` and its length in plies when the winner hurries
    and the loser delays (a draw: the shortest), by plain minimax."""
    if state in memo:
        return memo[state]
    if machine.is_terminal(state):
        memo[state] = (tuple(machine.goals(state)), 0)
        return memo[state]
    mover = next(r for r in (0, 1) if len(machine.legal_moves(state, r)) > 1
                 or machine.move_to_kif(machine.legal_moves(state, r)[0]) != "noop")
    options = []
    for move in machine.legal_moves(state, mover):
        joint = [move if r == mover else machine.legal_moves(state, r)[0] for r in (0, 1)]
        options.append(_exact_with_length(machine, machine.next_state(state, joint), memo))
    best = max(v[mover] for v, _ in options)
    lengths = [n for v, n in options if v[mover] == best]
    chosen = max(lengths) if best < 50 else min(lengths)
    memo[state] = (next(v for v, n in options if v[mover] == best), chosen + 1)
    return memo[state]


def test_a_proven_root_wins_by_the_shortest_proof_and_loses_by_the_longest(tictactoe) -> None:
    """At a proven root the move is the one whose proof is shortest for a win and
    longest for a loss (the visits alone chose dawdling wins), checked against minimax
    with lengths on the tic-tac-toe positions where the keeping moves' lengths differ."""
    machine, memo = tictactoe, {}
    frontier, seen, checked = [machine.initial_state()], set(), {"win": 0, "loss": 0}
    while frontier and min(checked.values()) < 4:
        state = frontier.pop()
        if state in seen or machine.is_terminal(state):
            continue
        seen.add(state)
        movers = [r for r in (0, 1) if len(machine.legal_moves(state, r)) > 1]
        for move in machine.legal_moves(state, movers[0] if movers else 0):
            joint = [move if not movers or r == movers[0] else machine.legal_moves(state, r)[0]
                     for r in (0, 1)]
            frontier.append(machine.next_state(state, joint))
        if len(movers) != 1:
            continue
        me = movers[0]
        value, _ = _exact_with_length(machine, state, memo)
        keeping = {}
        for move in machine.legal_moves(state, me):
            joint = [move if r == me else machine.legal_moves(state, r)[0] for r in (0, 1)]
            v, n = _exact_with_length(machine, machine.next_state(state, joint), memo)
            if v[me] == value[me]:
                keeping[move] = n
        if value[me] == 50 or len(set(keeping.values())) < 2:
            continue
        search = GraphSearch(machine, AgentConfig(enhancements=GRAPH, seed=len(seen)))
        result = search.search(state, playouts=50_000)
        assert result.proven
        chosen = result.best_move(me)
        best = (min if value[me] == 100 else max)(keeping.values())
        assert keeping.get(chosen) == best, (keeping, chosen)
        checked["win" if value[me] == 100 else "loss"] += 1
    assert min(checked.values()) >= 4
