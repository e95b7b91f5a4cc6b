"""The fuzzer's mutations: game texts, JSON messages and HTTP requests.

Mutations follow tests/test_gdl_fuzz.py: 1-4 token edits (drop a token, repeat another,
put a hostile one instead or before), or numbers swapped for hostile ones (2**64, 5,000
digits, NaN, 1e308, 5/6) so the file stays well-formed; messages also get field-level
edits (a field dropped, added or set to a hostile value: 2**64, NaN, 1e308, -1, long
strings, deep lists); requests keep their HTTP framing most of the time. Every
mutation draws from the ``random.Random`` it is given (seeded: the same mutants again).
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

HOSTILE_TOKENS = ["(", ")", "{", "}", "[", "]", '"', "''", ",", ";", "-1", "0", "1e308",
                  "-1e308", "nan", "inf", "1/0", "0/0", "18446744073709551616",
                  "9" * 400, "0.3333333", "?x", "not", "or", "distinct", "<=", "\\", "\x00",
                  "é", "node", "player", "chance", "terminal", "payoffs", "p", "c", "t"]
HOSTILE_VALUES: list[Any] = [None, True, -1, 0, 2**63, 2**64, 10**400, 1e308, float("nan"),
                             float("inf"), -0.5, "", "x" * 5000, "../../etc/passwd", [], {},
                             [[[[[]]]]], {"type": "ping"}, "\u0000", "ws:fuzz", "random",
                             "\ud800", "a\udfffb"]  # (lone surrogates: JSON escapes)
HOSTILE_NUMBERS = ["0", "1", "-1", "2", "0.5", "1/3", "5/6", "-0", "1e308", "1e-320", "nan", "inf",
                   "18446744073709551616", "9" * 400, "9" * 5000, "0.1", "100", "-100",
                   "3.0000000001", "1" + "0" * 30 + "/3"]
_NUMBER = re.compile(r"-?\d[\d./eE+-]*")
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\s+|[()\[\]{},:;=]|[^\s()\[\]{},:;="]+')


def mutate_text(text: str, rng: random.Random) -> str:
    """1-4 token edits (whitespace kept, so lines stay lines), sometimes a truncation.
    A number swapped for another (a hostile one) keeps the file well-formed, so those
    mutants reach the checks behind the parser (probabilities, payoffs, sizes)."""
    tokens = _TOKEN.findall(text)
    numbers = [i for i, t in enumerate(tokens) if _NUMBER.fullmatch(t)]
    if numbers and rng.random() < 0.4:
        for _ in range(rng.choice((1, 1, 2))):
            tokens[rng.choice(numbers)] = rng.choice(HOSTILE_NUMBERS)
        return "".join(tokens)
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 4))):
        words = [k for k, t in enumerate(tokens) if not t.isspace()]
        if not words:
            tokens.append(rng.choice(HOSTILE_TOKENS))
            continue
        where, other = rng.choice(words), tokens[rng.choice(words)]
        # one of: drop the token, repeat another before it, or put a hostile one
        # instead of it or before it
        tokens[where:where + 1] = rng.choice(
            ([], [other, tokens[where]], [rng.choice(HOSTILE_TOKENS)],
             [f" {rng.choice(HOSTILE_TOKENS)} ", tokens[where]]))
    out = "".join(tokens)
    if rng.random() < 0.05:
        out = out[:rng.randrange(len(out) + 1)]
    return out


def mutate_message(message: dict[str, Any], rng: random.Random) -> str:
    """A JSON message with 1-3 field edits, then (a third of the time) token edits."""
    message = json.loads(json.dumps(message))
    for _ in range(rng.randint(1, 3)):
        keys = list(message)
        kind = rng.randrange(4)
        if kind == 0 and keys:
            message[rng.choice(keys)] = rng.choice(HOSTILE_VALUES)
        elif kind == 1 and keys:
            del message[rng.choice(keys)]
        elif kind == 2:
            message[rng.choice(["type", "match", "step", "move", "x", "token", "nonce"])] = \
                rng.choice(HOSTILE_VALUES)
        else:
            message = rng.choice([[message], {"type": message.get("type"), "inner": message},
                                  message])
            if not isinstance(message, dict):
                break
    text = json.dumps(message)
    return mutate_text(text, rng) if rng.random() < 0.35 else text


def mutate_request(request: bytes, rng: random.Random) -> bytes:
    """Most mutants keep HTTP framing (the body mutated, Content-Length fixed): they
    reach the layer behind HTTP; the rest mutate the raw bytes."""
    head, separator, body = request.partition(b"\r\n\r\n")
    if body and rng.random() < 0.7:
        payload = mutate_text(body.decode(), rng).encode("utf-8", "surrogatepass")
        head = re.sub(rb"Content-Length: \d+", b"Content-Length: %d" % len(payload), head)
        return head + separator + payload
    return mutate_text(request.decode("latin-1"), rng).encode("latin-1", "replace")
