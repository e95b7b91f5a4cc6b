"""CFR+ on a deep chain is linear in the game (issue #32, item 13): a chain 100,000
nodes deep took 13 s for its first iteration against 0.18 s at 10,000, because every
level of the sequence-form passes made arrays over all sequences. The test counts the
array elements the passes' numpy calls take and make, for a chain and one ten times
deeper: linear work grows ~10x, the old quadratic work ~100x."""

from __future__ import annotations

import types

import numpy as np
import pytest

import solvers.extensive.sequence_form as sequence_form
from solvers.extensive.efg_format import read_efg
from solvers.extensive.solve import solve


def chain(depth: int) -> str:
    """Players 1 and 2 alternate: ``a`` ends the game (the mover wins 1), ``b`` goes
    on; the end of the chain is a draw."""
    lines = ['EFG 2 R "chain" { "P1" "P2" }', '""']
    for i in range(depth):
        mover = 1 + i % 2
        win = "1, -1" if mover == 1 else "-1, 1"
        lines += [f'p "" {mover} {i + 1} "" {{ "a" "b" }} 0', f't "" {i + 1} "" {{ {win} }}']
    lines.append(f't "" {depth + 1} "" {{ 0, 0 }}')
    return "\n".join(lines) + "\n"


class CountingNumpy(types.ModuleType):
    """numpy, counting the elements of the arrays its functions take and return."""

    def __init__(self) -> None:
        super().__init__("numpy")
        self.elements = 0

    def __getattr__(self, name: str):
        real = getattr(np, name)
        if not callable(real) or isinstance(real, (np.ufunc, type)):
            return real

        def counted(*args, **kwargs):
            result = real(*args, **kwargs)
            for x in (*args, *kwargs.values(), result):
                if isinstance(x, np.ndarray):
                    self.elements += x.size
            return result
        return counted


def solve_work(depth: int, monkeypatch) -> tuple[int, list[float]]:
    game = read_efg(chain(depth))
    counter = CountingNumpy()
    monkeypatch.setattr(sequence_form, "np", counter)
    result = solve(game, "cfr+", iterations=1)
    monkeypatch.setattr(sequence_form, "np", np)
    return counter.elements, [float(v) for v in result.values]


def test_cfr_plus_work_grows_linearly_with_a_chains_depth(monkeypatch) -> None:
    small, values = solve_work(400, monkeypatch)
    big, _ = solve_work(4_000, monkeypatch)
    # after one iteration the average strategy is uniform: the mover at level i ends
    # the game with probability 1/2, so P1's value is sum_i (-1)^i / 2^(i+1) = 1/3
    assert values == pytest.approx([1 / 3, -1 / 3], abs=1e-9)
    assert big / small < 20, f"10x deeper chain: {big / small:.0f}x the work"
