"""Item 8 of issue 32: the fallback move is always one of the role's legal moves, even
when the worker says nothing (cold, still building the game, stalled): the light
legal worker (agent.brains.legal) lists them from the rules text."""

from __future__ import annotations

import math
import socket
import subprocess
import sys
import time
from multiprocessing.connection import Connection

from conftest import shared_path

from agent.brains.options import GameSpec
from agent.gamer import Gamer, Worker


class SilentWorker(Worker):
    """A worker process that never answers (a loaded machine's cold spare, at worst)."""

    def __init__(self, *args, **kwargs) -> None:
        ours, self._theirs = socket.socketpair()  # theirs kept open: sends succeed
        self.process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                                        stdin=subprocess.DEVNULL)
        self.conn = Connection(ours.detach())
        self._seq = 0
        self.last_heard = time.monotonic()
        self._give_up_at = math.inf
        self._waiter = None

    def close(self) -> None:
        super().close()
        self._theirs.close()


async def test_a_silent_worker_still_gets_legal_fallback_moves() -> None:
    text = shared_path("gdl-corpus", "repository", "ticTacToe.kif").read_text()
    gamer = Gamer()
    gamer._take_worker = SilentWorker  # type: ignore[method-assign]
    try:
        # generous clocks: the light worker starts cold on a loaded machine too
        info = await gamer.start(GameSpec("gdl", text, "ticTacToe"), "oplayer",
                                 time.monotonic() + 6)
        assert info == {"ready": False}
        assert await gamer.play(None, time.monotonic() + 3) == "noop"
        move = await gamer.play(["(mark 1 1)", "noop"], time.monotonic() + 3)
        assert move.startswith("(mark ") and move != "(mark 1 1)"
        assert all(d["method"] == "fallback" and d["legal_known"] for d in gamer.decisions)
    finally:
        gamer.close()
