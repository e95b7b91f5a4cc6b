"""The websocket match protocol, sans I/O: parse what clients send, build what we send.

The wire format is described in ``server/PROTOCOL.md``. Nothing here touches a socket:
:func:`parse_message` turns one received frame into a validated ``dict`` (or raises
:class:`ProtocolError` with the error code the client gets back), and the builders
return ``dict`` messages that :func:`encode` turns into one text frame. The server's
I/O layer (``server/app.py``) and the tests use these functions directly.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from solvers.errors import GameError

PROTOCOL_VERSION = 1
MAX_MESSAGE_BYTES = 1 << 20
SERVER_NAME = "ggp-server"

NAME_PATTERN = re.compile(r"[A-Za-z0-9_.:@-]{1,64}")
TOKEN_PATTERN = re.compile(r"[\x21-\x7e]{8,128}")
MATCH_ID_PATTERN = re.compile(r"[A-Za-z0-9_.:@-]{1,128}")
MAX_MOVE_CHARS = 4096
MAX_ECHO_CHARS = 200  # of an illegal move, in the ``IL`` fault recorded and sent back
MAX_SEED = (1 << 63) - 1  # the records' INTEGER column (SQLite: signed 64 bits)
MAX_COUNT = 1 << 31  # steps, max_matches, protocol version: far above any real use
MAX_NONCE_BYTES = 256  # of a ping's nonce as JSON: a pong never grows what a client sends


class ProtocolError(GameError):
    """A message the server refuses; ``code`` is the ``error`` code sent back."""

    def __init__(self, code: str, message: str, match: str | None = None,
                 ref: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.match = match
        self.ref = ref

    def to_message(self) -> dict[str, Any]:
        return error(self.code, self.message, match=self.match, ref=self.ref)


# Field kinds a client message may carry: each checks and returns the value.
def _str(pattern: re.Pattern[str] | None = None, max_chars: int = 1 << 16):
    def check(value: Any) -> str:
        if not isinstance(value, str) or len(value) > max_chars:
            raise ValueError("a string")
        if pattern is not None and not pattern.fullmatch(value):
            raise ValueError(f"a string matching {pattern.pattern}")
        return value
    return check


def _int(minimum: int = 0, maximum: int = MAX_COUNT):
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) \
                or not minimum <= value <= maximum:
            raise ValueError(f"an integer in [{minimum}, {maximum}]")
        return value
    return check


def _clock(value: Any) -> float:
    # (compared, not math.isfinite: that overflows on a 400-digit int; NaN fails the range)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 86400:
        raise ValueError("a number of seconds in (0, 86400]")
    return float(value)


def _any(value: Any) -> Any:
    return value


def _nonce(value: Any) -> Any:
    if len(json.dumps(value)) > MAX_NONCE_BYTES:
        raise ValueError(f"at most {MAX_NONCE_BYTES} bytes of JSON")
    return value


def _player_list(value: Any) -> list[str]:
    if not isinstance(value, list) or not 1 <= len(value) <= 64 \
            or not all(isinstance(v, str) and 0 < len(v) <= 512 for v in value):
        raise ValueError("a list of player specs (strings)")
    return value


_NAME = _str(NAME_PATTERN)
_TOKEN = _str(TOKEN_PATTERN)
_MATCH = _str(MATCH_ID_PATTERN)
_ADMIN = _str(max_chars=256)

# type -> {field: (check, required)}
CLIENT_MESSAGES: dict[str, dict[str, tuple[Any, bool]]] = {
    # ``admin_token``: the operator's token registers a name that is new to the server
    "hello": {"name": (_NAME, True), "token": (_TOKEN, True),
              "max_matches": (_int(1), False), "protocol": (_int(1), False),
              "admin_token": (_ADMIN, False)},
    "ready": {"match": (_MATCH, True)},
    # ``move`` itself is checked by the match (a non-string move is ``IL null``, not an error)
    "move": {"match": (_MATCH, True), "step": (_int(1), True), "move": (_any, True),
             "role": (_str(max_chars=256), False)},
    "rejoin": {"match": (_MATCH, True), "token": (_TOKEN, True), "name": (_NAME, False)},
    "ping": {"nonce": (_nonce, False)},
    "pong": {"nonce": (_nonce, False)},
    "create": {"game": (_str(max_chars=1024), True), "players": (_player_list, True),
               "startclock": (_clock, False), "playclock": (_clock, False),
               "seed": (_int(0, MAX_SEED), False), "admin_token": (_ADMIN, False)},
    "abort": {"match": (_MATCH, True), "admin_token": (_ADMIN, False)},
    "list": {"admin_token": (_ADMIN, False)},
    # spectators (no login, no token: read-only; the admin token lifts the live
    # redaction of hidden-information matches)
    "watch": {"match": (_MATCH, True), "admin_token": (_ADMIN, False)},
    "unwatch": {"match": (_MATCH, True)},
}


def parse_message(data: str | bytes, max_bytes: int = MAX_MESSAGE_BYTES) -> dict[str, Any]:
    """One received frame -> a validated message ``dict`` (raises :class:`ProtocolError`)."""
    if isinstance(data, bytes | bytearray | memoryview):
        raise ProtocolError("bad-json", "binary frames are not part of the protocol; "
                            "send JSON text frames")
    if len(data) > max_bytes and len(data.encode("utf-8", "surrogatepass")) > max_bytes:
        raise ProtocolError("too-big", f"message larger than {max_bytes} bytes")
    try:
        message = json.loads(data, parse_constant=_no_constant, parse_float=_finite_float)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError("bad-json", f"not JSON: {str(exc)[:200]}") from None
    # a text frame is valid UTF-8, but a JSON escape can still make a lone surrogate
    # ("\\ud800"), which no record, page or reply could encode
    if ("\\u" in data or not data.isascii()) and not is_unicode(message):
        raise ProtocolError("bad-json", "a string holds a lone surrogate (\\ud800-\\udfff): "
                            "not Unicode text")
    if not isinstance(message, dict):
        raise ProtocolError("bad-json", "a message is a JSON object with a 'type' field")
    kind = message.get("type")
    if not isinstance(kind, str):
        raise ProtocolError("bad-field", "missing 'type' (a string)")
    fields = CLIENT_MESSAGES.get(kind)
    if fields is None:
        raise ProtocolError("unknown-type", f"unknown message type {kind[:64]!r}", ref=kind[:64])
    match = message.get("match") if isinstance(message.get("match"), str) else None
    out: dict[str, Any] = {"type": kind}
    for name, (check, required) in fields.items():
        if name not in message:
            if required:
                raise ProtocolError("bad-field", f"{kind}: missing field {name!r}",
                                    match=match, ref=kind)
            continue
        try:
            out[name] = check(message[name])
        except ValueError as exc:
            raise ProtocolError("bad-field", f"{kind}: field {name!r} must be {exc}",
                                match=match, ref=kind) from None
    return out


def is_unicode(value: Any) -> bool:
    """Whether every string in a JSON value (keys included) is valid Unicode text."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return False
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999: Python reads infinity, which JSON cannot carry
        raise ValueError(f"number {text[:40]} out of range")
    return value


