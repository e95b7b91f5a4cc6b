"""``ggp bench corpus``: solve the games of the GDL corpus that fit; say why the others do not.

    ggp bench corpus [--corpus DIR] [--path dag|model] [--solvers baseline,ih,doab]
                     [--max-states N] [--time-limit S] [--solve-limit S]
                     [--game-limit S] [--memory-mb M] [--only NAME,...]
                     [--games FILE] [--two-player | --all] [--results FILE [--resume]]
                     [--json] [GAME.kif ...]

Steps:

1. Read ``LISTING.tsv`` of the corpus (``../shared/gdl-corpus`` by default) and keep
   the games of kind ``simultaneous``; ``--only`` / ``--games`` (a file of names, one
   per line or comma-separated, ``#`` comments) name corpus games of any kind instead,
   ``--two-player`` every corpus game with two roles (123 of them, any kind), ``--all``
   every game of the corpus (206: puzzles, two players, three to six players);
   games given on the command line are added.
2. A game of one player (a puzzle) or of three or more is solved as ``ggp solve``
   solves it (:func:`gdl.solving.puzzle_solve.solve_puzzle`: the exact plan, else the
   goal search; :func:`gdl.solving.nplayer_solve.solve_nplayer_game`: a subgame-perfect
   equilibrium), in a child process, with ``--time-limit`` plus ``--solve-limit``
   seconds for the whole of it; it counts as solved when its certificate holds (a
   puzzle: its value proved). A two-player game goes through step 3.
3. For each two-player game, in a child process of its own (so a grounding that does
   not honour the limit is stopped, memory is returned, and ``--game-limit`` ends
   the whole game): load it, expand it within ``--max-states``, ``--memory-mb`` and
   ``--time-limit`` (load + expansion) on the scale path (``--path dag``, the
   default: :func:`gdl.expansion.batch_expand.expand_dag`) or the per-entry one (``model``),
   then solve it with each solver (``--solve-limit`` seconds each; a solver that
   does not finish is reported in its column, the others still run) and certify.
4. Print a table: game, states, bytes per state of the expanded model, expansion
   time and transitions/s, solve times, values, DOαβ's nodes evaluated against all,
   certificate (the largest deviation gain of each solution); then the games that
   did not fit, with the reason (budget reached, unsupported, engine error). With games
   of other player counts among the solved (``--all``), one table of every kind
   instead: game, players, states, the solver, its seconds, values, certificate, and a
   puzzle's plan; then the counts solved by kind.

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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path

from gdl.budget import Budget
from gdl.expansion.batch_expand import expand_dag
from gdl.expansion.expand import expand, roles_of
from gdl.reasoning.machine import read_rules
from gdl.solving.nplayer_solve import solve_nplayer_game
from gdl.solving.puzzle_solve import solve_puzzle
from gdl.solving.solve import SOLVERS as KNOWN
from gdl.solving.solve import (
    equilibria,
    expanded_figures,
    load_for_solve,
    player_count,
    solve_any,
)
from solvers.errors import GameError, LimitReached, UnsupportedGame
from solvers.locations import SHARED
from solvers.results_file import drop_torn_line, read_json_lines
from solvers.simultaneous.doab import counts

DEFAULT_CORPUS = SHARED / "gdl-corpus"
GRACE_SECONDS = 5.0     # past the limit before a child that does not stop is ended
SOLVERS = ("baseline", "ih", "doab")


def corpus_games(corpus: Path, only: Sequence[str] | None = None, two_player: bool = False,
                 every: bool = False) -> list[tuple[str, Path, list[str] | None]]:
    """(name, path, role names) of the corpus' simultaneous games (``two_player``: its
    games with two roles, any kind; ``every``: all its games), or of the ``only`` games
    (any kind, in that order; an unknown name is a GameError)."""
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
    elif every:
        names = list(rows)
    elif two_player:
        names = [name for name, row in rows.items() if row.get("roles") == "2"]
    else:
        names = [name for name, row in rows.items() if row.get("kind") == "simultaneous"]
    return [(name, corpus / "repository" / f"{name}.kif",
             rows[name].get("role_names", "").split()) for name in names]


@contextmanager
def child_reports(conn: Connection) -> Iterator[None]:
    """A child's work: its errors sent through ``conn`` as one line, which is then closed."""
    try:
        yield
    except GameError as exc:
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    except RecursionError:
        conn.send(("error", "too deep for the solver (RecursionError)"))
    except MemoryError:
        conn.send(("error", "out of memory"))
    finally:
        conn.close()


