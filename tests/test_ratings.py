"""Bradley-Terry ratings (server/ratings.py): closed forms, an independent scipy fit of
the same likelihood, n-player and non-zero-sum matches, and ``ggp ratings``."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import shared_path
from scipy.optimize import minimize
from test_solve_trace import png_size

from ggp_cli import main as ggp
from server.ratings import (
    Z95,
    comparisons,
    fit_bradley_terry,
    ratings_report,
    score_matrix,
)

ELO = 400 / math.log(10)


def match(i: int, players: list[str], payoffs: list[float] | None, game: str = "g",
          status: str = "completed") -> dict:
    return {"id": f"m{i}", "game": game, "players": players, "payoffs": payoffs,
            "status": status}


def results(pairs: list[tuple[str, str, list[float]]], game: str = "g") -> list[dict]:
    return [match(i, [a, b], p, game) for i, (a, b, p) in enumerate(pairs)]


def group(report: dict, game: str) -> dict:
    return next(g for g in report["groups"] if g["game"] == game)


def by_player(g: dict) -> dict:
    return {p["player"]: p for p in g["players"]}


def test_two_players_closed_form() -> None:
    # A: 3 wins, 1 draw, 1 loss = 3.5 of 5, so p_A / p_B = 3.5 / 1.5
    report = ratings_report(results([("A", "B", [1, 0])] * 3 + [("A", "B", [0, 0]),
                                                                ("B", "A", [1, 0])]))
    rows = by_player(group(report, "g"))
    gap = 400 * math.log10(3.5 / 1.5)
    assert rows["A"]["rating"] == pytest.approx(1500 + gap / 2, abs=1e-6)
    assert rows["B"]["rating"] == pytest.approx(1500 - gap / 2, abs=1e-6)
    # Fisher information of the gap (in nats): n pi (1 - pi) = 5 * 0.7 * 0.3; each
    # centred rating carries half the gap
    half = Z95 * ELO * math.sqrt(1 / (4 * 5 * 0.7 * 0.3))
    assert rows["A"]["ci95"] == pytest.approx([rows["A"]["rating"] - half,
                                               rows["A"]["rating"] + half], abs=1e-6)
    assert rows["A"]["score"] == pytest.approx(0.7)
    assert not group(report, "g")["regularised"]
    h2h = {(h["player"], h["opponent"]): h for h in group(report, "g")["head_to_head"]}
    assert (h2h["A", "B"]["wins"], h2h["A", "B"]["draws"], h2h["A", "B"]["losses"]) == (3, 1, 1)
    assert (h2h["B", "A"]["wins"], h2h["B", "A"]["losses"]) == (1, 3)


def test_a_three_player_cycle_rates_everyone_equal() -> None:
    beats = [("A", "B"), ("B", "C"), ("C", "A")]
    pairs = [(a, b, [1, 0]) for a, b in beats for _ in range(2)]
    pairs += [(a, b, [0, 1]) for a, b in beats]
    rows = by_player(group(ratings_report(results(pairs)), "g"))
    for name in "ABC":
        assert rows[name]["rating"] == pytest.approx(1500, abs=1e-6)
        assert rows[name]["score"] == pytest.approx(0.5)
    assert rows["A"]["ci95"] == pytest.approx(rows["B"]["ci95"], abs=1e-6)


def _nll(theta: np.ndarray, wins: np.ndarray) -> float:
    """Bradley-Terry's negative log-likelihood, written out pair by pair."""
    total = 0.0
    for i in range(len(wins)):
        for j in range(len(wins)):
            if i != j and wins[i, j] > 0:
                total -= wins[i, j] * (theta[i] - np.logaddexp(theta[i], theta[j]))
    return total


def _independent_fit(wins: np.ndarray, reference: bool) -> tuple[np.ndarray, np.ndarray]:
    """Centred theta and their standard errors by BFGS and a finite-difference Hessian
    (theta_0 fixed at 0, or a reference player at 0 with a draw against each)."""
    n = len(wins)
    if reference:
        wins = np.pad(wins, ((0, 1), (0, 1)))
        wins[:n, n] = wins[n, :n] = 0.5

    def full(free: np.ndarray) -> np.ndarray:
        return np.append(free, 0.0) if reference else np.insert(free, 0, 0.0)

    free = minimize(lambda f: _nll(full(f), wins), np.zeros(n if reference else n - 1),
                    method="BFGS", options={"gtol": 1e-10}).x
    h = 1e-4
    k = len(free)
    hess = np.zeros((k, k))
    for a in range(k):
        for b in range(k):
            ea, eb = np.eye(k)[a] * h, np.eye(k)[b] * h
            hess[a, b] = (_nll(full(free + ea + eb), wins) - _nll(full(free + ea - eb), wins)
                          - _nll(full(free - ea + eb), wins)
                          + _nll(full(free - ea - eb), wins)) / (4 * h * h)
    cov_free = np.linalg.inv(hess)
    cov = np.zeros((n, n))
    if reference:
        cov[:, :] = cov_free
        theta = free
    else:
        cov[1:, 1:] = cov_free
        theta = full(free)
    centre = np.eye(n) - 1 / n
    cov = centre @ cov @ centre
    return theta - theta.mean(), np.sqrt(np.diag(cov))


