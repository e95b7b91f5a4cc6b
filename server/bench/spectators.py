"""``ggp bench spectators``: a tournament in progress watched by open match pages.

Method (after a warm-up run that is not counted, the same tournament without and with
spectators, ``--rounds`` times each in the order without, with, with, without, ... so
drift weighs on both alike; round ``n`` uses the seeds from ``--seed + n``):

1. Start a match server on 127.0.0.1 with a fresh database; record a tournament and
   create its ``--matches`` matches at once, every seat a websocket agent (``ws:botN``)
   that is not connected yet, so every match waits in its start phase.
2. A run without spectators goes on at once. A run with them opens ``--pages`` match
   pages first: each is a client, in a separate process, that loads ``/matches/<id>``
   over HTTP and then watches the match over the websocket as the page's script does
   (the matches watched are spread over the tournament); ``--browsers`` more are real
   pages in headless Chromium (when chromium, chromedriver and selenium are installed).
3. Start the bots (``ggp bench server``'s client process: one socket per seat, a seeded
   random legal move at once) and wait for every match to end.
4. Report per condition (its runs pooled): the server's step relay latency (``ggp bench
   server``'s measure: from the last move of a step to its results sent out, now
   including the spectator messages) at p50/p99 and the server process's CPU time; with
   spectators the page delay, from the moment the server had a step's last answer
   (``played.at``) to the page holding the update, at p50/p99/max, for the websocket
   pages and the browser pages (their script keeps the same delays in
   ``window.ggpDelays``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
import urllib.parse
from http import client as http_client
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect

from gdl.formats import load_game
from server.app import MatchServer
from server.bench.children import (
    all_ready,
    child_main,
    exit_with_parent,
    start_child,
    stop_child,
)
from server.bench.server import DEFAULT_GAME, quantile_ms
from server.commandline import bounded_int
from server.records import Records
from solvers.errors import GameError
from solvers.playable import PlayableGame

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# a match waits this long for its bots' "ready": they all give it at once, when the
# last of them is logged in (server.bench.server.run_bots), so the matches start together
START_CLOCK = 300


def viewer_address(k: int) -> str:
    """Page ``k``'s own loopback address: twenty viewers are twenty clients to the
    server's read budget per address (``server/guard.py``), as in a real audience."""
    return f"127.0.{1 + k // 250}.{1 + k % 250}"


def _load_page(http: str, path: str, source: str) -> None:
    url = urllib.parse.urlsplit(http)
    connection = http_client.HTTPConnection(url.hostname, url.port, timeout=60,
                                            source_address=(source, 0))
    try:
        connection.request("GET", path)
        answer = connection.getresponse()
        answer.read()
        if answer.status != 200:
            raise GameError(f"{path}: HTTP {answer.status}")
    finally:
        connection.close()


async def page_client(http: str, ws_url: str, match_id: str, source: str,
                      ready: asyncio.Event, delays: list[float]) -> None:
    """One match page as the browser sees it: the HTML, then the spectator messages."""
    await asyncio.to_thread(_load_page, http, f"/matches/{match_id}", source)
    async with connect(ws_url, max_size=None, local_addr=(source, 0)) as ws:
        await ws.send(json.dumps({"type": "watch", "match": match_id}))
        async for data in ws:
            message = json.loads(data)
            if message["type"] == "watching":
                ready.set()
            elif message["type"] == "played":
                delays.append(time.time() - message["at"])
            elif message["type"] == "error":
                raise GameError(f"watching {match_id}: {message.get('message')}")
            elif message["type"] == "ended":
                return


async def run_pages(http: str, ws_url: str, ids: list[str]) -> None:
    """The bench's page process: ``ready`` once every page watches, then the delays."""
    events = [asyncio.Event() for _ in ids]
    delays: list[float] = []
    pages = [asyncio.create_task(page_client(http, ws_url, m, viewer_address(k), e, delays))
             for k, (m, e) in enumerate(zip(ids, events, strict=True))]
    await all_ready(events, pages, "page")
    print("ready", flush=True)
    await asyncio.gather(*pages)
    print(json.dumps({"delays": delays}), flush=True)


class BrowserPages:
    """Real match pages in one headless Chromium (one tab each), or none."""

    def __init__(self, http: str, ids: list[str]) -> None:
        self.driver: Any = None
        self.note = ""
        if not ids:
            return
        try:  # (deferred: selenium is optional, the test extra; only for browser pages)
            from selenium import webdriver
            from selenium.webdriver.chrome.service import Service
        except ImportError:
            self.note = "selenium is not installed"
            return
        if not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()):
            self.note = "chromium or chromium-driver is not installed"
            return
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu",
                    "--disable-dev-shm-usage", "--disable-renderer-backgrounding",
                    "--disable-background-timer-throttling"):
            options.add_argument(arg)
        self.driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER),
                                       options=options)
        for n, match_id in enumerate(ids):
            if n:
                self.driver.switch_to.new_window("tab")
            self.driver.get(f"{http}/matches/{match_id}")

    def delays(self) -> list[float]:
        if self.driver is None:
            return []
        out: list[float] = []
        for handle in self.driver.window_handles:
            self.driver.switch_to.window(handle)
            out += self.driver.execute_script("return window.ggpDelays || [];")
        return out

    def close(self) -> None:
        if self.driver is not None:
            self.driver.quit()


