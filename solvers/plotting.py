"""Writing PNG figures with matplotlib's Agg backend (files only, never a display).

Two shapes cover every figure the command line draws:

* :func:`line_figure`: series against one x axis (solver convergence: NashConv against
  iterations, HSVI bounds or states expanded against time);
* :func:`interval_figure`: one panel per group (a game, or "overall"), one horizontal
  bar per name with its 95% confidence interval (tournament standings, ratings).

Each returns what it drew (the x and y of every line, the estimates and interval ends
of every panel), so tests can check a figure against its data, not only that it ran.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solvers.errors import GameError

DPI = 100


@dataclass(frozen=True)
class Line:
    label: str
    x: list[float]
    y: list[float]


@dataclass(frozen=True)
class Panel:
    """One group of estimates with their 95% intervals (``None``: no interval)."""

    title: str
    names: list[str]
    values: list[float]
    low: list[float | None]
    high: list[float | None]


def _pyplot() -> Any:
    # deferred: matplotlib, for pictures only
    import matplotlib

    matplotlib.use("Agg", force=True)   # files only: no display, even when one is set
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: str | Path) -> None:
    plt = _pyplot()
    try:
        # no date in the metadata: the same data gives the same bytes
        fig.savefig(path, dpi=DPI, format="png", metadata={"Software": None})
    except OSError as exc:
        raise GameError(f"{path}: cannot write the plot: {exc.strerror or exc}") from None
    finally:
        plt.close(fig)


def line_figure(path: str | Path, lines: Sequence[Line], *, title: str, xlabel: str,
                ylabel: str, log_x: bool = False, log_y: bool = False,
                band: tuple[str, str] | None = None) -> list[Line]:
    """Draw ``lines`` into a PNG at ``path``; returns the lines as drawn (on a log axis,
    points at or below zero are left out, since they have no place there). ``band``
    names two lines whose gap is shaded (HSVI's lower and upper bound)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    drawn = []
    for line in lines:
        points = [(x, y) for x, y in zip(line.x, line.y, strict=True)
                  if math.isfinite(x) and math.isfinite(y)
                  and (not log_x or x > 0) and (not log_y or y > 0)]
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        ax.plot(xs, ys, label=line.label, linewidth=1.5, marker="." if len(xs) < 60 else None)
        drawn.append(Line(line.label, xs, ys))
    if band is not None:
        low, high = (next(d for d in drawn if d.label == name) for name in band)
        if low.x == high.x and low.x:
            ax.fill_between(low.x, low.y, high.y, alpha=0.15)
    if any(d.x for d in drawn):
        if log_x:
            ax.set_xscale("log")
        if log_y:
            ax.set_yscale("log")
    else:       # e.g. --iterations 0: an empty plot that says so
        ax.text(0.5, 0.5, "no points recorded", ha="center", va="center",
                transform=ax.transAxes)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.grid(True, which="both", alpha=0.3)
    if len(drawn) > 1:
        ax.legend()
    fig.tight_layout()
    _save(fig, path)
    return drawn


def interval_figure(path: str | Path, panels: Sequence[Panel], *, title: str,
                    xlabel: str) -> list[Panel]:
    """One panel per group, names top to bottom in the given order, a dot at each value
    and a bar over its interval; returns the panels drawn."""
    if not panels:
        raise GameError(f"{path}: nothing to plot (no finished matches)")
    plt = _pyplot()
    heights = [max(1.2, 0.35 * len(p.names) + 0.8) for p in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(6.4, sum(heights) + 0.6),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, panel in zip(axes[:, 0], panels, strict=True):
        ys = list(range(len(panel.names)))[::-1]
        below = [v - lo if lo is not None else 0.0 for v, lo in zip(panel.values, panel.low,
                                                                      strict=True)]
        above = [hi - v if hi is not None else 0.0 for v, hi in zip(panel.values, panel.high,
                                                                      strict=True)]
        ax.errorbar(panel.values, ys, xerr=[below, above], fmt="o", capsize=4)
        ax.set_yticks(ys, panel.names)
        ax.set_ylim(-0.7, len(ys) - 0.3)
        ax.set_title(panel.title, fontsize=10)
        ax.grid(True, axis="x", alpha=0.3)
    axes[-1, 0].set_xlabel(xlabel)
    fig.suptitle(title)
    fig.tight_layout()
    _save(fig, path)
    return list(panels)