def test_fit_agrees_with_an_independent_maximum_likelihood_fit() -> None:
    players = ["A", "B", "C", "D"]
    outcomes = {("A", "B"): (5, 2, 3), ("A", "C"): (6, 0, 1), ("B", "C"): (3, 1, 3),
                ("C", "D"): (4, 2, 2), ("B", "D"): (2, 0, 5), ("A", "D"): (3, 3, 3)}
    pairs = []
    for (a, b), (w, d, lost) in outcomes.items():
        pairs += [(a, b, [1, 0])] * w + [(a, b, [0, 0])] * d + [(a, b, [0, 1])] * lost
    wins = score_matrix(players, comparisons(results(pairs)))
    fit = fit_bradley_terry(players, wins)
    theta, se = _independent_fit(wins, reference=False)
    assert not fit.regularised
    assert fit.theta == pytest.approx(theta, abs=1e-5)
    assert fit.se == pytest.approx(se, rel=1e-3)


def test_a_player_who_never_loses_gets_a_finite_regularised_rating() -> None:
    pairs = [("A", "B", [1, 0])] * 4 + [("A", "C", [1, 0])] * 3 + [("B", "C", [1, 0])] * 2 \
        + [("B", "C", [0, 1])] * 2
    players = ["A", "B", "C"]
    wins = score_matrix(players, comparisons(results(pairs)))
    fit = fit_bradley_terry(players, wins)
    theta, se = _independent_fit(wins, reference=True)
    assert fit.regularised
    assert fit.theta == pytest.approx(theta, abs=1e-5)
    assert fit.se == pytest.approx(se, rel=1e-3)
    report = ratings_report(results(pairs))
    assert [p["player"] for p in group(report, "g")["players"]][0] == "A"
    assert group(report, "g")["regularised"]


def test_n_player_and_non_zero_sum_matches_compare_pairwise() -> None:
    found = comparisons([match(0, ["A", "B", "C"], [100, 50, 50]),
                         match(1, ["A", "B"], [70, 70]),        # a tie, not zero-sum
                         match(2, ["A", "A"], [100, 0])])       # one player: no comparison
    assert [(c.first, c.second, c.score, c.weight) for c in found] == [
        ("A", "B", 1.0, 0.5), ("A", "C", 1.0, 0.5), ("B", "C", 0.5, 0.5),
        ("A", "B", 0.5, 1.0)]
    wins = score_matrix(["A", "B", "C"], found)
    assert wins.tolist() == [[0, 1.0, 0.5], [0.5, 0, 0.25], [0, 0.25, 0]]


def test_aborted_matches_are_left_out_and_empty_records_say_why() -> None:
    pairs = results([("A", "B", [1, 0]), ("B", "A", [1, 0])])
    aborted = [match(9, ["A", "B"], None, status="aborted"),
               match(10, ["A", "B"], [1, 0], status="aborted")]
    report = ratings_report(pairs + aborted)
    assert report["aborted"] == 2 and group(report, "g")["comparisons"] == 2
    assert by_player(group(report, "g"))["A"]["rating"] == pytest.approx(1500)
    assert ratings_report(aborted)["message"] == \
        "no ratings: no finished matches in the records"
    alone = ratings_report([match(0, ["A", "A"], [1, 0])])
    assert alone["groups"] == [] and "single player" in alone["message"]
    assert ratings_report(pairs, game="other")["message"] == \
        "no ratings: no finished matches of other in the records"


def test_per_game_and_overall_groups() -> None:
    both = results([("A", "B", [1, 0])] * 2 + [("A", "B", [0, 1])], "g1") + \
        [dict(m, id="x" + m["id"]) for m in results([("B", "A", [1, 0])] * 3
                                                     + [("A", "B", [1, 0])], "g2")]
    report = ratings_report(both)
    assert [g["game"] for g in report["groups"]] == ["overall", "g1", "g2"]
    overall = by_player(group(report, "overall"))
    # overall A: 2 + 1 of 7 comparisons: p_A / p_B = 3 / 4
    gap = 400 * math.log10(3 / 4)
    assert overall["A"]["rating"] - overall["B"]["rating"] == pytest.approx(gap, abs=1e-6)
    assert [g["game"] for g in ratings_report(both, "g1")["groups"]] == ["g1"]


def test_ratings_command_on_a_recorded_tournament(tmp_path, capsys) -> None:
    from server.plots import ratings_plot

    game = shared_path("efg", "rpss_from_course.efg")
    db = tmp_path / "r.sqlite"
    assert ggp(["tournament", "--games", str(game), "--players", "first", "random",
                "--swap-roles", "--rounds", "3", "--playclock", "1", "--db", str(db),
                "--seed", "5", "--quiet"]) == 0
    capsys.readouterr()
    plot = tmp_path / "ratings.png"
    assert ggp(["ratings", "--db", str(db), "--json", "--plot", str(plot)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert ggp(["matches", "list", "--db", str(db), "--json"]) == 0
    recorded = json.loads(capsys.readouterr().out)
    h2h = {(h["player"], h["opponent"]): h for h in group(report, "overall")["head_to_head"]}
    first_wins = sum(1 for m in recorded
                     if m["payoffs"][m["players"].index("first")]
                     > m["payoffs"][1 - m["players"].index("first")])
    assert h2h["first", "random"]["wins"] == first_wins
    assert sum(h2h["first", "random"][k] for k in ("wins", "draws", "losses")) == 6
    # the PNG shows exactly the JSON's ratings: drawn again from them, the same bytes
    width, height = png_size(plot)
    assert width > 0 and height > 0
    again = tmp_path / "again.png"
    panels = ratings_plot(again, report)
    assert again.read_bytes() == plot.read_bytes()
    assert panels[0].values == [p["rating"] for p in group(report, "overall")["players"]]
    # text form: the tables and the method
    assert ggp(["ratings", "--db", str(db), "--game", "rpss_from_course"]) == 0
    text = capsys.readouterr().out
    assert "head to head" in text and "Bradley-Terry" in text
    assert ggp(["ratings", "--db", str(db), "--game", "nope"]) == 1
    assert "no finished matches of nope" in capsys.readouterr().err