def encode(message: Any) -> str:
    """A message as one compact JSON text frame (ValueError rather than invalid JSON)."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def encode_large(message: dict[str, Any], *lists: str) -> str:
    """:func:`encode` with the list fields ``lists`` encoded item by item: the same JSON
    (those fields last), without one long call that holds the interpreter lock, so a page
    thread encoding a long match never stalls the event loop."""
    rest = {k: v for k, v in message.items() if k not in lists}
    tail = [f"{encode(k)}:[" + ",".join(encode(item) for item in message[k]) + "]"
            for k in lists if k in message]
    text = encode(rest)
    if not tail:
        return text
    return text[:-1] + ("," if rest else "") + ",".join(tail) + "}"


# Server -> client messages (see PROTOCOL.md for each field).

def welcome(name: str, heartbeat: float) -> dict[str, Any]:
    return {"type": "welcome", "name": name, "protocol": PROTOCOL_VERSION,
            "heartbeat": heartbeat, "server": SERVER_NAME}


def offer(match: str, role: str, roles: list[str], game: dict[str, str], startclock: float,
          playclock: float, step: int = 0, history: list[Any] | None = None,
          ) -> dict[str, Any]:
    """An offer; with ``history`` (the observation of every finished step, in order)
    it is the offer of a rejoin."""
    # never the match seed: it drives chance, and an agent must not foresee the deal
    message = {"type": "offer", "match": match, "role": role, "roles": list(roles),
               "game": game, "startclock": startclock, "playclock": playclock, "step": step}
    if history is not None:
        message["rejoin"] = True
        message["history"] = list(history)
    return message


def request(match: str, step: int, role: str, observation: Any, legal: list[str],
            deadline: float) -> dict[str, Any]:
    return {"type": "request", "match": match, "step": step, "role": role,
            "observation": observation, "legal": list(legal), "deadline": round(deadline, 3)}


def step_result(match: str, step: int, role: str, move: str | None, error_code: str,
                observation: Any) -> dict[str, Any]:
    return {"type": "step", "match": match, "step": step, "role": role, "move": move,
            "error": error_code, "observation": observation}


def end(match: str, payoffs: list[float], role_index: int, observation: Any) -> dict[str, Any]:
    return {"type": "end", "match": match, "status": "completed", "payoffs": list(payoffs),
            "payoff": payoffs[role_index], "observation": observation}


def end_summary(match: str, payoffs: list[float] | None) -> dict[str, Any]:
    """``end`` for a seat that rejoins a finished match (no role-specific fields)."""
    return {"type": "end", "match": match, "status": "completed", "payoffs": payoffs}


def abort(match: str, reason: str) -> dict[str, Any]:
    return {"type": "abort", "match": match, "reason": reason}


def error(code: str, message: str, match: str | None = None,
          ref: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "error", "code": code, "message": message}
    if match is not None:
        out["match"] = match
    if ref is not None:
        out["ref"] = ref
    return out


def ping(nonce: Any) -> dict[str, Any]:
    return {"type": "ping", "nonce": nonce}


def pong(nonce: Any) -> dict[str, Any]:
    return {"type": "pong", "nonce": nonce}


def created(match: str, roles: list[str]) -> dict[str, Any]:
    return {"type": "created", "match": match, "roles": list(roles)}


def finished(match: str, status: str, payoffs: list[float] | None) -> dict[str, Any]:
    return {"type": "finished", "match": match, "status": status, "payoffs": payoffs}


def aborted(match: str) -> dict[str, Any]:
    return {"type": "aborted", "match": match}


def matches(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "matches", "matches": rows}


# Moves: GDL terms compare modulo whitespace around parentheses.

_KIF_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def normalize_move(fmt: str, move: str) -> str:
    """The canonical form a move is compared in (GDL: ``( mark 1 3 )`` -> ``(mark 1 3)``)."""
    if fmt != "gdl":
        return move
    out: list[str] = []
    for token in _KIF_TOKEN.findall(move):
        if out and out[-1] != "(" and token != ")":
            out.append(" ")
        out.append(token)
    return "".join(out)


def match_legal_move(fmt: str, move: Any, legal: list[str]) -> tuple[str | None, str]:
    """(the legal move meant, ``""``) or (``None``, the GGP error code ``IL ...``)."""
    if not isinstance(move, str) or len(move) > MAX_MOVE_CHARS or not move.strip():
        return None, "IL null"
    if move in legal:  # the common case: the agent echoed one of the strings it was given
        return move, ""
    wanted = normalize_move(fmt, move.strip())
    for candidate in legal:
        if normalize_move(fmt, candidate) == wanted:
            return candidate, ""
    return None, f"IL {echo(wanted)}"


def echo(text: str) -> str:
    """A client's string as we store and send it back: at most ``MAX_ECHO_CHARS``, a longer
    one cut and marked with its length."""
    if len(text) <= MAX_ECHO_CHARS:
        return text
    return f"{text[:MAX_ECHO_CHARS]}...[cut, {len(text)} chars]"
