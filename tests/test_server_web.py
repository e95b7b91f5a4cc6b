"""The web pages at the HTTP level (no browser): routes, boards, escaping, errors."""

from __future__ import annotations

import asyncio
import json
import random
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from conftest import GAMES, REPO, running_server, shared_path
from websockets.asyncio.client import connect

from gdl.formats import load_game, load_game_text
from server.web.board import detect_grid, game_grid, parse_kif_list, state_view
from server.web.html import colour_class

CONNECT_FOUR = REPO / "tests" / "data" / "connectFour.kif"


def fetch(url: str, host: str | None = None) -> tuple[int, dict[str, str], str]:
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, dict(answer.headers), answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode()


async def get(srv: Any, path: str, host: str | None = None) -> tuple[int, dict[str, str], str]:
    return await asyncio.to_thread(fetch, f"http://127.0.0.1:{srv.port}{path}", host)


def cells(page: str) -> list[str]:
    return re.findall(r'<td class="cell[^"]*">([^<]*)</td>', page)


# --- boards ---

def test_grid_of_tictactoe_and_connect_four() -> None:
    ttt = load_game(shared_path("gdl-corpus", "repository", "ticTacToe.kif"))
    grid = game_grid(ttt)
    assert grid is not None and grid.relation == "cell"
    assert grid.columns == ("1", "2", "3") and grid.rows == ("3", "2", "1")
    view = state_view(ttt, ttt.initial_state(random.Random(0)), grid)
    assert view["grid"]["cells"] == [["b"] * 3] * 3  # (cell m n b) everywhere at the start
    assert view["facts"] == ["(control xplayer)"]  # the rest, as a list

    # the corpus' connectFour is 8 x 6 (its (x 1) .. (x 8)); ours the standard 7 x 6
    corpus = game_grid(load_game(shared_path("gdl-corpus", "repository", "connectFour.kif")))
    assert corpus is not None and (len(corpus.columns), len(corpus.rows)) == (8, 6)
    c4 = load_game(CONNECT_FOUR)
    grid = game_grid(c4)
    assert grid is not None and grid.columns == tuple("1234567")
    assert grid.rows == tuple("654321")  # row 1 (the bottom) drawn last
    state = c4.initial_state(random.Random(0))
    state = c4.next_state(state, ["(drop 3)", "noop"], random.Random(0))
    cells_now = state_view(c4, state, grid)["grid"]["cells"]
    assert cells_now[5][2] == "red" and sum(1 for row in cells_now for c in row if c) == 1


def test_no_grid_without_two_small_coordinates() -> None:
    facts = parse_kif_list("( (control red) (score red 10) (step 3) )")
    assert detect_grid(facts) is None
    # a relation over big numbers is no board
    assert detect_grid([("at", str(n), str(n)) for n in range(0, 400, 7)]) is None


def test_colour_classes() -> None:
    assert colour_class("b") == "" and colour_class("red") == "v0"
    assert colour_class("x") == colour_class("x") and colour_class("x").startswith("v")


def test_blank_cells_are_empty_and_x_and_o_look_apart() -> None:
    """Issue 32, item 14: tic-tac-toe drew blanks as a literal ``b``, and x and o in
    near-identical reds."""
    import colorsys

    from server.web.pages import render_grid

    ttt = load_game(shared_path("gdl-corpus", "repository", "ticTacToe.kif"))
    grid = game_grid(ttt)
    rng = random.Random(0)
    state = ttt.next_state(ttt.initial_state(rng), ["(mark 1 1)", "noop"], rng)
    state = ttt.next_state(state, ["noop", "(mark 2 2)"], rng)
    board = render_grid(state_view(ttt, state, grid)["grid"])
    assert sorted(cells(board)) == [""] * 7 + ["o", "x"]
    assert '<td class="cell">b</td>' not in board

    css = (REPO / "server" / "web" / "static" / "style.css").read_text()

    def hue(text: str) -> float:
        colour = re.search(rf"td\.cell\.{colour_class(text)} {{ background: #(\w{{6}})",
                           css).group(1)
        rgb = [int(colour[k:k + 2], 16) / 255 for k in (0, 2, 4)]
        return colorsys.rgb_to_hsv(*rgb)[0] * 360

    apart = abs(hue("x") - hue("o"))
    assert min(apart, 360 - apart) > 90  # as far apart as red and blue


# --- pages ---

