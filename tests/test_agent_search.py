"""The agent's search (agent/search/mcts.py, agent/search/playouts.py): behaviour, never speed.

Values are hand-derived (the games below are small) or come from the exact solver
(:func:`solvers.search.solve_exact`, checked against known values in
tests/test_search_mcts.py).
"""

from __future__ import annotations

import asyncio
import random
import time

import numpy as np
import pytest
from conftest import REPO

from agent.search.mcts import DEFAULT_ENHANCEMENTS, AgentConfig, AgentSearch, parse_enhancements
from agent.search.playouts import BatchPlayouts, PlayoutPolicy, ScalarPlayouts, make_playouts
from gdl.reasoning.machine import load_machine
from solvers.search import solve_exact

TICTACTOE = """
(role x) (role o)
(init (cell 1 1 b)) (init (cell 1 2 b)) (init (cell 1 3 b))
(init (cell 2 1 b)) (init (cell 2 2 b)) (init (cell 2 3 b))
(init (cell 3 1 b)) (init (cell 3 2 b)) (init (cell 3 3 b))
(init (control x))
(<= (legal ?p (mark ?r ?c)) (true (control ?p)) (true (cell ?r ?c b)))
(<= (legal x noop) (true (control o)))
(<= (legal o noop) (true (control x)))
(<= (next (cell ?r ?c ?p)) (does ?p (mark ?r ?c)))
(<= (next (cell ?r ?c ?v)) (true (cell ?r ?c ?v)) (distinct ?v b))
(<= (next (cell ?r ?c b)) (true (cell ?r ?c b)) (not (marked ?r ?c)))
(<= (marked ?r ?c) (does ?p (mark ?r ?c)))
(<= (next (control o)) (true (control x)))
(<= (next (control x)) (true (control o)))
(<= (row ?r ?p) (true (cell ?r 1 ?p)) (true (cell ?r 2 ?p)) (true (cell ?r 3 ?p)))
(<= (column ?c ?p) (true (cell 1 ?c ?p)) (true (cell 2 ?c ?p)) (true (cell 3 ?c ?p)))
(<= (diagonal ?p) (true (cell 1 1 ?p)) (true (cell 2 2 ?p)) (true (cell 3 3 ?p)))
(<= (diagonal ?p) (true (cell 1 3 ?p)) (true (cell 2 2 ?p)) (true (cell 3 1 ?p)))
(<= (line ?p) (row ?r ?p))
(<= (line ?p) (column ?c ?p))
(<= (line ?p) (diagonal ?p))
(<= open (true (cell ?r ?c b)))
(<= terminal (line x))
(<= terminal (line o))
(<= terminal (not open))
(<= (goal x 100) (line x))
(<= (goal x 0) (line o))
(<= (goal x 50) (not (line x)) (not (line o)))
(<= (goal o 100) (line o))
(<= (goal o 0) (line x))
(<= (goal o 50) (not (line x)) (not (line o)))
"""

# One player picks a or b three times; only a, a, a scores (100), anything else 0.
PICKS = (REPO / "tests" / "data" / "picks.kif").read_text()


# Matching pennies: a matches b's coin for 100, else b gets 100; value 50/50.
PENNIES = """
(role a) (role b) (init s)
(<= (legal a (play ?x)) (coin ?x)) (<= (legal b (play ?x)) (coin ?x))
(coin h) (coin t)
(<= (next (same)) (does a (play ?x)) (does b (play ?x)))
(<= (next over) (true s))
(<= terminal (true over))
(<= (goal a 100) (true (same))) (<= (goal a 0) (not (true (same))))
(<= (goal b 0) (true (same))) (<= (goal b 100) (not (true (same))))
"""


def play(machine, moves: list[str]) -> int:
    """The state after marking ``moves`` (KIF, alternating x and o)."""
    state = machine.initial_state()
    for i, kif in enumerate(moves):
        mover = i % 2
        joint = [machine.parse_move(kif if r == mover else "noop", r) for r in (0, 1)]
        state = machine.next_state(state, joint)
    return state


@pytest.fixture(scope="module")
def tictactoe():
    return load_machine(TICTACTOE, engine="compiled")


