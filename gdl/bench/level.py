"""``ggp bench level``: the level-batched solver on the compact model against today's path.

    ggp bench level [--quick] [--corpus DIR] [--scale-width W] [--scale-actions A]
                    [--json OUT.json]

Steps, all in one run (CPU seconds, ``time.process_time``: other jobs on a shared
machine inflate them less than wall-clock time):

1. Games: chickentictactoe (from the corpus, skipped when it is absent), simultaneous
   tic-tac-toe and goofspiel_7 (``games/gdl``; 30,804 states), and random games with many mixed nodes (constant-sum
   6x6-ish DAGs, a full constant-sum game, a general-sum DAG with nature). GDL games
   are expanded to a ``SimultaneousGame`` and converted (``game_to_dag``); expansion
   and conversion are not timed.
2. Per game: today's baseline (``baseline.solve``) and the new one
   (``solve_dag``), whole solves; values compared (largest difference) and both
   certified.
3. Solve time per mixed node: the mixed nodes' matrices (every decision node whose
   equilibrium is not pure), per level, solved by today's ``solve_batch`` (one call
   per shape, as today's baseline batches them) and by ``solve_level_groups`` (one
   call per level, as the new one does); time per mixed node and the ratio (the
   issue's goal: at least 10x).
4. Scale: the new path alone on a constant-sum random DAG of ``--scale-width`` states
   per level (10 levels, 1..``--scale-actions`` actions per player): solve and
   certificate times, bytes per state of the DAG and of the solution, and the peak
   the solve allocated (``tracemalloc``, in a second, untimed solve) per state; the
   issue's goal is about 100 bytes per state.
5. The interval heuristic on each game's DAG and on the scale DAG: today's path
   (``dag_to_game``, ``interval_heuristic.solve``, mapped back) against the native one
   (``solve_dag(dag, "ih")``): CPU seconds, the largest value difference, whether the
   same states are solved with the same pure actions, the native one's certificate,
   and on the scale DAG both paths' peak allocation per state (``tracemalloc``, in
   second, untimed solves).

``--quick`` keeps simultaneous tic-tac-toe and one random DAG, and a small scale run.
blocker and doubletictactoe are not here: today's per-state path does not expand them
within any budget (docs/solving-gdl.md).
"""

from __future__ import annotations

import argparse
import json
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np

from gdl.expansion.expand import expand
from gdl.reasoning.machine import load_machine
from solvers.locations import REPO
from solvers.matrix import compiled, solve_batch
from solvers.matrix.equilibrium import PURE
from solvers.matrix.level_batch import solve_level_groups
from solvers.simultaneous import baseline, certificate, dag_certificate, interval_heuristic
from solvers.simultaneous.baseline import SolverState
from solvers.simultaneous.dag import StateDag
from solvers.simultaneous.dag_convert import dag_to_game, from_game_solution, game_to_dag
from solvers.simultaneous.dag_solution import DagSolution
from solvers.simultaneous.dag_solve import solve_dag
from solvers.simultaneous.model import CHANCE, SimultaneousGame
from solvers.simultaneous.random_games import full_game, random_dag
from solvers.simultaneous.solution import Solution

DEFAULT_CORPUS = REPO.parent / "shared" / "gdl-corpus"


def cpu(call: Callable[[], object]) -> tuple[object, float]:
    start = time.process_time()
    result = call()
    return result, time.process_time() - start


def mixed_levels(game: SimultaneousGame, solution: Solution) -> list[list[tuple[np.ndarray, np.ndarray]]]:
    """Per level, the (u0, u1) stacks of its mixed nodes, one per shape, as today's
    baseline batches them."""
    state = SolverState(game, solution.selection)
    state.values = solution.values
    levels = []
    for level in game.levels:
        decision = level[game.node_kind[level] != CHANCE]
        mixed = decision[solution.method[decision] != PURE]
        levels.append([state.matrices(group, m, n) for group, (m, n) in state.shape_groups(mixed)])
    return levels


def per_mixed_node(game: SimultaneousGame, solution: Solution) -> dict:
    """Step 3: both matrix solvers on the same mixed nodes, level by level; the new one
    also without the compiled simplex (HiGHS' block LPs), the path it replaces."""
    levels = mixed_levels(game, solution)
    nodes = sum(len(u0) for stacks in levels for u0, _ in stacks)

    def level_batched() -> list:
        return [sol for stacks in levels for sol in solve_level_groups(stacks)]

    old_sols, old = cpu(lambda: [solve_batch(u0, u1) for stacks in levels for u0, u1 in stacks])
    new_sols, new = cpu(level_batched)
    enabled, compiled.SIMPLEX.enabled = compiled.SIMPLEX.enabled, False
    try:
        highs_sols, highs = cpu(level_batched)
    finally:
        compiled.SIMPLEX.enabled = enabled
    gap = max((float(np.abs(a.values - b.values).max())
               for a, *news in zip(old_sols, new_sols, highs_sols, strict=True) for b in news), default=0.0)
    return {"mixed_nodes": nodes, "old_ms_per_node": 1e3 * old / max(nodes, 1),
            "new_ms_per_node": 1e3 * new / max(nodes, 1),
            "highs_ms_per_node": 1e3 * highs / max(nodes, 1),
            "ratio": old / new if new > 0 else None,
            "highs_ratio": old / highs if highs > 0 else None, "value_gap": gap}


