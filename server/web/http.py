"""HTTP on the websocket's port: a plain GET gets a page, an upgrade is an agent.

:meth:`WebPages.process_request` is the ``process_request`` hook of the websocket
server: a request that asks for a websocket upgrade goes on to the handshake (agents,
clients, spectators, as before); any other request is answered here with a page:

* ``/``: running and recent matches, tournaments;
* ``/matches/<id>`` (``?step=N``: the board after step N), ``/api/matches/<id>`` (the
  ``watching`` message plus ``views``, the state after every step, for the replay);
* ``/tournaments/<id>``; ``/static/<file>`` (the stylesheet and the script).

Every answer carries a strict Content-Security-Policy (scripts, styles and connections
from this origin only; no inline script or style; no frames), ``nosniff`` and
``no-referrer``. Requests whose ``Host`` is not a loopback name are refused while the
server listens on loopback (a DNS-rebinding page cannot read it). Unknown paths, bad
ids and absent matches get a clean 404 page; a failure here is logged and answered
500, never with a traceback.
"""

from __future__ import annotations

import asyncio
import json
import logging
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from server.protocol import MATCH_ID_PATTERN
from server.records import Records
from server.spectators import Spectators
from server.tournament import recorded_pairings, recorded_standings
from server.web import pages
from solvers.errors import GameError

log = logging.getLogger(__name__)

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
STATIC_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                ".png": "image/png"}
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
RECENT = 50  # matches on the index page
REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
           421: "Misdirected Request", 500: "Internal Server Error"}


def _static_files() -> dict[str, bytes]:
    folder = resources.files("server.web") / "static"
    return {entry.name: entry.read_bytes() for entry in folder.iterdir()
            if entry.is_file() and any(entry.name.endswith(ext) for ext in STATIC_TYPES)}


def response(status: int, body: bytes | str, content_type: str = "text/html; charset=utf-8",
             cache: str = "no-store") -> Response:
    data = body.encode("utf-8") if isinstance(body, str) else body
    headers = Headers([("Content-Type", content_type), ("Content-Length", str(len(data))),
                       ("Content-Security-Policy", CSP), ("X-Content-Type-Options", "nosniff"),
                       ("Referrer-Policy", "no-referrer"), ("X-Frame-Options", "DENY"),
                       ("Cache-Control", cache), ("Connection", "close")])
    return Response(status, REASONS.get(status, "Error"), headers, data)


def error_response(status: int, message: str) -> Response:
    return response(status, pages.error_page(status, message))


class NotFound(Exception):
    """Answered with a 404 page naming what was not found."""


