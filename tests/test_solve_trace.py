"""``ggp solve --trace/--plot`` (solvers/trace.py): what the CSV holds for each solver
family, and that the PNG draws exactly the trace."""

from __future__ import annotations

import csv
import json
import struct
from pathlib import Path

import pytest
from conftest import GAMES, shared_path

from ggp_cli import main as ggp
from solvers.trace import Trace, read_trace

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) of a PNG file; fails the test when it is not one."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


def rows(path: Path) -> tuple[list[str], list[dict[str, float]]]:
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), [{k: float(v) for k, v in r.items()}
                                               for r in reader]


def same_picture(plot: Path, trace_csv: Path, title: str, tmp_path: Path) -> None:
    """The PNG is the trace drawn: drawing the CSV again gives the same bytes, and a
    trace changed in one value gives other bytes."""
    again = tmp_path / "again.png"
    read_trace(trace_csv, title).plot(again)
    assert again.read_bytes() == plot.read_bytes()
    changed = read_trace(trace_csv, title)
    drawn = changed.kind.columns.index(changed.kind.ys[-1])
    last = list(changed.rows[-1])
    last[drawn] = last[drawn] * 1.5 + 1
    changed.rows[-1] = tuple(last)
    changed.plot(again)
    assert again.read_bytes() != plot.read_bytes()


@pytest.mark.slow
def test_cfr_plus_on_kuhn_traces_a_falling_nash_conv(tmp_path, capsys) -> None:
    game = shared_path("efg", "kuhn_from_course.efg")
    trace, plot = tmp_path / "k.csv", tmp_path / "k.png"
    assert ggp(["solve", str(game), "--solver", "cfr+", "--iterations", "1000", "--json",
                "--trace", str(trace), "--plot", str(plot)]) == 0
    result = json.loads(capsys.readouterr().out)
    header, table = rows(trace)
    assert header == ["iteration", "seconds", "nash_conv"]
    iterations = [r["iteration"] for r in table]
    values = [r["nash_conv"] for r in table]
    assert iterations[0] == 1 and iterations[-1] == 1000
    assert all(b > a for a, b in zip(iterations, iterations[1:], strict=False))
    # log-spaced: few points, each at most 1.25 times the last (after the first few)
    assert 20 <= len(table) <= 40
    assert values[-1] == pytest.approx(result["nash_conv"], rel=1e-12)
    # CFR+ on Kuhn: NashConv falls by three orders of magnitude (OpenSpiel's C++ CFR+
    # reaches 0.000175 after 1000 iterations, ../shared/reference/VALUES.md)
    assert values[-1] == pytest.approx(0.000175, rel=0.05)
    assert values[-1] < 1e-3 * values[0]
    third = len(values) // 3
    assert max(values[-third:]) < min(values[:third])
    assert png_size(plot) == (640, 400)
    same_picture(plot, trace, "kuhn_from_course.efg: cfr+", tmp_path)


def test_hsvi_bounds_bracket_the_known_value(tmp_path, capsys) -> None:
    game = shared_path("posg", "test", "rewards.osposg")
    trace = tmp_path / "r.csv"
    assert ggp(["solve", str(game), "--epsilon", "1e-6", "--time-limit", "10",
                "--trace", str(trace)]) == 0
    header, table = rows(trace)
    assert header == ["seconds", "iteration", "lower", "upper", "gap"]
    exact = 1 / (1 - 0.95 ** 2)
    assert table and all(r["lower"] - 1e-9 <= exact <= r["upper"] + 1e-9 for r in table)
    assert table[-1]["gap"] <= 1e-6


