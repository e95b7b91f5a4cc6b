"""``ggp bench agent --opponent URL`` (also ``ggp bench versus``): our agent against any
GGP HTTP player, N matches a game with the seats alternating, through our server.

Each game gets a fresh pair of players:

- the opponent: with ``--opponent-command`` (for example Sancho's
  ``java -Xss512m -cp CLASSPATH SanchoPlayer {port}``) it is started in a new empty
  working folder (Sancho keeps what it learns about a game there) and pinned to the
  second core of ``--cores``; without one, ``--opponent`` must already answer. Either
  way it must answer ``(info)`` before the game's matches begin;
- our agent: ``ggp agent --http PORT`` (``--agent-args`` added), pinned to the first
  core, its log kept beside the results file (its ``move`` lines give the playouts
  each move searched).

Every match is ``ggp match GAME --players ... --json`` run as a child pinned to our
core (the server only relays), and appended at once to the results file as one JSON
line: ``game``, ``match``, ``seat`` (our role's index), ``goals``, ``share`` (our
goal over the sum of the goals; 50 when both are 0), ``steps``, our and their fault
counts by code (``TO``, ``IL``, ``CE``), ``opponent_failed`` (the opponent faulted on
over half of its steps: such a match measures nothing and is reported apart), our
playouts per second over the match's moves, ``our_fallbacks`` (the moves our agent's
search did not answer in time, so that its gamer sent a fallback move: in time, so not
a fault, but not searched), and what was run: ``startclock``,
``playclock`` and ``agent_args`` (the ``--agent-args`` words, shell-quoted).
``--resume`` skips the matches the file has, and refuses a file whose lines were run
with other clocks or agent arguments (lines written before these fields existed are
taken as they are). The summary (also ``--summary`` alone) gives per game and overall
the share of the points with a 95% Student t interval, the faults, our playouts
per second and our fallback moves.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import os
import re
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server.tournament import ci95_half
from solvers.errors import GameError
from solvers.locations import CORPUS
from solvers.results_file import add_results_arguments, drop_torn_line, read_json_lines

DEFAULT_GAMES = ("connectFour", "breakthrough", "knightThrough", "laikLee_hex",
                 "connectFourSimultaneous", "quad", "reversi", "nineBoardTicTacToe")
READY_SECONDS = 120.0    # for a started opponent to answer (info)
MATCH_SLACK = 120.0      # a match child is killed this long after its clocks allow
FAULTS = ("TO", "IL", "CE")
KEYS = ("game", "match", "seat", "share", "our_faults", "their_faults",
        "opponent_failed", "playouts_per_second")
_MOVE_LINE = re.compile(r" agent INFO move .*? (\{.*\})$")


@dataclass(frozen=True)
class Plan:
    """What one run plays."""

    opponent: str
    command: list[str] | None
    games: list[Path]
    matches: int
    startclock: float
    playclock: float
    seed: int
    cores: tuple[int, ...]
    agent_args: list[str]


def _pin(core: int | None):
    """A ``preexec_fn`` that pins the child to ``core`` (None: anywhere)."""
    if core is None or not hasattr(os, "sched_setaffinity"):
        return None
    return lambda: os.sched_setaffinity(0, {core})


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def answers(url: str, timeout: float = 5.0) -> bool:
    """Whether a GGP HTTP player at ``url`` answers ``(info)`` (or ``ping``)."""
    request = urllib.request.Request(url, data=b"(info)", method="POST",
                                     headers={"Content-Type": "text/acl"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:  # noqa: S310 (loopback)
            return reply.status == 200
    except OSError:
        return False


def _wait_answers(url: str, process: subprocess.Popen | None, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise GameError(f"the player for {url} exited with status {process.returncode}")
        if answers(url, timeout=2.0):
            return
        time.sleep(0.5)
    raise GameError(f"{url} did not answer (info) within {seconds:g} s")


@contextlib.contextmanager
def _players(plan: Plan, log: Path) -> Iterator[str]:
    """A fresh opponent (when it has a command) and a fresh agent; our agent's URL."""
    children: list[subprocess.Popen] = []
    ours, theirs = (plan.cores + (None, None))[:2] if plan.cores else (None, None)
    try:
        with tempfile.TemporaryDirectory(prefix="versus-opponent-") as folder:
            if plan.command is not None:
                port = plan.opponent.rsplit(":", 1)[1].rstrip("/")
                argv = [part.replace("{port}", port) for part in plan.command]
                out = open(Path(folder) / "opponent.log", "w")  # noqa: SIM115 (closed with the folder)
                children.append(subprocess.Popen(argv, cwd=folder, stdout=out,
                                                 stderr=subprocess.STDOUT,
                                                 preexec_fn=_pin(theirs)))
            _wait_answers(plan.opponent, children[0] if children else None, READY_SECONDS)
            port = _free_port()
            with open(log, "a") as agent_log:
                children.append(subprocess.Popen(
                    [sys.executable, "-m", "ggp_cli", "agent", "--http", str(port),
                     "--name", "ours", "--seed", str(plan.seed), *plan.agent_args],
                    stdout=agent_log, stderr=subprocess.STDOUT, preexec_fn=_pin(ours)))
            url = f"http://127.0.0.1:{port}"
            _wait_answers(url, children[-1], READY_SECONDS)
            yield url
    finally:
        for child in reversed(children):
            child.terminate()
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()