@pytest.fixture(scope="module")
def picks():
    return load_machine(PICKS, engine="compiled")


def test_enhancement_lists() -> None:
    assert parse_enhancements("default") == DEFAULT_ENHANCEMENTS
    assert "mast" not in parse_enhancements("default,no-mast")
    assert parse_enhancements("none,grave,solver") == ("grave", "solver")
    with pytest.raises(ValueError, match="unknown enhancement 'mats'"):
        parse_enhancements("default,mats")


@pytest.mark.parametrize("gibbs", [False, True])
@pytest.mark.parametrize("batched", [True, False])
def test_mast_prefers_the_moves_that_won(picks, batched: bool, gibbs: bool) -> None:
    # epsilon-greedy, or Gibbs sampling at temperature 0.1: once a's value is
    # above b's 0 (a quarter or more), a is drawn e^2.5 = 12 times as often as b
    policy = PlayoutPolicy(mast=True, epsilon=0.4, temperature=0.1 if gibbs else 0.0)
    playouts = make_playouts(picks, policy, (), random.Random(1), batched=batched)
    assert isinstance(playouts, BatchPlayouts if batched else ScalarPlayouts)
    start = picks.initial_state()
    first = playouts.run([start] * 200, None)
    a, b = picks.parse_move("a", 0), picks.parse_move("b", 0)
    assert playouts.mast_value(0, a) > playouts.mast_value(0, b) == 0.0
    # uniform playouts win 1/8 of the time; greedy MAST picks a with 0.6 + 0.4 / 2
    # per step (Gibbs: 0.92 or more), so about half of the later playouts win
    later = playouts.run([start] * 400, None)
    assert sum(r[0] for r, _ in later) > 0.35 * 400
    uniform = make_playouts(picks, PlayoutPolicy(), (), random.Random(1), batched=batched)
    assert sum(r[0] for r, _ in uniform.run([start] * 400, None)) < 0.2 * 400
    assert first


def test_a_cached_gibbs_distribution_follows_what_mast_learns(picks) -> None:
    import agent.search.playouts as playouts_module

    policy = PlayoutPolicy(mast=True, temperature=0.1)
    playouts = make_playouts(picks, policy, (), random.Random(3), batched=False)
    legal = picks.legal_moves(picks.initial_state(), 0)
    a, b = picks.parse_move("a", 0), picks.parse_move("b", 0)
    draws = [playouts._gibbs_move(0, legal) for _ in range(400)]
    assert 150 < draws.count(a) < 250   # nothing learned: uniform, from the cache
    assert playouts._gibbs_hits == 399
    # b lost and a won: the cached draw keeps the old weights for at most
    # GIBBS_REFRESH learned playouts, then a comes e^10 times as often as b
    for _ in range(playouts_module.GIBBS_REFRESH):
        playouts.mast.learn({(0, a)}, [1.0])
        playouts.mast.learn({(0, b)}, [0.0])
    assert sum(playouts._gibbs_move(0, legal) == a for _ in range(400)) > 390
    # legal moves that never come back as the same tuple: the cache is dropped
    fresh = make_playouts(picks, policy, (), random.Random(3), batched=False)
    for _ in range(playouts_module.GIBBS_CACHE):
        fresh._gibbs_move(0, list(legal))
    assert fresh._gibbs is None and fresh._gibbs_move(0, legal) in legal


def test_a_batched_gibbs_draw_follows_the_gibbs_distribution(picks) -> None:
    policy = PlayoutPolicy(mast=True, temperature=0.1)
    playouts = make_playouts(picks, policy, (), random.Random(5), batched=True)
    columns = playouts.columns[0]
    # a compiled move is the bit of its column
    a, b = (int(np.flatnonzero(columns == picks.parse_move(m, 0).bit_length() - 1)[0])
            for m in "ab")
    values = np.zeros(playouts.batch.n_moves)
    values[columns[a]], values[columns[b]] = 0.3, 0.1
    rows = 20_000
    legal = np.ones((rows, len(columns)), dtype=bool)
    drawn = playouts._draw(legal, columns, 0, values)
    # P(a) = e^(0.3/0.1) / (e^(0.3/0.1) + e^(0.1/0.1)) = 0.8808
    assert abs(np.mean(drawn == a) - 0.8808) < 0.015
    # only b legal: always b, even where a tiny temperature underflows b's weight
    legal[:, a] = False
    assert (playouts._draw(legal, columns, 0, values) == b).all()
    values[columns[a]], values[columns[b]] = 1.0, 0.0
    tiny = make_playouts(picks, PlayoutPolicy(mast=True, temperature=1e-4), (),
                         random.Random(5), batched=True)
    assert (tiny._draw(legal, columns, 0, values) == b).all()
    # no MAST: uniform over the legal moves
    legal[:, a] = True
    assert abs(np.mean(playouts._draw(legal, columns, 0, None) == a) - 0.5) < 0.015


