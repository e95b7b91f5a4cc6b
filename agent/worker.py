"""The agent's worker process: it holds one brain and answers the agent's requests.

``python -m agent.worker_entry FD [--warm | --legal] [CRASH_AT_STEP]``
(:class:`agent.gamer.Worker` starts it; :mod:`agent.worker_entry` guards the imports): :func:`worker_main` reads requests
from the socket ``FD`` and answers them. The brain (:class:`agent.brains.base.Brain`,
made by :func:`agent.brains.factory.make_brain`, or with ``--legal`` by
:class:`agent.brains.legal.LegalBrain`, the agent's light fallback worker) does all
the thinking; this module knows nothing of its kind. Around it: the cancel gate
(SIGUSR1 drops the request being served), the memory limit, the cyclic collector
kept off the clocks, and the worker's death with its agent.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import logging
import os
import resource
import signal
import sys
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from agent.brains.base import Brain
from agent.brains.options import BrainOptions, GameSpec
from solvers.errors import GameError, LimitReached

log = logging.getLogger("agent.worker")


class Cancelled(BaseException):
    """The agent cancelled the request being served (SIGUSR1: the match ended). A
    BaseException, so no ``except Exception`` in the search swallows it."""


class CancelGate:
    """SIGUSR1 cancels the request being served; between requests it is ignored (a
    late signal must not cancel the next request). Answers are sent with the signal
    blocked, so a cancel never cuts one in half; it takes effect just after."""

    def __init__(self) -> None:
        self.serving = False

    def on_signal(self, signum: int, frame: Any) -> None:
        if self.serving:
            self.serving = False
            raise Cancelled

    def send(self, conn: Connection, message: tuple) -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
        try:
            conn.send(message)
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})


def limit_memory(megabytes: int) -> None:
    """Cap the process's address space (0: no cap)."""
    if megabytes > 0:
        limit = megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


class BrainHost:
    """The brain of the worker's match, and the requests that reach it.

    Requests (tuples): ``("start", seq, spec, role, options, history, until)``,
    ``("play", seq, observation, until, legal)``, ``("goals", seq, observation)``,
    ``("ping", seq)``, ``("warm", seq)``, ``("quit",)``. Answers carry the request's ``seq``:
    ``("ready", seq, info)``, ``("legal", seq, moves)``, ``("move", seq, move, info)``,
    ``("goals", seq, goals)``, ``("pong", seq)``, ``("error", seq, message, invalid)``
    (``invalid``: the game or the message is at fault, not the worker). A
    ``start`` whose brain knows legal moves, and every ``play``, first answer
    ``("legal", seq, moves)`` (the agent's fallback). ``observation`` is what the seat
    was told of the last step (:data:`agent.brains.base.Observation`), ``legal`` our
    legal moves when the manager told them (None: the brain knows them).
    ``make_brain`` makes the brain of a ``start`` (``spec, role, options, until``).
    ``crash_at_step`` is a test hook: the process dies in that step's search.
    ``warming``: a spare's warm-up thread; ``("warm", seq)`` answers ``pong`` once it
    is done.
    """

    def __init__(self, send, make_brain: Callable[..., Brain],
                 crash_at_step: int | None = None,
                 warming: threading.Thread | None = None) -> None:
        self.send = send
        self.make_brain = make_brain
        self.crash_at_step = crash_at_step
        self.warming = warming
        self.brain: Brain | None = None

    def serve(self, request: tuple) -> bool:
        """Answer one request; False for ``quit``."""
        kind, seq = request[0], request[1] if len(request) > 1 else None
        if kind == "quit":
            return False
        if kind == "ping":
            self.send(("pong", seq))
        elif kind == "warm":   # a ping answered once the warm-up is done
            if self.warming is not None:
                self.warming.join()
            self.send(("pong", seq))
        elif kind == "start":
            self.start(seq, *request[2:])
        elif kind == "play":
            self.play(seq, *request[2:])
        elif kind == "goals":
            brain = self._match_brain()
            brain.observe(request[2])
            self.send(("goals", seq, brain.goals()))
        return True

    def _match_brain(self) -> Brain:
        """The brain of the match; GameError when its start failed (or none came)."""
        if self.brain is None:
            raise GameError("no game: its start failed")
        return self.brain

    def start(self, seq: int, spec: GameSpec, role: str, options: BrainOptions,
              history: list, until: float) -> None:
        if self.brain is not None:  # a new match: the old one is over
            self.brain.stop()
            self.brain = None
        gc.collect()
        limit_memory(options.memory_mb)
        brain = self.make_brain(spec, role, options, until)
        for observation in history:
            brain.observe(observation)
        self.brain = brain  # made and caught up: it plays, whatever its metagame does
        legal = brain.legal()
        if legal:
            self.send(("legal", seq, legal))  # the fallback for step 1
        self.send(("ready", seq, brain.metagame(until)))

    def play(self, seq: int, observation: Any, until: float, legal: list[str] | None) -> None:
        brain = self._match_brain()
        brain.observe(observation, until, legal)
        self.send(("legal", seq, brain.legal()))
        if self.crash_at_step is not None and brain.step + 1 >= self.crash_at_step:
            os._exit(3)
        move, info = brain.select(until)
        self.send(("move", seq, move, info))
        gc.collect(1)