async def test_pages_of_a_finished_match_and_tournament(tmp_path: Path) -> None:
    from server.tournament import run_tournament

    c4 = load_game(CONNECT_FOUR)
    ttt = load_game(GAMES / "gdl" / "simultaneous_tictactoe.kif")
    async with running_server(tmp_path, grace=0.05) as srv:
        result = await run_tournament(srv, [c4, ttt], ["random", "first"], rounds=2,
                                      startclock=1, playclock=1, seed=3)
        outcome = next(o for o, p in zip(result.outcomes, result.pairings, strict=True)
                       if p.game is c4)
        status, headers, index = await get(srv, "/")
        assert status == 200 and "text/html" in headers["Content-Type"]
        assert outcome.match in index and result.id in index
        assert "script-src 'self'" in headers["Content-Security-Policy"]
        assert headers["X-Content-Type-Options"] == "nosniff"

        status, _, page = await get(srv, f"/matches/{outcome.match}")
        assert status == 200 and 'data-status="finished"' in page
        assert len(cells(page)) == 42
        drops = sum(1 for moves in outcome.moves for m in moves if m != "noop")
        assert sum(1 for c in cells(page) if c) == drops
        assert page.count('class="step"') == len(outcome.moves)
        scores = page[page.index('id="scores"'):]
        assert all(f">{p:g}<" in scores for p in outcome.payoffs)
        assert 'id="step-slider"' in page

        _, _, start = await get(srv, f"/matches/{outcome.match}?step=0")  # the replay, no JS
        assert len(cells(start)) == 42 and not any(cells(start))
        _, _, first = await get(srv, f"/matches/{outcome.match}?step=1")
        assert sum(1 for c in cells(first) if c) == 1

        status, headers, api = await get(srv, f"/api/matches/{outcome.match}")
        data = json.loads(api)
        assert status == 200 and len(data["views"]) == len(outcome.moves) + 1
        assert [h["moves"] for h in data["history"]] == outcome.moves

        status, _, page = await get(srv, f"/tournaments/{result.id}")
        assert status == 200 and 'data-status="finished"' in page
        standings = {s.entrant: s for s in result.table if s.game == "overall"}
        for name, s in standings.items():  # the same means and CIs as the tournament's
            assert f"<td>{name}</td><td>overall</td><td>{len(s.scores)}</td>" in page
            interval = s.interval
            assert (f"{interval[0]:.2f} .. {interval[1]:.2f}" if interval else "–") in page
        assert 'id="head-to-head"' in page and 'id="per-game"' in page
        n = len(result.outcomes)  # progress: all finished
        assert f'value="{n}"' in page and f'max="{n}"' in page


async def test_errors_are_clean_pages(tmp_path: Path) -> None:
    async with running_server(tmp_path) as srv:
        for path in ["/nope", "/matches/no.such.match", "/matches/%3Cscript%3E",
                     "/tournaments/none", "/static/../app.py", "/matches/",
                     "/api/matches/x%00y"]:
            status, headers, page = await get(srv, path)
            assert status == 404, path
            assert "Traceback" not in page and "<script>" not in page
            assert "Content-Security-Policy" in headers
        status, _, page = await get(srv, "/", host="evil.example:80")  # DNS rebinding
        assert status == 421
        status, _, _ = await get(srv, "/", host="localhost")
        assert status == 200


HOSTILE_GAME = """
(role <b>x</b>)
(role o'&x)
(init (cell 1 1 <script>alert`1`</script>))
(init (cell 1 2 b)) (init (cell 2 1 b)) (init (cell 2 2 b))
(init (note <img/src=x/onerror=alert`1`>))
(<= (legal ?r <i>go</i>) (role ?r))
(<= (next (cell ?x ?y ?v)) (true (cell ?x ?y ?v)))
(<= (next over) (does ?r <i>go</i>))
(<= terminal (true over))
(<= (goal ?r 50) (role ?r))
"""


async def evil_agent(url: str) -> None:
    """Logs in and answers with markup instead of a move (an IL fault echoed back)."""
    async with connect(url) as ws:
        await ws.send(json.dumps({"type": "hello", "name": "evil", "token": "0123456789"}))
        async for data in ws:
            message = json.loads(data)
            if message["type"] == "offer":
                await ws.send(json.dumps({"type": "ready", "match": message["match"]}))
            elif message["type"] == "request":
                await ws.send(json.dumps({"type": "move", "match": message["match"],
                                          "step": message["step"],
                                          "move": "<svg onload=alert(3)>"}))
            elif message["type"] == "end":
                return


@pytest.mark.parametrize("live", [True, False])
async def test_everything_from_games_and_messages_is_escaped(tmp_path: Path,
                                                            live: bool) -> None:
    game = load_game_text("gdl", HOSTILE_GAME, name="<img src=x onerror=alert(2)>")
    async with running_server(tmp_path, grace=0.05, seat_wait=10) as srv:
        agent = asyncio.create_task(evil_agent(srv.url))
        outcome = await srv.play_match(game, ["random", "ws:evil"], startclock=2, playclock=2,
                                       seed=1)
        await agent
        assert outcome.errors[0][1].startswith("IL <svg")
        if not live:
            srv.spectators.feeds.clear()  # from the records, as after a restart
        pages = [(await get(srv, path))[2] for path in
                 ["/", f"/matches/{outcome.match}", f"/matches/{outcome.match}?step=0"]]
    for page in pages:
        assert page.count("<script") == page.count('<script src="/static/match.js" defer>')
        for raw in ("<b>x", "<img", "<svg", "<i>go", "o'&x"):
            assert raw not in page
    match_page = pages[1]
    assert "IL &lt;svg onload=alert (3) &gt;" in match_page  # the fault, as text
    assert "&lt;i&gt;go&lt;/i&gt;" in match_page and "&lt;b&gt;x&lt;/b&gt;" in match_page
    assert "&lt;script&gt;alert`1`&lt;/script&gt;" in match_page  # a cell of the board