def compare(name: str, game: SimultaneousGame, dag: StateDag, say: Callable[[str], None]) -> dict:
    """Steps 2-3 for one game."""
    old, old_s = cpu(lambda: baseline.solve(game))
    new, new_s = cpu(lambda: solve_dag(dag))
    n = game.num_nodes
    gap = float(np.abs(new.values[:n] - old.values).max())
    old_cert = certificate.check(game, old)
    new_cert = dag_certificate.check(dag, new)
    mixed = per_mixed_node(game, old)
    row = {"game": name, "nodes": n, "states": dag.num_states, "old_s": old_s, "new_s": new_s,
           "value_gap": gap, "old_ok": old_cert["ok"], "new_ok": new_cert["ok"],
           "new_max_gain": new_cert["max_gain"], "methods": new.stats, **{f"mixed_{k}": v for k, v in mixed.items()},
           "dag_bytes_per_state": dag.nbytes() / dag.num_states,
           "solution_bytes_per_state": new.nbytes() / dag.num_states}
    ratio, highs_ratio = ("-" if mixed[k] is None else f"{mixed[k]:.1f}x" for k in ("ratio", "highs_ratio"))
    say(f"{name:<26} {n:>8} {old_s:>8.2f} {new_s:>8.2f} {old_s / max(new_s, 1e-9):>6.1f}x "
        f"{mixed['mixed_nodes']:>7} {mixed['old_ms_per_node']:>8.3f} {mixed['highs_ms_per_node']:>8.3f} "
        f"{highs_ratio:>7} {mixed['new_ms_per_node']:>8.3f} {ratio:>7} {max(gap, mixed['value_gap']):>8.1e} "
        f"{'ok' if old_cert['ok'] and new_cert['ok'] else 'FAILED'} {new_cert['max_gain']:.1e}")
    return row


def games(corpus: Path, quick: bool):
    """(name, game, dag) of step 1."""
    chicken = corpus / "repository" / "chickentictactoe.kif"
    paths = ([("chickentictactoe", chicken)] if chicken.exists() and not quick else []) + \
        [("simultaneous_tictactoe", REPO / "games" / "gdl" / "simultaneous_tictactoe.kif")]
    if not quick:
        paths.append(("goofspiel_7", REPO / "games" / "gdl" / "goofspiel_7.kif"))
    for name, path in paths:
        game = expand(load_machine(path)).game
        yield name, game, game_to_dag(game)
    for seed in (0,) if quick else (0, 1):
        dag = random_dag(6, 5, 400, seed, zero_sum=True)
        game, _ = dag_to_game(dag)
        yield f"random_dag 6x6 cs #{seed}", game, game_to_dag(game)
    if quick:
        return
    game = full_game(3, 5, 0, zero_sum=True)
    yield "full_game(3,5) zero-sum", game, game_to_dag(game)
    dag = random_dag(4, 5, 400, 0, outcomes=3)
    game, _ = dag_to_game(dag)
    yield "random_dag 4x4 gs nature", game, game_to_dag(game)


def peak_bytes(call: Callable[[], object]) -> int:
    """The peak ``call`` allocates (traced: a second, untimed run, as tracing is slow)."""
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def ih_today(dag: StateDag, selection: str = "first") -> DagSolution:
    """Today's interval heuristic on a DAG: through the per-entry model and back."""
    game, state_node = dag_to_game(dag)
    return from_game_solution(dag, interval_heuristic.solve(game, selection), state_node)


def compare_ih(name: str, dag: StateDag, say: Callable[[str], None], memory: bool = False) -> dict:
    """Step 5 for one DAG."""
    old, old_s = cpu(lambda: ih_today(dag))
    new, new_s = cpu(lambda: solve_dag(dag, "ih"))
    gap = float(np.abs(new.values[old.solved] - old.values[old.solved]).max())
    same = bool(np.array_equal(new.solved, old.solved) and np.array_equal(new.pure, old.pure))
    cert = dag_certificate.check(dag, new)
    s = dag.num_states
    row = {"game": name, "states": s, "old_s": old_s, "new_s": new_s, "value_gap": gap,
           "same_states_and_pure_actions": same, "ok": cert["ok"], "max_gain": cert["max_gain"],
           "solved": int(np.count_nonzero(new.solved & ~dag.terminal))}
    memory_text = ""
    if memory:
        row["old_peak_bytes_per_state"] = peak_bytes(lambda: ih_today(dag)) / s
        row["new_peak_bytes_per_state"] = peak_bytes(lambda: solve_dag(dag, "ih")) / s
        memory_text = (f"; peak bytes per state {row['old_peak_bytes_per_state']:.0f} -> "
                       f"{row['new_peak_bytes_per_state']:.0f}")
    say(f"IH {name:<26} {s:>9} {row['solved']:>8} {old_s:>8.2f} {new_s:>8.2f} "
        f"{old_s / max(new_s, 1e-9):>6.1f}x {gap:>8.1e} {'same' if same else 'DIFFERENT'} "
        f"{'ok' if cert['ok'] else 'FAILED'} {cert['max_gain']:.1e}{memory_text}")
    return row


