"""Corpus sweep: does every corpus game parse, validate and agree with the oracle?

A one-off tool (``python -m gdl.bench.corpus_check [--games DIR] [--playouts 3]``), not
part of the test suite: for each ``.kif`` it

1. parses and validates the game with our engine;
2. asks the SWI-Prolog oracle (``../shared/oracle``) for random-playout traces,
   plain first, then with tabling for left-recursive rules;
3. replays the traces with the general engine (:func:`gdl.reasoning.trace.replay`);

each step under a per-game time limit, and prints one line per game and a summary.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gdl.reasoning.general_machine import GeneralMachine
from gdl.reasoning.machine import read_rules
from gdl.reasoning.trace import replay
from gdl.reasoning.validate import validate
from solvers.errors import GameError
from solvers.locations import SHARED

ORACLE = SHARED / "oracle"


def oracle_trace(game: Path, playouts: int, seed: int, out: Path, *, table: bool = False,
                 timeout: float = 120, oracle: Path = ORACLE) -> tuple[list[dict] | None, str]:
    """(records, "") of oracle random playouts as ``trace.sh`` writes them, or (None,
    reason) when the oracle fails; ``table`` adds SWI tabling (left recursion)."""
    if shutil.which("swipl") is None:
        return None, "SWI-Prolog (swipl) is not installed"
    program = out.with_suffix(".pl")
    translate = [sys.executable, str(oracle / "kif2lp.py"), "pl", str(game)]
    try:
        text = subprocess.run(translate + (["--table"] if table else []), check=True,
                              capture_output=True, text=True, timeout=60).stdout
        program.write_text(text)
        flags = "set_prolog_flag(gdl_tabling, true), " if table else ""
        goal = f"{flags}set_random(seed({seed})), trace_playouts({playouts}, '{out}')"
        run = subprocess.run(["swipl", "-q", "-g", goal, "-t", "halt",
                              str(oracle / "gdl_oracle.pl"), str(program)],
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"oracle timed out after {timeout:.0f}s"
    except subprocess.CalledProcessError as exc:
        return None, f"oracle translation failed: {exc.stderr[-200:]}"
    if run.returncode != 0 or not out.exists():
        error = [line for line in run.stderr.splitlines() if "ERROR" in line][:1]
        return None, "oracle failed: " + (error[0] if error else f"exit {run.returncode}")
    return [json.loads(line) for line in out.read_text().splitlines() if line.strip()], ""


def check_game(game: Path, playouts: int, seed: int, timeout: float) -> dict:
    """One game's sweep result: {"game", "parses", "validates", "oracle", "agrees", "reason"}."""
    result = {"game": game.stem, "parses": False, "validates": False, "oracle": False,
              "agrees": False, "reason": ""}
    try:
        rules, _ = read_rules(game)
        result["parses"] = True
        validate(rules, str(game))
        result["validates"] = True
    except GameError as exc:
        result["reason"] = str(exc)[:300]
        return result
    with tempfile.TemporaryDirectory() as folder:
        records, reason = oracle_trace(game, playouts, seed, Path(folder) / "trace.jsonl",
                                       timeout=timeout)
        if records is None:
            records, reason = oracle_trace(game, playouts, seed, Path(folder) / "tabled.jsonl",
                                           table=True, timeout=timeout)
    if records is None:
        result["reason"] = reason
        return result
    result["oracle"] = True
    try:
        checked, problems = replay(GeneralMachine(rules, name=game.stem), records)
    except GameError as exc:
        result["reason"] = f"our engine: {exc}"[:300]
        return result
    result["agrees"] = not problems
    result["reason"] = "; ".join(problems[:2])[:300] if problems else f"{checked} steps agree"
    return result


def _worker(args: tuple[Path, int, int, float], queue: multiprocessing.Queue) -> None:
    queue.put(check_game(*args))


def check_with_limit(game: Path, playouts: int, seed: int, timeout: float) -> dict:
    """:func:`check_game` in a child process killed after 3 x ``timeout`` seconds."""
    queue: multiprocessing.Queue = multiprocessing.Queue()
    process = multiprocessing.Process(target=_worker, args=((game, playouts, seed, timeout), queue))
    process.start()
    process.join(3 * timeout)
    if process.is_alive():
        process.kill()
        process.join()
        return {"game": game.stem, "parses": None, "validates": None, "oracle": None,
                "agrees": False, "reason": f"time limit ({3 * timeout:.0f}s) reached"}
    return queue.get() if not queue.empty() else {
        "game": game.stem, "agrees": False, "reason": f"crashed (exit {process.exitcode})"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gdl.bench.corpus_check", description=__doc__)
    parser.add_argument("--games", type=Path, default=SHARED / "gdl-corpus" / "repository")
    parser.add_argument("--playouts", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per oracle run")
    parser.add_argument("--json", type=Path, help="write all results here as JSON lines")
    args = parser.parse_args(argv)
    games = sorted(args.games.glob("*.kif"))
    results = []
    start = time.time()
    for number, game in enumerate(games, start=1):
        result = check_with_limit(game, args.playouts, args.seed, args.timeout)
        results.append(result)
        verdict = "ok" if result["agrees"] else "FAIL"
        print(f"[{number}/{len(games)} {time.time() - start:.0f}s] {game.stem}: {verdict} "
              f"{result['reason']}", flush=True)
        if args.json:
            with args.json.open("a") as handle:
                handle.write(json.dumps(result) + "\n")
    count = {key: sum(bool(r.get(key)) for r in results)
             for key in ("parses", "validates", "oracle", "agrees")}
    print(f"{len(games)} games: {count['parses']} parse, {count['validates']} validate, "
          f"oracle ran {count['oracle']}, {count['agrees']} agree with the oracle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
