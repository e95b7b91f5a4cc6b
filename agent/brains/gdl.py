"""The GDL brain (:class:`GdlBrain`): one seat of a GDL match, told every joint move.

1. Start clock: build the state machine (the general engine when the start clock is
   under ``compile_seconds``, else "auto" with at most ``COMPILE_SHARE`` of the clock
   for grounding); a stored solution for the same rules (``rules_hash``,
   :mod:`gdl.solving.store`) is loaded when there is one; else a two-player game gets
   an exact pre-solve for at most half the start clock and ``presolve_nodes`` states
   (:class:`agent.brains.gdl_exact.ExactTable`: the thesis' baseline on the compact
   state DAG, as ``ggp solve``, else :func:`solvers.search.solve_exact`). The rest of
   the clock warms the search tree.
2. Play clock: a state of the stored solution, or with an exact value, plays its
   solved strategy (sampling a mixed one). Otherwise an endgame solve gets a tenth of
   the time (its table keeps every solved state for later moves; after a failure the
   next 1, 2, 4, ... tries are skipped); then the agent's SM-MCTS
   (:mod:`agent.search.mcts`: UCT where one role moves, decoupled UCT, regret
   matching or EXP3 where several do; MAST, MCTS-Solver, tree reuse and the
   optional enhancements of ``BrainOptions.enhancements``) runs to the deadline.
3. The move: the exact strategy when the state is solved, exploiting a fallible
   opponent where that is safe (turn-based: among value-keeping moves, the best
   "trap value", :mod:`agent.brains.gdl_traps`; simultaneous: a safe best response
   to the predicted move); else the most visited move, except at a simultaneous node
   under regret matching, where the mean strategy is sampled after purification
   (moves with less than twice the share exploration alone gives them are dropped;
   Lanctot et al. 2013 play the mean strategy of regret matching).
"""

from __future__ import annotations

import dataclasses
import gc
import logging
import random
import time
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from agent.brains.base import Observation
from agent.brains.gdl_exact import ExactTable, kernels_held
from agent.brains.gdl_joint import presolve_joint
from agent.brains.gdl_threats import THREAT_SHARE, threat_move, threat_search
from agent.brains.gdl_traps import trap_values
from agent.brains.moves import draw, search_move
from agent.brains.options import BrainOptions, GameSpec, role_index
from agent.search import graph, material
from agent.search.graph import GraphSearch, make_search
from agent.search.mcts import AgentSearch
from agent.search.threats import ThreatSearch
from gdl.reasoning import kernels
from gdl.reasoning.batch_machine import batch_machine_of, pack_ints
from gdl.reasoning.factors import factors
from gdl.reasoning.ground import Budget
from gdl.reasoning.machine import load_machine
from gdl.solving.store import find_solution
from solvers.errors import GameError
from solvers.search import EndgameResult
from solvers.search.matrix_game import safe_best_response

log = logging.getLogger(__name__)

COMPILE_SHARE = 0.4  # of the start clock left that grounding the game may take
BATCH_SHARE = 0.2    # of the start clock left then that grounding the batched moves may take
BATCHED = ("batch", "leaf", "vmean", "graph")  # the enhancements that need the batched engine
RANDOM_GAMES = 1.0  # "material", "explore": seconds of random games on the start clock
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
# A role with more legal moves than this is not searched: its first legal move is
# played (listing 21^5 moves takes minutes); the agent's fallback gets that many.
SEARCHABLE_MOVES = 10_000


