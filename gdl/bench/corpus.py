"""``ggp bench corpus``: solve every 2-player simultaneous game of the corpus that fits.

    ggp bench corpus [--corpus DIR] [--path dag|model] [--solvers baseline,ih,doab]
                     [--max-states N] [--time-limit S] [--solve-limit S]
                     [--game-limit S] [--memory-mb M] [--only NAME,...]
                     [--games FILE] [--two-player] [--results FILE [--resume]]
                     [--json] [GAME.kif ...]

Steps:

1. Read ``LISTING.tsv`` of the corpus (``../shared/gdl-corpus`` by default) and keep
   the games of kind ``simultaneous``; ``--only`` / ``--games`` (a file of names, one
   per line or comma-separated, ``#`` comments) name corpus games of any kind instead,
   ``--two-player`` every corpus game with two roles (123 of them, any kind);
   games given on the command line are added. A game without exactly two players
   besides ``random`` is listed as not fitting at once, without loading it.
2. For each other game, in a child process of its own (so a grounding that does
   not honour the limit is stopped, memory is returned, and ``--game-limit`` ends
   the whole game): load it, expand it within ``--max-states``, ``--memory-mb`` and
   ``--time-limit`` (load + expansion) on the scale path (``--path dag``, the
   default: :func:`gdl.expansion.batch_expand.expand_dag`) or the per-entry one (``model``),
   then solve it with each solver (``--solve-limit`` seconds each; a solver that
   does not finish is reported in its column, the others still run) and certify.
3. Print a table: game, states, bytes per state of the expanded model, expansion
   time and transitions/s, solve times, values, DOαβ's nodes evaluated against all,
   certificate (the largest deviation gain of each solution); then the games that
   did not fit, with the reason (budget reached, unsupported, engine error).

With ``--results FILE`` each game's outcome is appended to FILE as one JSON line
(``game``, ``row``: the figures, or the partial ones of a game that did not fit,
``reason``: null when solved, ``seconds``) as soon as it is known; ``--resume``
skips the games FILE holds and tables them with the rest, so a sweep of hours can
stop and go on.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import multiprocessing
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from pathlib import Path

from gdl.budget import Budget
from gdl.expansion.batch_expand import expand_dag
from gdl.expansion.expand import expand, players_of
from gdl.reasoning.machine import load_machine
from gdl.solving.solve import SOLVERS as KNOWN
from gdl.solving.solve import check_loading_time, equilibria, expanded_figures, solve_any
from solvers.errors import GameError, LimitReached, UnsupportedGame
from solvers.locations import SHARED
from solvers.results_file import drop_torn_line, read_json_lines
from solvers.simultaneous.doab import counts

DEFAULT_CORPUS = SHARED / "gdl-corpus"
GRACE_SECONDS = 5.0     # past the limit before a child that does not stop is ended
SOLVERS = ("baseline", "ih", "doab")


def corpus_games(corpus: Path, only: Sequence[str] | None = None, two_player: bool = False
                 ) -> list[tuple[str, Path, list[str] | None]]:
    """(name, path, role names) of the corpus' simultaneous games (``two_player``: its
    games with two roles, any kind), or of the ``only`` games (any kind, in that
    order; an unknown name is a GameError)."""
    listing = corpus / "LISTING.tsv"
    try:
        with open(listing, encoding="utf-8") as source:
            rows = {row["game"]: row for row in csv.DictReader(source, delimiter="\t")}
    except (OSError, KeyError) as exc:
        raise GameError(f"{listing}: cannot read the corpus listing: "
                        f"{getattr(exc, 'strerror', None) or exc}") from None
    if only:
        unknown = [name for name in only if name not in rows]
        if unknown:
            raise GameError(f"not in {listing}: {', '.join(unknown)}")
        names = list(dict.fromkeys(only))
    elif two_player:
        names = [name for name, row in rows.items() if row.get("roles") == "2"]
    else:
        names = [name for name, row in rows.items() if row.get("kind") == "simultaneous"]
    return [(name, corpus / "repository" / f"{name}.kif",
             rows[name].get("role_names", "").split()) for name in names]


def bench_game(path: Path, budget: Budget, solve_limit: float, solvers: Sequence[str],
               model: str, conn: Connection) -> None:
    """Child process: load, expand, solve with each solver; send rows through ``conn``."""
    try:
        start = time.perf_counter()
        machine = load_machine(path, name=path.stem)
        load_seconds = time.perf_counter() - start
        if budget.time_limit is not None:
            check_loading_time(budget.time_limit, load_seconds)
        budget = dataclasses.replace(budget, started=start)
        if model == "dag":
            expansion = expand_dag(machine, budget=budget)
        else:
            expansion = expand(machine, budget=budget)
        row: dict = {"engine": machine.engine_name, "load_seconds": load_seconds,
                     "path": model, **expanded_figures(expansion)}
        conn.send(("expanded", row))
        for solver in solvers:
            try:
                solution, check, seconds = solve_any(expansion, solver, time_limit=solve_limit,
                                                     memory_mb=budget.memory_mb)
            except (LimitReached, UnsupportedGame) as exc:  # the other solvers still run
                row[solver] = {"error": exc.message,
                               "stopped": isinstance(exc, LimitReached)}
            else:
                row[solver] = solver_figures(row["roles"], solution, check, seconds)
            conn.send(("solver", row))
        conn.send(("solved", row))
    except GameError as exc:
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    except RecursionError:
        conn.send(("error", "too deep for the solver (RecursionError)"))
    except MemoryError:
        conn.send(("error", "out of memory"))
    finally:
        conn.close()


def solver_figures(roles: Sequence[str], solution: object, check: dict, seconds: float) -> dict:
    """One solver's cell of a row: values, time, certificate, the matrix methods'
    counts (``equilibria``, as ``ggp solve --json``), DOαβ's node counts."""
    return {"values": {role: round(float(v), 6) for role, v
                       in zip(roles, solution.root_values, strict=True)},  # type: ignore[attr-defined]
            "seconds": seconds, "max_gain": check["max_gain"], "ok": check["ok"],
            "equilibria": equilibria(solution), **counts(solution)}