def test_batched_playouts_agree_with_the_engine(tictactoe) -> None:
    # x to move with one empty cell left: the playout's result is the engine's
    moves = ["(mark 1 1)", "(mark 1 2)", "(mark 1 3)", "(mark 2 2)", "(mark 2 1)",
             "(mark 2 3)", "(mark 3 2)", "(mark 3 1)"]
    state = play(tictactoe, moves)
    last = [tictactoe.parse_move("(mark 3 3)", 0), tictactoe.parse_move("noop", 1)]
    expected = [g / 100 for g in tictactoe.goals(tictactoe.next_state(state, last))]
    policy = PlayoutPolicy(record=True)
    playouts = make_playouts(tictactoe, policy, (), random.Random(0), batched=True)
    outcomes = playouts.run([state, tictactoe.initial_state()], None)
    assert outcomes[0] == (expected, {(0, last[0]), (1, last[1])})
    reward, played = outcomes[1]
    assert sorted(reward) in ([0.0, 1.0], [0.5, 0.5])
    assert len({m for r, m in played if r == 0}) >= 3   # x marked at least 3 cells


@pytest.mark.parametrize("enhancements", ["default", "default,grave", "none,solver",
                                          "none,solver,leaf", "none,solver,batch,vmean"])
def test_the_solver_marks_proven_nodes_with_their_exact_values(tictactoe, enhancements) -> None:
    # x holds 1 1 and 2 2, o holds 1 2 and 3 3... x to move: a fork wins (value 100)
    state = play(tictactoe, ["(mark 1 1)", "(mark 1 2)", "(mark 2 2)", "(mark 3 3)"])
    search = AgentSearch(tictactoe, AgentConfig(enhancements=parse_enhancements(enhancements),
                                                seed=2))
    result = search.search(state, playouts=20_000)
    assert result.proven and list(result.value) == [100, 0]
    proven = [(s, n) for s, n in search._table.items() if n.exact is not None]
    assert len(proven) > 3
    table: dict = {}
    for s, node in proven:
        exact = (tictactoe.goals(s) if tictactoe.is_terminal(s) else
                 solve_exact(tictactoe, s, node_budget=100_000, table=table).exact.value)
        assert list(node.exact.value) == list(exact), tictactoe.state_to_kif(s)
    # the proven move is a winning one: (mark 2 1) and (mark 3 1) fork
    best = result.best_move(0)
    assert tictactoe.move_to_kif(best) in ("(mark 2 1)", "(mark 3 1)")


@pytest.mark.parametrize("vmean", [False, True])
def test_a_pending_visit_counts_as_a_loss_or_at_the_moves_mean(tictactoe, vmean: bool) -> None:
    enhancements = ("batch", "mast", "vmean") if vmean else ("batch", "mast")
    search = AgentSearch(tictactoe, AgentConfig(enhancements=enhancements, seed=4))
    state = tictactoe.initial_state()
    search.search(state, playouts=300)
    root = search._table[state]
    totals, visits = list(root.totals[0]), list(root.visits[0])
    path, _, _ = search._descend(state, root)
    move = path[0][1][0]
    mean = totals[move] / visits[move]
    pending = root.totals[0][move] / root.visits[0][move]
    assert visits[move] > 0 and root.visits[0][move] == visits[move] + 1
    # a loss lowers the move's mean until the reward comes back; vmean keeps it
    assert pending == pytest.approx(mean) if vmean else pending < mean
    search._undo(path)
    assert (root.totals[0], root.visits[0]) == (totals, visits)
    # after whole rounds every virtual reward is taken back: x's move totals add
    # up to the rewards backed up through the root
    search.search(state, playouts=2_000)
    assert search.batched
    assert sum(root.totals[0]) == pytest.approx(root.reward_sum[0])


