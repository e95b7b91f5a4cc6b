"""The sans-I/O GGP HTTP layer: requests, messages and replies, without sockets."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agent.ggp_http as ggp_http
from agent.ggp_http import (
    Abort,
    HttpError,
    Info,
    Play,
    Preview,
    RequestReader,
    Start,
    Stop,
    http_reply,
    info_reply,
    message_text,
    parse_message,
)
from solvers.errors import FormatError

RULES = "( role xplayer ) ( role oplayer ) ( init ( cell 1 1 b ) )"
START = f"( START local.ticTacToe.1795320501076 xplayer ({RULES}) 3 2)"


def ggp_base_request(body: str) -> bytes:
    """A request exactly as ggp-base's GameServer writes it."""
    payload = body.encode()
    return (b"POST / HTTP/1.0\r\nAccept: text/delim\r\nHost: 127.0.0.1:9147\r\n"
            b"Sender: GAMESERVER\r\nReceiver: ours\r\nContent-Type: text/acl\r\n"
            + f"Content-Length: {len(payload)}\r\n\r\n".encode() + payload)


def test_reader_assembles_a_request_from_chunks() -> None:
    data = ggp_base_request(START)
    reader = RequestReader()
    results = [reader.feed(data[i:i + 7]) for i in range(0, len(data), 7)]
    assert all(r is None for r in results[:-1])
    request = results[-1]
    assert request.method == "POST" and request.headers["receiver"] == "ours"
    assert message_text(request) == START


def test_get_and_options() -> None:
    reader = RequestReader()
    request = reader.feed(f"GET /{quote('( INFO )')} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert message_text(request) == "( INFO )"
    options = RequestReader().feed(b"OPTIONS / HTTP/1.1\r\n\r\n")
    assert message_text(options) is None


def test_body_without_length_runs_to_eof() -> None:
    reader = RequestReader()
    assert reader.feed(b"POST / HTTP/1.0\r\n\r\n(info)") is not None  # length 0: empty body
    reader = RequestReader()
    reader.feed(b"POST / HTTP/1.0\r\nHost: x\r\n\r")
    with pytest.raises(HttpError):
        reader.at_eof()


@pytest.mark.parametrize("data", [
    b"HELLO\r\n\r\n",
    b"POST / HTTP/1.0\r\nContent-Length: ten\r\n\r\n",
    b"POST / HTTP/1.0\r\nno colon here\r\n\r\n",
    b"POST / HTTP/1.0\r\nContent-Length: 999999999999\r\n\r\n",
])
def test_malformed_http_is_an_error(data: bytes) -> None:
    with pytest.raises(HttpError):
        RequestReader().feed(data)


def test_unsupported_method() -> None:
    request = RequestReader().feed(b"DELETE / HTTP/1.0\r\n\r\n")
    with pytest.raises(HttpError, match="unsupported HTTP method"):
        message_text(request)


def test_reply_headers_and_length() -> None:
    reply = http_reply("( mark 1 3 )")
    head, _, body = reply.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "HTTP/1.0 200 OK"
    assert "Content-Type: text/acl" in lines
    assert f"Content-Length: {len(body)}" in lines
    assert "Access-Control-Allow-Origin: *" in lines
    assert "Access-Control-Allow-Methods: POST, GET, OPTIONS" in lines
    assert "Access-Control-Allow-Headers: Content-Type" in lines
    assert "Access-Control-Allow-Age: 86400" in lines
    assert body == b"( mark 1 3 )"
    assert http_reply("é").endswith("é".encode()) and b"Content-Length: 2" in http_reply("é")


def test_start_keeps_the_rules_text_and_clocks() -> None:
    message = parse_message(START)
    assert message == Start("local.ticTacToe.1795320501076", "xplayer", RULES, 3.0, 2.0)


def test_play_forms_and_case_insensitive_heads() -> None:
    assert parse_message("( PLAY m1 NIL )") == Play("m1", None)
    assert parse_message("(play m1 nil)") == Play("m1", None)
    assert parse_message("( PLAY m1 (( mark 1 3 ) noop ) )") == Play("m1", ("(mark 1 3)", "noop"))
    assert parse_message("(pLaY m1 (paper scissors ))") == Play("m1", ("paper", "scissors"))
    assert parse_message("( STOP m1 (( mark 3 1 ) noop ) )") == Stop("m1", ("(mark 3 1)", "noop"))
    assert parse_message("( ABORT m1 )") == Abort("m1")
    assert parse_message("( INFO )") == Info() == parse_message("(info)")
    assert parse_message(f"( PREVIEW ({RULES}) 10 )") == Preview(RULES, 10.0)


def test_symbol_case_is_kept_in_moves() -> None:
    assert parse_message("(PLAY m (( Mark 1 3 ) NoOp))").moves == ("(Mark 1 3)", "NoOp")


@pytest.mark.parametrize("text, words", [
    ("", "expected one message"),
    ("(PLAY m1 NIL", "unbalanced"),
    ("PLAY m1 NIL)", "unbalanced"),
    ("(FOO m1)", "unknown message type 'FOO'"),
    ("(PLAY m1)", "PLAY expects 2 arguments"),
    ("(START m r rules 3 2)", "rules as a parenthesised list"),
    ("(START m r () three 2)", "start clock"),
    ("(PLAY m1 yes)", "NIL or a list of moves"),
    ("((PLAY) m1 NIL)", "message type"),
])
def test_malformed_messages(text: str, words: str) -> None:
    with pytest.raises(FormatError, match=words):
        parse_message(text)


def test_info_reply() -> None:
    assert info_reply("ours", busy=False) == "( ( name ours ) ( status available ) )"
    assert info_reply("ours", busy=True) == "busy"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="()abcNIL PLAYSTOP;\n\t12?", max_size=60))