class GdlBrain:
    """One GDL match (module docstring, steps 1-3); a :class:`agent.brains.base.Brain`."""

    def __init__(self, spec: GameSpec, role: str, options: BrainOptions,
                 until: float | None = None) -> None:
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
        self.factored: list[GraphSearch] = []   # "factor": a search per factor
        self._threat: tuple[GraphSearch, ThreatSearch | None] | None = None   # "threats"
        self.table = ExactTable(self.machine, self.chance, options)
        self.solution = None
        if options.solutions:
            self.solution = find_solution(options.solutions, spec.text)
            if hasattr(self.solution, "bind"):   # a compact file: by int state if it can
                self.solution.bind(self.machine)

    @property
    def exact(self) -> dict[Hashable, np.ndarray]:
        """The exact table: state -> goal values."""
        return self.table.values

    def _batchable(self, enhancements: tuple[str, ...], until: float | None) -> tuple[str, ...]:
        """``enhancements``, less the batched ones when the game's BatchMachine (the
        batched playouts' engine, built once) does not build with its grounding
        within ``BATCH_SHARE`` of the start clock left: the search then plays one
        playout at a time."""
        if not {"batch", "leaf", "graph"} & set(enhancements) \
                or self.machine.engine_name != "compiled":
            return enhancements
        try:
            batch_machine_of(self.machine, None if until is None else
                             max(0.0, BATCH_SHARE * (until - time.monotonic())))
        except GameError:   # LimitReached: too big, or not within the time
            return tuple(e for e in enhancements if e not in BATCHED)
        return enhancements

    def _new_search(self, enhancements: tuple[str, ...]) -> AgentSearch | GraphSearch:
        return make_search(self.machine, self.options.search_config(enhancements),
                           chance_roles=self.chance, role=self.role)

    # -- the start clock --------------------------------------------------------------

    def metagame(self, until: float) -> dict[str, Any]:
        started = time.monotonic()
        info: dict[str, Any] = {"engine": self.machine.engine_name, "roles": len(self.machine.roles)}
        if self.search.batched:
            if until - started > KERNEL_CLOCK:
                # the batched playouts' and the graph's compiled kernels (1-4 s to
                # load; without them batches take the numpy passes and the search the
                # per-node one; a spare worker has them)
                kernels.compiled(kernels.MIN_ITEMS)
                if self.search.agent.on("graph"):
                    graph.KERNELS.load()
            if self.search.agent.on("graph") and not isinstance(self.search, GraphSearch):
                self.search = self._new_search(self.search.agent.enhancements)
            info["kernels"] = kernels.KERNELS.loaded is not None
            info["graph"] = isinstance(self.search, GraphSearch)
        searchable = not self.machine.is_terminal(self.state)
        if searchable and self._too_wide():
            info["search"] = f"none: a role has over {SEARCHABLE_MOVES} legal moves"
            searchable = False
        if self.solution is not None:
            info["solution"] = str(self.solution.path)
        elif self.players == 2 and searchable:
            self._presolve(started, until, info)
        elif searchable and self.step == 0:   # a puzzle, or three or more players
            half = started + (until - started) / 2
            with kernels_held(until - started <= KERNEL_CLOCK):
                info["presolve"], self.solution = presolve_joint(
                    self.machine, self.spec, self.players, self.options, half, until)
            info["presolve_seconds"] = round(time.monotonic() - started, 3)
        # a solution plays every move (as a forced move does not ponder with one): the rest
        # of the start clock would build a tree no move reads
        if searchable and self.solution is None and time.monotonic() < until:
            if self.search.agent.on("mastcost") and self.search.agent.on("mast") \
                    and until - time.monotonic() > 2.5 * MAST_TRIAL:
                info["mast"] = self._mast_trial()
            self._factor(info)
            self._random_games(until, info)
            if self._threats() is not None:   # (its winning moves read off the rules here)
                info["threats"] = "on"
            result = self._searcher().search(self.state, deadline=until)
            info["playouts"] = result.playouts
        info["time"] = round(time.monotonic() - started, 3)
        return info

    def _presolve(self, started: float, until: float, info: dict[str, Any]) -> None:
        """The exact pre-solve of a two-player game, in half the start clock."""
        half = started + (until - started) / 2
        with kernels_held(until - started <= KERNEL_CLOCK):
            info["presolve"] = self._baseline_presolve(half, until)
        info["presolve_seconds"] = round(time.monotonic() - started, 3)
        if self.solution is None:
            solved = self._try_exact(half, self.options.presolve_nodes)
            info["presolve"] += "; " + (solved if isinstance(solved, str) else (
                f"solved: value {solved.exact.value.tolist()}, {solved.nodes} nodes"))

    def _baseline_presolve(self, until: float, deadline: float) -> str:
        """:meth:`ExactTable.presolve` of the whole game (at the first step only); a
        compact solution it keeps becomes the match's solution."""
        if self.step > 0:
            return "baseline: no time"
        report, compact = self.table.presolve(self.spec, until, deadline)
        if compact is not None:
            self.solution = compact
        return report

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

    # -- the match ----------------------------------------------------------------------

    def observe(self, observation: Observation, until: float | None = None,
                legal: Sequence[str] | None = None) -> None:
        """The previous joint move (see :meth:`advance`); a GDL-II observation is for
        :class:`agent.brains.gdl2.Gdl2Brain` (GameError here)."""
        if isinstance(observation, Mapping):
            raise GameError("a GDL-II observation for the GDL brain")
        self.advance(observation)

    def advance(self, moves: Sequence[str] | None) -> None:
        """Apply the previous joint move (KIF, role order); None at the first step."""
        if moves is None:
            return
        self.state = self.machine.next_state(self.state, self.machine.parse_joint(moves))
        self.step += 1

    def legal(self) -> list[str]:
        if self.machine.is_terminal(self.state):
            return []
        return [self.machine.move_to_kif(m) for m in
                self.machine.legal_moves_upto(self.state, self.role, SEARCHABLE_MOVES)]

    def _too_wide(self) -> bool:
        """Whether a role has more than SEARCHABLE_MOVES legal moves here: listing
        them all (21^5 of them) would take longer than any clock."""
        return any(len(self.machine.legal_moves_upto(self.state, r, SEARCHABLE_MOVES + 1))
                   > SEARCHABLE_MOVES for r in range(len(self.machine.roles)))

    def goals(self) -> list[int]:
        return list(self.machine.goals(self.state))

    def stop(self) -> None:
        self.table.clear()
        self.solution = None

    def select(self, until: float) -> tuple[str, dict[str, Any]]:
        started = time.monotonic()
        info: dict[str, Any] = {"step": self.step + 1}
        if self._too_wide():  # no search: the general engine's first legal move
            move = self.machine.legal_moves_upto(self.state, self.role, 1)[0]
            info.update(method="first-legal", time=round(time.monotonic() - started, 3))
            return self.machine.move_to_kif(move), info
        moves = self.machine.legal_moves(self.state, self.role)
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
                threats = self._threats() if unsolved else None
                searched = until - (THREAT_SHARE * (until - started) if threats else 0.0)
                result = self._searcher().search(
                    self.state,
                    deadline=searched if unsolved else started + 0.6 * (until - started),
                    soft_deadline=soft)
                info.update(playouts=result.playouts, nodes=result.nodes, recycled=result.recycled)
                if unsolved:
                    move = self._search_move(result, info)
                    if threats is not None and not result.proven:
                        move = threat_move(threats, self.machine, self.state, self.role,
                                           result, move, until, info)
                else:
                    move = self._exact_move(solved, result, info, until)
        info["time"] = round(time.monotonic() - started, 3)
        return self.machine.move_to_kif(move), info

    def _factor(self, info: dict[str, Any]) -> None:
        """``factor``: a graph search of each factor's game (:mod:`gdl.reasoning.factors`)
        where the game splits, the factors sharing the node pool equally. The whole
        game's search stays for the moves no one factor holds and for pondering; where
        the factors play every move it is idle (connectFourSimultaneous: the worker's
        peak memory was the same with half the pool each as with a quarter, 2.0 GB,
        and each factor's pool filled on the start clock either way)."""
        self.factored = []
        agent = self.search.agent
        if not (agent.on("factor") and isinstance(self.search, GraphSearch)):
            return
        found = factors(self.search.bm)
        info["factors"] = len(found)
        if len(found) > 1:
            config = dataclasses.replace(agent, graph_nodes=agent.graph_nodes // len(found))
            self.factored = [GraphSearch(self.machine, config, chance_roles=self.chance,
                                         role=self.role, factor=f) for f in found]

    def _random_games(self, until: float, info: dict[str, Any]) -> None:
        """``material`` and ``explore``: uniform random games on the start clock (at most
        ``RANDOM_GAMES`` seconds; :mod:`agent.search.material`) give the graph searches
        the game's material, which seeds the new edges that change it, and the
        exploration constant, Sancho's bias from the games' lengths."""
        search = self.search
        wanted = search.agent.on("material") or search.agent.on("explore")
        if not (wanted and isinstance(search, GraphSearch)):
            return
        seconds = min(RANDOM_GAMES, (until - time.monotonic()) / 4)
        found = material.sample(
            search.bm, self.machine.facts,
            lambda batch, rows: search.playouts._goals(batch, rows, terminal=True),
            pack_ints([self.state], search.bm.n_words)[0], time.monotonic() + seconds,
            np.random.default_rng(self.rng.randrange(1 << 62)))
        if found is None:
            info["random_games"] = "none ended in time"
            return
        learnt = None
        if search.agent.on("material"):
            learnt, info["material"] = material.learn(found, search.bm)
        c = None
        if search.agent.on("explore"):
            c, info["explore"] = material.exploration(found, learnt is not None)
        for each in [search, *self.factored]:
            each.material = learnt
            if c is not None:
                each.exploration = c

    def _searcher(self) -> AgentSearch | GraphSearch:
        """The search of this move: under ``factor``, that of the factor holding every
        legal move of ours, if one does (Sancho plays such games factor by factor:
        connectFourSimultaneous board by board); else the whole game's."""
        if self.factored:
            columns = [m.bit_length() - 1 for m in self.machine.legal_moves(self.state, self.role)]
            for search in self.factored:
                if search.factor_moves[columns].all():
                    return search
        return self.search

    def _threats(self) -> ThreatSearch | None:
        """``threats``: the threat search checking the whole game's graph search's moves
        (:mod:`agent.brains.gdl_threats`), where it applies; built once per search."""
        search = self._searcher()
        if not (search is self.search and isinstance(search, GraphSearch)
                and search.agent.on("threats")):
            return None
        if self._threat is None or self._threat[0] is not search:
            self._threat = (search, threat_search(search, len(self.machine.roles), self.chance))
        return self._threat[1]

    def _ponder(self, until: float, info: dict[str, Any]) -> None:
        """``ponder``: with one legal move, search anyway until the answer is due (the
        opponents are thinking then); with ``reuse`` the subtree of the state they
        choose is the next move's start."""
        if (not self.search.agent.on("ponder") or self.solution is not None
                or self.machine.is_terminal(self.state) or self.state in self.exact):
            return
        result = self.search.search(self.state, deadline=until)
        info.update(playouts=result.playouts, nodes=result.nodes, recycled=result.recycled)

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
        index = draw([strategy[k] for k in kifs], self.rng)
        move = self.machine.parse_move(kifs[index], self.role)
        if move not in legal:
            log.warning("stored solution move %s is not legal: ignored", kifs[index])
            return None
        info.update(method="solution", value=values.get(self.machine.roles[self.role]))
        return move

    # -- exact values ---------------------------------------------------------------

    def _endgame(self, until: float) -> EndgameResult | str:
        return self.table.endgame(self.state, self.step, until)

    def _try_exact(self, until: float, nodes: int) -> EndgameResult | str:
        return self.table.solve(self.state, self.step, until, nodes)

    def _dag_endgame(self, until: float, nodes: int) -> bool:
        return self.table.solve_subgame(self.state, self.step, until, nodes)

    def _exact_move(self, solved: EndgameResult, result, info: dict[str, Any],
                    until: float) -> Hashable:
        """A move of the solved strategy, exploiting a fallible opponent where it is safe.

        One chooser (turn-based): among the moves that keep the exact value, the one
        with the best trap value (:func:`agent.brains.gdl_traps.trap_values`), then
        the best search estimate. Two choosers: a pure move that keeps the value and
        has the best trap value, when that is above the value. Else the search's
        prediction of the opponent's move (its most visited, as a decoupled UCT
        player would choose) is best-responded to with a strategy that still
        guarantees the value (an LP); if that gains nothing over the equilibrium mix,
        the equilibrium mix.
        """
        me, moves = self.role, solved.moves
        value = float(solved.exact.value[me])
        info.update(method="exact", value=round(value, 2))
        choosers = [r for r, m in enumerate(moves) if len(m) > 1 and r not in self.chance]
        strategy = solved.exact.strategies.get(me)
        if strategy is None or me not in choosers or len(choosers) > 2:
            return moves[me][0] if strategy is None else moves[me][draw(strategy, self.rng)]

        def exact_value(choice: dict[int, int]) -> float:
            joint = [moves[r][choice.get(r, 0)] for r in range(len(moves))]
            known = self.exact.get(self.machine.next_state(self.state, joint))
            return -1.0 if known is None else float(known[me])

        estimate = result.mean[me] if result.moves == moves else np.zeros(len(moves[me]))
        estimate = np.nan_to_num(estimate, nan=-1.0)
        traps = trap_values(self.machine, me, self.state, self.exact, self.table.trap_memo,
                            until)
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
            return moves[me][draw(strategy, self.rng)]
        info["method"] = "exact-exploit"
        return moves[me][draw(safe, self.rng)]

    def _search_move(self, result, info: dict[str, Any]) -> Hashable:
        info.update(method="proven" if result.proven else "mcts",
                    value=round(float(result.value[self.role]), 2))
        return search_move(result, self.role, self.chance, self.options.simultaneous,
                           self.search.config.rm_gamma, self.rng)
