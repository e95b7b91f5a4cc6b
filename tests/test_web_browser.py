"""The live match page in a real browser: headless Chromium driven by selenium.

Needs Debian's ``chromium`` and ``chromium-driver`` and the ``selenium`` package (the
test extra); skipped cleanly without any of them. Selenium is pointed at
``/usr/bin/chromedriver`` explicitly, so nothing is ever downloaded.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from websockets.asyncio.client import connect

CHROMIUM = os.environ.get("GGP_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("GGP_CHROMEDRIVER", "/usr/bin/chromedriver")
CONNECT_FOUR = REPO / "tests" / "data" / "connectFour.kif"


def browser() -> Any:
    """A headless Chromium (skips the test when it cannot be started)."""
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service

    for exe in (CHROMIUM, CHROMEDRIVER):
        if not (Path(exe).is_file() or shutil.which(exe)):
            pytest.skip(f"{exe} is not installed (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1000,1000", "--disable-extensions", "--no-first-run"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    except WebDriverException as exc:
        pytest.skip(f"headless chromium does not start here: {str(exc).splitlines()[0]}")


class ServerThread:
    """A match server running in its own thread and event loop (selenium blocks)."""

    def __init__(self, db: Path, **options: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self.ready: Future[Any] = Future()
        self.stop_event: asyncio.Event | None = None
        self.thread = threading.Thread(target=self._run, args=(db, options), daemon=True)
        self.thread.start()
        self.server = self.ready.result(timeout=30)

    def _run(self, db: Path, options: dict[str, Any]) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._main(db, options))

    async def _main(self, db: Path, options: dict[str, Any]) -> None:
        from server.app import MatchServer
        from server.records import Records

        records = Records(db)
        try:
            async with MatchServer(records, port=0, **options) as srv:
                self.stop_event = asyncio.Event()
                self.ready.set_result(srv)
                await self.stop_event.wait()
        except BaseException as exc:
            if not self.ready.done():
                self.ready.set_exception(exc)
            raise
        finally:
            records.close()

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` (a coroutine function) in the server's loop and wait for it."""
        return asyncio.run_coroutine_threadsafe(fn(), self.loop).result(timeout=120)

    def spawn(self, fn: Callable[[], Any]) -> Future[Any]:
        return asyncio.run_coroutine_threadsafe(fn(), self.loop)

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    def close(self) -> None:
        assert self.stop_event is not None
        self.loop.call_soon_threadsafe(self.stop_event.set)
        self.thread.join(timeout=30)


@pytest.fixture
def server_thread(tmp_path: Path) -> Iterator[ServerThread]:
    thread = ServerThread(tmp_path / "matches.sqlite", grace=0.2, seat_wait=60,
                          registration="open")
    try:
        yield thread
    finally:
        thread.close()


async def slow_bot(url: str, name: str, seed: int, delay: float) -> None:
    """A websocket agent that answers every request with a seeded random legal move
    after ``delay`` seconds, until its match ends."""
    rng = random.Random(seed)
    async with connect(url) as ws:
        await ws.send(json.dumps({"type": "hello", "name": name, "token": f"secret-{name}"}))
        async for data in ws:
            message = json.loads(data)
            if message["type"] == "offer":
                await ws.send(json.dumps({"type": "ready", "match": message["match"]}))
            elif message["type"] == "request":
                await asyncio.sleep(delay)
                await ws.send(json.dumps({"type": "move", "match": message["match"],
                                          "step": message["step"],
                                          "move": rng.choice(message["legal"])}))
            elif message["type"] in ("end", "abort"):
                return