def play_one(plan: Plan, game: Path, ours: str, seat: int, index: int, db: Path,
             log: Path) -> dict[str, Any]:
    """One match (our agent in role ``seat``) and its results line."""
    players = [plan.opponent, plan.opponent]
    players[seat] = ours
    seed = plan.seed * 1_000_003 + index
    mark = log.stat().st_size if log.exists() else 0
    ours_core = plan.cores[0] if plan.cores else None
    command = [sys.executable, "-m", "ggp_cli", "match", str(game), "--players", *players,
               "--startclock", f"{plan.startclock:g}", "--playclock", f"{plan.playclock:g}",
               "--seed", str(seed), "--db", str(db), "--json", "--quiet"]
    limit = plan.startclock + 400 * (plan.playclock + 5) + MATCH_SLACK
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=limit,
                              preexec_fn=_pin(ours_core))
    except subprocess.TimeoutExpired:
        raise GameError(f"{game.stem} match {index}: no result after {limit:.0f} s") from None
    if done.returncode != 0 or not done.stdout.strip():
        raise GameError(f"{game.stem} match {index}: ggp match failed: "
                        f"{done.stderr.strip().splitlines()[-1:]}")
    result = json.loads(done.stdout)
    rate, fallbacks = _our_moves(log, mark)
    line = match_line(result, game.stem, index, seat, rate, fallbacks)
    return {**line, **_settings(plan)}


def _settings(plan: Plan) -> dict[str, Any]:
    """What a results line records of the run that played it."""
    return {"startclock": plan.startclock, "playclock": plan.playclock,
            "agent_args": shlex.join(plan.agent_args)}


def _check_settings(plan: Plan, lines: Sequence[dict[str, Any]], results: Path) -> None:
    """GameError when a line of ``results`` was run with other settings than ``plan``."""
    wanted = _settings(plan)
    for line in lines:
        for key, value in wanted.items():
            if key in line and line[key] != value:
                raise GameError(f"{results}: match {line['match']} of {line['game']} was run "
                                f"with {key} {line[key]!r}, this run has {value!r}: use "
                                "another --results")


def match_line(result: dict[str, Any], game: str, index: int, seat: int,
               rate: float | None, fallbacks: int | None = None) -> dict[str, Any]:
    """The results line of one ``ggp match --json`` result (see the module docstring)."""
    goals = result.get("payoffs") or [0.0, 0.0]
    other = 1 - seat
    total = goals[seat] + goals[other]
    errors = result.get("errors") or []
    ours = {code: sum(1 for step in errors if step[seat] == code) for code in FAULTS}
    theirs = {code: sum(1 for step in errors if step[other] == code) for code in FAULTS}
    steps = len(errors)
    return {"game": game, "match": index, "seat": seat, "status": result.get("status"),
            "goals": goals, "share": 50.0 if total == 0 else 100.0 * goals[seat] / total,
            "steps": steps, "our_faults": ours, "their_faults": theirs,
            "opponent_failed": steps > 0 and sum(theirs.values()) > steps / 2,
            "playouts_per_second": rate, "our_fallbacks": fallbacks}


