"""The gamer: "metagame within the start clock", "select a move before this deadline".

Protocol handlers (:mod:`agent.http_player`, :mod:`agent.ws_client`) call a
:class:`Gamer` and never think about processes; the gamer never touches sockets.

Clock safety (the architecture's invariant 4):

1. All thinking happens in a worker process (:mod:`agent.worker`), started ahead of
   time (spawned while idle) so a START does not pay for the interpreter start-up
   (nor for loading the batched playouts' compiled kernels).
   During a match no spare is kept (it would compete for the CPU); a replacement
   starts cold, with the general engine.
2. For each move the gamer sends what the seat was told of the last step (GDL's
   previous joint move, a GDL-II observation, or a playable game's observation with
   its legal moves) and a think-until time a little before ``deadline`` (the
   handler's arrival time + clock - safety margin); the worker first answers the
   legal moves, then its choice.
3. The event loop waits on the pipe without blocking. If no choice arrives by the
   deadline, or the worker died, the gamer answers a random legal move (seeded) from
   the list the worker sent; a dead (or long silent) worker is replaced by a new
   one that replays the match history, so the next moves are searched again.
   Beside a GDL match's worker runs a light one (``--legal``:
   :class:`agent.brains.legal.LegalBrain`, the prover from the rules text, no search
   modules to import, no grounding to blow up), told every step too: when the
   worker has not said this step's legal moves in time (cold, still building the
   game, crashed, out of memory), the fallback takes the light worker's, so it is
   always a legal move.
4. Every decision is logged (method, value estimate, playouts, time).
5. The end of a match (ABORT, STOP, a new START) cancels the request in flight at
   once: the worker drops it on SIGUSR1 (a worker that does not say so within
   ``CANCEL_GRACE`` is killed), the waiting handler answers a fallback move and
   releases the lock, so the next match never waits for an old deadline.
6. Clocks are bounded by ``max_clock`` (a manager's ``1e308`` would otherwise
   overflow the event loop's timers, or keep the agent thinking for ever).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

from agent.brains.options import BrainOptions, GameSpec
from solvers.errors import GameError

log = logging.getLogger("agent")

REPLY_SLACK = 0.25  # seconds kept between the worker's think-until and the deadline
SILENT_LIMIT = 60.0  # seconds without a word after which a live worker is replaced
CANCEL_GRACE = 1.0  # seconds a cancelled worker has to say so before it is killed
DEFAULT_MAX_CLOCK = 3600.0  # the longest clock believed (ggp agent --max-clock)
DEFAULT_MARGIN = 0.5  # seconds kept off every clock (ggp agent --margin)


def bounded_clock(clock: float, max_clock: float = DEFAULT_MAX_CLOCK) -> float:
    """A manager's clock in seconds, within ``[0, max_clock]`` (NaN counts as 0)."""
    clock = float(clock)
    return 0.0 if math.isnan(clock) or clock < 0 else min(clock, max_clock)


def answer_deadline(received: float, clock: float, margin: float,
                    max_clock: float = DEFAULT_MAX_CLOCK) -> float:
    """When to answer a message that arrived at ``received`` with ``clock`` seconds
    (bounded by ``max_clock``): ``margin`` before the manager's deadline, but never
    more than a quarter of the clock (a 0.5 s clock with a 0.5 s margin would leave
    no time at all)."""
    clock = bounded_clock(clock, max_clock)
    return received + clock - min(margin, clock / 4)


class WorkerDied(Exception):
    pass


