"""``ggp bench corpus``: solve every 2-player simultaneous game of the corpus that fits.

    ggp bench corpus [--corpus DIR] [--max-states N] [--time-limit S]
                     [--solve-limit S] [--only NAME,...] [--json] [GAME.kif ...]

Steps:

1. Read ``LISTING.tsv`` of the corpus (``../shared/gdl-corpus`` by default) and keep
   the games of kind ``simultaneous``; games given on the command line are added.
   A game without exactly two players besides ``random`` is listed as not fitting
   at once (exact solvers handle two players), without loading it.
2. For each other game, in a child process of its own (so a grounding that does
   not honour the limit is stopped, and memory is returned): load it, expand it
   within ``--max-states`` and ``--time-limit`` (load + expansion), then solve it
   with the baseline and with the IH (``--solve-limit`` seconds each) and certify
   both results.
3. Print a table: game, states, expansion time, solve times, values, certificate
   (the largest deviation gain of each solution); then the games that did not fit,
   with the reason (budget reached, unsupported, engine error).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import multiprocessing
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection
from pathlib import Path

from gdl.expand import Budget, expand, players_of
from gdl.machine import load_machine
from solvers.errors import GameError, UnsupportedGame

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "gdl-corpus"
GRACE_SECONDS = 5.0     # past the limit before a child that does not stop is ended
SOLVERS = ("baseline", "ih")


def corpus_games(corpus: Path, only: set[str] | None = None
                 ) -> list[tuple[str, Path, list[str] | None]]:
    """(name, path, role names) of the corpus' simultaneous games."""
    listing = corpus / "LISTING.tsv"
    try:
        with open(listing, encoding="utf-8") as source:
            rows = list(csv.DictReader(source, delimiter="\t"))
    except OSError as exc:
        raise GameError(f"{listing}: cannot read the corpus listing: "
                        f"{exc.strerror or exc}") from None
    games = []
    for row in rows:
        if row.get("kind") != "simultaneous" or (only and row["game"] not in only):
            continue
        games.append((row["game"], corpus / "repository" / f"{row['game']}.kif",
                      row.get("role_names", "").split()))
    return games


def bench_game(path: Path, budget: Budget, solve_limit: float, conn: Connection) -> None:
    """Child process: load, expand, solve with both solvers; send rows through ``conn``."""
    from gdl.solve_cli import check_loading_time, solve_expansion

    try:
        start = time.perf_counter()
        machine = load_machine(path, name=path.stem)
        load_seconds = time.perf_counter() - start
        if budget.time_limit is not None:
            check_loading_time(budget.time_limit, load_seconds)
        expansion = expand(machine, budget=dataclasses.replace(budget, started=start))
        graph = expansion.graph
        row: dict = {"states": graph.n_states, "nonterminal": graph.n_states - graph.n_terminal,
                     "engine": machine.engine_name, "load_seconds": load_seconds,
                     "expand_seconds": graph.seconds, "constant_sum": graph.constant_sum,
                     "roles": list(expansion.player_roles)}
        conn.send(("expanded", row))
        for solver in SOLVERS:
            solution, check, seconds = solve_expansion(expansion, solver, time_limit=solve_limit)
            row[solver] = {"values": {role: round(float(v), 6) for role, v
                                      in zip(expansion.player_roles, solution.root_values,
                                             strict=True)},
                           "seconds": seconds, "max_gain": check["max_gain"],
                           "ok": check["ok"], "support": int(solution.support().size)}
        conn.send(("solved", row))
    except GameError as exc:
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    except RecursionError:
        conn.send(("error", "too deep for the solver (RecursionError)"))
    except MemoryError:
        conn.send(("error", "out of memory"))
    finally:
        conn.close()