async def run_once(game: PlayableGame, n_matches: int, pages: int, browsers: int,
                   playclock: float, seed: int, db: Path) -> dict[str, Any]:
    n_roles = len(game.roles)
    records = Records(db)
    try:
        sockets = 4 * n_matches * n_roles + 256  # bots and pages, all from loopback
        # (a login's deadline as long as a seat's: the bots' hundreds of secrets are
        # hashed one after another while the first matches play)
        async with MatchServer(records, port=0, seat_wait=300, max_connections=sockets,
                               login_timeout=300,
                               max_running=n_matches, registration="open",
                               max_per_address=sockets) as server:
            http = f"http://127.0.0.1:{server.port}"
            tid = f"tournament.bench.{int(time.time() * 1000)}"
            await records.begin_tournament(tid, {
                "games": [game.name], "players": ["ws:bots"], "rounds": 1,
                "swap_roles": False, "concurrency": n_matches, "startclock": START_CLOCK,
                "playclock": playclock, "seed": seed})
            matches = [server.create_match(
                game, [f"ws:bot{m * n_roles + r}" for r in range(n_roles)], startclock=START_CLOCK,
                playclock=playclock, seed=seed + m, tournament=tid) for m in range(n_matches)]
            tasks = [server.tasks[m.id] for m in matches]  # (a fast match leaves .tasks)
            watched = [m.id for m in matches[::max(1, n_matches // max(1, pages + browsers))]]
            page_ids, browser_ids = watched[:pages], watched[pages:pages + browsers]
            viewers = await start_child(["-m", "server.bench.spectators", "--pages-of", http,
                                         server.url, *page_ids], "page") if page_ids else None
            browser = await asyncio.to_thread(BrowserPages, http, browser_ids)
            await _wait_watched(server, browser_ids)
            await _settle(server, records, matches)
            bots = await start_child(["-m", "server.bench.server", "--bots", server.url,
                                      str(n_matches * n_roles), str(seed)], "bot")
            # (from the bots' last login on: their secrets' hashes are not the matches')
            cpu, started = time.process_time(), time.perf_counter()
            outcomes = await asyncio.gather(*tasks)
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
            delays: list[float] = []
            if viewers is not None:
                assert viewers.stdout is not None
                line = await asyncio.wait_for(viewers.stdout.readline(), 120)
                delays = json.loads(line)["delays"]
                await viewers.wait()
            browser_delays = await asyncio.to_thread(browser.delays)
            await asyncio.to_thread(browser.close)
            await stop_child(bots)
            await records.finish_tournament(tid, "completed", None)
    finally:
        records.close()
    return {"matches": n_matches, "completed": sum(o.status == "completed" for o in outcomes),
            "steps": sum(len(o.moves) for o in outcomes), "pages": len(page_ids),
            "browsers": len(browser_ids) if browser.driver is not None else 0,
            "browser_note": browser.note, "cpu": cpu, "wall": wall,
            # the updates the pages should have had: every step of the matches they watch
            "expected": sum(len(o.moves) for o in outcomes if o.match in page_ids),
            "relays": [t for o in outcomes for t in o.step_times], "delays": delays,
            "browser_delays": browser_delays}


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The runs of one condition, pooled."""
    relays = [t for r in runs for t in r["relays"]]
    delays = [t for r in runs for t in r["delays"]]
    browser_delays = [t for r in runs for t in r["browser_delays"]]
    return {
        "runs": len(runs), "matches": sum(r["matches"] for r in runs),
        "completed": sum(r["completed"] for r in runs), "steps": sum(r["steps"] for r in runs),
        "pages": runs[0]["pages"], "browsers": runs[0]["browsers"],
        "browser_note": runs[0]["browser_note"],
        "relay_p50_ms": quantile_ms(relays, 0.5), "relay_p99_ms": quantile_ms(relays, 0.99),
        "server_cpu_s": sum(r["cpu"] for r in runs), "wall_s": sum(r["wall"] for r in runs),
        "page_updates": len(delays), "page_updates_expected": sum(r["expected"] for r in runs),
        "page_delay_p50_ms": quantile_ms(delays, 0.5),
        "page_delay_p99_ms": quantile_ms(delays, 0.99),
        "page_delay_max_ms": 1000 * max(delays) if delays else None,
        "browser_updates": len(browser_delays),
        "browser_delay_p50_ms": quantile_ms(browser_delays, 0.5),
        "browser_delay_p99_ms": quantile_ms(browser_delays, 0.99),
    }


async def _settle(server: MatchServer, records: Records, matches: list[Any]) -> None:
    """The same start for both conditions: every match has begun and is recorded, and
    the server has been idle a moment, before the bots come."""
    while any(m.id not in server.spectators.feeds for m in matches):
        await asyncio.sleep(0.05)
    await asyncio.to_thread(records.list_matches, None, 1)  # after every write before it
    await asyncio.sleep(1.0)


async def _wait_watched(server: MatchServer, ids: list[str], timeout: float = 60) -> None:
    """Until every browser page's script watches its match."""
    deadline = time.monotonic() + timeout
    while any(not server.spectators.feeds[m].watchers for m in ids):
        if time.monotonic() > deadline:
            raise GameError("the browser pages did not subscribe in time")
        await asyncio.sleep(0.1)


def _line(label: str, report: dict[str, Any], key: str) -> str:
    p50, p99 = report[f"{key}_p50_ms"], report[f"{key}_p99_ms"]
    if p50 is None:
        return f"{label}: none"
    return f"{label}: p50 {p50:.2f} ms, p99 {p99:.2f} ms"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ggp bench spectators", description="A tournament "
                                     "in progress watched by open match pages: page delay and "
                                     "the server's step relay with and without them.")
    parser.add_argument("--matches", type=bounded_int(1, 10_000), default=200,
                        help="matches of the tournament, all running at once (200)")
    parser.add_argument("--pages", type=bounded_int(0, 256), default=20,
                        help="match pages open, as websocket clients in another process (20)")
    parser.add_argument("--browsers", type=bounded_int(0, 16), default=2,
                        help="more pages in headless Chromium, when installed (2)")
    parser.add_argument("--game", default=str(DEFAULT_GAME), help="game file")
    parser.add_argument("--playclock", type=float, default=30.0,
                        help="play clock (generous: the bench measures relay, not faults)")
    parser.add_argument("--seed", type=bounded_int(0, 1 << 31), default=1,
                        help="seed of the matches (default 1)")
    parser.add_argument("--rounds", type=bounded_int(1, 20), default=2,
                        help="runs of each condition, in the order without, with, with, "
                        "without, ... (2)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--pages-of", nargs="+", metavar="ARG",
                        help=argparse.SUPPRESS)  # the page process the bench starts
    args = parser.parse_args(argv)
    if args.pages_of:
        http, ws_url, *ids = args.pages_of
        exit_with_parent()
        asyncio.run(run_pages(http, ws_url, ids))
        return 0
    game = load_game(args.game)
    raw: dict[str, list[dict[str, Any]]] = {"without": [], "with": []}
    conditions = {"without": (0, 0), "with": (args.pages, args.browsers)}
    with tempfile.TemporaryDirectory() as tmp:
        # a warm-up, not counted: the first run of a process pays for imports and caches
        asyncio.run(run_once(game, min(args.matches, 20), 0, 0, args.playclock, args.seed,
                             Path(tmp) / "warm-up.sqlite"))
        for n in range(args.rounds):  # ABBA: warm-up and drift weigh on both alike
            for name in (("without", "with") if n % 2 == 0 else ("with", "without")):
                pages, browsers = conditions[name]
                print(f"bench: round {n + 1}, {args.matches} matches of "
                      f"{Path(args.game).name}, {pages} pages + {browsers} browser pages "
                      "watching", file=sys.stderr)
                raw[name].append(asyncio.run(run_once(
                    game, args.matches, pages, browsers, args.playclock, args.seed + n,
                    Path(tmp) / f"{name}{n}.sqlite")))
    runs = {name: summary(r) for name, r in raw.items()}
    if args.json:
        print(json.dumps(runs))
        return 0
    for name, report in runs.items():
        print(f"{name} spectators ({report['runs']} runs): "
              f"{report['completed']}/{report['matches']} matches, "
              f"{report['steps']} steps, server CPU {report['server_cpu_s']:.2f} s, "
              f"wall {report['wall_s']:.2f} s")
        print("  " + _line("step relay (last move in -> results out)", report, "relay"))
    with_ = runs["with"]
    label = f"page delay (the server's last answer -> the page), {with_['pages']} pages"
    print(f"  {_line(label, with_, 'page_delay')} ({with_['page_updates']} updates of "
          f"{with_['page_updates_expected']} steps watched)")
    if with_["browsers"]:
        label = f"page delay, {with_['browsers']} chromium pages"
        print(f"  {_line(label, with_, 'browser_delay')} ({with_['browser_updates']} updates)")
    elif args.browsers:
        print(f"  no browser pages: {with_['browser_note']}")
    ok = all(r["completed"] == r["matches"] for r in runs.values()) \
        and with_["page_updates"] == with_["page_updates_expected"]
    return 0 if ok else 1


if __name__ == "__main__":  # (the bench's own client process)
    child_main(main)
