"""ggp bench thesis: the pieces, on a few small games (the bench itself runs for minutes)."""

from __future__ import annotations

import math

import pytest

from solvers.bench.thesis import THESIS_4_3, lcp_times, table_4_2, table_4_3
from solvers.simultaneous.efg_export import efg_text
from solvers.simultaneous.random_games import full_game, variable_game


def test_table_4_3_rows_print_ours_beside_the_thesis():
    lines: list[str] = []
    out = table_4_3(2, False, 0, lines.append, rows=[(2, 2), (3, 1)])
    assert set(out) == {"2,2", "3,1"}
    assert out["2,2"]["certificate_failures"] == 0 and out["2,2"]["games"] == 2
    row = next(line for line in lines if line.startswith("(2,2)"))
    assert f"{THESIS_4_3[(2, 2)][3]:.2e}" in row  # the thesis' mean IH beside ours


def test_table_4_2_without_gambit_runs():
    lines: list[str] = []
    out = table_4_2(3, 0, 1.0, 0, lines.append, depths=(1, 2))
    assert out[2]["lcp"] == [] and out[2]["certificate_failures"] == 0
    assert any(line.startswith("(2,2)") and "[   9]" in line for line in lines)  # Table 4.1 mean


def test_lcp_worker_times_and_timeouts(tmp_path):
    pytest.importorskip("pygambit")
    quick = tmp_path / "quick.efg"
    quick.write_text(efg_text(variable_game(2, 1, 0)))
    slow = tmp_path / "slow.efg"
    slow.write_text(efg_text(full_game(2, 3, 0)))  # 85 nodes: LCP takes many seconds
    times = lcp_times([quick, slow, quick], timeout=0.5)
    assert math.isfinite(times[0])
    assert times[1] == math.inf
    assert math.isfinite(times[2])
