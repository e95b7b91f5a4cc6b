"""What the puzzle and n-player front ends of ``ggp solve`` take from its parsed
arguments alike: the refusal of an option they do not take, the output places (checked
before the solve, so a bad one fails at once) and the budget."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from gdl.budget import Budget
from solvers.errors import GameError
from solvers.files import prepare_output


def refuse_first(given: list[str], what: str, game: str = "") -> None:
    """GameError naming the first option of ``given`` as not available for ``what``
    (after ``game``, what the game is, when given)."""
    if given:
        raise GameError(f"{game}{given[0]} is not available for {what}")


@dataclass
class Outputs:
    """``--strategy`` and ``--save`` places (None when not asked for) and the budget."""

    strategy: Path | None
    save: Path | None
    budget: Budget


def outputs_of(args: argparse.Namespace) -> Outputs:
    return Outputs(prepare_output(args.strategy, "--strategy") if args.strategy else None,
                   prepare_output(args.save, "--save") if args.save else None,
                   Budget(max_states=args.max_states, time_limit=args.time_limit,
                          memory_mb=args.memory_mb))
