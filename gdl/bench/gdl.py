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
5. ``playouts``: the compiled whole playouts (:mod:`gdl.reasoning.playout_net`: every step
   in compiled code, 64 playouts a machine word), uniform random from the initial
   state, rounds of :data:`PLAYOUT_ROUND` until ``--seconds`` pass; steps = joint moves
   played. Not the StateMachine API: what the agent's batched playouts run.
6. Sancho 1.61c's reasoner as a peer (``--sancho DIR``, the gdl-perf build of
   ``/work/notes/sancho.md``, by default ``~/.cache/ggp-peers/gdlperf`` when present):
   ``DIR/time_sancho.sh GAME SECONDS``, random rollouts to the end on one thread
   after its propnet is built and optimised; its rollouts/s is the reference of the
   ``/sancho`` column (our rollouts/s over its). Absent: skipped with a note; never
   downloaded.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from gdl.budget import Budget
from gdl.reasoning import kernels
from gdl.reasoning.batch_machine import batch_machine_of, pack_ints
from gdl.reasoning.machine import load_machine
from gdl.reasoning.playout_net import playout_net_of
from solvers.errors import GameError
from solvers.locations import SHARED

CORPUS = SHARED / "gdl-corpus" / "repository"
ORACLE = SHARED / "oracle" / "bench.sh"
DEFAULT_GAMES = ("ticTacToe", "connectFour", "breakthrough", "ticTicToe", "chess")
SANCHO = Path.home() / ".cache" / "ggp-peers" / "gdlperf"
ENGINES = ("compiled", "general", "playouts")
MODE = ("compiled and general: sequential random playouts, one state at a time through the "
        "StateMachine API (is_terminal, legal_moves per role, next_state); steps = next_state "
        "calls. playouts: the compiled whole playouts, 64 a word; steps = joint moves")
PLAYOUT_ROUND = 512   # playouts of one call of the compiled playouts
SANCHO_SETUP = 120    # seconds Sancho may take beyond --seconds (JVM, propnet build and
#                       optimisation); then its whole process group is killed


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
    cpu_seconds: float | None = None   # our engines: CPU time of the timed part

    @property
    def playouts_per_second(self) -> float | None:
        return self.playouts / self.seconds if self.steps_per_second and self.seconds else None


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


def compiled_playouts(machine, seconds: float, seed: int) -> tuple[int, int, float]:
    """(complete playouts, steps, elapsed) of the compiled whole playouts from the
    initial state for ``seconds``, in rounds of :data:`PLAYOUT_ROUND`."""
    net = playout_net_of(batch_machine_of(machine))
    packed = pack_ints([machine.initial_state()] * PLAYOUT_ROUND, net.n_words)
    chance = [r for r, name in enumerate(machine.roles) if name == "random"]
    steps = playouts = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        result = net.play(packed, limit=10_000, seed=seed + playouts, chance=chance)
        steps += int(result.steps.sum())
        playouts += PLAYOUT_ROUND
        if time.perf_counter() > deadline:
            return playouts, steps, time.perf_counter() - start


def bench_engine(path: Path, engine: str, seconds: float, seed: int) -> Measure:
    started = time.perf_counter()
    try:  # the compiled engine within auto's budget: the one auto would choose
        machine = load_machine(path, engine="general" if engine == "general" else "compiled",
                               budget=None if engine == "general" else Budget())
        run = random_playouts
        if engine == "playouts":
            if kernels.compiled(kernels.MIN_ITEMS) is None:   # (loaded once, untimed)
                return Measure(path.stem, engine, None, note="not available: the compiled "
                               "kernels are off (GGP_NUMBA=0, or no numba)")
            playout_net_of(batch_machine_of(machine))
            run = compiled_playouts
    except GameError as exc:
        return Measure(path.stem, engine, None, note=f"not available: {exc.message}")
    load = time.perf_counter() - started
    cpu = time.process_time()
    try:
        playouts, steps, elapsed = run(machine, seconds, seed)
    except GameError as exc:
        return Measure(path.stem, engine, None, load_seconds=load, note=f"failed: {exc}")
    return Measure(path.stem, engine, steps / elapsed, steps, playouts, elapsed, load,
                   cpu_seconds=time.process_time() - cpu)


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


