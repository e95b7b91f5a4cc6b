"""Move selection, run inside the agent's worker process (never in the event loop).

A *brain* holds one match: the game engine, the current state, the search tree and
any solved values. :func:`worker_main` is the process entry: it reads requests from
a pipe and answers them (the protocol is in :mod:`agent.gamer`).

Choosing a GDL move (:class:`GdlBrain`):

1. Start clock: build the state machine (the general engine when the start clock is
   under ``compile_seconds``, else "auto" with at most ``COMPILE_SHARE`` of the clock
   for grounding); a stored solution for the same rules
   (``rules_hash``, :mod:`gdl.solving.store`) is loaded when there is one; else a
   two-player game gets an exact pre-solve for at most half the start clock and
   ``presolve_nodes`` states: the thesis' baseline on the compact state DAG (as
   ``ggp solve``: batched expansion, level-batched solve), else :func:`solvers.search.solve_exact`; both fill the exact
   table. The rest of the clock warms the search tree.
2. Play clock: a state of the stored solution, or with an exact value, plays its
   solved strategy (sampling a mixed one). Otherwise an endgame solve gets a
   tenth of the time (its table keeps every solved state for later moves; after
   a failure the next 1, 2, 4, ... tries are skipped); then the agent's SM-MCTS
   (:mod:`agent.search.mcts`: UCT where one role moves, decoupled UCT, regret matching or
   EXP3 where several do; MAST, MCTS-Solver, tree reuse, timing and the optional
   enhancements of ``BrainOptions.enhancements``) runs to the deadline.
3. The move: the exact strategy when the state is solved, exploiting a fallible
   opponent where that is safe (turn-based: among value-keeping moves, the best
   "trap value", our expectation when the others move at random; simultaneous: a
   safe best response to the predicted move); else the most visited move, except at a simultaneous node under regret matching, where the mean
   strategy is sampled after purification (moves with less than twice the share
   exploration alone gives them are dropped; Lanctot et al. 2013 play the mean
   strategy of regret matching).
"""

from __future__ import annotations

import functools
import gc
import logging
import random
import resource
import signal
import time
from collections.abc import Hashable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import numpy as np

from agent.search.mcts import DEFAULT_ENHANCEMENTS, AgentConfig, AgentSearch
from gdl.formats import equilibrium_policy, load_game_text
from solvers.errors import GameError, LimitReached, UnsupportedGame
from solvers.search.matrix_game import safe_best_response

log = logging.getLogger("agent.worker")

COMPILE_SHARE = 0.4  # of the start clock left that grounding the game may take
BATCH_SHARE = 0.2    # of the start clock left then that grounding the batched moves may take
BATCHED = ("batch", "leaf", "vmean")  # the enhancements that need the batched engine
# Trap values at simultaneous nodes: how often the opponent's move fails to keep its
# value (ticTicToe, 40 matches against UCT at 2,000 playouts a move: 0.2 and 0.5
# scored 57.5%, 1.0 (uniform) 50%).
TRAP_SLIP = 0.2
# A batched expansion stops between chunks only: one chunk (or loading its compiled
# kernels) took 1.3-1.4 s on breakthroughSuicideSmall with a 0.07 s budget (1 s clock).
DAG_ENDGAME_SECONDS = 0.5
MAST_TRIAL = 0.3   # "mastcost": seconds of search with MAST and as long without it
MAST_KEEP = 0.8    # "mastcost": MAST stays when it keeps this share of the playouts
MAST_SLICES = 4    # "mastcost": each trial's time in this many slices, the two alternating
# "mastcost": MAST stays when its move values (those seen MAST_SEEN times or more)
# spread this much: standard deviation less sampling noise, after the trial. Measured
# at a 4.5 s start clock: breakthroughSuicideSmall 0.21-0.26, knightThrough 0.20; all
# the others under 0.09 (nineBoardTicTacToe 0.08, connectFour 0.07, pentagoSuicide
# 0.04-0.06, dualConnect4 0.05, connectFourSimultaneous and doubletictactoe 0.03)
MAST_FLAT = 0.15
MAST_SEEN = 5
KERNEL_CLOCK = 8.0  # start clock (s) from which batched playouts load compiled kernels


