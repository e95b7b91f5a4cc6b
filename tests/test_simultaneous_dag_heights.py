"""dag.heights: relaxation and the compiled depth-first walk agree, on deep DAGs too."""

from __future__ import annotations

import numpy as np
import pytest

from solvers.errors import ValidationError
from solvers.numba_switch import numba_allowed
from solvers.simultaneous import dag as dag_module
from solvers.simultaneous.dag import StateDag, heights


def random_dag(states: int, seed: int, chain: bool = False, cycle: bool = False) -> StateDag:
    """A random DAG whose entries lead to one of the next 3 states (the last one is
    terminal), so it is deep; with ``chain`` each state's first entry leads to the
    next state; with ``cycle`` the last non-terminal state leads back to the root."""
    rng = np.random.default_rng(seed)
    n0 = rng.integers(1, 3, states).astype(np.uint16)
    n1 = rng.integers(1, 3, states).astype(np.uint16)
    n0[-1] = n1[-1] = 0
    nk = (n0 > 0).astype(np.uint16)
    sizes = n0.astype(np.int64) * n1
    start = np.concatenate([[0], np.cumsum(sizes)])
    child = np.empty(start[-1], dtype=np.int32)
    for s in range(states - 1):
        block = rng.integers(s + 1, min(s + 4, states), sizes[s])
        if chain:
            block[0] = s + 1
        child[start[s]:start[s + 1]] = block
    if cycle:
        child[start[states - 2]] = 0
    payoff = np.zeros((states, 2))
    return StateDag(n0, n1, nk, start, child, payoff)


def relaxed(dag: StateDag, monkeypatch: pytest.MonkeyPatch) -> np.ndarray:
    monkeypatch.setenv("GGP_NUMBA", "0")
    try:
        return heights(dag)
    finally:
        monkeypatch.undo()


def test_relaxation_gives_the_longest_paths_of_a_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    dag = random_dag(300, seed=1, chain=True)
    # every state is on the chain s -> s + 1, and no entry goes backwards
    assert list(relaxed(dag, monkeypatch)) == list(range(299, -1, -1))


@pytest.mark.skipif(not numba_allowed(), reason="numba is not installed (or GGP_NUMBA=0)")
@pytest.mark.parametrize("seed", [2, 3])
def test_the_compiled_walk_equals_relaxation(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    dag = random_dag(500, seed)
    expected = relaxed(dag, monkeypatch)
    assert len(np.unique(np.diff(expected))) > 1  # not a plain chain
    assert expected.max() > dag_module.RELAXATION_PASSES  # so heights() takes the walk
    assert np.array_equal(heights(dag), expected)
    assert np.array_equal(dag_module._heights_compiled(dag), expected)


@pytest.mark.parametrize("numba", ["1", "0"])
def test_a_cycle_is_reported(numba: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if numba == "1" and not numba_allowed():
        pytest.skip("numba is not installed (or GGP_NUMBA=0)")
    monkeypatch.setenv("GGP_NUMBA", numba)
    with pytest.raises(ValidationError, match="cycle"):
        heights(random_dag(100, seed=4, chain=True, cycle=True))