def bench_sancho(path: Path, seconds: float, sancho: Path | None) -> Measure:
    """Sancho's reasoner on ``path`` through ``sancho/time_sancho.sh`` (skipped with a
    note when ``sancho`` is None or lacks the script)."""
    script = sancho / "time_sancho.sh" if sancho is not None else None
    if script is None or not script.is_file():
        where = "no --sancho given" if sancho is None else f"{script} is absent"
        return Measure(path.stem, "sancho", None, note=f"skipped: {where} (see "
                       "/work/notes/sancho.md for the gdl-perf build)")
    whole = max(1, round(seconds))
    try:   # its own process group: a timeout ends the script's JVM too
        process = subprocess.Popen([str(script), str(path), str(whole)], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, start_new_session=True)
    except OSError as exc:
        return Measure(path.stem, "sancho", None, note=f"sancho failed: {exc}")
    try:   # (the JVM builds and optimises its propnet first: up to a minute more)
        stdout, stderr = process.communicate(timeout=whole + SANCHO_SETUP)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return Measure(path.stem, "sancho", None,
                       note=f"sancho timed out ({whole + SANCHO_SETUP} s; its propnet did not build)")
    try:
        line = json.loads(stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return Measure(path.stem, "sancho", None, note=f"sancho failed: {(stderr or stdout)[-160:]}")
    if "error" in line or not line.get("ms"):
        return Measure(path.stem, "sancho", None, note=f"sancho failed: {str(line.get('error'))[-160:]}")
    elapsed = line["ms"] / 1000.0
    return Measure(path.stem, "sancho", line["state_changes"] / elapsed, line["state_changes"],
                   line["rollouts"], elapsed,
                   note=f"Sancho {line.get('version')}, JVM CPU/wall {line.get('jvm_cpu_per_wall')}")


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


def _row(m: Measure, oracle: float | None, width: int, sancho: float | None = None) -> str:
    if m.steps_per_second is None:
        return f"  {m.game:<{width}} {m.engine:<9} {'-':>11}  {m.note}"
    ratio = f"{m.steps_per_second / oracle:6.2f}x" if oracle else "      -"
    rollouts = m.playouts_per_second or 0.0
    peer = f"{rollouts / sancho:7.2f}x" if sancho and m.engine != "sancho" else "       -"
    load = (f"  (load {m.load_seconds:.2f} s)" if m.engine not in ("oracle", "sancho")
            else f"  ({m.note})" if m.note else "")
    cpu = (f", CPU/wall {m.cpu_seconds / m.seconds:.2f}" if m.cpu_seconds is not None
           and m.seconds else "")
    return (f"  {m.game:<{width}} {m.engine:<9} {m.steps_per_second:>11,.0f}  {ratio}"
            f" {rollouts:>11,.1f} {peer}"
            f"  {m.steps:>9,} steps {m.playouts:>7,} playouts{load}{cpu}")


def _ratio(m: Measure, reference: Measure, rollouts: bool = False) -> float | None:
    ours = m.playouts_per_second if rollouts else m.steps_per_second
    theirs = reference.playouts_per_second if rollouts else reference.steps_per_second
    return ours / theirs if ours and theirs else None


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
                        help="our engines to bench (default compiled,general,playouts)")
    parser.add_argument("--sancho", metavar="DIR", default=str(SANCHO) if SANCHO.is_dir() else None,
                        help="the gdl-perf build whose time_sancho.sh times Sancho's reasoner "
                        "beside ours (default ~/.cache/ggp-peers/gdlperf when present; 'none': "
                        "skip)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per line")
    args = parser.parse_args(argv)
    sancho = None if args.sancho in (None, "none") else Path(args.sancho).expanduser()
    if args.seconds <= 0:
        raise GameError("--seconds must be positive")
    engines = [e for e in args.engines.split(",") if e]
    unknown = set(engines) - set(ENGINES)
    if unknown:
        raise GameError(f"unknown engine(s): {', '.join(sorted(unknown))} "
                        f"(one of {', '.join(ENGINES)})")
    paths = _games([]) if CORPUS.is_dir() else []
    paths += [p for p in _games(args.games) if p not in paths] if args.games else []
    if not paths:
        raise GameError("no games to bench")
    width = max(14, *(len(p.stem) for p in paths))
    if not args.json:
        print(f"mode: {MODE}; {args.seconds:g} s per engine and game, seed {args.seed}; "
              "per second of wall-clock time (pin with taskset -c 1)")
        print(f"  {'game':<{width}} {'engine':<9} {'steps/s':>11}  {'/oracle':>7}"
              f" {'rollouts/s':>11} {'/sancho':>8}")
    notes = set()
    for path in paths:
        oracle = bench_oracle(path, args.seconds, args.seed)
        peer = bench_sancho(path, args.seconds, sancho)
        rows = [bench_engine(path, e, args.seconds, args.seed) for e in engines] + [oracle, peer]
        for m in rows:
            if args.json:
                data = asdict(m)
                data["playouts_per_second"] = m.playouts_per_second
                data["ratio_to_oracle"] = _ratio(m, oracle)
                data["ratio_to_sancho"] = _ratio(m, peer, rollouts=True)
                print(json.dumps(data), flush=True)
            else:
                print(_row(m, oracle.steps_per_second, width, peer.playouts_per_second),
                      flush=True)
        for column, m in (("oracle", oracle), ("sancho", peer)):
            if m.steps_per_second is None and m.note.startswith("skipped"):
                notes.add(f"{column} column {m.note}")
    for note in sorted(notes):
        print(f"note: {note}")
    return 0
