"""``ggp solve GAME.kif``: solve a GDL game offline with the baseline or the IH.

    ggp solve GAME.kif --solver baseline|ih [--json] [--strategy OUT.jsonl]
              [--save FILE] [--max-states N] [--time-limit S] [--memory-mb M]
              [--engine auto|compiled|general] [--selection RULE] [--quiet]

Steps:

1. Read the rules; refuse early (before grounding) a game without exactly two
   players besides ``random``; load the state machine (compiled engine when it fits).
2. Expand the game into a simultaneous-move DAG (:mod:`gdl.expand`) within the
   state, time and memory budgets, printing progress lines on stderr.
3. Solve it: the baseline (a subgame-perfect equilibrium at every state) or the
   interval heuristic (a partial behavioral strategy), with the time left.
4. Certify the result by separate code (:mod:`solvers.simultaneous.certificate`).
5. Report: a summary, or with ``--json`` the object every simultaneous-move solve
   prints, ``{"solver", "values": {role: value}, "root_strategy": {role: {move:
   probability}}, "nodes", "seconds", "certificate": {"max_gain", ...}}``
   (``docs/solve-json.md``), plus ``"states"`` (distinct states expanded) and
   ``"expand_seconds"`` (and ``game``, ``engine``, ``load_seconds``,
   ``total_seconds``); the exit status is 1 when the certificate fails. ``--strategy`` writes one JSON line per state of the
   solution's support: ``{"node": [KIF facts], "strategy": {role: {move KIF:
   probability}}, "values": {role: value}}``; ``--save`` writes the same lines after
   a header keyed by the rules hash (:mod:`gdl.solution_store`) for the agent.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from gdl.expand import Budget, Expansion, expand, players_of
from gdl.machine import ENGINES, load_machine, read_rules
from gdl.solution_store import node_line, save_solution
from gdl.terms import Fn, Rule, term_to_kif
from solvers.errors import GameError, LimitReached
from solvers.files import prepare_output
from solvers.report import root_strategy_text

SOLVERS = ("baseline", "ih", "doab", "biab")
MIN_PROBABILITY = 1e-12     # moves below this are left out of strategy lines
PROGRESS_SECONDS = 2.0


@dataclass
class GdlSolveResult:
    """One solved GDL game with its timings."""

    name: str
    rules: list[Rule]
    engine: str
    expansion: Expansion
    solution: object            # solvers.simultaneous.solution.Solution / PartialSolution
    certificate: dict
    load_seconds: float
    solve_seconds: float

    @property
    def expand_seconds(self) -> float:
        return self.expansion.graph.seconds

    def values(self) -> dict[str, float]:
        roles = self.expansion.player_roles
        root = self.solution.root_values  # type: ignore[attr-defined]
        return {roles[0]: _number(root[0]), roles[1]: _number(root[1])}

    def to_json(self) -> dict:
        from solvers.simultaneous.doab import counts

        graph = self.expansion.graph
        return {
            "solver": self.solution.solver,  # type: ignore[attr-defined]
            "values": self.values(),
            "root_strategy": self.solution.root_strategy(),  # type: ignore[attr-defined]
            "nodes": self.expansion.game.num_nodes,
            "seconds": round(self.solve_seconds, 4),
            "certificate": self.certificate,
            "states": graph.n_states,
            "expand_seconds": round(self.expand_seconds, 4),
            "game": self.name,
            "engine": self.engine,
            "constant_sum": graph.constant_sum,
            "load_seconds": round(self.load_seconds, 4),
            "total_seconds": round(self.load_seconds + self.expand_seconds
                                   + self.solve_seconds, 4),
            **counts(self.solution),
        }


def player_count_check(rules: Sequence[Rule]) -> None:
    """UnsupportedGame unless the rules name exactly two roles besides ``random``
    (checked on the role facts, before the game is grounded)."""
    players_of([term_to_kif(r.head.args[0]) for r in rules
                if not r.body and isinstance(r.head, Fn) and r.head.name == "role"
                and len(r.head.args) == 1])


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
    from solvers.simultaneous import baseline, certificate, doab, interval_heuristic

    solve = {"baseline": baseline.solve, "ih": interval_heuristic.solve, "doab": doab.solve,
             "biab": doab.solve_biab}[solver]
    start = time.perf_counter()
    try:
        solution = solve(expansion.game, selection=selection, progress=progress,
                         time_limit=time_limit)
    except LimitReached as exc:
        raise LimitReached(f"{solver} stopped: {exc.message} (raise --time-limit)",
                           exc.partial) from None
    seconds = time.perf_counter() - start
    return solution, certificate.check(expansion.game, solution), seconds


def solve_game(source: str | Path, solver: str, *, budget: Budget | None = None,
               engine: str = "auto", selection: str = "first",
               progress: Callable[[str], None] | None = None) -> GdlSolveResult:
    """Steps 1-4 for a game file: load, expand, solve, certify."""
    start = time.perf_counter()
    budget = budget or Budget()
    rules, name = read_rules(Path(source))
    player_count_check(rules)
    machine = load_machine(rules, engine=engine, name=name, filename=str(source))
    load_seconds = time.perf_counter() - start
    left = None
    if budget.time_limit is not None:
        check_loading_time(budget.time_limit, load_seconds)
        budget = dataclasses.replace(budget, started=start)
    expansion = expand(machine, budget=budget, progress=progress)
    if budget.time_limit is not None:
        left = max(budget.time_limit - (time.perf_counter() - start), 1e-3)
    solution, check, seconds = solve_expansion(
        expansion, solver, selection=selection, time_limit=left,
        progress=_solve_progress(progress, solver) if progress else None)
    return GdlSolveResult(name, rules, machine.engine_name, expansion, solution, check,
                          load_seconds, seconds)


def strategy_lines(expansion: Expansion, solution: object) -> Iterator[dict]:
    """One line per decision node of the solution's support (see the module docstring)."""
    game = expansion.game
    roles = expansion.player_roles
    for node in solution.support().tolist():  # type: ignore[attr-defined]
        if expansion.node_state[node] < 0:
            continue  # a chance node has no GDL state of its own
        strategies = {}
        for player in (0, 1):
            probs = solution.node_strategy(node, player)  # type: ignore[attr-defined]
            labels = game.actions(node, player)
            strategies[roles[player]] = {labels[k]: float(p) for k, p in enumerate(probs.tolist())
                                         if p > MIN_PROBABILITY}
        value = solution.values[node]  # type: ignore[attr-defined]
        yield node_line(expansion.node_facts(node), strategies,
                        {roles[0]: _number(value[0]), roles[1]: _number(value[1])})


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    if args.max_states is not None and args.max_states < 1:
        raise GameError("--max-states must be at least 1")
    if args.time_limit is not None and args.time_limit <= 0:
        raise GameError("--time-limit must be positive")
    from solvers.matrix.selection import check_selection

    check_selection(args.selection)
    # a bad output place fails now, not after the whole solve
    strategy_path = prepare_output(args.strategy, "--strategy") if args.strategy else None
    save_path = prepare_output(args.save, "--save") if args.save else None
    progress = None if args.quiet else _stderr
    budget = Budget(max_states=args.max_states, time_limit=args.time_limit,
                    memory_mb=args.memory_mb)
    result = solve_game(args.game, args.solver, budget=budget, engine=args.engine,
                        selection=args.selection, progress=progress)
    if strategy_path is not None:
        _write_lines(str(strategy_path), strategy_lines(result.expansion, result.solution))
        _stderr(f"wrote the strategy to {strategy_path}")
    if save_path is not None:
        count = save_solution(save_path, rules=result.rules, game=result.name,
                              roles=result.expansion.player_roles, solver=args.solver,
                              values=result.values(),
                              lines=strategy_lines(result.expansion, result.solution))
        _stderr(f"saved {count:,} states to {save_path}")
    if args.json:
        print(json.dumps(result.to_json()))
    else:
        print(_summary(result))
    return 0 if result.certificate.get("ok", True) else 1


