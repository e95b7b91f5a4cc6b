"""The event loop's clock, and when the loop was last free to read its sockets.

A player's answer time runs from the request to when its answer reached the server. The
event loop only learns of an answer when it gets to the socket: if it was busy (a long
callback, or the process not scheduled on a loaded machine), an answer that came during
that stall is read late, and charging the player for the wait would turn the server's
stall into the player's timeout.

:class:`LoopClock` ticks every ``PERIOD`` seconds. A gap between two ticks longer than
``STALL`` is a stall. Whatever the loop hands on right after one (before the second tick
since it ended: the reader callbacks of that iteration and the tasks they wake) may have
come in at any moment of it, so :meth:`LoopClock.arrival` gives it the benefit of the
doubt: the moment the loop was last seen free, the stall's start. At any other time an
arrival is simply now. :meth:`LoopClock.wait` waits for an answer until a deadline and,
if the deadline passes, first lets the loop hand on what it has already read.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import TypeVar

T = TypeVar("T")

PERIOD = 0.01  # seconds between ticks
STALL = 0.05  # a gap between ticks longer than this is a stall
CATCH_UP = 8  # loop iterations an answer read by the deadline may take to reach the match

_CLOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopClock] = \
    weakref.WeakKeyDictionary()


class LoopClock:
    """The clock of one event loop (see the module docstring); :func:`running` gives the
    running loop's, started on first use."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.last = loop.time()  # the last tick
        self.stall = (0.0, 0.0)  # (start, end) of the latest stall
        self.ticks_since_stall = 2
        self.stalls = 0  # how many so far (for tests and benches)
        self._handle = loop.call_later(PERIOD, self._tick)

    def _tick(self) -> None:
        now = self.loop.time()
        if now - self.last > STALL:
            self.stall = (self.last, now)
            self.ticks_since_stall = 0
            self.stalls += 1
        else:
            self.ticks_since_stall += 1
        self.last = now
        self._handle = self.loop.call_later(PERIOD, self._tick)

    def now(self) -> float:
        return self.loop.time()

    def arrival(self) -> float:
        """When what the loop hands on now reached the server, as far as the loop can
        tell: now, or the start of the stall it just came out of (module docstring)."""
        now = self.loop.time()
        if now - self.last > STALL:  # in a stall's first iteration, before its tick
            return self.last
        if self.ticks_since_stall <= 1:
            return self.stall[0]
        return now

    async def wait(self, task: asyncio.Future[T], deadline: float) -> T:
        """``task``'s result once done, or TimeoutError (cancelling it) when it is not
        done by ``deadline`` (loop time) and not among what the loop has read by then."""
        try:
            if not task.done():
                await asyncio.wait({task}, timeout=max(0.0, deadline - self.loop.time()))
            for _ in range(CATCH_UP):  # read by the deadline but not yet handed on
                if task.done():
                    break
                await asyncio.sleep(0)
        except BaseException:  # cancelled (the match is aborted): so is the answer
            task.cancel()
            raise
        if not task.done():
            task.cancel()
            raise TimeoutError
        return task.result()

    def close(self) -> None:
        self._handle.cancel()


def running() -> LoopClock:
    """The running event loop's clock (started on first use; it ticks until the loop
    closes)."""
    loop = asyncio.get_running_loop()
    clock = _CLOCKS.get(loop)
    if clock is None or loop.is_closed():
        clock = _CLOCKS[loop] = LoopClock(loop)
    return clock

