"""Spectators: read-only subscriptions to matches over the websocket (``watch``).

The server's :class:`Spectators` is every match's listener (``server/match.py``). It
keeps a :class:`Feed` per running match (and the most recent finished ones): the steps
so far, the states, the clock and the end. A socket that sends ``watch`` before any
``hello`` is a spectator socket (no name, no token: spectators only read). It gets
``watching`` (everything so far), then ``clock``, ``played`` and ``ended`` messages as
the match goes (``server/PROTOCOL.md``, *Spectators*).

A spectator must never slow a match: the match loop only encodes each message once and
puts it, without waiting, in every watching socket's bounded queue; one writer task per
socket sends. A socket whose queue is full (it reads slower than the matches play) or
whose send stalls for ``SEND_TIMEOUT`` is closed (code 1008); the matches never notice.
State views (``server/web/board.py``) are computed only when someone watches.

Never on the event loop for long: a game's board (grounding its facts), a finished
match read from the records, and a long match's ``watching`` message are computed and
encoded on the server's page threads; finished matches' snapshots are cached. Every
``watch`` counts against its address's read budget (``server/guard.py``). A spectator
socket that watches nothing for ``idle_timeout`` seconds (after an unknown match, or once
its matches ended) is closed, and the messages waiting for spectators are bounded in
bytes, each socket's (``SPECTATOR_BYTES``) and all together (``ALL_SPECTATOR_BYTES``).

Hidden information: while a GDL-II, ``.efg``/tree or POSG match runs, a player could
open a spectator socket and read its opponents' cards, so spectators get it redacted
(who acted, answer times and fault codes; no moves, no state) unless the server was
started with ``public_spectators`` or the ``watch`` carries the admin token. The end
reveals everything (``ended`` then carries the full history and view).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, TypeVar

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from server import protocol
from server.connections import SEND_TIMEOUT
from server.credentials import is_admin_token
from server.guard import Guard, peer_address
from server.match import Match
from server.protocol import ProtocolError
from server.records import RecordReads, Records, RecordsReader
from server.single_flight import SingleFlight
from server.web.board import (
    Grid,
    detect_grid,
    game_grid,
    parse_kif_list,
    recorded_view,
    state_view,
    text_view,
)
from solvers.errors import GameError
from solvers.playable import State

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_SPECTATORS = 256  # spectator sockets at once (each also counts as a connection)
SPECTATOR_QUEUE = 1024  # messages waiting for one spectator socket; one more closes it
SPECTATOR_BYTES = 16 << 20  # bytes waiting for one spectator socket; more closes it
ALL_SPECTATOR_BYTES = 128 << 20  # ... for all of them: past it, big non-readers are closed
BIG_QUEUE = 1 << 20  # a spectator holding this much is closed when all hold too much
RECENT_SNAPSHOTS = 16  # finished matches read from the records, kept ready
MAX_WATCHED = 64  # matches one spectator socket may watch at once
RECENT_FEEDS = 256  # finished matches kept in memory for late spectators and the pages
HIDDEN_VIEW = text_view("hidden information: the moves and the state are shown when the "
                        "match ends")


def _seconds(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def recorded_hidden_information(record: dict[str, Any]) -> bool:
    """Whether a recorded match's game hides information (a record has no game to ask
    ``hidden_information``): a GDL match whose steps carry percepts (GDL-II); any other
    format (only GDL without ``sees`` shows every role the whole state)."""
    if record["format"] != "gdl":
        return True
    return any(s.get("percepts") is not None for s in record["steps"])


def redacted_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A step of a hidden-information match as anyone may see it while it runs: who
    acted ("?"), answer times and fault codes (an ``IL`` without the move)."""
    return {**entry, "moves": [None if m is None else "?" for m in entry["moves"]],
            "errors": [e.split(" ", 1)[0] for e in entry["errors"]]}


Run = Callable[..., Awaitable[Any]]  # runs a function on the page threads