@pytest.mark.slow
def test_hsvi_trace_on_peg03_narrows_around_its_value(tmp_path, capsys) -> None:
    game = shared_path("posg", "pursuit-evasion", "peg03.osposg")
    trace, plot = tmp_path / "p.csv", tmp_path / "p.png"
    assert ggp(["solve", str(game), "--epsilon", "1", "--time-limit", "60", "--json",
                "--trace", str(trace), "--plot", str(plot)]) == 0
    result = json.loads(capsys.readouterr().out)
    _, table = rows(trace)
    lower = [r["lower"] for r in table]
    upper = [r["upper"] for r in table]
    # VALUES.md: the value is within 1 of 83.4436; the presolve bounds are 50.1106 and
    # 85.7375; HSVI's lower bound never drops, its upper bound never rises
    assert lower[0] == pytest.approx(50.1106, abs=1e-3)
    assert upper[0] == pytest.approx(85.7375, abs=1e-3)
    assert all(lo <= 83.4436 + 1 and hi >= 83.4436 - 1 for lo, hi in zip(lower, upper,
                                                                           strict=True))
    assert lower == sorted(lower) and upper == sorted(upper, reverse=True)
    assert (lower[-1], upper[-1]) == (result["lower"], result["upper"])
    assert upper[-1] - lower[-1] <= 1
    same_picture(plot, trace, "peg03.osposg: HSVI", tmp_path)


def test_gdl_solve_traces_states_found(tmp_path, capsys) -> None:
    trace, plot = tmp_path / "t.csv", tmp_path / "t.png"
    game = GAMES / "gdl" / "simultaneous_tictactoe.kif"
    for path in ("dag", "model"):
        assert ggp(["solve", str(game), "--path", path, "--quiet", "--json",
                    "--trace", str(trace), "--plot", str(plot)]) == 0
        result = json.loads(capsys.readouterr().out)
        header, table = rows(trace)
        assert header == ["seconds", "states"]
        states = [r["states"] for r in table]
        seconds = [r["seconds"] for r in table]
        # 12,829 reachable states (VALUES.md); the last row is the whole expansion
        assert states[-1] == result["states"] == 12829
        assert len(table) >= 2 and states == sorted(states) and seconds == sorted(seconds)
        assert seconds[-1] == pytest.approx(result["expand_seconds"], abs=1e-3)
    same_picture(plot, trace, "simultaneous_tictactoe.kif: expansion (baseline)", tmp_path)


def test_a_long_run_keeps_a_bounded_evenly_thinned_trace() -> None:
    trace = Trace("states", "t", max_rows=10)
    for k in range(1000):
        trace.add(k, 10 * k)
    trace.finish()
    kept = trace.column("seconds")
    assert len(kept) <= 11 and kept[0] == 0 and kept[-1] == 999
    gaps = {b - a for a, b in zip(kept[:-2], kept[1:-1], strict=True)}
    assert len(gaps) == 1       # every kept sample a fixed stride apart (but the last)


def test_trace_errors_are_one_line(tmp_path, capsys) -> None:
    game = shared_path("efg", "kuhn_from_course.efg")
    assert ggp(["solve", str(game), "--solver", "lp", "--plot", str(tmp_path / "x.png")]) == 1
    assert "the lp solver has none" in capsys.readouterr().err
    assert ggp(["solve", str(game), "--trace", str(tmp_path)]) == 1
    assert "--trace" in capsys.readouterr().err
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(Exception, match="not a trace"):
        read_trace(bad)


def test_a_run_without_iterations_draws_an_empty_plot(tmp_path, capsys) -> None:
    game = shared_path("efg", "kuhn_from_course.efg")
    plot, trace = tmp_path / "z.png", tmp_path / "z.csv"
    assert ggp(["solve", str(game), "--iterations", "0", "--plot", str(plot),
                "--trace", str(trace)]) == 0
    assert rows(trace) == (["iteration", "seconds", "nash_conv"], [])
    assert png_size(plot) == (640, 400)


def test_a_gdl_solve_stopped_by_a_limit_keeps_its_trace(tmp_path, capsys) -> None:
    trace = tmp_path / "t.csv"
    game = GAMES / "gdl" / "simultaneous_tictactoe.kif"
    assert ggp(["solve", str(game), "--path", "model", "--max-states", "1000", "--quiet",
                "--trace", str(trace)]) == 1
    assert "budget of 1,000 states" in capsys.readouterr().err
    _, table = rows(trace)
    # the per-state path checks its budget as it numbers states 0, 256, 512 ...
    assert [r["states"] for r in table] == [1, 257, 513, 769]
