"""The exact solve of a small GDL-II game in the start clock (see :mod:`agent.gdl2_player`)."""

from __future__ import annotations

from typing import Any


def solve_small_game(machine: Any, until: float, nodes: int) -> Any:
    """A solved strategy, or why there is none (a str)."""
    return "no GDL-II expansion in this build"