@dataclass(frozen=True)
class BrainOptions:
    """Knobs of move selection (picklable: sent to the worker process)."""

    simultaneous: str = "duct"  # policy at simultaneous nodes: "duct", "rm" or "exp3"
    # the search's switches (agent.search.mcts.ENHANCEMENTS; ggp agent --enhancements)
    enhancements: tuple[str, ...] = DEFAULT_ENHANCEMENTS
    mast_epsilon: float = AgentConfig.mast_epsilon  # share of uniform moves in MAST playouts
    mast_temperature: float = AgentConfig.mast_temperature  # MAST's Gibbs sampling ("gibbs")
    exploration: float = AgentConfig.exploration  # UCB1 constant
    # UCB1 constant at simultaneous nodes
    simultaneous_exploration: float = AgentConfig.simultaneous_exploration
    seed: int = 0
    max_nodes: int = 300_000  # search tree budget
    presolve_nodes: int = 400_000  # exact table budget (memory: ~1 KB a node)
    # the start clock's scale pre-solve: states (time and memory stop it first); a
    # game over presolve_nodes is kept as a compact solution (~30 B a state)
    presolve_states: int = 50_000_000
    endgame_nodes: int = 100_000  # per-move exact endgame budget
    memory_mb: int = 4096  # address-space limit of the worker (0: none)
    solutions: str | None = None  # folder of stored solutions (ggp solve --save)
    engine: str = "auto"  # GDL engine: "auto", "compiled" or "general"
    # With less start clock than this, "auto" means the general engine: it builds in
    # a fraction of a second, compiling a big game can take seconds.
    compile_seconds: float = 1.0

    def search_config(self, enhancements: tuple[str, ...] | None = None) -> AgentConfig:
        """The search settings these options give (with other ``enhancements``)."""
        return AgentConfig(
            enhancements=self.enhancements if enhancements is None else enhancements,
            simultaneous=self.simultaneous, exploration=self.exploration,
            simultaneous_exploration=self.simultaneous_exploration,
            mast_epsilon=self.mast_epsilon, mast_temperature=self.mast_temperature,
            max_nodes=self.max_nodes, seed=self.seed)


@dataclass(frozen=True)
class GameSpec:
    """A game as a match offers it: the format, the file text and a name."""

    format: str
    text: str
    name: str = "game"


def role_index(roles: Sequence[str], role: str) -> int:
    """The index of ``role``; an exact match first, then ignoring case."""
    if role in roles:
        return list(roles).index(role)
    folded = [r.lower() for r in roles]
    if role.lower() in folded:
        return folded.index(role.lower())
    raise GameError(f"role {role!r} is not in the game (roles: {', '.join(roles)})")


