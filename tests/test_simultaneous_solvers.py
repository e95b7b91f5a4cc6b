"""Baseline and interval heuristic on the thesis' worked examples and on random games."""

from __future__ import annotations

import numpy as np
import pytest

from solvers.errors import LimitReached
from solvers.simultaneous import baseline, certificate, interval_heuristic
from solvers.simultaneous.interval_heuristic import get_pivot, in_out, utility_intervals
from solvers.simultaneous.model import SimultaneousGame, SimultaneousGameBuilder
from solvers.simultaneous.random_games import full_game, variable_game


def terminal(b, payoffs, rows=("u", "v"), cols=("X", "Y"), label=None):
    node = b.add_node(len(payoffs), len(payoffs[0]), rows, cols, label=label)
    b.set_entries(node, np.full((len(payoffs), len(payoffs[0])), -1), payoffs)
    return node


def root_over(b, kids, rows=("t", "b"), cols=("L", "R")):
    root = b.add_node(2, 2, rows, cols, label="root")
    for (i, j), kid in kids.items():
        b.set_child(root, i, j, kid)
    return root


def bos_with_book() -> SimultaneousGame:
    """Figures 4.1/4.4."""
    b = SimultaneousGameBuilder()
    root = b.add_node(2, 1, ("R", "C"), ("0",), label="root")
    b.set_terminal(root, 0, 0, (1, 1))
    b.set_child(root, 1, 0, terminal(b, [[(2, 1), (0, 0)], [(0, 0), (1, 2)]],
                                      ("B", "S"), ("B", "S"), "C0"))
    return b.build(root=root)


def figure_4_7() -> SimultaneousGame:
    """Example 4.3.1; the terminal payoffs are the point intervals of Figure 4.9."""
    b = SimultaneousGameBuilder()
    kids = {(0, 0): terminal(b, [[(2, 3), (1, 2)], [(1, 1), (0, 0)]], label="tL"),
            (0, 1): terminal(b, [[(1, 1), (0, 1)], [(0, 3), (1, 0)]], label="tR"),
            (1, 0): terminal(b, [[(-1, 1), (1, -1)], [(1, -1), (-1, 1)]], label="bL"),
            (1, 1): terminal(b, [[(0, 2), (0, 0)], [(1, 2), (0, 0)]], label="bR")}
    return b.build(root=root_over(b, kids))


def figure_4_12() -> SimultaneousGame:
    """Section 4.3.2. The text gives the intervals, the in/out tables and the payoffs
    the algorithm looks at; the other payoffs are chosen inside those intervals."""
    b = SimultaneousGameBuilder()
    bRvY = terminal(b, [[(6, 1), (1, 6)], [(1, 1), (2, 2)]], ("c", "d"), ("C", "D"), "bRvY")
    bR = b.add_node(2, 2, ("u", "v"), ("X", "Y"), label="bR")
    b.set_terminal(bR, 0, 0, (1, 1))
    b.set_terminal(bR, 0, 1, (2, 2))
    b.set_terminal(bR, 1, 0, (3, 3))
    b.set_child(bR, 1, 1, bRvY)
    kids = {(0, 0): terminal(b, [[(4, 2), (0, 0)], [(0, 0), (2, 1)]], label="tL"),
            (0, 1): terminal(b, [[(1, -1), (-1, 1)], [(-1, 1), (1, -1)]], label="tR"),
            (1, 0): terminal(b, [[(0, 3), (0, 2)], [(1, 2), (5, 4)]], label="bL"),
            (1, 1): bR}
    return b.build(root=root_over(b, kids))


def node(game, label):
    return game.node_labels.index(label)


def pure_choice(solution, n, p):
    return int(np.argmax(solution.node_strategy(n, p)))


def test_bos_with_book_baseline_selections():
    g = bos_with_book()
    first = baseline.solve(g)  # Example 4.1.22, SPE 1: alpha = 0, beta = gamma = 1
    assert first.root_values == (2, 1)
    assert pure_choice(first, g.root, 0) == 1
    best1 = baseline.solve(g, selection="max1")  # SPE 2 with alpha = 0: (1, 2)
    assert best1.root_values == (1, 2)
    assert certificate.check(g, first)["ok"] and certificate.check(g, best1)["ok"]


