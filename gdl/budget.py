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

A whole command that cannot count its work in steps or states (``ggp check``: one
query of the general prover can enumerate 2^300 rows) is bounded from outside by
:func:`watched`: wall clock and resident memory growth, checked ten times a second.

Each stage's defaults are its own fields' defaults, so ``Budget()`` grounds with
300,000 steps and 60 s, and expands up to 2,000,000 states and 8 GB of growth.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

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


def resident_mb() -> float:
    """This process's resident memory in MB (Linux /proc; 0 where unavailable)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


WATCH_SECONDS = 0.1     # between two checks of :func:`watched`


@dataclass
class Watch:
    """What :func:`watched` is bounding: ``doing`` names the current phase in the
    message (``"while loading the engine"``)."""

    time_limit: float | None
    memory_mb: float | None
    doing: str = ""
    started: float = field(default_factory=time.monotonic)
    base_mb: float = field(default_factory=resident_mb)

    def check(self) -> None:
        """LimitReached past the time limit or the memory budget (resident growth)."""
        seconds = time.monotonic() - self.started
        doing = f" {self.doing}" if self.doing else ""
        if self.time_limit is not None and seconds > self.time_limit:
            raise LimitReached(f"the time limit of {self.time_limit:g} s was reached{doing} "
                               "(raise --time-limit)")
        if self.memory_mb is not None and resident_mb() - self.base_mb > self.memory_mb:
            raise LimitReached(f"the memory budget of {self.memory_mb:,g} MB was reached{doing} "
                               f"after {seconds:.1f} s (raise --memory-mb)")


@contextmanager
def watched(time_limit: float | None, memory_mb: float | None) -> Iterator[Watch]:
    """Run the block under a wall-clock limit and a memory budget (resident growth),
    checked every :data:`WATCH_SECONDS` by a timer signal: the check raises
    :class:`~solvers.errors.LimitReached` in the main thread, in the middle of whatever
    Python code runs there (the prover's queries clear their tables when interrupted).
    A MemoryError (a spike between two checks) becomes the same LimitReached. Outside
    the main thread, or with no limit given, the block runs unwatched."""
    watch = Watch(time_limit, memory_mb)
    armed = (time_limit is not None or memory_mb is not None) \
        and threading.current_thread() is threading.main_thread()
    if not armed:
        yield watch
        return

    def on_timer(signum: int, frame: FrameType | None) -> None:
        watch.check()

    hook = sys.unraisablehook

    def on_unraisable(unraisable: Any) -> None:
        # a tick that lands in a finalizer or a gc callback cannot raise there; the next
        # tick raises the same LimitReached in the block, so this one is not reported
        if not isinstance(unraisable.exc_value, LimitReached):
            hook(unraisable)

    previous = signal.signal(signal.SIGALRM, on_timer)
    sys.unraisablehook = on_unraisable
    signal.setitimer(signal.ITIMER_REAL, WATCH_SECONDS, WATCH_SECONDS)
    try:
        yield watch
    except MemoryError:
        raise LimitReached(f"the machine ran out of memory{' ' + watch.doing if watch.doing else ''} "
                           f"after {time.monotonic() - watch.started:.1f} s (a lower "
                           "--memory-mb stops the work earlier)") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        signal.signal(signal.SIGALRM, previous)
        sys.unraisablehook = hook
