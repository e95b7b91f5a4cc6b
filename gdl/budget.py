"""The one budget type: the explicit limits of a game's grounding and expansion.

ARCHITECTURE.md invariant 7: limits are explicit. A :class:`Budget` carries the limits
of every stage of the GDL pipeline that can run out; each stage reads the ones it knows
and raises :class:`~solvers.errors.LimitReached`, naming the limit reached:

- grounding (:mod:`gdl.reasoning.ground`, for the compiled engine): ``max_steps``
  join steps, the deciding limit (a count, so the engine choice does not depend on
  how busy the machine is), and ``max_seconds`` of wall clock from the budget's
  creation, a safety net only; ``steps`` counts the join steps spent;
- expansion (:mod:`gdl.expansion`): ``max_states`` states found, ``time_limit``
  seconds and ``memory_mb`` of resident memory growth, ``None`` meaning unlimited.
  The time limit counts from ``started`` (a ``time.perf_counter()`` value, so a
  command's loading time can count too), by default from the expansion's start.
  ``sample(seconds, states)`` is called at every budget check (seconds from the
  expansion's start, states found so far): ``ggp solve --trace`` records it.

Each stage's defaults are its own fields' defaults, so ``Budget()`` grounds with
300,000 steps and 60 s, and expands up to 2,000,000 states and 8 GB of growth.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from solvers.errors import LimitReached


@dataclass(kw_only=True)
class Budget:
    """Limits of grounding and of expansion (see the module docstring).

    Grounding: 300,000 join steps take about 1.5 s. Games that need more (checkers
    554,000, endgame 567,000, brawl 2.8 million) took 5 to 11 s to compile and then
    played no faster than the general engine (checkers 2,100 vs 3,400 random-playout
    steps/s, endgame 670 vs 9,600), and declining a game at 1,000,000 steps cost
    7 s (chess).
    """

    # expansion
    max_states: int | None = 2_000_000
    time_limit: float | None = None
    memory_mb: float | None = 8192.0
    started: float | None = None
    sample: Callable[[float, int], None] | None = None
    # grounding
    max_steps: int = 300_000     # the deciding limit: deterministic, whatever the load
    max_seconds: float = 60.0    # a safety net only
    steps: int = 0
    calls: int = 0
    created: float = field(default_factory=time.monotonic)

    def spend_steps(self, n: int = 1) -> None:
        """Count ``n`` join steps of grounding; LimitReached past ``max_steps`` (and,
        every 64 calls, past ``max_seconds``: a step over a 300-argument relation
        takes 0.5 ms)."""
        self.steps += n
        if self.steps > self.max_steps:
            raise LimitReached(f"grounding exceeds {self.max_steps} join steps")
        self.calls += 1
        if self.calls & 0x3F == 0:
            self.check_grounding_clock()

    def check_grounding_clock(self) -> None:
        """Grounding's wall-clock limit; also checked before each join, since planning
        joins is work no step counts (duplicateStateLarge: 20,000 joins, 36 s of
        planning within 9,000 steps)."""
        if time.monotonic() - self.created > self.max_seconds:
            raise LimitReached(f"grounding exceeds {self.max_seconds:g} s")