def test_leaf_parallel_rounds_back_up_the_mean_of_each_leafs_playouts(tictactoe) -> None:
    from agent.search.mcts import _means

    a, b = {(0, 1)}, {(0, 2)}
    assert _means([([1.0, 0.0], a), ([0.0, 1.0], b), ([0.5, 0.5], a), ([0.5, 0.5], b)], 2) \
        == [([0.5, 0.5], a | b), ([0.5, 0.5], a | b)]
    search = AgentSearch(tictactoe, AgentConfig(enhancements=parse_enhancements("none,leaf"),
                                                seed=4))
    assert (search.leaf, search.round_size) == (4, 32)
    result = search.search(tictactoe.initial_state(), playouts=4_000)
    # playouts are counted one by one; each descent is one visit of the root
    root = search._table[tictactoe.initial_state()]
    assert result.playouts >= 4_000 and root.count < result.playouts / 2


def test_a_proven_loss_plays_the_most_visited_move_not_the_first(tictactoe) -> None:
    # x 1 1, 2 2, 2 1 against o 1 2, 3 3: x threatens 3 1 and 2 3, so every o move
    # loses. The exact backup keeps the first legal move, (mark 1 3), which lets x win
    # at once; the most visited move blocks one threat and loses a move later.
    state = play(tictactoe, ["(mark 1 1)", "(mark 1 2)", "(mark 2 2)", "(mark 3 3)",
                             "(mark 2 1)"])
    search = AgentSearch(tictactoe, AgentConfig(seed=4))
    result = search.search(state, playouts=5_000)
    assert result.proven and list(result.value) == [100, 0]
    root = search._table[state]
    assert tictactoe.move_to_kif(root.moves[1][int(np.argmax(root.exact.strategies[1]))]) \
        == "(mark 1 3)"   # what the backup alone would play
    move = result.best_move(1)
    assert tictactoe.move_to_kif(move) in ("(mark 3 1)", "(mark 2 3)")
    assert root.visits[1][root.moves[1].index(move)] == max(root.visits[1])


def test_the_solver_proves_a_simultaneous_constant_sum_node() -> None:
    # matching pennies: the matrix game's value and strategy, exactly
    game = load_machine(PENNIES, engine="compiled")
    search = AgentSearch(game, AgentConfig(seed=1))
    result = search.search(game.initial_state(), playouts=500)
    assert result.proven and list(result.value) == pytest.approx([50, 50])
    assert list(result.strategy[0]) == pytest.approx([0.5, 0.5])


@pytest.mark.parametrize("reuse", [True, False])
def test_tree_reuse_keeps_the_subtree_of_the_new_state(tictactoe, reuse: bool) -> None:
    enhancements = DEFAULT_ENHANCEMENTS if reuse else parse_enhancements("default,no-reuse")
    search = AgentSearch(tictactoe, AgentConfig(enhancements=enhancements, seed=3,
                                                max_nodes=600))
    root = tictactoe.initial_state()
    search.search(root, playouts=2_000)
    after = play(tictactoe, ["(mark 2 2)"])
    before = search._table.get(after)
    assert before is not None and before.count > 0
    count = before.count
    search.search(after, playouts=128)
    node = search._table[after]
    if reuse:
        assert node is before and node.count == count + 128
        # over half the node budget, the rest of the old tree was dropped
        reachable, frontier = set(), [after]
        while frontier:
            s = frontier.pop()
            if s not in reachable and s in search._table:
                reachable.add(s)
                frontier.extend(search._table[s].children.values())
        assert set(search._table) == reachable
    else:
        assert node is not before and node.count == 128


def test_exp3_and_rm_play_matching_pennies_evenly() -> None:
    game = load_machine(PENNIES, engine="compiled")
    for policy in ("exp3", "rm"):
        search = AgentSearch(game, AgentConfig(simultaneous=policy, seed=4,
                                               enhancements=parse_enhancements("default,no-solver")))
        result = search.search(game.initial_state(), playouts=6_000)
        assert not result.proven
        assert list(result.strategy[0]) == pytest.approx([0.5, 0.5], abs=0.1), policy


