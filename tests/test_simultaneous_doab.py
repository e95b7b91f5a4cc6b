"""DOαβ (solvers.simultaneous.doab) against the baseline, certified, with pruning.

Random constant-sum games (the thesis' generators, and layered DAGs with chance nodes
built here), corpus GDL games, the ``ggp solve --solver doab`` command lines, and the
certificate's bounds for deviations into nodes DOαβ left unsolved.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import GAMES, shared_path

from ggp_cli import main as ggp
from solvers.errors import LimitReached, UnsupportedGame
from solvers.matrix.equilibrium import deviation_gain
from solvers.matrix.lp import maximin
from solvers.matrix.simplex import solve_zero_sum
from solvers.simultaneous import baseline, certificate, doab
from solvers.simultaneous.model import CHANCE, DECISION, SimultaneousGame, SimultaneousGameBuilder
from solvers.simultaneous.random_games import random_game
from solvers.simultaneous.solution import PartialSolution


def layered_dag(seed: int, layers: int = 4, width: int = 6, chance: bool = True) -> SimultaneousGame:
    """A random constant-sum game (u0 + u1 = 1) whose nodes in layer k lead to shared
    nodes of layer k + 1 (a DAG), with some chance nodes (one outcome may have
    probability 0) and payoffs on a coarse grid, so serialized bounds often meet."""
    rng = np.random.default_rng(seed)
    sizes = [1] + [width] * (layers - 1)
    first = np.cumsum([0] + sizes)
    kinds, shapes, children, payoffs, probs = [], [], [], [], []
    for layer, size in enumerate(sizes):
        for _ in range(size):
            is_chance = chance and layer > 0 and rng.random() < 0.25
            shape = (int(rng.integers(2, 4)), 1) if is_chance else tuple(rng.integers(1, 4, 2))
            kinds.append(CHANCE if is_chance else DECISION)
            shapes.append(shape)
            count = shape[0] * shape[1]
            last = layer == layers - 1
            kids = np.where(last | (rng.random(count) < 0.35), -1,
                            rng.integers(first[min(layer + 1, layers - 1)],
                                         first[min(layer + 2, layers)], count))
            children.extend(kids.tolist())
            u0 = rng.integers(0, 5, count) / 4
            payoffs.extend(np.stack([u0, 1 - u0], axis=1).tolist())
            if is_chance:
                p = rng.dirichlet(np.ones(count))
                if rng.random() < 0.3:
                    p[0] = 0.0
                    p /= p.sum()
                probs.extend(p.tolist())
            else:
                probs.extend([1.0] * count)
    return SimultaneousGame.from_arrays(shapes, children, payoffs, node_kind=kinds,
                                        entry_prob=probs)


def agrees_with_baseline(game: SimultaneousGame, solve=doab.solve) -> dict[str, int]:
    exact = baseline.solve(game)
    pruned = solve(game)
    assert pruned.root_values == pytest.approx(exact.root_values, abs=1e-9)
    # values agree wherever DOαβ solved a node (constant-sum: one value per node)
    mask = pruned.solved
    assert np.allclose(pruned.values[mask], exact.values[mask], atol=1e-9)
    check = certificate.check(game, pruned)
    assert check["ok"], check
    assert check["unsolved_reached"] == 0
    return pruned.stats


@pytest.mark.parametrize("full", [False, True])
def test_random_zero_sum_games_equal_baseline(full: bool) -> None:
    evaluated = total = 0
    for seed in range(8 if full else 25):
        game = random_game(3, 3 if full else 4, seed, full=full, zero_sum=True)
        stats = agrees_with_baseline(game)
        assert stats["nodes_total"] == game.num_nodes
        evaluated += stats["nodes_evaluated"]
        total += stats["nodes_total"]
    # pruning: DOαβ evaluates 1,411 of the 7,649 nodes of the 25 variable games (depth
    # 4) and 2,625 of the 6,560 of the 8 full games (a = 3, d = 3)
    assert evaluated < total


def test_random_dag_games_with_chance_equal_baseline() -> None:
    evaluated = total = 0
    for seed in range(40):
        game = layered_dag(seed, chance=seed % 4 != 0)
        stats = agrees_with_baseline(game)
        evaluated += stats["nodes_evaluated"]
        total += stats["nodes_total"]
    assert evaluated < total   # 185 of 760 nodes


def test_biab_equals_baseline_and_prunes_less() -> None:
    """BIαβ (bounds only, whole matrices) on the same kinds of games."""
    evaluated = {"biab": 0, "doab": 0}
    for seed in range(8):
        for game in (random_game(3, 4, seed, zero_sum=True), layered_dag(seed)):
            for name, solve in (("biab", doab.solve_biab), ("doab", doab.solve)):
                evaluated[name] += agrees_with_baseline(game, solve)["nodes_evaluated"]
    # measured: BIαβ 1,739 nodes, DOαβ 332, of the 2,714 of these 16 games
    assert evaluated["doab"] < evaluated["biab"] < 2_714


def test_time_limit_stops_with_a_partial_result() -> None:
    game = random_game(3, 4, 0, full=True, zero_sum=True)     # 7,381 nodes
    with pytest.raises(LimitReached, match="time limit reached") as stop:
        doab.solve(game, time_limit=1e-9)
    assert isinstance(stop.value.partial, PartialSolution)
    assert stop.value.partial.stats["nodes_total"] == game.num_nodes


def test_small_zero_sum_simplex_against_the_lp() -> None:
    """solvers.matrix.simplex on random and degenerate (0 / 50 / 100) games: no deviation
    gains beyond rounding and the maximin LP's value."""
    rng = np.random.default_rng(5)
    for trial in range(150):
        m, n = (int(k) for k in rng.integers(1, 8, 2))
        a = rng.integers(0, 3, (m, n)) * 50.0 if trial % 2 else rng.uniform(-1, 1, (m, n))
        x, y, value = solve_zero_sum(a)
        assert deviation_gain(a, -a, x, y) <= 1e-12 * max(1.0, float(np.abs(a).max()))
        assert value == pytest.approx(maximin(a)[1], abs=1e-9)
        assert x @ a @ y == pytest.approx(value, abs=1e-9)