class Worker:
    """One worker process (``python -m agent.worker_entry``) and a socket pair to it, read
    without blocking the event loop. A plain subprocess, not ``multiprocessing``'s
    spawn: that would re-import the caller's main module in the child."""

    def __init__(self, crash_at_step: int | None = None, warm: bool = False,
                 legal: bool = False) -> None:
        """``warm``: a spare, which loads the compiled kernels while idle; ``legal``:
        the light worker, which only lists our legal moves."""
        ours, theirs = socket.socketpair()
        command = [sys.executable, "-m", "agent.worker_entry", str(theirs.fileno())]
        if warm:
            command.append("--warm")
        if legal:
            command.append("--legal")
        if crash_at_step is not None:
            command.append(str(crash_at_step))
        self.process = subprocess.Popen(command, pass_fds=[theirs.fileno()],
                                        stdin=subprocess.DEVNULL)
        theirs.close()
        self.conn = Connection(ours.detach())
        self._seq = 0
        self.last_heard = time.monotonic()  # when it last sent anything (or was started)
        self._give_up_at = math.inf  # after a cancel: when receive stops waiting
        self._waiter: asyncio.Future | None = None  # what a waiting receive awaits

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, kind: str, *args: Any) -> int:
        self._seq += 1
        self._give_up_at = math.inf
        try:
            self.conn.send((kind, self._seq, *args))
        except (OSError, ValueError):  # broken pipe: the process is gone
            raise WorkerDied("the worker process is gone") from None
        return self._seq

    async def receive(self, seq: int, until: float) -> tuple | None:
        """The next answer to request ``seq``, or None at ``until`` (older answers skipped)."""
        loop = asyncio.get_running_loop()
        fd = self.conn.fileno()
        while True:
            try:
                while self.conn.poll():
                    answer = self.conn.recv()
                    self.last_heard = time.monotonic()
                    if answer[1] == seq:
                        return answer
            except (EOFError, OSError):
                raise WorkerDied(f"the worker process exited ({self.process.poll()})") from None
            remaining = min(until, self._give_up_at) - time.monotonic()
            if remaining <= 0:
                return None
            readable = self._waiter = loop.create_future()
            loop.add_reader(fd, lambda f=readable: f.done() or f.set_result(None))
            try:
                await asyncio.wait_for(readable, remaining)
            except TimeoutError:
                pass
            finally:
                loop.remove_reader(fd)
                self._waiter = None

    def cancel(self) -> None:
        """Cancel the request being served: the worker answers ``cancelled`` at once;
        a waiting :meth:`receive` gives up after ``CANCEL_GRACE`` without an answer."""
        self._give_up_at = time.monotonic() + CANCEL_GRACE
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGUSR1)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)  # wake it to see the new give-up time

    def kill(self) -> None:
        """End the process at once (a light worker holds nothing worth a clean exit,
        and a graceful quit would block the event loop for up to 0.2 s)."""
        if self.alive:
            self.process.kill()
            self.process.wait(timeout=5)
        self.conn.close()

    def close(self) -> None:
        if self.alive:
            try:
                self.conn.send(("quit",))
                self.process.wait(timeout=0.2)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        if self.alive:
            self.process.kill()
            self.process.wait(timeout=5)
        self.conn.close()


