"""``ggp bench fuzz``: mutation fuzzing of every input the project reads from others.

Six formats, each fed ``--mutants`` mutants of real seeds (the bundled games and the
test files in ``../shared``; a format without seeds is skipped):

- ``kif``, ``efg``, ``tree``, ``osposg``: a game file, loaded by the one loader
  (``gdl.formats.load_game_text``) and, when accepted, played for a few random steps
  (legal moves, observations, payoffs), in a child process with a time and memory
  limit per input;
- ``ws``: one JSON message to a real match server (``ggp serve`` on 127.0.0.1, a
  subprocess: the agent never imports the server), on a logged-in connection (a
  ``hello``/``rejoin`` mutant on a fresh one), followed by a ``ping`` that must be
  answered;
- ``ggp-http``: one HTTP request to a real GGP HTTP player (``agent.http_player`` on
  127.0.0.1, in this process) that is in a match, so PLAY, STOP and ABORT reach it.

The agent is the one layer that reads every game format, serves GGP HTTP and speaks
the server's protocol, so the bench lives here without breaking the layers.

Every mutant ends as one of: a clean error (a ``GameError``; a ``400``; an ``error``
message other than ``internal``), accepted, an internal error (any other exception, a
``500``, an ``internal`` error or a traceback in the server's log, a dead server), or
a hang (no answer within ``--time-limit``). Mutations follow tests/test_gdl_fuzz.py:
1-4 token edits (drop a token, repeat another, put a hostile one instead or before),
or numbers swapped for hostile ones (2**64, 5,000 digits, NaN, 1e308, 5/6) so the file
stays well-formed; messages also get field-level edits (a field dropped, added or set
to a hostile value: 2**64, NaN, 1e308, -1, long strings, deep lists). The worker's
own failures count too (a move or START answered with ``internal error``). A traceback
the server logs later (in a match's task) counts on the mutant during which it
appeared. Failing inputs are written to ``--save DIR``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import logging
import multiprocessing
import os
import random
import re
import resource
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websockets

from agent.brains.options import BrainOptions
from agent.gamer import Gamer
from agent.http_player import GgpPlayer, serve
from gdl.formats import load_game_text
from solvers.errors import GameError
from solvers.locations import REPO, SHARED

FILE_FORMATS = {"kif": "gdl", "efg": "efg", "tree": "tree", "osposg": "posg"}
FORMATS = (*FILE_FORMATS, "ws", "ggp-http")
MAX_SEED_BYTES = 20_000  # bigger seeds make slow mutants, not new paths
PLAY_STEPS = 30
HOSTILE_TOKENS = ["(", ")", "{", "}", "[", "]", '"', "''", ",", ";", "-1", "0", "1e308",
                  "-1e308", "nan", "inf", "1/0", "0/0", "18446744073709551616",
                  "9" * 400, "0.3333333", "?x", "not", "or", "distinct", "<=", "\\", "\x00",
                  "é", "node", "player", "chance", "terminal", "payoffs", "p", "c", "t"]
HOSTILE_VALUES: list[Any] = [None, True, -1, 0, 2**63, 2**64, 10**400, 1e308, float("nan"),
                             float("inf"), -0.5, "", "x" * 5000, "../../etc/passwd", [], {},
                             [[[[[]]]]], {"type": "ping"}, "\u0000", "ws:fuzz", "random"]
HOSTILE_NUMBERS = ["0", "1", "-1", "2", "0.5", "1/3", "5/6", "-0", "1e308", "1e-320", "nan", "inf",
                   "18446744073709551616", "9" * 400, "9" * 5000, "0.1", "100", "-100",
                   "3.0000000001", "1" + "0" * 30 + "/3"]
_NUMBER = re.compile(r"-?\d[\d./eE+-]*")
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\s+|[()\[\]{},:;=]|[^\s()\[\]{},:;="]+')


@dataclass
class Tally:
    """The outcomes of one format's mutants."""

    seeds: int = 0
    mutants: int = 0
    errors: int = 0  # clean errors
    accepted: int = 0
    internal: int = 0  # tracebacks / internal errors
    hangs: int = 0
    examples: list[str] = field(default_factory=list)  # the first failures, described

    def add(self, outcome: str, mutant: str | bytes, detail: str, save: Path | None,
            name: str) -> None:
        self.mutants += 1
        if outcome == "error":
            self.errors += 1
        elif outcome == "accepted":
            self.accepted += 1
        else:
            if outcome == "internal":
                self.internal += 1
            else:
                self.hangs += 1
            if len(self.examples) < 5:
                self.examples.append(f"{outcome}: {detail.strip()[-1500:]}")
            if save is not None:
                save.mkdir(parents=True, exist_ok=True)
                data = mutant if isinstance(mutant, bytes) else mutant.encode("utf-8",
                                                                               "surrogatepass")
                (save / f"{name}-{self.mutants}-{outcome}").write_bytes(data)

    def row(self) -> dict[str, int]:
        return {"seeds": self.seeds, "mutants": self.mutants, "clean_errors": self.errors,
                "accepted": self.accepted, "internal_errors": self.internal,
                "hangs": self.hangs}