def test_fuzz_parse_message_only_raises_format_errors(text: str) -> None:
    try:
        parse_message(text)
    except FormatError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_fuzz_reader_only_raises_http_errors(data: bytes) -> None:
    try:
        request = RequestReader().feed(data)
        if request is not None:
            message_text(request)
    except HttpError:
        pass


SYMBOL = st.from_regex(r"[A-Za-z0-9_.+-]{1,6}", fullmatch=True)
TERM = st.recursive(SYMBOL, lambda inner: st.builds(
    lambda head, args: "(" + " ".join([head, *args]) + ")", SYMBOL, st.lists(inner, min_size=1, max_size=3)),
    max_leaves=8)


@settings(max_examples=100, deadline=None)
@given(st.lists(TERM, min_size=1, max_size=4))
def test_fuzz_joint_moves_round_trip(moves: list[str]) -> None:
    padded = " ".join(m.replace("(", "( ").replace(")", " )") for m in moves)
    assert parse_message(f"(PLAY id ({padded}))").moves == tuple(moves)


@pytest.mark.parametrize("length, error", [
    ("9" * 5000, "larger than"),  # int() refuses 4,300+ digits: this was a 500 (the fuzzer)
    ("0" * 5000 + "6", None),  # leading zeros are still a small number
    (str(64 * 1024 * 1024 + 1), "larger than"),
    ("²", "bad Content-Length"),  # a digit to str.isdigit, not to int()
    ("-1", "bad Content-Length"),
])
def test_content_length_is_bounded(length: str, error: str | None) -> None:
    data = f"POST / HTTP/1.0\r\nContent-Length: {length}\r\n\r\n(INFO)".encode()
    if error is None:
        assert message_text(RequestReader().feed(data)) == "(INFO)"
    else:
        with pytest.raises(HttpError, match=error):
            RequestReader().feed(data)


def test_a_chunked_body_is_read_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    data = (b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"3\r\n(IN\r\n3\r\nFO)\r\n0\r\n\r\n")
    reader = RequestReader()
    assert [reader.feed(data[i:i + 5]) for i in range(0, len(data), 5)][-1].body == b"(INFO)"
    monkeypatch.setattr(ggp_http, "MAX_BODY_BYTES", 5)
    with pytest.raises(HttpError, match="larger than 5 bytes"):
        RequestReader().feed(data)
    reader = RequestReader()
    reader.feed(data[:-12])
    with pytest.raises(HttpError, match="before the chunked body ended"):
        reader.at_eof()