def test_general_sum_games_are_refused() -> None:
    with pytest.raises(UnsupportedGame, match="constant-sum games only"):
        doab.solve(random_game(2, 2, 1))


def test_a_saddle_found_by_the_serialized_bounds_alone() -> None:
    """Root 2x2: (t, L) leads to a node worth 3 for player 0 (a 1x2 node whose columns
    pay 3 and 5), the other entries pay 1 or 2. The serialized games meet (p = o = 3),
    so DOαβ never looks at the other cells' children and the root is pure."""
    b = SimultaneousGameBuilder()
    root = b.add_node(2, 2)
    leaf = b.add_node(1, 2)
    other = b.add_node(2, 1)
    b.set_entries(leaf, [[-1, -1]], [[(3, -3), (5, -5)]])
    b.set_entries(other, [[-1], [-1]], [[(0, 0)], [(9, -9)]])
    b.set_entries(root, [[leaf, -1], [-1, other]], [[(0, 0), (4, -4)], [(2, -2), (0, 0)]])
    game = b.build(root)
    solution = doab.solve(game)
    assert solution.root_values == (3.0, -3.0)
    assert solution.node_strategy(root, 0).tolist() == [1.0, 0.0]
    assert solution.node_strategy(root, 1).tolist() == [1.0, 0.0]
    assert not solution.solved[other]     # never needed: max over its rows is 9 > 3 ...
    assert certificate.check(game, solution)["ok"]   # ... but row b's column L pays 2


def test_certificate_catches_a_gain_hidden_in_an_unsolved_node() -> None:
    """Root: row 0 pays 0.4, row 1 leads to matching pennies (value 0.5, constant-sum).
    A 'solution' playing row 0 with a pure witness for player 1 in the unsolved child
    must not pass: any witness lets player 0 get at least 0.5 there."""
    b = SimultaneousGameBuilder()
    root = b.add_node(2, 1)
    pennies = b.add_node(2, 2)
    b.set_entries(pennies, [[-1, -1], [-1, -1]], [[(1, 0), (0, 1)], [(0, 1), (1, 0)]])
    b.set_child(root, 1, 0, pennies)
    b.set_terminal(root, 0, 0, (0.4, 0.6))
    game = b.build(root)
    strategy = (np.array([1.0, 0.0, 0.5, 0.5]), np.array([1.0, 1.0, 0.0]))
    values = np.full((2, 2), np.nan)
    values[root] = (0.4, 0.6)
    fake = PartialSolution(game=game, solver="doab", selection="first", strategy=strategy,
                           values=values, solved=np.array([True, False]),
                           method=np.full(2, -1, dtype=np.int8))
    check = certificate.check(game, fake)
    # the pure witness lets player 0's best response get 1 (so does the serialized game
    # where player 1 commits first, and the interval maximum): gain 1 - 0.4
    assert not check["ok"] and check["max_gain"] == pytest.approx(0.6)
    fake.strategy[1][1:] = 0.5    # the best witness: the deviation is worth its value 0.5
    check = certificate.check(game, fake)
    assert not check["ok"] and check["max_gain"] == pytest.approx(0.1)
    honest = doab.solve(game)
    assert honest.root_values == pytest.approx((0.5, 0.5))
    assert certificate.check(game, honest)["ok"]


