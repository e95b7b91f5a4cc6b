"""Answers made once for everyone who asks while they are being made: twenty readers of
one long match that is not cached yet cost one build on the page threads, not twenty."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SingleFlight(Generic[K, V]):
    """The answers being made, by key."""

    def __init__(self) -> None:
        self.making: dict[K, asyncio.Future[V]] = {}

    async def get(self, key: K, make: Callable[[], Awaitable[V]],
                  made: Callable[[V], None] | None = None) -> V:
        """``make()``'s answer, shared with the others that ask for ``key`` meanwhile;
        ``made(answer)`` once it is made (to cache it), even when every asker has left."""
        making = self.making.get(key)
        if making is None:
            making = self.making[key] = asyncio.ensure_future(make())
            making.add_done_callback(lambda done: self._done(key, done, made))
        return await asyncio.shield(making)  # (one asker leaving cancels no other's)

    def _done(self, key: K, done: asyncio.Future[V], made: Callable[[V], None] | None) -> None:
        del self.making[key]
        if not done.cancelled() and done.exception() is None and made is not None:
            made(done.result())
