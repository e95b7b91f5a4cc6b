"""The server benches' client processes: ``ggp bench spectators`` runs its matches
(which wait for their bots, all logged in, then start together) to the end with every
step on its pages, and a client process never outlives its bench."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import running_server

from gdl.formats import load_game
from server.bench.server import DEFAULT_GAME
from server.bench.spectators import run_once

ROOT = Path(__file__).resolve().parent.parent


def test_the_spectators_bench_plays_every_match_and_feeds_every_page(tmp_path) -> None:
    # 20 matches, 40 bots logging in one after another (each secret hashed), 20 pages
    # (their 40 reads, from one address, were past its read budget: 429, and the bench
    # waited for ever): the matches all start once the last bot is in, and every step
    # of every watched match reaches its page
    game = load_game(str(DEFAULT_GAME))
    run = asyncio.run(run_once(game, 20, 20, 0, 30.0, 1, tmp_path / "bench.sqlite"))
    assert run["completed"] == run["matches"] == 20 and run["pages"] == 20
    assert len(run["relays"]) == run["steps"] > 20 * 3   # each match: 3 to 9 steps
    assert run["expected"] > 0 and len(run["delays"]) == run["expected"]


BENCH = """
import asyncio, sys
from server.bench.children import start_child

async def main():
    child = await start_child(["-m", "server.bench.server", "--bots", sys.argv[1], "2", "1"],
                              "bot")
    print(child.pid, flush=True)
    await asyncio.sleep(600)

asyncio.run(main())
"""


async def test_a_bench_client_ends_with_its_bench(tmp_path) -> None:
    # the bots process of a bench killed by ``timeout`` (SIGTERM) used to play on as an
    # orphan holding the bench's output pipe; it now exits when its stdin closes (here
    # the server lives on, in this process, so the bots' sockets stay open)
    script = tmp_path / "bench.py"
    script.write_text(BENCH)
    async with running_server(tmp_path) as srv:
        bench = await asyncio.create_subprocess_exec(
            sys.executable, str(script), srv.url, cwd=ROOT, stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert bench.stdout is not None
        child = int(await asyncio.wait_for(bench.stdout.readline(), 120))
        bench.terminate()
        await bench.wait()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if not _alive(child):
                return
            await asyncio.sleep(0.1)
        os.kill(child, signal.SIGKILL)
        pytest.fail("the bots process outlived its bench")


def _alive(pid: int) -> bool:
    """Running (not gone, nor a zombie that its new parent has not reaped yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False
