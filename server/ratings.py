"""Bradley-Terry ratings of the players in the match records, per game and overall.

Model (Bradley and Terry 1952): player ``i`` has a strength ``p_i = exp(theta_i)`` and
scores against ``j`` with probability ``p_i / (p_i + p_j)``.

1. Comparisons: every completed match with payoffs gives one comparison per pair of
   seats held by different players: 1 to the seat with the higher payoff, 0.5 each
   when equal (a tie is half a win), so n-player and non-zero-sum games compare like
   two-player ones. An n-player match's comparisons weigh 1/(n-1) each, so every
   match counts as one game per player. Aborted and running matches are left out; a
   player is its spec as recorded (two seats with the same spec are one player and
   are not compared).
2. Fit: the maximum-likelihood strengths by the MM algorithm (Hunter, Annals of
   Statistics 2004, eq. 3): ``p_i <- W_i / sum_j N_ij / (p_i + p_j)`` with ``W_i``
   the (weighted) score of ``i`` and ``N_ij`` the comparisons of ``i`` and ``j``,
   until no ``theta`` moves by more than :data:`TOLERANCE`. The maximum exists only
   when the comparison graph is strongly connected (Ford 1957: no group of players
   that never scored against the rest); otherwise every player is given one virtual
   draw against a reference player of strength 1, which keeps every rating finite
   (``regularised`` in the output).
3. Confidence intervals: Wald intervals from the Fisher information of ``theta``
   (``I_ii = sum_j N_ij q_ij``, ``I_ij = -N_ij q_ij``, ``q_ij = pi_ij (1 - pi_ij)``),
   whose pseudo-inverse is the covariance of ``theta`` centred to mean 0; the 95%
   interval is ``theta_i +- 1.96 se_i``. They are relative to the players' mean rating.
4. Scale: ratings are reported on the Elo scale, ``1500 + 400 log10(p_i)`` with the
   players' mean at 1500, so a 400-point gap means 10:1 odds.

:func:`ratings_report` (or :func:`records_ratings` on an open database) returns plain
JSON-able data (the web pages show it); ``ggp ratings`` prints it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
from scipy.sparse.csgraph import connected_components

from server.records import Records

ELO_BASE = 1500.0
ELO_PER_NAT = 400.0 / math.log(10.0)
Z95 = 1.959963984540054     # the 97.5% quantile of the standard normal
TOLERANCE = 1e-10
MAX_ITERATIONS = 100_000
METHOD = ("Bradley-Terry, maximum likelihood by MM (Hunter 2004); ties are half wins; "
          "pairwise comparisons of the payoffs within each match, weighted 1/(n-1) in an "
          "n-player match; 95% Wald intervals from the Fisher information, relative to "
          "the mean; Elo scale (1500 + 400 log10 strength)")


@dataclass(frozen=True)
class Comparison:
    game: str
    match: str
    first: str
    second: str
    score: float        # the first player's: 1, 0.5 or 0
    weight: float


def comparisons(matches: Iterable[dict[str, Any]]) -> list[Comparison]:
    """Step 1 over match records (``Records.list_matches`` rows)."""
    found = []
    for m in matches:
        payoffs, players = m.get("payoffs"), m.get("players") or []
        if m.get("status") != "completed" or payoffs is None or len(payoffs) != len(players):
            continue
        weight = 1.0 / max(1, len(players) - 1)
        for i, j in combinations(range(len(players)), 2):
            if players[i] == players[j]:
                continue
            score = 1.0 if payoffs[i] > payoffs[j] else 0.5 if payoffs[i] == payoffs[j] else 0.0
            found.append(Comparison(m["game"], m["id"], players[i], players[j], score, weight))
    return found


@dataclass(frozen=True)
class Fit:
    players: list[str]
    theta: np.ndarray       # natural-log strengths, mean 0
    se: np.ndarray          # their standard errors
    regularised: bool
    iterations: int


def score_matrix(players: Sequence[str], found: Iterable[Comparison]) -> np.ndarray:
    """``W[i, j]``: the weighted score of player i against player j."""
    index = {p: k for k, p in enumerate(players)}
    wins = np.zeros((len(players), len(players)))
    for c in found:
        a, b = index[c.first], index[c.second]
        wins[a, b] += c.weight * c.score
        wins[b, a] += c.weight * (1.0 - c.score)
    return wins


def fit_bradley_terry(players: Sequence[str], wins: np.ndarray) -> Fit:
    """Steps 2-3 for a score matrix (:func:`score_matrix`)."""
    n = len(players)
    reached = wins > 0
    strong, _ = connected_components(reached, directed=True, connection="strong")
    regularised = strong > 1
    if regularised:     # a reference player (last) with one draw against each player
        wins = np.pad(wins, ((0, 1), (0, 1)))
        wins[:n, n] = wins[n, :n] = 0.5
    games = wins + wins.T
    score = wins.sum(axis=1)
    p = np.ones(len(wins))
    iterations, moved = 0, math.inf
    while moved >= TOLERANCE and iterations < MAX_ITERATIONS:
        iterations += 1
        new = score / (games / (p[:, None] + p[None, :])).sum(axis=1)
        if regularised:
            new /= new[n]           # the reference keeps strength 1
        else:
            new /= math.exp(np.log(new).mean())
        moved = float(np.abs(np.log(new) - np.log(p)).max())
        p = new
    pi = p[:, None] / (p[:, None] + p[None, :])
    info = -games * pi * pi.T
    np.fill_diagonal(info, 0.0)
    np.fill_diagonal(info, -info.sum(axis=1))
    if regularised:     # the reference's row and column: its strength is fixed
        info = info[:n, :n]
        p = p[:n]
    theta = np.log(p)
    theta -= theta.mean()
    centre = np.eye(n) - 1.0 / n
    cov = centre @ np.linalg.pinv(info) @ centre
    return Fit(list(players), theta, np.sqrt(np.clip(np.diag(cov), 0.0, None)),
               bool(regularised), iterations)


def elo(theta: float) -> float:
    return ELO_BASE + ELO_PER_NAT * theta


def head_to_head(players: Sequence[str], found: Sequence[Comparison]) -> list[dict[str, Any]]:
    """Per ordered pair of players who met: wins, draws and losses of the first
    (comparisons, unweighted) and its weighted score share."""
    table: dict[tuple[str, str], list[float]] = {}
    for c in found:
        for me, other, score in ((c.first, c.second, c.score), (c.second, c.first,
                                                                 1.0 - c.score)):
            row = table.setdefault((me, other), [0, 0, 0, 0.0, 0.0])
            row[0 if score == 1.0 else 1 if score == 0.5 else 2] += 1
            row[3] += c.weight * score
            row[4] += c.weight
    order = {p: k for k, p in enumerate(players)}
    return [{"player": a, "opponent": b, "wins": int(r[0]), "draws": int(r[1]),
             "losses": int(r[2]), "score": r[3] / r[4]}
            for (a, b), r in sorted(table.items(), key=lambda kv: (order[kv[0][0]],
                                                                   order[kv[0][1]]))]


def group_report(game: str, found: Sequence[Comparison]) -> dict[str, Any] | None:
    """The ratings of one game (or "overall") from its comparisons; None with fewer
    than two players."""
    players = sorted({c.first for c in found} | {c.second for c in found})
    if len(players) < 2:
        return None
    wins = score_matrix(players, found)
    fit = fit_bradley_terry(players, wins)
    games = wins + wins.T
    matches: dict[str, set[str]] = {p: set() for p in players}
    for c in found:
        matches[c.first].add(c.match)
        matches[c.second].add(c.match)
    rows = [{"player": name, "rating": elo(fit.theta[k]),
             "ci95": [elo(fit.theta[k] - Z95 * fit.se[k]), elo(fit.theta[k] + Z95 * fit.se[k])],
             "log_strength": float(fit.theta[k]), "se": float(fit.se[k]),
             "score": float(wins[k].sum() / games[k].sum()), "matches": len(matches[name])}
            for k, name in enumerate(players)]
    rows.sort(key=lambda r: -r["rating"])
    order = [r["player"] for r in rows]
    return {"game": game, "matches": len({c.match for c in found}),
            "comparisons": len(found), "regularised": fit.regularised,
            "iterations": fit.iterations, "players": rows,
            "head_to_head": head_to_head(order, found)}


def ratings_report(matches: Sequence[dict[str, Any]], game: str | None = None
                   ) -> dict[str, Any]:
    """Ratings over match records (``Records.list_matches(limit=-1)``): overall and per
    game, or only ``game``. ``groups`` is empty when no game has two players who met;
    ``message`` then says why."""
    found = comparisons(matches)
    if game is not None:
        found = [c for c in found if c.game == game]
    names = sorted({c.game for c in found})
    wanted = [(g, [c for c in found if c.game == g]) for g in names]
    if game is None:
        wanted.insert(0, ("overall", found))
    groups = [r for g, f in wanted if (r := group_report(g, f)) is not None]
    statuses = [m.get("status") for m in matches if game is None or m.get("game") == game]
    report: dict[str, Any] = {
        "method": METHOD, "groups": groups,
        "finished": statuses.count("completed"), "aborted": statuses.count("aborted"),
        "running": statuses.count("running")}
    if not groups:
        where = f" of {game}" if game is not None else ""
        report["message"] = (
            f"no ratings: no finished matches{where} in the records"
            if not report["finished"] else
            f"no ratings: the finished matches{where} have a single player")
    return report


def records_ratings(records: Records, game: str | None = None) -> dict[str, Any]:
    """:func:`ratings_report` over every match of an open match database."""
    return ratings_report(records.list_matches(limit=-1), game)
