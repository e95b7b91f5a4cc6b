"""What a fuzzed input ends as, counted per format, and what a fuzzing target is.

Every mutant ends as one of: a clean error (a ``GameError``; a ``400``; an ``error``
message other than ``internal``), accepted, an internal error (any other exception, a
``500``, an ``internal`` error or a traceback in a server's log, a dead server), or a
hang (no answer within the time limit). Failing inputs are written to ``save``.
"""

from __future__ import annotations

import random
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from solvers.errors import GameError


@dataclass
class Tally:
    """The outcomes of one format's mutants."""

    seeds: int = 0
    mutants: int = 0
    errors: int = 0  # clean errors
    accepted: int = 0
    internal: int = 0  # tracebacks / internal errors
    hangs: int = 0
    examples: list[str] = field(default_factory=list)  # the first failures, described

    def add(self, outcome: str, mutant: str | bytes, detail: str, save: Path | None,
            name: str) -> None:
        self.mutants += 1
        if outcome == "error":
            self.errors += 1
        elif outcome == "accepted":
            self.accepted += 1
        else:
            if outcome == "internal":
                self.internal += 1
            else:
                self.hangs += 1
            if len(self.examples) < 5:
                self.examples.append(f"{outcome}: {detail.strip()[-1500:]}")
            if save is not None:
                save.mkdir(parents=True, exist_ok=True)
                data = mutant if isinstance(mutant, bytes) else mutant.encode("utf-8",
                                                                               "surrogatepass")
                (save / f"{name}-{self.mutants}-{outcome}").write_bytes(data)

    def row(self) -> dict[str, int]:
        return {"seeds": self.seeds, "mutants": self.mutants, "clean_errors": self.errors,
                "accepted": self.accepted, "internal_errors": self.internal,
                "hangs": self.hangs}


def classify(job: Callable[[], None]) -> tuple[str, str]:
    """('accepted' | 'error' | 'internal', detail) of running ``job``."""
    try:
        job()
    except GameError as exc:
        return "error", str(exc)
    except Exception:  # exactly what the fuzzer looks for
        return "internal", traceback.format_exc()
    return "accepted", ""


#: ``progress(name, tally)`` after each mutant
Progress = Callable[[str, Tally], None]


@dataclass(frozen=True)
class Target:
    """One input of ``ggp bench fuzz``, fuzzed where it is read.

    ``what`` names it in the bench's help (".kif", "websocket messages to a real
    server"); ``fuzz(name, mutants, rng, time_limit, save, progress)`` feeds it
    ``mutants`` mutants drawn from ``rng``, each within ``time_limit`` seconds, and
    returns their tally, or None when it has no seeds (skipped). ``name`` is the
    format's name in ``--formats``: the tally's name in ``progress`` and in the
    files written to ``save``.
    """

    what: str
    fuzz: Callable[[str, int, random.Random, float, Path | None, Progress], Tally | None]