class Feed:
    """One match as spectators see it (everything: true states, every role's moves;
    while it runs, a hidden-information match only redacted unless ``full``)."""

    def __init__(self, match: Match, state: State, public: bool = False) -> None:
        self.match = match
        self.hidden = not public and match.game.hidden_information
        self.id = match.id
        self.game = match.game
        self.status = "starting"  # starting | running | completed | aborted
        self.started = time.time()
        self.states: list[State] = [state]
        self.steps: list[dict[str, Any]] = []
        self.clock: dict[str, Any] | None = None  # {"step", "acting", "deadline_at" (epoch)}
        self.turn_at = 0.0
        self.payoffs: list[float] | None = None
        self.reason: str | None = None
        self.watchers: set[Spectator] = set()
        self.full_watchers: set[Spectator] = set()  # those who see a hidden match whole
        self._grid: Grid | None = None
        self._grid_known = False
        self._grid_task: asyncio.Future[Grid | None] | None = None

    @property
    def finished(self) -> bool:
        return self.status in ("completed", "aborted")

    @property
    def grid(self) -> Grid | None:
        if not self._grid_known:  # (found on a page thread first: ensure_grid)
            self._grid, self._grid_known = self.find_grid(self.states), True
        return self._grid

    def find_grid(self, states: list[State]) -> Grid | None:
        """The board, from the game (grounded once per game) and the states so far."""
        seen = [f for state in states for f in parse_kif_list(self.game.state_text(state))] \
            if self.game.format == "gdl" else []
        return game_grid(self.game, seen)

    async def ensure_grid(self, run: Run) -> None:
        """Find the board on a page thread (grounding a game can take a second), once."""
        if self._grid_known:
            return
        if self._grid_task is None:
            self._grid_task = asyncio.ensure_future(run(self.find_grid, list(self.states)))
        grid = await asyncio.shield(self._grid_task)
        if not self._grid_known:
            self._grid, self._grid_known = grid, True

    @property
    def redacted(self) -> bool:
        """Whether anonymous spectators see this match redacted now (hidden and running)."""
        return self.hidden and not self.finished

    def view(self, index: int = -1) -> dict[str, Any]:
        """The view of the state after step ``index`` (0: the initial state; -1: now)."""
        return state_view(self.game, self.states[index], self.grid)

    def public_view(self, index: int = -1) -> dict[str, Any]:
        """:meth:`view` as anyone may see it now."""
        return HIDDEN_VIEW if self.redacted else self.view(index)

    def clock_message(self) -> dict[str, Any] | None:
        if self.clock is None or self.finished:
            return None
        left = max(0.0, self.clock["deadline_at"] - time.time())
        return {"type": "clock", "match": self.id, "step": self.clock["step"],
                "acting": self.clock["acting"], "deadline": round(left, 3)}

    def watching(self, full: bool = False) -> dict[str, Any]:
        """The ``watching`` message (redacted when :attr:`redacted` and not ``full``)."""
        clock = self.clock_message()
        match = self.match
        redact = self.redacted and not full
        return {"type": "watching", "match": self.id,
                "game": {"name": self.game.name, "format": self.game.format},
                "roles": list(self.game.roles), "players": list(match.specs),
                "tournament": match.tournament, "status": self.status,
                "startclock": match.startclock, "playclock": match.playclock,
                "started": self.started, "step": len(self.steps),
                "clock": None if clock is None else {k: clock[k] for k in
                                                     ("step", "acting", "deadline")},
                "history": [redacted_entry(e) for e in self.steps] if redact
                else list(self.steps),
                "view": HIDDEN_VIEW if redact else self.view(),
                "hidden": redact, "payoffs": self.payoffs, "reason": self.reason}


def recorded_views(record: dict[str, Any]) -> Callable[[int], dict[str, Any]]:
    """The view after step ``k`` of a recorded match (0: the initial state; -1: last),
    each made once."""
    texts = [record.get("initial_state")] + [s["state"] for s in record["steps"]]
    grid = detect_grid([f for t in texts if t for f in parse_kif_list(t)]) \
        if record["format"] == "gdl" else None
    views: list[dict[str, Any] | None] = [None] * len(texts)

    def view_at(k: int) -> dict[str, Any]:
        view = views[k]
        if view is None:
            view = views[k] = recorded_view(record["format"], texts[k], grid)
        return view
    return view_at


