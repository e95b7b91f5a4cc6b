"""Goofspiel and Oshi-Zumo in GDL (games/gdl, written by gdl.bench.games), solved.

Values are checked by hand (goofspiel_ties N = 2, 3), by symmetry (goofspiel_N: 50),
by separate Python programs written from the rules (backward induction with an LP
per state over plain tuples, not the GDL), by OpenSpiel's value iteration when it
is installed, and the GDL itself against the SWI-Prolog oracle's random playouts.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Hashable
from functools import cache
from pathlib import Path

import numpy as np
import pytest
import test_gdl_oracle
from conftest import GAMES
from scipy.optimize import linprog

from gdl.bench.corpus_check import oracle_trace
from gdl.bench.games import benchmark_files
from gdl.bench.solve import main as bench_main
from gdl.bench.solve import openspiel_value_iteration
from gdl.reasoning.machine import load_machine
from gdl.reasoning.trace import replay
from gdl.solving.solve import solve_game
from solvers.errors import GameError

GDL = GAMES / "gdl"
SOLVERS = ("baseline", "ih")
OPENSPIEL = all(importlib.util.find_spec(m) for m in ("pyspiel", "cvxpy", "ecos"))
needs_openspiel = pytest.mark.skipif(not OPENSPIEL, reason="OpenSpiel (peers extra) not installed")


def matrix_value(payoff: list[list[float]]) -> float:
    """The row player's value of a zero-sum matrix game: max v, x^T A >= v, x a
    distribution (one LP)."""
    a = np.asarray(payoff, dtype=float)
    rows, cols = a.shape
    result = linprog(np.r_[np.zeros(rows), -1.0],
                     A_ub=np.c_[-a.T, np.ones(cols)], b_ub=np.zeros(cols),
                     A_eq=np.r_[np.ones(rows), 0.0][None, :], b_eq=[1.0],
                     bounds=[(0, None)] * rows + [(None, None)], method="highs")
    assert result.status == 0
    return float(-result.fun)


def backward_induction(moves: Callable[[Hashable], tuple[list, list] | None],
                       child: Callable[[Hashable, object, object], Hashable],
                       goal: Callable[[Hashable], float]) -> Callable[[Hashable], float]:
    """The first player's value of every state: ``moves(state)`` is None at a terminal
    state, else both players' moves."""
    @cache
    def value(state: Hashable) -> float:
        both = moves(state)
        if both is None:
            return goal(state)
        return matrix_value([[value(child(state, a, b)) for b in both[1]] for a in both[0]])
    return value


def goofspiel_value(n: int, ties_to_first: bool) -> float:
    """Goofspiel from its rules: state (hands, both totals, prize)."""
    def moves(state):
        hand0, hand1, _, _, prize = state
        return None if prize == 0 else (sorted(hand0), sorted(hand1))

    def child(state, a, b):
        hand0, hand1, total0, total1, prize = state
        if a > b or (a == b and ties_to_first):
            total0 += prize
        elif b > a:
            total1 += prize
        return hand0 - {a}, hand1 - {b}, total0, total1, prize - 1

    def goal(state):
        return 100.0 if state[2] > state[3] else 50.0 if state[2] == state[3] else 0.0

    cards = frozenset(range(1, n + 1))
    return backward_induction(moves, child, goal)((cards, cards, 0, 0, n))


def oshi_zumo_values(coins: int, size: int, horizon: int, min_bid: int
                     ) -> Callable[[tuple[int, int, int, int]], float]:
    """Oshi-Zumo from OpenSpiel's rules (oshi_zumo.cc): state (coins0, coins1,
    wrestler position, moves made); the value function of the first player, 0..100."""
    edge = 2 * size + 2

    def bids(c):
        return list(range(min_bid, c + 1)) or [c]

    def moves(state):
        c0, c1, pos, step = state
        if step >= horizon or pos in (0, edge) or c0 == c1 == 0:
            return None
        return bids(c0), bids(c1)

    def child(state, a, b):
        c0, c1, pos, step = state
        return c0 - a, c1 - b, pos + (a > b) - (b > a), step + 1

    def goal(state):
        pos = state[2]
        return 100.0 if pos > size + 1 else 0.0 if pos < size + 1 else 50.0

    return backward_induction(moves, child, goal)