def run_game(path: Path, budget: Budget, solve_limit: float, solvers: Sequence[str] = SOLVERS,
             model: str = "dag", game_limit: float | None = None
             ) -> tuple[dict | None, str | None]:
    """(row, None) for a solved game, (partial row or None, reason) for one that did not fit."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=bench_game,
                            args=(path, budget, solve_limit, solvers, model, sender))
    child.start()
    sender.close()
    row: dict | None = None
    end = None if game_limit is None else time.monotonic() + game_limit
    try:
        phase, wait = "expansion", (budget.time_limit or 3600.0) + GRACE_SECONDS
        while True:
            if end is not None:
                wait = min(wait, max(end - time.monotonic(), 0.0))
            if not receiver.poll(wait):
                limit = "the game limit" if end is not None and time.monotonic() >= end \
                    else f"{wait:.0f} s"
                return row, f"{phase} did not stop within {limit} (ended)"
            kind, payload = receiver.recv()
            if kind == "error":
                return row, payload
            row = payload
            if kind == "solved":
                return row, None
            phase, wait = "solve", solve_limit + GRACE_SECONDS
    except EOFError:
        return row, died(child)
    finally:
        end_child(child, receiver)


def died(child) -> str:
    """What to report of a child process that closed its pipe without an answer."""
    return f"the child process died (exit code {child.exitcode})"


def end_child(child, receiver) -> None:
    """Stop a benchmark's child process (whatever state it is in) and close its pipe."""
    if child.is_alive():
        child.terminate()
    child.join()
    receiver.close()


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    solvers = [name for name in args.solvers.split(",") if name]
    unknown = [name for name in solvers if name not in KNOWN]
    if unknown or not solvers:
        raise GameError(f"--solvers: unknown {', '.join(unknown) or 'none given'}; "
                        f"use some of {', '.join(KNOWN)}")
    only = _names(args.only, args.games)
    games = corpus_games(Path(args.corpus), only, args.two_player) if not args.no_corpus else []
    games += [(Path(g).stem, Path(g), None) for g in args.extra]  # roles checked on loading
    budget = Budget(max_states=args.max_states, time_limit=args.time_limit,
                    memory_mb=args.memory_mb)
    results = Path(args.results) if args.results else None
    done = _recorded(results, args.resume)
    start = time.perf_counter()
    out = results.open("a", encoding="utf-8") if results is not None else None
    try:
        for name, path, roles in games:
            if name in done:
                continue
            began = time.perf_counter()
            row, reason = _bench_one(path, roles, budget, args, solvers)
            done[name] = {"game": name, "row": row, "reason": reason,
                          "seconds": round(time.perf_counter() - began, 1)}
            if out is not None:
                out.write(json.dumps(done[name]) + "\n")
                out.flush()
            if not args.json:
                print(f"  {name}: " + ("solved" if reason is None else reason), flush=True)
    finally:
        if out is not None:
            out.close()
    outcomes = [done[name] for name, _, _ in games]
    solved = [(o["game"], o["row"]) for o in outcomes if o["reason"] is None]
    unfit = [(o["game"], o["reason"]) for o in outcomes if o["reason"] is not None]
    partial = {o["game"]: o["row"] for o in outcomes
               if o["reason"] is not None and o["row"] is not None}
    if args.json:
        print(json.dumps({"solved": dict(solved), "did_not_fit": dict(unfit),
                          "partial": partial, "seconds": time.perf_counter() - start}))
    else:
        print(table(solved, unfit, budget, solvers))
        print(f"({len(solved)} solved, {len(unfit)} did not fit, "
              f"{time.perf_counter() - start:.0f} s)")
    return 0