def recorded_watching(record: dict[str, Any],
                      view_at: Callable[[int], dict[str, Any]] | None = None) -> dict[str, Any]:
    """``watching`` for a match known only from the records (finished, or left running
    by another process): times as recorded, views from the recorded state texts."""
    steps = record["steps"]
    view_at = view_at or recorded_views(record)
    n_roles = len(record["roles"])
    return {"type": "watching", "match": record["id"],
            "game": {"name": record["game"], "format": record["format"]},
            "roles": record["roles"], "players": record["players"],
            "tournament": record.get("tournament"),
            "status": record["status"], "startclock": record["startclock"],
            "playclock": record["playclock"], "started": record["started"],
            "step": len(steps), "clock": None,
            "history": [{"step": s["step"], "moves": s["moves"], "errors": s["errors"],
                         "times": s.get("times") or [None] * n_roles, "at": s["time"]} for s in steps],
            "view": view_at(-1),
            "payoffs": record["payoffs"], "reason": record.get("reason")}


@dataclass
class Snapshot:
    """A match for a spectator or a page: its ``watching`` message and the view after any
    step (0: the initial state), as the asker may see them."""

    watching: dict[str, Any]
    view_at: Callable[[int], dict[str, Any]]
    text: str | None = None  # the encoded ``watching``, once made (kept for finished ones)

    @property
    def finished(self) -> bool:
        return self.watching["status"] in ("completed", "aborted")

    def encoded(self) -> str:
        """The ``watching`` message as one frame (on a page thread: it can be large)."""
        if self.text is None:
            self.text = protocol.encode_large(self.watching, "history")
        return self.text


def recorded_snapshot(records: RecordReads, match_id: str, full: bool) -> Snapshot | None:
    """A match from the records (on a page thread); None when there is no such match."""
    try:
        record = records.get_match(match_id)
    except GameError:
        return None
    view_at = recorded_views(record)
    watching = recorded_watching(record, view_at)
    if record["status"] == "running" and not full and recorded_hidden_information(record):
        watching.update(history=[redacted_entry(e) for e in watching["history"]],
                        view=HIDDEN_VIEW, hidden=True)
        return Snapshot(watching, lambda k: HIDDEN_VIEW)
    return Snapshot(watching, view_at)


class QueuedBytes:
    """Bytes waiting for all spectator sockets together."""

    def __init__(self, limit: int = ALL_SPECTATOR_BYTES) -> None:
        self.limit = limit
        self.total = 0


