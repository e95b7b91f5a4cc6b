"""``ggp bench solve``: our GDL solve path beside OpenSpiel's value iteration.

    ggp bench solve [GAME ...] [--solvers baseline,ih] [--max-states N]
                    [--time-limit S] [--peer-cpu-limit S] [--memory-mb M]
                    [--no-peer] [--json] [--quiet]

A GAME is a benchmark name of ``games/gdl`` (``goofspiel_5``, ``goofspiel_ties_4``,
``oshi_zumo_c4_s1_h8_m1``; default: Goofspiel 4 and 5 and the Oshi-Zumo files) or a
path to any ``.kif`` file. For each game, in one run:

1. Ours, per solver, in a child process of its own (a game that does not honour a
   budget is ended a quarter plus ``GRACE_SECONDS`` past it, and memory is returned):
   :func:`gdl.solving.solve.solve_game` (load, expansion, solve, certificate) within
   ``--max-states``, ``--time-limit`` and ``--memory-mb``; its states, the time of
   each phase, the values and the certificate, and the child's CPU time.
2. The peer, when the name maps to an OpenSpiel game (``goofspiel_N``: num_cards=N,
   points_order=descending, returns_type=win_loss, imp_info=false; ``oshi_zumo_cC_sS_hH_mM``:
   coins, size, horizon, min_bid), in a child process stopped at ``--peer-cpu-limit``
   CPU seconds (and ended at ``PEER_WALL_FACTOR`` times that in wall time):
   ``open_spiel.python.algorithms.value_iteration`` (threshold 1e-6), its number of
   states, its CPU time, the root value mapped from [-1, 1] to our goals (50 + 50 v).
   Without OpenSpiel (the ``peers`` extra: open-spiel, cvxpy, ecos) the column says so.
3. A table: per game and solver, states, load / expansion / solve seconds, CPU
   seconds, the value, the certificate's largest gain, OpenSpiel's states, CPU
   seconds and value, the ratio of CPU times (OpenSpiel / ours) and whether the values
   agree (within ``AGREE``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import multiprocessing
import re
import resource
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from gdl.bench.corpus import died, end_child
from gdl.bench.games import GOOFSPIEL_SIZES, OSHI_ZUMO, oshi_zumo_name
from gdl.budget import Budget
from gdl.solving.solve import SOLVERS, solve_game
from solvers.errors import GameError
from solvers.locations import GAMES

GDL_GAMES = GAMES / "gdl"
DEFAULT_GAMES = ("goofspiel_4", "goofspiel_5",   # OpenSpiel needs ~80 s CPU at 5, > 300 s at 6
                 *(oshi_zumo_name(*params) for params in OSHI_ZUMO))
GRACE_SECONDS = 30.0    # past the limit (+ a quarter) before a child that does not stop is ended
AGREE = 1e-4            # largest difference of values (0..100) that counts as agreement
PEER_THRESHOLD = 1e-6   # value iteration's stopping error (OpenSpiel's scale, [-1, 1])
PEER_WALL_FACTOR = 20   # a peer is ended past this many times its CPU limit in wall time (a shared machine)
PEER_NOTE = "OpenSpiel is not installed (pip install '.[peers]': open-spiel, cvxpy, ecos)"


def openspiel_spec(name: str) -> str | None:
    """The OpenSpiel game string of a benchmark name, None when it has no peer."""
    goofspiel = re.fullmatch(r"goofspiel_(\d+)", name)
    if goofspiel:
        return (f"goofspiel(num_cards={goofspiel[1]},points_order=descending,"
                "returns_type=win_loss,imp_info=False)")
    oshi = re.fullmatch(r"oshi_zumo_c(\d+)_s(\d+)_h(\d+)_m(\d+)", name)
    if oshi:
        return (f"oshi_zumo(coins={oshi[1]},size={oshi[2]},horizon={oshi[3]},"
                f"min_bid={oshi[4]})")
    return None


def openspiel_value_iteration(spec: str) -> dict:
    """OpenSpiel's value iteration on ``spec``: {"states", "value" (0..100, the first
    player's), "values" (state string -> value in [-1, 1]), "cpu_seconds"}."""
    # deferred: OpenSpiel, the optional peer (pip install .[peers])
    import pyspiel
    from open_spiel.python.algorithms import value_iteration

    game = pyspiel.load_game(spec)
    start = time.process_time()
    values = value_iteration.value_iteration(game, -1, PEER_THRESHOLD)
    seconds = time.process_time() - start
    root = values[str(game.new_initial_state())]
    return {"states": len(values), "value": 50.0 + 50.0 * root, "values": values,
            "cpu_seconds": seconds}