def _bench_one(path: Path, roles: list[str] | None, budget: Budget, args: argparse.Namespace,
               solvers: Sequence[str]) -> tuple[dict | None, str | None]:
    """One game's (row, reason): a game without two players is refused unloaded."""
    try:
        if roles is not None:
            players_of(roles)
    except UnsupportedGame as exc:
        return None, exc.message
    return run_game(path, budget, args.solve_limit, solvers, args.path, args.game_limit)


def _recorded(results: Path | None, resume: bool) -> dict[str, dict]:
    """The games a results file holds, by name (``--resume``), or none."""
    if results is None:
        if resume:
            raise GameError("--resume needs --results FILE")
        return {}
    rows = read_json_lines(results, ("game", "row", "reason"), "a game record of this bench")
    if rows and not resume:
        raise GameError(f"{results} already has {len(rows)} games: --resume to continue "
                        "them, or another --results file")
    drop_torn_line(results)
    return {row["game"]: row for row in rows}


def _names(only: str | None, games: str | None) -> list[str] | None:
    """The game names of ``--only`` and of the ``--games`` file, or None for all."""
    names = [n for n in (only or "").split(",") if n.strip()]
    if games:
        try:
            text = Path(games).read_text(encoding="utf-8")
        except OSError as exc:
            raise GameError(f"{games}: cannot read the game list: {exc.strerror or exc}") from None
        for line in text.splitlines():
            names += [n for n in line.split("#")[0].replace(",", " ").split() if n]
    return [n.strip() for n in names] or None