def wait_for(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def start_connect_four(st: ServerThread, seed: int = 11) -> str:
    """A connect-four match whose seats wait for two websocket agents (not started yet)."""
    from gdl.formats import load_game

    game = load_game(CONNECT_FOUR)

    async def create() -> str:
        return st.server.create_match(game, ["ws:redbot", "ws:blackbot"], startclock=5,
                                      playclock=2, seed=seed).id
    return st.call(create)


def play_bots(st: ServerThread, delay: float) -> list[Future[Any]]:
    return [st.spawn(lambda n=name, s=i: slow_bot(st.server.url, n, s, delay))
            for i, name in enumerate(["redbot", "blackbot"])]


@pytest.mark.slow
def test_live_connect_four_page_in_chromium(server_thread: ServerThread, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    driver = browser()
    try:
        match_id = start_connect_four(server_thread)
        driver.get(f"{server_thread.http}/matches/{match_id}")
        body = driver.find_element(By.TAG_NAME, "body")
        # before the match starts: the empty 7 x 6 board, no step played
        assert body.get_attribute("data-status") == "running"
        assert len(driver.find_elements(By.CSS_SELECTOR, "#board .cell")) == 42
        assert driver.find_elements(By.CSS_SELECTOR, "#log .step") == []

        bots = play_bots(server_thread, delay=0.15)
        seen: list[int] = []

        def steps_while_running() -> bool:
            if body.get_attribute("data-status") != "running":
                return False
            seen.append(len(driver.find_elements(By.CSS_SELECTOR, "#log .step")))
            return len(set(seen)) >= 3 and seen[-1] > 0  # it grew, live, at least twice

        wait_for(steps_while_running, 60, "the log to grow while the match runs")
        assert seen == sorted(seen)
        wait_for(lambda: body.get_attribute("data-status") == "finished", 120,
                 'data-status="finished"')
        for bot in bots:
            bot.result(timeout=30)
        record = server_thread.server.records.get_match(match_id)
        steps = driver.find_elements(By.CSS_SELECTOR, "#log .step")
        assert len(steps) == len(record["steps"])
        cells = driver.find_elements(By.CSS_SELECTOR, "#board .cell")
        assert len(cells) == 42
        drops = sum(1 for s in record["steps"] for move in s["moves"] if move != "noop")
        assert sum(1 for c in cells if c.text.strip()) == drops
        scores = driver.find_element(By.ID, "scores").text
        for role, payoff in zip(record["roles"], record["payoffs"], strict=True):
            assert role in scores and f"{payoff:g}" in scores
        assert driver.find_element(By.ID, "step-slider")  # the replay appeared
        shot = tmp_path / "connect-four.png"
        assert driver.save_screenshot(str(shot))
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        problems = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert problems == []  # no CSP violation, no script error
    finally:
        driver.quit()


def docs_screenshots(out: Path) -> None:
    """The PNGs of docs/web.md: a live connect-four page and a finished tournament's
    page (``python tests/test_web_browser.py docs``)."""
    import tempfile

    from gdl.formats import load_game
    from server.tournament import run_tournament

    with tempfile.TemporaryDirectory() as tmp:
        st = ServerThread(Path(tmp) / "matches.sqlite", grace=0.2, seat_wait=60)
        driver = browser()
        try:
            driver.set_window_size(900, 900)
            games = [load_game(CONNECT_FOUR),
                     load_game(REPO.parent / "shared" / "gdl-corpus" / "repository" /
                               "ticTacToe.kif")]
            result = st.call(lambda: run_tournament(
                st.server, games, ["random", "first", "uct?playouts=100"], rounds=2,
                swap_roles=True, concurrency=4, startclock=2, playclock=1, seed=7))
            match_id = start_connect_four(st, seed=5)
            driver.get(f"{st.http}/matches/{match_id}")
            bots = play_bots(st, delay=0.4)
            body = driver.find_element("tag name", "body")
            wait_for(lambda: len(driver.find_elements("css selector", "#log .step")) >= 13,
                     60, "13 steps")
            assert body.get_attribute("data-status") == "running"
            driver.save_screenshot(str(out / "web-match.png"))
            driver.get(f"{st.http}/tournaments/{result.id}")
            driver.save_screenshot(str(out / "web-tournament.png"))
            for bot in bots:
                bot.result(timeout=120)
        finally:
            driver.quit()
            st.close()


if __name__ == "__main__":
    import sys

    docs_screenshots(Path(sys.argv[1] if len(sys.argv) > 1 else "docs"))
