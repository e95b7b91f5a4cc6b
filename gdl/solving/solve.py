"""Solving a GDL game offline: load, expand, solve, certify (what ``ggp solve GAME.kif``
runs; :mod:`gdl.cli.solve` is its front end, the server's built-ins, the demo and the
benches call this).

1. Read the rules; refuse early (before grounding) a game without exactly two
   players besides ``random``; load the state machine (compiled engine when it fits).
2. Expand the game within the state, time and memory budgets, with progress lines
   (rates, memory held). Path ``dag`` (the default for the solvers that run natively
   on it): :func:`gdl.expansion.batch_expand.expand_dag` into the compact
   :class:`~solvers.simultaneous.dag.StateDag` (batched when the game compiles);
   path ``model``: :func:`gdl.expansion.expand.expand` into the per-entry
   :class:`~solvers.simultaneous.model.SimultaneousGame` (the reference path; DOαβ
   and BIαβ always take it).
3. Solve it with a simultaneous-move solver of :mod:`solvers.registry` in the time
   left; on the DAG path natively (:func:`~solvers.simultaneous.dag_solve.solve_dag`,
   within the memory budget), or through the per-entry model for the others.
4. Certify the result by separate code (the model's certificate in the registry).

:class:`GdlSolveResult` holds the result with its timings and gives the JSON object
(``docs/solve-json.md``) and the strategy lines: one per decision state of the
solution's support, ``{"node": [KIF facts], "strategy": {role: {move KIF:
probability}}, "values": {role: value}}``. :func:`save_result` stores a solution for
the agent (:mod:`gdl.solving.store`, or the compact ``.npz`` of
:mod:`gdl.solving.store_npz`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gdl.budget import Budget
from gdl.expansion.batch_expand import DagExpansion, expand_dag
from gdl.expansion.expand import Expansion, expand, players_of, roles_of
from gdl.reasoning.machine import load_machine, read_rules
from gdl.reasoning.state_machine import StateMachine
from gdl.reasoning.terms import Fn, Rule, term_to_kif
from gdl.solving.store import NPZ_ABOVE_STATES, node_line, save_solution
from gdl.solving.store_npz import save_dag_solution
from solvers import registry
from solvers.errors import GameError, LimitReached
from solvers.matrix.equilibrium import METHOD_NAMES
from solvers.progress import peak_rss_mb, solve_progress
from solvers.simultaneous.dag_convert import dag_to_game, from_game_solution
from solvers.simultaneous.dag_solution import DagSolution
from solvers.simultaneous.dag_solve import solve_dag
from solvers.simultaneous.doab import counts

SOLVERS = registry.names(registry.SIMULTANEOUS)
PATHS = ("dag", "model")
MIN_PROBABILITY = 1e-12     # moves below this are left out of strategy lines


@dataclass
class GdlSolveResult:
    """One solved GDL game with its timings.

    ``path`` "model": ``expansion`` is a :class:`gdl.expansion.expand.Expansion` and
    ``solution`` a :class:`~solvers.simultaneous.solution.Solution`; "dag": a
    :class:`gdl.expansion.batch_expand.DagExpansion` and a
    :class:`~solvers.simultaneous.dag_solution.DagSolution`.
    """

    name: str
    rules: list[Rule]
    engine: str
    expansion: Expansion | DagExpansion
    solution: object            # Solution / PartialSolution, or DagSolution
    certificate: dict
    load_seconds: float
    solve_seconds: float
    path: str = "model"
    peak_rss_mb: float | None = None
    _figures: dict | None = dataclasses.field(default=None, repr=False)

    @property
    def expand_seconds(self) -> float:
        return self.figures()["expand_seconds"]

    @property
    def player_roles(self) -> tuple[str, str]:
        return self.figures()["roles"]

    @property
    def states(self) -> int:
        return self.figures()["states"]

    @property
    def nodes(self) -> int:
        return self.figures()["nodes"]

    @property
    def transitions(self) -> int:
        return self.figures()["transitions"]

    @property
    def constant_sum(self) -> float | None:
        return self.figures()["constant_sum"]

    @property
    def bytes_per_state(self) -> float:
        return self.figures()["bytes_per_state"]

    def figures(self) -> dict:
        """:func:`expanded_figures` of the expansion (computed once)."""
        if self._figures is None:
            self._figures = expanded_figures(self.expansion)
        return self._figures

    def values(self) -> dict[str, float]:
        roles = self.player_roles
        root = self.solution.root_values  # type: ignore[attr-defined]
        return {roles[0]: payoff_number(root[0]), roles[1]: payoff_number(root[1])}

    def root_strategy(self) -> dict[str, dict[str, float]]:
        if isinstance(self.expansion, DagExpansion):
            line = next(dag_strategy_lines(self.expansion, self.solution,  # type: ignore[arg-type]
                                           states=[self.expansion.dag.root]), None)
            return {} if line is None else {
                role: {move: round(p, 12) for move, p in probs.items()}
                for role, probs in line["strategy"].items()}
        return self.solution.root_strategy()  # type: ignore[attr-defined]

    def support_size(self) -> int:
        """States (DAG) or nodes (model) where the strategy is defined."""
        if isinstance(self.expansion, DagExpansion):
            solution: DagSolution = self.solution  # type: ignore[assignment]
            return int(np.count_nonzero(solution.solved & ~self.expansion.dag.terminal))
        return int(self.solution.support().size)  # type: ignore[attr-defined]

    def strategy_lines(self) -> Iterator[dict]:
        """The ``--strategy`` lines (see the module docstring)."""
        return strategy_lines(self.expansion, self.solution)

    def to_json(self) -> dict:
        return {
            "solver": self.solution.solver,  # type: ignore[attr-defined]
            "values": self.values(),
            "root_strategy": self.root_strategy(),
            "nodes": self.nodes,
            "seconds": round(self.solve_seconds, 4),
            "certificate": self.certificate,
            "states": self.states,
            "expand_seconds": round(self.expand_seconds, 4),
            "game": self.name,
            "engine": self.engine,
            "constant_sum": self.constant_sum,
            "load_seconds": round(self.load_seconds, 4),
            "total_seconds": round(self.load_seconds + self.expand_seconds
                                   + self.solve_seconds, 4),
            "path": self.path,
            "transitions": self.transitions,
            "bytes_per_state": round(self.bytes_per_state, 1),
            "peak_rss_mb": self.peak_rss_mb,
            "equilibria": self.equilibria(),
            **counts(self.solution),
        }

    def equilibria(self) -> dict:
        return equilibria(self.solution)


def equilibria(solution: object) -> dict:
    """``{"selection", "methods": {method: states}}`` of a solution: the selection rule
    and how many solved decision states (nodes on the model path) each matrix method
    answered (:data:`solvers.matrix.equilibrium.METHOD_NAMES`; methods that answered
    none are left out)."""
    method = np.asarray(solution.method)  # type: ignore[attr-defined]
    found = np.bincount(method[method >= 0], minlength=len(METHOD_NAMES))
    return {"selection": solution.selection,  # type: ignore[attr-defined]
            "methods": {name: int(k) for name, k in zip(METHOD_NAMES, found, strict=True) if k}}


def expanded_figures(expansion: Expansion | DagExpansion) -> dict:
    """``states``, ``nonterminal``, ``nodes`` (of the per-entry game: decision and
    chance nodes; on the DAG path counted as
    :func:`~solvers.simultaneous.dag_convert.dag_to_game` makes them), ``transitions``
    (joint moves expanded, nature's outcomes counted), ``bytes_per_state`` (the DAG
    with its state and move tables, or the per-entry game's arrays),
    ``expand_seconds``, ``constant_sum`` and ``roles`` of an expansion."""
    if isinstance(expansion, DagExpansion):
        dag = expansion.dag
        chance = dag.nk > 1
        cells = dag.n0[chance].astype(np.int64) * dag.n1[chance]
        sums = np.unique(dag.payoff[dag.terminal].sum(axis=1))
        nonterminal = int(np.count_nonzero(~dag.terminal))
        return {"states": dag.num_states, "nonterminal": nonterminal,
                "nodes": nonterminal + int(cells.sum()), "transitions": expansion.transitions,
                "bytes_per_state": expansion.nbytes() / max(dag.num_states, 1),
                "expand_seconds": expansion.seconds,
                "constant_sum": float(sums[0]) if sums.size == 1 else None,
                "roles": dag.player_names}
    graph, game = expansion.graph, expansion.game
    held = sum(v.nbytes for v in vars(game).values() if isinstance(v, np.ndarray))
    return {"states": graph.n_states, "nonterminal": graph.n_states - graph.n_terminal,
            "nodes": game.num_nodes,
            "transitions": int(sum(s.size for s in graph.successors if s is not None)),
            "bytes_per_state": held / max(graph.n_states, 1), "expand_seconds": graph.seconds,
            "constant_sum": graph.constant_sum, "roles": expansion.player_roles}


def solve_any(expansion: Expansion | DagExpansion, solver: str, *, selection: str = "first",
              time_limit: float | None = None, memory_mb: float | None = None,
              progress: Callable[[int, int], None] | None = None
              ) -> tuple[object, dict, float]:
    """(solution, certificate, seconds) on either path (:func:`solve_dag_expansion`,
    :func:`solve_expansion`; ``memory_mb`` bounds the DAG path's solve)."""
    if isinstance(expansion, DagExpansion):
        return solve_dag_expansion(expansion, solver, selection=selection,
                                   time_limit=time_limit, memory_mb=memory_mb,
                                   progress=progress)
    return solve_expansion(expansion, solver, selection=selection, time_limit=time_limit,
                           progress=progress)


def declared_roles(rules: Sequence[Rule]) -> list[str]:
    """The roles the rules' role facts name, in order (read before grounding)."""
    return [term_to_kif(r.head.args[0]) for r in rules
            if not r.body and isinstance(r.head, Fn) and r.head.name == "role"
            and len(r.head.args) == 1]


def player_count(rules: Sequence[Rule]) -> int:
    """The number of roles besides ``random`` the rules declare (UnsupportedGame for
    none, as ``ggp check`` says it)."""
    return len(roles_of(declared_roles(rules))[0])


def player_count_check(rules: Sequence[Rule]) -> None:
    """UnsupportedGame unless the rules name exactly two roles besides ``random``
    (checked on the role facts, before the game is grounded)."""
    players_of(declared_roles(rules))


def check_loading_time(time_limit: float, load_seconds: float) -> None:
    """LimitReached when loading alone used the whole time limit (grounding is not
    interruptible, so the limit is checked once it returns)."""
    if load_seconds >= time_limit:
        raise LimitReached(f"the time limit of {time_limit:g} s was reached while loading "
                           f"the game ({load_seconds:.1f} s)")


def solve_expansion(expansion: Expansion, solver: str, *, selection: str = "first",
                    time_limit: float | None = None,
                    progress: Callable[[int, int], None] | None = None
                    ) -> tuple[object, dict, float]:
    """(solution, certificate, solve seconds) of an expanded game (steps 3-4)."""
    solve = registry.solver(solver, registry.SIMULTANEOUS).solve
    start = time.perf_counter()
    try:
        solution = solve(expansion.game, selection=selection, progress=progress,
                         time_limit=time_limit)
    except LimitReached as exc:
        raise LimitReached(f"{solver} stopped: {exc.message} (raise --time-limit)",
                           exc.partial) from None
    seconds = time.perf_counter() - start
    return solution, _certify(expansion.game, solution), seconds


def _certify(game: object, solution: object) -> dict:
    certify = registry.MODELS[registry.SIMULTANEOUS].certify
    assert certify is not None
    return certify(game, solution)


def solve_dag_expansion(expansion: DagExpansion, solver: str, *, selection: str = "first",
                        time_limit: float | None = None, memory_mb: float | None = None,
                        progress: Callable[[int, int], None] | None = None
                        ) -> tuple[DagSolution, dict, float]:
    """(solution, certificate, solve seconds) of a game expanded into a StateDag: a
    solver that runs natively on it (the baseline, the IH) by
    :func:`~solvers.simultaneous.dag_solve.solve_dag`, certified on the DAG; the others
    (DOαβ, BIαβ) on the DAG converted to the per-entry model (certified there, then
    mapped back)."""
    entry = registry.solver(solver, registry.SIMULTANEOUS)
    dag = expansion.dag
    start = time.perf_counter()
    try:
        if entry.solve_dag is None:
            game, state_node = dag_to_game(dag)
            found = entry.solve(game, selection=selection, progress=progress,
                                time_limit=time_limit)
            check = _certify(game, found)
            solution = from_game_solution(dag, found, state_node)
        else:
            solution = solve_dag(dag, solver, selection, progress, time_limit, memory_mb)
            check = None
    except LimitReached as exc:
        raise LimitReached(f"{solver} stopped: {exc.message} ({raise_hint(exc.message)})",
                           exc.partial) from None
    seconds = time.perf_counter() - start
    certify_dag = registry.MODELS[registry.SIMULTANEOUS].certify_dag
    assert certify_dag is not None
    return solution, check or certify_dag(dag, solution), seconds


def raise_hint(message: str) -> str:
    """The option that lets a solve stopped by ``message`` go further."""
    return "raise --memory-mb" if "MB" in message else "raise --time-limit"


def solve_game(source: str | Path, solver: str, *, budget: Budget | None = None,
               engine: str = "auto", selection: str = "first",
               progress: Callable[[str], None] | None = None,
               path: str | None = None,
               loaded: Callable[[str, str, float], None] | None = None) -> GdlSolveResult:
    """Steps 1-4 for a game file: load, expand, solve, certify.

    ``loaded(name, engine, seconds)`` is called once the game is loaded, so a front end
    can name the game also when a budget stops the work after that.

    ``path``: "dag" (the scale path) or "model" (the per-entry one); by default
    "dag" for the baseline and the IH, "model" for DOαβ and BIαβ.
    """
    path = path or ("model" if solver in ("doab", "biab") else "dag")
    if path not in PATHS:
        raise GameError(f"unknown path {path!r}; use one of {', '.join(PATHS)}")
    start = time.perf_counter()
    game_file = load_for_solve(source, engine, budget, check=player_count_check)
    machine, budget, load_seconds = game_file.machine, game_file.budget, game_file.seconds
    rules, name = game_file.rules, game_file.name
    if loaded is not None:
        loaded(name, machine.engine_name, load_seconds)
    left = None
    expansion: Expansion | DagExpansion
    if path == "dag":
        expansion = expand_dag(machine, budget=budget, progress=progress)
        if progress is not None:
            progress(_expanded_line(expansion))
    else:
        expansion = expand(machine, budget=budget, progress=progress)
    if budget.time_limit is not None:
        left = max(budget.time_limit - (time.perf_counter() - start), 1e-3)
    solution, check, seconds = solve_any(
        expansion, solver, selection=selection, time_limit=left, memory_mb=budget.memory_mb,
        progress=solve_progress(progress, solver) if progress else None)
    return GdlSolveResult(name, rules, machine.engine_name, expansion, solution, check,
                          load_seconds, seconds, path, round(peak_rss_mb(), 1))


@dataclass
class Loaded:
    """A game file read and loaded for a solve: its rules, name and machine, the seconds
    loading took, and the budget timed from the start of loading."""

    rules: list[Rule]
    name: str
    machine: StateMachine
    seconds: float
    budget: Budget


def load_for_solve(source: str | Path, engine: str = "auto", budget: Budget | None = None,
                   check: Callable[[list[Rule]], object] | None = None) -> Loaded:
    """Read the rules (``check`` them before grounding), load the state machine, and
    time the budget from the start (LimitReached when loading used all its time)."""
    start = time.perf_counter()
    budget = budget or Budget()
    rules, name = read_rules(Path(source))
    if check is not None:
        check(rules)
    machine = load_machine(rules, engine=engine, name=name, filename=str(source))
    seconds = time.perf_counter() - start
    if budget.time_limit is not None:
        check_loading_time(budget.time_limit, seconds)
        budget = dataclasses.replace(budget, started=start)
    return Loaded(rules, name, machine, seconds, budget)


def _expanded_line(expansion: DagExpansion) -> str:
    dag = expansion.dag
    rate = expansion.transitions / max(expansion.seconds, 1e-9)
    return (f"expand: {dag.num_states:,} states, {expansion.transitions:,} transitions "
            f"({rate:,.0f}/s, {'batched' if expansion.batched else 'state by state'}) "
            f"in {expansion.seconds:.2f} s, {expansion.nbytes() / max(dag.num_states, 1):.0f} "
            f"B/state, {expansion.nbytes() / 2**20:,.1f} MB")


def strategy_lines(expansion: Expansion | DagExpansion, solution: object) -> Iterator[dict]:
    """One line per decision state of the solution's support (see the module docstring)."""
    if isinstance(expansion, DagExpansion):
        yield from dag_strategy_lines(expansion, solution)  # type: ignore[arg-type]
        return
    game = expansion.game
    roles = expansion.player_roles
    for node in solution.support().tolist():  # type: ignore[attr-defined]
        if expansion.node_state[node] < 0:
            continue  # a chance node has no GDL state of its own
        strategies = {}
        for player in (0, 1):
            probs = solution.node_strategy(node, player)  # type: ignore[attr-defined]
            labels = game.actions(node, player)
            strategies[roles[player]] = _strategy(labels, probs)
        value = solution.values[node]  # type: ignore[attr-defined]
        yield node_line(expansion.node_facts(node), strategies,
                        {roles[0]: payoff_number(value[0]), roles[1]: payoff_number(value[1])})


def dag_strategy_lines(expansion: DagExpansion, solution: DagSolution,
                       states: Iterable[int] | None = None) -> Iterator[dict]:
    """The strategy lines of a DAG solution: its solved non-terminal states in order
    (or ``states``), moves as the machine's KIF."""
    dag = expansion.dag
    if states is None:
        states = np.flatnonzero(solution.solved & ~dag.terminal).tolist()
    chosen = [s for s in states if not dag.terminal[s] and solution.solved[s]]
    return state_lines(expansion, chosen, dag.player_names, solution.strategy,
                       lambda s: solution.values[s])


def state_lines(expansion: DagExpansion, states: Iterable[int], roles: Sequence[str],
                strategy_of: Callable[[int, int], np.ndarray],
                values_of: Callable[[int], Sequence[float]]) -> Iterator[dict]:
    """One strategy line per state of ``states`` (``strategy_of(state, player)``: the
    player's move probabilities; ``values_of(state)``: every player's value), the
    moves spelt once per legal move set."""
    machine = expansion.machine
    labels: dict[int, list[list[str]]] = {}   # by legal move set (batched)
    for s in states:
        key = int(expansion.legal_set[s]) if expansion.legal_set is not None else -1
        names = labels.get(key)
        if names is None:
            moves = expansion.moves(s)
            assert moves is not None
            names = [[machine.move_to_kif(m) for m in moves[p]] for p in range(len(roles))]
            if key >= 0:
                labels[key] = names
        strategies = {role: _strategy(names[p], strategy_of(s, p))
                      for p, role in enumerate(roles)}
        yield node_line(expansion.state_to_kif(s), strategies,
                        {role: payoff_number(v) for role, v in zip(roles, values_of(s),
                                                                    strict=True)})


def _strategy(labels: Sequence[str], probs: np.ndarray) -> dict[str, float]:
    return {labels[k]: float(p) for k, p in enumerate(probs.tolist()) if p > MIN_PROBABILITY}


def save_result(path: str | Path, result: GdlSolveResult,
                note: Callable[[str], None] | None = None) -> int:
    """``--save``: the compact binary file for a DAG solution named ``.npz`` or with
    more than NPZ_ABOVE_STATES states (then ``.npz`` is appended to the name, said to
    ``note``), else JSON lines; returns the number of states stored."""
    target = Path(path)
    header = {"rules": result.rules, "game": result.name, "roles": result.player_roles,
              "solver": result.solution.solver, "values": result.values()}  # type: ignore[attr-defined]
    if isinstance(result.expansion, DagExpansion) and (
            target.suffix == ".npz" or result.states > NPZ_ABOVE_STATES):
        if target.suffix != ".npz":
            target = target.with_name(target.name + ".npz")
            if note is not None:
                note(f"{result.states:,} states: saving in the compact format as {target}")
        return save_dag_solution(target, result.expansion, result.solution,  # type: ignore[arg-type]
                                 **header)
    return save_solution(target, lines=result.strategy_lines(), **header)


def payoff_number(value: float) -> float:
    """A payoff rounded off float noise (1e-9), so 49.99999999998 prints as 50."""
    return round(float(value), 9)
