"""What both formats of a stored GDL solution share: the header's name and version,
the rules hash that keys a solution to its game, and the strategies' shape.

The JSON-lines format (:mod:`gdl.solving.store`) and the compact ``.npz`` format
(:mod:`gdl.solving.store_npz`) both begin with the header ``{"format": FORMAT,
"version": VERSION, "rules_hash", "game", "roles", "solver", "values"}``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gdl.reasoning.machine import rules_hash
from gdl.reasoning.parser import parse_kif
from gdl.reasoning.terms import Rule

FORMAT = "ggp-gdl-solution"
VERSION = 1

Strategies = dict[str, dict[str, float]]   # {role: {move KIF: probability}}


def hash_of(rules: Sequence[Rule] | str) -> str:
    """The rules hash of parsed rules, of KIF text, or a hash given as such."""
    if not isinstance(rules, str):
        return rules_hash(rules)
    if _HASH.fullmatch(rules):
        return rules
    return rules_hash(parse_kif(rules))


_HASH = re.compile(r"[0-9a-f]{64}")