# -- mutation ------------------------------------------------------------------------

def mutate_text(text: str, rng: random.Random) -> str:
    """1-4 token edits (whitespace kept, so lines stay lines), sometimes a truncation.
    A number swapped for another (a hostile one) keeps the file well-formed, so those
    mutants reach the checks behind the parser (probabilities, payoffs, sizes)."""
    tokens = _TOKEN.findall(text)
    numbers = [i for i, t in enumerate(tokens) if _NUMBER.fullmatch(t)]
    if numbers and rng.random() < 0.4:
        for _ in range(rng.choice((1, 1, 2))):
            tokens[rng.choice(numbers)] = rng.choice(HOSTILE_NUMBERS)
        return "".join(tokens)
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 4))):
        words = [k for k, t in enumerate(tokens) if not t.isspace()]
        if not words:
            tokens.append(rng.choice(HOSTILE_TOKENS))
            continue
        where, other = rng.choice(words), tokens[rng.choice(words)]
        # one of: drop the token, repeat another before it, or put a hostile one
        # instead of it or before it
        tokens[where:where + 1] = rng.choice(
            ([], [other, tokens[where]], [rng.choice(HOSTILE_TOKENS)],
             [f" {rng.choice(HOSTILE_TOKENS)} ", tokens[where]]))
    out = "".join(tokens)
    if rng.random() < 0.05:
        out = out[:rng.randrange(len(out) + 1)]
    return out


def mutate_message(message: dict[str, Any], rng: random.Random) -> str:
    """A JSON message with 1-3 field edits, then (a third of the time) token edits."""
    message = json.loads(json.dumps(message))
    for _ in range(rng.randint(1, 3)):
        keys = list(message)
        kind = rng.randrange(4)
        if kind == 0 and keys:
            message[rng.choice(keys)] = rng.choice(HOSTILE_VALUES)
        elif kind == 1 and keys:
            del message[rng.choice(keys)]
        elif kind == 2:
            message[rng.choice(["type", "match", "step", "move", "x", "token", "nonce"])] = \
                rng.choice(HOSTILE_VALUES)
        else:
            message = rng.choice([[message], {"type": message.get("type"), "inner": message},
                                  message])
            if not isinstance(message, dict):
                break
    text = json.dumps(message)
    return mutate_text(text, rng) if rng.random() < 0.35 else text


# -- seeds ---------------------------------------------------------------------------

def file_seeds(kind: str) -> list[tuple[str, str]]:
    """(name, text) of the seed files of a file format: bundled games, then ../shared."""
    if kind == "kif":
        paths = sorted((REPO / "games" / "gdl").glob("*.kif"))
        paths += [SHARED / "gdl-corpus" / "repository" / f"{g}.kif"
                  for g in ("ticTacToe", "nim1", "roshambo2", "blocker", "maze")]
    elif kind == "efg":
        paths = sorted((SHARED / "efg").glob("*.efg"))
    elif kind == "tree":
        paths = sorted((SHARED / "tree-format").glob("*.txt"))
    else:
        paths = sorted((SHARED / "posg").glob("**/*.osposg"))
    return [(p.name, p.read_text(errors="replace")) for p in paths
            if p.is_file() and p.stat().st_size <= MAX_SEED_BYTES]


def smallest_game() -> str:
    """The rules of the smallest bundled or shared GDL seed, comments dropped."""
    name, text = min(file_seeds("kif"), key=lambda seed: len(seed[1]))
    return re.sub(r";[^\n]*", "", text)


# -- game files: a child process with limits ------------------------------------------

