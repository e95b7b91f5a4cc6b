"""Agent identities: a name belongs to the secret it was registered with.

A name is registered by the operator (``ggp serve --agents FILE``, which also replaces
secrets), by a ``hello`` that carries the admin token, or, on a server started with
``--open-registration``, by its first ``hello``; the embedded servers of ``ggp match``
and ``ggp tournament`` also register the names of their ``ws:NAME`` seats (from the
start: ``MatchServer(seat_names=...)``) and those a seat is waiting for.
Any other new name is refused (``not-registered``), so strangers cannot fill the records
with names or squat the operator's. Every later login of a name must present its
secret (``bad-secret``). The records keep a salted slow hash (``server/credentials.py``),
so names survive restarts and the database holds no secret. The agents the server
launches get a fresh name and secret for this process only.

The slow hashes run on a thread of their own, one at a time, so guessing never takes the
threads the pages use; checked secrets are remembered for this process as a keyed
digest, so a later login of the name (a reconnection, a wrong guess) costs no slow hash.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from server.credentials import hash_secret, verify_secret
from server.protocol import ProtocolError
from server.records import Records

T = TypeVar("T")


class Identities:
    def __init__(self, records: Records) -> None:
        self.records = records
        self._key = secrets.token_bytes(32)
        self._known: dict[str, bytes] = {}  # name -> keyed digest of its secret
        self._hashes = ThreadPoolExecutor(1, thread_name_prefix="secret-hash")

    def _digest(self, secret: str) -> bytes:
        return hmac.new(self._key, secret.encode(), hashlib.sha256).digest()

    async def _slow(self, fn: Callable[..., T], *args: str) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._hashes, fn, *args)

    async def register(self, agents: dict[str, str]) -> None:
        """The operator's names and secrets (they replace earlier registrations)."""
        for name, secret in agents.items():
            hashed = await self._slow(hash_secret, secret)
            await self.records.register_agent(name, hashed, "operator", replace=True)
            self._known[name] = self._digest(secret)

    def register_here(self, name: str, secret: str) -> None:
        """A name for this process only (an agent the server launches)."""
        self._known[name] = self._digest(secret)

    def holds(self, name: str, secret: str) -> bool:
        """Whether ``secret`` is the checked secret of ``name`` (constant time)."""
        known = self._known.get(name)
        return known is not None and hmac.compare_digest(known, self._digest(secret))

    async def check(self, name: str, secret: str, may_register: bool) -> None:
        """Log-in check: raises ``bad-secret`` unless ``secret`` is the name's; a name new
        to the server is registered with it when ``may_register``, else ``not-registered``."""
        if name not in self._known:
            stored = await self.records.agent_hash(name)
            if stored is None:
                if not may_register:
                    raise ProtocolError(
                        "not-registered", f"{name!r} is not registered on this server: the "
                        "operator registers names (ggp serve --agents FILE, or a hello with "
                        "the admin token)", ref="hello")
                candidate = await self._slow(hash_secret, secret)
                stored = await self.records.register_agent(name, candidate)
                if stored == candidate:
                    self._known[name] = self._digest(secret)
            if name not in self._known and await self._slow(verify_secret, secret, stored):
                self._known[name] = self._digest(secret)
        if not self.holds(name, secret):
            raise ProtocolError("bad-secret", f"{name!r} is registered with another secret "
                                "(its hello token); log in with that one or choose another "
                                "name", ref="hello")

    def close(self) -> None:
        self._hashes.shutdown(wait=False, cancel_futures=True)
