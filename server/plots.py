"""PNG figures of tournaments and ratings (``ggp tournament --plot``, ``ggp ratings
--plot``): one panel per game and one overall, each player's estimate with its 95%
confidence interval (:func:`solvers.plotting.interval_figure`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from server.tournament import Standing
from solvers.plotting import Panel, interval_figure


def standings_plot(path: str | Path, rows: Sequence[Standing], title: str) -> list[Panel]:
    """Mean payoff and its 95% interval per player: the games in their own units, the
    overall panel scaled to [0, 1] (players best first, as in the table)."""
    games = sorted({r.game for r in rows if r.game != "overall"}) + ["overall"]
    panels = []
    for game in games:
        scored = sorted((_interval(r) for r in rows if r.game == game and r.mean is not None),
                        key=lambda item: -item[1])
        if scored:
            label = "overall (payoffs scaled to [0, 1])" if game == "overall" else game
            panels.append(Panel(label, *(list(column) for column in zip(*scored, strict=True))))
    return interval_figure(path, panels, title=title, xlabel="mean payoff (95% CI)")


def _interval(row: Standing) -> tuple[str, float, float | None, float | None]:
    """(player, mean, low, high): the interval within the payoff range, or none drawn
    where it is undefined (too few matches)."""
    interval = row.interval
    return (row.entrant, row.mean or 0.0, None if interval is None else interval[0],
            None if interval is None else interval[1])


def ratings_plot(path: str | Path, report: dict[str, Any]) -> list[Panel]:
    """The ratings of :func:`server.ratings.ratings_report`: overall first, then each
    game, players best first."""
    panels = []
    for group in report["groups"]:
        players = group["players"]
        panels.append(Panel(f"{group['game']} ({group['matches']} matches)",
                            [p["player"] for p in players], [p["rating"] for p in players],
                            [p["ci95"][0] for p in players], [p["ci95"][1] for p in players]))
    return interval_figure(path, panels, title="Bradley-Terry ratings",
                           xlabel="rating (Elo scale, 95% CI)")