def test_bos_with_book_interval_heuristic():
    g = bos_with_book()
    ih = interval_heuristic.solve(g)
    # pivot R; the book's value 1 is tested against C0's worst equilibrium for
    # player 0, (S, S) = (1, 2), which does not pay more: SPE 2 with alpha = 1
    assert ih.root_values == (1, 1)
    assert pure_choice(ih, g.root, 0) == 0
    assert ih.reachable().tolist() == [g.root]
    c0 = node(g, "C0")
    assert ih.values[c0].tolist() == [1, 2]
    assert certificate.check(g, ih)["ok"]


def test_baseline_example_4_2_1_style():
    """Figure 4.5's pattern: the root matrix of Figure 4.6 and its pure equilibrium (b, L)."""
    b = SimultaneousGameBuilder()
    kids = {(0, 0): terminal(b, [[(1, 2), (0, 0)], [(0, 0), (4, 1)]], label="tL"),
            (0, 1): terminal(b, [[(1, -1), (-1, 1)], [(-1, 1), (1, -1)]], label="tR"),
            (1, 0): terminal(b, [[(3, 3), (0, 0)], [(0, 0), (1, 1)]], label="bL"),
            (1, 1): terminal(b, [[(0, 0), (1, 2)], [(0, 0), (0, 1)]], label="bR")}
    g = b.build(root=root_over(b, kids))
    s = baseline.solve(g)
    root_matrix = [s.values[k].tolist() for k in kids.values()]
    assert root_matrix == [[1, 2], [0, 0], [3, 3], [1, 2]]  # Figure 4.6
    assert s.root_values == (3, 3)
    assert s.node_strategy(g.root, 0).tolist() == [0, 1] and s.node_strategy(g.root, 1).tolist() == [1, 0]
    tr = node(g, "tR")
    assert s.node_strategy(tr, 0).tolist() == [0.5, 0.5] == s.node_strategy(tr, 1).tolist()
    br = node(g, "bR")
    assert s.node_strategy(br, 0).tolist() == [1, 0] and s.node_strategy(br, 1).tolist() == [0, 1]
    assert certificate.check(g, s)["max_gain"] == 0


def _entry_intervals(game, h):
    lo, hi = utility_intervals(game)
    sl = game.entries(h)
    child = game.entry_child[sl]
    elo = np.where((child >= 0)[:, None], lo[np.maximum(child, 0)], game.entry_payoff[sl])
    ehi = np.where((child >= 0)[:, None], hi[np.maximum(child, 0)], game.entry_payoff[sl])
    m, n = game.shape(h)
    return elo.T.reshape(2, m, n), ehi.T.reshape(2, m, n)


def test_example_4_3_6_intervals_and_4_3_8_pivot():
    g = figure_4_7()
    lo, hi = utility_intervals(g)
    expect = {"tL": ([0, 0], [2, 3]), "tR": ([0, 0], [1, 3]), "bL": ([-1, -1], [1, 1]),
              "bR": ([0, 0], [1, 2]), "root": ([-1, -1], [2, 3])}
    for label, (low, high) in expect.items():
        assert lo[node(g, label)].tolist() == low and hi[node(g, label)].tolist() == high
    ins, outs = in_out(*_entry_intervals(g, g.root))
    # Figure 4.11: (in0 out0; in1 out1) for tL, tR / bL, bR
    assert ins[0].tolist() == [[1, 1], [0, 1]] and ins[1].tolist() == [[1, 1], [0, 1]]
    assert outs.sum() == 0
    assert get_pivot(*_entry_intervals(g, g.root)) == (0, 0)


def test_example_4_3_10_pbs():
    g = figure_4_7()
    ih = interval_heuristic.solve(g)
    assert ih.root_values == (2, 3)
    assert sorted(ih.support().tolist()) == sorted([g.root, node(g, "tL")])
    assert (pure_choice(ih, g.root, 0), pure_choice(ih, g.root, 1)) == (0, 0)
    tl = node(g, "tL")
    assert (pure_choice(ih, tl, 0), pure_choice(ih, tl, 1)) == (0, 0)
    assert certificate.check(g, ih)["ok"]


