"""Command-line front ends: ``ggp serve``, ``ggp match``, ``ggp tournament``, ``ggp matches``.

Each takes its argv and returns an exit status; bad input raises
:class:`solvers.errors.GameError`, which the ``ggp`` dispatcher prints as one line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from gdl.formats import load_game
from server.app import MatchServer
from server.commandline import (
    DEFAULT_DB,
    PORT,
    SEED,
    bounded_int,
    check_specs,
    columns,
    game_after_players,
    positive_seconds,
)
from server.credentials import (
    ENV_ADMIN_TOKEN,
    admin_token,
    new_token,
    read_agents_file,
    write_private,
)
from server.export import export_match, export_tournament
from server.live import (
    Listeners,
    StepPrinter,
    follow,
    outcome_text,
    record_text,
    result_line,
)
from server.match import MatchOptions, MatchOutcome
from server.payoff_range import format_ranges
from server.players.http import LOOPBACK, HttpAllowList, http_allowed
from server.players.spec import ws_names
from server.plots import standings_plot
from server.protocol import MAX_SEED
from server.ray_tournament import ray_tournament
from server.records import Records
from server.tournament import (
    ProgressBar,
    TournamentResult,
    format_standings,
    recorded_table,
    run_tournament,
    schedule,
)
from solvers.errors import GameError
from solvers.files import prepare_output
from solvers.playable import PlayableGame


def _clock_args(parser: argparse.ArgumentParser) -> None:
    _seat_args(parser)
    parser.add_argument("--games", nargs="+", default=None, metavar="DIR",
                        help="only load game files from these folders")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def _workers_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workers", type=bounded_int(0, 256), default=0, metavar="N",
                        help="compute the games of the matches in N worker processes, so "
                        "the event loop only relays messages (default 0: on the event loop)")


def _seat_args(parser: argparse.ArgumentParser) -> None:
    """Clocks, seed, database and game workers: the options ``match`` and
    ``tournament`` share."""
    _workers_arg(parser)
    parser.add_argument("--startclock", type=positive_seconds, default=10.0,
                        help="seconds to get ready (default 10)")
    parser.add_argument("--playclock", type=positive_seconds, default=5.0,
                        help="seconds per move (default 5)")
    parser.add_argument("--seed", type=SEED, default=None,
                        help=f"seed of the schedule, chance and faults (0 to {MAX_SEED}; "
                        "default: random)")
    parser.add_argument("--db", default=DEFAULT_DB, help=f"match database (default {DEFAULT_DB})")


def _load_games(paths: Sequence[str], dirs: Sequence[str] | None) -> list[PlayableGame]:
    allowed = [Path(d) for d in dirs] if dirs else None
    return [load_game(p, allowed_dirs=allowed) for p in paths]


def _setup_logging(events: bool = False) -> None:
    """Warnings and errors on stderr; ``events`` (``ggp serve``): also one timed line per
    connection, login, match start and match end."""
    if events:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: "
                            "%(message)s", stream=sys.stderr)
        # its "connection open" lines name no peer; ours name the peer and the agent
        logging.getLogger("websockets").setLevel(logging.WARNING)
    else:
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: "
                            "%(message)s", stream=sys.stderr)


# --- ggp serve ---

def serve_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ggp serve", description="run the websocket match "
                                     "server (protocol: server/PROTOCOL.md)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1: loopback only)")
    parser.add_argument("--port", type=PORT, default=9147, help="port (default 9147; 0: any)")
    parser.add_argument("--db", default=DEFAULT_DB, help=f"match database (default {DEFAULT_DB})")
    parser.add_argument("--games", nargs="+", default=[], metavar="DIR",
                        help="folders that 'create' messages may load games from")
    parser.add_argument("--admin-token", default=None, metavar="T",
                        help="the token control messages (create/abort/list) need; it shows "
                        f"in ps, so prefer the variable {ENV_ADMIN_TOKEN}; default: a new "
                        "one, written to --admin-token-file")
    parser.add_argument("--admin-token-file", default=None, metavar="FILE",
                        help="where a new admin token is written, mode 0600 (default: the "
                        "database's path + .admin-token)")
    parser.add_argument("--agents", default=None, metavar="FILE",
                        help="register agent names ahead: lines 'NAME SECRET' (a file only "
                        "you may read); other names belong to their first login")
    parser.add_argument("--allow-http", nargs="*", default=list(LOOPBACK),
                        metavar="HOST[:PORT]", help="hosts http:// players may name (default: "
                        "loopback only; none: no http players)")
    parser.add_argument("--max-running", type=bounded_int(1, 100_000), default=64, metavar="N",
                        help="running matches at most, for create messages (default 64)")
    parser.add_argument("--max-agents", type=bounded_int(0, 4096), default=8, metavar="N",
                        help="agent processes create messages may launch at once (default 8)")
    parser.add_argument("--max-connections", type=bounded_int(1, 65536), default=1024,
                        metavar="N",
                        help="open sockets at most (default 1024)")
    parser.add_argument("--open-registration", action="store_true",
                        help="let any agent register a new name with its first hello; by "
                        "default a new name needs --agents FILE or the admin token in its "
                        "hello")
    parser.add_argument("--max-per-address", type=bounded_int(1, 65536), default=64,
                        metavar="N", help="open sockets of one client address at most "
                        "(default 64)")
    parser.add_argument("--public-spectators", action="store_true",
                        help="show running hidden-information matches (GDL-II, .efg, tree, "
                        "POSG) whole to every spectator and page; by default they are "
                        "redacted until the end, since a player could watch its own match")
    _workers_arg(parser)
    args = parser.parse_args(argv)
    for folder in args.games:
        if not Path(folder).is_dir():
            raise GameError(f"--games {folder}: not a folder")
    HttpAllowList(args.allow_http)  # a malformed entry is a usage error, before anything starts
    token = admin_token(args.admin_token)
    agents = read_agents_file(args.agents) if args.agents else {}
    _setup_logging(events=True)
    records = Records(args.db)
    token_file = None
    try:
        if token is None:
            token = new_token()
            token_file = Path(args.admin_token_file or f"{args.db}.admin-token")
            write_private(token_file, token + "\n")
        stopped_by = asyncio.run(_serve(records, args, token, token_file, agents))
    finally:
        records.close()
        if token_file is not None:
            token_file.unlink(missing_ok=True)  # the token dies with the server
    # Ctrl-C exits 130, as every other command; a SIGTERM is the normal way to stop it
    return 130 if stopped_by == signal.SIGINT else 0


async def _serve(records: Records, args: argparse.Namespace, token: str,
                 token_file: Path | None, agents: dict[str, str]) -> int:
    """Serve until SIGINT or SIGTERM; the signal that stopped it."""
    server = MatchServer(records, host=args.host, port=args.port, game_dirs=args.games,
                         max_connections=args.max_connections, admin_token=token,
                         max_running=args.max_running, max_agents=args.max_agents,
                         http_allow=args.allow_http, agents=agents,
                         public_spectators=args.public_spectators, workers=args.workers,
                         registration="open" if args.open_registration else "closed",
                         max_per_address=args.max_per_address)
    await server.start()
    stop = asyncio.Event()
    stopped_by: list[int] = []
    loop = asyncio.get_running_loop()

    def on_signal(sig: int) -> None:
        stopped_by.append(sig)
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, on_signal, sig)
    print(f"serving on {server.url} (database {args.db}); pages at {server.http_url}",
          flush=True)
    if token_file is not None:
        print(f"admin token in {token_file} (readable only by you)", flush=True)
    try:
        await stop.wait()
    finally:
        await server.close()
    print("stopped; running matches were recorded as aborted", file=sys.stderr)
    return stopped_by[0] if stopped_by else 0


# --- ggp match ---

def match_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ggp match", description="play one match on an "
                                     "embedded server; print each step as it is played "
                                     "(moves, answer times, faults), then the result")
    parser.add_argument("game", nargs="?", help="game file (.kif, .efg, tree-format .txt, "
                        ".osposg); before or after the options")
    parser.add_argument("--players", nargs="+", required=True, metavar="SPEC",
                        help="one player spec per role (random, first, uct, solver, "
                        "http://HOST:PORT, ws:NAME, agent[:NAME]; options after '?')")
    parser.add_argument("--port", type=PORT, default=0,
                        help="the embedded server's port, where ws:NAME agents connect "
                        "(default 0: any free port, printed)")
    _clock_args(parser)
    parser.add_argument("--quiet", action="store_true", help="no step lines while it plays "
                        "(text: the whole log at the end; --json: only the JSON)")
    args = parser.parse_intermixed_args(argv)
    game_after_players(args)
    _setup_logging()
    check_specs(args.players)
    game = _load_games([args.game], args.games)[0]
    records = Records(args.db)
    try:
        outcome = asyncio.run(_one_match(records, game, args))
    finally:
        records.close()
    if args.json:
        print(json.dumps(_outcome_json(game, args.players, outcome)))
    elif args.quiet:
        print(outcome_text(game, args.players, outcome))
    else:  # the header and the steps were printed as they happened
        print(result_line(game.roles, outcome.status, outcome.payoffs, outcome.reason))
    return 0 if outcome.status == "completed" else 1


def _announce(server: MatchServer) -> None:
    """Where the command's ws: seats (players or fill) log in, when it has any."""
    if server.seat_names:
        print(f"waiting for websocket agents on {server.url}", file=sys.stderr)


