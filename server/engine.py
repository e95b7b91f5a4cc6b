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
import random
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

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


def state_text(game: PlayableGame, state: State) -> str:
    """A state as text for the record: GDL states as the KIF list of their facts (as
    ggp-base records them; ``gdl.playable`` states are (machine state, last joint move)),
    other formats as the adapter's state value."""
    machine = getattr(game, "machine", None)
    if game.format == "gdl" and machine is not None:
        return "( " + " ".join(machine.state_to_kif(state[0])) + " )"
    return str(state)


Advanced = tuple[State, random.Random, str, Look]


def advance(game: PlayableGame, state: State, moves: Sequence[str | None],
            rng: random.Random) -> Advanced:
    """The step: the next state (a GameError here is the step's own and raises), the
    chance generator after it, the state's record text, and its look."""
    after = game.next_state(state, moves, rng)
    return after, rng, state_text(game, after), look_at(game, after)


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
    import gdl.loader  # noqa: F401  (the game adapters' modules, loaded ahead)
    return True


# --- the server side ---

class _Worker:
    """One worker process (a one-process pool: its death breaks only its own pool)."""

    def __init__(self) -> None:
        self.pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        self.known: set[str] = set()  # game keys this process holds

    def submit(self, fn: Any, key: str, blob: bytes, *args: Any) -> asyncio.Future[Any]:
        """Raises BrokenProcessPool at once when the process is already gone."""
        sent = None if key in self.known else blob
        return asyncio.get_running_loop().run_in_executor(self.pool, fn, key, sent, *args)


class PoolEngine:
    """The game computed in ``workers`` processes, each match on one of them."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise GameError("--workers must be at least 1")
        self.workers = [_Worker() for _ in range(workers)]
        self._next = itertools.cycle(range(workers))
        self._blobs: dict[int, tuple[PlayableGame, str, bytes]] = {}

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
        key, blob = self._game(game)
        for _ in range(2):  # the game may have left the worker's cache: send it again
            worker = self.workers[index]
            try:  # a process that died between this match's steps costs it nothing
                future = worker.submit(fn, key, blob, *args)
            except BrokenProcessPool:
                worker = self._replace(index, worker)
                future = worker.submit(fn, key, blob, *args)
            try:
                result = await future
            except BrokenProcessPool:
                self._replace(index, worker)
                raise GameError(f"the game worker process {index + 1} of {len(self.workers)} "
                                f"died during this match's step") from None
            except LookupError:
                worker.known.discard(key)
                continue
            worker.known.add(key)
            return result
        raise GameError(f"{game.name}: the game worker process cannot hold the game")

    async def start(self) -> None:
        """Start every worker process now (a spawn takes a second) rather than at the
        first match's first step."""
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(loop.run_in_executor(w.pool, _ready) for w in self.workers))

    def _replace(self, index: int, broken: _Worker) -> _Worker:
        """A new process in place of a dead one (once, whoever notices first)."""
        if self.workers[index] is broken:
            broken.pool.shutdown(wait=False, cancel_futures=True)
            self.workers[index] = _Worker()
        return self.workers[index]

    async def close(self) -> None:
        for worker in self.workers:
            worker.pool.shutdown(wait=False, cancel_futures=True)


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