def worker_main(conn: Connection, make_brain: Callable[..., Brain],
                crash_at_step: int | None = None,
                warm_up: Callable[[], None] | None = None) -> None:
    """Serve requests from the agent (:class:`BrainHost`) until told to quit or the pipe
    closes. SIGUSR1 cancels the request being served: it answers ``("cancelled",
    seq)`` at once (a cancelled ``play`` has still taken its observation, so
    ``goals`` works after it). A failed request is answered ``error``; a ``start``
    that fails before its brain is made and caught up leaves none. ``warm_up``: a
    spare's, run on a thread beside the loop so a START that comes first is served at
    once (its searches use the numpy passes until the kernels are in; numba's first
    compile takes 10-30 s)."""
    warming = None
    if warm_up is not None:
        warming = threading.Thread(target=warm_up, name="warm-up", daemon=True)
        warming.start()

    # The cyclic collector's full passes over a big search tree take long enough to
    # make a move late; the tree has no cycles, so collect only between moves, and
    # there only the young generations (what the move made): a full pass at a match's start.
    gc.disable()

    gate = CancelGate()
    signal.signal(signal.SIGUSR1, gate.on_signal)
    send = functools.partial(gate.send, conn)
    host = BrainHost(send, make_brain, crash_at_step, warming)
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return  # (the brain goes with the process: no stop() to pay for)
        kind, seq = request[0], request[1] if len(request) > 1 else None
        gate.serving = True
        try:  # (a cancel inside an error handler below still lands here)
            try:
                if not host.serve(request):
                    return
                gate.serving = False
            except OSError:  # the agent is gone (broken pipe): nothing left to serve
                return
            except LimitReached as exc:  # the game outgrew a budget: not its fault
                gate.serving = False
                _answer(send, ("error", seq, str(exc), False))
            except GameError as exc:
                gate.serving = False
                _answer(send, ("error", seq, str(exc), True))
            except MemoryError:  # the memory limit: no traceback (it would need memory)
                gate.serving = False
                log.error("worker out of memory on %s", kind)
                _answer(send, ("error", seq, "internal error: MemoryError", False))
            except Exception as exc:  # report, keep serving: the agent decides what to do
                gate.serving = False
                log.exception("worker failed on %s", kind)
                _answer(send, ("error", seq, f"internal error: {type(exc).__name__}: {exc}",
                               False))
        except Cancelled:
            _answer(send, ("cancelled", seq))


def _answer(send, message: tuple) -> None:
    try:
        send(message)
    except OSError:
        pass  # the agent is gone; the next recv ends the loop


def die_with_the_agent() -> None:
    """Linux: the kernel kills the worker when the agent process dies (kill -9, or a
    server terminating a launched agent), so no search outlives its agent."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the worker ends at its next read (end of file)


def main(argv: list[str]) -> int:
    """``python -m agent.worker_entry FD [--warm | --legal] [CRASH_AT_STEP]``."""
    die_with_the_agent()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s worker %(levelname)s %(message)s")
    try:
        args = argv[1:]
        warm_up = None
        if "--legal" in args:  # deferred: the light legal worker imports the prover only
            from agent.brains.legal import LegalBrain as make_brain
        else:  # deferred: the brains, with the searches and the solvers (~1 s)
            from agent.brains.factory import make_brain
            from agent.brains.factory import warm_up as load_kernels
            if "--warm" in args:  # a spare: the compiled kernels while idle
                warm_up = load_kernels
        crash = [a for a in args if not a.startswith("--")]
        worker_main(Connection(int(argv[0])), make_brain, int(crash[0]) if crash else None,
                    warm_up)
    except KeyboardInterrupt:  # Ctrl-C in the terminal reaches the whole process group:
        return 130  # the agent says "interrupted", the worker leaves quietly
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