def _summary(result: GdlSolveResult) -> str:
    from solvers.simultaneous.doab import counts_line

    graph = result.expansion.graph
    kind = (f"constant-sum {graph.constant_sum:g}" if graph.constant_sum is not None
            else "general-sum")
    values = ", ".join(f"{role} {value:g}" for role, value in result.values().items())
    check = result.certificate
    support = int(result.solution.support().size)  # type: ignore[attr-defined]
    return "\n".join([
        f"game {result.name} (engine {result.engine}, loaded in {result.load_seconds:.2f} s)",
        f"expanded: {graph.n_states:,} states ({graph.n_states - graph.n_terminal:,} "
        f"non-terminal), {result.expansion.game.num_nodes:,} nodes, {kind}, "
        f"in {result.expand_seconds:.2f} s",
        f"{result.solution.solver}: values {values} in {result.solve_seconds:.2f} s "  # type: ignore[attr-defined]
        f"({support:,} nodes in the strategy's support)",
        "root strategy: " + root_strategy_text(result.solution.root_strategy()),  # type: ignore[attr-defined]
        *filter(None, [counts_line(result.solution)]),
        f"certificate: max gain {check['max_gain']:.3g}"
        + ("" if check.get("ok", True) else " (NOT an equilibrium within tolerance)"),
    ])


def _write_lines(path: str, lines: Iterator[dict]) -> None:
    try:
        with open(path, "w", encoding="utf-8") as out:
            for line in lines:
                out.write(json.dumps(line, separators=(",", ":")) + "\n")
    except OSError as exc:
        raise GameError(f"{path}: cannot write: {exc.strerror or exc}") from None


def _solve_progress(progress: Callable[[str], None], solver: str) -> Callable[[int, int], None]:
    start = time.perf_counter()
    last = [start]

    def report(done: int, total: int) -> None:
        now = time.perf_counter()
        if now - last[0] >= PROGRESS_SECONDS:
            last[0] = now
            progress(f"{solver}: {done:,} of {total:,} nodes solved, {now - start:.1f} s")

    return report


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _number(value: float) -> float:
    """A payoff rounded off float noise (1e-9), so 49.99999999998 prints as 50."""
    return round(float(value), 9)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ggp solve", description="Solve a 2-player GDL game: expand its states into a "
        "simultaneous-move game, then the thesis' baseline or interval heuristic.")
    parser.add_argument("game", help="a GDL game file (.kif)")
    parser.add_argument("--solver", choices=SOLVERS, default="baseline",
                        help="baseline (a subgame-perfect equilibrium) or ih (the interval "
                        "heuristic); default baseline")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--strategy", metavar="OUT.jsonl",
                        help="write the strategy, one JSON line per state")
    parser.add_argument("--save", metavar="FILE",
                        help="store the solution for the agent (--solutions DIR)")
    parser.add_argument("--max-states", type=int, default=Budget().max_states,
                        help="state budget of the expansion (default %(default)s)")
    parser.add_argument("--time-limit", type=float, help="seconds for load, expansion and solve")
    parser.add_argument("--memory-mb", type=float, default=Budget().memory_mb,
                        help="memory budget of the expansion in MB (default %(default)s)")
    parser.add_argument("--engine", choices=ENGINES, default="auto",
                        help="GDL engine: compiled, general, or auto (default)")
    parser.add_argument("--selection", default="first",
                        help="equilibrium selection in general-sum games: first (the first "
                        "pure one in row-major order; default), welfare, max0, min0, max1, min1")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return parser