def _play_through(fmt: str, text: str) -> None:
    game = load_game_text(fmt, text, name="fuzz", filename="fuzz")
    rng = random.Random(0)
    state = game.initial_state(rng)
    for _ in range(PLAY_STEPS):
        roles = range(len(game.roles))
        for r in roles:
            game.observation(state, r)
        if game.is_terminal(state):
            game.payoffs(state)
            return
        moves = [game.legal_moves(state, r) for r in roles]
        state = game.next_state(state, [rng.choice(m) if m else None for m in moves], rng)


def classify(job: Callable[[], None]) -> tuple[str, str]:
    """('accepted' | 'error' | 'internal', detail) of running ``job``."""
    try:
        job()
    except GameError as exc:
        return "error", str(exc)
    except Exception:  # exactly what the fuzzer looks for
        return "internal", traceback.format_exc()
    return "accepted", ""


def _file_child(conn, memory_mb: int) -> None:
    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    logging.disable()
    while True:
        try:
            fmt, text = conn.recv()
        except EOFError:
            return
        conn.send(classify(functools.partial(_play_through, fmt, text)))


class FileChecker:
    """Checks game texts in a forked child; a child past the time limit is replaced."""

    def __init__(self, time_limit: float, memory_mb: int = 2048) -> None:
        self.time_limit, self.memory_mb = time_limit, memory_mb
        self._context = multiprocessing.get_context("fork")
        self._process = None
        self._conn = None

    def _start(self) -> None:
        ours, theirs = self._context.Pipe()
        self._process = self._context.Process(target=_file_child,
                                              args=(theirs, self.memory_mb), daemon=True)
        self._process.start()
        theirs.close()
        self._conn = ours

    def check(self, fmt: str, text: str) -> tuple[str, str]:
        if self._process is None or not self._process.is_alive():
            self._start()
        try:
            self._conn.send((fmt, text))
            if self._conn.poll(self.time_limit):
                return self._conn.recv()
            outcome = "hang", f"no outcome within {self.time_limit} s"
        except (EOFError, OSError):
            outcome = "internal", f"the checking process died ({self._process.exitcode})"
        self.close()
        return outcome

    def close(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.join()
            self._conn.close()
        self._process = None


def fuzz_files(kind: str, count: int, rng: random.Random, time_limit: float,
               save: Path | None, progress: Callable[[str, Tally], None]) -> Tally | None:
    seeds = file_seeds(kind)
    if not seeds:
        return None
    tally = Tally(seeds=len(seeds))
    checker = FileChecker(time_limit)
    try:
        for _ in range(count):
            name, text = rng.choice(seeds)
            mutant = mutate_text(text, rng)
            outcome, detail = checker.check(FILE_FORMATS[kind], mutant)
            tally.add(outcome, mutant, f"{name} mutant\n{detail}", save, kind)
            progress(kind, tally)
    finally:
        checker.close()
    return tally


# -- the match server's websocket protocol --------------------------------------------

def ws_seeds(admin_token: str, match: str) -> list[dict[str, Any]]:
    """Messages of every type; ``match`` is the fuzzer's own seat (see :func:`_seated`)."""
    return [
        {"type": "hello", "name": "fuzzer", "token": "0123456789abcdef"},
        {"type": "rejoin", "match": match, "token": "0123456789abcdef", "name": "fuzzer"},
        {"type": "ready", "match": match},
        {"type": "move", "match": match, "step": 1, "move": "(mark 1 1)", "role": "x"},
        {"type": "ping", "nonce": 7},
        {"type": "pong", "nonce": 7},
        {"type": "create", "game": WS_GAME, "players": ["random", "first"], "startclock": 1,
         "playclock": 1, "seed": 3, "admin_token": admin_token},
        {"type": "list", "admin_token": admin_token},
        {"type": "abort", "match": match, "admin_token": admin_token},
    ]


WS_GAME = "simultaneous_tictactoe.kif"  # a bundled game (games/gdl)
RESEAT_EVERY = 100  # mutants; an aborted or finished seat is replaced this often


class ServerUnderTest:
    """``ggp serve`` on a free loopback port, its log in a file that is read as it grows."""

    def __init__(self, folder: Path, admin_token: str) -> None:
        self.folder, self.admin_token = folder, admin_token
        self.process: subprocess.Popen | None = None
        self.url = ""
        self._log_seen = 0

    def start(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}/"
        self.log = self.folder / "server.log"
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "ggp_cli", "serve", "--port", str(port),
                 "--db", str(self.folder / "fuzz.sqlite"), "--games", str(REPO / "games" / "gdl"),
                 "--admin-token", self.admin_token],
                cwd=self.folder, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                env={**os.environ, "PYTHONPATH": str(REPO)})

    def new_log(self) -> str:
        """What the server logged since the last call."""
        with open(self.log, "rb") as log:
            log.seek(self._log_seen)
            data = log.read()
        self._log_seen += len(data)
        return data.decode(errors="replace")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


