"""The ``agent`` / ``agent:NAME`` seat: our own agent, launched as a subprocess.

The server never imports ``agent`` (the layers stay apart): it runs
``python -m ggp_cli agent --ws URL --name NAME --quiet`` with a unique name and seats it as a
``ws:NAME`` player; the process is stopped when the match ends. The options
``margin``, ``seed`` and ``simultaneous`` after ``?`` are passed on as ``--KEY VALUE``
(only these, with plain values: a spec may come from a remote ``create`` message, and
nothing in a message may choose what the server runs).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import sys
from typing import TYPE_CHECKING

from server.players.base import SeatInfo, SeatUnfilled
from server.players.spec import PlayerSpec
from server.players.websocket import WsSeat
from solvers.errors import GameError

if TYPE_CHECKING:
    from server.app import MatchServer


AGENT_OPTIONS = ("margin", "seed", "simultaneous")
_PLAIN = re.compile(r"[A-Za-z0-9_.-]{1,32}")


def _agent_option(spec: PlayerSpec, key: str, value: str) -> tuple[str, str]:
    if key not in AGENT_OPTIONS or not _PLAIN.fullmatch(value):
        raise GameError(f"player {spec.text!r}: agent options are "
                        f"{', '.join(AGENT_OPTIONS)} (and wait) with plain values")
    return f"--{key}", value


class LaunchedAgent(WsSeat):
    def __init__(self, spec: PlayerSpec, server: MatchServer) -> None:
        unique = f"{spec.target or 'agent'}-{secrets.token_hex(4)}"
        super().__init__(PlayerSpec("ws", unique, spec.options, spec.text), server.lobby,
                         spec.option_float("wait", server.seat_wait))
        self.url = server.url
        self.extra = [arg for key, value in spec.options.items() if key != "wait"
                      for arg in _agent_option(spec, key, value)]
        self.process: asyncio.subprocess.Process | None = None

    async def start(self, seat: SeatInfo) -> None:
        try:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "ggp_cli", "agent", "--ws", self.url, "--name", self.name,
                "--quiet", *self.extra, stdin=asyncio.subprocess.DEVNULL)
        except OSError as exc:
            raise SeatUnfilled(f"cannot launch the agent: {exc}") from None
        joining = asyncio.ensure_future(super().start(seat))
        exited = asyncio.ensure_future(self.process.wait())
        await asyncio.wait({joining, exited}, return_when=asyncio.FIRST_COMPLETED)
        exited.cancel()
        if not joining.done():  # the agent died before taking its seat: do not wait for it
            joining.cancel()
            raise SeatUnfilled(f"the launched agent exited with status "
                               f"{self.process.returncode} before joining")
        joining.result()

    async def close(self) -> None:
        await super().close()
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.terminate()
            try:
                await asyncio.wait_for(self.process.wait(), 5)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    self.process.kill()
                await self.process.wait()
