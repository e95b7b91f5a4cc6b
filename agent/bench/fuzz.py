"""The ``ggp-http`` target of ``ggp bench fuzz``: the agent's GGP HTTP endpoint.

One HTTP request (a mutant of a GGP message of every kind as ggp-base's GameServer
posts it, :func:`gdl.fuzz.mutate.mutate_request`) goes to a real GGP HTTP player
(``agent.http_player`` on 127.0.0.1, in this process) that is in a match, so PLAY,
STOP and ABORT reach it. A ``400`` (or a ``200`` that says ``error:``) is a clean
error; a ``500``, an ``internal error`` reply, or a worker's own failure (a move or
START answered with ``internal error``) is an internal error; no reply within the
time limit is a hang.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
from pathlib import Path

from agent.brains.options import BrainOptions
from agent.gamer import Gamer
from agent.http_player import GgpPlayer, serve
from gdl.fuzz.files import smallest_game
from gdl.fuzz.mutate import mutate_request
from gdl.fuzz.tally import Progress, Tally, Target


def http_message(body: str) -> bytes:
    """A GGP message as ggp-base's GameServer posts it."""
    payload = body.encode()
    return (b"POST / HTTP/1.0\r\nAccept: text/delim\r\nHost: 127.0.0.1\r\n"
            b"Sender: GAMESERVER\r\nReceiver: fuzz\r\nContent-Type: text/acl\r\n"
            + f"Content-Length: {len(payload)}\r\n\r\n".encode() + payload)


def http_seeds(rules: str, role: str) -> list[bytes]:
    post = http_message
    return [post("(INFO)"), post(f"(START fuzz {role} ({rules}) 0.5 0.2)"),
            post(f"(PREVIEW ({rules}) 1)"), post("(PLAY fuzz NIL)"),
            post("(PLAY fuzz ((m 1) noop))"), post("(STOP fuzz (noop noop))"),
            post("(ABORT fuzz)"), b"GET /%28%20INFO%20%29 HTTP/1.0\r\n\r\n",
            b"OPTIONS / HTTP/1.1\r\n\r\n"]


class _Failures(logging.Handler):
    """Log records with a traceback (the player's 'internal error' path)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.records.append(self.format(record))


async def _http_probe(port: int, data: bytes, time_limit: float) -> tuple[str, str]:
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(data)
        await writer.drain()
        writer.write_eof()
        reply = await asyncio.wait_for(reader.read(), time_limit)
        writer.close()
    except TimeoutError:
        return "hang", f"no reply within {time_limit} s"
    except ConnectionError as exc:
        return "internal", f"connection failed: {exc}"
    status, _, body = reply.partition(b"\r\n\r\n")
    if b"internal error" in body:  # (a START refused by the worker's own failure)
        return "internal", body.decode(errors="replace")
    if status.startswith(b"HTTP/1.0 200") and not body.startswith(b"error:"):
        return "accepted", ""
    if status.startswith((b"HTTP/1.0 200", b"HTTP/1.0 400")):  # (200 error: an invalid game)
        return "error", body.decode(errors="replace")
    return "internal", reply.decode(errors="replace")[:2000]


async def _fuzz_http(name: str, count: int, rng: random.Random, time_limit: float,
                     save: Path | None, progress: Progress) -> Tally:
    rules = smallest_game()
    role = re.search(r"\(\s*role\s+([^\s()]+)\s*\)", rules).group(1)
    seeds = http_seeds(rules, role)
    start = seeds[1]
    tally = Tally(seeds=len(seeds))
    failures = _Failures()
    logging.getLogger("agent").addHandler(failures)
    gamer = Gamer(BrainOptions(seed=rng.randrange(1 << 30)))
    # short clocks whatever a mutant says (--max-clock), so a mutant costs < 1 s
    player = GgpPlayer("fuzz", gamer, margin=0.05, max_clock=0.5)
    server = await serve(player, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        for _ in range(count):
            if player.match_id != "fuzz":  # PLAY, STOP and ABORT mutants need a match
                if player.match_id is not None:  # (a mutant's START: an atom, no spaces)
                    await _http_probe(port, http_message(f"(ABORT {player.match_id})"),
                                      time_limit)
                await _http_probe(port, start, time_limit)
            mutant = mutate_request(rng.choice(seeds), rng)
            failures.records.clear()
            decided = len(gamer.decisions)
            outcome, detail = await _http_probe(port, mutant, time_limit)
            failures.records += [str(d) for d in gamer.decisions[decided:]
                                 if "internal error" in str(d.get("reason"))]
            if failures.records and outcome != "hang":
                outcome, detail = "internal", "\n".join(failures.records)
            tally.add(outcome, mutant, f"request {mutant[:300]!r}\n{detail}", save, name)
            progress(name, tally)
    finally:
        logging.getLogger("agent").removeHandler(failures)
        server.close()
        await server.wait_closed()
        gamer.close()
    return tally


def fuzz_http(name: str, count: int, rng: random.Random, time_limit: float,
              save: Path | None, progress: Progress) -> Tally:
    """``count`` GGP HTTP mutants to a player in this process; see the module docstring."""
    return asyncio.run(_fuzz_http(name, count, rng, time_limit, save, progress))


TARGET = Target("GGP HTTP requests to a real player", fuzz_http)
