"""``ggp client``: create, list, watch and abort matches on a running ``ggp serve``.

A thin websocket client of the server's protocol (``server/PROTOCOL.md``): ``create``,
``list`` and ``abort`` are control messages and carry the operator's admin token;
``watch`` is the read-only spectator subscription and needs none. Each action opens
one connection, sends one message and reads the answer; ``watch`` then prints the
match's steps as they are played, in the lines ``ggp match`` prints
(``server/live.py``), until it ends.

The admin token comes from ``--token`` (visible in ``ps``), else the variable
``GGP_ADMIN_TOKEN``, else the file ``ggp serve`` writes (``--token-file``, by default
``matches.sqlite.admin-token`` when it exists). Every failure is one line and a
non-zero exit: a malformed URL, a refused connection, a wrong token, an unknown match.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from server.commandline import (
    DEFAULT_DB,
    SEED,
    check_specs,
    columns,
    game_after_players,
    positive_seconds,
)
from server.credentials import ENV_ADMIN_TOKEN, admin_token
from server.live import header_lines, result_line, step_line
from server.protocol import MATCH_ID_PATTERN
from solvers.errors import GameError

ACTIONS = {
    "create": "start a match: create GAME --players SPEC... (GAME: a file in the server's "
              "--games folders); prints its id",
    "list": "the running matches",
    "watch": "print a match's steps as they are played, then its result (watch ID)",
    "abort": "abort a running match (abort ID)",
}
CONTROL = ("create", "list", "abort")  # the actions that need the admin token
MAX_FRAME = 64 << 20  # a long match's ``watching`` carries its whole history
CONNECT_SECONDS = 10.0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="ggp client", description="create, list, watch and abort matches on a running "
        "ggp serve (protocol: server/PROTOCOL.md)")
    parser.add_argument("action", choices=list(ACTIONS),
                        help="; ".join(f"{k}: {v}" for k, v in ACTIONS.items()))
    parser.add_argument("target", nargs="?", metavar="GAME|ID",
                        help="create: the game file; watch, abort: the match id")
    parser.add_argument("--server", required=True, metavar="URL",
                        help="the server, ws://HOST:PORT (ggp serve prints it)")
    parser.add_argument("--token", default=None, metavar="T",
                        help=f"the admin token for create, list and abort (watch: shows a running hidden-information match whole); it shows in ps, so "
                        f"prefer the variable {ENV_ADMIN_TOKEN} or --token-file")
    parser.add_argument("--token-file", default=None, metavar="FILE",
                        help="read the admin token from this file (ggp serve writes one; "
                        f"default: {DEFAULT_DB}.admin-token when it exists)")
    parser.add_argument("--players", nargs="+", default=None, metavar="SPEC",
                        help="create: one player spec per role (as for ggp match)")
    parser.add_argument("--startclock", type=positive_seconds, default=None,
                        help="create: seconds to get ready (default: the server's, 10)")
    parser.add_argument("--playclock", type=positive_seconds, default=None,
                        help="create: seconds per move (default: the server's, 5)")
    parser.add_argument("--seed", type=SEED, default=None,
                        help="create: the match seed (default: random)")
    parser.add_argument("--timeout", type=positive_seconds, default=30.0,
                        help="seconds to wait for the server's answer (default 30; watch "
                        "waits for the match however long it runs)")
    parser.add_argument("--json", action="store_true",
                        help="create: {\"match\", \"url\", \"roles\"}; list: the rows; watch: "
                        "the spectator messages, one per line")
    args = parser.parse_intermixed_args(argv)
    base = server_url(args.server)
    _check_args(args)
    if args.action in CONTROL:
        token = _token(args)
    else:  # watch: a token given on purpose shows a hidden-information match whole
        explicit = args.token or args.token_file or os.environ.get(ENV_ADMIN_TOKEN)
        token = _token(args) if explicit else None
    return asyncio.run(_run(args, base, token))


def server_url(text: str) -> str:
    """A checked ``ws://HOST:PORT`` (or wss) without path, query or credentials."""
    try:
        url = urlsplit(text)
        port = url.port
    except ValueError as exc:
        raise GameError(f"--server {text!r}: not a URL ({exc})") from None
    if url.scheme not in ("ws", "wss") or not url.hostname:
        raise GameError(f"--server {text!r}: not a ws://HOST:PORT URL")
    if url.username is not None or url.query or url.fragment or url.path not in ("", "/"):
        raise GameError(f"--server {text!r}: give only ws://HOST:PORT (no path, query or "
                        "credentials: the token goes in --token)")
    host = f"[{url.hostname}]" if ":" in url.hostname else url.hostname
    return f"{url.scheme}://{host}" + (f":{port}" if port is not None else "")