def bench_game(path: Path, budget: Budget, solve_limit: float, solvers: Sequence[str],
               model: str, conn: Connection) -> None:
    """Child process: load, expand, solve with each solver; send rows through ``conn``."""
    with child_reports(conn):
        loaded = load_for_solve(path, budget=budget)
        machine, budget, load_seconds = loaded.machine, loaded.budget, loaded.seconds
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


def bench_other(path: Path, budget: Budget, conn: Connection) -> None:
    """Child process: a puzzle or a game of three or more players, solved as ``ggp
    solve`` solves it; its JSON object (with ``kind``) through ``conn``."""
    with child_reports(conn):
        rules, _ = read_rules(path)
        if player_count(rules) == 1:
            found = solve_puzzle(path, budget=budget)
            row, kind = found.to_json(), "puzzle"
            reason = None if found.proved else (
                f"{found.solver}: best goal {found.value:g} of {found.ceiling:g}, not proved "
                f"({found.certificate.get('search') or 'certificate failed'})")
        else:
            result = solve_nplayer_game(path, budget=budget)
            row, kind = result.to_json(), "nplayer"
            check = result.certificate
            reason = None if check["ok"] else (
                f"certificate failed: max gain {check['max_gain']:.3g}")
        row["kind"] = kind
        conn.send(("solved", row) if reason is None else ("unproved", (row, reason)))


def solver_figures(roles: Sequence[str], solution: object, check: dict, seconds: float) -> dict:
    """One solver's cell of a row: values, time, certificate, the matrix methods'
    counts (``equilibria``, as ``ggp solve --json``), DOαβ's node counts."""
    return {"values": {role: round(float(v), 6) for role, v
                       in zip(roles, solution.root_values, strict=True)},  # type: ignore[attr-defined]
            "seconds": seconds, "max_gain": check["max_gain"], "ok": check["ok"],
            "equilibria": equilibria(solution), **counts(solution)}


def run_game(path: Path, budget: Budget, solve_limit: float, solvers: Sequence[str] = SOLVERS,
             model: str = "dag", game_limit: float | None = None, players: int = 2
             ) -> tuple[dict | None, str | None]:
    """(row, None) for a solved game, (partial row or None, reason) for one that did not
    fit; ``players`` other than 2: :func:`bench_other`, with the two limits for all."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    if players == 2:
        child = context.Process(target=bench_game,
                                args=(path, budget, solve_limit, solvers, model, sender))
    else:
        whole = None if budget.time_limit is None else budget.time_limit + solve_limit
        budget = dataclasses.replace(budget, time_limit=whole)
        child = context.Process(target=bench_other, args=(path, budget, sender))
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
            if kind == "unproved":
                return payload
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
    games = (corpus_games(Path(args.corpus), only, args.two_player, args.all)
             if not args.no_corpus else [])
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
    elif any(row.get("kind") for _, row in solved) or args.all:
        print(every_kind_table(solved, unfit, budget, solvers[0]))
        print(kind_counts(outcomes, {name: roles for name, _, roles in games}))
        print(f"({time.perf_counter() - start:.0f} s)")
    else:
        print(table(solved, unfit, budget, solvers))
        print(f"({len(solved)} solved, {len(unfit)} did not fit, "
              f"{time.perf_counter() - start:.0f} s)")
    return 0


def _bench_one(path: Path, roles: list[str] | None, budget: Budget, args: argparse.Namespace,
               solvers: Sequence[str]) -> tuple[dict | None, str | None]:
    """One game's (row, reason); the number of players from the listing, else from the
    file's role facts."""
    try:
        players = (len(roles_of(roles)[0]) if roles is not None
                   else player_count(read_rules(path)[0]))
    except GameError as exc:
        return None, exc.message
    return run_game(path, budget, args.solve_limit, solvers, args.path, args.game_limit,
                    players)


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