def _our_moves(log: Path, mark: int) -> tuple[float | None, int | None]:
    """Our agent's playouts per second of thinking over the moves logged after ``mark``,
    and its fallback moves there (None, None: no log)."""
    playouts, seconds, fallbacks = 0, 0.0, 0
    try:
        with open(log, errors="replace") as file:
            file.seek(mark)
            for line in file:
                found = _MOVE_LINE.search(line.rstrip("\n"))
                if found is None:
                    continue
                with contextlib.suppress(ValueError, SyntaxError):
                    info = ast.literal_eval(found.group(1))
                    if isinstance(info, dict) and info.get("method") == "fallback":
                        fallbacks += 1
                    if isinstance(info, dict) and info.get("playouts") and info.get("time"):
                        playouts += int(info["playouts"])
                        seconds += float(info["time"])
    except OSError:
        return None, None
    return playouts / seconds if seconds > 0 else None, fallbacks


def run(plan: Plan, results: Path, resume: bool) -> None:
    """Play the plan, appending each match to ``results`` (skipping those it has)."""
    done = set()
    if resume and results.exists():
        drop_torn_line(results)
        lines = read_json_lines(results, KEYS, "a versus results line")
        _check_settings(plan, lines, results)
        done = {(r["game"], r["match"]) for r in lines}
    elif results.exists() and results.stat().st_size:
        raise GameError(f"{results} has results: --resume to go on, or another --results")
    log = results.with_suffix(".agent.log")
    db = results.with_suffix(".sqlite")
    total = len(plan.games) * plan.matches
    count = len(done)
    for game in plan.games:
        todo = [i for i in range(plan.matches) if (game.stem, i) not in done]
        if not todo:
            continue
        with _players(plan, log) as ours:
            for index in todo:
                line = play_one(plan, game, ours, index % 2, index, db, log)
                with open(results, "a") as out:
                    out.write(json.dumps(line) + "\n")
                count += 1
                print(f"[{count}/{total}] {game.stem} match {index} (seat {index % 2}): "
                      f"share {line['share']:.0f}, steps {line['steps']}, our faults "
                      f"{_faults(line['our_faults'])}, theirs {_faults(line['their_faults'])}, "
                      f"our fallback moves {line['our_fallbacks']}",
                      flush=True)