async def _ws_connect(server: ServerUnderTest):
    deadline = time.monotonic() + 30
    while True:
        try:
            return await websockets.connect(server.url, max_size=None)
        except OSError:
            if time.monotonic() > deadline or server.process.poll() is not None:
                raise
            await asyncio.sleep(0.2)


async def _seated(server: ServerUnderTest):  # -> (connection, match id)
    """A logged-in connection seated in a match of its own (``ws:NAME`` against
    ``random``, long clocks), so ready/move/abort mutants meet a real match."""
    ws = await _ws_connect(server)
    name = f"fuzz{secrets.token_hex(3)}"
    await ws.send(json.dumps({"type": "hello", "name": name, "token": secrets.token_hex(8)}))
    await ws.send(json.dumps({"type": "create", "game": WS_GAME, "players": [f"ws:{name}", "random"],
                              "startclock": 60, "playclock": 60,
                              "admin_token": server.admin_token}))
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(10):
            while True:
                message = json.loads(await ws.recv())
                if message.get("type") == "offer":
                    return ws, message["match"]
    return ws, "m1"  # (creation refused: the mutants still go through the handler)


async def _ws_probe(ws, text: str, time_limit: float) -> tuple[str, str]:
    """Send one mutant, then a ping; the mutant's outcome from the replies before the pong."""
    nonce = secrets.token_hex(4)
    outcome, detail = "accepted", ""
    try:
        await ws.send(text)
        await ws.send(json.dumps({"type": "ping", "nonce": nonce}))
        stop = time.monotonic() + time_limit
        while True:
            reply = json.loads(await asyncio.wait_for(ws.recv(), stop - time.monotonic()))
            if reply.get("type") == "pong" and reply.get("nonce") == nonce:
                return outcome, detail
            if reply.get("type") == "error":
                if reply.get("code") == "internal":
                    return "internal", json.dumps(reply)
                outcome, detail = "error", reply.get("message", "")
    except TimeoutError:
        return "hang", f"no pong within {time_limit} s"
    except websockets.ConnectionClosed as exc:
        code = exc.rcvd.code if exc.rcvd is not None else None
        if code in (1000, 1008, 1009, 1013):  # normal, policy, too big, try later
            return "error", f"closed with {code}"
        return "internal", f"connection closed: {exc}"


async def _fuzz_ws(count: int, rng: random.Random, time_limit: float, save: Path | None,
                   progress: Callable[[str, Tally], None], folder: Path) -> Tally:
    token = secrets.token_hex(16)
    tally = Tally(seeds=len(ws_seeds(token, "")))
    server = ServerUnderTest(folder, token)
    server.start()
    ws = None
    try:
        for number in range(count):
            if ws is None or number % RESEAT_EVERY == 0:
                if ws is not None:
                    await ws.close()
                ws, match = await _seated(server)
            seed = rng.choice(ws_seeds(token, match))
            mutant = mutate_message(seed, rng)
            if seed["type"] in ("hello", "rejoin"):  # a first message: on a new connection
                async with await _ws_connect(server) as first:
                    outcome, detail = await _ws_probe(first, mutant, time_limit)
            else:
                outcome, detail = await _ws_probe(ws, mutant, time_limit)
                if outcome != "accepted" and outcome != "error" or detail.startswith("closed"):
                    await ws.close()
                    ws = None
            logged = server.new_log()
            if "Traceback" in logged and outcome != "hang":
                outcome, detail = "internal", logged
            if server.process.poll() is not None:
                outcome, detail = "internal", f"the server exited\n{logged}"
                server.start()
                ws = None
            tally.add(outcome, mutant, f"{seed['type']} mutant {mutant[:300]!r}\n{detail}",
                      save, "ws")
            progress("ws", tally)
    finally:
        if ws is not None:
            await ws.close()
        server.stop()
    return tally


# -- the GGP HTTP player ------------------------------------------------------------

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


