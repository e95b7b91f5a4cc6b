"""``ggp agent``: run the GGP agent as an HTTP player or as a websocket client.

``ggp agent --http PORT [--host 127.0.0.1] [--name NAME] [--solutions DIR] [--margin SECONDS]``
``ggp agent --ws URL [--name NAME] [--token T]``

Search options (both modes): ``--enhancements LIST`` (agent/search/mcts.py), ``--simultaneous
duct|rm|exp3``, ``--mast-epsilon E``, ``--mast-temperature T``, ``--cutoff-steps N``,
``--exploration C``.

Decisions are logged to stderr, one line per move. Ctrl-C stops it with one line
(none with ``--quiet``: a launched agent shares the terminal of ``ggp match``), exit 130.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import os
import re
import signal
import socket
import sys
from collections.abc import Sequence
from pathlib import Path

from agent.brains.options import BrainOptions
from agent.gamer import DEFAULT_MARGIN, DEFAULT_MAX_CLOCK, Gamer
from agent.http_player import LOOPBACK, GgpPlayer, serve
from agent.search.mcts import DEFAULT_ENHANCEMENTS, ENHANCEMENTS, SIMULTANEOUS, parse_enhancements
from agent.ws_client import run_client
from solvers.errors import GameError

NAME = re.compile(r"[A-Za-z0-9_.:@-]{1,64}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ggp agent", description="Run the GGP agent "
                                     "as an HTTP player or as a websocket client.")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--http", type=int, metavar="PORT", help="serve GGP HTTP on PORT")
    mode.add_argument("--ws", metavar="URL", help="join a match server, e.g. ws://127.0.0.1:9147/")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (--http)")
    parser.add_argument("--managers", nargs="+", metavar="HOST", default=["localhost"],
                        help="the hosts whose START is accepted (--http; default: loopback)")
    parser.add_argument("--name", default="ggp-agent", help="player name (INFO, ws hello)")
    parser.add_argument("--token", default=os.environ.get("GGP_AGENT_TOKEN"),
                        help="ws login token, the name's secret (default: $GGP_AGENT_TOKEN, "
                        "else random)")
    parser.add_argument("--solutions", metavar="DIR", help="stored solutions (ggp solve --save)")
    parser.add_argument("--margin", type=float, default=DEFAULT_MARGIN, metavar="SECONDS",
                        help=f"answer this long before each deadline (default {DEFAULT_MARGIN})")
    parser.add_argument("--max-clock", type=float, default=DEFAULT_MAX_CLOCK, metavar="SECONDS",
                        help="believe no start or play clock longer than this "
                        f"(default {DEFAULT_MAX_CLOCK:g})")
    parser.add_argument("--simultaneous", choices=SIMULTANEOUS, default="duct",
                        help="search policy at simultaneous-move nodes: decoupled UCT, "
                        "regret matching or EXP3 (default duct)")
    parser.add_argument("--enhancements", default="default", metavar="LIST",
                        help="search enhancements, comma-separated: default, none, all, "
                        f"{', '.join(ENHANCEMENTS)}; no-NAME drops one (default: "
                        f"{','.join(DEFAULT_ENHANCEMENTS)})")
    parser.add_argument("--mast-epsilon", type=float, default=BrainOptions.mast_epsilon,
                        metavar="E", help="share of uniform moves in MAST playouts "
                        f"(default {BrainOptions.mast_epsilon:g})")
    parser.add_argument("--mast-temperature", type=float, default=BrainOptions.mast_temperature,
                        metavar="T", help="temperature of MAST's Gibbs sampling, rewards in "
                        f"[0, 1] (enhancement gibbs; default {BrainOptions.mast_temperature:g})")
    parser.add_argument("--cutoff-steps", type=int, default=BrainOptions.cutoff, metavar="N",
                        help="playout steps before the cut-off evaluates the state: in the "
                        "graph search its material where the enhancement material found "
                        "pieces, else its goals (enhancement cutoff; default "
                        f"{BrainOptions.cutoff})")
    parser.add_argument("--exploration", type=float, default=None,
                        metavar="C", help="UCB1 exploration constant, rewards in [0, 1]; "
                        "giving it turns the enhancement explore off (default: explore's, "
                        f"from random games on the start clock; {BrainOptions.exploration:g} "
                        "without it)")
    parser.add_argument("--simultaneous-exploration", type=float, metavar="C",
                        default=BrainOptions.simultaneous_exploration,
                        help="UCB1 constant where several roles choose at once "
                        f"(duct; default {BrainOptions.simultaneous_exploration:g})")
    parser.add_argument("--seed", type=int, default=0, help="seed of every random choice")
    parser.add_argument("--max-matches", type=int, default=None,
                        help="stop after this many matches (default: run until killed)")
    parser.add_argument("--quiet", action="store_true", help="log warnings and errors only")
    return parser


def brain_options(args: argparse.Namespace) -> BrainOptions:
    """The search options the arguments ask for; GameError names a bad one."""
    try:
        enhancements = parse_enhancements(args.enhancements)
    except ValueError as exc:
        raise GameError(f"--enhancements: {exc}") from None
    if not 0 <= args.mast_epsilon <= 1:
        raise GameError("--mast-epsilon must be between 0 and 1")
    if not 0 < args.mast_temperature < math.inf:
        raise GameError("--mast-temperature must be a number > 0")
    if args.cutoff_steps < 1:
        raise GameError("--cutoff-steps must be at least 1")
    exploration = args.exploration
    if exploration is None:
        exploration = BrainOptions.exploration
    else:       # a constant asked for is the one played: explore would replace it
        enhancements = tuple(e for e in enhancements if e != "explore")
    for flag, value in (("exploration", exploration),
                        ("simultaneous-exploration", args.simultaneous_exploration)):
        if not 0 <= value < math.inf:
            raise GameError(f"--{flag} must be a number >= 0")
    return BrainOptions(simultaneous=args.simultaneous, seed=args.seed,
                        solutions=args.solutions, enhancements=enhancements,
                        mast_epsilon=args.mast_epsilon, exploration=exploration,
                        simultaneous_exploration=args.simultaneous_exploration,
                        mast_temperature=args.mast_temperature, cutoff=args.cutoff_steps)


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    if not NAME.fullmatch(args.name):
        raise GameError(f"--name {args.name!r}: use 1-64 of the characters A-Z a-z 0-9 _ . : @ -")
    if not args.margin >= 0:
        raise GameError("--margin must be >= 0 seconds")
    if not 0 < args.max_clock < math.inf:
        raise GameError("--max-clock must be a positive number of seconds")
    if args.solutions is not None and not Path(args.solutions).is_dir():
        raise GameError(f"--solutions {args.solutions}: not a folder")
    if args.http is not None and not 0 < args.http < 65536:
        raise GameError(f"--http {args.http}: not a TCP port")
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    options = brain_options(args)
    args.managers = manager_addresses(args.managers)
    gamer = Gamer(options)
    previous = signal.signal(signal.SIGINT, _interrupted)
    try:
        if args.http is not None:
            return asyncio.run(_run_http(args, gamer))
        return asyncio.run(run_client(args.ws, args.name, gamer, token=args.token,
                                      margin=args.margin, max_matches=args.max_matches,
                                      max_clock=args.max_clock))
    except KeyboardInterrupt:
        if not args.quiet:
            print("interrupted", file=sys.stderr)
        return 130
    finally:
        gamer.close()
        signal.signal(signal.SIGINT, previous)


def _interrupted(signum: int, frame: object) -> None:
    """Ctrl-C: stop at once, in silence. The worker and the server's connection get
    it too (one terminal, one process group); their ends are no news worth a log line."""
    logging.disable()
    raise KeyboardInterrupt


def manager_addresses(hosts: Sequence[str]) -> frozenset[str]:
    """The addresses of ``hosts`` (names resolved; ``localhost`` is loopback, both IPv4
    and IPv6); GameError for a host that does not resolve."""
    found = set(LOOPBACK) if "localhost" in hosts else set()
    for host in hosts:
        if host == "localhost":
            continue
        try:
            found |= {info[4][0] for info in socket.getaddrinfo(host, None)}
        except OSError as exc:
            raise GameError(f"--managers {host}: {exc.strerror or exc}") from None
    return frozenset(found)


async def _run_http(args: argparse.Namespace, gamer: Gamer) -> int:
    player = GgpPlayer(args.name, gamer, margin=args.margin, max_clock=args.max_clock,
                       managers=args.managers)
    try:
        server = await serve(player, args.host, args.http)
    except OSError as exc:
        raise GameError(f"cannot listen on {args.host}:{args.http}: {exc.strerror or exc}") from None
    logging.getLogger("agent").info("GGP HTTP player %s on http://%s:%d/",
                                    args.name, args.host, args.http)
    async with server:
        await server.serve_forever()
    return 0