def run_game(path: Path, budget: Budget, solve_limit: float) -> tuple[dict | None, str | None]:
    """(row, None) for a solved game, (partial row or None, reason) for one that did not fit."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=bench_game, args=(path, budget, solve_limit, sender))
    child.start()
    sender.close()
    row: dict | None = None
    try:
        expand_wait = (budget.time_limit or 3600.0) + GRACE_SECONDS
        for phase, wait in (("expansion", expand_wait),
                            ("solve", len(SOLVERS) * (solve_limit + GRACE_SECONDS))):
            if not receiver.poll(wait):
                return row, f"{phase} did not stop within {wait:.0f} s (ended)"
            kind, payload = receiver.recv()
            if kind == "error":
                return row, payload
            row = payload
            if kind == "solved":
                return row, None
        return row, "no result"
    except EOFError:
        return row, f"the child process died (exit code {child.exitcode})"
    finally:
        if child.is_alive():
            child.terminate()
        child.join()
        receiver.close()


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    only = set(args.only.split(",")) if args.only else None
    games = corpus_games(Path(args.corpus), only) if not args.no_corpus else []
    games += [(Path(g).stem, Path(g), None) for g in args.games]  # roles checked on loading
    budget = Budget(max_states=args.max_states, time_limit=args.time_limit,
                    memory_mb=args.memory_mb)
    solved: list[tuple[str, dict]] = []
    unfit: list[tuple[str, str]] = []
    start = time.perf_counter()
    for name, path, roles in games:
        try:
            if roles is not None:
                players_of(roles)
        except UnsupportedGame as exc:
            unfit.append((name, exc.message))
            continue
        row, reason = run_game(path, budget, args.solve_limit)
        if reason is None:
            solved.append((name, row))  # type: ignore[arg-type]
        else:
            unfit.append((name, reason))
        if not args.json:
            print(f"  {name}: " + ("solved" if reason is None else reason), flush=True)
    if args.json:
        print(json.dumps({"solved": dict(solved), "did_not_fit": dict(unfit),
                          "seconds": time.perf_counter() - start}))
    else:
        print(table(solved, unfit, budget))
        print(f"({len(solved)} solved, {len(unfit)} did not fit, "
              f"{time.perf_counter() - start:.0f} s)")
    return 0


def table(solved: list[tuple[str, dict]], unfit: list[tuple[str, str]], budget: Budget) -> str:
    """The results as a Markdown table, then the games that did not fit."""
    lines = ["| game | states (non-terminal) | engine | expand s | baseline s | IH s | "
             "values (baseline) | values (IH) | max gain baseline / IH |",
             "| --- | ---: | --- | ---: | ---: | ---: | --- | --- | --- |"]
    for name, row in solved:
        base, ih = row["baseline"], row["ih"]
        lines.append(
            f"| {name} | {row['states']:,} ({row['nonterminal']:,}) | {row['engine']} | "
            f"{row['expand_seconds']:.2f} | {base['seconds']:.2f} | {ih['seconds']:.2f} | "
            f"{_values(base['values'])} | {_values(ih['values'])} | "
            f"{base['max_gain']:.1g} / {ih['max_gain']:.1g} |")
    lines.append("")
    limits = (f"{budget.max_states:,} states" if budget.max_states else "no state limit")
    if budget.time_limit is not None:
        limits += f", {budget.time_limit:g} s to load and expand"
    lines.append(f"Did not fit ({limits}):")
    lines += [f"- {name}: {reason}" for name, reason in unfit] or ["- none"]
    return "\n".join(lines)


def _values(values: dict[str, float]) -> str:
    return " / ".join(f"{role} {value:g}" for role, value in values.items())


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ggp bench corpus",
        description="Solve every 2-player simultaneous game of the GDL corpus that fits "
        "the budgets with the baseline and the IH; print a table.")
    parser.add_argument("games", nargs="*", help="more GDL files to include")
    parser.add_argument("--corpus", default=str(DEFAULT_CORPUS),
                        help="the corpus folder with LISTING.tsv (default ../shared/gdl-corpus)")
    parser.add_argument("--no-corpus", action="store_true", help="only the games given")
    parser.add_argument("--only", help="comma-separated corpus game names")
    parser.add_argument("--max-states", type=int, default=100_000,
                        help="skip games with more states (default %(default)s)")
    parser.add_argument("--time-limit", type=float, default=10.0,
                        help="seconds to load and expand each game (default %(default)s)")
    parser.add_argument("--solve-limit", type=float, default=40.0,
                        help="seconds for each solver on each game (default %(default)s)")
    parser.add_argument("--memory-mb", type=float, default=4096.0,
                        help="memory budget of each expansion in MB (default %(default)s)")
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    return parser