def ours(path: Path, solver: str, budget: Budget, quiet: bool = False) -> dict:
    """One ``solve_game`` run: states, phase times, values, certificate, CPU time
    (its progress lines on stderr unless ``quiet``)."""
    def progress(line: str) -> None:
        print(f"    {path.stem} {solver}: {line}", file=sys.stderr, flush=True)

    start = time.process_time()
    try:
        result = solve_game(path, solver, budget=budget, progress=None if quiet else progress)
    except GameError as exc:  # a budget on a loaded machine: say how much CPU it had
        raise GameError(f"{exc} ({time.process_time() - start:.1f} s CPU)") from None
    row = result.to_json()
    row["cpu_seconds"] = time.process_time() - start
    return row


def peer(spec: str, cpu_limit: float) -> dict:
    """Value iteration within ``cpu_limit`` CPU seconds (a child process: the limit is
    its own), without the per-state table (too big to send back)."""
    def stop(signum: int, frame: object) -> None:
        raise GameError(f"the CPU limit of {cpu_limit:g} s was reached (raise --peer-cpu-limit)")

    try:  # deferred: the optional peers, imported here before the clock starts
        import cvxpy  # noqa: F401  (value iteration's LPs need it)
        from open_spiel.python.algorithms import value_iteration  # noqa: F401
    except ImportError as exc:
        raise GameError(f"{PEER_NOTE}: {exc}") from None
    signal.signal(signal.SIGXCPU, stop)
    used = time.process_time()
    resource.setrlimit(resource.RLIMIT_CPU, (math.ceil(used + cpu_limit),
                                             math.ceil(used + cpu_limit) + 30))
    row = openspiel_value_iteration(spec)
    del row["values"]
    return row


def run_in_child(work: Callable[..., dict], args: tuple, wait: float) -> tuple[dict | None, str]:
    """(result, "") of ``work(*args)`` in a child process, or (None, why it has none)."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(work, args, sender))
    child.start()
    sender.close()
    try:
        if not receiver.poll(wait):
            return None, f"did not stop within {wait:.0f} s (ended)"
        kind, payload = receiver.recv()
        return (payload, "") if kind == "ok" else (None, payload)
    except EOFError:
        return None, died(child)
    finally:
        end_child(child, receiver)


def _child(work: Callable[..., dict], args: tuple, conn) -> None:
    try:
        conn.send(("ok", work(*args)))
    except GameError as exc:
        conn.send(("error", str(exc)))
    except MemoryError:
        conn.send(("error", "out of memory"))
    except KeyboardInterrupt:
        conn.send(("error", "interrupted"))
    except Exception as exc:  # the row says why; the other games still run
        conn.send(("error", f"internal error: {type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def game_path(game: str) -> Path:
    """A benchmark name of games/gdl or a path to a .kif file."""
    path = Path(game) if game.endswith(".kif") else GDL_GAMES / f"{game}.kif"
    if not path.is_file():
        sizes = f"{GOOFSPIEL_SIZES[0]}..{GOOFSPIEL_SIZES[-1]}"
        raise GameError(f"{game}: no such game file (a path to a .kif, or a name in games/gdl: "
                        f"goofspiel_N or goofspiel_ties_N for N = {sizes}, "
                        "oshi_zumo_cC_sS_hH_mM)")
    return path


def bench(games: Sequence[str], solvers: Sequence[str], budget: Budget,
          peer_cpu_limit: float | None, progress: Callable[[str], None] | None = None,
          quiet: bool = False) -> list[dict]:
    """One row per game: {"game", "ours": {solver: row or {"stopped": why}},
    "openspiel": row, {"stopped": why} or None}."""
    for solver in solvers:  # imports in the parent, so no child's CPU time counts them
        solve_game(GDL_GAMES / "goofspiel_2.kif", solver)
    rows = []
    # the certificate and building the model do not check the clock: on a loaded
    # machine they overrun a wall budget by a fraction of it
    wait = 1.25 * (budget.time_limit or 3600.0) + GRACE_SECONDS
    for game in games:
        path = game_path(game)
        row: dict = {"game": path.stem, "ours": {}, "openspiel": None}
        for solver in solvers:
            result, why = run_in_child(ours, (path, solver, budget, quiet), wait)
            row["ours"][solver] = result or {"stopped": why}
            if progress:
                progress(f"  {path.stem} {solver}: " + (why or _brief(result)))
        spec = openspiel_spec(path.stem)
        if spec is not None and peer_cpu_limit is not None:
            result, why = run_in_child(peer, (spec, peer_cpu_limit),
                                       PEER_WALL_FACTOR * peer_cpu_limit + GRACE_SECONDS)
            row["openspiel"] = result or {"stopped": why}
            if progress:
                progress(f"  {path.stem} OpenSpiel: " + (why or _brief(result)))
        rows.append(row)
    return rows


def _brief(result: dict | None) -> str:
    assert result is not None
    value = result["value"] if "value" in result else _first_value(result)
    return f"{result['states']:,} states, value {value:g}, {result['cpu_seconds']:.2f} s CPU"


def table(rows: Sequence[dict]) -> str:
    """The rows as a Markdown table (one line per game and solver)."""
    head = ["game", "solver", "states", "load s", "expand s", "solve s", "CPU s", "value p0",
            "max gain", "OpenSpiel states", "OpenSpiel CPU s", "OpenSpiel value",
            "ratio (OpenSpiel / ours, CPU)", "agree"]
    lines = ["| " + " | ".join(head) + " |",
             "| --- | --- |" + " ---: |" * (len(head) - 3) + " --- |"]
    for row in rows:
        for solver, result in row["ours"].items():
            if "stopped" in result:
                cells = [f"stopped: {result['stopped']}"] + [""] * 6
            else:
                cells = [f"{result['states']:,}", f"{result['load_seconds']:.2f}",
                         f"{result['expand_seconds']:.2f}", f"{result['seconds']:.2f}",
                         f"{result['cpu_seconds']:.2f}", f"{_first_value(result):.6g}",
                         f"{result['certificate']['max_gain']:.1g}"]
            cells = [row["game"], solver, *cells, *_peer_cells(row["openspiel"], result)]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _first_value(result: dict) -> float:
    """The first player's value of one of our rows."""
    return next(iter(result["values"].values()))