async def _one_match(records: Records, game: PlayableGame,
                     args: argparse.Namespace) -> MatchOutcome:
    async with MatchServer(records, port=args.port, http_allow=http_allowed(args.players),
                           workers=args.workers, registration="seats",
                           seat_names=ws_names(args.players)) as server:
        _announce(server)
        match = server.start_match(game, args.players,
                                   MatchOptions(args.startclock, args.playclock, args.seed))
        if not args.quiet:  # live: the log itself, or beside --json on stderr
            match.listener = Listeners(match.listener,
                                       StepPrinter(sys.stderr if args.json else sys.stdout))
        return await server.tasks[match.id]


def _outcome_json(game: PlayableGame, players: Sequence[str],
                  outcome: MatchOutcome) -> dict[str, Any]:
    return {"match": outcome.match, "game": game.name, "roles": list(game.roles),
            "players": list(players), "status": outcome.status, "payoffs": outcome.payoffs,
            "reason": outcome.reason, "moves": outcome.moves, "errors": outcome.errors,
            **({"percepts": outcome.percepts} if outcome.percepts else {})}


# --- ggp tournament ---

def tournament_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ggp tournament", description="round robin with "
                                     "every seating, concurrent matches, standings")
    parser.add_argument("--games", nargs="+", required=True, metavar="GAME",
                        help="game files")
    parser.add_argument("--players", nargs="+", required=True, metavar="SPEC",
                        help="the entrants' player specs (as for ggp match)")
    parser.add_argument("--rounds", type=bounded_int(1, 10**6), default=1,
                        help="matches per seating (default 1)")
    parser.add_argument("--swap-roles", action="store_true",
                        help="every ordered seating: each player plays each role")
    parser.add_argument("--fill", default=None, metavar="SPEC",
                        help="the player of the seats left when a game has more roles "
                        "than players (e.g. random)")
    parser.add_argument("--concurrency", type=bounded_int(1, 4096), default=4,
                        help="matches at once (default 4)")
    _seat_args(parser)
    parser.add_argument("--game-dirs", nargs="+", default=None, metavar="DIR",
                        help="only load game files from these folders")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--plot", metavar="FILE.png",
                        help="draw the standings with their 95%% confidence intervals as a PNG")
    parser.add_argument("--ray", default=None, metavar="ADDRESS",
                        help="run the matches as tasks on a Ray cluster: its head's HOST:PORT, "
                        "auto (the cluster of this machine) or local:N (a throw-away cluster "
                        "of N nodes here); records stay in --db (docs/ray.md)")
    args = parser.parse_args(argv)
    _setup_logging()
    check_specs(_entrants(args))
    if args.ray is not None and args.workers:
        raise GameError("--workers is for one machine's server; with --ray each match runs "
                        "where it lands, and the cluster's nodes are the workers")
    plot = prepare_output(args.plot, "--plot") if args.plot else None
    games = _load_games(args.games, args.game_dirs)
    records = Records(args.db)
    try:
        if args.ray is None:
            result = asyncio.run(_tournament(records, games, args))
        else:
            result = ray_tournament(records, games, args.games, args, _progress(args, games),
                                    http_allowed(_entrants(args)))
    finally:
        records.close()
    if args.json:
        print(json.dumps(result.to_json()))
    else:
        print(f"tournament {result.id}: {len(result.outcomes)} matches, seed {result.seed} "
              f"(database {args.db})")
        print(format_standings(result.table))
        print(format_ranges(result.ranges))
    if plot is not None:    # after the standings, so a failing plot loses nothing
        standings_plot(plot, result.table, f"tournament {result.id}")
    return 0