class GdlBrain:
    """One GDL match (module docstring, steps 1-3)."""

    def __init__(self, spec: GameSpec, role: str, options: BrainOptions,
                 until: float | None = None) -> None:
        from gdl.reasoning.ground import Budget
        from gdl.reasoning.machine import load_machine

        self.options = options
        engine = options.engine
        budget = None
        if engine == "auto" and until is not None:
            left = until - time.monotonic()
            if left < options.compile_seconds:
                engine = "general"
            else:  # grounding may take a share of the start clock, not all of it
                budget = Budget(max_seconds=COMPILE_SHARE * left)
        self.machine = load_machine(spec.text, engine=engine, name=spec.name, budget=budget)
        self.spec = spec
        self.role = role_index(self.machine.roles, role)
        # GDL-II's nature role is played by the manager; it never chooses strategically.
        self.chance = tuple(i for i, r in enumerate(self.machine.roles) if r == "random")
        self.players = len(self.machine.roles) - len(self.chance)
        self.state = self.machine.initial_state()
        self.step = 0
        self.rng = random.Random(options.seed)
        self.search = self._new_search(self._batchable(options.enhancements, until))
        self.exact: dict[Hashable, np.ndarray] = {}
        self.trap_memo: dict[Hashable, float] = {}  # see _trap_values
        self.exact_possible = True
        # after an endgame solve that did not fit, skip the next `_exact_wait` tries
        # (doubling): big games stop paying a quarter of every clock for nothing
        self._exact_skip = 0
        self._exact_wait = 1
        self.solution = None
        if options.solutions:
            from gdl.solving.store import find_solution

            self.solution = find_solution(options.solutions, spec.text)
            if hasattr(self.solution, "bind"):   # a compact file: by int state if it can
                self.solution.bind(self.machine)

    def _batchable(self, enhancements: tuple[str, ...], until: float | None) -> tuple[str, ...]:
        """``enhancements``, less the batched ones when the game's BatchMachine (the
        batched playouts' engine, built once) does not build with its grounding
        within ``BATCH_SHARE`` of the start clock left: the search then plays one
        playout at a time."""
        if not {"batch", "leaf"} & set(enhancements) or self.machine.engine_name != "compiled":
            return enhancements
        from gdl.reasoning.batch_machine import batch_machine_of

        try:
            batch_machine_of(self.machine, None if until is None else
                             max(0.0, BATCH_SHARE * (until - time.monotonic())))
        except GameError:   # LimitReached: too big, or not within the time
            return tuple(e for e in enhancements if e not in BATCHED)
        return enhancements

    def _new_search(self, enhancements: tuple[str, ...]) -> AgentSearch:
        return AgentSearch(self.machine, self.options.search_config(enhancements),
                           chance_roles=self.chance)

    # -- the match ----------------------------------------------------------------

    def metagame(self, until: float) -> dict[str, Any]:
        started = time.monotonic()
        info: dict[str, Any] = {"engine": self.machine.engine_name, "roles": len(self.machine.roles)}
        if self.search.batched:
            from gdl.reasoning import kernels

            if until - started > KERNEL_CLOCK:
                # the batched playouts' compiled kernels (1-4 s to load; without
                # them batches take the numpy passes; a spare worker has them)
                kernels.compiled(kernels.MIN_ITEMS)
            info["kernels"] = kernels.KERNELS.loaded is not None
        if self.players >= 2 and until - started > 1.5:
            # the LP solver of simultaneous nodes takes ~1 s to import: on the start
            # clock, not on a play clock (the DAG endgame solves only once it is in)
            import scipy.optimize  # noqa: F401

            import solvers.simultaneous.dag_solve  # noqa: F401
        if self.solution is not None:
            info["solution"] = str(self.solution.path)
        elif self.players == 2 and not self.machine.is_terminal(self.state):
            half = started + (until - started) / 2
            with self._kernels_held(until - started <= KERNEL_CLOCK):
                info["presolve"] = self._baseline_presolve(half, until)
            info["presolve_seconds"] = round(time.monotonic() - started, 3)
            if self.solution is None:
                solved = self._try_exact(half, self.options.presolve_nodes)
                info["presolve"] += "; " + (solved if isinstance(solved, str) else (
                    f"solved: value {solved.exact.value.tolist()}, {solved.nodes} nodes"))
        if not self.machine.is_terminal(self.state) and time.monotonic() < until:
            if self.search.agent.on("mastcost") and self.search.agent.on("mast") \
                    and self.solution is None and until - time.monotonic() > 2.5 * MAST_TRIAL:
                info["mast"] = self._mast_trial()
            result = self.search.search(self.state, deadline=until)
            info["playouts"] = result.playouts
        info["time"] = round(time.monotonic() - started, 3)
        return info

    def _mast_trial(self) -> str:
        """``mastcost``: playouts per CPU second of the search from the initial state
        with and without MAST, ``MAST_TRIAL`` seconds each (fresh trees, off the
        match's own); MAST is dropped when it keeps under ``MAST_KEEP`` of them
        and its move values are flat (standard deviation under ``MAST_FLAT``:
        Gibbs draws over values that close are near uniform ones, at a higher
        price). The rate counts what MAST costs a step and what it changes in
        playout length (MAST's playouts end 2.6x sooner in knightThrough)."""
        without = tuple(e for e in self.search.agent.enhancements if e != "mast")
        # the engine's lazy parts (the terminal test's delta form, next-state functions
        # of joint moves, caches) are built on the match's own search first, so
        # neither trial pays for them; then the two alternate in short slices
        self.search.search(self.state, deadline=time.monotonic() + MAST_TRIAL / 3)
        trials = (self._new_search(self.search.agent.enhancements), self._new_search(without))
        playouts, cpu = [0, 0], [0.0, 0.0]
        collecting = gc.isenabled()
        gc.disable()   # a collection's pause would land on one trial's clock
        try:
            for k in range(2 * MAST_SLICES):
                started = time.process_time()
                result = trials[k % 2].search(
                    self.state, deadline=time.monotonic() + MAST_TRIAL / MAST_SLICES)
                playouts[k % 2] += result.playouts
                cpu[k % 2] += time.process_time() - started
        finally:
            if collecting:
                gc.enable()
        rates = [p / max(1e-9, c) for p, c in zip(playouts, cpu, strict=True)]
        ratio = rates[0] / max(1e-9, rates[1])
        spread = trials[0].playouts.mast.spread(MAST_SEEN)
        verdict = (f"{ratio:.2f}x the playouts of uniform ones, values spread "
                   f"{spread:.3f}")
        if ratio >= MAST_KEEP or spread >= MAST_FLAT:
            return "on: " + verdict
        self.search = self._new_search(without)
        return "off: " + verdict

    def _baseline_presolve(self, until: float, deadline: float) -> str:
        """The thesis' baseline on the whole state DAG, as ``ggp solve`` (the scale
        path: :func:`gdl.expansion.batch_expand.expand_dag`, batched for a compiled game, and
        :func:`~solvers.simultaneous.dag_solve.solve_dag`), until ``until``. Up to
        ``presolve_nodes`` states its values fill the exact table, so every move is
        then an exact one (with safe exploitation); a bigger game becomes a compact
        solution in memory (the ``--save`` file's arrays, ``deadline`` permitting),
        whose strategy the agent plays as a stored one's."""
        from gdl.expansion.batch_expand import expand_dag
        from gdl.expansion.expand import Budget

        seconds = until - time.monotonic()
        if seconds <= 0.05 or self.step > 0:
            return "baseline: no time"
        memory = self.options.memory_mb / 2 or None
        try:
            started = time.monotonic()
            budget = Budget(max_states=self.options.presolve_states, time_limit=seconds,
                            memory_mb=memory, started=time.perf_counter())
            expansion = expand_dag(self.machine, budget=budget)
            # the level solver imports scipy (~0.7 s): only once there is a DAG to solve
            from solvers.simultaneous.dag_solve import solve_dag

            left = until - time.monotonic()
            if left <= 0:
                return "baseline: no time to solve"
            solution = solve_dag(expansion.dag, "baseline", time_limit=left, memory_mb=memory)
            dag = expansion.dag
            if dag.num_states - int(dag.terminal.sum()) <= self.options.presolve_nodes:
                return f"baseline: solved, {self._fill_exact(expansion, solution)} states"
            # building the arrays sorts the states: about as long as expanding them
            if time.monotonic() + (time.monotonic() - started) / 2 > deadline:
                return f"baseline: solved {dag.num_states:,} states, no time to keep them"
            self.solution = self._compact_solution(expansion, solution)
        except (GameError, MemoryError) as exc:
            return f"baseline: {exc}"
        return f"baseline: solved, {len(self.solution):,} states (compact)"

    def _compact_solution(self, expansion, solution):  # DagExpansion, DagSolution -> NpzSolution
        """The solved game as a stored solution held in memory, read by int state."""
        from gdl.solving.store_npz import NpzSolution, dag_solution_arrays

        roles = [self.machine.roles[p] for p in expansion.players]
        values = {r: float(v) for r, v in zip(roles, solution.root_values, strict=True)}
        arrays = dag_solution_arrays(expansion, solution, rules=self.spec.text,
                                     game=self.spec.name, roles=roles, solver="baseline",
                                     values=values)
        compact = NpzSolution("(start-clock pre-solve)", arrays)
        compact.bind(self.machine)
        return compact

    def _fill_exact(self, expansion, solution) -> int:  # DagExpansion, DagSolution
        """Put the solved non-terminal states' values into the exact table; the count."""
        dag = expansion.dag
        states = np.flatnonzero(solution.solved & ~dag.terminal)
        values = np.zeros((states.size, len(self.machine.roles)))
        values[:, list(expansion.players)] = solution.values[states]
        if expansion.packed is not None:   # engine ints from the packed rows at once
            width = 8 * expansion.packed.shape[1]
            data = np.ascontiguousarray(expansion.packed[states], dtype="<u8").tobytes()
            keys: Iterable[Hashable] = (int.from_bytes(data[k:k + width], "little")
                                        for k in range(0, len(data), width))
        else:
            keys = (expansion.state(s) for s in states.tolist())
        self.exact.update(zip(keys, values, strict=True))
        return int(states.size)

    def advance(self, moves: Sequence[str] | None) -> None:
        """Apply the previous joint move (KIF, role order); None at the first step."""
        if moves is None:
            return
        machine = self.machine
        if len(moves) != len(machine.roles):
            raise GameError(f"a joint move needs {len(machine.roles)} moves, got {len(moves)}")
        joint = [machine.parse_move(kif, r) for r, kif in enumerate(moves)]
        self.state = machine.next_state(self.state, joint)
        self.step += 1

    def legal(self) -> list[str]:
        return [self.machine.move_to_kif(m) for m in self.machine.legal_moves(self.state, self.role)]

    def goals(self) -> list[int]:
        return list(self.machine.goals(self.state))

    def select(self, until: float) -> tuple[str, dict[str, Any]]:
        started = time.monotonic()
        moves = self.machine.legal_moves(self.state, self.role)
        info: dict[str, Any] = {"step": self.step + 1}
        if len(moves) == 1:
            move, info["method"] = moves[0], "forced"
            self._ponder(until, info)
        else:
            move = self._stored_move(moves, info)
            if move is None:
                solved = self._endgame(started + (until - started) / 10)
                # The search runs even when the state is solved: its statistics (and
                # the trap values, in the time kept for them) pick among equally good
                # moves the one a fallible opponent gets wrong.
                unsolved = isinstance(solved, str)
                soft = started + self.search.agent.soft_share * (until - started)
                result = self.search.search(self.state, deadline=until if unsolved else
                                            started + 0.6 * (until - started),
                                            soft_deadline=soft)
                info.update(playouts=result.playouts, nodes=result.nodes)
                if unsolved:
                    move = self._search_move(result, info)
                else:
                    move = self._exact_move(solved, result, info, until)
        info["time"] = round(time.monotonic() - started, 3)
        return self.machine.move_to_kif(move), info

    def _ponder(self, until: float, info: dict[str, Any]) -> None:
        """``ponder``: with one legal move, search anyway until the answer is due (the
        opponents are thinking then); with ``reuse`` the subtree of the state they
        choose is the next move's start."""
        if (not self.search.agent.on("ponder") or self.solution is not None
                or self.machine.is_terminal(self.state) or self.state in self.exact):
            return
        result = self.search.search(self.state, deadline=until)
        info.update(playouts=result.playouts, nodes=result.nodes)

    # -- exact values ----

    def _stored_move(self, legal: Sequence[Hashable], info: dict[str, Any]) -> Hashable | None:
        """A move drawn from the stored solution's strategy at this state, if any."""
        if self.solution is None:
            return None
        solution = self.solution
        if getattr(solution, "bound", False):   # same compiled bits: no facts spelt
            strategies = solution.strategy_at(self.state) or {}  # type: ignore[union-attr]
            values = solution.values_at(self.state) or {}  # type: ignore[union-attr]
        else:
            facts = self.machine.state_to_kif(self.state)
            strategies = solution.strategy(facts) or {}
            values = solution.state_values(facts) or {}
        strategy = strategies.get(self.machine.roles[self.role])
        if not strategy:
            return None
        kifs = list(strategy)
        index = _draw(np.asarray([strategy[k] for k in kifs], dtype=float), self.rng)
        move = self.machine.parse_move(kifs[index], self.role)
        if move not in legal:
            log.warning("stored solution move %s is not legal: ignored", kifs[index])
            return None
        info.update(method="solution", value=values.get(self.machine.roles[self.role]))
        return move

    # -- exact values ---------------------------------------------------------------

    def _endgame(self, until: float):  # -> EndgameResult | str
        if self._exact_skip > 0:
            self._exact_skip -= 1
            return "skipped"
        solved = self._try_exact(until, self.options.endgame_nodes)
        if isinstance(solved, str):
            self._exact_skip, self._exact_wait = self._exact_wait, self._exact_wait * 2
        else:
            self._exact_wait = 1
        return solved

    def _try_exact(self, until: float, nodes: int):  # -> EndgameResult | str
        from solvers.search import solve_exact

        if not self.exact_possible:
            return "impossible"
        if len(self.exact) > 4 * self.options.presolve_nodes:  # memory: start over
            self.exact.clear()
            self.trap_memo.clear()
        try:
            now = time.monotonic()
            # the scale path first, for half the time: it fills the table, so the
            # search below only backs up the root; over its budget, the search goes on
            self._dag_endgame(now + (until - now) / 2, nodes)
            return solve_exact(self.machine, self.state, chance_roles=self.chance,
                               node_budget=nodes, deadline=until, table=self.exact)
        except UnsupportedGame:
            self.exact_possible = False  # some node has no exact value: never retry
            return "impossible"
        except LimitReached as exc:
            return f"too large ({exc})"
        except MemoryError:
            self.exact.clear()
            self.trap_memo.clear()
            return "out of memory"

    def _dag_endgame(self, until: float, nodes: int) -> bool:
        """Solve the subgame below the current state on the scale path (batched
        expansion, level-batched baseline) into the exact table; True when done.

        Only for a compiled machine once the level solver is imported (never a
        second's import on a play clock), with at least ``DAG_ENDGAME_SECONDS``,
        and only where the values are those :func:`solvers.search.solve_exact` would find: a constant-sum subgame without
        nature (a general-sum equilibrium or a chance node is left to it)."""
        import sys

        if (self.players != 2 or self.chance or self.step == 0
                or until - time.monotonic() < DAG_ENDGAME_SECONDS
                or "solvers.simultaneous.dag_solve" not in sys.modules
                or self.machine.engine_name != "compiled" or self.state in self.exact):
            return False
        from gdl.expansion.batch_expand import expand_dag
        from gdl.expansion.expand import Budget
        from solvers.simultaneous.dag_solve import solve_dag

        memory = self.options.memory_mb / 4 or None
        try:
            with self._kernels_held(True):   # never a kernel load on a play clock
                expansion = expand_dag(self.machine, self.state, budget=Budget(
                    max_states=nodes, time_limit=until - time.monotonic(), memory_mb=memory))
            dag = expansion.dag
            if np.ptp(dag.payoff[dag.terminal].sum(axis=1)) > 1e-9 or (dag.nk > 1).any():
                return False
            solution = solve_dag(dag, "baseline", time_limit=max(until - time.monotonic(), 1e-3),
                                 memory_mb=memory)
        except (GameError, MemoryError):
            return False
        self._fill_exact(expansion, solution)
        return True

    @staticmethod
    def _kernels_held(hold: bool) -> ExitStack:
        """The compiled kernels of the batched expansion and of the batched LPs, not
        loaded inside when ``hold`` (a load took 3-5 s on a loaded machine: a 4.5 s
        start clock's pre-solve ran 6 s over); numpy passes instead, within the time
        budget."""
        from gdl.reasoning import kernels
        from solvers.matrix import compiled

        stack = ExitStack()
        if hold:
            stack.enter_context(kernels.KERNELS.held())
            stack.enter_context(compiled.SIMPLEX.held())
        return stack

    def _trap_values(self, until: float) -> dict[int, float]:
        """For each of our value-keeping moves in the current state, what we expect if
        we go on keeping the exact value and choosing the best trap while the
        opponent is fallible: the move that gives it the most ways to go wrong. Empty
        when that subgame is not all in the exact table or does not fit the time.

        The opponent model: where it alone moves, uniformly at random (right against
        a random player: 97.5% on ticTacToe); where both move at once, a move that
        keeps its exact value with probability 1 - TRAP_SLIP, any move with
        TRAP_SLIP (a uniform model there found no traps against UCT)."""
        machine, me = self.machine, self.role
        memo = self.trap_memo  # trap values only depend on the state: kept all match

        def exact_of(state: Hashable) -> float:
            known = self.exact.get(state)
            if known is not None:
                return float(known[me])
            if machine.is_terminal(state):
                return float(machine.goals(state)[me])
            raise LimitReached("outside the exact table")

        def trap(state: Hashable) -> float:
            known = memo.get(state)
            if known is None:
                if time.monotonic() > until:
                    raise LimitReached("no time for trap values")
                if machine.is_terminal(state):
                    known = float(machine.goals(state)[me])
                else:
                    moves = by_move(state)
                    known = max(moves.values()) if moves else exact_of(state)
                memo[state] = known
            return known

        def by_move(state: Hashable) -> dict[int, float]:
            """Trap value of each of our value-keeping moves (one move: index 0)."""
            legal = [machine.legal_moves(state, r) for r in range(len(machine.roles))]
            choosers = [r for r, m in enumerate(legal) if len(m) > 1]
            if len(choosers) > 2 or (len(choosers) == 2 and me not in choosers):
                raise LimitReached("not a two-player node")
            other = next((r for r in choosers if r != me), None)
            mine = range(len(legal[me]))
            theirs = range(len(legal[other])) if other is not None else range(1)
            kids = [[machine.next_state(state, [
                legal[r][i] if r == me else legal[r][j] if r == other else legal[r][0]
                for r in range(len(legal))]) for j in theirs] for i in mine]
            value = exact_of(state)
            values = [[exact_of(k) for k in row] for row in kids]
            keeps = [i for i in mine if min(values[i]) >= value - 1e-6]
            # (no pure move keeps the value: a mixed strategy does, with no steering)
            slip = TRAP_SLIP if me in choosers and other is not None else 1.0
            careful = [j for j in theirs if max(values[i][j] for i in mine) <= value + 1e-6]
            out = {}
            for i in keeps:
                anything = sum(map(trap, kids[i])) / len(kids[i])
                kept = (sum(trap(kids[i][j]) for j in careful) / len(careful)
                        if careful else anything)
                out[i] = (1 - slip) * kept + slip * anything
            return out

        try:
            return by_move(self.state)
        except (LimitReached, GameError, RecursionError):
            return {}

    def _exact_move(self, solved, result, info: dict[str, Any], until: float) -> Hashable:
        """A move of the solved strategy, exploiting a fallible opponent where it is safe.

        One chooser (turn-based): among the moves that keep the exact value, the one
        with the best trap value (:meth:`_trap_values`), then the best search estimate.
        Two choosers: a pure move that keeps the value and has the best trap value,
        when that is above the value. Else the search's prediction of the opponent's
        move (its most visited, as a decoupled UCT player would choose) is
        best-responded to with a strategy that still guarantees the value (an LP);
        if that gains nothing over the equilibrium mix, the equilibrium mix.
        """
        me, moves = self.role, solved.moves
        value = float(solved.exact.value[me])
        info.update(method="exact", value=round(value, 2))
        choosers = [r for r, m in enumerate(moves) if len(m) > 1 and r not in self.chance]
        strategy = solved.exact.strategies.get(me)
        if strategy is None or me not in choosers or len(choosers) > 2:
            return moves[me][0] if strategy is None else moves[me][_draw(strategy, self.rng)]

        def exact_value(choice: dict[int, int]) -> float:
            joint = [moves[r][choice.get(r, 0)] for r in range(len(moves))]
            known = self.exact.get(self.machine.next_state(self.state, joint))
            return -1.0 if known is None else float(known[me])

        estimate = result.mean[me] if result.moves == moves else np.zeros(len(moves[me]))
        estimate = np.nan_to_num(estimate, nan=-1.0)
        traps = self._trap_values(until)
        if len(choosers) == 1:
            keeps = [i for i in range(len(moves[me])) if exact_value({me: i}) >= value - 1e-6]
            return moves[me][max(keeps, key=lambda i: (traps.get(i, 0.0), estimate[i], -i))]
        if traps and max(traps.values()) > value + 1e-6:
            info["method"] = "exact-trap"
            return moves[me][max(traps, key=lambda i: (traps[i], estimate[i], -i))]
        other = choosers[0] if choosers[1] == me else choosers[1]
        table = np.array([[exact_value({me: i, other: j}) for j in range(len(moves[other]))]
                          for i in range(len(moves[me]))])
        predicted = int(np.argmax(result.visits[other])) if result.moves == moves else 0
        safe = safe_best_response(table, value, predicted)
        if safe is None or safe @ table[:, predicted] <= strategy @ table[:, predicted] + 1e-6:
            return moves[me][_draw(strategy, self.rng)]
        info["method"] = "exact-exploit"
        return moves[me][_draw(safe, self.rng)]

    # -- search ---------------------------------------------------------------------

    def _search_move(self, result, info: dict[str, Any]) -> Hashable:
        info.update(method="proven" if result.proven else "mcts",
                    value=round(float(result.value[self.role]), 2))
        return search_move(result, self.role, self.chance, self.options.simultaneous,
                           self.search.config.rm_gamma, self.rng)