def _peer_cells(peer_row: dict | None, result: dict) -> list[str]:
    if peer_row is None:
        return ["-"] * 5
    if "stopped" in peer_row:
        return [f"stopped: {peer_row['stopped']}"] + [""] * 4
    cells = [f"{peer_row['states']:,}", f"{peer_row['cpu_seconds']:.2f}",
             f"{peer_row['value']:.6g}"]
    if "stopped" in result:
        return cells + ["-", "-"]
    ratio = peer_row["cpu_seconds"] / max(result["cpu_seconds"], 1e-9)
    agree = abs(_first_value(result) - peer_row["value"]) <= AGREE
    return cells + [f"{ratio:,.1f}x", "yes" if agree else "NO"]


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    solvers = args.solvers.split(",")
    unknown = [s for s in solvers if s not in SOLVERS]
    if unknown:
        raise GameError(f"--solvers: unknown solver {unknown[0]!r} (known: {', '.join(SOLVERS)})")
    if args.time_limit <= 0 or args.peer_cpu_limit <= 0:
        raise GameError("--time-limit and --peer-cpu-limit must be positive")
    games = args.games or list(DEFAULT_GAMES)
    for game in games:
        game_path(game)  # every name checked before the first long run
    peer_limit = None if args.no_peer else args.peer_cpu_limit
    if peer_limit is not None and not _openspiel_installed():
        peer_limit = None
        print(f"note: {PEER_NOTE}; only our column is measured")
    budget = Budget(max_states=args.max_states, time_limit=args.time_limit,
                    memory_mb=args.memory_mb)
    start = time.perf_counter()
    rows = bench(games, solvers, budget, peer_limit,
                 progress=None if args.json else lambda line: print(line, flush=True),
                 quiet=args.quiet)
    if args.json:
        print(json.dumps({"rows": rows, "seconds": time.perf_counter() - start}))
    else:
        print(table(rows))
        print(f"(CPU seconds of each child process: ours = load + expansion + solve + "
              f"certificate; {time.perf_counter() - start:.0f} s wall in all)")
    return 0


def _openspiel_installed() -> bool:
    return all(importlib.util.find_spec(module) is not None
               for module in ("pyspiel", "cvxpy", "ecos"))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ggp bench solve",
        description="Solve benchmark GDL games (Goofspiel, Oshi-Zumo) with our solvers and "
        "OpenSpiel's value iteration side by side; print times, ratios and values.")
    parser.add_argument("games", nargs="*",
                        help="names in games/gdl (goofspiel_N, goofspiel_ties_N, "
                        "oshi_zumo_cC_sS_hH_mM) or .kif paths (default: "
                        + " ".join(DEFAULT_GAMES) + ")")
    parser.add_argument("--solvers", default="baseline,ih",
                        help="comma-separated (default %(default)s)")
    parser.add_argument("--max-states", type=int, default=20_000_000,
                        help="state budget of each expansion (default %(default)s)")
    parser.add_argument("--time-limit", type=float, default=300.0,
                        help="seconds for each of our solves, load to certificate "
                        "(default %(default)s)")
    parser.add_argument("--peer-cpu-limit", type=float, default=300.0,
                        help="CPU seconds for OpenSpiel on each game (default %(default)s; "
                        "CPU, not wall: on a shared machine its wall time is several times "
                        "longer)")
    parser.add_argument("--memory-mb", type=float, default=8192.0,
                        help="memory budget of each solve in MB (default %(default)s)")
    parser.add_argument("--no-peer", action="store_true", help="skip OpenSpiel")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--quiet", action="store_true",
                        help="no expansion / solver progress lines on stderr")
    return parser
