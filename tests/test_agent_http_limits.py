"""Items 10 and 11 of issue 32: a whole-request deadline and a connection cap in the
agent's HTTP server; START accepted from the managers' hosts only (loopback by default)."""

from __future__ import annotations

import asyncio
import time

import pytest
from test_agent_matches import Agents, post
from test_agent_robustness import TINY, raw

from agent import http_player
from agent.cli import manager_addresses


async def test_a_start_from_a_stranger_is_refused() -> None:
    async with Agents(1, player_options={"managers": frozenset({"192.0.2.7"})}) as (port,):
        body = f"(START m1 p ({TINY}) 1 1)".encode()
        reply = await raw(port, b"POST / HTTP/1.0\r\nContent-Length: %d\r\n\r\n%s"
                          % (len(body), body))
        assert reply.startswith(b"HTTP/1.0 403 Forbidden") and b"managers" in reply
        assert await post(port, "(info)", 5) == "( ( name agent0 ) ( status available ) )"


async def test_loopback_managers_by_default() -> None:
    assert manager_addresses(["localhost"]) == http_player.LOOPBACK
    assert "127.0.0.1" in manager_addresses(["127.0.0.1"])
    async with Agents(1) as (port,):
        assert await post(port, f"(START m1 p ({TINY}) 5 1)", 10) == "ready"


async def test_a_trickling_request_is_dropped_at_its_deadline(monkeypatch) -> None:
    monkeypatch.setattr(http_player, "REQUEST_TIMEOUT", 1.0)
    async with Agents(1) as (port,):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST / HTTP/1.0\r\nContent-Length: 1000\r\n\r\n")
        started = time.monotonic()
        closed = None
        for _ in range(100):  # a byte every 0.1 s: each read well within READ_TIMEOUT
            try:
                writer.write(b"x")
                await writer.drain()
            except ConnectionError:
                closed = time.monotonic()
                break
            if reader.at_eof() or await _closed(reader):
                closed = time.monotonic()
                break
        writer.close()
        assert closed is not None and closed - started < 8  # 1 s deadline; margin for load


async def _closed(reader: asyncio.StreamReader) -> bool:
    try:
        return await asyncio.wait_for(reader.read(1), 0.1) == b""
    except TimeoutError:
        return False


async def test_connections_beyond_the_cap_are_refused(monkeypatch) -> None:
    monkeypatch.setattr(http_player, "MAX_CONNECTIONS", 2)
    async with Agents(1) as (port,):
        idle = [await asyncio.open_connection("127.0.0.1", port) for _ in range(2)]
        await asyncio.sleep(0.5)  # both are being read
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        reply = await asyncio.wait_for(reader.read(), 10)  # at once, nothing read
        writer.close()
        assert reply.startswith(b"HTTP/1.0 503")
        for _, writer in idle:
            writer.close()
        await asyncio.sleep(0.5)
        assert await post(port, "(info)", 5) == "( ( name agent0 ) ( status available ) )"


pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")