def _faults(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {code}" for code, n in counts.items() if n) or "none"


SHARE_RANGE = (0.0, 100.0)  # a match's share of the points


def _share(shares: Sequence[float]) -> str:
    """The mean share and its 95% interval, or why there is none."""
    if not shares:
        return "    -"
    half = ci95_half(shares, SHARE_RANGE)
    return f"{statistics.mean(shares):5.1f}" + (
        f" ± {half:4.1f}" if half is not None else " (n<2)" if len(shares) < 2
        else " (wide)")


def summary(lines: Sequence[dict[str, Any]]) -> str:
    """Per game and overall: share with its 95% interval, faults, playouts per second,
    our fallback moves (-: lines written before they were counted)."""
    rows = ["game                         matches  share (95% CI)   our TO/IL/CE  "
            "their TO/IL/CE  opponent failed  playouts/s  our fallbacks"]
    counted: list[dict[str, Any]] = []
    games = list(dict.fromkeys(line["game"] for line in lines))
    game_means = []
    for game in games + ["overall"]:
        mine = [x for x in lines if x["game"] == game] if game != "overall" else counted
        valid = [x for x in mine if not x["opponent_failed"]]
        if game != "overall":
            counted += valid
            if valid:
                game_means.append(statistics.mean(x["share"] for x in valid))
        shares = [x["share"] for x in valid]
        rates = [x["playouts_per_second"] for x in valid if x["playouts_per_second"]]
        faults = ["/".join(str(sum(x[side][c] for x in mine)) for c in FAULTS)
                  for side in ("our_faults", "their_faults")]
        share = _share(shares)
        rate = f"{statistics.mean(rates):>10,.0f}" if rates else f"{'-':>10}"
        counts = [x["our_fallbacks"] for x in mine if x.get("our_fallbacks") is not None]
        fallbacks = str(sum(counts)) if counts else "-"
        rows.append(f"{game:<28} {len(valid):>7}  {share:<15}  {faults[0]:>12}  "
                    f"{faults[1]:>14}  {len(mine) - len(valid):>15}  {rate}  {fallbacks:>13}")
    if len(game_means) > 1:
        half = ci95_half(game_means, SHARE_RANGE)
        rows.append(f"mean over the {len(game_means)} games: {statistics.mean(game_means):.1f}"
                    + (f" ± {half:.1f} (95% t over the games' means)" if half is not None
                       else " (its 95% interval covers 0 to 100)"))
    return "\n".join(rows)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ggp bench agent --opponent URL",
        description="Our agent against a GGP HTTP player: N matches a game with the seats "
        "alternating, through our server, each player pinned to its own core; the share of "
        "the points with 95% intervals per game and overall.")
    parser.add_argument("--opponent", required=True, metavar="URL",
                        help="the opponent's GGP HTTP address, e.g. http://127.0.0.1:9147")
    parser.add_argument("--opponent-command", metavar="CMD",
                        help="start the opponent for each game with this command ({port} "
                        "is the URL's port), in a new empty folder, pinned to its core")
    parser.add_argument("--games", default=",".join(DEFAULT_GAMES), metavar="LIST",
                        help="comma-separated corpus names or .kif paths (default: "
                        f"{','.join(DEFAULT_GAMES)})")
    parser.add_argument("--corpus", default=str(CORPUS), metavar="DIR",
                        help="folder of the corpus games (default: ../shared's corpus)")
    parser.add_argument("--matches", type=int, default=6, help="matches a game (default 6)")
    parser.add_argument("--startclock", type=float, default=30.0,
                        help="start clock in seconds (default 30)")
    parser.add_argument("--playclock", type=float, default=5.0,
                        help="play clock in seconds (default 5)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the matches (default 0)")
    parser.add_argument("--cores", default="0,1", metavar="OURS,THEIRS",
                        help="cores for our agent (and the server) and for the opponent "
                        "(default 0,1; 'none': no pinning)")
    parser.add_argument("--agent-args", default="", metavar="ARGS",
                        help="extra options of our agent, e.g. '--enhancements default,no-mast'")
    add_results_arguments(parser, "versus.jsonl")
    return parser


def _games(text: str, corpus: Path) -> list[Path]:
    paths = []
    for name in filter(None, (part.strip() for part in text.split(","))):
        path = Path(name) if name.endswith(".kif") else corpus / f"{name}.kif"
        if not path.is_file():
            raise GameError(f"no game file {path}")
        paths.append(path)
    return paths


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    results = Path(args.results)
    if args.summary:
        if not results.exists():
            raise GameError(f"{results}: no results file")
        print(summary(read_json_lines(results, KEYS, "a versus results line")))
        return 0
    if not re.fullmatch(r"http://127\.0\.0\.1:\d+/?", args.opponent) and args.opponent_command:
        raise GameError("--opponent-command starts a local player: --opponent must be "
                        "http://127.0.0.1:PORT")
    if args.matches < 1:
        raise GameError("--matches must be at least 1")
    cores = () if args.cores == "none" else tuple(int(c) for c in args.cores.split(","))
    plan = Plan(args.opponent, shlex.split(args.opponent_command) if args.opponent_command
                else None, _games(args.games, Path(args.corpus)), args.matches,
                args.startclock, args.playclock, args.seed, cores, shlex.split(args.agent_args))
    run(plan, results, args.resume)
    print(summary(read_json_lines(results, KEYS, "a versus results line")))
    return 0