# Both roles choose at once, each for itself: x is worth 60 to its player, y 40.
TWO_CHOICES = """
(role a) (role b) (init s) (opt x) (opt y)
(<= (legal ?r (play ?o)) (role ?r) (opt ?o))
(<= (next (chose ?r ?o)) (does ?r (play ?o)))
(<= (next over) (true s))
(<= terminal (true over))
(<= (goal ?r 60) (true (chose ?r x)))
(<= (goal ?r 40) (true (chose ?r y)))
"""


def test_simultaneous_nodes_explore_by_their_own_constant() -> None:
    game = load_machine(TWO_CHOICES, engine="compiled")
    state = game.initial_state()
    visits = {}
    for turn_based, simultaneous in ((5.0, 0.0), (0.0, 5.0)):
        search = AgentSearch(game, AgentConfig(
            exploration=turn_based, simultaneous_exploration=simultaneous, seed=2,
            enhancements=parse_enhancements("default,no-solver")))
        search.search(state, playouts=200)
        visits[simultaneous] = search._table[state].visits
    # greedy once both moves were tried: y keeps its one visit (per role)
    assert [visits[0.0][r][1] for r in (0, 1)] == [1, 1]
    # C = 5 against a 0.2 gap in mean: y gets a good share
    assert all(visits[5.0][r][1] > 50 for r in (0, 1))

# From a, "go" wins at once; "wait" leads to b, whose only move leads back to a.
LOOP = """
(role p) (init (at a))
(<= (legal p wait) (true (at a))) (<= (legal p go) (true (at a)))
(<= (legal p back) (true (at b)))
(<= (next (at b)) (does p wait)) (<= (next (at a)) (does p back))
(<= (next (at c)) (does p go))
(<= terminal (true (at c)))
(<= (goal p 100) (true (at c))) (<= (goal p 0) (not (true (at c))))
"""


@pytest.mark.parametrize("repeat", [False, True])
def test_a_repetition_scores_a_draw_so_the_winning_role_makes_progress(repeat: bool) -> None:
    game = load_machine(LOOP, engine="compiled")
    state = game.initial_state()
    # no solver: it would prove the win at once and end the search
    search = AgentSearch(game, AgentConfig(seed=3, enhancements=parse_enhancements(
        "default,no-solver" + (",repeat" if repeat else ""))))
    search.search(state, playouts=400)
    root = search._table[state]
    wait, go = (root.moves[0].index(game.parse_move(m, 0)) for m in ("wait", "go"))
    means = [t / v for t, v in zip(root.totals[0], root.visits[0], strict=True)]
    if repeat:   # round the loop and back: a draw, 0.5
        assert means[go] == 1.0 and means[wait] < 0.8 and root.visits[0][go] > 300
    else:        # the playouts from the loop all win in the end: the moves look alike
        assert means[wait] == means[go] == 1.0


def test_timing_stops_a_clear_decision_and_goes_on_with_a_critical_one(tictactoe) -> None:
    # a won position: the two winning moves lead and are worth the same, so the
    # soft deadline (passed already) ends the search at once; at a fresh root the
    # untried moves make it critical: it goes on at least until each is tried
    search = AgentSearch(tictactoe, AgentConfig(enhancements=parse_enhancements(
        "default,timing,no-solver"), seed=5))
    state = play(tictactoe, ["(mark 1 1)", "(mark 1 2)", "(mark 2 2)", "(mark 3 3)"])
    search.search(state, playouts=3_000)
    clear = search.search(state, playouts=3_000, soft_deadline=time.monotonic() - 1)
    assert clear.playouts == 0
    timed = AgentConfig(enhancements=parse_enhancements("default,timing"), seed=5)
    fresh = AgentSearch(tictactoe, timed).search(
        tictactoe.initial_state(), playouts=256, soft_deadline=time.monotonic() - 1)
    assert fresh.playouts >= 9 and all(v.min() > 0 for v in fresh.visits[:1])
    # off (the default): the search runs to its end whatever the soft deadline says
    untimed = AgentSearch(tictactoe, AgentConfig(seed=5)).search(
        tictactoe.initial_state(), playouts=256, soft_deadline=time.monotonic() - 1)
    assert untimed.playouts == 256