def test_efg_command_line_reports_node_counts(tmp_path, capsys) -> None:
    path = tmp_path / "z.efg"
    assert ggp(["random-game", "--actions", "3", "--depth", "4", "--zero-sum", "--seed", "3",
                "--out", str(path)]) == 0
    capsys.readouterr()
    assert ggp(["solve", str(path), "--solver", "doab", "--json"]) == 0
    pruned = json.loads(capsys.readouterr().out)
    assert ggp(["solve", str(path), "--solver", "baseline", "--json"]) == 0
    exact = json.loads(capsys.readouterr().out)
    assert pruned["values"] == pytest.approx(exact["values"], abs=1e-9)
    assert pruned["certificate"]["ok"]
    # 27 of the 78 nodes evaluated (seed 3)
    assert pruned["nodes_total"] == exact["nodes"] == 78
    assert pruned["nodes_evaluated"] < pruned["nodes_total"]
    assert ggp(["solve", str(path), "--solver", "doab"]) == 0
    assert "nodes evaluated" in capsys.readouterr().out


def test_efg_command_line_refuses_a_general_sum_game(tmp_path, capsys) -> None:
    path = tmp_path / "g.efg"
    assert ggp(["random-game", "--actions", "3", "--depth", "2", "--seed", "3",
                "--out", str(path)]) == 0
    assert ggp(["solve", str(path), "--solver", "doab"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "constant-sum games only" in err[0]


# ---------------------------------------------------------------------- GDL games
def corpus(name: str):
    return shared_path("gdl-corpus", "repository", f"{name}.kif")


def gdl_agrees(path) -> tuple[dict, object]:
    from gdl.solving.solve import solve_expansion, solve_game

    result = solve_game(path, "doab")
    assert result.certificate["ok"], result.certificate
    exact, check, _ = solve_expansion(result.expansion, "baseline")
    assert check["ok"]
    assert result.solution.root_values == pytest.approx(exact.root_values, abs=1e-9)
    return result.to_json(), result


def test_roshambo2_equals_baseline() -> None:
    report, _ = gdl_agrees(corpus("roshambo2"))
    assert report["values"] == {"white": 50.0, "black": 50.0}


def test_tictictoe_prunes_almost_everything() -> None:
    report, _ = gdl_agrees(corpus("ticTicToe"))
    assert report["values"] == {"xplayer": 50.0, "oplayer": 50.0}
    # measured: 6 of 7,950 nodes evaluated, 2,404 visited by the serialized searches
    assert report["nodes_total"] == 7_950
    assert report["nodes_evaluated"] < 100


def test_turn_based_tictactoe_equals_baseline() -> None:
    report, _ = gdl_agrees(corpus("ticTacToe"))
    assert report["values"] == {"xplayer": 50.0, "oplayer": 50.0}
    # measured: 9 of 4,520 nodes evaluated (turn-based: alpha-beta does the work)
    assert report["nodes_evaluated"] < report["nodes_total"] == 4_520


@pytest.mark.slow
def test_simultaneous_tictactoe_thesis_variant(capsys) -> None:
    report, _ = gdl_agrees(GAMES / "gdl" / "simultaneous_tictactoe_thesis.kif")
    assert report["values"] == {"p0": 37.5, "p1": 62.5}
    # measured: 172 of 21,210 nodes evaluated
    assert report["nodes_evaluated"] < report["nodes_total"] == 21_210
    assert ggp(["solve", str(GAMES / "gdl" / "simultaneous_tictactoe.kif"), "--solver",
                "doab", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "p0 50, p1 50" in out and "nodes evaluated" in out


def test_gdl_general_sum_game_is_refused(capsys) -> None:
    assert ggp(["solve", str(corpus("gt_prisoner")), "--solver", "doab", "--quiet"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "constant-sum games only" in err[0]


def test_bench_compares_the_three_solvers(tmp_path, capsys) -> None:
    path = tmp_path / "z.efg"
    assert ggp(["random-game", "--actions", "3", "--depth", "4", "--zero-sum", "--seed", "3",
                "--out", str(path)]) == 0
    capsys.readouterr()
    assert ggp(["bench", "doab", str(path), "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["games"]["z"]
    assert row["equal"] and row["nodes"] == 78
    # BIαβ evaluates 57 nodes, DOαβ 27 (seed 3)
    assert row["doab"]["nodes_evaluated"] < row["biab"]["nodes_evaluated"] < 78
    assert all(row[k]["ok"] for k in ("baseline", "biab", "doab"))


@pytest.mark.slow
def test_chickentictactoe_equals_baseline() -> None:
    report, _ = gdl_agrees(corpus("chickentictactoe"))
    assert report["values"] == pytest.approx({"xplayer": 40.451179733, "oplayer": 59.548820267})
