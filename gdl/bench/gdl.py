"""``ggp bench gdl``: random-playout speed of our GDL engines against SWI-Prolog.

What is measured, for every game and engine, in the same run:

1. Load the game with ``load_machine(engine=...)`` for the compiled and the general
   engine (the compile time is printed apart; a game the compiled engine declines
   shows its reason).
2. Random playouts, one state at a time through the StateMachine API: at each
   step ``is_terminal``, ``legal_moves`` of every role, a uniformly random move
   per role (seeded ``random.Random``), ``next_state``. Steps/s is the number of
   ``next_state`` calls per second of wall-clock time over ``--seconds``.
3. The oracle: ``../shared/oracle/bench.sh`` (the KIF translated to Prolog, random
   playouts in SWI-Prolog), first a short calibration run, then enough playouts
   to last about ``--seconds``; its "next-states/s" is the reference. Without
   ``swipl`` (or ``../shared``) the oracle column is skipped with a note.
4. The ratio engine / oracle is printed per engine.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from gdl.budget import Budget
from gdl.reasoning.machine import load_machine
from solvers.errors import GameError
from solvers.locations import SHARED

CORPUS = SHARED / "gdl-corpus" / "repository"
ORACLE = SHARED / "oracle" / "bench.sh"
DEFAULT_GAMES = ("ticTacToe", "connectFour", "breakthrough", "ticTicToe", "chess")
ENGINES = ("compiled", "general")
MODE = ("sequential random playouts, one state at a time through the StateMachine API "
        "(is_terminal, legal_moves per role, next_state); steps = next_state calls")


@dataclass
class Measure:
    game: str
    engine: str
    steps_per_second: float | None
    steps: int = 0
    playouts: int = 0
    seconds: float = 0.0
    load_seconds: float = 0.0
    note: str = ""


def random_playouts(machine, seconds: float, seed: int) -> tuple[int, int, float]:
    """(complete playouts, steps, elapsed) of random playouts for ``seconds``."""
    rng = random.Random(seed)
    roles = range(len(machine.roles))
    legal, step, terminal = machine.legal_moves, machine.next_state, machine.is_terminal
    steps = playouts = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        state = machine.initial_state()
        while not terminal(state):
            state = step(state, [rng.choice(legal(state, r)) for r in roles])
            steps += 1
            if steps & 63 == 0 and time.perf_counter() > deadline:
                return playouts, steps, time.perf_counter() - start
        playouts += 1
        if time.perf_counter() > deadline:
            return playouts, steps, time.perf_counter() - start


def bench_engine(path: Path, engine: str, seconds: float, seed: int) -> Measure:
    started = time.perf_counter()
    try:  # the compiled engine within auto's budget: the one auto would choose
        machine = load_machine(path, engine=engine,
                               budget=Budget() if engine == "compiled" else None)
    except GameError as exc:
        return Measure(path.stem, engine, None, note=f"not available: {exc.message}")
    load = time.perf_counter() - started
    try:
        playouts, steps, elapsed = random_playouts(machine, seconds, seed)
    except GameError as exc:
        return Measure(path.stem, engine, None, load_seconds=load, note=f"failed: {exc}")
    return Measure(path.stem, engine, steps / elapsed, steps, playouts, elapsed, load)


_ORACLE_LINE = re.compile(r"playouts=(\d+) next_state_calls=(\d+) .*wall=([\d.]+)s")


def _run_oracle(path: Path, playouts: int, seed: int, timeout: float) -> tuple[int, int, float]:
    out = subprocess.run([str(ORACLE), str(path), str(playouts), str(seed)],
                         capture_output=True, text=True, timeout=timeout)
    found = _ORACLE_LINE.search(out.stdout)
    if out.returncode != 0 or found is None:
        raise GameError(f"oracle failed on {path.stem}: {(out.stderr or out.stdout)[-160:]}")
    return int(found.group(1)), int(found.group(2)), float(found.group(3))


def bench_oracle(path: Path, seconds: float, seed: int) -> Measure:
    if not ORACLE.exists():
        return Measure(path.stem, "oracle", None, note="skipped: ../shared/oracle is absent")
    if shutil.which("swipl") is None:
        return Measure(path.stem, "oracle", None, note="skipped: SWI-Prolog (swipl) is absent")
    try:
        n, _, wall = _run_oracle(path, 3, seed, timeout=10 * seconds + 60)
        playouts = max(3, int(n / max(wall, 1e-3) * seconds))
        n, steps, wall = _run_oracle(path, playouts, seed, timeout=10 * seconds + 60)
    except subprocess.TimeoutExpired:
        return Measure(path.stem, "oracle", None, note="oracle timed out")
    except GameError as exc:
        return Measure(path.stem, "oracle", None, note=str(exc))
    return Measure(path.stem, "oracle", steps / wall, steps, n, wall)


def _games(names: list[str]) -> list[Path]:
    if names:
        paths = [Path(n) for n in names]
        missing = [str(p) for p in paths if not p.is_file()]
        if missing:
            raise GameError("no such game file: " + ", ".join(missing))
        return paths
    if not CORPUS.is_dir():
        raise GameError(f"the default games come from {CORPUS}, which is absent; "
                        "give game files")
    return [CORPUS / f"{name}.kif" for name in DEFAULT_GAMES]


def _row(m: Measure, oracle: float | None, width: int) -> str:
    if m.steps_per_second is None:
        return f"  {m.game:<{width}} {m.engine:<9} {'-':>11}  {m.note}"
    ratio = f"{m.steps_per_second / oracle:6.2f}x" if oracle else "      -"
    load = f"  (load {m.load_seconds:.2f} s)" if m.engine != "oracle" else ""
    return (f"  {m.game:<{width}} {m.engine:<9} {m.steps_per_second:>11,.0f}  {ratio}"
            f"  {m.steps:>9,} steps {m.playouts:>7,} playouts{load}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="ggp bench gdl",
        description="Random-playout steps/s of the compiled and general GDL engines and "
                    "of SWI-Prolog (../shared/oracle/bench.sh), measured in the same run.")
    parser.add_argument("games", nargs="*", help="GDL files (default: ticTacToe, connectFour, "
                        "breakthrough, ticTicToe and chess from ../shared/gdl-corpus); "
                        "games given are benched with the default ones")
    parser.add_argument("--seconds", type=float, default=5.0,
                        help="playout time per engine and game (default 5)")
    parser.add_argument("--seed", type=int, default=1, help="playout seed (default 1)")
    parser.add_argument("--engines", default=",".join(ENGINES),
                        help="our engines to bench (default compiled,general)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per line")
    args = parser.parse_args(argv)
    if args.seconds <= 0:
        raise GameError("--seconds must be positive")
    engines = [e for e in args.engines.split(",") if e]
    unknown = set(engines) - set(ENGINES)
    if unknown:
        raise GameError(f"unknown engine(s): {', '.join(sorted(unknown))} (one of compiled, general)")
    paths = _games([]) if CORPUS.is_dir() else []
    paths += [p for p in _games(args.games) if p not in paths] if args.games else []
    if not paths:
        raise GameError("no games to bench")
    width = max(14, *(len(p.stem) for p in paths))
    if not args.json:
        print(f"mode: {MODE}; {args.seconds:g} s per engine and game, seed {args.seed}")
        print(f"  {'game':<{width}} {'engine':<9} {'steps/s':>11}  {'/oracle':>7}")
    notes = set()
    for path in paths:
        oracle = bench_oracle(path, args.seconds, args.seed)
        rows = [bench_engine(path, e, args.seconds, args.seed) for e in engines] + [oracle]
        for m in rows:
            if args.json:
                data = asdict(m)
                data["ratio_to_oracle"] = (m.steps_per_second / oracle.steps_per_second
                                           if m.steps_per_second and oracle.steps_per_second
                                           else None)
                print(json.dumps(data), flush=True)
            else:
                print(_row(m, oracle.steps_per_second, width), flush=True)
        if oracle.steps_per_second is None and oracle.note.startswith("skipped"):
            notes.add(oracle.note)
    for note in sorted(notes):
        print(f"note: oracle column {note}")
    return 0