def scale(width: int, actions: int, say: Callable[[str], None]) -> dict:
    """Step 4 (and step 5's scale row): the new path on a large random DAG."""
    dag = random_dag(actions, 10, width, 0, zero_sum=True)
    solution, seconds = cpu(lambda: solve_dag(dag))
    peak = peak_bytes(lambda: solve_dag(dag))
    cert, cert_s = cpu(lambda: dag_certificate.check(dag, solution))
    s = dag.num_states
    row = {"states": s, "entries": dag.num_entries, "solve_s": seconds, "states_per_s": s / seconds,
           "dag_bytes_per_state": dag.nbytes() / s, "solution_bytes_per_state": solution.nbytes() / s,
           "peak_solve_bytes_per_state": peak / s, "certificate_s": cert_s, "ok": cert["ok"],
           "max_gain": cert["max_gain"], "methods": solution.stats}
    say(f"\nScale: random DAG, {s:,} states, {dag.num_entries:,} entries, constant-sum, "
        f"1-{actions} actions")
    say(f"  solve {seconds:.1f} s CPU ({s / seconds:,.0f} states/s), certificate {cert_s:.1f} s, "
        f"{'ok' if cert['ok'] else 'FAILED'} (max gain {cert['max_gain']:.1e}); methods {solution.stats}")
    say(f"  bytes per state: DAG {row['dag_bytes_per_state']:.1f} + solution "
        f"{row['solution_bytes_per_state']:.1f} = {row['dag_bytes_per_state'] + row['solution_bytes_per_state']:.1f}; "
        f"the solve's peak allocation (solution, heights, order, chunks) {row['peak_solve_bytes_per_state']:.1f}")
    row["ih"] = compare_ih("scale random DAG", dag, say, memory=True)
    return row


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="ggp bench level",
        description="The level-batched solver on the compact DAG against the per-node path, "
        "in one run: seconds per mixed node, bytes per state.")
    parser.add_argument("--quick", action="store_true", help="two games and a small scale run")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="the GDL corpus folder")
    parser.add_argument("--scale-width", type=int,
                        help="states per level of the scale run's random DAG (default 100000, "
                             "quick 2000; 0: skip it)")
    parser.add_argument("--scale-actions", type=int, default=4,
                        help="largest action count per player in the scale run (default 4)")
    parser.add_argument("--json", metavar="OUT.json", help="also write the measurements as JSON")
    args = parser.parse_args(argv)

    def say(line: str) -> None:
        print(line, flush=True)

    baseline.solve(full_game(2, 2, 0, zero_sum=True))     # warm up scipy and numpy
    compiled.load()                                         # and the compiled simplex
    say(f"{'game':<26} {'nodes':>8} {'old s':>8} {'new s':>8} {'ratio':>7} {'mixed':>7} "
        f"{'old ms':>8} {'HiGHS ms':>8} {'ratio':>7} {'new ms':>8} {'ratio':>7} {'gap':>8} certificates")
    width = args.scale_width if args.scale_width is not None else (2_000 if args.quick else 100_000)
    cases = list(games(args.corpus, args.quick))
    rows = [compare(name, game, dag, say) for name, game, dag in cases]
    say(f"\n{'IH':<3}{'game':<26} {'states':>9} {'solved':>8} {'old s':>8} {'new s':>8} {'ratio':>7} "
        f"{'gap':>8} states/pure certificate")
    ih_rows = [compare_ih(name, dag, say) for name, _, dag in cases]
    big = scale(width, args.scale_actions, say) if width > 0 else None
    failed = [r["game"] for r in rows if not (r["old_ok"] and r["new_ok"])]
    failed += [f"IH {r['game']}" for r in ih_rows + ([big["ih"]] if big else []) if not r["ok"]]
    if big is not None and not big["ok"]:
        failed.append("scale")
    ratios = [r["mixed_ratio"] for r in rows if r["mixed_ratio"] is not None]
    if ratios:
        say(f"\nmixed nodes, new vs old: {min(ratios):.1f}x to {max(ratios):.1f}x faster "
            f"(goal 10x; general-sum games take the same code on both sides)")
    say(f"certificates: {'all ok' if not failed else 'FAILED: ' + ', '.join(failed)}")
    if args.json:
        Path(args.json).write_text(json.dumps({"games": rows, "ih": ih_rows, "scale": big}, default=str))
    return 0 if not failed else 1
