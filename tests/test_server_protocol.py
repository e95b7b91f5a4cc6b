"""The sans-I/O protocol: parsing client frames, building messages, moves; GGP HTTP text."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server import ggp_http, protocol
from server.players.spec import parse_spec
from server.protocol import ProtocolError, match_legal_move, normalize_move, parse_message
from solvers.errors import GameError


def error_code(data: str | bytes, max_bytes: int = protocol.MAX_MESSAGE_BYTES) -> str:
    with pytest.raises(ProtocolError) as info:
        parse_message(data, max_bytes)
    return info.value.code


def test_hello_and_move_parse() -> None:
    hello = parse_message('{"type":"hello","name":"alice","token":"0123456789ab","x":1}')
    assert hello == {"type": "hello", "name": "alice", "token": "0123456789ab"}
    move = parse_message('{"type":"move","match":"m.1","step":3,"move":"(mark 1 1)"}')
    assert move["step"] == 3 and move["move"] == "(mark 1 1)"


@pytest.mark.parametrize(("data", "code"), [
    (b'{"type":"ping"}', "bad-json"),
    ("not json", "bad-json"),
    ("[1, 2]", "bad-json"),
    ('{"kind":"hello"}', "bad-field"),
    ('{"type":"launch-missiles"}', "unknown-type"),
    ('{"type":"hello","name":"al ice","token":"0123456789ab"}', "bad-field"),
    ('{"type":"hello","name":"alice","token":"short"}', "bad-field"),
    ('{"type":"move","match":"m","step":0,"move":"x"}', "bad-field"),
    ('{"type":"move","match":"m","step":true,"move":"x"}', "bad-field"),
    ('{"type":"move","match":"m","move":"x"}', "bad-field"),
    ('{"type":"create","game":"g.kif","players":["random"],"playclock":-1}', "bad-field"),
    ("[" * 100000, "bad-json"),
])
def test_bad_frames_get_their_error_code(data: str | bytes, code: str) -> None:
    assert error_code(data) == code


def test_oversized_message() -> None:
    big = json.dumps({"type": "ping", "nonce": "x" * 2000})
    assert error_code(big, max_bytes=1000) == "too-big"


def test_error_message_carries_match_and_ref() -> None:
    with pytest.raises(ProtocolError) as info:
        parse_message('{"type":"move","match":"m.7","step":"two","move":"x"}')
    message = info.value.to_message()
    assert message == {"type": "error", "code": "bad-field", "match": "m.7", "ref": "move",
                       "message": message["message"]}


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200), st.binary(max_size=50),
                 st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                              lambda c: st.lists(c, max_size=4)
                              | st.dictionaries(st.sampled_from(
                                  ["type", "match", "step", "move", "name", "token", "x"]),
                                  c, max_size=5), max_leaves=12).map(json.dumps)))
def test_fuzz_parse_message_only_raises_protocol_errors(data: str | bytes) -> None:
    try:
        message = parse_message(data)
    except ProtocolError as exc:
        assert exc.code in {"bad-json", "bad-field", "unknown-type", "too-big"}
    else:
        assert message["type"] in protocol.CLIENT_MESSAGES


def test_builders_encode_to_json() -> None:
    request = protocol.request("m.1", 2, "xplayer", ["(mark 1 1)", "noop"], ["noop"], 4.99951)
    assert json.loads(protocol.encode(request)) == {
        "type": "request", "match": "m.1", "step": 2, "role": "xplayer",
        "observation": ["(mark 1 1)", "noop"], "legal": ["noop"], "deadline": 5.0}
    end = protocol.end("m.1", [100.0, 0.0], 1, None)
    assert end["payoff"] == 0.0 and end["status"] == "completed"


def test_gdl_moves_compare_modulo_spacing() -> None:
    assert normalize_move("gdl", "( mark  1 3 )") == "(mark 1 3)"
    assert normalize_move("gdl", "(f (g a) b)") == "(f (g a) b)"
    legal = ["(mark 1 3)", "noop"]
    assert match_legal_move("gdl", " ( mark 1 3 ) ", legal) == ("(mark 1 3)", "")
    assert match_legal_move("gdl", "(mark 3 3)", legal) == (None, "IL (mark 3 3)")
    assert match_legal_move("gdl", 7, legal) == (None, "IL null")
    assert match_legal_move("efg", "Noop", ["noop"]) == (None, "IL Noop")


def test_ggp_http_messages_and_replies() -> None:
    rules = ggp_http.rules_text("; tic-tac-toe\n(role x) ; the only role\n(init (cell 1))\n")
    assert rules == "(role x) (init (cell 1))"
    assert ggp_http.start_message("m.1", "x", rules, 3, 0.4) == \
        "( START m.1 x ( (role x) (init (cell 1)) ) 3 1 )"
    assert ggp_http.play_message("m.1", None) == "( PLAY m.1 NIL )"
    assert ggp_http.stop_message("m.1", ["(mark 1 3)", "noop"]) == \
        "( STOP m.1 ( (mark 1 3) noop ) )"
    reply = b"HTTP/1.0 200 OK\r\nContent-Type: text/acl\r\nContent-Length: 13\r\n\r\n( mark 1 3 )\nJUNK"
    assert ggp_http.parse_http_reply(reply) == "( mark 1 3 )"
    assert ggp_http.parse_move_reply("( mark 1 3 )") == "(mark 1 3)"
    assert ggp_http.parse_move_reply("noop") == "noop"
    for bad in ["", "(mark 1", "a b", "(a) (b)", ")("]:
        assert ggp_http.parse_move_reply(bad) is None
    request = ggp_http.http_request("127.0.0.1", 9, "( INFO )")
    assert request.startswith(b"POST / HTTP/1.0\r\n") and request.endswith(b"\r\n\r\n( INFO )")
    assert b"Content-Length: 8\r\n" in request


def test_player_specs() -> None:
    spec = parse_spec("uct?playouts=1000&margin=0.2")
    assert (spec.kind, spec.option_int("playouts", 0), spec.option_float("margin", 1)) == \
        ("uct", 1000, 0.2)
    assert parse_spec("http://127.0.0.1:9000").target == "http://127.0.0.1:9000"
    assert parse_spec("ws:alice").target == "alice"
    assert parse_spec("agent").kind == "agent" and parse_spec("agent:bob").target == "bob"
    for bad in ["alphabeta", "ws:", "ws:a b", "http://h:99999", "http://h:1/path", "random:x",
                "uct?playouts"]:
        with pytest.raises(GameError):
            parse_spec(bad)
    with pytest.raises(GameError):
        parse_spec("uct?playouts=many").option_int("playouts", 0)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_fuzz_http_replies_parse_or_fail_cleanly(data: bytes) -> None:
    try:
        body = ggp_http.parse_http_reply(data)
    except GameError:
        return
    move = ggp_http.parse_move_reply(body)
    assert move is None or move == normalize_move("gdl", move)  # canonical when accepted


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="() ab1\n\t", max_size=40))
def test_fuzz_move_normalisation_is_idempotent(text: str) -> None:
    once = normalize_move("gdl", text)
    assert normalize_move("gdl", once) == once
