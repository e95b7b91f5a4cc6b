"""Limits per client address: open sockets, failed secrets, expensive reads.

Clients are told apart by their IP address (a new socket has a new port), so one address
cannot take every socket, guess secrets without slowing down, or keep the page threads
busy for everyone:

- :class:`SocketCounts`: the sockets an address has open (at most ``per_address``).
- :class:`Failures`: wrong secrets and tokens of an address. Past ``FREE_FAILURES`` within
  ``WINDOW`` seconds, the address is locked out for ``BACKOFF`` seconds, doubled by every
  further failure up to ``MAX_BACKOFF``; while locked out its logins and tokens are refused
  unchecked (no slow hash is computed for it). Failures are logged once per
  ``LOG_INTERVAL`` per address, with their count, not one line each.
- :class:`ReadBudget`: a token bucket per address for the reads that cost the server
  (pages, match records, the snapshot of a finished match).

Every table is bounded (``MAX_ADDRESSES``, the least recently seen dropped first), so
the limits themselves cannot be made to grow without bound.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from server.protocol import ProtocolError

log = logging.getLogger(__name__)

MAX_ADDRESSES = 4096
FREE_FAILURES = 10  # wrong secrets or tokens an address may make in WINDOW without a wait
WINDOW = 60.0
BACKOFF = 1.0  # the first lockout, seconds; doubled by every further failure
MAX_BACKOFF = 300.0
LOG_INTERVAL = 60.0
READ_BURST = 30  # expensive reads an address may make at once
READ_RATE = 5.0  # ... and then per second


def peer_address(remote: Any) -> str:
    """A socket's client address (host only) from its ``remote_address``."""
    return str(remote[0]) if isinstance(remote, tuple) and remote else "?"


class _Table(OrderedDict[str, Any]):
    """A bounded table keyed by address, least recently used first."""

    def entry(self, address: str, make: Callable[[], Any]) -> Any:
        value = self.get(address)
        if value is None:
            value = self[address] = make()
            while len(self) > MAX_ADDRESSES:
                self.popitem(last=False)
        else:
            self.move_to_end(address)
        return value


class SocketCounts:
    """Open sockets per address."""

    def __init__(self, per_address: int) -> None:
        self.per_address = per_address
        self.open: dict[str, int] = {}

    def add(self, address: str) -> bool:
        """Count a new socket of ``address``; False (not counted) when it has too many."""
        count = self.open.get(address, 0)
        if count >= self.per_address:
            return False
        self.open[address] = count + 1
        return True

    def remove(self, address: str) -> None:
        count = self.open.get(address, 0) - 1
        if count > 0:
            self.open[address] = count
        else:
            self.open.pop(address, None)


@dataclass
class _Record:
    times: list[float] = field(default_factory=list)  # failures within the window
    locked_until: float = 0.0
    unlogged: int = 0
    logged_at: float = float("-inf")


class Failures:
    """Wrong secrets and tokens per address, with lockouts (module docstring)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.table = _Table()

    def locked(self, address: str) -> float:
        """Seconds ``address`` must still wait before its secrets are checked (0: none)."""
        record = self.table.get(address)
        return 0.0 if record is None else max(0.0, record.locked_until - self.clock())

    def fail(self, address: str, what: str) -> None:
        """One failure of ``address`` (``what`` failed, for the log)."""
        now = self.clock()
        record = self.table.entry(address, _Record)
        record.times = [t for t in record.times if now - t < WINDOW][-FREE_FAILURES * 4:]
        record.times.append(now)
        excess = len(record.times) - FREE_FAILURES
        if excess > 0:
            record.locked_until = now + min(MAX_BACKOFF, BACKOFF * 2 ** (excess - 1))
        record.unlogged += 1
        if now - record.logged_at >= LOG_INTERVAL:
            log.warning("%d failed %s from %s%s", record.unlogged, what, address,
                        "" if record.logged_at == float("-inf")
                        else f" in the last {now - record.logged_at:.0f} s")
            record.unlogged, record.logged_at = 0, now


class ReadBudget:
    """A token bucket per address for expensive reads (module docstring)."""

    def __init__(self, burst: int = READ_BURST, rate: float = READ_RATE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.burst = burst
        self.rate = rate
        self.clock = clock
        self.table = _Table()

    def take(self, address: str) -> float:
        """Take one read for ``address``: 0.0, or the seconds until it may read again."""
        now = self.clock()
        tokens, then = self.table.entry(address, lambda: (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.rate)
        if tokens < 1.0:
            self.table[address] = (tokens, now)
            return (1.0 - tokens) / self.rate
        self.table[address] = (tokens - 1.0, now)
        return 0.0


class Throttled(ProtocolError):
    """Refused for now: ``wait`` seconds before the address may try again."""

    def __init__(self, code: str, message: str, wait: float, match: str | None = None,
                 ref: str | None = None) -> None:
        super().__init__(code, message, match, ref)
        self.wait = wait


class Guard:
    """The limits of one server, by client address (module docstring)."""

    def __init__(self, per_address: int) -> None:
        self.sockets = SocketCounts(per_address)
        self.failures = Failures()
        self.reads = ReadBudget()

    def check_locked(self, address: str, ref: str | None = None,
                     match: str | None = None) -> None:
        """Raise ``locked-out`` while ``address`` must wait before a secret is checked."""
        wait = self.failures.locked(address)
        if wait:
            raise Throttled("locked-out", f"too many wrong secrets or tokens from your "
                            f"address: try again in {wait:.0f} s", wait, match, ref)

    def check_read(self, address: str, ref: str | None = None,
                   match: str | None = None) -> None:
        """Take one expensive read for ``address``; ``too-many`` when it reads too fast."""
        wait = self.reads.take(address)
        if wait:
            raise Throttled("too-many", f"too many reads from your address: try again "
                            f"in {wait:.1f} s", wait, match, ref)