def mutate_request(request: bytes, rng: random.Random) -> bytes:
    """Most mutants keep HTTP framing (the body mutated, Content-Length fixed): they
    reach the GGP layer; the rest mutate the raw bytes."""
    head, separator, body = request.partition(b"\r\n\r\n")
    if body and rng.random() < 0.7:
        payload = mutate_text(body.decode(), rng).encode("utf-8", "surrogatepass")
        head = re.sub(rb"Content-Length: \d+", b"Content-Length: %d" % len(payload), head)
        return head + separator + payload
    return mutate_text(request.decode("latin-1"), rng).encode("latin-1", "replace")


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


async def _fuzz_http(count: int, rng: random.Random, time_limit: float, save: Path | None,
                     progress: Callable[[str, Tally], None]) -> Tally:
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
            tally.add(outcome, mutant, f"request {mutant[:300]!r}\n{detail}", save, "ggp-http")
            progress("ggp-http", tally)
    finally:
        logging.getLogger("agent").removeHandler(failures)
        server.close()
        await server.wait_closed()
        gamer.close()
    return tally


# -- the bench -----------------------------------------------------------------------

def run_fuzz(formats: Sequence[str] = FORMATS, mutants: int = 1000, seed: int = 0,
             time_limit: float = 10.0, save: Path | None = None,
             progress: Callable[[str, Tally], None] = lambda kind, tally: None
             ) -> dict[str, Tally | None]:
    """Fuzz each format (None: no seeds, skipped); the library call of ``ggp bench fuzz``."""
    results: dict[str, Tally | None] = {}
    for kind in formats:
        rng = random.Random(f"{seed}:{kind}")
        if kind in FILE_FORMATS:
            results[kind] = fuzz_files(kind, mutants, rng, time_limit, save, progress)
        elif kind == "ws":
            with tempfile.TemporaryDirectory(prefix="ggp-fuzz-") as folder:
                results[kind] = asyncio.run(_fuzz_ws(mutants, rng, time_limit, save, progress,
                                                     Path(folder)))
        else:
            results[kind] = asyncio.run(_fuzz_http(mutants, rng, time_limit, save, progress))
    return results


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ggp bench fuzz", description=(
        "mutation fuzzing of every input format (.kif, .efg, tree .txt, .osposg, websocket "
        "messages to a real server, GGP HTTP requests to a real player): per format, "
        "mutants, clean errors, accepted, internal errors (tracebacks) and hangs"))
    parser.add_argument("--mutants", type=int, default=1000, help="per format (default 1000)")
    parser.add_argument("--formats", default=",".join(FORMATS),
                        help=f"comma-separated subset of {','.join(FORMATS)}")
    parser.add_argument("--seed", type=int, default=0, help="seed of the mutations")
    parser.add_argument("--time-limit", type=float, default=10.0, metavar="SECONDS",
                        help="per input; longer is a hang (default 10)")
    parser.add_argument("--save", type=Path, metavar="DIR",
                        help="write every failing input to DIR")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return parser


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise GameError(f"--formats: unknown {', '.join(unknown)} (use {', '.join(FORMATS)})")
    if args.mutants < 1 or not args.time_limit > 0:
        raise GameError("--mutants and --time-limit must be positive")

    def progress(kind: str, tally: Tally) -> None:
        if tally.mutants % 100 == 0 and not args.json:
            print(f"\r{kind}: {tally.mutants}/{args.mutants}", end="", file=sys.stderr,
                  flush=True)

    results = run_fuzz(formats, args.mutants, args.seed, args.time_limit, args.save, progress)
    if not args.json:
        print("\r", end="", file=sys.stderr)
    if args.json:
        print(json.dumps({k: (t.row() | {"examples": t.examples}) if t else None
                          for k, t in results.items()}))
    else:
        print(f"{'format':<10}{'seeds':>7}{'mutants':>9}{'clean errors':>14}{'accepted':>10}"
              f"{'internal':>10}{'hangs':>7}")
        for kind, tally in results.items():
            if tally is None:
                print(f"{kind:<10}  skipped: no seed files")
                continue
            row = tally.row()
            print(f"{kind:<10}{row['seeds']:>7}{row['mutants']:>9}{row['clean_errors']:>14}"
                  f"{row['accepted']:>10}{row['internal_errors']:>10}{row['hangs']:>7}")
        for kind, tally in results.items():
            for example in tally.examples if tally else ():
                print(f"\n{kind} {example}")
    failed = any(t and (t.internal or t.hangs) for t in results.values())
    return 1 if failed else 0

