"""HSVI for one-sided POSGs against the reference values (../shared/reference/VALUES.md)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import shared_path
from scipy.optimize import linprog

from solvers.posg.hsvi import Hsvi, Progress
from solvers.posg.lp import solve_lp
from solvers.posg.reader import read_posg

# P2 (seeing the state) picks the next state L or R; P1 guesses the current one and
# scores 1 when right. Both mix uniformly at equilibrium: value 0.5 / (1 - 0.9) = 5,
# while P1 seeing the state would get 10.
GUESS = """2 1 2 2 1 8 4 0.9
L 0
R 0
guess-L
guess-R
to-L
to-R
o
0 1
0 1
0 1
""" + "".join(f"{s} {a} {b} 0 {b} 1.0\n" for s in (0, 1) for a in (0, 1) for b in (0, 1)) + \
    "".join(f"{s} {s} {b} 1\n" for s in (0, 1) for b in (0, 1)) + "0 0.5 0.5\n"

# (upper bound's hard limit, lower bound's hard limit); the table rounds to 4 decimals
LIMITS = {"peg03": (85.7375, 50.1106), "peg04": (81.5992, 25.8657),
          "peg05": (76.7452, 12.8040), "peg06": (72.9944, 6.2835), "peg07": (68.2631, 3.1850)}
ROUNDING = 5e-5


def test_rewards_exact() -> None:
    path = shared_path("posg", "test", "rewards.osposg")
    result = Hsvi(read_posg(path.read_text())).solve(1e-9, 10.0)
    assert result.lower == pytest.approx(1 / (1 - 0.95 ** 2), abs=1e-9)
    assert result.upper == pytest.approx(1 / (1 - 0.95 ** 2), abs=1e-9)
    assert round(result.upper, 4) == 10.2564


def test_guessing_game_converges_to_half_per_step() -> None:
    solver = Hsvi(read_posg(GUESS))
    assert solver.bounds() == pytest.approx((5.0, 10.0))     # presolve: uniform / P1 sees
    result = solver.solve(1e-3, 60.0)
    assert result.lower <= 5.0 + 1e-6 and result.upper >= 5.0 - 1e-6
    assert result.gap <= 1e-3


@pytest.mark.slow
def test_peg03_gap_one() -> None:
    path = shared_path("posg", "pursuit-evasion", "peg03.osposg")
    reports: list[Progress] = []
    result = Hsvi(read_posg(path.read_text())).solve(1.0, 120.0, reports.append, 0.0)
    assert result.gap <= 1.0
    assert result.lower <= 83.4436 <= result.upper
    _check_reports(reports, *LIMITS["peg03"])


def _check_reports(reports: list[Progress], upper_limit: float, lower_limit: float) -> None:
    assert reports
    for before, after in zip(reports, reports[1:], strict=False):
        assert after.lower >= before.lower - 1e-9 and after.upper <= before.upper + 1e-9
    for p in reports:
        assert p.upper <= upper_limit + ROUNDING and p.lower >= lower_limit - ROUNDING
        assert p.lower <= p.upper


@pytest.mark.slow
@pytest.mark.parametrize("game", ["peg04", "peg05", "peg06", "peg07"])
def test_peg_bounds_inside_hard_limits(game: str) -> None:
    path = shared_path("posg", "pursuit-evasion", f"{game}.osposg")
    solver = Hsvi(read_posg(path.read_text()))
    reports: list[Progress] = []
    result = solver.solve(1e-3, 2.0, reports.append, 0.0)
    upper_limit, lower_limit = LIMITS[game]
    # the first report is the presolve: exactly the two reference columns
    assert reports[0].upper == pytest.approx(upper_limit, abs=ROUNDING)
    assert reports[0].lower == pytest.approx(lower_limit, abs=ROUNDING)
    _check_reports(reports, upper_limit, lower_limit)
    assert result.gap < reports[0].gap


def _random_perfect_information_game(rng: np.random.Generator) -> tuple[str, np.ndarray]:
    """A random game where every state is its own partition (P1 sees the state) and
    observation o means "the next state is o"; with its value per state computed
    independently (Shapley's value iteration, one matrix-game LP per state)."""
    n, n_a1, n_a2, discount = 3, 3, 2, 0.8
    trans = rng.dirichlet(np.ones(n), size=(n, n_a1, n_a2))
    reward = rng.integers(-5, 6, size=(n, n_a1, n_a2)).astype(float)
    lines = [f"{n} {n} {n_a1} {n_a2} {n} {n * n_a1 * n_a2 * n} {n * n_a1 * n_a2} {discount}"]
    lines += [f"s{s} {s}" for s in range(n)] + [f"a{a}" for a in range(n_a1)]
    lines += [f"b{b}" for b in range(n_a2)] + [f"o{o}" for o in range(n)]
    lines += [" ".join(map(str, range(n_a2)))] * n + [" ".join(map(str, range(n_a1)))] * n
    lines += [f"{s} {a} {b} {t} {t} {float(trans[s, a, b, t])!r}" for s in range(n)
              for a in range(n_a1) for b in range(n_a2) for t in range(n)]
    lines += [f"{s} {a} {b} {float(reward[s, a, b])!r}" for s in range(n) for a in range(n_a1)
              for b in range(n_a2)]
    lines.append("0 1.0")
    value = np.zeros(n)
    for _ in range(80):      # 0.8 ** 80 < 1e-7
        q = reward + discount * trans @ value
        new = np.zeros(n)
        for s in range(n):   # max_x min_b x . q[s, :, b]: variables (x, v)
            res = linprog(np.r_[np.zeros(n_a1), -1.0],
                          A_ub=np.c_[-q[s].T, np.ones(n_a2)], b_ub=np.zeros(n_a2),
                          A_eq=np.r_[np.ones(n_a1), 0.0][None], b_eq=[1.0],
                          bounds=[(0, None)] * n_a1 + [(None, None)])
            new[s] = -res.fun
        value = new
    return "\n".join(lines), value


@pytest.mark.parametrize("seed", range(2))
def test_perfect_information_games_match_shapley(seed: int) -> None:
    text, value = _random_perfect_information_game(np.random.default_rng(seed))
    solver = Hsvi(read_posg(text))
    # the upper presolve is already this game's value; HSVI raises the lower bound to it
    assert solver.bounds()[1] == pytest.approx(value[0], abs=1e-6)
    result = solver.solve(1e-3, 60.0)
    assert value[0] - 1e-3 - 1e-6 <= result.lower <= value[0] + 1e-6
    assert result.upper == pytest.approx(value[0], abs=1e-6)


def test_direct_highs_matches_linprog() -> None:
    rng = np.random.default_rng(7)
    a_ub = sp.csr_matrix(rng.uniform(0.1, 1.0, size=(12, 8)))
    a_eq = sp.csr_matrix(np.r_[np.ones(4), np.zeros(4)][None])
    args = (-rng.uniform(1, 2, 8), a_ub, rng.uniform(1, 2, 12), a_eq, np.array([0.5]),
            np.zeros(8), np.full(8, np.inf), "test")
    direct, reference = solve_lp(*args, direct=True), solve_lp(*args, direct=False)
    assert direct.fun == pytest.approx(reference.fun, abs=1e-9)
    assert direct.x == pytest.approx(reference.x, abs=1e-9)
    assert direct.ineq_duals == pytest.approx(reference.ineq_duals, abs=1e-9)
    assert np.all(direct.ineq_duals <= 1e-12) and np.any(direct.ineq_duals < 0)
