"""Ctrl-C in a terminal (issue 14, item 13): SIGINT to the whole process group, as a
terminal sends it, reaches ``ggp agent`` (or ``ggp match``), the launched agent and
their worker processes. One line ``interrupted``, exit 130, no traceback, no process
left behind."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import GAMES, REPO
from test_agent_hostile import connect_four
from test_agent_matches import free_port, wait_for_info

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def group_commands(group: int) -> list[str]:
    """Command lines of the live processes in process group ``group``."""
    commands = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == group and fields[0] != "Z":
                commands.append((stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
    return commands


async def until(condition, seconds: float = 60.0) -> None:
    stop = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < stop, "timed out"
        await asyncio.sleep(0.1)


NOT_READY = re.compile(r"\S+ \S+ agent WARNING the game was not ready within the start "
                       r"clock; going on")


def launch(*args: str, cwd: Path) -> subprocess.Popen:
    """``python -m ggp_cli ARGS`` in a process group of its own, as a terminal would."""
    return subprocess.Popen([sys.executable, "-m", "ggp_cli", *args], cwd=cwd,
                            env={**os.environ, "PYTHONPATH": str(REPO)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, start_new_session=True)


async def ctrl_c(process: subprocess.Popen) -> str:
    """Send SIGINT to the group; the command's stderr, once every process of it is gone."""
    os.killpg(process.pid, signal.SIGINT)
    _, err = await asyncio.to_thread(process.communicate, timeout=30)
    await until(lambda: not group_commands(process.pid), 10)
    return err.decode()


async def send_start(port: int) -> asyncio.StreamWriter:
    """START connectFour with a long start clock; the reply is never read."""
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    body = f"(START m1 red ({connect_four()}) 60 60)".encode()
    writer.write(b"POST / HTTP/1.0\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    await writer.drain()
    return writer


def assert_one_line(err: str) -> None:
    assert "Traceback" not in err and "ERROR" not in err and "WARNING" not in err, err
    assert err.splitlines()[-1] == "interrupted" and err.count("interrupted") == 1, err


async def test_ctrl_c_stops_ggp_agent_and_its_worker_quietly(tmp_path: Path) -> None:
    port = free_port()
    process = launch("agent", "--http", str(port), cwd=tmp_path)
    try:
        await wait_for_info(port)
        # a long start clock: the worker is metagaming when Ctrl-C comes
        start = await send_start(port)
        await until(lambda: any("agent.worker" in c for c in group_commands(process.pid)))
        await asyncio.sleep(1.5)
        err = await ctrl_c(process)
        start.close()
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 130
    assert_one_line(err)


@pytest.mark.slow
async def test_ctrl_c_stops_ggp_match_with_an_agent_seat_quietly(tmp_path: Path) -> None:
    process = launch("match", str(GAMES / "gdl" / "simultaneous_tictactoe.kif"),
                     "--players", "agent", "random", "--startclock", "3", "--playclock", "60",
                     "--db", str(tmp_path / "matches.sqlite"), cwd=tmp_path)
    try:
        # the launched agent (in the same group, as under a terminal) has its worker
        await until(lambda: any("agent.worker" in c for c in group_commands(process.pid)))
        await asyncio.sleep(5)  # past the start clock: its first PLAY is being searched
        err = await ctrl_c(process)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 130
    # on a loaded machine the agent's worker may not be ready within the 3 s start clock,
    # and the agent says so before the Ctrl-C comes: that line is not the interrupt's
    lines = [x for x in err.splitlines() if not NOT_READY.fullmatch(x)]
    assert lines == ["interrupted"], err


async def test_the_worker_dies_with_its_agent(tmp_path: Path) -> None:
    """kill -9 of the agent (or a server terminating a launched one) mid-search: the
    worker does not search on for the rest of its clock."""
    port = free_port()
    process = launch("agent", "--http", str(port), "--quiet", cwd=tmp_path)
    try:
        await wait_for_info(port)
        start = await send_start(port)
        await until(lambda: any("agent.worker" in c for c in group_commands(process.pid)))
        await asyncio.sleep(1.5)
        process.kill()  # the agent alone, not its group
        await asyncio.to_thread(process.wait)
        await until(lambda: not group_commands(process.pid), 10)
        start.close()
    finally:
        if group_commands(process.pid):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
