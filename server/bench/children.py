"""The benches' client processes (bots, page readers): started with a pipe on their
stdin that only the bench holds, so a child ends when its bench ends however that
happens (Ctrl-C, ``timeout``'s SIGTERM, a crash), instead of playing on as an orphan
that keeps the bench's output pipe open."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Callable

from solvers.errors import GameError

START_TIMEOUT = 120.0  # seconds a child has to print "ready"


async def start_child(args: list[str], what: str) -> asyncio.subprocess.Process:
    """``python ARGS`` once it has printed ``ready`` (its stdout stays a pipe)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert process.stdout is not None
    try:
        line = await asyncio.wait_for(process.stdout.readline(), START_TIMEOUT)
    except TimeoutError:
        line = b""
    if line.strip() != b"ready":
        await stop_child(process)
        if line == b"" and process.returncode:  # its own error line is on stderr
            raise GameError(f"the bench's {what} process failed (exit {process.returncode})")
        raise GameError(f"the bench's {what} process was not ready within {START_TIMEOUT:.0f} s")
    return process


async def stop_child(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.terminate()
    await process.wait()


async def all_ready(events: list[asyncio.Event], tasks: list[asyncio.Task[None]],
                    what: str) -> None:
    """Until every event is set; a task that ends first (a client refused, a socket
    closed) fails the child at once with its reason, instead of a wait without end."""
    ready = asyncio.ensure_future(asyncio.gather(*(e.wait() for e in events)))
    await asyncio.wait([ready, *tasks], return_when=asyncio.FIRST_COMPLETED)
    if ready.done():
        return
    gone = next(k for k, task in enumerate(tasks) if task.done())
    error = tasks[gone].exception()
    for task in (ready, *tasks):
        task.cancel()
    await asyncio.gather(ready, *tasks, return_exceptions=True)
    raise GameError(f"{what} {gone} was not ready: {error or 'its socket closed'}")


def child_main(main: Callable[[list[str]], int]) -> None:
    """``python -m`` a bench module: its errors are one line on stderr, as ggp's are."""
    try:
        code = main(sys.argv[1:])
    except GameError as exc:
        sys.exit(f"error: {exc}")
    sys.exit(code)


def exit_with_parent() -> None:
    """In a child: exit as soon as the bench's end of stdin closes."""
    def watch() -> None:
        # (os.read, not sys.stdin: a daemon thread blocked in a buffered read would
        # hold its lock when the interpreter shuts down)
        while os.read(0, 1 << 12):
            pass
        os._exit(0)

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()
