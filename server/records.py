"""Match records in SQLite: every match, written step by step, never silently lost.

The database runs in WAL mode and each step is its own committed transaction, so a
crash of the server process loses at most the step in flight. Each running match and
tournament names its owner (process id and a random tag of the :class:`Records` that
runs it); on open, those still marked ``running`` whose owner is gone (the server died
under them, or closed without finishing them) are marked ``aborted`` with the reason
``server restarted``. Matches another live process is running are left alone, so
``ggp matches list`` beside a running tournament changes nothing. All database work
goes through one worker thread (SQLite connections are single-threaded and a commit
must not stall the event loop); the async methods hand work to it and wait until it
is committed. Group commit: the
worker runs every job already waiting in one transaction, so many concurrent
matches share one commit per batch while each step is still durable before the
match goes on.

Tables: ``matches`` (one row per match, status ``running`` | ``completed`` |
``aborted``), ``steps`` (one row per step: moves, errors, the state after it, each
role's answer time, and in GDL-II matches every role's percepts after it), ``games``
(each game's rules text once, keyed by its SHA-1, which ``matches.game_hash`` names:
exports embed the rules), ``tournaments`` (configuration and final standings),
``agents`` (each registered agent name with a salted hash of its secret, never the
secret: ``server/credentials.py``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import queue
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from solvers.errors import GameError

T = TypeVar("T")

SCHEMA = """
CREATE TABLE IF NOT EXISTS matches (
    id TEXT PRIMARY KEY,
    game TEXT NOT NULL,
    format TEXT NOT NULL,
    roles TEXT NOT NULL,
    players TEXT NOT NULL,
    seed INTEGER NOT NULL,
    startclock REAL NOT NULL,
    playclock REAL NOT NULL,
    tournament TEXT,
    status TEXT NOT NULL,
    reason TEXT,
    payoffs TEXT,
    initial_state TEXT,
    description TEXT,
    started REAL NOT NULL,
    finished REAL,
    owner TEXT,
    game_hash TEXT
);
CREATE TABLE IF NOT EXISTS games (
    hash TEXT PRIMARY KEY,
    format TEXT NOT NULL,
    name TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS steps (
    match TEXT NOT NULL REFERENCES matches(id),
    step INTEGER NOT NULL,
    moves TEXT NOT NULL,
    errors TEXT NOT NULL,
    state TEXT,
    time REAL NOT NULL,
    percepts TEXT,
    times TEXT,
    PRIMARY KEY (match, step)
);
CREATE TABLE IF NOT EXISTS tournaments (
    id TEXT PRIMARY KEY,
    config TEXT NOT NULL,
    status TEXT NOT NULL,
    standings TEXT,
    started REAL NOT NULL,
    finished REAL,
    owner TEXT
);
CREATE TABLE IF NOT EXISTS agents (
    name TEXT PRIMARY KEY,
    secret_hash TEXT NOT NULL,
    source TEXT NOT NULL,
    registered REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS matches_by_tournament ON matches(tournament);
"""


_OPEN_OWNERS: set[str] = set()  # owners of the Records open in this process


def _owner_alive(owner: str | None) -> bool:
    """Whether the Records that started a running match may still finish it."""
    if not owner:
        return False
    pid_text = owner.split(":", 1)[0]
    if not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return owner in _OPEN_OWNERS
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user
    return True


def _create_private(path: str) -> None:
    """Create a new database file readable by its owner only (mode 0600): it holds the
    agents' secret hashes and GDL-II percepts. SQLite gives its WAL and shared-memory
    files the database's mode."""
    if path == ":memory:":
        return
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass


class RecordReads:
    """The reads of the match database, over ``_read_query`` (run wherever the subclass
    keeps its connection)."""

    def _read_query(self, sql: str, args: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        raise NotImplementedError

    path: str

    def list_matches(self, tournament: str | None = None, limit: int = 1000) -> list[dict[str, Any]]:
        """Matches, newest first (JSON columns decoded)."""
        where, args = ("WHERE tournament=?", (tournament,)) if tournament else ("", ())
        rows = self._read_query(f"SELECT id, game, format, roles, players, seed, status,"
                                f" reason, payoffs, tournament, started, finished FROM matches"
                                f" {where} ORDER BY started DESC, id LIMIT ?", (*args, limit))
        matches = [_decode(row) for row in rows]
        faults = self._fault_counts([m["id"] for m in matches])
        for match in matches:
            match["faults"] = faults.get(match["id"], [0] * len(match["roles"]))
        return matches

    def _fault_counts(self, ids: list[str]) -> dict[str, list[int]]:
        """Per match, per role: the steps with an error (timeout, illegal move ...)."""
        counts: dict[str, list[int]] = {}
        for start in range(0, len(ids), 500):  # SQLite's bound on query parameters
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self._read_query(f"SELECT match, errors FROM steps WHERE match IN"
                                        f" ({marks})", tuple(chunk)):
                flags = [bool(e) for e in json.loads(row["errors"])]
                old = counts.setdefault(row["match"], [0] * len(flags))
                counts[row["match"]] = [c + f for c, f in zip(old, flags, strict=True)]
        return counts

    def list_tournaments(self, limit: int = 1000) -> list[dict[str, Any]]:
        """Tournaments, newest first, with how many matches each recorded."""
        rows = self._read_query("SELECT t.id, t.config, t.status, t.started, t.finished,"
                                " (SELECT COUNT(*) FROM matches m WHERE m.tournament = t.id)"
                                " AS matches FROM tournaments t ORDER BY t.started DESC, t.id"
                                " LIMIT ?", (limit,))
        return [_decode(row) for row in rows]

    def get_match(self, match: str) -> dict[str, Any]:
        """One match with its steps; :class:`GameError` when there is no such match."""
        rows = self._read_query("SELECT * FROM matches WHERE id=?", (match,))
        if not rows:
            raise GameError(f"no match {match!r} in {self.path}")
        out = _decode(rows[0])
        steps = self._read_query("SELECT step, moves, errors, state, time, percepts, times"
                                 " FROM steps WHERE match=? ORDER BY step", (match,))
        out["steps"] = [_decode(step) for step in steps]
        return out

    def steps_after(self, match: str, step: int) -> list[dict[str, Any]]:
        """The match's steps after ``step``, in order (a follower's poll)."""
        rows = self._read_query("SELECT step, moves, errors, state, time, percepts, times"
                                " FROM steps WHERE match=? AND step>? ORDER BY step",
                                (match, step))
        return [_decode(row) for row in rows]

    def match_status(self, match: str) -> tuple[str, list[float] | None, str | None]:
        """(status, payoffs, reason) of a recorded match."""
        rows = self._read_query("SELECT status, payoffs, reason FROM matches WHERE id=?",
                                (match,))
        if not rows:
            raise GameError(f"no match {match!r} in {self.path}")
        row = _decode(rows[0])
        return row["status"], row["payoffs"], row["reason"]

    def game_rules(self, game_hash: str | None) -> dict[str, str] | None:
        """``{"format", "name", "text"}`` of a stored game (None: not stored, as in
        databases from before rules were recorded)."""
        if game_hash is None:
            return None
        rows = self._read_query("SELECT format, name, text FROM games WHERE hash=?",
                                (game_hash,))
        return rows[0] if rows else None

    def get_tournament(self, tid: str) -> dict[str, Any]:
        rows = self._read_query("SELECT * FROM tournaments WHERE id=?", (tid,))
        if not rows:
            raise GameError(f"no tournament {tid!r} in {self.path}")
        return _decode(rows[0])


class RecordsReader(RecordReads):
    """Reads of a match database on connections of their own, one per thread that reads
    (the server's page threads), so a long read never waits for, nor delays, the commits
    of running matches (WAL: readers and the writer do not block each other)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    def _read_query(self, sql: str, args: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        db = getattr(self._local, "db", None)
        if db is None:
            try:
                db = sqlite3.connect(f"file:{quote(self.path)}?mode=ro", uri=True,
                                     check_same_thread=False)
                db.execute("PRAGMA busy_timeout=5000")
            except sqlite3.Error as exc:
                raise GameError(f"{self.path}: cannot read the match database: {exc}") \
                    from None
            self._local.db = db
            with self._lock:
                self._all.append(db)
        return _query(db, sql, args)

    def close(self) -> None:
        with self._lock:
            for db in self._all:
                db.close()
            self._all.clear()


class Records(RecordReads):
    """The match database (one file, WAL); blocking methods plus ``a``-prefixed async ones."""

    MAX_BATCH = 512

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self.owner = f"{os.getpid()}:{secrets.token_hex(6)}"
        _OPEN_OWNERS.add(self.owner)
        self._jobs: queue.SimpleQueue[tuple[Callable[..., Any], tuple[Any, ...], Future[Any]]
                                      | None] = queue.SimpleQueue()
        self._db: sqlite3.Connection | None = None
        self._worker = threading.Thread(target=self._work, name="records", daemon=True)
        self._worker.start()
        try:
            self._db = self._run(self._open)
        except BaseException:
            _OPEN_OWNERS.discard(self.owner)
            self._jobs.put(None)
            self._worker.join()
            raise

    def _open(self) -> sqlite3.Connection:
        try:
            _create_private(self.path)
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a process crash loses no committed step; only a power
            # loss may drop the last commits (the database stays consistent either way)
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA busy_timeout=5000")
            db.executescript(SCHEMA)
            # databases from before owners, GDL-II percepts, stored rules and answer times
            for table, column in (("matches", "owner"), ("tournaments", "owner"),
                                  ("steps", "percepts"), ("matches", "game_hash"),
                                  ("steps", "times")):
                columns = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
                if column not in columns:
                    db.execute(f"ALTER TABLE {table} ADD COLUMN {column} TEXT")
            now = time.time()
            for table, extra in (("matches", ", reason='server restarted'"), ("tournaments", "")):
                orphans = [(now, row[0]) for row in db.execute(
                    f"SELECT id, owner FROM {table} WHERE status='running'")
                    if not _owner_alive(row[1])]
                db.executemany(f"UPDATE {table} SET status='aborted'{extra}, finished=? "
                               "WHERE id=?", orphans)
        except (sqlite3.Error, OSError) as exc:
            raise GameError(f"{self.path}: cannot open the match database: "
                            f"{getattr(exc, 'strerror', None) or exc}") from None
        return db

    def _work(self) -> None:
        """The worker thread: run waiting jobs in batches, one transaction per batch."""
        while True:
            job = self._jobs.get()
            if job is None:
                return
            batch = [job]
            while len(batch) < self.MAX_BATCH:
                try:
                    more = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    self._jobs.put(None)  # stop after this batch
                    break
                batch.append(more)
            self._run_batch(batch)

    def _run_batch(self, batch: list[tuple[Callable[..., Any], tuple[Any, ...],
                                           Future[Any]]]) -> None:
        db = self._db
        in_transaction = db is not None and len(batch) > 1
        if in_transaction:
            db.execute("BEGIN")
        outcomes: list[tuple[bool, Any]] = []
        for fn, args, _ in batch:
            try:  # a failed statement is undone alone; the transaction goes on
                outcomes.append((True, fn(*args)))
            except BaseException as exc:  # handed to the caller waiting for it
                outcomes.append((False, exc))
        if in_transaction:
            try:
                db.execute("COMMIT")
            except sqlite3.Error as exc:
                db.execute("ROLLBACK")
                outcomes = [(False, exc)] * len(batch)
        for (_, _, future), (ok, value) in zip(batch, outcomes, strict=True):
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    def _submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        future: Future[T] = Future()
        self._jobs.put((fn, args, future))
        return future

    def close(self) -> None:
        _OPEN_OWNERS.discard(self.owner)
        if self._db is not None:
            self._run(self._db.close)
            self._db = None
        self._jobs.put(None)
        self._worker.join()

    def _run(self, fn: Callable[..., T], *args: Any) -> T:
        return self._submit(fn, *args).result()

    async def _arun(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.wrap_future(self._submit(fn, *args))

    @property
    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise GameError(f"{self.path}: the match database is closed")
        return self._db

    # --- writes (committed by the worker, in batches) ---

    def _begin_match(self, row: dict[str, Any]) -> None:
        rules = row.get("rules")  # the game's text, stored once per distinct game
        game_hash = None if rules is None else rules_hash(rules)
        if rules is not None:
            self._conn.execute("INSERT OR IGNORE INTO games (hash, format, name, text)"
                               " VALUES (?,?,?,?)", (game_hash, row["format"], row["game"], rules))
        self._conn.execute(
            "INSERT INTO matches (id, game, format, roles, players, seed, startclock, playclock,"
            " tournament, status, initial_state, description, started, owner, game_hash)"
            " VALUES (?,?,?,?,?,?,?,?,?,'running',?,?,?,?,?)",
            (row["id"], row["game"], row["format"], json.dumps(row["roles"]),
             json.dumps(row["players"]), row["seed"], row["startclock"], row["playclock"],
             row.get("tournament"), row.get("initial_state"), json.dumps(row["description"]),
             time.time(), self.owner, game_hash))

    def _add_step(self, match: str, step: int, moves: list[str | None], errors: list[str],
                  state: str | None, percepts: list[list[str]] | None,
                  times: list[float | None] | None) -> None:
        self._conn.execute("INSERT INTO steps (match, step, moves, errors, state, time, percepts,"
                         " times) VALUES (?,?,?,?,?,?,?,?)",
                         (match, step, json.dumps(moves), json.dumps(errors), state, time.time(),
                          None if percepts is None else json.dumps(percepts),
                          None if times is None else json.dumps(times)))

    def _finish_match(self, match: str, status: str, payoffs: list[float] | None,
                      reason: str | None) -> None:
        self._conn.execute("UPDATE matches SET status=?, payoffs=?, reason=?, finished=?"
                         " WHERE id=?",
                         (status, None if payoffs is None else json.dumps(payoffs), reason,
                          time.time(), match))

    def _begin_tournament(self, tid: str, config: dict[str, Any]) -> None:
        self._conn.execute("INSERT INTO tournaments (id, config, status, started, owner)"
                         " VALUES (?,?,'running',?,?)",
                         (tid, json.dumps(config), time.time(), self.owner))

    def _finish_tournament(self, tid: str, status: str, standings: Any) -> None:
        self._conn.execute("UPDATE tournaments SET status=?, standings=?, finished=? WHERE id=?",
                         (status, json.dumps(standings), time.time(), tid))

    def _register_agent(self, name: str, secret_hash: str, source: str, replace: bool) -> str:
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        self._conn.execute(f"{verb} INTO agents (name, secret_hash, source, registered)"
                           " VALUES (?,?,?,?)", (name, secret_hash, source, time.time()))
        return self._conn.execute("SELECT secret_hash FROM agents WHERE name=?",
                                  (name,)).fetchone()[0]

    async def register_agent(self, name: str, secret_hash: str, source: str = "login",
                             replace: bool = False) -> str:
        """Register ``name`` with ``secret_hash`` unless it is registered already (``replace``:
        in any case); the hash the name now has. Atomic: of two first logins, one wins."""
        return await self._arun(self._register_agent, name, secret_hash, source, replace)

    async def agent_hash(self, name: str) -> str | None:
        """The stored secret hash of a registered agent name (None: not registered)."""
        rows = await self._arun(self._query, "SELECT secret_hash FROM agents WHERE name=?",
                                (name,))
        return rows[0]["secret_hash"] if rows else None

    async def begin_match(self, row: dict[str, Any]) -> None:
        await self._arun(self._begin_match, row)

    async def add_step(self, match: str, step: int, moves: list[str | None],
                       errors: list[str], state: str | None,
                       percepts: list[list[str]] | None = None, *,
                       times: list[float | None] | None = None) -> None:
        """One step; ``percepts`` (GDL-II): every role's percepts after it, in role order;
        ``times``: each role's seconds from request to answer (None: not asked)."""
        await self._arun(self._add_step, match, step, moves, errors, state, percepts, times)

    async def finish_match(self, match: str, status: str, payoffs: list[float] | None,
                           reason: str | None = None) -> None:
        await self._arun(self._finish_match, match, status, payoffs, reason)

    def _import_match(self, record: dict[str, Any]) -> bool:
        # a savepoint: the match and its steps land together, in a batch or alone
        self._conn.execute("SAVEPOINT import_match")
        try:
            added = self._insert_match(record)
        except BaseException:
            self._conn.execute("ROLLBACK TO import_match")
            raise
        finally:
            self._conn.execute("RELEASE import_match")
        return added

    def _insert_match(self, record: dict[str, Any]) -> bool:
        cursor = self._conn.execute(
            "INSERT OR IGNORE INTO matches (id, game, format, roles, players, seed, startclock,"
            " playclock, tournament, status, reason, payoffs, initial_state, description,"
            " started, finished, owner) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (record["id"], record["game"], record["format"], json.dumps(record["roles"]),
             json.dumps(record["players"]), record["seed"], record["startclock"],
             record["playclock"], record.get("tournament"), record["status"], record["reason"],
             None if record["payoffs"] is None else json.dumps(record["payoffs"]),
             record.get("initial_state"), json.dumps(record["description"]), record["started"],
             record["finished"], self.owner))
        if cursor.rowcount == 0:
            return False
        self._conn.executemany(
            "INSERT INTO steps (match, step, moves, errors, state, time) VALUES (?,?,?,?,?,?)",
            [(record["id"], s["step"], json.dumps(s["moves"]), json.dumps(s["errors"]),
              s["state"], s["time"]) for s in record["steps"]])
        return True

    async def import_match(self, record: dict[str, Any]) -> bool:
        """Write a finished match recorded elsewhere (``get_match``'s form: a Ray task's
        in-memory records) with its steps; False, writing nothing, when its id is
        recorded already, so a match run again after a lost node is kept once."""
        return await self._arun(self._import_match, record)

    def _read_query(self, sql: str, args: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        return self._run(self._query, sql, args)

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        return _query(self._conn, sql, args)

    def reader(self) -> RecordReads:
        """Reads on connections of their own (:class:`RecordsReader`); an in-memory
        database has none but this one."""
        return self if self.path == ":memory:" else RecordsReader(self.path)

    async def begin_tournament(self, tid: str, config: dict[str, Any]) -> None:
        await self._arun(self._begin_tournament, tid, config)

    async def finish_tournament(self, tid: str, status: str, standings: Any) -> None:
        await self._arun(self._finish_tournament, tid, status, standings)

def _query(db: sqlite3.Connection, sql: str, args: tuple[Any, ...]) -> list[dict[str, Any]]:
    cursor = db.execute(sql, args)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def rules_hash(text: str) -> str:
    """The key of a game's rules text (SHA-1 of its UTF-8 bytes)."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


_JSON_COLUMNS = ("roles", "players", "payoffs", "moves", "errors", "description", "config",
                 "standings", "percepts", "times")


def _decode(row: dict[str, Any]) -> dict[str, Any]:
    return {k: _load(v) if k in _JSON_COLUMNS and v is not None else v
            for k, v in row.items()}


def _load(text: str) -> Any:
    """A JSON column; a lone surrogate that an older server let in (``"\\ud800"``) is
    read as U+FFFD, so no page or printout of the record fails to encode it."""
    value = json.loads(text)
    return _unicode(value) if "\\u" in text else value


def _unicode(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [_unicode(v) for v in value]
    if isinstance(value, dict):
        return {_unicode(k): _unicode(v) for k, v in value.items()}
    return value


def ggp_base_json(record: dict[str, Any]) -> dict[str, Any]:
    """A recorded match in ggp-base's match JSON (keys in ``shared/protocols/ggp-http.md``),
    with ``percepts`` added for a GDL-II match (per step, per role: the sorted percepts)."""
    steps = record["steps"]
    states = [record.get("initial_state")] + [s["state"] for s in steps]
    extra = {"percepts": [s["percepts"] for s in steps]} \
        if any(s.get("percepts") is not None for s in steps) else {}
    return {
        "matchId": record["id"],
        "startClock": record["startclock"],
        "playClock": record["playclock"],
        "previewClock": -1,
        "startTime": int(record["started"] * 1000),
        "randomToken": str(record["seed"]),
        "playerNamesFromHost": record["players"],
        "tournamentNameFromHost": record.get("tournament") or "",
        "scrambled": False,
        "gameMetaURL": "",
        "gameName": record["game"],
        "gameRoleNames": record["roles"],
        "states": states,
        "moves": [[m if m is not None else "" for m in s["moves"]] for s in steps],
        "errors": [s["errors"] for s in steps],
        "stateTimes": [int(record["started"] * 1000)] + [int(s["time"] * 1000) for s in steps],
        "goalValues": record["payoffs"] or [],
        "isCompleted": record["status"] == "completed",
        "isAborted": record["status"] == "aborted",
        **extra,
    }
