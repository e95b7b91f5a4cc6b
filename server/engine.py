"""Where a match's game computation runs: on the event loop, or in worker processes.

A match needs three things from its game at every step: whether the state is terminal,
each role's legal moves, and the next state (with its record text). :class:`InlineEngine`
(the default) computes them on the event loop, as a match always has. :class:`PoolEngine`
(``ggp serve --workers N``) computes them in N worker processes, so a slow step of one
game (a first joint move that the GDL compiler grounds lazily, a big game's legal moves)
does not hold up every other match's relay.

One call per step: :meth:`advance` returns the next state, its record text, and its
:class:`Look` (terminal, legal moves), computed together so a step costs one round trip
to the worker. Errors of the game travel back as values in the :class:`Look` and are
raised where the match would have met them, so a pool match records exactly what an
inline match records (the chance generator goes to the worker and comes back advanced).

Each match is bound to one worker (round robin). A worker that dies aborts only the
matches with a step in flight on it, with a clear reason; it is replaced for every
other match, whose state lives in the server.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import multiprocessing
import pickle
import queue
import random
import signal
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import gdl.formats  # noqa: F401 - the game adapters' modules: a worker loads them as it starts
from solvers.errors import GameError
from solvers.playable import PlayableGame, State

MAX_GAMES = 64  # games a worker (and the server's pickle cache) keeps


@dataclass
class Look:
    """What a match learns of a state before asking the players."""

    terminal: bool
    legal: list[list[str]] | None  # per role; None at a terminal state
    error: GameError | None = None  # the game's failure on this state, raised in turn

    def check(self) -> Look:
        if self.error is not None:
            raise self.error
        return self


def look_at(game: PlayableGame, state: State) -> Look:
    try:
        if game.is_terminal(state):
            return Look(True, None)
        return Look(False, [game.legal_moves(state, r) for r in range(len(game.roles))])
    except GameError as exc:
        return Look(False, None, exc)


Advanced = tuple[State, random.Random, str, Look]


def advance(game: PlayableGame, state: State, moves: Sequence[str | None],
            rng: random.Random) -> Advanced:
    """The step: the next state (a GameError here is the step's own and raises), the
    chance generator after it, the state's record text (``game.state_text``), and its look."""
    after = game.next_state(state, moves, rng)
    return after, rng, game.state_text(after), look_at(game, after)


class InlineEngine:
    """The game computed on the event loop (the default)."""

    async def look(self, game: PlayableGame, state: State) -> Look:
        return look_at(game, state)

    async def advance(self, game: PlayableGame, state: State, moves: Sequence[str | None],
                      rng: random.Random) -> Advanced:
        return advance(game, state, moves, rng)

    async def close(self) -> None:
        pass


# --- the worker process side ---

_GAMES: dict[str, PlayableGame] = {}


def _worker_game(key: str, blob: bytes | None) -> PlayableGame:
    game = _GAMES.get(key)
    if game is None:
        if blob is None:
            raise LookupError(key)  # the server resends with the game
        while len(_GAMES) >= MAX_GAMES:
            _GAMES.pop(next(iter(_GAMES)))
        game = _GAMES[key] = pickle.loads(blob)
    return game


def _worker_look(key: str, blob: bytes | None, state: State) -> Look:
    return look_at(_worker_game(key, blob), state)


def _worker_advance(key: str, blob: bytes | None, state: State, moves: Sequence[str | None],
                    rng: random.Random) -> Advanced:
    return advance(_worker_game(key, blob), state, moves, rng)


def _ready() -> bool:
    """A worker is up (it imported this module, and with it the game adapters)."""
    return True


def _serve(conn: Connection) -> None:
    """A worker process: answer calls in order until the server closes the pipe. A
    thread keeps reading calls while the main thread computes and replies, so the
    server's write of a call never waits on the worker's write of a reply (with both
    pipes full, each would wait for the other)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle
    calls: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()

    def read() -> None:
        try:
            while True:
                calls.put(conn.recv_bytes())
        except (EOFError, OSError):
            calls.put(None)

    threading.Thread(target=read, daemon=True).start()
    while (data := calls.get()) is not None:
        fn, args = pickle.loads(data)
        try:
            reply = pickle.dumps((True, fn(*args)))
        except Exception as exc:  # the game's failure (or a bug): the caller's to raise
            try:
                reply = pickle.dumps((False, exc))
            except Exception:
                reply = pickle.dumps((False, GameError(f"{type(exc).__name__}: {exc}")))
        try:
            conn.send_bytes(reply)
        except OSError:  # the server is gone
            return


# --- the server side ---

class WorkerDied(Exception):
    """The worker process exited with calls of its in flight."""


class _Worker:
    """One worker process and its pipe. The event loop writes a call and reads the
    reply when the pipe is readable: no threads, so a call costs the loop little more
    than pickling it; replies come back in order."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child,), daemon=True,
                                       name="ggp game worker")
        self.process.start()
        child.close()
        self.waiting: deque[asyncio.Future[Any]] = deque()
        self.known: set[str] = set()  # game keys this process holds
        self.dead = False
        self.loop = asyncio.get_running_loop()
        self.loop.add_reader(self.conn.fileno(), self._readable)

    def submit(self, fn: Any, *args: Any) -> asyncio.Future[Any]:
        """Raises WorkerDied at once when the process is already gone."""
        if self.dead:
            raise WorkerDied
        try:
            self.conn.send_bytes(pickle.dumps((fn, args)))
        except OSError:
            self._died()
            raise WorkerDied from None
        future = self.loop.create_future()
        self.waiting.append(future)
        return future

    def _readable(self) -> None:
        try:
            ok, value = pickle.loads(self.conn.recv_bytes())
        except (EOFError, OSError):
            self._died()
            return
        future = self.waiting.popleft()
        if future.done():  # its match was aborted meanwhile
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def _died(self) -> None:
        if self.dead:
            return
        self.dead = True
        self.loop.remove_reader(self.conn.fileno())
        for future in self.waiting:
            if not future.done():
                future.set_exception(WorkerDied())
        self.waiting.clear()

    async def close(self) -> None:
        """Close the pipe (the process ends on it), then make sure it has ended."""
        self._died()
        self.conn.close()
        await asyncio.to_thread(self.process.join, 2)
        if self.process.is_alive():
            self.process.kill()