def test_section_4_3_2_walkthrough():
    g = figure_4_12()
    lo, hi = utility_intervals(g)
    expect = {"tL": ([0, 0], [4, 2]), "tR": ([-1, -1], [1, 1]), "bL": ([0, 2], [5, 4]),
              "bRvY": ([1, 1], [6, 6]), "bR": ([1, 1], [6, 6]), "root": ([-1, -1], [6, 6])}
    for label, (low, high) in expect.items():
        assert (lo[node(g, label)].tolist(), hi[node(g, label)].tolist()) == (low, high), label
    ins, outs = in_out(*_entry_intervals(g, g.root))  # Figure 4.13
    assert ins[0].tolist() == [[0, 0], [1, 1]] and ins[1].tolist() == [[1, 0], [0, 1]]
    assert outs.sum() == 0
    assert get_pivot(*_entry_intervals(g, g.root)) == (1, 1)  # (b, R)
    br = node(g, "bR")
    ins, outs = in_out(*_entry_intervals(g, br))  # Figure 4.14
    assert ins[0].tolist() == [[0, 0], [1, 1]] and outs[0].tolist() == [[1, 0], [0, 0]]
    assert ins[1].tolist() == [[0, 1], [0, 1]] and outs[1].tolist() == [[1, 0], [0, 0]]
    assert get_pivot(*_entry_intervals(g, br)) == (1, 1)  # (v, Y)

    # in bR the pivot (v, Y) moves to the *terminal* entry (v, X) (3 > 2 for player 1):
    # the THESIS-NOTES fix of Algorithm 8; the printed nesting would keep (v, Y)
    ih = interval_heuristic.solve(g)
    assert ih.root_values == (5, 4)
    chosen = {label: (pure_choice(ih, node(g, label), 0), pure_choice(ih, node(g, label), 1))
              for label in ("root", "bL", "bR", "bRvY")}
    assert chosen == {"root": (1, 0), "bL": (1, 1), "bR": (1, 0), "bRvY": (1, 1)}
    assert ih.values[br].tolist() == [3, 3] and ih.values[node(g, "bRvY")].tolist() == [2, 2]
    # b' is defined exactly on the four nodes the text lists
    assert sorted(ih.support().tolist()) == sorted(node(g, k) for k in chosen)
    assert certificate.check(g, ih)["ok"]


@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("zero_sum", [True, False])
def test_random_games_are_certified(full, zero_sum):
    for a, d in [(2, 3), (3, 2), (2, 5)]:
        for seed in range(4):
            g = (full_game if full else variable_game)(a, d, seed, zero_sum)
            bl = baseline.solve(g)
            ih = interval_heuristic.solve(g)
            for sol in (bl, ih):
                cert = certificate.check(g, sol)
                assert cert["ok"], cert
                assert cert["relative_gain"] <= 1e-9
            assert bl.solved.all()
            if zero_sum:
                assert ih.root_values == pytest.approx(bl.root_values, abs=1e-12)


@pytest.mark.parametrize("selection", ["welfare", "max0", "min1"])
def test_selections_give_certified_equilibria(selection):
    g = full_game(3, 2, 5)
    for solve in (baseline.solve, interval_heuristic.solve):
        assert certificate.check(g, solve(g, selection=selection))["ok"]


def test_certificate_catches_a_wrong_strategy():
    g = full_game(2, 2, 1)
    s = baseline.solve(g)
    s.strategy[0][:] = 0
    s.strategy[0][g.action_start[0, :-1]] = 1.0  # player 0 always plays his first action
    cert = certificate.check(g, s)
    assert cert["max_gain"] > 1e-3 and not cert["ok"]


