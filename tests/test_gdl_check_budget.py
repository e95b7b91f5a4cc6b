"""``ggp check`` within a time limit and a memory budget (issue #32, item 13): a game
with a 300-argument relation over {0, 1} (2^300 rows) ran out of memory after 48 s
(internal error: MemoryError, exit 70). Now: one line naming the phase and the limit,
exit 1."""

from __future__ import annotations

import sys
import time

import pytest

import ggp_cli
from gdl.budget import watched
from solvers.errors import LimitReached

VARS = " ".join(f"?x{i}" for i in range(300))
# the legal moves come from the 2^300 rows of big: listing them never ends
BLOWUP = f"""(role p) (init (step 0)) (bit 0) (bit 1)
(<= (big {VARS}) {" ".join(f"(bit ?x{i})" for i in range(300))})
(<= (legal p (go ?x0)) (big {VARS}))
(<= (next (step 1)) (true (step 0)))
(<= terminal (true (step 1)))
(goal p 100)"""


@pytest.fixture
def blowup(tmp_path):
    path = tmp_path / "blowup.kif"
    path.write_text(BLOWUP)
    return path


def test_check_stops_at_its_time_limit_with_one_line(blowup, capsys) -> None:
    started = time.monotonic()
    assert ggp_cli.main(["check", str(blowup), "--time-limit", "3"]) == 1
    assert time.monotonic() - started < 60      # 3 s, plus freeing what the prover held
    err = capsys.readouterr().err
    assert err.startswith("error: the time limit of 3 s was reached while ")
    assert err.rstrip().endswith("(raise --time-limit)") and err.count("\n") == 1


def test_check_stops_at_its_memory_budget_with_one_line(blowup, capsys) -> None:
    assert ggp_cli.main(["check", str(blowup), "--memory-mb", "100",
                         "--time-limit", "600"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: the memory budget of 100 MB was reached while ")
    assert err.rstrip().endswith("(raise --memory-mb)") and err.count("\n") == 1


def test_watched_interrupts_python_code_in_the_main_thread() -> None:
    started = time.monotonic()
    with pytest.raises(LimitReached, match=r"time limit of 0.3 s was reached while spinning"):
        with watched(0.3, None) as watch:
            watch.doing = "while spinning"
            while time.monotonic() - started < 30:
                pass
    assert time.monotonic() - started < 10
    with watched(5, None):
        pass
    time.sleep(0.3)                             # the timer is off again afterwards


def test_a_valid_game_still_checks(capsys) -> None:
    from solvers.locations import REPO
    game = REPO / "games" / "gdl" / "goofspiel_2.kif"
    assert ggp_cli.main(["check", str(game)]) == 0
    out = capsys.readouterr().out
    assert "valid GDL" in out and "engine: compiled" in out


def test_a_limit_reached_in_a_finalizer_is_left_to_the_next_tick(monkeypatch) -> None:
    # a timer tick landing in __del__ or a gc callback cannot raise there: it is not
    # reported as unraisable, since the next tick raises it in the block; others still are
    seen: list = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)

    class Dropped:
        def __del__(self) -> None:
            raise LimitReached("raised in a finalizer")

    class Broken:
        def __del__(self) -> None:
            raise ValueError("a real bug")

    with watched(60, None):
        Dropped()
        Broken()
    assert [type(u.exc_value) for u in seen] == [ValueError]
    assert sys.unraisablehook == seen.append