class Gamer:
    """Plays one match at a time for a protocol handler (module docstring)."""

    def __init__(self, options: BrainOptions | None = None, *,
                 crash_at_step: int | None = None) -> None:
        self.options = options or BrainOptions()
        self._crash_at_step = crash_at_step  # test hook for the crash fallback
        self._spare: Worker | None = None
        self._worker: Worker | None = None
        self._light: Worker | None = None  # the light legal worker (module docstring, 3)
        self._light_spare: Worker | None = None  # the next match's, its modules loaded
        self._light_seq = 0  # its request of the current step
        self._rng = random.Random(self.options.seed)
        self._match: tuple[GameSpec, str] | None = None
        self._history: list[Any] = []  # what the seat was told at each step
        self._legal: list[str] = []
        self.decisions: list[dict[str, Any]] = []  # every decision of the current match
        self._lock = asyncio.Lock()  # one worker request at a time
        self._ending = False  # the match is ending: requests in flight or queued give up
        self.match_number = 0  # counts the matches started

    def warm_up(self) -> None:
        """Start the next match's worker now, so a START does not wait for it."""
        if self._spare is None or not self._spare.alive:
            self._spare = Worker(self._crash_at_step, warm=True)
        if self._light_spare is None or not self._light_spare.alive:
            self._light_spare = Worker(legal=True)

    async def ready(self, timeout: float = 30.0, kernels: bool = False) -> bool:
        """Start the spare workers and wait until they have loaded their modules
        (``kernels``: and the main spare its compiled kernels, which a START never
        waits for; their first compile takes 10-30 s)."""
        self.warm_up()
        until = time.monotonic() + timeout
        try:
            for spare, request in ((self._spare, "warm" if kernels else "ping"),
                                   (self._light_spare, "ping")):
                if await spare.receive(spare.send(request), until) is None:
                    return False
        except WorkerDied:
            return False
        return True

    def _take_worker(self) -> Worker:
        """The spare if there is one, else a cold worker (no time to warm up)."""
        worker, self._spare = self._spare, None
        if worker is None or not worker.alive:
            worker = Worker(self._crash_at_step)
        self._crash_at_step = None  # the test hook crashes the first worker only
        return worker

    @property
    def in_match(self) -> bool:
        return self._match is not None

    async def start(self, spec: GameSpec, role: str, deadline: float) -> dict[str, Any]:
        """Build the game and think until ``deadline``; GameError if the game is invalid
        (or the match ended meanwhile). A match still on is ended first."""
        self._interrupt()
        async with self._lock:
            if self._match is not None:
                self._finish()
            self.match_number += 1
            self._match = (spec, role)
            self._history = []
            self.decisions = []
            self._worker = self._take_worker()
            self._start_light()
            try:
                info = await self._start_worker(self._worker, deadline)
            except GameError:
                self._finish()
                raise
        log.info("start %s as %s: %s", spec.name, role, info)
        return info

    async def _start_worker(self, worker: Worker, deadline: float) -> dict[str, Any]:
        spec, role = self._match
        until = deadline - min(REPLY_SLACK, max(0.0, deadline - time.monotonic()) / 10)
        try:
            seq = worker.send("start", spec, role, self.options, list(self._history), until)
            answer = await worker.receive(seq, deadline)
            if answer is not None and answer[0] == "legal":
                self._legal = answer[2]
                answer = await worker.receive(seq, deadline)
        except WorkerDied as exc:
            raise GameError(f"the worker could not start the game: {exc}") from None
        if self._ending:
            raise GameError("the match ended during its start clock")
        if answer is None:
            log.warning("the game was not ready within the start clock; going on")
            if not self._legal:
                self._legal = await self._light_legal() or []
            return {"ready": False}
        if answer[0] == "error":
            raise GameError(answer[2])
        return answer[2]

    async def play(self, moves: Sequence[str] | dict[str, Any] | None, deadline: float,
                   legal: Sequence[str] | None = None) -> str:
        """A GDL move (KIF) given the previous joint move (or a GDL-II observation),
        answered before ``deadline``.

        ``legal`` (when the server sends it) is the fallback list until the worker
        sends its own."""
        return await self._move(moves, deadline, legal, told=False)

    async def choose(self, observation: Any, legal: Sequence[str], deadline: float) -> str:
        """A move of a non-GDL game (``.efg``, tree, POSG) among ``legal``."""
        return await self._move(observation, deadline, legal, told=True)

    async def _move(self, observation: Any, deadline: float, legal: Sequence[str] | None,
                    told: bool) -> str:
        """``told``: the brain needs ``legal`` (it does not know the rules' moves)."""
        async with self._lock:
            started = time.monotonic()
            if told or legal:
                self._legal = list(legal)
            move, info = (self._ended() if self._ending or self._match is None else
                          await self._ask(observation, deadline, list(legal) if told else None))
            return self._decided(move, info, started)

    def _ended(self) -> tuple[str, dict[str, Any]]:
        """The answer to a request queued behind the end of its match: still a move."""
        move = self._rng.choice(self._legal) if self._legal else "noop"
        return move, {"method": "fallback", "reason": "the match ended"}

    def _decided(self, move: str, info: dict[str, Any], started: float) -> str:
        info["answer_time"] = round(time.monotonic() - started, 3)
        self.decisions.append(info)
        log.info("move %s %s", move, info)
        return move

    async def _ask(self, observation: Any, deadline: float,
                   legal: list[str] | None) -> tuple[str, dict[str, Any]]:
        """The worker's move after ``observation``; ``legal``: this step's legal moves,
        told to a brain that needs them."""
        if self._worker is None or not self._worker.alive:
            self._worker = self._restarted_worker()
        worker = self._worker
        until = deadline - min(REPLY_SLACK, max(0.0, deadline - time.monotonic()) / 10)
        # Is self._legal this step's list? (told; at step 1: the one the start reported)
        fresh = legal is not None or (observation is None and bool(self._legal))
        broken = False  # replace the worker: it died or answered nonsense
        self._tell_light(observation)
        try:
            seq = worker.send("play", observation, until, legal)
            self._history.append(observation)
            answer = await worker.receive(seq, deadline)
            if answer is not None and answer[0] == "legal":
                self._legal, fresh = answer[2], True
                answer = await worker.receive(seq, deadline)
            if answer is not None and answer[0] == "move":
                return answer[2], answer[3]
            if self._ending:  # cancelled: a worker that did not say so is killed
                reason, broken = "the match ended", answer is None
            else:
                broken = answer is not None
                reason = "no answer in time" if answer is None else answer[2]
        except WorkerDied as exc:
            reason, broken = str(exc), True
        if not fresh:  # the worker did not say this step's legal moves: the light one
            # (a worker that died early leaves the light one the rest of the clock)
            light = await self._light_legal(until)
            if light:
                self._legal, fresh = light, True
        return self._fallback(reason, fresh, broken)

    def _start_light(self) -> None:
        """A light legal worker for a GDL match (module docstring, 3), given the
        history so far."""
        self._close_light()
        spec, role = self._match
        if spec.format != "gdl":
            return
        self._light, self._light_spare = self._light_spare, None
        if self._light is None or not self._light.alive:
            self._light = Worker(legal=True)
        try:
            self._light_seq = self._light.send("start", spec, role, self.options,
                                               list(self._history), time.monotonic())
        except WorkerDied:
            self._close_light()

    def _tell_light(self, observation: Any) -> None:
        """The light worker's request for this step (its legal moves come first)."""
        if self._light is None:
            return
        try:
            self._light_seq = self._light.send("play", observation, time.monotonic(), None)
        except WorkerDied:
            self._close_light()

    async def _light_legal(self, until: float | None = None) -> list[str] | None:
        """This step's legal moves from the light worker if it says them by ``until``
        (default: now, the deadline has come); None if not. A light worker that failed
        (a GDL-II observation, a crash) is dropped."""
        if self._light is None:
            return None
        try:
            answer = await self._light.receive(self._light_seq, until or time.monotonic())
        except WorkerDied:
            answer = ("error",)
        if answer is not None and answer[0] == "legal":
            return answer[2]
        if answer is not None:
            self._close_light()
        return None

    def _close_light(self) -> None:
        if self._light is not None:
            self._light.kill()
            self._light = None

    def _fallback(self, reason: str, fresh: bool, broken: bool) -> tuple[str, dict[str, Any]]:
        """A random legal move now. A dead, confused or repeatedly late worker is
        replaced by one that replays the history, ready for the next step."""
        log.warning("fallback move: %s", reason)
        # A live worker that is merely slow (building a big game, a loaded machine)
        # catches up by itself: its late answers are skipped. Replacing it would start
        # that work over, so only a dead, confused or long-silent one is replaced.
        silent = time.monotonic() - self._worker.last_heard > SILENT_LIMIT
        if broken or silent:
            self._worker.close()
            self._worker = None if self._ending else self._restarted_worker()
        # Without this step's list (the worker died before saying it), the last one
        # known: if that move is illegal now, the manager plays a random legal move.
        move = self._rng.choice(self._legal) if self._legal else "noop"
        return move, {"method": "fallback", "reason": reason, "legal_known": fresh}

    def _restarted_worker(self) -> Worker:
        """A worker given the match and its history so far (it does not metagame)."""
        worker = self._take_worker()
        spec, role = self._match
        try:
            worker.send("start", spec, role, self.options, list(self._history),
                        time.monotonic())
        except WorkerDied:
            pass  # noticed at the next request
        return worker

    def resync(self, joint_moves: Sequence[Sequence[str] | None]) -> None:
        """Catch up after missed steps (a rejoin): ``joint_moves`` are the joint moves of
        every finished step; the next :meth:`play` brings the last one. When our own
        history is shorter, the worker is replaced by one that replays the full one."""
        if self._match is None or len(self._history) >= len(joint_moves):
            return
        self._history = [None, *joint_moves[:-1]]
        log.warning("rejoined at step %d: a new worker replays the %d finished steps",
                    len(joint_moves) + 1, len(joint_moves))
        if self._worker is not None:
            self._worker.close()
        self._worker = self._restarted_worker()
        self._start_light()

    async def stop(self, moves: Sequence[str] | None, deadline: float) -> list[int] | None:
        """The match is over: the goal values after the last joint move, if known."""
        goals = None
        self._interrupt()
        async with self._lock:
            worker = self._worker
            if worker is not None and worker.alive:
                try:
                    seq = worker.send("goals", moves)
                    answer = await worker.receive(seq, deadline)
                    if answer is not None and answer[0] == "goals":
                        goals = answer[2]
                except WorkerDied:
                    pass
            log.info("match over: goals %s", goals)
            self._finish()
        return goals

    async def abort(self, match_number: int | None = None) -> None:
        """End the match (only if it is still number ``match_number``, when given)."""
        if match_number not in (None, self.match_number):
            return
        self._interrupt()
        async with self._lock:
            if match_number in (None, self.match_number):
                log.info("match aborted")
                self._finish()

    def _interrupt(self) -> None:
        """The match is ending: cancel the worker request in flight (if any), and make
        requests queued behind it give up; the caller then takes the lock."""
        if self._lock.locked():
            self._ending = True
            if self._worker is not None:
                self._worker.cancel()

    def _finish(self) -> None:
        if self._worker is not None:
            self._worker.close()
        self._worker = None
        self._close_light()
        self._match = None
        self._legal = []
        self._ending = False
        self.warm_up()

    def close(self) -> None:
        self._finish()
        for spare in (self._spare, self._light_spare):
            if spare is not None:
                spare.close()
        self._spare = self._light_spare = None