def every_kind_table(solved: list[tuple[str, dict]], unfit: list[tuple[str, str]],
                     budget: Budget, solver: str) -> str:
    """Every kind of game in one Markdown table (a two-player row shows ``solver``'s
    figures), then the games not solved with the reason."""
    head = ["game", "players", "states", "solver", "solve s", "values", "certificate", "plan"]
    lines = ["| " + " | ".join(head) + " |",
             "| --- | ---: | ---: | --- | ---: | --- | --- | ---: |"]
    for name, row in solved:
        if row.get("kind") is None:       # a two-player row: one solver's cell
            cell = row[solver]
            cells = [str(len(row["roles"])), f"{row['states']:,}", solver,
                     _cell(cell, lambda c: f"{c['seconds']:.2f}"),
                     _cell(cell, lambda c: _values(c["values"])),
                     _cell(cell, lambda c: f"max gain {c['max_gain']:.1g}"), ""]
        else:
            cells = [str(len(row["values"]) if row["kind"] == "nplayer" else 1),
                     f"{row['states']:,}", row["solver"], f"{row['seconds']:.2f}",
                     _values(row["values"]), _certificate(row), _plan(row)]
        lines.append("| " + " | ".join([name, *cells]) + " |")
    lines.append("")
    limits = (f"{budget.max_states:,} states" if budget.max_states else "no state limit")
    lines.append(f"Not solved ({limits}):")
    lines += [f"- {name}: {reason}" for name, reason in unfit] or ["- none"]
    return "\n".join(lines)


def _certificate(row: dict) -> str:
    check = row["certificate"]
    if row["kind"] == "puzzle":
        return ("proved" if row["proved"] else "not proved") + (
            f", plan replayed: goal {check['plan_goal']:g}" if "plan_goal" in check else "")
    return f"max gain {check['max_gain']:.1g}"


def _plan(row: dict) -> str:
    if row.get("kind") != "puzzle":
        return ""
    steps = f"{row['plan_length']:g} steps"
    return steps + (" (expected)" if row.get("chance") else "")


def kind_counts(outcomes: list[dict], roles: dict[str, list[str] | None]) -> str:
    """``solved X of Y`` for puzzles, two-player games and games of three or more
    players (a game's count from the listing, else from its row)."""
    totals: dict[str, list[int]] = {"puzzles": [0, 0], "two players": [0, 0],
                                    "three or more players": [0, 0]}
    for outcome in outcomes:
        named = roles.get(outcome["game"])
        count = len(roles_of(named)[0]) if named else _players_of_row(outcome["row"])
        kind = ("puzzles" if count == 1 else "two players" if count == 2
                else "three or more players")
        totals[kind][1] += 1
        totals[kind][0] += outcome["reason"] is None
    return "Solved: " + ", ".join(f"{kind} {done} of {total}"
                                  for kind, (done, total) in totals.items() if total)


def _players_of_row(row: dict | None) -> int:
    if row is None:
        return 2
    if row.get("kind") is not None:
        return len(row["values"])
    return len(row.get("roles", ())) or 2


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
        description="Solve the GDL corpus' games that fit the budgets (by default its "
        "two-player simultaneous ones, with the baseline, the IH and DOαβ; --all every game: "
        "puzzles and games of three or more players too); print a table.")
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
    kinds = parser.add_mutually_exclusive_group()
    kinds.add_argument("--two-player", action="store_true",
                       help="every corpus game with two roles, of any kind (instead of the "
                       "simultaneous ones)")
    kinds.add_argument("--all", action="store_true",
                       help="every corpus game: puzzles and games of three or more players "
                       "too (each solved as ggp solve solves it, in --time-limit plus "
                       "--solve-limit seconds), in one table")
    parser.add_argument("--results", metavar="FILE",
                        help="append each game's outcome to FILE as a JSON line when it ends")
    parser.add_argument("--resume", action="store_true",
                        help="skip the games FILE (--results) holds and table them with the rest")
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    return parser
