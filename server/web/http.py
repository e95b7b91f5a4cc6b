"""HTTP on the websocket's port: a plain GET gets a page, an upgrade is an agent.

The match server's ``process_request`` hook hands every request that is not a websocket
upgrade to :meth:`WebPages.answer`, which answers it with a page:

* ``/``: running and recent matches, tournaments;
* ``/matches/<id>`` (``?step=N``: the board after step N), ``/api/matches/<id>`` (the
  ``watching`` message plus ``views``, the state after every step, for the replay);
* ``/tournaments/<id>``; ``/static/<file>`` (the stylesheet and the script).

A websocket upgrade from a browser page of another site is refused
(:func:`upgrade_refusal`): its ``Origin`` must be this server's own.

Pages never hold up the event loop: reading the records, building a page and encoding
it run on the server's page threads (``pool``), the JSON and big lists in small pieces
so the thread never holds the interpreter lock for long; the answers about finished
matches and tournaments are cached (they no longer change). Every page but the static
files counts against its address's read budget (``server/guard.py``): past it, 429.

Every answer carries a strict Content-Security-Policy (scripts, styles and connections
from this origin only; no inline script or style; no frames), ``nosniff`` and
``no-referrer``. Requests whose ``Host`` is not a loopback name are refused while the
server listens on loopback (a DNS-rebinding page cannot read it). Unknown paths, bad
ids and absent matches get a clean 404 page; a failure here is logged and answered
500, never with a traceback.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from server import protocol
from server.guard import Guard, Throttled
from server.protocol import MATCH_ID_PATTERN
from server.records import RecordReads
from server.single_flight import SingleFlight
from server.spectators import Snapshot, Spectators
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
CACHE_BYTES = 32 << 20  # answers about finished matches and tournaments kept
REASONS = {200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
           405: "Method Not Allowed", 421: "Misdirected Request", 429: "Too Many Requests",
           500: "Internal Server Error"}
ROUTES = {"/matches/": "match", "/api/matches/": "match", "/tournaments/": "tournament"}


def _static_files() -> dict[str, bytes]:
    folder = resources.files("server.web") / "static"
    return {entry.name: entry.read_bytes() for entry in folder.iterdir()
            if entry.is_file() and any(entry.name.endswith(ext) for ext in STATIC_TYPES)}


def response(status: int, body: bytes | str, content_type: str = "text/html; charset=utf-8",
             cache: str = "no-store", extra: tuple[tuple[str, str], ...] = ()) -> Response:
    data = body.encode("utf-8", "replace") if isinstance(body, str) else body
    headers = Headers([("Content-Type", content_type), ("Content-Length", str(len(data))),
                       ("Content-Security-Policy", CSP), ("X-Content-Type-Options", "nosniff"),
                       ("Referrer-Policy", "no-referrer"), ("X-Frame-Options", "DENY"),
                       ("Cache-Control", cache), ("Connection", "close"), *extra])
    return Response(status, REASONS.get(status, "Error"), headers, data)


def error_response(status: int, message: str,
                   extra: tuple[tuple[str, str], ...] = ()) -> Response:
    return response(status, pages.error_page(status, message), extra=extra)


def is_upgrade(request: Request) -> bool:
    return "websocket" in request.headers.get("Upgrade", "").lower()


def _host(netloc: str) -> str:
    """The host of ``HOST[:PORT]`` (``[::1]:9147`` -> ``[::1]``), lowercase."""
    netloc = netloc.strip().lower()
    if netloc.startswith("["):
        return netloc[:netloc.find("]") + 1]
    return netloc.rsplit(":", 1)[0]


def header(request: Request, name: str) -> str | None:
    """A header given at most once (None: absent); given twice, the request is bad."""
    values = request.headers.get_all(name)
    if len(values) > 1:
        raise BadRequest(f"the {name} header is given {len(values)} times")
    return values[0] if values else None


class BadRequest(Exception):
    """Answered 400 (or, for an upgrade, refused)."""


def upgrade_refusal(request: Request, loopback_only: bool) -> Response | None:
    """Why a websocket upgrade is refused (403), or None. Browsers send ``Origin``: a
    page may connect only from this server itself (the same host and port as the request's
    ``Host``; a loopback name while the server listens on loopback), so a site the operator
    visits cannot log in, take seats or watch. Agents and tools send no ``Origin``."""
    try:
        origin, host = header(request, "Origin"), header(request, "Host") or ""
    except BadRequest as exc:
        return error_response(400, str(exc))
    if origin is None:
        return None
    url = urlsplit(origin.strip())
    try:
        same = url.scheme in ("http", "https") and url.netloc.lower() == host.strip().lower() \
            and url.port == urlsplit(f"//{host}").port
    except ValueError:  # a malformed port
        same = False
    if same and not (loopback_only and _host(host) not in LOOPBACK_NAMES):
        return None
    return error_response(403, "websocket connections from the pages of other sites are "
                          "refused (the Origin is not this server)")


class NotFound(Exception):
    """Answered with a 404 page naming what was not found."""


class Cache:
    """Answers that no longer change (finished matches and tournaments), least recently
    used dropped first past ``limit`` bytes."""

    def __init__(self, limit: int = CACHE_BYTES) -> None:
        self.limit = limit
        self.size = 0
        self.items: OrderedDict[tuple[str, ...], tuple[bytes, str]] = OrderedDict()

    def get(self, key: tuple[str, ...]) -> tuple[bytes, str] | None:
        item = self.items.get(key)
        if item is not None:
            self.items.move_to_end(key)
        return item

    def put(self, key: tuple[str, ...], body: bytes, content_type: str) -> None:
        if len(body) > self.limit // 4 or key in self.items:
            return
        self.items[key] = (body, content_type)
        self.size += len(body)
        while self.size > self.limit:
            _, (old, _) = self.items.popitem(last=False)
            self.size -= len(old)


Rendered = tuple[bytes, str, bool]  # (body, content type, whether it may be cached)
HTML = "text/html; charset=utf-8"
JSON = "application/json; charset=utf-8"


class WebPages:
    """The pages of one match server (see the module docstring)."""

    def __init__(self, spectators: Spectators, loopback_only: bool,
                 guard: Guard | None = None) -> None:
        self.spectators = spectators
        self.records: RecordReads = spectators.reader
        self.loopback_only = loopback_only
        self.guard = guard or spectators.guard
        self.static = _static_files()
        self.cache = Cache()
        self.making: SingleFlight[tuple[str, ...], Rendered] = SingleFlight()

    async def process_request(self, address: str, request: Request) -> Response:
        """Answer a request that is not a websocket upgrade: a page, never a traceback."""
        try:
            return await self.answer(request, address)
        except NotFound as exc:
            return error_response(404, str(exc))
        except BadRequest as exc:
            return error_response(400, str(exc))
        except Throttled as exc:  # past the address's read budget
            return error_response(429, exc.message,
                                  (("Retry-After", str(max(1, round(exc.wait)))),))
        except Exception:  # a bug costs one page, never the server, never a traceback
            log.exception("web page %s", request.path[:200])
            return error_response(500, "the server failed on this page")

    async def answer(self, request: Request, address: str) -> Response:
        host = _host(header(request, "Host") or "")
        if self.loopback_only and host not in LOOPBACK_NAMES:
            return error_response(421, "this server answers only on a loopback address "
                                  "(open it as http://127.0.0.1:PORT/)")
        url = urlsplit(request.path)
        path = url.path
        if path.startswith("/static/"):
            name = path.removeprefix("/static/")
            body = self.static.get(name)
            if body is None:
                raise NotFound(f"no file {name!r}")
            return response(200, body, STATIC_TYPES["." + name.rsplit(".", 1)[-1]],
                            cache="max-age=60")
        if path == "/":
            return await self._answer(("index",), address, self._index)
        query = parse_qs(url.query)
        for prefix, kind in ROUTES.items():
            if path.startswith(prefix):
                ident = unquote(path.removeprefix(prefix))
                if not MATCH_ID_PATTERN.fullmatch(ident):
                    raise NotFound(f"no such {kind}: {ident[:80]!r}")
                step = query.get("step", [""])[0][:12]
                return await self._answer((prefix, ident, step), address,
                                          lambda p=prefix, i=ident, s=step: self._page(p, i, s))
        raise NotFound(f"no page {path[:80]!r}")

    async def _answer(self, key: tuple[str, ...], address: str,
                      make: Callable[[], Any]) -> Response:
        """The cached answer, else one made within the address's read budget."""
        cached = self.cache.get(key)
        if cached is None:
            self.guard.check_read(address)
            body, content_type, _ = await self.making.get(key, make,
                                                          lambda made: self._keep(key, made))
        else:
            body, content_type = cached
        return response(200, body, content_type)

    def _keep(self, key: tuple[str, ...], made: Rendered) -> None:
        body, content_type, final = made
        if final:
            self.cache.put(key, body, content_type)

    async def _index(self) -> Rendered:
        running = [{"id": f.id, "game": f.game.name, "players": list(f.match.specs),
                    "status": f.status, "payoffs": None, "started": f.started}
                   for f in self.spectators.feeds.values() if not f.finished]
        body = await self.spectators.run(index_body, self.records, running)
        return body, HTML, False

    async def _page(self, prefix: str, ident: str, step: str) -> Rendered:
        if prefix == "/tournaments/":
            return await self.spectators.run(tournament_body, self.records, ident)
        snapshot = await self.spectators.snapshot(ident)
        if snapshot is None:
            raise NotFound(f"no match {ident!r}")
        if prefix == "/api/matches/":
            body = await self.spectators.run(match_json, snapshot)
            return body, JSON, snapshot.finished
        body = await self.spectators.run(match_body, snapshot, step)
        return body, HTML, snapshot.finished


