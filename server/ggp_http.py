"""The GGP HTTP protocol as a game manager speaks it, sans I/O.

``../shared/protocols/ggp-http.md`` describes it (ggp-base's GameServer): one
``POST /`` per message over a fresh HTTP/1.0 connection, the message (a KIF list) as
the body, the reply as the body of the answer. This module builds the request bytes
and the messages (START, PLAY, STOP, ABORT, INFO; PLAY and STOP also in the GDL-II
form of ``../shared/protocols/ggp-ii.md``), reads the HTTP reply (:class:`HttpReply`,
on h11) and parses its body into a move term; ``server/players/http.py`` does the
socket work.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import h11

from server.protocol import normalize_move
from solvers.errors import FormatError

MAX_REPLY_BYTES = 1 << 16
_COMMENT = re.compile(r";[^\n]*")


def start_message(match_id: str, role: str, rules: str, startclock: float,
                  playclock: float) -> str:
    return f"( START {match_id} {role} ( {rules} ) {_seconds(startclock)} {_seconds(playclock)} )"


def play_message(match_id: str, last_joint: Sequence[str] | None) -> str:
    return f"( PLAY {match_id} {_joint(last_joint)} )"


def stop_message(match_id: str, last_joint: Sequence[str] | None) -> str:
    return f"( STOP {match_id} {_joint(last_joint)} )"


def play_message_ii(match_id: str, turn: int, last_move: str | None,
                    percepts: Sequence[str] | None) -> str:
    """GDL-II PLAY: the player's own last move and its percepts (NIL NIL at turn 0)."""
    return f"( PLAY {match_id} {_ii(turn, last_move, percepts)} )"


def stop_message_ii(match_id: str, turn: int, last_move: str | None,
                    percepts: Sequence[str] | None) -> str:
    return f"( STOP {match_id} {_ii(turn, last_move, percepts)} )"


def abort_message(match_id: str) -> str:
    return f"( ABORT {match_id} )"


def info_message() -> str:
    return "( INFO )"


def rules_text(kif: str) -> str:
    """A GDL file's text as the rules of a one-line START: comments dropped, spaces collapsed."""
    return " ".join(_COMMENT.sub(" ", kif).split())


def _seconds(clock: float) -> str:
    # GGP clocks are whole seconds; never round a clock down to zero
    return str(max(1, round(clock)))


def _joint(last_joint: Sequence[str] | None) -> str:
    if last_joint is None:
        return "NIL"
    return "( " + " ".join(last_joint) + " )"


def _ii(turn: int, last_move: str | None, percepts: Sequence[str] | None) -> str:
    """``<TURN> <LASTMOVE> <PERCEPTS>``: no percepts after a move is ``()``, before any ``NIL``."""
    if percepts is None:
        seen = "NIL"
    else:
        seen = "( " + " ".join(percepts) + " )" if percepts else "()"
    return f"{turn} {last_move or 'NIL'} {seen}"


def http_request(host: str, port: int, body: str, receiver: str = "player") -> bytes:
    """The bytes of one ggp-base style ``POST /`` carrying ``body``."""
    payload = body.encode("utf-8")
    head = (f"POST / HTTP/1.0\r\nAccept: text/delim\r\nHost: {host}:{port}\r\n"
            f"Sender: GAMESERVER\r\nReceiver: {receiver}\r\nContent-Type: text/acl\r\n"
            f"Content-Length: {len(payload)}\r\n\r\n")
    return head.encode("ascii") + payload


class HttpReply:
    """A player's HTTP/1.x reply to one request, read as its bytes arrive (sans I/O).

    :meth:`feed` takes what the socket gave (``b""`` at its end) and says when the
    reply is whole: at the end of its body (``Content-Length``, chunked) or, without
    a length, at the end of the stream. Like ggp-base, the status is not looked at.
    A reply that is not HTTP, ends early or passes ``limit`` bytes is a FormatError."""

    def __init__(self, limit: int = MAX_REPLY_BYTES) -> None:
        self.limit = limit
        self.size = 0
        self.body = bytearray()
        self._http = h11.Connection(h11.CLIENT, max_incomplete_event_size=limit)
        # h11 reads a response to the request it sent: tell it ours was sent (the
        # bytes themselves are http_request's, ggp-base's HTTP/1.0 form)
        self._http.send(h11.Request(method="POST", target="/", headers=[
            ("Host", "player"), ("Content-Length", "0"), ("Connection", "close")]))
        self._http.send(h11.EndOfMessage())

    def feed(self, data: bytes) -> bool:
        """Take the next bytes of the stream (``b""``: it ended); True once the reply is whole."""
        self.size += len(data)
        if self.size > self.limit:
            raise FormatError(f"GGP player reply larger than {self.limit} bytes")
        try:
            self._http.receive_data(data)
            while True:
                event = self._http.next_event()
                if event is h11.NEED_DATA:
                    if not data:
                        raise FormatError("GGP player reply ended early")
                    return False
                if isinstance(event, h11.Data):
                    self.body += event.data
                elif isinstance(event, h11.EndOfMessage):
                    return True
                elif isinstance(event, h11.ConnectionClosed):
                    raise FormatError("GGP player closed the connection without a reply")
        except h11.ProtocolError as exc:
            raise FormatError(f"GGP player reply is not an HTTP response ({exc})") from None

    def text(self) -> str:
        """The body, decoded and trimmed."""
        return bytes(self.body).decode("utf-8", "replace").strip()


def parse_http_reply(data: bytes) -> str:
    """The trimmed body of a whole HTTP reply (``data``: the stream to its end)."""
    reply = HttpReply()
    if not (reply.feed(data) or reply.feed(b"")):
        raise FormatError("GGP player reply ended early")
    return reply.text()


def parse_move_reply(reply: str) -> str | None:
    """A PLAY reply as one move term (``None`` when it is not a single term)."""
    text = reply.strip()
    if not text:
        return None
    depth = 0
    for i, char in enumerate(text):
        depth += (char == "(") - (char == ")")
        if depth < 0 or (depth == 0 and char == ")" and i != len(text) - 1):
            return None
    if depth != 0:
        return None
    if not text.startswith("(") and any(c.isspace() or c in "()" for c in text):
        return None
    return normalize_move("gdl", text)