def match_url(base: str, match: str) -> str:
    """The match's page on the server (the same host and port as the websocket)."""
    return ("https" if base.startswith("wss:") else "http") + base[base.index(":"):] \
        + f"/matches/{match}"


def _check_args(args: argparse.Namespace) -> None:
    if args.action == "create":
        if not args.players:
            raise GameError("ggp client create needs --players SPEC... (one per role)")
        game_after_players(args, "ggp client create", "target")
        check_specs(args.players)
        if args.target is None:
            raise GameError("ggp client create needs a game (ggp client create GAME "
                            "--players SPEC...)")
        return
    options = [name for name in ("players", "startclock", "playclock", "seed")
               if getattr(args, name) is not None]
    if options:
        raise GameError(f"--{options[0]} goes with create, not {args.action}")
    if args.action == "list":
        if args.target is not None:
            raise GameError(f"ggp client list takes no argument (got {args.target!r})")
        return
    if args.target is None:
        raise GameError(f"ggp client {args.action} needs a match id")
    if not MATCH_ID_PATTERN.fullmatch(args.target):
        raise GameError(f"{args.target[:80]!r} is not a match id")


def _token(args: argparse.Namespace) -> str:
    """The admin token (see the module docstring); a clear error when there is none."""
    token = admin_token(args.token)
    if token is not None:
        return token
    path = Path(args.token_file or f"{DEFAULT_DB}.admin-token")
    if args.token_file is None and not path.exists():
        raise GameError(f"{args.action} needs the server's admin token: --token T, the "
                        f"variable {ENV_ADMIN_TOKEN}, or --token-file FILE (ggp serve "
                        "prints where it wrote it)")
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise GameError(f"--token-file {path}: cannot read it "
                        f"({getattr(exc, 'strerror', None) or exc})") from None
    token = admin_token(text) if text else None
    if token is None:
        raise GameError(f"--token-file {path}: no token in it")
    return token


async def _run(args: argparse.Namespace, base: str, token: str | None) -> int:
    try:
        ws = await connect(base, max_size=MAX_FRAME, open_timeout=CONNECT_SECONDS,
                           compression=None)
    except ConnectionRefusedError:
        raise GameError(f"cannot connect to {base}: connection refused (is ggp serve running "
                        "there?)") from None
    except OSError as exc:
        raise GameError(f"cannot connect to {base}: {exc.strerror or exc}") from None
    except TimeoutError:
        raise GameError(f"cannot connect to {base}: no answer in {CONNECT_SECONDS:g} s") from None
    except (InvalidHandshake, InvalidURI) as exc:
        raise GameError(f"cannot connect to {base}: not a ggp serve websocket ({exc})") from None
    async with ws:
        try:
            if args.action == "watch":
                return await _watch(ws, args, token)
            return await _control(ws, args, base, token or "")
        except ConnectionClosed:
            raise GameError(f"{base} closed the connection") from None


