"""The GGP HTTP protocol without I/O: bytes in, messages out, reply bytes back.

What a GGP game manager (ggp-base's GameServer) sends and expects is written down in
``../shared/protocols/ggp-http.md``. This module only parses and builds; the asyncio
server (:mod:`agent.http_player`) feeds it bytes and writes what it returns, so all
of it is tested without sockets.

1. :class:`RequestReader` collects one HTTP/1.x request (request line, headers, a
   ``Content-Length`` body) from chunks, within size limits.
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
from typing import Any
from urllib.parse import unquote

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


class RequestReader:
    """Feed bytes with :meth:`feed`; it returns the request once complete, else None."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._head: tuple[str, str, dict[str, str]] | None = None
        self._body_start = 0
        self._length = 0

    def feed(self, data: bytes) -> HttpRequest | None:
        self._buffer += data
        if self._head is None:
            end = self._buffer.find(b"\r\n\r\n")
            separator = 4
            if end < 0:  # tolerate bare LF line ends
                end, separator = self._buffer.find(b"\n\n"), 2
            if end < 0:
                if len(self._buffer) > MAX_HEADER_BYTES:
                    raise HttpError(f"request headers longer than {MAX_HEADER_BYTES} bytes")
                return None
            self._head = _parse_head(bytes(self._buffer[:end]))
            self._body_start = end + separator
            self._length = _content_length(self._head[2])
        if len(self._buffer) - self._body_start < self._length:
            return None
        method, target, headers = self._head
        body = bytes(self._buffer[self._body_start:self._body_start + self._length])
        return HttpRequest(method, target, headers, body)

    def at_eof(self) -> HttpRequest:
        """The request when the peer closed its side: a body without a length runs to EOF."""
        if self._head is None:
            raise HttpError("connection closed before the request headers ended")
        method, target, headers = self._head
        if "content-length" in headers:
            raise HttpError("connection closed before Content-Length bytes of body arrived")
        return HttpRequest(method, target, headers, bytes(self._buffer[self._body_start:]))


def _parse_head(head: bytes) -> tuple[str, str, dict[str, str]]:
    try:
        lines = head.decode("iso-8859-1").replace("\r\n", "\n").split("\n")
    except UnicodeDecodeError:  # iso-8859-1 decodes every byte; kept for clarity
        raise HttpError("request head is not text") from None
    parts = lines[0].split()
    if len(parts) != 3 or not parts[2].upper().startswith("HTTP/"):
        raise HttpError(f"bad request line {lines[0][:80]!r}: expected 'METHOD /path HTTP/1.x'")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line.strip():
            continue
        name, colon, value = line.partition(":")
        if not colon or not name.strip():
            raise HttpError(f"bad header line {line[:80]!r}: expected 'Name: value'")
        headers[name.strip().lower()] = value.strip()
    return parts[0].upper(), parts[1], headers


def _content_length(headers: dict[str, str]) -> int:
    raw = headers.get("content-length")
    if raw is None:
        return 0
    if not (raw.isascii() and raw.isdigit()):  # ('²'.isdigit(), but int() refuses it)
        raise HttpError(f"bad Content-Length {raw[:40]!r}: expected a number of bytes")
    digits = raw.lstrip("0") or "0"  # (int() refuses 4,300+ digits, leading zeros too)
    if len(digits) > len(str(MAX_BODY_BYTES)) or int(digits) > MAX_BODY_BYTES:
        raise HttpError(f"body of {digits[:40]} bytes is larger than {MAX_BODY_BYTES}")
    length = int(digits)
    return length


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
    preview_clock: float


@dataclass(frozen=True)
class Start:
    match_id: str
    role: str
    rules: str  # KIF text of the rules
    start_clock: float
    play_clock: float


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


_TOKEN = re.compile(r"\s+|;[^\n]*|[()]|[^\s();]+")
MAX_DEPTH = 100


def _read_sexpr(text: str) -> _List:
    """The one top-level list of ``text``, with offsets so sub-lists can be sliced."""
    stack: list[tuple[int, list[_Atom | _List]]] = []
    top: list[_Atom | _List] = []
    items = top
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token[0].isspace() or token[0] == ";":
            continue
        if token == "(":
            if len(stack) >= MAX_DEPTH:
                raise FormatError(f"message nested deeper than {MAX_DEPTH} levels")
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
