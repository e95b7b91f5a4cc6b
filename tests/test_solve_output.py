"""What ``ggp solve`` prints (issue #32, item 19): progress rates from a meaningful
interval, the game named when a budget stops the solve, no repeated trace rows, a root
strategy of ``-`` explained, one text format for simultaneous-move solves."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

import ggp_cli
import solvers.progress
from solvers.locations import SHARED
from solvers.progress import RateClock, solve_progress
from solvers.trace import Trace

GAMES = Path(__file__).resolve().parent.parent / "games"
KUHN = SHARED / "efg" / "kuhn_from_course.efg"


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_warm_up_is_not_reported_as_a_rate(monkeypatch) -> None:
    """The solve of nim3 compiled its kernels for 2 s, then had solved 8 nodes: the old
    line read '8 of 129,774 nodes solved, 4 nodes/s' just before the end."""
    clock = FakeClock()
    monkeypatch.setattr(solvers.progress.time, "perf_counter", clock)
    lines: list[str] = []
    report = solve_progress(lines.append, "baseline")
    clock.now = 2.1
    report(8, 129_774)              # the first chunk, after the warm-up
    assert lines == []
    clock.now = 2.8
    report(129_774, 129_774)        # the whole solve ended 0.7 s later
    assert lines == []
    clock.now = 4.2                 # a longer one: 2.1 s of work since the first chunk
    report(100_008, 200_000)
    assert len(lines) == 1
    assert lines[0].startswith("baseline: 100,008 of 200,000 nodes solved, 47,619 nodes/s")
    assert lines[0].endswith(", 4.2 s")


def test_rate_clock_rates_of_several_counts() -> None:
    clock = FakeClock()
    rate = RateClock(every=2.0, clock=clock)
    assert rate.per_second(5) == 0.0                    # no sample yet
    assert not rate.due(10, 100)
    clock.now = 1.0
    assert not rate.due(20, 300)                        # within the first interval
    clock.now = 2.0
    assert rate.due(30, 500)
    assert rate.per_second(30) == 10.0 and rate.per_second(500, 1) == 200.0
    clock.now = 3.0
    assert not rate.due(40, 600)                        # one line per interval


def test_a_budget_stop_still_names_the_game(capsys) -> None:
    game = GAMES / "gdl" / "goofspiel_6.kif"
    assert ggp_cli.main(["solve", str(game), "--max-states", "100", "--quiet"]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("game goofspiel_6 (engine ")
    assert "the budget of 100 states was reached" in err


def test_gdl_trace_has_no_repeated_rows(tmp_path, capsys) -> None:
    trace = tmp_path / "t.csv"
    game = GAMES / "gdl" / "goofspiel_6.kif"
    assert ggp_cli.main(["solve", str(game), "--quiet", "--trace", str(trace)]) == 0
    rows = list(csv.reader(trace.read_text().splitlines()))[1:]
    states = [int(r[1]) for r in rows]
    # each count once, growing; the last row is the expansion's end, at its 6,072 states
    assert states == sorted(states) and states[-1] == 6_072
    assert len(set(states[:-1])) == len(states) - 1


def test_trace_drops_a_sample_that_repeats_the_last_but_for_time() -> None:
    trace = Trace("states", "t")
    for seconds, states in [(0.1, 5), (0.2, 5), (0.3, 9), (0.4, 9), (0.5, 9)]:
        trace.add(seconds, states)
    trace.finish()
    assert trace.rows == [(0.1, 5.0), (0.3, 9.0), (0.5, 9.0)]   # the last: the run's end


@pytest.mark.skipif(not KUHN.exists(), reason="../shared/efg is absent")
def test_a_root_strategy_left_empty_says_why(capsys) -> None:
    assert ggp_cli.main(["solve", str(KUHN), "--iterations", "10", "--quiet"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("root strategy"))
    assert line == ("root strategy: - (nature moves first: each player's first move depends "
                    "on what it was dealt or saw; --strategy writes them all)")


def test_simultaneous_efg_and_gdl_print_one_format(tmp_path, capsys) -> None:
    efg = tmp_path / "g.efg"
    assert ggp_cli.main(["random-game", "--actions", "2", "--depth", "2", "--zero-sum",
                         "--out", str(efg)]) == 0
    capsys.readouterr()
    assert ggp_cli.main(["solve", str(efg), "--solver", "baseline", "--quiet"]) == 0
    efg_lines = capsys.readouterr().out.splitlines()
    assert ggp_cli.main(["solve", str(GAMES / "gdl" / "goofspiel_2.kif"), "--quiet"]) == 0
    gdl_lines = capsys.readouterr().out.splitlines()
    for lines in (efg_lines, gdl_lines):
        solved = next(x for x in lines if x.startswith("baseline: "))
        assert solved.startswith("baseline: values ") and " s (" in solved
        assert lines[lines.index(solved) + 1].startswith("root strategy: ")
        assert any(x.startswith("certificate: max gain ") and "(" not in x for x in lines)
    assert "(ok)" not in "\n".join(efg_lines)
    assert "values p0 50, p1 50 in " in "\n".join(gdl_lines)