def facts(line: dict) -> dict[str, list[str]]:
    """A strategy line's state as {relation ...: arguments} ("coins p0" -> ["3"])."""
    out = {}
    for fact in line["node"]:
        words = fact.strip("()").split()
        key = " ".join(words[:2]) if words[0] in ("coins", "hand") else words[0]
        out.setdefault(key, []).extend(words[2:] if words[0] in ("coins", "hand") else words[1:])
    return out


def test_the_files_are_the_generators_output() -> None:
    for name, text in benchmark_files():
        assert (GDL / name).read_text(encoding="utf-8") == text, f"{name}: run gdl.bench.games"


# Goofspiel with ties going to p0, by hand (cards and prizes as in the files).
# N = 2 (prizes 2 then 1): p0 bids 2. Against p1's 1 p0 takes 2 and loses 1 (2 - 1);
# against p1's 2 it is a tie, so p0 takes 2, and the last cards (1 vs 1) tie again:
# 3 - 0. Either way p0 wins: value 100.
# N = 3 (prizes 3, 2, 1; 6 points, p0 wins from 4). Whoever takes the 3 (p0 on
# i >= j, bids i, j in round 1) plays the last two rounds with the other two cards:
# - p0 took 3: it wins unless p1 strictly beats it in both last rounds (3-3, 50).
#   i = j: equal hands, p1 cannot beat both cards: 100. (2, 1): p0 keeps its 3: 100.
#   (3, 2): p1 keeps {1, 3}, its 1 beats nothing: 100. (3, 1): p0 {1, 2} against
#   {2, 3}: matching pennies between "p1 beats both" (50) and not (100): 75.
# - p1 took 3: p0 draws (50) only by winning both last rounds, else 0.
#   (1, 3): p0 {2, 3} against {1, 2} wins both whatever is played: 50. (1, 2): {2, 3}
#   against {1, 3}, and (2, 3): {1, 3} against {1, 2}: matching pennies 50 / 0: 25.
# Round 1 (rows i = 1, 2, 3; columns j = 1, 2, 3):
#     [[100, 25, 50], [100, 100, 25], [75, 100, 100]]
# No pure saddle point; equalising all three columns gives x = (3, 1, 9) / 13 and all
# three rows y = (9, 1, 3) / 13, both positive, so the value is
# (100*3 + 100*1 + 75*9) / 13 = 1075 / 13 = 82.6923...
TIES_BY_HAND = {2: 100.0, 3: 1075 / 13}


@pytest.mark.parametrize("n", sorted(TIES_BY_HAND))
@pytest.mark.parametrize("solver", SOLVERS)
def test_goofspiel_ties_values_by_hand(n: int, solver: str) -> None:
    result = solve_game(GDL / f"goofspiel_ties_{n}.kif", solver)
    assert result.values()["p0"] == pytest.approx(TIES_BY_HAND[n], abs=1e-9)
    assert result.values()["p1"] == pytest.approx(100 - TIES_BY_HAND[n], abs=1e-9)
    assert result.certificate["ok"]


def test_the_hand_matrix_of_goofspiel_ties_3() -> None:
    assert matrix_value([[100, 25, 50], [100, 100, 25], [75, 100, 100]]) == \
        pytest.approx(1075 / 13)
    assert goofspiel_value(3, True) == pytest.approx(1075 / 13)


# distinct states of the files' design (hands, prize, clamped difference), counted
# by a plain set-based enumeration while writing them (docs/solving-gdl.md)
GOOFSPIEL_STATES = {2: 8, 3: 36, 4: 194, 5: 1022}


@pytest.mark.parametrize("n", [2, 3, 4, 5])
@pytest.mark.parametrize("solver", SOLVERS)
def test_goofspiel_is_symmetric(n: int, solver: str) -> None:
    result = solve_game(GDL / f"goofspiel_{n}.kif", solver)
    assert result.values() == {"p0": pytest.approx(50, abs=1e-9), "p1": pytest.approx(50, abs=1e-9)}
    assert result.states == GOOFSPIEL_STATES[n]
    assert result.certificate["ok"]


@pytest.mark.parametrize("n", [4, pytest.param(5, marks=pytest.mark.slow)])
def test_goofspiel_ties_equal_a_separate_program(n: int) -> None:
    expected = goofspiel_value(n, True)
    assert expected not in (0, 50, 100)
    for solver in SOLVERS:
        assert solve_game(GDL / f"goofspiel_ties_{n}.kif", solver).values()["p0"] == \
            pytest.approx(expected, abs=1e-7)