def search_move(result, role: int, chance: Sequence[int], simultaneous: str, gamma: float,
                rng: random.Random) -> Hashable:
    """The move a search result gives ``role``: drawn from the exact strategy when the
    root is proven, from the purified mean strategy at a simultaneous node searched by
    regret matching or EXP3, else the most visited."""
    strategy = result.strategy[role]
    choosers = sum(len(m) > 1 for r, m in enumerate(result.moves) if r not in chance)
    if result.proven or (choosers > 1 and simultaneous in ("rm", "exp3")):
        if not result.proven:
            strategy = purified(strategy, gamma)
        return result.moves[role][_draw(strategy, rng)]
    return result.best_move(role)


def purified(strategy: np.ndarray, gamma: float) -> np.ndarray:
    """Drop moves with less than twice the share uniform exploration gives them."""
    kept = np.where(strategy >= 2 * gamma / len(strategy), strategy, 0.0)
    return kept / kept.sum() if kept.sum() > 0 else strategy


def _draw(strategy: np.ndarray, rng: random.Random) -> int:
    cumulative = np.cumsum(strategy / strategy.sum())
    return min(int(np.searchsorted(cumulative, rng.random(), side="right")), len(strategy) - 1)


class PlayableBrain:
    """A non-GDL match (``.efg``, tree format, POSG) over the websocket protocol: the
    format's equilibrium strategy, solved within the start clock, else uniform."""

    def __init__(self, spec: GameSpec, role: str, options: BrainOptions) -> None:
        self.game = load_game_text(spec.format, spec.text, name=spec.name)
        self.role = role_index(list(self.game.roles), role)
        self.rng = random.Random(options.seed)
        self.policy = None
        self.step = 0

    def metagame(self, until: float) -> dict[str, Any]:
        started = time.monotonic()
        try:
            self.policy = equilibrium_policy(self.game, max(0.1, until - started))
        except GameError as exc:
            log.warning("no equilibrium strategy: %s", exc)
        return {"format": self.game.format, "policy": self.policy is not None,
                "time": round(time.monotonic() - started, 3)}

    def choose(self, observation: Any, legal: Sequence[str]) -> tuple[str, dict[str, Any]]:
        self.step += 1
        if self.policy is not None:
            try:
                weights = self.policy(self.role, observation, list(legal))
            except (GameError, KeyError, ValueError, IndexError) as exc:
                log.warning("no strategy for %r (%s): playing uniformly", observation, exc)
            else:
                index = _draw(np.asarray(weights, dtype=float), self.rng)
                return legal[index], {"step": self.step, "method": "equilibrium"}
        return self.rng.choice(list(legal)), {"step": self.step, "method": "uniform"}