async def _ask(ws: ClientConnection, message: dict[str, Any], answers: tuple[str, ...],
               timeout: float | None) -> dict[str, Any]:
    """Send ``message``, return the first answer of a type in ``answers`` (a server
    ``error`` becomes a :class:`GameError`; other messages are skipped)."""
    await ws.send(json.dumps(message))
    while True:
        try:
            data = await asyncio.wait_for(ws.recv(), timeout)
        except TimeoutError:
            raise GameError(f"no answer from the server in {timeout:g} s") from None
        reply = _decode(data)
        if reply.get("type") == "error":
            raise GameError(_error_text(reply))
        if reply.get("type") in answers:
            return reply


def _decode(data: str | bytes) -> dict[str, Any]:
    try:
        reply = json.loads(data)
    except ValueError:
        reply = None
    if not isinstance(reply, dict):
        raise GameError(f"not a ggp serve message: {str(data)[:80]!r}")
    return reply


def _error_text(reply: dict[str, Any]) -> str:
    code, text = reply.get("code"), str(reply.get("message", ""))[:300]
    if code == "not-allowed" and "admin token" in text:
        return ("the server refused the admin token (wrong token? give the one ggp serve "
                f"uses: --token, {ENV_ADMIN_TOKEN} or --token-file)")
    if code == "unknown-match":
        return f"unknown match: {text}"
    return f"the server refused: {text} ({code})"


async def _control(ws: ClientConnection, args: argparse.Namespace, base: str,
                   token: str) -> int:
    if args.action == "create":
        message: dict[str, Any] = {"type": "create", "game": args.target,
                                   "players": args.players, "admin_token": token}
        for name in ("startclock", "playclock", "seed"):
            if getattr(args, name) is not None:
                message[name] = getattr(args, name)
        created = await _ask(ws, message, ("created",), args.timeout)
        match = created["match"]
        print(json.dumps({"match": match, "url": match_url(base, match),
                          "roles": created.get("roles")}) if args.json else match)
    elif args.action == "list":
        rows = (await _ask(ws, {"type": "list", "admin_token": token}, ("matches",),
                           args.timeout))["matches"]
        print(json.dumps(rows) if args.json else _list_text(rows))
    else:
        await _ask(ws, {"type": "abort", "match": args.target, "admin_token": token},
                   ("aborted",), args.timeout)
        print(f"aborted {args.target}")
    return 0


def _list_text(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no running matches"
    table = [("match", "game", "step", "players")]
    table += [(str(r.get("match")), str(r.get("game")), str(r.get("step", "")),
               " vs ".join(map(str, r.get("players") or []))) for r in rows]
    return columns(table)


async def _watch(ws: ClientConnection, args: argparse.Namespace, token: str | None) -> int:
    """Print the match until it ends: 0 if it completed, else 1."""
    request = {"type": "watch", "match": args.target}
    if token is not None:
        request["admin_token"] = token
    first = await _ask(ws, request, ("watching",), args.timeout)
    roles = first["roles"]
    message = first
    while True:
        if args.json:
            print(json.dumps(message), flush=True)
        else:
            for line in _watch_lines(message, roles):
                print(line, flush=True)
        status = message.get("status")
        if message["type"] == "ended" or status in ("completed", "aborted"):
            return 0 if status == "completed" else 1
        try:
            message = _decode(await ws.recv())
        except ConnectionClosed:
            raise GameError("the server closed the connection before the match "
                            "ended") from None
        if message.get("type") == "error":
            raise GameError(_error_text(message))


def _watch_lines(message: dict[str, Any], roles: list[str]) -> list[str]:
    """The text of one spectator message (``watching``: the header and the steps so far)."""
    kind = message["type"]
    lines = []
    if kind == "watching":
        lines = header_lines(message["match"], message["game"]["name"], roles,
                             message["players"])
        lines += [step_line(s["step"], roles, s["moves"], s["errors"], s.get("times"))
                  for s in message["history"]]
    elif kind == "played":
        lines = [step_line(message["step"], roles, message["moves"], message["errors"],
                           message.get("times"))]
    if kind == "ended" or (kind == "watching"
                           and message["status"] in ("completed", "aborted")):
        lines.append(result_line(roles, message["status"], message["payoffs"],
                                 message["reason"]))
    return lines