class Spectator:
    """One spectator socket: a bounded queue of encoded messages and a writer task.

    A message is a string, or a future of one (a ``watching`` still being encoded on a
    page thread: it keeps its place in the order)."""

    def __init__(self, ws: ServerConnection, queue_size: int,
                 queued: QueuedBytes | None = None, max_bytes: int = SPECTATOR_BYTES) -> None:
        self.ws = ws
        self.queue: asyncio.Queue[str | asyncio.Future[str]] = asyncio.Queue(queue_size)
        self.watching: set[str] = set()
        self.opened = time.monotonic()
        self.closed = False
        self.bytes = 0
        self.max_bytes = max_bytes
        self.all = queued or QueuedBytes()
        self.writer = asyncio.create_task(self._write(), name="spectator writer")

    def offer(self, message: str | asyncio.Future[str]) -> None:
        """Queue a message without waiting; a full queue closes this spectator."""
        if self.closed:
            return
        try:
            self.queue.put_nowait(message)
        except asyncio.QueueFull:
            self.cut("too slow: the spectator queue is full")
            return
        if isinstance(message, str):
            self._count(len(message))
        else:
            message.add_done_callback(lambda f: f.cancelled() or f.exception()
                                      or self._count(len(f.result())))

    def _count(self, size: int) -> None:
        """``size`` more bytes wait for this socket (negative: sent)."""
        if self.closed:
            return
        self.bytes += size
        self.all.total += size
        if size > 0 and (self.bytes > self.max_bytes or (
                self.all.total > self.all.limit and self.bytes > BIG_QUEUE)):
            self.cut("too slow: too many bytes wait for this spectator")

    def cut(self, reason: str) -> None:
        if self.closed:
            return
        self.closed = True
        self.all.total -= self.bytes
        self.bytes = 0
        log.info("spectator cut off: %s", reason)
        self.writer.cancel()
        task = asyncio.create_task(self.ws.close(1008, reason))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def _write(self) -> None:
        try:
            while True:
                item = await self.queue.get()
                text = item if isinstance(item, str) else await item
                await asyncio.wait_for(self.ws.send(text), SEND_TIMEOUT)
                self._count(-len(text))
        except TimeoutError:
            self.finish()
            self.ws.transport.abort()
        except ConnectionClosed:
            self.finish()
        except Exception:  # a message that failed to encode: this socket only
            log.exception("spectator message")
            self.cut("the server failed on a message")

    def finish(self) -> None:
        """The socket is gone: what waited for it is dropped."""
        if not self.closed:
            self.closed = True
            self.all.total -= self.bytes
            self.bytes = 0


Control = Callable[[ServerConnection, dict[str, Any]], Awaitable[None]]