# -- the process ------------------------------------------------------------------

class Cancelled(BaseException):
    """The agent cancelled the request being served (SIGUSR1: the match ended). A
    BaseException, so no ``except Exception`` in the search swallows it."""


class _CancelGate:
    """SIGUSR1 cancels the request being served; between requests it is ignored (a
    late signal must not cancel the next request). Answers are sent with the signal
    blocked, so a cancel never cuts one in half; it takes effect just after."""

    def __init__(self) -> None:
        self.serving = False

    def on_signal(self, signum: int, frame: Any) -> None:
        if self.serving:
            self.serving = False
            raise Cancelled

    def send(self, conn, message: tuple) -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
        try:
            conn.send(message)
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})


def _limit_memory(megabytes: int) -> None:
    if megabytes > 0:
        limit = megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def make_brain(spec: GameSpec, role: str, options: BrainOptions,
               until: float):  # -> GdlBrain | PlayableBrain
    if spec.format == "gdl":
        brain = GdlBrain(spec, role, options, until)
        return _gdl2_brain(brain) if brain.machine.has_sees else brain
    return PlayableBrain(spec, role, options)


def _gdl2_brain(brain: GdlBrain):  # -> agent.brains.gdl2.Gdl2Brain
    """The GDL-II player of ``brain``'s game (its percepts are tracked, not its state)."""
    from agent.brains.gdl2 import Gdl2Brain

    return Gdl2Brain(brain.machine, brain.role, brain.options)


