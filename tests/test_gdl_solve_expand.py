"""GDL -> simultaneous-move DAG: state counts, shapes, chance, budgets, bad games."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import GAMES

from gdl.expansion.expand import Budget, expand, expand_states
from gdl.reasoning.machine import load_machine
from solvers.errors import LimitReached, UnsupportedGame
from solvers.simultaneous.model import CHANCE, TERMINAL

TICTACTOE = GAMES / "gdl" / "simultaneous_tictactoe.kif"
THESIS = GAMES / "gdl" / "simultaneous_tictactoe_thesis.kif"

# A coin flipped by nature, then one simultaneous round of matching pennies:
# the guesser wins if he names the coin, the hider's move only matters on tails.
COIN = """
(role guesser) (role random) (role hider)
(init start)
(<= (legal random (flip heads)) (true start))
(<= (legal random (flip tails)) (true start))
(<= (legal ?r wait) (true start) (role ?r) (distinct ?r random))
(<= (legal ?r (say ?x)) (true (coin ?c)) (side ?x) (role ?r) (distinct ?r random))
(<= (legal random wait) (true (coin ?c)))
(side heads) (side tails)
(goal random 0)
(<= (next (coin ?c)) (does random (flip ?c)))
(<= (next (said ?x ?y)) (does guesser (say ?x)) (does hider (say ?y)))
(<= (next (coin ?c)) (true (coin ?c)))
(<= terminal (true (said ?x ?y)))
(<= (goal guesser 100) (true (said ?c ?y)) (true (coin ?c)))
(<= (goal guesser 0) (true (said ?x ?y)) (true (coin ?c)) (distinct ?x ?c))
(<= (goal hider 0) (true (said ?c ?y)) (true (coin ?c)))
(<= (goal hider 100) (true (said ?x ?y)) (true (coin ?c)) (distinct ?x ?c))
"""

# Turn-based: a single Nim heap of 3, take 1 or 2, who takes the last wins.
NIM = """
(role first) (role second)
(init (heap 3)) (init (control first))
(succ 0 1) (succ 1 2) (succ 2 3)
(<= (legal ?p (take 1)) (true (control ?p)) (true (heap ?n)) (succ ?m ?n))
(<= (legal ?p (take 2)) (true (control ?p)) (true (heap ?n)) (succ ?m ?n) (succ ?k ?m))
(<= (legal ?p noop) (role ?p) (not (true (control ?p))))
(<= (next (heap ?m)) (does ?p (take 1)) (true (heap ?n)) (succ ?m ?n))
(<= (next (heap ?k)) (does ?p (take 2)) (true (heap ?n)) (succ ?m ?n) (succ ?k ?m))
(<= (next (control first)) (true (control second)))
(<= (next (control second)) (true (control first)))
(<= (next (winner ?p)) (does ?p (take ?x)) (true (heap ?x)))
(<= terminal (true (heap 0)))
(<= (goal ?p 100) (true (winner ?p)))
(<= (goal ?p 0) (role ?p) (not (true (winner ?p))))
"""

THREE = """
(role a) (role b) (role c)
(init s) (<= (legal ?r go) (role ?r)) (<= (next t) (true s))
(<= terminal (true t)) (<= (goal ?r 50) (role ?r))
"""

CYCLE = """
(role a) (role b)
(init on)
(<= (legal ?r flip) (role ?r)) (<= (legal ?r stop) (role ?r))
(<= (next off) (true on) (does a flip))
(<= (next on) (true off) (does a flip))
(<= (next done) (does a stop))
(<= terminal (true done)) (<= (goal ?r 50) (role ?r))
"""


@pytest.fixture(scope="module")
def tictactoe():
    return expand(load_machine(TICTACTOE))


def test_tictactoe_states_match_the_reference(tictactoe) -> None:
    graph = tictactoe.graph
    # ../shared/reference/VALUES.md: 12,829 reachable states, 7,950 non-terminal
    assert graph.n_states == 12_829
    assert graph.n_states - graph.n_terminal == 7_950
    assert graph.constant_sum == 100.0
    game = tictactoe.game
    assert game.num_nodes == 7_950
    # 131,214 joint moves: one entry each (every transition of the state graph)
    assert game.num_entries == 131_214
    assert game.shape(0) == (9, 9)
    assert game.actions(0, 0)[0] == "(mark 1 1)"
    assert tictactoe.player_roles == ("p0", "p1")


def test_tictactoe_entries_follow_the_rules(tictactoe) -> None:
    game = tictactoe.game
    root = game.entries(0)
    children = game.entry_child[root].reshape(9, 9)
    # the same cell leaves the board blank: the eight diagonal entries... all lead to
    # the one state "empty board, step 2"
    diagonal = np.diag(children)
    assert len(set(diagonal.tolist())) == 1
    facts = tictactoe.node_facts(int(diagonal[0]))
    assert "(step 2)" in facts and all(f.endswith(" b)") for f in facts if f.startswith("(cell"))
    # p0 at (1,1), p1 at (1,2): an x and an o
    after = tictactoe.node_facts(int(children[0, 1]))
    assert "(cell 1 1 x)" in after and "(cell 1 2 o)" in after
    # the same board reached in another order is the same node (transposition)
    assert tictactoe.node_of(tictactoe.graph.states[0]) == 0


def test_thesis_variant_has_middle_nodes_and_no_step_limit() -> None:
    expansion = expand(load_machine(THESIS))
    graph = expansion.graph
    # counted independently with the SWI-Prolog oracle (../shared/oracle reachable/1)
    assert graph.n_states == 23_086
    assert graph.constant_sum == 100.0
    game = expansion.game
    children = game.entry_child[game.entries(0)].reshape(9, 9)
    middle = int(children[4, 4])     # both marked (2,2)
    # p1 keeps his choice first: his only move is (mark 2 2); p0 picks another cell
    assert game.shape(middle) == (8, 1)
    assert game.actions(middle, 1) == ("(mark 2 2)",)
    assert "(mark 2 2)" not in game.actions(middle, 0)
    after = game.entry_child[game.entries(middle)][0]     # p0 marks (1,1)
    assert game.shape(int(after)) == (7, 7)
    assert "(keeper p0)" in expansion.node_facts(int(after))


@pytest.mark.parametrize("engine", ["compiled", "general"])
def test_turn_based_game_has_one_action_sides(engine) -> None:
    expansion = expand(load_machine(NIM, engine=engine))
    game = expansion.game
    assert game.shape(0) == (2, 1)          # first moves, second plays noop
    assert expansion.graph.constant_sum == 100.0
    take_two = int(game.entry_child[game.entries(0)][1])
    assert game.shape(take_two) == (1, 1)   # heap 1: second must take it
    assert game.entry_child[game.entries(take_two)][0] == TERMINAL
    assert game.entry_payoff[game.entries(take_two)][0].tolist() == [0.0, 100.0]


@pytest.mark.parametrize("engine", ["compiled", "general"])
def test_random_role_becomes_chance_nodes(engine) -> None:
    expansion = expand(load_machine(COIN, engine=engine))
    game = expansion.game
    assert expansion.player_roles == ("guesser", "hider")
    assert game.shape(0) == (1, 1)
    chance = int(game.entry_child[game.entries(0)][0])
    assert game.node_kind[chance] == CHANCE
    assert expansion.node_state[chance] == -1
    assert game.entry_prob[game.entries(chance)].tolist() == [0.5, 0.5]
    heads, tails = game.entry_child[game.entries(chance)]
    assert game.shape(int(heads)) == (2, 2)
    # the guesser names heads (row 0) on the heads branch: 100 whatever the hider says
    payoffs = game.entry_payoff[game.entries(int(heads))].reshape(2, 2, 2)
    assert payoffs[0, :, 0].tolist() == [100.0, 100.0]
    assert payoffs[1, :, 0].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("engine", ["compiled", "general"])
def test_nature_needs_no_goal(engine) -> None:
    # GDL-II does not require goals for `random`: without them it scores 0, and the
    # players' payoffs are those of the game that states them.
    with_goal = expand(load_machine(COIN, engine=engine)).game
    without = expand(load_machine(COIN.replace("(goal random 0)", ""), engine=engine)).game
    assert np.array_equal(with_goal.entry_payoff, without.entry_payoff)
    machine = load_machine(COIN.replace("(goal random 0)", ""), engine=engine)
    state = machine.next_state(machine.initial_state(),
                               [m[0] for m in machine.legal_joint_moves(machine.initial_state())])
    final = machine.next_state(state, [m[0] for m in machine.legal_joint_moves(state)])
    assert machine.is_terminal(final)
    assert machine.goals(final)[machine.roles.index("random")] == 0


def test_subgame_from_any_state(tictactoe) -> None:
    machine = tictactoe.machine
    node = int(tictactoe.game.entry_child[tictactoe.game.entries(0)][1])   # x at 11, o at 12
    state = tictactoe.graph.states[int(tictactoe.node_state[node])]
    sub = expand(machine, root=state)
    assert sub.node_facts(0) == tictactoe.node_facts(node)
    assert sub.game.shape(0) == (7, 7)
    # the subgame's states are exactly the states reachable from it in the whole game
    reachable = {int(node)}
    frontier = [node]
    while frontier:
        kids = tictactoe.game.children(frontier.pop())
        for kid in set(kids.tolist()) - reachable:
            reachable.add(kid)
            frontier.append(kid)
    assert sub.game.num_nodes == len(reachable)


def test_budgets_stop_with_a_clear_message() -> None:
    machine = load_machine(TICTACTOE)
    with pytest.raises(LimitReached, match="budget of 1,000 states"):
        expand_states(machine, budget=Budget(max_states=1_000))
    with pytest.raises(LimitReached, match="time limit of 0 s"):
        expand_states(machine, budget=Budget(time_limit=0.0))


def test_memory_budget(monkeypatch) -> None:
    import gdl.expansion.expand

    used = iter(range(0, 10**6, 100))       # resident MB grows by 100 at each check
    monkeypatch.setattr(gdl.expansion.expand, "resident_mb", lambda: float(next(used)))
    with pytest.raises(LimitReached, match="memory budget of 250 MB"):
        expand_states(load_machine(TICTACTOE), budget=Budget(memory_mb=250))


def test_progress_lines_report_states_per_second_and_memory(monkeypatch) -> None:
    import gdl.expansion.expand

    monkeypatch.setattr(gdl.expansion.expand, "PROGRESS_SECONDS", 0.0)
    lines: list[str] = []
    expand_states(load_machine(NIM), progress=lines.append)
    assert lines and "states found" in lines[-1] and "states/s" in lines[-1]
    assert "resident +" in lines[-1]  # memory growth, as the batched path reports it


def test_three_players_are_not_supported() -> None:
    with pytest.raises(UnsupportedGame, match="not supported by exact solvers"):
        expand(load_machine(THREE))


def test_a_cycle_is_reported() -> None:
    with pytest.raises(UnsupportedGame, match=r"cycle.*repeated state: \{(on|off)\}"):
        expand(load_machine(CYCLE))