def _entrants(args: argparse.Namespace) -> list[str]:
    return args.players + ([args.fill] if args.fill is not None else [])


def _progress(args: argparse.Namespace,
              games: list[PlayableGame]) -> Callable[[MatchOutcome], None] | None:
    """The progress bar's callback (None with --quiet)."""
    if args.quiet:
        return None
    bar = ProgressBar(len(schedule(games, len(args.players), args.rounds, args.swap_roles, 0,
                                   args.fill is not None)))
    return lambda outcome: bar.advance(f"{outcome.match.split('.')[0]} {outcome.status}")


async def _tournament(records: Records, games: list[PlayableGame],
                      args: argparse.Namespace) -> TournamentResult:
    entrants = _entrants(args)
    async with MatchServer(records, port=0, http_allow=http_allowed(entrants),
                           workers=args.workers, registration="seats",
                           seat_names=ws_names(entrants)) as server:
        _announce(server)
        progress = _progress(args, games)
        return await run_tournament(server, games, args.players, rounds=args.rounds,
                                    swap_roles=args.swap_roles, concurrency=args.concurrency,
                                    startclock=args.startclock, playclock=args.playclock,
                                    seed=args.seed, fill=args.fill, on_match=progress)


# --- ggp matches ---

MATCHES_ACTIONS = {
    "list": "recent matches, newest first (default)",
    "show": "one match's moves and result (ID: a match id; --follow: live, as it is played)",
    "export": "one match in ggp-base's match JSON with its rules and states (ID: a match id; "
              "or --tournament ID: all of its matches)",
    "tournaments": "recorded tournaments, newest first",
    "standings": "a tournament's standings again (ID: a tournament id)",
}


