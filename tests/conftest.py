"""Shared fixtures: where ../shared is, and skipping cleanly when it is absent."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
GAMES = REPO / "games"



def pytest_sessionstart(session: pytest.Session) -> None:
    """numba's first compile of the kernels (10-30 s, once per checkout: CI's clone
    starts without the cache) here, before any test, so no test's agent workers pay it
    on their clocks; from the disk cache it is about 2 s. In a child process: the
    tests' own process keeps its kernels unloaded (some tests are about when they load).
    Once, in pytest-xdist's controller, not in each of its workers."""
    if hasattr(session.config, "workerinput"):
        return
    subprocess.run([sys.executable, "-c", "from agent.brains.factory import warm_up; warm_up()"],
                   cwd=REPO, check=False, timeout=900)


# Files of pure computation: no clocks, sockets or wall-time limits a loaded machine could
# miss (a time limit of 0, a deadline already past, a budget to be reached is fine). Their
# tests are marked ``parallel``: the README's test command runs them on two processes,
# then the rest one at a time (what has clocks sees an idle machine). ``pytest`` alone
# runs everything in one process, as before.
PARALLEL_FILES = ("test_gdl_", "test_gdl2_", "test_simultaneous_", "test_extensive_",
                  "test_matrix_", "test_nplayer_", "test_general_sum_", "test_joint_",
                  "test_search_", "test_puzzle_", "test_terminal_delta")
SERIAL_FILES = {"test_gdl_check_budget.py",   # time and memory limits of a real check
                "test_gdl_fuzz.py",           # children with time limits
                "test_simultaneous_bench.py",  # an LCP worker's 0.5 s timeout
                "test_extensive_cli.py",      # a 5 s time limit's progress lines
                "test_extensive_playable.py"}  # a strategy within 0.5 s


def is_parallel(path: Path) -> bool:
    return path.name.startswith(PARALLEL_FILES) and path.name not in SERIAL_FILES


@pytest.hookimpl(tryfirst=True)   # before -m selects by the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks the ``parallel`` tests; then the fast tests first, the ``slow`` ones last
    (each group in collection order), so a failure shows within minutes of a 20-minute
    suite; every test still runs. A selection (``-k``, ``-m``, a file) is ordered the
    same way."""
    for item in items:
        if is_parallel(item.path):
            item.add_marker(pytest.mark.parallel)
    items.sort(key=lambda item: item.get_closest_marker("slow") is not None)


def shared_path(*parts: str) -> Path:
    """A path under ../shared, skipping the test when it is not there."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"../shared/{'/'.join(parts)} is absent")
    return path


@pytest.fixture
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared is absent")
    return SHARED


@pytest.fixture
def swipl() -> str:
    exe = shutil.which("swipl")
    if exe is None:
        pytest.skip("SWI-Prolog (swipl) is not installed")
    return exe


@contextlib.asynccontextmanager
async def running_server(tmp_path: Path, **options: Any) -> AsyncIterator[Any]:
    """A match server on a free loopback port with its own database in ``tmp_path``; its
    agents register their names with their first hello unless ``registration`` says
    otherwise (the tests of registration itself)."""
    from server.app import MatchServer
    from server.records import Records

    records = Records(tmp_path / "matches.sqlite")
    options.setdefault("registration", "open")
    try:
        async with MatchServer(records, port=0, **options) as srv:
            yield srv
    finally:
        records.close()
