"""Built-in players that run inside the server: random, first legal, UCT, solver-backed.

They never block the event loop: ``uct`` and ``solver`` think in a worker thread
(``asyncio.to_thread``) and stop at the step's deadline minus a margin; ``random``
and ``first`` answer at once. Every random choice comes from a generator seeded by
the match seed and the role (``random?seed=N`` overrides it).

``uct`` is plain UCT where one role moves and decoupled UCT where several move at
once (``solvers.search.MCTS``), with ``?playouts=N`` (default: until the deadline)
and ``?margin=S`` (seconds kept free before the deadline, default 0.5). It searches
the true state, so it is used only in perfect-information games (GDL); in ``.efg``,
tree and POSG games, where a built-in may know no more than its observation, it
plays uniformly at random. ``solver`` plays a solved strategy where the format has a
solver for it (:func:`_solved_policy`: POSG via ``solvers.posg.policy``, ``.efg``/tree
via ``solvers.extensive.playable.equilibrium_strategy``), solved within the start
clock; else it plays like ``uct``.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from server.players.base import QuietPlayer, SeatInfo, StepRequest
from server.players.spec import PlayerSpec
from solvers.playable import PlayableGame

Policy = Callable[[int, Any, Sequence[str]], list[float]]


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
        self.search: Any = None
        self.machine: Any = None
        self.machine_role = 0
        self.role = 0
        # a search the match stopped waiting for still runs in its thread: the next one
        # must wait for it (the tree is not thread-safe)
        self._searching = threading.Lock()

    async def start(self, seat: SeatInfo) -> None:
        await super().start(seat)
        self.role = seat.role
        machine = getattr(seat.game, "machine", None)
        if seat.game.format == "gdl" and machine is not None:
            from solvers.search import MCTS, SearchConfig

            # search the GDL state machine itself (gdl.playable: a state is (machine
            # state, previous joint move)); nature is the machine's ``random`` role
            self.machine = machine
            self.machine_role = list(machine.roles).index(seat.role_name)
            chance = tuple(i for i, r in enumerate(machine.roles) if r == "random")
            self.search = MCTS(machine, SearchConfig(seed=self.rng.randrange(1 << 30)),
                               chance_roles=chance)

    async def choose(self, request: StepRequest) -> Any:
        if self.search is None or len(request.legal) == 1:
            return await super().choose(request)
        deadline = time.monotonic() + max(0.05, request.deadline - self.margin)
        result = await asyncio.to_thread(self._search, request.state[0], deadline)
        return self.machine.move_to_kif(result.best_move(self.machine_role))

    def _search(self, state: Hashable, deadline: float) -> Any:
        with self._searching:
            return self.search.search(state, deadline=deadline, playouts=self.playouts)


def _solved_policy(game: PlayableGame, time_limit: float) -> Policy | None:
    """``policy(role, observation, legal) -> weights`` from the format's solver, if it has one."""
    if game.format == "posg":
        from solvers.posg.policy import equilibrium_strategy

        return equilibrium_strategy(game, time_limit=time_limit)
    if game.format in ("efg", "tree"):
        from solvers.extensive.playable import equilibrium_strategy as extensive_strategy

        strategy = extensive_strategy(game, time_limit=time_limit)  # {infoset: {action: p}}

        def policy(role: int, observation: Any, legal: Sequence[str]) -> list[float]:
            at = strategy.get(observation.get("infoset"), {}) if observation else {}
            return [float(at.get(move, 0.0)) for move in legal]

        return policy
    return None


class SolverPlayer(UctPlayer):
    """A solved strategy where the format's solver gives one (solved within the start
    clock, in a worker thread), else UCT (GDL) or uniform random."""

    def __init__(self, spec: PlayerSpec) -> None:
        super().__init__(spec)
        self.policy: Policy | None = None

    async def start(self, seat: SeatInfo) -> None:
        await super().start(seat)
        budget = max(0.1, seat.startclock - self.margin)
        self.policy = await asyncio.to_thread(_solved_policy, seat.game, budget)

    async def choose(self, request: StepRequest) -> Any:
        if self.policy is None:
            return await super().choose(request)
        weights = await asyncio.to_thread(self.policy, self.role, request.observation,
                                          request.legal)
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
