"""Built-in players that run inside the server: random, first legal, UCT, solver-backed.

They never block the event loop: ``uct`` and ``solver`` think in a worker thread
(``asyncio.to_thread``) and stop at the step's deadline minus a margin; ``random``
and ``first`` answer at once. Every random choice comes from a generator seeded by
the match seed and the role (``random?seed=N`` overrides it).

``uct`` is plain UCT where one role moves and decoupled UCT where several move at
once (``solvers.search.MCTS``), with ``?playouts=N`` (default: until the deadline)
and ``?margin=S`` (seconds kept free before the deadline, default 0.5, but at most a
quarter of the clock: the agent's rule, so both think as long on the same clock). It searches
the true state, so it is used only in perfect-information games (GDL); in ``.efg``,
tree, POSG and GDL-II games, where a built-in may know no more than its observation,
it plays uniformly at random. ``solver`` plays a solved strategy where the format
has a solver for it, solved within the start clock: GDL two-player games expanded
into their simultaneous-move DAG (``gdl.expand``) and solved by the thesis' baseline
(:class:`_GdlSolution`), POSG via ``solvers.posg.policy``, ``.efg``/tree via
``solvers.extensive.playable.equilibrium_strategy`` (:func:`_solved_policy`), GDL-II
games expanded into their extensive form (``gdl.gdl2_tree``: information sets are a
role's own moves and percepts, which is all it is told) and solved the same way;
where the game does not fit the start clock (or off the solved states) it plays like
``uct``.
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from server.gdl2 import is_gdl2
from server.players.base import QuietPlayer, SeatInfo, StepRequest
from server.players.spec import PlayerSpec
from solvers.errors import GameError, LimitReached
from solvers.playable import PlayableGame

Policy = Callable[[int, Any, Sequence[str]], list[float]]
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
        if seat.game.format == "gdl" and machine is not None and not is_gdl2(seat.game):
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
        # a 0.5 s margin on a 1 s clock would halve the thinking time; the agent keeps
        # at most a quarter of the clock, and so does this player
        margin = min(self.margin, request.deadline / 4)
        deadline = time.monotonic() + max(0.05, request.deadline - margin)
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
    if game.format in ("efg", "tree") or is_gdl2(game):
        from solvers.extensive.playable import equilibrium_strategy as extensive_strategy

        started = time.monotonic()
        model: Any = game
        if is_gdl2(game):
            from gdl.gdl2_tree import expand_gdl2

            try:  # at most half the budget to expand, the rest to solve
                model = expand_gdl2(game.machine,  # type: ignore[attr-defined]
                                    deadline=started + time_limit / 2)
            except LimitReached as exc:
                log.info("solver built-in: %s is not solved (%s); playing randomly",
                         game.name, exc)
                return None
        left = max(0.05, time_limit - (time.monotonic() - started))
        # {infoset name: {action: p}}, itself the policy (uniform at an unknown infoset)
        return extensive_strategy(model, time_limit=left)
    return None


class _GdlSolution:
    """A GDL game expanded into its simultaneous-move DAG and solved by the baseline
    (a subgame-perfect equilibrium: a strategy at every decision state)."""

    def __init__(self, game: PlayableGame, time_limit: float) -> None:
        from gdl.expand import Budget, expand
        from gdl.solve_cli import solve_expansion

        started = time.monotonic()
        self.expansion = expand(game.machine,  # type: ignore[attr-defined]
                                budget=Budget(time_limit=time_limit))
        left = time_limit - (time.monotonic() - started)
        if left <= 0:
            raise LimitReached("no time left to solve after the expansion")
        self.solution, _, _ = solve_expansion(self.expansion, "baseline", time_limit=left)

    def weights(self, machine_state: Hashable, role: str, legal: Sequence[str]
                ) -> list[float] | None:
        """The solved strategy of ``role`` at a state (None off the solved states)."""
        node = self.expansion.node_of(machine_state)
        if node is None or not self.solution.solved[node] \
                or role not in self.expansion.player_roles:
            return None
        player = self.expansion.player_roles.index(role)
        probs = self.solution.node_strategy(node, player).tolist()
        at = dict(zip(self.expansion.game.actions(node, player), probs, strict=True))
        return [float(at.get(move, 0.0)) for move in legal]


def _solve_gdl(game: PlayableGame, time_limit: float) -> _GdlSolution | None:
    """The solved game, or None when it does not fit (size, time, 3+ players...)."""
    if getattr(game, "machine", None) is None:
        return None
    try:
        return _GdlSolution(game, time_limit)
    except GameError as exc:  # LimitReached, UnsupportedGame: play by search instead
        log.info("solver built-in: %s is not solved (%s); using uct", game.name, exc)
        return None


class SolverPlayer(UctPlayer):
    """A solved strategy where the format's solver gives one (solved within the start
    clock, in a worker thread), else UCT (GDL) or uniform random."""

    def __init__(self, spec: PlayerSpec) -> None:
        super().__init__(spec)
        self.policy: Policy | None = None
        self.gdl: _GdlSolution | None = None
        self.role_name = ""
        self.gdl2 = False
        self.history: list[tuple[str, tuple[str, ...]]] = []  # GDL-II: own moves, percepts

    async def start(self, seat: SeatInfo) -> None:
        await super().start(seat)
        self.role_name = seat.role_name
        self.gdl2 = is_gdl2(seat.game)
        budget = max(0.1, seat.startclock - self.margin)
        try:
            if seat.game.format == "gdl" and not self.gdl2:
                self.gdl = await asyncio.to_thread(_solve_gdl, seat.game, budget)
            else:
                self.policy = await asyncio.to_thread(_solved_policy, seat.game, budget)
        except Exception:  # a solver failure costs the solved strategy, not the match
            log.exception("solver built-in: solving %s failed; using uct", seat.game.name)

    async def choose(self, request: StepRequest) -> Any:
        if self.gdl is not None:
            weights = self.gdl.weights(request.state[0], self.role_name, request.legal)
        elif self.policy is not None:
            observation = self._infoset(request.observation) if self.gdl2 \
                else request.observation
            weights = await asyncio.to_thread(self.policy, self.role, observation,
                                              request.legal)
        else:
            weights = None
        if weights is None:
            return await super().choose(request)
        if not sum(weights) > 0:
            return self.rng.choice(request.legal)
        return self.rng.choices(request.legal, weights=weights)[0]

    def _infoset(self, observation: dict[str, Any]) -> dict[str, str]:
        """A GDL-II observation as the information set of the expanded game: the seat's
        own history (every step's move and percepts; a GDL seat is asked every step)."""
        from gdl.gdl2_tree import infoset_name

        if observation["turn"] == len(self.history) + 1:
            self.history.append((observation["last_move"], tuple(observation["percepts"])))
        if observation["turn"] != len(self.history):  # a step missed (a cut-off answer)
            return {}  # an unknown information set: uniform
        return {"infoset": infoset_name(self.role_name, self.history)}


def make_builtin(spec: PlayerSpec) -> QuietPlayer:
    if spec.kind == "solver":
        return SolverPlayer(spec)
    if spec.kind == "first":
        return FirstPlayer(spec)
    if spec.kind == "uct":
        return UctPlayer(spec)
    return RandomPlayer(spec)