OSHI_ZUMO = [(3, 1, 6, 0), (4, 1, 8, 1)]


@pytest.mark.parametrize("params", OSHI_ZUMO)
def test_oshi_zumo_equals_a_separate_program_at_every_state(params: tuple) -> None:
    coins, size, horizon, min_bid = params
    value = oshi_zumo_values(*params)
    result = solve_game(GDL / f"oshi_zumo_c{coins}_s{size}_h{horizon}_m{min_bid}.kif", "baseline")
    lines = list(result.strategy_lines())
    assert len(lines) == result.nodes
    for line in lines:
        state = facts(line)
        step = int(state["step"][0]) if "step" in state else 0  # no step: it never binds
        key = (int(state["coins p0"][0]), int(state["coins p1"][0]), int(state["pos"][0]), step)
        assert line["values"]["p0"] == pytest.approx(value(key), abs=1e-7), key


@pytest.mark.slow
@needs_openspiel
def test_goofspiel_4_equals_openspiel_value_iteration() -> None:
    peer = openspiel_value_iteration("goofspiel(num_cards=4,points_order=descending,"
                                     "returns_type=win_loss,imp_info=False)")
    for solver in SOLVERS:
        assert solve_game(GDL / "goofspiel_4.kif", solver).values()["p0"] == \
            pytest.approx(peer["value"], abs=1e-4)


@needs_openspiel
def test_oshi_zumo_equals_openspiel_at_every_state() -> None:
    # min_bid 1 and horizon >= coins: the horizon never binds, so OpenSpiel's state
    # strings (coins and field, no move count) name states exactly, as ours do
    peer = openspiel_value_iteration("oshi_zumo(coins=4,size=1,horizon=8,min_bid=1)")
    result = solve_game(GDL / "oshi_zumo_c4_s1_h8_m1.kif", "baseline")
    ours = {}
    for line in result.strategy_lines():
        state = facts(line)
        ours[(int(state["coins p0"][0]), int(state["coins p1"][0]), int(state["pos"][0]))] = \
            line["values"]["p0"]
    compared = 0
    for text, value in peer["values"].items():
        coins = text.split(",")[0].split()[1:]
        key = (int(coins[0]), int(coins[1]), text.split("Field: ")[1].index("W"))
        if key in ours:
            assert ours[key] == pytest.approx(50 + 50 * value, abs=1e-4), text
            compared += 1
    assert compared == len(ours) == result.nodes


trace_dir = test_gdl_oracle.trace_dir  # the oracle tests' fixture: skips without swipl


@pytest.mark.parametrize("name", ["goofspiel_3", "goofspiel_ties_4", "goofspiel_7",
                                  "oshi_zumo_c3_s1_h6_m0", "oshi_zumo_c6_s2_h12_m1"])
@pytest.mark.parametrize("engine", ["compiled", "general"])
def test_random_playouts_agree_with_the_oracle(name: str, engine: str, trace_dir: Path) -> None:
    game = GDL / f"{name}.kif"
    records, reason = oracle_trace(game, 4, 7, trace_dir / f"{name}-{engine}.jsonl")
    assert records is not None, reason
    checked, problems = replay(load_machine(game, engine=engine), records)
    assert problems == []
    assert checked == len(records) and sum(r["terminal"] for r in records) == 4


def test_bench_solves_and_stops_at_the_budget(capsys) -> None:
    assert bench_main(["goofspiel_ties_2", "goofspiel_4", "--no-peer", "--json",
                       "--solvers", "baseline", "--max-states", "100"]) == 0
    rows = {row["game"]: row for row in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["goofspiel_ties_2"]["ours"]["baseline"]["values"] == {"p0": 100.0, "p1": 0.0}
    assert "budget of 100 states" in rows["goofspiel_4"]["ours"]["baseline"]["stopped"]
    assert rows["goofspiel_4"]["openspiel"] is None


def test_bench_refuses_an_unknown_game() -> None:
    with pytest.raises(GameError, match="goofspiel_0: no such game file"):
        bench_main(["goofspiel_0"])


@needs_openspiel
def test_bench_compares_with_openspiel(capsys) -> None:
    assert bench_main(["oshi_zumo_c4_s1_h8_m1", "--solvers", "ih", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "| oshi_zumo_c4_s1_h8_m1 | ih | 29 |" in out
    assert out.rstrip().splitlines()[-2].endswith("| yes |")