class WebPages:
    """The pages of one match server (see the module docstring)."""

    def __init__(self, spectators: Spectators, records: Records, loopback_only: bool) -> None:
        self.spectators = spectators
        self.records = records
        self.loopback_only = loopback_only
        self.static = _static_files()

    async def process_request(self, connection: ServerConnection,
                              request: Request) -> Response | None:
        if "websocket" in request.headers.get("Upgrade", "").lower():
            return None  # an agent, a client or a spectator: the handshake goes on
        try:
            return await self.answer(request)
        except NotFound as exc:
            return error_response(404, str(exc))
        except Exception:  # a bug costs one page, never the server, never a traceback
            log.exception("web page %s", request.path[:200])
            return error_response(500, "the server failed on this page")

    async def answer(self, request: Request) -> Response:
        host = request.headers.get("Host", "").rsplit(":", 1)[0].lower()
        if self.loopback_only and host not in LOOPBACK_NAMES:
            return error_response(421, "this server answers only on a loopback address "
                                  "(open it as http://127.0.0.1:PORT/)")
        url = urlsplit(request.path)
        path = url.path
        query = parse_qs(url.query)
        if path == "/":
            return response(200, await self.index())
        if path.startswith("/static/"):
            name = path.removeprefix("/static/")
            body = self.static.get(name)
            if body is None:
                raise NotFound(f"no file {name!r}")
            return response(200, body, STATIC_TYPES["." + name.rsplit(".", 1)[-1]],
                            cache="max-age=60")
        for prefix, handler in (("/matches/", self.match), ("/api/matches/", self.match_json),
                                ("/tournaments/", self.tournament)):
            if path.startswith(prefix):
                ident = unquote(path.removeprefix(prefix))
                if not MATCH_ID_PATTERN.fullmatch(ident):
                    raise NotFound(f"no such {prefix.strip('/').split('/')[-1][:-1]}: "
                                   f"{ident[:80]!r}")
                return await handler(ident, query)
        raise NotFound(f"no page {path[:80]!r}")

    # --- pages ---

    async def index(self) -> str:
        running = [{"id": f.id, "game": f.game.name, "players": list(f.match.specs),
                    "status": f.status, "payoffs": None, "started": f.started}
                   for f in self.spectators.feeds.values()
                   if f.status not in pages.FINISHED]
        recent = await asyncio.to_thread(self.records.list_matches, None, RECENT)
        tournaments = await asyncio.to_thread(self.records.list_tournaments, 20)
        return pages.index_page(running, [m for m in recent if m["status"] in pages.FINISHED],
                                tournaments)

    async def _snapshot(self, match_id: str) -> tuple[dict[str, Any], Any]:
        snapshot = await self.spectators.snapshot(match_id)
        if snapshot is None:
            raise NotFound(f"no match {match_id!r}")
        return snapshot

    async def match(self, match_id: str, query: dict[str, list[str]]) -> Response:
        watching, view_at = await self._snapshot(match_id)
        shown = watching["step"]
        wanted = query.get("step", [""])[0]
        if wanted.isdigit() and len(wanted) < 10:
            shown = min(int(wanted), watching["step"])
        return response(200, pages.match_page(watching, view_at(shown), shown))

    async def match_json(self, match_id: str, query: dict[str, list[str]]) -> Response:
        watching, view_at = await self._snapshot(match_id)
        watching["views"] = [view_at(k) for k in range(watching["step"] + 1)]
        return response(200, json.dumps(watching, allow_nan=False),
                        "application/json; charset=utf-8")

    async def tournament(self, tid: str, query: dict[str, list[str]]) -> Response:
        try:
            t = await asyncio.to_thread(self.records.get_tournament, tid)
        except GameError:
            raise NotFound(f"no tournament {tid!r}") from None
        matches = await asyncio.to_thread(self.records.list_matches, tid, 100_000)
        return response(200, pages.tournament_page(t, *tournament_tables(t, matches),
                                                   matches))


def tournament_tables(t: dict[str, Any], matches: list[dict[str, Any]]
                      ) -> tuple[list[dict[str, Any]], dict[str, dict[str, list[int]]],
                                 dict[str, Any]]:
    """Standings (finished matches), head-to-head wins-draws-losses and progress."""
    finished = [m for m in matches if m["status"] in pages.FINISHED]
    standings = [s.to_json() for s in recorded_standings(t, finished)]
    names, pairings, recorded = recorded_pairings(t, matches)
    h2h = {a: {b: [0, 0, 0] for b in names} for a in names}
    for pairing, m in zip(pairings, recorded, strict=True):
        if m is None or m["status"] != "completed" or not m["payoffs"]:
            continue
        seats = [names[e] for e in pairing.entrants]
        for i, a in enumerate(seats):
            for j, b in enumerate(seats):
                if a != b:
                    mine, theirs = m["payoffs"][i], m["payoffs"][j]
                    h2h[a][b][0 if mine > theirs else 1 if mine == theirs else 2] += 1
    known_games = {m["game"] for m in matches}
    complete = all(g in known_games for g in t["config"].get("games", []))
    progress = {"scheduled": len(pairings) if complete else None,
                "completed": sum(m["status"] == "completed" for m in matches),
                "aborted": sum(m["status"] == "aborted" for m in matches),
                "running": sum(m["status"] == "running" for m in matches)}
    return standings, h2h, progress
