"""Built-in players that run inside the server: random, first legal, UCT, solver-backed.

They never block the event loop: ``uct`` and ``solver`` think in a worker thread
(``asyncio.to_thread``) and stop at the step's deadline minus a margin; ``random``
and ``first`` answer at once. Every random choice comes from a generator seeded by
the match seed and the role (``random?seed=N`` overrides it).

``uct`` is plain UCT where one role moves and decoupled UCT where several move at
once (``solvers.search.MCTS``), with ``?playouts=N`` (default: until the deadline)
and ``?margin=S`` (seconds kept free before the deadline, default 0.5, but at most a
quarter of the clock: the agent's rule, so both think as long on the same clock). It searches
the true state, in the model the game hands it (:meth:`solvers.playable.PlayableGame.
search_model`: GDL's state machine), so only in perfect-information games; in ``.efg``,
tree, POSG and GDL-II games, where a built-in may know no more than its observation,
it plays uniformly at random. ``solver`` plays the equilibrium strategy of the game's format
(:func:`gdl.formats.equilibrium_policy`), solved within the start clock; where the
game does not fit the start clock (or off the solved states) it plays like ``uct``.
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
import time
from collections.abc import Hashable
from typing import Any

from gdl.formats import equilibrium_policy
from server.players.base import QuietPlayer, SeatInfo, StepRequest
from server.players.spec import PlayerSpec
from solvers.errors import GameError
from solvers.playable import Policy, SearchModel
from solvers.search import MCTS, SearchConfig, SearchResult

log = logging.getLogger(__name__)


class RandomPlayer(QuietPlayer):
    """A uniformly random legal move (the base of the built-ins: seeding, ``?delay=S``)."""

    def __init__(self, spec: PlayerSpec) -> None:
        self.spec = spec
        self.label = spec.text
        self.rng = random.Random()
        # seconds to wait before answering: a slow player for demos and tests
        self.delay = spec.option_float("delay", 0.0)

    async def start(self, seat: SeatInfo) -> None:
        seed = self.spec.options.get("seed", f"{seat.seed}:{seat.role}")
        self.rng = random.Random(f"builtin:{seed}")

    async def play(self, request: StepRequest) -> Any:
        if self.delay > 0:
            await asyncio.sleep(self.delay)
        return await self.choose(request)

    async def choose(self, request: StepRequest) -> Any:
        return self.rng.choice(request.legal)


class FirstPlayer(RandomPlayer):
    """The first legal move in the game's order."""

    async def choose(self, request: StepRequest) -> Any:
        return request.legal[0]


class UctPlayer(RandomPlayer):
    """UCT / decoupled UCT on the true state (perfect-information games only)."""

    def __init__(self, spec: PlayerSpec) -> None:
        super().__init__(spec)
        self.playouts = spec.option_int("playouts", 0) or None
        self.margin = spec.option_float("margin", 0.5)
        self.search: MCTS | None = None
        self.model: SearchModel | None = None  # what ``search`` searches
        self.search_role = 0  # this seat's role in the model
        self.role = 0
        # a search the match stopped waiting for still runs in its thread: the next one
        # must wait for it (the tree is not thread-safe)
        self._searching = threading.Lock()

    async def start(self, seat: SeatInfo) -> None:
        await super().start(seat)
        self.role = seat.role
        model = seat.game.search_model()  # None where the seat may not see the true state
        if model is not None:
            self.model = model
            self.search_role = model.seat_roles[seat.role]
            self.search = MCTS(model.game, SearchConfig(seed=self.rng.randrange(1 << 30)),
                               chance_roles=model.chance_roles)

    async def choose(self, request: StepRequest) -> Any:
        if self.search is None or self.model is None or len(request.legal) == 1:
            return await super().choose(request)
        # a 0.5 s margin on a 1 s clock would halve the thinking time; the agent keeps
        # at most a quarter of the clock, and so does this player
        margin = min(self.margin, request.deadline / 4)
        deadline = time.monotonic() + max(0.05, request.deadline - margin)
        result = await asyncio.to_thread(self._search, self.model.state(request.state),
                                         deadline)
        return self.model.move_text(result.best_move(self.search_role))

    def _search(self, state: Hashable, deadline: float) -> SearchResult:
        assert self.search is not None
        with self._searching:
            return self.search.search(state, deadline=deadline, playouts=self.playouts)


class SolverPlayer(UctPlayer):
    """A solved strategy where the format's solver gives one (:func:`gdl.formats.
    equilibrium_policy`, solved within the start clock in a worker thread), else UCT
    (GDL) or uniform random."""

    def __init__(self, spec: PlayerSpec) -> None:
        super().__init__(spec)
        self.policy: Policy | None = None

    async def start(self, seat: SeatInfo) -> None:
        await super().start(seat)
        budget = max(0.1, seat.startclock - self.margin)
        try:
            self.policy = await asyncio.to_thread(equilibrium_policy, seat.game, budget)
        except GameError as exc:  # LimitReached, UnsupportedGame: play by search instead
            log.info("solver built-in: %s is not solved (%s); using uct", seat.game.name, exc)
        except Exception:  # a solver failure costs the solved strategy, not the match
            log.exception("solver built-in: solving %s failed; using uct", seat.game.name)

    async def choose(self, request: StepRequest) -> Any:
        weights = None
        if self.policy is not None:
            weights = await asyncio.to_thread(self.policy, self.role, request.observation,
                                              request.legal)
        if weights is None:
            return await super().choose(request)
        if not sum(weights) > 0:
            return self.rng.choice(request.legal)
        return self.rng.choices(request.legal, weights=weights)[0]


def make_builtin(spec: PlayerSpec) -> QuietPlayer:
    if spec.kind == "solver":
        return SolverPlayer(spec)
    if spec.kind == "first":
        return FirstPlayer(spec)
    if spec.kind == "uct":
        return UctPlayer(spec)
    return RandomPlayer(spec)