def matches_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ggp matches", description="Recorded matches and "
                                     "tournaments.")
    parser.add_argument("action", nargs="?", default="list", choices=list(MATCHES_ACTIONS),
                        help="; ".join(f"{k}: {v}" for k, v in MATCHES_ACTIONS.items()))
    parser.add_argument("id", nargs="?", help="match id (show, export) or tournament id "
                        "(standings)")
    parser.add_argument("--db", default=DEFAULT_DB, help=f"match database (default {DEFAULT_DB})")
    parser.add_argument("--tournament", default=None, help="list (export) only this "
                        "tournament's matches")
    parser.add_argument("--follow", action="store_true", help="show: print each step as "
                        "the match's server records it, until the match ends (Ctrl-C stops)")
    parser.add_argument("--out", default=None, metavar="DIR", help="export: write one "
                        "MATCH_ID.json per match into this folder instead of printing")
    parser.add_argument("--limit", type=bounded_int(1, 10**9), default=100,
                        help="list at most this many (default 100)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    args = parser.parse_args(argv)
    _check_matches_args(args)
    if not Path(args.db).exists():
        raise GameError(f"{args.db}: no match database here (use --db FILE)")
    records = Records(args.db)
    try:
        if args.follow:
            return _follow(records, args.id)
        if args.out is not None:
            return _export_files(records, args)
        print(_matches_output(records, args))
    finally:
        records.close()
    return 0


def _check_matches_args(args: argparse.Namespace) -> None:
    exports_tournament = args.action == "export" and args.tournament and not args.id
    if args.action in ("show", "export", "standings") and not args.id \
            and not exports_tournament:
        what = "tournament" if args.action == "standings" else "match"
        raise GameError(f"ggp matches {args.action} needs a {what} id")
    if args.follow and (args.action != "show" or args.json):
        raise GameError("--follow goes with 'ggp matches show ID' (text, not --json)")
    if args.out is not None and args.action != "export":
        raise GameError("--out goes with 'ggp matches export'")


def _follow(records: Records, match: str) -> int:
    """Print a match's lines as they are recorded; 0 if it completed, else 1."""
    for line in follow(records, match):
        print(line, flush=True)
    return 0 if records.match_status(match)[0] == "completed" else 1


def _exports(records: Records, args: argparse.Namespace) -> list[dict[str, Any]]:
    if args.id:
        return [export_match(records, args.id)]
    return export_tournament(records, args.tournament)


def _export_files(records: Records, args: argparse.Namespace) -> int:
    folder = Path(args.out)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        exports = _exports(records, args)
        for export in exports:  # match ids are file-name safe (the protocol's pattern)
            (folder / f"{export['matchId']}.json").write_text(json.dumps(export, indent=1))
    except OSError as exc:
        raise GameError(f"--out {args.out}: {exc.strerror or exc}") from None
    print(f"{len(exports)} match{'es' if len(exports) != 1 else ''} written to {folder}")
    return 0


def _matches_output(records: Records, args: argparse.Namespace) -> str:
    if args.action == "list":
        rows = records.list_matches(args.tournament, args.limit)
        return json.dumps(rows) if args.json else _list_text(rows)
    if args.action == "show":
        record = records.get_match(args.id)
        return json.dumps(record) if args.json else record_text(record)
    if args.action == "export":
        exports = _exports(records, args)
        return json.dumps(exports[0] if args.id else exports, indent=1)
    if args.action == "tournaments":
        rows = records.list_tournaments(args.limit)
        return json.dumps(rows) if args.json else _tournaments_text(rows)
    tournament = records.get_tournament(args.id)
    table, ranges = recorded_table(tournament, records.list_matches(args.id, limit=-1))
    if args.json:
        return json.dumps({"tournament": args.id, "status": tournament["status"],
                           "standings": [row.to_json() for row in table],
                           "payoff_ranges": {g: r.to_json() for g, r in ranges.items()}})
    return f"{_tournament_title(tournament)}\n" + (
        f"{format_standings(table)}\n{format_ranges(ranges)}" if table
        else "no matches recorded")


def _date(seconds: float | None) -> str:
    return "-" if seconds is None else time.strftime("%Y-%m-%d %H:%M:%S",
                                                      time.localtime(seconds))


def _list_text(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no matches"
    table = [("started", "match", "status", "players", "payoffs", "faults", "reason")]
    for row in rows:
        payoffs = "-" if row["payoffs"] is None else " ".join(f"{p:g}" for p in row["payoffs"])
        table.append((_date(row["started"]), row["id"], row["status"], " vs ".join(row["players"]),
                      payoffs, " ".join(str(f) for f in row["faults"]), row["reason"] or ""))
    return columns(table)


def _tournament_title(tournament: dict[str, Any]) -> str:
    config = tournament["config"]
    return (f"tournament {tournament['id']} ({tournament['status']}, started "
            f"{_date(tournament['started'])}, finished {_date(tournament['finished'])}): "
            f"{', '.join(config['games'])}; players {' '.join(config['players'])}"
            + (f" (fill {config['fill']})" if config.get("fill") else "")
            + f"; seed {config['seed']}")


def _tournaments_text(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no tournaments"
    table = [("started", "tournament", "status", "matches", "games", "players")]
    table += [(_date(row["started"]), row["id"], row["status"], str(row["matches"]),
               ", ".join(row["config"]["games"]), " ".join(row["config"]["players"]))
              for row in rows]
    return columns(table)
