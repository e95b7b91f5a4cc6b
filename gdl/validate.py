"""GDL validation (being completed): arity consistency for now."""

from __future__ import annotations

from collections.abc import Sequence

from gdl.terms import Rule


def validate(rules: Sequence[Rule]) -> None:
    """Raise ValidationError listing every problem of ``rules``."""
    return None