def _advanced(brain, moves: Any, until: float | None = None):  # -> a brain
    """``brain`` after the step ``moves``. A GDL-II observation (a dict) for a GDL game
    (a manager may speak GDL-II for any game) turns its brain into the GDL-II one;
    a GDL-II brain's belief update gets a share of the clock left until ``until``."""
    if isinstance(brain, GdlBrain):
        if not isinstance(moves, dict):
            brain.advance(moves)
            return brain
        brain = _gdl2_brain(brain)
    brain.advance(moves, until)
    return brain


def worker_main(conn, crash_at_step: int | None = None, warm: bool = False) -> None:
    """Serve requests from the agent until told to quit or the pipe closes.

    Requests (tuples): ``("start", seq, spec, role, options, history, until)``,
    ``("play", seq, moves, until)`` (GDL), ``("choose", seq, observation, legal)``,
    ``("goals", seq, moves)``, ``("ping", seq)``, ``("quit",)``. Answers carry the request's ``seq``:
    ``("ready", seq, info)``, ``("legal", seq, moves)``, ``("move", seq, move, info)``,
    ``("goals", seq, goals)``, ``("pong", seq)``, ``("error", seq, message)``; a GDL
    ``start`` and every ``play`` first answer ``("legal", seq, moves)``. SIGUSR1 cancels
    the request being served: it answers ``("cancelled", seq)`` at once (a cancelled
    ``play`` has still applied its joint move, so ``goals`` works after it).
    ``crash_at_step`` is a test hook: the process dies in that step's search.
    """
    import gc
    import os

    import gdl.reasoning.machine  # noqa: F401 - import while idle, not on a clock
    import solvers.search  # noqa: F401

    if warm:
        # a spare, idle until its match: the batched playouts' compiled kernels now
        # (0.65 s; on a start clock only from KERNEL_CLOCK on, and never on a play clock)
        from gdl.reasoning import kernels

        kernels.compiled(kernels.MIN_ITEMS)

    # The cyclic collector's full passes over a big search tree take long enough to
    # make a move late; the tree has no cycles, so collect only between moves, and
    # there only the young generations (what the move made): a full pass at a match's start.
    gc.disable()

    gate = _CancelGate()
    signal.signal(signal.SIGUSR1, gate.on_signal)
    send = functools.partial(gate.send, conn)
    brain = None
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        kind, seq = request[0], request[1] if len(request) > 1 else None
        gate.serving = True
        try:  # (a cancel inside an error handler below still lands here)
            try:
                if kind == "quit":
                    return
                if kind == "ping":
                    send(("pong", seq))
                if kind == "start":
                    _, _, spec, role, options, history, until = request
                    brain = None
                    gc.collect()
                    _limit_memory(options.memory_mb)
                    brain = make_brain(spec, role, options, until)
                    for moves in history:
                        brain = _advanced(brain, moves)
                    if (isinstance(brain, GdlBrain) and not brain.machine.is_terminal(brain.state)
                            or not isinstance(brain, PlayableBrain | GdlBrain)):  # GDL-II
                        send(("legal", seq, brain.legal()))  # the fallback for step 1
                    send(("ready", seq, brain.metagame(until)))
                elif kind == "play":
                    _, _, moves, until = request
                    brain = _advanced(brain, moves, until)
                    send(("legal", seq, brain.legal()))
                    if crash_at_step is not None and brain.step + 1 >= crash_at_step:
                        os._exit(3)
                    move, info = brain.select(until)
                    send(("move", seq, move, info))
                    gc.collect(1)
                elif kind == "choose":
                    _, _, observation, legal = request
                    move, info = brain.choose(observation, legal)
                    send(("move", seq, move, info))
                elif kind == "goals":
                    brain = _advanced(brain, request[2])
                    send(("goals", seq, brain.goals()))
                gate.serving = False
            except OSError:  # the agent is gone (broken pipe): nothing left to serve
                return
            except GameError as exc:
                gate.serving = False
                _answer(send, ("error", seq, str(exc)))
            except Exception as exc:  # report, keep serving: the agent decides what to do
                gate.serving = False
                log.exception("worker failed on %s", kind)
                _answer(send, ("error", seq, f"internal error: {type(exc).__name__}: {exc}"))
        except Cancelled:
            _answer(send, ("cancelled", seq))


def _answer(send, message: tuple) -> None:
    try:
        send(message)
    except OSError:
        pass  # the agent is gone; the next recv ends the loop


def _die_with_the_agent() -> None:
    """Linux: the kernel kills the worker when the agent process dies (kill -9, or a
    server terminating a launched agent), so no search outlives its agent."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the worker ends at its next read (end of file)


if __name__ == "__main__":  # python -m agent.worker FD [--warm] [CRASH_AT_STEP]
    import sys
    from multiprocessing.connection import Connection

    _die_with_the_agent()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s worker %(levelname)s %(message)s")
    try:
        args = sys.argv[2:]
        warm = "--warm" in args
        crash = [a for a in args if a != "--warm"]
        worker_main(Connection(int(sys.argv[1])), int(crash[0]) if crash else None, warm)
    except KeyboardInterrupt:  # Ctrl-C in the terminal reaches the whole process group:
        sys.exit(130)  # the agent says "interrupted", the worker leaves quietly
