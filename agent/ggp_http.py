"""The GGP HTTP protocol without I/O: bytes in, messages out, reply bytes back.

What a GGP game manager (ggp-base's GameServer) sends and expects is written down in
``../shared/protocols/ggp-http.md``. This module only parses and builds; the asyncio
server (:mod:`agent.http_player`) feeds it bytes and writes what it returns, so all
of it is tested without sockets.

1. :class:`RequestReader` collects one HTTP/1.x request from chunks: h11 parses it
   (request line, headers, a ``Content-Length`` or chunked body), within our size
   limits.
2. :func:`message_text` takes the GGP message from a POST body or a
   ``GET /<url-encoded message>`` (``None`` for ``OPTIONS``).
3. :func:`parse_message` reads the S-expression: the head word is
   case-insensitive, parentheses may be padded or not; rules and moves are kept as
   KIF text (the GDL layer parses them), moves rendered canonically.
4. :func:`http_reply` builds ``HTTP/1.0 200 OK`` with ``Content-Type: text/acl``, the
   exact ``Content-Length`` and the CORS headers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NoReturn
from urllib.parse import unquote

import h11

from solvers.errors import FormatError

MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024  # a START carries the whole game

CORS_HEADERS = (
    ("Access-Control-Allow-Origin", "*"),
    ("Access-Control-Allow-Methods", "POST, GET, OPTIONS"),
    ("Access-Control-Allow-Headers", "Content-Type"),
    ("Access-Control-Allow-Age", "86400"),
)


class HttpError(FormatError):
    """A request that is not well-formed HTTP (answered with 400 Bad Request)."""


@dataclass(frozen=True)
class HttpRequest:
    method: str  # upper case
    target: str
    headers: dict[str, str]  # names lower case
    body: bytes


_HEAD_END = re.compile(rb"\n\r?\n")
_CONTENT_LENGTH = re.compile(rb"(?im)^(content-length:)([^\r\n]*)")
_HTTP11_REQUEST_LINE = re.compile(rb"\A[^\r\n]* HTTP/1\.1\r?\n")
_HOST = re.compile(rb"(?im)^host:")


class RequestReader:
    """Feed bytes with :meth:`feed`; it returns the request once complete, else None.

    h11 parses the request (one request: the connection closes after its reply). Two
    things the GGP player has always accepted and h11 refuses are smoothed over in the
    head before h11 sees it (:func:`_tolerated`); the size limits are ours."""

    def __init__(self) -> None:
        self._parser = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEADER_BYTES)
        self._head = bytearray()  # what came before the head's blank line, kept for h11
        self._head_given = False  # h11 has the whole head
        self._request: h11.Request | None = None
        self._body = bytearray()
        self._complete: HttpRequest | None = None

    def feed(self, data: bytes) -> HttpRequest | None:
        if self._complete is not None or not data:
            return self._complete
        if not self._head_given:
            self._head += data
            end = _HEAD_END.search(self._head)
            if end is None:
                if len(self._head) > MAX_HEADER_BYTES:
                    raise HttpError(f"request headers longer than {MAX_HEADER_BYTES} bytes")
                return None
            data = _tolerated(bytes(self._head[:end.end()])) + bytes(self._head[end.end():])
            self._head_given, self._head = True, bytearray()
        self._parser.receive_data(data)
        return self._next()

    def at_eof(self) -> NoReturn:
        """The peer closed its side before the request was complete (a request without
        a body length has none: it is complete at its head): the HttpError saying what
        is missing."""
        if self._request is None:
            raise HttpError("connection closed before the request headers ended")
        if any(name == b"content-length" for name, _ in self._request.headers):
            raise HttpError("connection closed before Content-Length bytes of body arrived")
        raise HttpError("connection closed before the chunked body ended")

    def _next(self) -> HttpRequest | None:
        while True:
            try:
                event = self._parser.next_event()
            except h11.RemoteProtocolError as exc:
                raise HttpError(f"malformed HTTP request: {exc}") from None
            if event is h11.NEED_DATA:
                return None
            if isinstance(event, h11.Request):
                self._request = event
                _check_length(event)
            elif isinstance(event, h11.Data):
                self._body += event.data
                if len(self._body) > MAX_BODY_BYTES:
                    raise HttpError(f"body larger than {MAX_BODY_BYTES} bytes")
            elif isinstance(event, h11.EndOfMessage):
                request = self._request
                self._complete = HttpRequest(
                    request.method.decode("ascii").upper(), request.target.decode("iso-8859-1"),
                    {name.decode("ascii"): value.decode("iso-8859-1")
                     for name, value in request.headers}, bytes(self._body))
                return self._complete
            else:  # (no other event comes before the end of the first request)
                raise HttpError(f"unexpected HTTP event {type(event).__name__}")


def _tolerated(head: bytes) -> bytes:
    """The request head as h11 accepts it, for what the player always took: a
    ``Content-Length`` with leading zeros (h11's ``int()`` refuses 4,300+ digits: one
    of more digits than ``MAX_BODY_BYTES`` is refused here, as larger than it), and
    an HTTP/1.1 request without ``Host`` (an empty one is added)."""
    def length(match: re.Match[bytes]) -> bytes:
        items = []
        for item in match.group(2).split(b","):
            digits = item.strip()
            if digits.isdigit():
                digits = digits.lstrip(b"0") or b"0"
                if len(digits) > len(str(MAX_BODY_BYTES)):
                    raise HttpError(f"body of {digits[:40].decode()} bytes is larger than "
                                    f"{MAX_BODY_BYTES}")
                item = b" " + digits
            items.append(item)
        return match.group(1) + b",".join(items)

    head = _CONTENT_LENGTH.sub(length, head)
    line = _HTTP11_REQUEST_LINE.match(head)
    if line is not None and not _HOST.search(head):
        head = head[:line.end()] + b"Host: \r\n" + head[line.end():]
    return head


def _check_length(request: h11.Request) -> None:
    for name, value in request.headers:
        if name == b"content-length" and int(value) > MAX_BODY_BYTES:
            raise HttpError(f"body of {int(value)} bytes is larger than {MAX_BODY_BYTES}")


def message_text(request: HttpRequest) -> str | None:
    """The GGP message in a request; None for OPTIONS (answered with an empty 200)."""
    if request.method == "OPTIONS":
        return None
    if request.method == "POST":
        return request.body.decode("utf-8", errors="replace")
    if request.method == "GET":
        return unquote(request.target.lstrip("/"))
    raise HttpError(f"unsupported HTTP method {request.method}: expected POST, GET or OPTIONS")


def http_reply(body: str, status: str = "200 OK") -> bytes:
    """A complete HTTP/1.0 reply carrying ``body`` as ``text/acl``."""
    payload = body.encode("utf-8")
    lines = [f"HTTP/1.0 {status}", "Content-Type: text/acl",
             f"Content-Length: {len(payload)}"]
    lines += [f"{name}: {value}" for name, value in CORS_HEADERS]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii") + payload


# -- GGP messages ---------------------------------------------------------------------

@dataclass(frozen=True)
class Info:
    pass


@dataclass(frozen=True)
class Preview:
    rules: str  # KIF text of the rules
    previewclock: float


@dataclass(frozen=True)
class Start:
    match_id: str
    role: str
    rules: str  # KIF text of the rules
    startclock: float
    playclock: float


# A GDL-II PLAY or STOP (``../shared/protocols/ggp-ii.md``) carries, instead of the
# joint move, our observation {"turn": int, "last_move": str | None, "percepts":
# list[str] | None} (:mod:`agent.search.belief`), as the websocket protocol does.
Moves = tuple[str, ...] | dict[str, Any] | None


@dataclass(frozen=True)
class Play:
    match_id: str
    moves: Moves  # previous joint move in role order; None at the first step


@dataclass(frozen=True)
class Stop:
    match_id: str
    moves: Moves


@dataclass(frozen=True)
class Abort:
    match_id: str


Message = Info | Preview | Start | Play | Stop | Abort


@dataclass(frozen=True)
class _Atom:
    text: str


@dataclass(frozen=True)
class _List:
    items: tuple[_Atom | _List, ...]
    start: int  # offsets of '(' and one past ')' in the message text
    end: int


_TOKEN = re.compile(r";[^\n]*|[()]|[^\s();]+")      # whitespace is skipped by search
_PAREN = re.compile(r";[^\n]*|[()]")
MAX_DEPTH = 100
# messages whose list arguments are only sliced out of the text (the rules of START and
# PREVIEW): their insides are checked for balance, not built into terms, so a 10 MB
# START is read in well under a second, not 15 s of the start clock
_SLICED = frozenset({"start", "preview"})


def _read_sexpr(text: str) -> _List:
    """The one top-level list of ``text``, with offsets so sub-lists can be sliced."""
    stack: list[tuple[int, list[_Atom | _List]]] = []
    top: list[_Atom | _List] = []
    items = top
    pos = 0
    while (match := _TOKEN.search(text, pos)) is not None:
        token, pos = match.group(), match.end()
        if token[0] == ";":
            continue
        if token == "(":
            if len(stack) >= MAX_DEPTH:
                raise FormatError(f"message nested deeper than {MAX_DEPTH} levels")
            if len(stack) == 1 and items and isinstance(items[0], _Atom) \
                    and items[0].text.lower() in _SLICED:
                pos = _skip_list(text, pos, len(stack) + 1)
                items.append(_List((), match.start(), pos))
                continue
            stack.append((match.start(), items))
            items = []
        elif token == ")":
            if not stack:
                raise FormatError(f"unbalanced ')' at offset {match.start()} of the message")
            start, outer = stack.pop()
            outer.append(_List(tuple(items), start, match.end()))
            items = outer
        else:
            items.append(_Atom(token))
    if stack:
        raise FormatError("unbalanced '(' in the message: expected ')' before its end")
    if len(top) != 1 or not isinstance(top[0], _List) or not top[0].items:
        raise FormatError("expected one message of the form (TYPE arguments...)")
    return top[0]


def _skip_list(text: str, pos: int, depth: int) -> int:
    """The offset one past the ``)`` closing the list opened just before ``pos`` at
    nesting ``depth``; FormatError if it never closes or nests past MAX_DEPTH."""
    level = 1
    for match in _PAREN.finditer(text, pos):
        token = match.group()
        if token == "(":
            level += 1
            if depth + level - 1 > MAX_DEPTH:
                raise FormatError(f"message nested deeper than {MAX_DEPTH} levels")
        elif token == ")":
            level -= 1
            if level == 0:
                return match.end()
    raise FormatError("unbalanced '(' in the message: expected ')' before its end")


def kif_of(node: _Atom | _List) -> str:
    """Canonical KIF of a term: ``(mark 1 3)``, ``noop``."""
    if isinstance(node, _Atom):
        return node.text
    return "(" + " ".join(kif_of(item) for item in node.items) + ")"


def _atom(node: _Atom | _List, what: str) -> str:
    if not isinstance(node, _Atom):
        raise FormatError(f"expected {what}, found a list {kif_of(node)[:60]}")
    return node.text


def _clock(node: _Atom | _List, what: str) -> float:
    text = _atom(node, what)
    try:
        value = float(text)
    except ValueError:
        raise FormatError(f"expected {what} in seconds, found {text!r}") from None
    if not value >= 0:  # NaN or negative; a huge one is bounded by the player (max_clock)
        raise FormatError(f"expected {what} in seconds, found {text!r}")
    return value


def _rules(text: str, node: _Atom | _List) -> str:
    if not isinstance(node, _List):
        raise FormatError("expected the game rules as a parenthesised list")
    return text[node.start + 1:node.end - 1]


def _moves(node: _Atom | _List) -> tuple[str, ...] | None:
    if isinstance(node, _Atom):
        if node.text.lower() == "nil":
            return None
        raise FormatError(f"expected NIL or a list of moves, found {node.text!r}")
    return tuple(kif_of(item) for item in node.items)


_ARITY = {"info": 0, "preview": 2, "start": 5, "play": 2, "stop": 2, "abort": 1}
_GDL2_ARITY = 4  # PLAY and STOP of GDL-II: match id, turn, last move, percepts


def _gdl2_observation(args: tuple[_Atom | _List, ...]) -> dict[str, Any]:
    """``<TURN> <LASTMOVE> <PERCEPTS>`` as an observation; NIL and ``()`` are no percepts."""
    turn = _atom(args[0], "a turn number")
    if not (turn.isascii() and turn.isdigit() and len(turn) <= 9):
        raise FormatError(f"expected a turn number, found {turn[:40]!r}")
    move = args[1]
    last = None if isinstance(move, _Atom) and move.text.lower() == "nil" else kif_of(move)
    seen = args[2]
    if isinstance(seen, _Atom):
        if seen.text.lower() != "nil":
            raise FormatError(f"expected NIL or a list of percepts, found {seen.text[:40]!r}")
        percepts = None if last is None else []
    else:
        percepts = sorted(kif_of(item) for item in seen.items)
    return {"turn": int(turn), "last_move": last, "percepts": percepts}


def parse_message(text: str) -> Message:
    """One GGP message (see the module docstring); :class:`FormatError` if malformed."""
    root = _read_sexpr(text)
    head, args = root.items[0], root.items[1:]
    kind = _atom(head, "a message type").lower()
    if kind not in _ARITY:
        raise FormatError(f"unknown message type {kind.upper()!r}: expected one of "
                          + ", ".join(k.upper() for k in _ARITY))
    gdl2 = kind in ("play", "stop") and len(args) == _GDL2_ARITY
    if len(args) != _ARITY[kind] and not gdl2:
        also = f" (or {_GDL2_ARITY}, GDL-II)" if kind in ("play", "stop") else ""
        raise FormatError(f"{kind.upper()} expects {_ARITY[kind]} arguments{also}, "
                          f"found {len(args)}")
    if kind == "info":
        return Info()
    if kind == "preview":
        return Preview(_rules(text, args[0]), _clock(args[1], "a preview clock"))
    match_id = _atom(args[0], "a match id")
    if kind == "start":
        return Start(match_id, _atom(args[1], "a role name"), _rules(text, args[2]),
                     _clock(args[3], "a start clock"), _clock(args[4], "a play clock"))
    if kind in ("play", "stop"):
        moves = _gdl2_observation(args[1:]) if gdl2 else _moves(args[1])
        return (Play if kind == "play" else Stop)(match_id, moves)
    return Abort(match_id)


def info_reply(name: str, busy: bool) -> str:
    return "busy" if busy else f"( ( name {name} ) ( status available ) )"