class Spectators:
    """Every match's listener, and the spectator sockets (see the module docstring)."""

    def __init__(self, records: Records, *, max_spectators: int = MAX_SPECTATORS,
                 queue_size: int = SPECTATOR_QUEUE, recent: int = RECENT_FEEDS,
                 admin_token: str = "", public: bool = False, pool: Executor | None = None,
                 guard: Guard | None = None, idle_timeout: float = 10.0) -> None:
        self.records = records
        self.reader = records.reader()
        self.admin_token = admin_token
        self.public = public
        self.max_spectators = max_spectators
        self.queue_size = queue_size
        self.recent = recent
        self.pool = pool
        self.guard = guard or Guard(max_spectators)
        self.idle_timeout = idle_timeout
        self.feeds: OrderedDict[str, Feed] = OrderedDict()  # running, then finished
        self.sockets: set[Spectator] = set()
        self.queued = QueuedBytes()
        self._recorded: OrderedDict[tuple[str, bool], Snapshot] = OrderedDict()
        self._reading: SingleFlight[tuple[str, bool], Snapshot | None] = SingleFlight()

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on the page threads (off the event loop)."""
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    # --- the match listener (synchronous, never waits) ---

    def begun(self, match: Match, state: State) -> None:
        feed = self.feeds[match.id] = Feed(match, state, self.public)
        feed.clock = {"step": 0, "acting": list(match.game.roles),
                      "deadline_at": time.time() + match.startclock}

    def turn(self, match: Match, acting: list[int]) -> None:
        feed = self.feeds.get(match.id)
        if feed is None:
            return
        feed.status = "running"
        feed.turn_at = time.time()
        feed.clock = {"step": match.step, "acting": [match.game.roles[r] for r in acting],
                      "deadline_at": feed.turn_at + match.playclock}
        if feed.watchers:
            self._send(feed, feed.clock_message())

    def stepped(self, match: Match, state: State) -> None:
        feed = self.feeds.get(match.id)
        if feed is None:
            return
        times = [_seconds(t) for t in match.answer_times]
        entry = {"step": match.step, "moves": list(match.outcome.moves[-1]),
                 "errors": list(match.outcome.errors[-1]), "times": times,
                 # when the step's last answer came in (the page's delay is measured from it)
                 "at": round(feed.turn_at + max((t for t in times if t is not None),
                                                default=0.0), 4)}
        feed.steps.append(entry)
        feed.states.append(state)
        if feed.watchers:
            self._send(feed, {"type": "played", "match": match.id, **entry,
                              "view": feed.view()},
                       {"type": "played", "match": match.id, **redacted_entry(entry),
                        "view": HIDDEN_VIEW} if feed.hidden else None)

    def ended(self, match: Match) -> None:
        feed = self.feeds.get(match.id)
        if feed is None:
            return
        outcome = match.outcome
        feed.status = outcome.status if outcome.status in ("completed", "aborted") \
            else "aborted"
        feed.payoffs, feed.reason, feed.clock = outcome.payoffs, outcome.reason, None
        if feed.watchers:
            ended = {"type": "ended", "match": match.id, "status": feed.status,
                     "payoffs": feed.payoffs, "reason": feed.reason}
            # a hidden match is over: what was held back is shown now
            self._send(feed, {**ended, "history": list(feed.steps), "view": feed.view()}
                       if feed.hidden else ended)
            for spectator in feed.watchers:  # the match is over: it no longer counts
                spectator.watching.discard(match.id)
            feed.watchers.clear()
            feed.full_watchers.clear()
        self.feeds.move_to_end(match.id)
        finished = [k for k, f in self.feeds.items() if f.finished]
        for old in finished[:max(0, len(finished) - self.recent)]:
            del self.feeds[old]

    def _send(self, feed: Feed, message: dict[str, Any] | None,
              redacted: dict[str, Any] | None = None) -> None:
        """Send ``message`` to the feed's watchers (``redacted`` to those who may not see
        a running hidden-information match whole)."""
        if message is None:
            return
        text = protocol.encode(message)  # once, whatever the number of spectators
        other = text if redacted is None else protocol.encode(redacted)
        for spectator in list(feed.watchers):
            spectator.offer(text if spectator in feed.full_watchers else other)

    # --- spectator sockets ---

    async def serve(self, ws: ServerConnection, first: dict[str, Any], control: Control,
                    max_message_bytes: int) -> None:
        """Run a spectator socket from its first ``watch``/``unwatch`` until it closes;
        control messages (with the admin token) and pings are served too. A socket that
        watches nothing for ``idle_timeout`` seconds is closed."""
        if len(self.sockets) >= self.max_spectators and not self._evict_idle():
            await ws.send(protocol.encode(protocol.error(
                "server-full", f"at most {self.max_spectators} spectators")))
            await ws.close(1013, "too many spectators")
            return
        spectator = Spectator(ws, self.queue_size, self.queued)
        self.sockets.add(spectator)
        address = peer_address(ws.remote_address)
        try:
            message: dict[str, Any] | None = first
            while True:
                if message is not None:
                    try:
                        await self._handle(spectator, message, control, address)
                    except ProtocolError as exc:
                        spectator.offer(protocol.encode(exc.to_message()))
                if spectator.closed:
                    return
                try:  # (recv is safe to cancel: no message is lost)
                    data = await asyncio.wait_for(ws.recv(), self.idle_timeout)
                except TimeoutError:
                    if spectator.watching:  # its matches still run: it may stay
                        message = None
                        continue
                    await ws.close(1008, "watching nothing")
                    return
                try:
                    message = protocol.parse_message(data, max_message_bytes)
                except ProtocolError as exc:
                    spectator.offer(protocol.encode(exc.to_message()))
                    message = None
        except ConnectionClosed:
            pass
        finally:
            self.sockets.discard(spectator)
            spectator.finish()
            spectator.writer.cancel()
            for match_id in spectator.watching:
                feed = self.feeds.get(match_id)
                if feed is not None:
                    feed.watchers.discard(spectator)
                    feed.full_watchers.discard(spectator)

    def _evict_idle(self) -> bool:
        """Make room by closing the oldest spectator socket that watches nothing (an
        unknown match, matches that ended): idle sockets never lock out one that
        watches. False when every socket watches something."""
        idle = [s for s in self.sockets if not s.watching and not s.closed]
        if not idle:
            return False
        oldest = min(idle, key=lambda s: s.opened)
        self.sockets.discard(oldest)
        oldest.cut("watching nothing, and another spectator needs the room")
        return True

    async def _handle(self, spectator: Spectator, message: dict[str, Any],
                      control: Control, address: str) -> None:
        kind = message["type"]
        if kind == "watch":
            full = self._is_admin(message, address)
            self.guard.check_read(address, "watch", message["match"])
            await self._watch(spectator, message["match"], full)
        elif kind == "unwatch":
            match_id = message["match"]
            feed = self.feeds.get(match_id)
            if feed is not None:
                feed.watchers.discard(spectator)
                feed.full_watchers.discard(spectator)
            spectator.watching.discard(match_id)
            spectator.offer(protocol.encode({"type": "unwatched", "match": match_id}))
        elif kind == "ping":
            spectator.offer(protocol.encode(protocol.pong(message.get("nonce"))))
        elif kind == "pong":
            pass
        elif kind in ("create", "abort", "list"):
            await control(spectator.ws, message)
        else:
            raise ProtocolError("spectator", f"{kind!r} on a spectator connection: a socket "
                                "that watches never logs in (open another one)", ref=kind)

    def _is_admin(self, message: dict[str, Any], address: str) -> bool:
        """Whether a ``watch`` carries the admin token (a wrong one is refused)."""
        given = message.get("admin_token")
        if given is None:
            return False
        self.guard.check_locked(address, "watch", message["match"])
        if not is_admin_token(given, self.admin_token):
            self.guard.failures.fail(address, "admin tokens")
            raise ProtocolError("not-allowed", "wrong admin token", message["match"], "watch")
        return True

    async def _watch(self, spectator: Spectator, match_id: str, full: bool = False) -> None:
        if match_id in spectator.watching:
            raise ProtocolError("bad-field", f"already watching {match_id}", match_id, "watch")
        if len(spectator.watching) >= MAX_WATCHED:
            raise ProtocolError("too-many", f"a spectator watches at most {MAX_WATCHED} "
                                "matches at once (unwatch one)", match_id, "watch")
        snapshot = await self.snapshot(match_id, full)
        if snapshot is None:
            raise ProtocolError("unknown-match", f"no match {match_id!r}", match_id, "watch")
        # encoded on a page thread, in its place in the queue (nothing awaited from the
        # snapshot to the subscription below: no step is missed nor sent twice)
        spectator.offer(asyncio.ensure_future(self.run(snapshot.encoded))
                        if snapshot.text is None else snapshot.text)
        feed = self.feeds.get(match_id)
        if feed is not None and not feed.finished:
            feed.watchers.add(spectator)
            if full:
                feed.full_watchers.add(spectator)
            spectator.watching.add(match_id)

    async def snapshot(self, match_id: str, full: bool = False) -> Snapshot | None:
        """A match for a spectator or a page (from memory, else from the records;
        redacted while a hidden-information match runs, unless ``full``); None when there
        is no such match."""
        feed = self.feeds.get(match_id)
        if feed is not None:
            await feed.ensure_grid(self.run)
            return Snapshot(feed.watching(full), feed.view if full else feed.public_view)
        key = (match_id, full or self.public)
        snapshot = self._recorded.get(key)
        if snapshot is not None:
            self._recorded.move_to_end(key)
            return snapshot
        return await self._reading.get(
            key, lambda: self.run(recorded_snapshot, self.reader, *key),
            lambda snapshot: self._keep(key, snapshot))

    def _keep(self, key: tuple[str, bool], snapshot: Snapshot | None) -> None:
        if snapshot is not None and snapshot.finished:  # the records will not change
            self._recorded[key] = snapshot
            while len(self._recorded) > RECENT_SNAPSHOTS:
                self._recorded.popitem(last=False)

    async def close(self) -> None:
        for spectator in list(self.sockets):
            spectator.writer.cancel()
        with contextlib.suppress(Exception):
            await asyncio.gather(*(s.writer for s in self.sockets), return_exceptions=True)
        if isinstance(self.reader, RecordsReader):
            self.reader.close()
