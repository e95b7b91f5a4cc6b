"""The ``agent`` / ``agent:NAME`` seat: our own agent, launched as a subprocess.

The server never imports ``agent`` (the layers stay apart): it runs
``python -m ggp_cli agent --ws URL --name NAME --quiet`` with a unique name (and its
secret in the environment variable ``GGP_AGENT_TOKEN``) and seats it as a ``ws:NAME``
player; the process is stopped when the match ends. The options ``margin``, ``seed``,
``simultaneous`` and ``solutions`` after ``?`` are passed on as ``--KEY VALUE`` (only
these, each checked: a spec may also come from a ``create`` message).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import sys
from pathlib import Path

from server.credentials import ENV_ADMIN_TOKEN
from server.players.base import SeatHost, SeatInfo, SeatUnfilled
from server.players.spec import PlayerSpec
from server.players.websocket import WsSeat
from server.protocol import MAX_SEED
from solvers.errors import GameError

AGENT_TOKEN_VARIABLE = "GGP_AGENT_TOKEN"  # read by ``ggp agent`` (agent/cli.py)
AGENT_OPTIONS = ("margin", "seed", "simultaneous", "solutions")
SEARCH_POLICIES = ("duct", "rm")


def agent_arguments(spec: PlayerSpec) -> list[str]:
    """The launched agent's options from the spec's, each checked (only these reach its
    command line; ``solutions`` must be an existing folder, passed as an absolute path)."""
    args: list[str] = []
    for key, value in spec.options.items():
        if key == "wait":
            continue
        if key == "margin":
            value = repr(spec.option_float("margin", 0.5))
        elif key == "seed":
            if not value.isdigit() or int(value) > MAX_SEED:
                raise GameError(f"player {spec.text!r}: seed must be an integer in "
                                f"[0, {MAX_SEED}]")
        elif key == "simultaneous":
            if value not in SEARCH_POLICIES:
                raise GameError(f"player {spec.text!r}: simultaneous is duct or rm")
        elif key == "solutions":
            folder = Path(value).resolve()
            if not folder.is_dir():
                raise GameError(f"player {spec.text!r}: the solutions folder {value!r} "
                                "does not exist")
            value = str(folder)
        else:
            raise GameError(f"player {spec.text!r}: agent options are "
                            f"{', '.join(AGENT_OPTIONS)} and wait")
        args += [f"--{key}", value]
    return args


class LaunchedAgent(WsSeat):
    def __init__(self, spec: PlayerSpec, server: SeatHost) -> None:
        unique = f"{spec.target or 'agent'}-{secrets.token_hex(4)}"
        super().__init__(PlayerSpec("ws", unique, spec.options, spec.text), server.lobby,
                         spec.option_float("wait", server.seat_wait))
        self.url = server.url
        self.extra = agent_arguments(spec)
        # its name and secret, for this server process only; the secret goes to the
        # agent in its environment, not on its command line (which ps shows)
        self.secret = secrets.token_urlsafe(32)
        server.identities.register_here(unique, self.secret)
        self.process: asyncio.subprocess.Process | None = None

    async def start(self, seat: SeatInfo) -> None:
        try:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "ggp_cli", "agent", "--ws", self.url, "--name", self.name,
                "--quiet", *self.extra, stdin=asyncio.subprocess.DEVNULL,
                env={**{k: v for k, v in os.environ.items() if k != ENV_ADMIN_TOKEN},
                     AGENT_TOKEN_VARIABLE: self.secret})
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