# --- the answers, made on the page threads ---

def index_body(records: RecordReads, running: list[dict[str, Any]]) -> bytes:
    recent = records.list_matches(None, RECENT)
    tournaments = records.list_tournaments(20)
    return pages.index_page(running, [m for m in recent if m["status"] in pages.FINISHED],
                            tournaments).encode("utf-8", "replace")


def match_body(snapshot: Snapshot, wanted: str) -> bytes:
    """The match page, with the board after step ``wanted`` (default: the last)."""
    watching = snapshot.watching
    shown = watching["step"]
    if wanted.isdigit() and len(wanted) < 10:
        shown = min(int(wanted), watching["step"])
    return pages.match_page(watching, snapshot.view_at(shown), shown).encode("utf-8", "replace")


def match_json(snapshot: Snapshot) -> bytes:
    """The ``watching`` message plus ``views``, the state after every step."""
    watching = snapshot.watching
    views = [snapshot.view_at(k) for k in range(watching["step"] + 1)]
    return protocol.encode_large({**watching, "views": views}, "history",
                                 "views").encode("utf-8", "replace")


def tournament_body(records: RecordReads, tid: str) -> Rendered:
    try:
        t = records.get_tournament(tid)
    except GameError:
        raise NotFound(f"no tournament {tid!r}") from None
    matches = records.list_matches(tid, 100_000)
    body = pages.tournament_page(t, *tournament_tables(t, matches),
                                 matches).encode("utf-8", "replace")
    return body, HTML, t["status"] != "running"


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