def table(solved: list[tuple[str, dict]], unfit: list[tuple[str, str]], budget: Budget,
          solvers: Sequence[str] = SOLVERS) -> str:
    """The results as a Markdown table, then the games that did not fit."""
    head = (["game", "states (non-terminal)", "engine", "B/state", "expand s", "transitions/s"]
            + [f"{_label(s)} s" for s in solvers] + [f"values ({_label(s)})" for s in solvers]
            + ["max gain " + " / ".join(_label(s) for s in solvers)])
    if "doab" in solvers:
        head.insert(6 + len(solvers), "doab evaluated")
    lines = ["| " + " | ".join(head) + " |",
             "| " + " | ".join("---:" if h.endswith((" s", "B/state", "/s", "evaluated"))
                               or h.startswith("states") else "---" for h in head) + " |"]
    for name, row in solved:
        cells = [name, f"{row['states']:,} ({row['nonterminal']:,})", row["engine"],
                 f"{row['bytes_per_state']:.0f}", f"{row['expand_seconds']:.2f}",
                 f"{row['transitions'] / max(row['expand_seconds'], 1e-9):,.0f}"]
        cells += [_cell(row[s], lambda c: f"{c['seconds']:.2f}") for s in solvers]
        if "doab" in solvers:
            cells.append(_cell(row["doab"], lambda c: f"{c['nodes_evaluated']:,} of "
                               f"{c['nodes_total']:,}"))
        cells += [_cell(row[s], lambda c: _values(c["values"])) for s in solvers]
        cells.append(" / ".join(_cell(row[s], lambda c: f"{c['max_gain']:.1g}")
                                for s in solvers))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    limits = (f"{budget.max_states:,} states" if budget.max_states else "no state limit")
    if budget.time_limit is not None:
        limits += f", {budget.time_limit:g} s to load and expand"
    lines.append(f"Did not fit ({limits}):")
    lines += [f"- {name}: {reason}" for name, reason in unfit] or ["- none"]
    return "\n".join(lines)


def _label(solver: str) -> str:
    return "IH" if solver == "ih" else solver


def _cell(cell: dict, show: Callable[[dict], str]) -> str:
    """A solver's figure, or why there is none (stopped by a limit, or not for this
    game: DOαβ on a general-sum game)."""
    if "error" not in cell:
        return show(cell)
    return "stopped" if cell["stopped"] else "n/a"


def _values(values: dict[str, float]) -> str:
    return " / ".join(f"{role} {value:g}" for role, value in values.items())


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ggp bench corpus",
        description="Solve every 2-player simultaneous game of the GDL corpus that fits "
        "the budgets with the baseline, the IH and DOαβ; print a table.")
    parser.add_argument("extra", nargs="*", metavar="GAME.kif", help="more GDL files to include")
    parser.add_argument("--corpus", default=str(DEFAULT_CORPUS),
                        help="the corpus folder with LISTING.tsv (default ../shared/gdl-corpus)")
    parser.add_argument("--no-corpus", action="store_true", help="only the games given")
    parser.add_argument("--only", help="comma-separated corpus game names (any kind)")
    parser.add_argument("--games", metavar="FILE",
                        help="a file of corpus game names (one per line or comma-separated)")
    parser.add_argument("--path", choices=("dag", "model"), default="dag",
                        help="dag: the scale path (default); model: the per-entry model")
    parser.add_argument("--solvers", default=",".join(SOLVERS),
                        help="comma-separated solvers (default %(default)s)")
    parser.add_argument("--max-states", type=int, default=100_000,
                        help="skip games with more states (default %(default)s; the scale "
                        "path holds 2*10^8 in about 20 GB)")
    parser.add_argument("--time-limit", type=float, default=10.0,
                        help="seconds to load and expand each game (default %(default)s)")
    parser.add_argument("--solve-limit", type=float, default=40.0,
                        help="seconds for each solver on each game (default %(default)s)")
    parser.add_argument("--game-limit", type=float,
                        help="seconds for everything of one game (its child is ended then)")
    parser.add_argument("--memory-mb", type=float, default=4096.0,
                        help="memory budget of each expansion and solve in MB "
                        "(default %(default)s)")
    parser.add_argument("--two-player", action="store_true",
                        help="every corpus game with two roles, of any kind (instead of the "
                        "simultaneous ones)")
    parser.add_argument("--results", metavar="FILE",
                        help="append each game's outcome to FILE as a JSON line when it ends")
    parser.add_argument("--resume", action="store_true",
                        help="skip the games FILE (--results) holds and table them with the rest")
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    return parser
