"""The fields every ``ggp solve --json`` shares, whatever the game's family
(``docs/solve-json.md``): ``values`` and ``root_strategy`` keyed by player name, and
their text lines.

- ``values``: ``{player: value}``, the solved payoff of each player at the root.
- ``root_strategy``: ``{player: {action: probability}}``, each player's mixed move at
  the start of the game (actions below :data:`MIN_PROBABILITY` left out).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

MIN_PROBABILITY = 1e-12
DIGITS = 12  # probabilities are rounded off float noise: 1/3 prints as 0.333333333333


def player_keys(names: Sequence[str]) -> list[str]:
    """The players' names as JSON keys, unique (``P``, ``P#2`` when a name repeats)."""
    seen: dict[str, int] = {}
    keys = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        keys.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return keys


def by_player(names: Sequence[str], numbers: Iterable[float]) -> dict[str, float]:
    """``{player: number}`` for one number per player, in the players' order."""
    return dict(zip(player_keys(names), (float(x) for x in numbers), strict=True))


def mixed(actions: Sequence[str], probabilities: Iterable[float]) -> dict[str, float]:
    """``{action: probability}`` of one mixed move, without the actions never played."""
    return {str(a): round(float(p), DIGITS) for a, p in zip(actions, probabilities, strict=True)
            if p > MIN_PROBABILITY}


def values_text(values: dict[str, float]) -> str:
    return ", ".join(f"{player} {value:.10g}" for player, value in values.items())


def solved_text(solver: str, values: dict[str, float], seconds: float, detail: str) -> str:
    """``baseline: values p0 50, p1 50 in 0.37 s (detail)``: the line of a simultaneous-move
    solve, of a GDL game or an ``.efg`` alike."""
    return f"{solver}: values {values_text(values)} in {seconds:.2f} s ({detail})"


def certificate_text(check: dict) -> str:
    """``certificate: max gain 1.42e-14``, flagged when the check failed."""
    return (f"certificate: max gain {check['max_gain']:.3g}"
            + ("" if check.get("ok", True) else " (NOT an equilibrium within tolerance)"))


def root_strategy_text(strategy: dict[str, dict[str, float]]) -> str:
    """``P1: rock 0.3333, paper 0.3333, scissors 0.3333; P2: ...`` (the text line)."""
    return "; ".join(f"{player}: " + ", ".join(f"{a} {p:.4g}" for a, p in moves.items())
                     for player, moves in strategy.items()) or "-"
