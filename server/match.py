"""One match, run as a GGP game manager runs it.

Algorithm (ggp-base's GameServer, as ``shared/protocols/ggp-http.md`` describes it):

1. Record the match (status ``running``), then start every seat at once; each gets
   the start clock. A seat that cannot be filled aborts the match.
2. At each step, for every role that has legal moves, draw a uniformly random legal
   move from the match's fault generator *before* asking (so a fault's replacement
   does not depend on when it happened), then ask all acting roles in parallel with
   the play clock (plus a 1 s grace, as ggp-base waits).
3. A late reply becomes that move with error ``TO`` (``CE`` when the player is
   unreachable), a non-move ``IL null``, an illegal move ``IL <move>``.
4. Apply the joint move (chance from the match's chance generator), commit the step
   to the database, then tell every seat the step's result (its own observation, as
   the game gives it). In a GDL-II match (``server/gdl2.py``) a seat's observation is
   only its own move and percepts; the record keeps the true state and every seat's
   percepts.
5. At a terminal state, record the payoffs and send each seat the end (a game that
   leaves its goals ill-defined there scores 0 for every role, with a note). An abort
   (operator, shutdown, cancelled task) records ``aborted`` with the reason; in a
   GDL-II match the players are not told a reason that came from the game (a rules
   error may describe the state).

Both generators derive from the match seed, so a seed replays the match when the
players are deterministic. A match's clocks, seed and tournament are its
:class:`MatchOptions`.
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from server import loop_clock
from server.engine import InlineEngine, PoolEngine
from server.gdl2 import is_gdl2, step_percepts
from server.players.base import Player, PlayerGone, SeatInfo, SeatUnfilled, StepRequest
from server.protocol import MAX_SEED, match_legal_move
from server.records import Records
from solvers.errors import GameError
from solvers.playable import PlayableGame, State

GRACE = 1.0  # seconds a late reply is still accepted, as ggp-base waits playclock + 1 s
MAX_STEPS = 10_000  # a guard against games that never end
STARTCLOCK = 10.0  # seconds, unless a match says otherwise
PLAYCLOCK = 5.0

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MatchOptions:
    """How one match is played: its clocks (seconds), its seed (None: a random one,
    drawn when the match is created) and the tournament it belongs to."""

    startclock: float = STARTCLOCK
    playclock: float = PLAYCLOCK
    seed: int | None = None
    tournament: str | None = None

    def seeded(self) -> MatchOptions:
        """These options with a seed: the given one (checked), else a random one."""
        if self.seed is None:
            return replace(self, seed=secrets.randbelow(1 << 31))
        if not 0 <= self.seed <= MAX_SEED:  # the records keep it as a 64-bit integer
            raise GameError(f"seed {self.seed} is not in [0, {MAX_SEED}]")
        return self


@dataclass
class MatchOutcome:
    match: str
    status: str  # completed | aborted
    payoffs: list[float] | None
    reason: str | None = None
    moves: list[list[str | None]] = field(default_factory=list)
    errors: list[list[str]] = field(default_factory=list)
    percepts: list[list[list[str]]] = field(default_factory=list)  # GDL-II: per step, per role
    latencies: list[float] = field(default_factory=list)  # seconds, request -> reply
    step_times: list[float] = field(default_factory=list)  # seconds, last reply -> results out


class MatchAborted(Exception):
    """Raised into a running match to abort it (the reason is recorded)."""


class MatchListener(Protocol):
    """Who follows a match as it happens (the server's spectators): told after the fact,
    synchronously; a listener must never block or raise (the match would wait)."""

    def begun(self, match: Match, state: State) -> None: ...

    def turn(self, match: Match, acting: list[int]) -> None: ...

    def stepped(self, match: Match, state: State) -> None: ...

    def ended(self, match: Match) -> None: ...


class Match:
    """A match between seated players (see the module docstring)."""

    def __init__(self, match_id: str, game: PlayableGame, players: Sequence[Player],
                 specs: Sequence[str], records: Records, options: MatchOptions, *,
                 grace: float = GRACE, engine: PoolEngine | None = None) -> None:
        if len(players) != len(game.roles):
            raise GameError(f"{game.name} has {len(game.roles)} roles "
                            f"({', '.join(game.roles)}); got {len(players)} "
                            f"player{'' if len(players) == 1 else 's'}")
        self.id = match_id
        self.game = game
        self.players = list(players)
        self.specs = list(specs)
        self.records = records
        self.options = options = options.seeded()
        assert options.seed is not None  # (seeded)
        self.startclock = options.startclock
        self.playclock = options.playclock
        self.seed: int = options.seed
        self.tournament = options.tournament
        self.grace = grace
        self.chance_rng = random.Random(f"{self.seed}:chance")
        self.fault_rng = random.Random(f"{self.seed}:faults")
        self.step = 0
        self.gdl2 = is_gdl2(game)  # GDL-II: nobody sees the joint move (server/gdl2.py)
        self.abort_reason: str | None = None
        self.outcome = MatchOutcome(match_id, "running", None)
        self.listener: MatchListener | None = None
        self.answer_times: list[float | None] = []  # this step's, per role (None: not asked)
        # where the game is computed: the event loop, or one worker of the server's pool
        self.engine = InlineEngine() if engine is None else engine.bind()

    def seat(self, role: int) -> SeatInfo:
        return SeatInfo(self.id, self.game, role, self.startclock, self.playclock, self.seed)

    async def run(self) -> MatchOutcome:
        """Play the match to its end (or abort) and return how it ended; never raises GameError."""
        state = self.game.initial_state(self.chance_rng)
        self._tell("begun", state)  # before any wait: a spectator may come at once
        await self.records.begin_match({
            "id": self.id, "game": self.game.name, "format": self.game.format,
            "roles": list(self.game.roles), "players": self.specs, "seed": self.seed,
            "startclock": self.startclock, "playclock": self.playclock,
            "tournament": self.tournament, "initial_state": self.game.state_text(state),
            "description": {"format": self.game.format, "name": self.game.name},
            "rules": self.game.description().get("text")})
        try:
            await self._start_all()
            state = await self._play(state)
            payoffs, note = self._payoffs(state)
            await self.records.finish_match(self.id, "completed", payoffs, note)
            self.outcome.status, self.outcome.payoffs, self.outcome.reason = \
                "completed", payoffs, note
            last = self._last_joint()
            await asyncio.gather(*(p.stop(payoffs, self.game.observation(state, r), last)
                                   for r, p in enumerate(self.players)),
                                 return_exceptions=True)
        except (GameError, asyncio.CancelledError, MatchAborted) as exc:
            from_game = self.abort_reason is None and isinstance(exc, GameError) \
                and not isinstance(exc, SeatUnfilled)
            reason = self.abort_reason or (str(exc) if isinstance(exc, GameError) else "cancelled")
            await self._record_abort(reason, from_game)
            if isinstance(exc, asyncio.CancelledError) and self.abort_reason is None:
                raise
        except Exception as exc:  # a bug in a game adapter or here: this match only
            log.exception("match %s failed", self.id)
            await self._record_abort(f"internal error: {type(exc).__name__}: {exc}", True)
        finally:
            self._tell("ended")
            await asyncio.gather(*(p.close() for p in self.players), return_exceptions=True)
        return self.outcome

    def _tell(self, event: str, *args: Any) -> None:
        """Tell the listener; its failure is logged and costs the match nothing."""
        if self.listener is None:
            return
        try:
            getattr(self.listener, event)(self, *args)
        except Exception:
            log.exception("match %s: the listener failed on %s", self.id, event)

    def _payoffs(self, state: State) -> tuple[list[float], str | None]:
        """The payoffs, and a note when the game leaves them ill-defined at its end
        (chess.kif at its 200-move limit has no goal for anyone): then every role
        scores 0, as search counts such states (``solvers.search.safe_goals``). The
        match was played to its end; aborting it would drop the result."""
        try:
            return [float(p) for p in self.game.payoffs(state)], None
        except GameError as exc:
            log.warning("match %s: %s; every role scores 0", self.id, exc)
            return [0.0] * len(self.game.roles), f"ill-defined payoffs, every role scores 0: {exc}"

    async def _record_abort(self, reason: str, from_game: bool = False) -> None:
        self.outcome.status, self.outcome.reason = "aborted", reason
        # the record must be written even while this task is being cancelled
        await asyncio.shield(self.records.finish_match(self.id, "aborted", None, reason))
        if from_game and self.gdl2:  # "... in the non-terminal state {...}"
            reason = f"the game failed at step {self.step} (the reason is in the match record)"
        await asyncio.gather(*(p.abort(reason) for p in self.players), return_exceptions=True)

    async def _start_all(self) -> None:
        starts = [asyncio.ensure_future(p.start(self.seat(r))) for r, p in enumerate(self.players)]
        try:
            for done in asyncio.as_completed(starts):
                await done  # SeatUnfilled (a GameError) aborts the match
        except (SeatUnfilled, asyncio.CancelledError):  # (cancelled: Ctrl-C, server closing)
            for task in starts:
                task.cancel()
            raise

    def _last_joint(self) -> list[str | None] | None:
        """The previous step's moves of every seat, for GGP HTTP players of plain GDL
        (None before the first step, and in GDL-II, where no seat may see them)."""
        if self.gdl2 or not self.outcome.moves:
            return None
        return self.outcome.moves[-1]

    async def _play(self, state: State) -> State:
        look = (await self.engine.look(self.game, state)).check()
        while not look.terminal:
            if self.step >= MAX_STEPS:
                raise GameError(f"no terminal state after {MAX_STEPS} steps")
            self.step += 1
            legal: list[list[str]] = look.legal or []
            if not any(legal):
                raise GameError(f"step {self.step}: no role has a legal move")
            fallback = [self.fault_rng.choice(moves) if moves else None for moves in legal]
            self.answer_times = [None] * len(legal)
            self._tell("turn", [r for r, moves in enumerate(legal) if moves])
            last = self._last_joint()
            replies = await asyncio.gather(*(
                self._ask(r, StepRequest(self.step, state, self.game.observation(state, r),
                                         moves, self.playclock, last))
                for r, moves in enumerate(legal)))
            replied = time.perf_counter()
            moves: list[str | None] = []
            errors: list[str] = []
            for r, (reply, error) in enumerate(replies):
                if legal[r] and error == "":
                    reply, error = match_legal_move(self.game.format, reply, legal[r])
                moves.append(reply if error == "" else fallback[r])
                errors.append(error)
            state, self.chance_rng, text, look = await self.engine.advance(
                self.game, state, moves, self.chance_rng)
            percepts = step_percepts(self.game, state) if self.gdl2 else None
            # commit before anyone hears of the step: a crash loses at most this step
            await self.records.add_step(self.id, self.step, moves, errors, text, percepts,
                                        times=self.answer_seconds())
            self.outcome.moves.append(moves)
            self.outcome.errors.append(errors)
            if percepts is not None:
                self.outcome.percepts.append(percepts)
            await asyncio.gather(*(p.result(self.step, moves[r], errors[r],
                                            self.game.observation(state, r))
                                   for r, p in enumerate(self.players)),
                                 return_exceptions=True)
            self._tell("stepped", state)
            self.outcome.step_times.append(time.perf_counter() - replied)
            look.check()  # the game's failure on the new state, met where it always was
        return state

    def answer_seconds(self) -> list[float | None]:
        """This step's answer time per role as recorded (0.1 ms; None: not asked)."""
        return [None if t is None else round(t, 4) for t in self.answer_times]

    async def _ask(self, role: int, request: StepRequest) -> tuple[Any, str]:
        """(reply, "") or (None, fault code) for one role; roles that do not act are not asked."""
        if not request.legal:
            return None, ""
        player = self.players[role]
        clock = loop_clock.running()
        sent = clock.now()
        limit = request.deadline + self.grace
        try:
            reply = await clock.wait(asyncio.ensure_future(player.play(request)), sent + limit)
        except TimeoutError:
            self.answer_times[role] = clock.now() - sent
            return None, "TO" if player.connected else "CE"
        except (PlayerGone, ConnectionError, OSError):
            self.answer_times[role] = clock.now() - sent
            return None, "CE"
        except Exception:  # a player's own failure (even a bug) never ends the match
            log.exception("match %s role %d: the player failed", self.id, role)
            self.answer_times[role] = clock.now() - sent
            return None, "CE"
        # from the request to when the answer reached the server (after a stall of the
        # loop, when it may have: server/loop_clock.py), not to when the loop read it
        arrived = player.answered_at if player.answered_at is not None else clock.arrival()
        took = self.answer_times[role] = max(0.0, arrived - sent)
        self.outcome.latencies.append(took)
        if took > limit:  # read within the catch-up, but it came too late
            return None, "TO"
        return reply, ""