def _tree_copy_of_dag():
    """A DAG with a shared child and the same game written as a tree."""
    leaf = [[(1, -1), (-2, 2)], [(-1, 1), (3, -3)]]
    dag = SimultaneousGameBuilder()
    shared = terminal(dag, leaf)
    root = dag.add_node(2, 2)
    dag.set_entries(root, [[shared, shared], [shared, -1]], [[(0, 0)] * 2, [(0, 0), (0.5, -0.5)]])
    tree = SimultaneousGameBuilder()
    copies = [terminal(tree, leaf) for _ in range(3)]
    troot = tree.add_node(2, 2)
    tree.set_entries(troot, [[copies[0], copies[1]], [copies[2], -1]], [[(0, 0)] * 2, [(0, 0), (0.5, -0.5)]])
    return dag.build(root=root), tree.build(root=troot)


def test_dag_equals_its_tree():
    dag, tree = _tree_copy_of_dag()
    for solve in (baseline.solve, interval_heuristic.solve):
        a, b = solve(dag), solve(tree)
        assert a.root_values == pytest.approx(b.root_values)
        assert certificate.check(dag, a)["ok"]


def test_chance_nodes_take_expected_values():
    b = SimultaneousGameBuilder()
    coin = b.add_chance([0.25, 0.75], labels=("heads", "tails"))
    heads = terminal(b, [[(4, -4), (0, 0)], [(0, 0), (4, -4)]])
    b.set_child(coin, 0, 0, heads)
    b.set_terminal(coin, 1, 0, (2, -2))
    root = b.add_node(1, 2)
    b.set_child(root, 0, 0, coin)
    b.set_terminal(root, 0, 1, (1, -1))
    g = b.build(root=root)
    for solve in (baseline.solve, interval_heuristic.solve):
        s = solve(g)
        # heads: value 2; coin: 0.25 * 2 + 0.75 * 2 = 2; player 1 prefers paying 1
        assert s.values[coin].tolist() == pytest.approx([2, -2])
        assert s.root_values == pytest.approx((1, -1))
        assert certificate.check(g, s)["ok"]


def test_limits():
    g = full_game(2, 4, 0)
    with pytest.raises(LimitReached):
        baseline.solve(g, max_nodes=100)
    with pytest.raises(LimitReached):
        interval_heuristic.solve(g, time_limit=0.0)
    with pytest.raises(LimitReached) as caught:
        baseline.solve(g, time_limit=0.0)
    partial = caught.value.partial
    assert 0 < partial.solved.sum() < g.num_nodes  # the first level was solved
    assert certificate.check(g, partial)["max_gain"] <= 1e-12
    seen = []
    baseline.solve(g, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (g.num_nodes, g.num_nodes)


def random_dag(seed: int, levels: int = 4, width: int = 6, zero_sum: bool = False,
               chance: bool = True) -> SimultaneousGame:
    """Nodes in layers; every entry is terminal or a child drawn from any lower layer,
    so children are shared; some nodes are chance nodes."""
    rng = np.random.default_rng(seed)
    b = SimultaneousGameBuilder()
    below: list[int] = []
    for level in range(levels):
        layer = []
        for _ in range(width if level < levels - 1 else 1):
            if chance and below and rng.random() < 0.2:
                k = int(rng.integers(2, 4))
                node = b.add_chance(rng.dirichlet(np.ones(k)))
                m, n = k, 1
            else:
                m, n = (int(v) for v in rng.integers(1, 4, size=2))
                node = b.add_node(m, n)
            for i in range(m):
                for j in range(n):
                    if below and rng.random() < 0.6:
                        b.set_child(node, i, j, int(rng.choice(below)))
                    else:
                        u0 = float(rng.integers(-2, 3))  # ties: degenerate matrices
                        b.set_terminal(node, i, j, (u0, -u0 if zero_sum else float(rng.integers(-2, 3))))
            layer.append(node)
        below += layer
    return b.build(root=below[-1])


@pytest.mark.parametrize("zero_sum", [True, False])
def test_random_dags_with_chance_are_certified(zero_sum):
    for seed in range(25):
        g = random_dag(seed, zero_sum=zero_sum)
        bl = baseline.solve(g)
        ih = interval_heuristic.solve(g)
        for sol in (bl, ih):
            cert = certificate.check(g, sol)
            assert cert["ok"], (seed, sol.solver, cert)
        if zero_sum:
            assert ih.root_values == pytest.approx(bl.root_values, abs=1e-9)
