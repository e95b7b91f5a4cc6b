"""The GGP HTTP protocol as a game manager speaks it, sans I/O.

``../shared/protocols/ggp-http.md`` describes it (ggp-base's GameServer): one
``POST /`` per message over a fresh HTTP/1.0 connection, the message (a KIF list) as
the body, the reply as the body of the answer. This module builds the request bytes
and the messages (START, PLAY, STOP, ABORT, INFO; PLAY and STOP also in the GDL-II
form of ``../shared/protocols/ggp-ii.md``) and parses a reply into a move term;
``server/players/http.py`` does the socket work.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

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


def parse_http_reply(data: bytes) -> str:
    """The trimmed body of an HTTP reply (read to close); like ggp-base, ignore the status."""
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        head, sep, body = data.partition(b"\n\n")
    if not sep:
        raise FormatError("GGP player reply is not an HTTP response")
    for line in head.split(b"\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                body = body[:max(0, int(value.strip()))]
            except ValueError:
                pass
    return body.decode("utf-8", "replace").strip()


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