class PoolEngine:
    """The game computed in ``workers`` processes, each match on one of them (started
    by :meth:`start`, in the server's event loop)."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise GameError("--workers must be at least 1")
        self.size = workers
        self.workers: list[_Worker] = []
        self._next = itertools.cycle(range(workers))
        self._blobs: dict[int, tuple[PlayableGame, str, bytes]] = {}

    async def start(self) -> None:
        """Start every worker process now (a spawn takes a second) rather than at the
        first match's first step."""
        self.workers = [_Worker() for _ in range(self.size)]
        await asyncio.gather(*(w.submit(_ready) for w in self.workers))

    def _game(self, game: PlayableGame) -> tuple[str, bytes]:
        entry = self._blobs.get(id(game))
        if entry is None or entry[0] is not game:
            try:
                blob = pickle.dumps(game)
            except Exception as exc:
                raise GameError(f"{game.name} cannot be sent to a worker process: "
                                f"{type(exc).__name__}: {exc}") from None
            entry = (game, hashlib.sha1(blob).hexdigest(), blob)
            while len(self._blobs) >= MAX_GAMES:
                self._blobs.pop(next(iter(self._blobs)))
            self._blobs[id(game)] = entry
        return entry[1], entry[2]

    def bind(self) -> BoundEngine:
        """An engine for one match: all its steps go to the same worker."""
        return BoundEngine(self, next(self._next))

    async def _call(self, index: int, fn: Any, game: PlayableGame, *args: Any) -> Any:
        if not self.workers:
            raise GameError("the game worker processes are not started")
        key, blob = self._game(game)
        for _ in range(2):  # the game may have left the worker's cache: send it again
            worker = self.workers[index]
            sent = None if key in worker.known else blob
            try:  # a process that died between this match's steps costs it nothing
                future = worker.submit(fn, key, sent, *args)
            except WorkerDied:
                worker = self._replace(index, worker)
                future = worker.submit(fn, key, blob, *args)
            try:
                result = await future
            except WorkerDied:
                self._replace(index, worker)
                raise GameError(f"the game worker process {index + 1} of {self.size} "
                                f"died during this match's step") from None
            except LookupError:
                worker.known.discard(key)
                continue
            worker.known.add(key)
            return result
        raise GameError(f"{game.name}: the game worker process cannot hold the game")

    def _replace(self, index: int, broken: _Worker) -> _Worker:
        """A new process in place of a dead one (once, whoever notices first)."""
        if self.workers[index] is broken:
            broken.conn.close()
            if broken.process.is_alive():  # (is_alive also reaps an ended one)
                broken.process.kill()
            self.workers[index] = _Worker()
        return self.workers[index]

    async def close(self) -> None:
        await asyncio.gather(*(w.close() for w in self.workers))


class BoundEngine:
    """A :class:`PoolEngine` seen by one match."""

    def __init__(self, pool: PoolEngine, index: int) -> None:
        self.pool = pool
        self.index = index

    async def look(self, game: PlayableGame, state: State) -> Look:
        result: Look = await self.pool._call(self.index, _worker_look, game, state)
        return result

    async def advance(self, game: PlayableGame, state: State, moves: Sequence[str | None],
                      rng: random.Random) -> Advanced:
        result: Advanced = await self.pool._call(
            self.index, _worker_advance, game, state, list(moves), rng)
        return result
