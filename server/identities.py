"""Agent identities: a name belongs to whoever first logged in with it (or the operator).

The first ``hello`` of a name registers it with the hello's ``token`` as its secret;
every later login of that name must present the same secret (``bad-secret``). The
records keep a salted slow hash (``server/credentials.py``), so names survive restarts
and the database holds no secret. ``ggp serve --agents FILE`` registers names ahead
(and replaces their secrets). The agents the server launches get a fresh name and
secret for this process only.

Checked secrets are remembered for this process as a keyed digest: a later login of
the name (a reconnection, a wrong guess) costs no slow hash.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets

from server.credentials import hash_secret, verify_secret
from server.protocol import ProtocolError
from server.records import Records


class Identities:
    def __init__(self, records: Records) -> None:
        self.records = records
        self._key = secrets.token_bytes(32)
        self._known: dict[str, bytes] = {}  # name -> keyed digest of its secret

    def _digest(self, secret: str) -> bytes:
        return hmac.new(self._key, secret.encode(), hashlib.sha256).digest()

    async def register(self, agents: dict[str, str]) -> None:
        """The operator's names and secrets (they replace earlier registrations)."""
        for name, secret in agents.items():
            hashed = await asyncio.to_thread(hash_secret, secret)
            await self.records.register_agent(name, hashed, "operator", replace=True)
            self._known[name] = self._digest(secret)

    def register_here(self, name: str, secret: str) -> None:
        """A name for this process only (an agent the server launches)."""
        self._known[name] = self._digest(secret)

    def holds(self, name: str, secret: str) -> bool:
        """Whether ``secret`` is the checked secret of ``name`` (constant time)."""
        known = self._known.get(name)
        return known is not None and hmac.compare_digest(known, self._digest(secret))

    async def check(self, name: str, secret: str) -> None:
        """Log-in check: registers a new name, else raises ``bad-secret`` unless ``secret``
        is the name's."""
        if name not in self._known:
            candidate = await asyncio.to_thread(hash_secret, secret)
            stored = await self.records.register_agent(name, candidate)
            if stored == candidate or await asyncio.to_thread(verify_secret, secret, stored):
                self._known[name] = self._digest(secret)
        if not self.holds(name, secret):
            raise ProtocolError("bad-secret", f"{name!r} is registered with another secret "
                                "(its hello token); log in with that one or choose another "
                                "name", ref="hello")