@pytest.mark.slow
def test_the_agent_answers_in_time_under_a_tight_clock(tictactoe) -> None:
    from agent.brains.options import BrainOptions, GameSpec
    from agent.gamer import Gamer

    async def match() -> list[tuple[str, float, float]]:
        gamer = Gamer(BrainOptions(seed=1))
        answers = []
        try:
            assert await gamer.ready()   # as the agent does when it starts
            await gamer.start(GameSpec("gdl", TICTACTOE), "x", time.monotonic() + 3.0)
            moves = None
            state = tictactoe.initial_state()
            while not tictactoe.is_terminal(state):
                deadline = time.monotonic() + 0.3
                kif = await gamer.play(moves, deadline)
                answers.append((kif, time.monotonic(), deadline))
                legal = [tictactoe.move_to_kif(m) for m in tictactoe.legal_moves(state, 0)]
                # a worker a whole step behind (a loaded machine) has not told this
                # step's legal moves: the gamer then answers from the last list
                # (documented: the manager replaces an illegal one); else legal
                assert kif in legal or not gamer.decisions[-1].get("legal_known", True)
                if kif not in legal:
                    kif = legal[0]
                other = tictactoe.legal_moves(state, 1)[0]
                joint = [tictactoe.parse_move(kif, 0), other]
                moves = [kif, tictactoe.move_to_kif(other)]
                state = tictactoe.next_state(state, joint)
        finally:
            gamer.close()
        return answers

    answers = asyncio.run(match())
    assert answers and all(at <= deadline for _, at, deadline in answers)


@pytest.mark.parametrize("batched", [True, False])
def test_a_cut_off_playout_is_valued_by_the_goals_there(picks, tictactoe, batched: bool) -> None:
    # PICKS defines its goal at every state: after one step, 100 while only a was
    # played; tic-tac-toe's goals say 50 / 50 until there is a line
    policy = PlayoutPolicy(cutoff=1, record=True)
    playouts = make_playouts(picks, policy, (), random.Random(2), batched=batched)
    a = picks.parse_move("a", 0)
    outcomes = playouts.run([picks.initial_state()] * 64, None)
    assert {len(played) for _, played in outcomes} == {1}
    assert all(reward == [1.0 if (0, a) in played else 0.0] for reward, played in outcomes)
    assert {tuple(r) for r, _ in outcomes} == {(0.0,), (1.0,)}
    playouts = make_playouts(tictactoe, policy, (), random.Random(2), batched=batched)
    outcomes = playouts.run([tictactoe.initial_state()] * 64, None)
    assert {tuple(r) for r, _ in outcomes} == {(0.5, 0.5)}


@pytest.mark.parametrize("batched", [True, False])
def test_decisive_playouts_take_a_win_in_one(tictactoe, batched: bool) -> None:
    # x to move with (1 3) completing its top row; o threatens the middle row, so a
    # uniform playout often misses the win and loses (about 1 in 5 wins at once)
    state = play(tictactoe, ["(mark 1 1)", "(mark 2 1)", "(mark 1 2)", "(mark 2 2)"])
    decisive = make_playouts(tictactoe, PlayoutPolicy(decisive=True, record=True), (),
                             random.Random(4), batched=batched)
    outcomes = decisive.run([state] * 64, None)
    win = tictactoe.parse_move("(mark 1 3)", 0)
    assert all(reward == [1.0, 0.0] and (0, win) in played for reward, played in outcomes)
    uniform = make_playouts(tictactoe, PlayoutPolicy(), (), random.Random(4), batched=batched)
    assert sum(reward[1] for reward, _ in uniform.run([state] * 64, None)) > 10
    # o to move, both threatening: o takes its own win in one, (2 3)
    state = play(tictactoe, ["(mark 1 1)", "(mark 2 1)", "(mark 3 3)", "(mark 2 2)",
                             "(mark 1 3)"])
    assert tictactoe.legal_moves(state, 1) and all(
        reward == [0.0, 1.0] for reward, _ in decisive.run([state] * 64, None))
