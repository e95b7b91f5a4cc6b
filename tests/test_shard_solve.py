"""The sharded backward induction and certificate (solvers/simultaneous/shard_solve.py), run
in one process: a DAG split over K shards gives the single-process values at every state
and the same certificate (the Ray transport is tested in test_ray.py)."""

from __future__ import annotations

import numpy as np
import pytest

from solvers.errors import UnsupportedGame
from solvers.simultaneous import dag_baseline, dag_certificate, shard_solve
from solvers.simultaneous.dag import StateDag
from solvers.simultaneous.random_games import random_dag
from solvers.simultaneous.shard_solve import LocalDag, check_progress


def split(dag: StateDag, owner: np.ndarray, shards: int) -> tuple[list[LocalDag], np.ndarray]:
    """Each shard's local DAG (its states in order), and each state's number in its shard."""
    rank = np.zeros(dag.num_states, dtype=np.int32)
    for k in range(shards):
        mine = np.flatnonzero(owner == k)
        rank[mine] = np.arange(len(mine))
    locals_ = []
    for k in range(shards):
        mine = np.flatnonzero(owner == k)
        entries = np.concatenate([np.arange(dag.entry_start[s], dag.entry_start[s + 1])
                                  for s in mine] + [np.empty(0, np.int64)]).astype(np.int64)
        children = dag.entry_child[entries]
        counts = np.stack([dag.n0[mine], dag.n1[mine], dag.nk[mine]], axis=1)
        locals_.append(shard_solve.local_dag(counts, dag.payoff[mine], owner[children].astype(np.int32),
                                 rank[children], k, int(rank[dag.root]), dag.player_names))
    return locals_, rank


def run(shards_: list, k: int) -> int:
    """The rounds until every shard is done (what the Ray driver does); the round count."""
    incoming = [[(np.empty(0, np.int64), np.empty((0, 4)))] * k for _ in range(k)]
    left, quiet, rounds = -1, 0, 0
    while True:
        outs = [s.step(incoming[i]) for i, s in enumerate(shards_)]
        rounds += 1
        quiet = check_progress(left, sum(s.left for s in shards_), quiet)
        left = sum(s.left for s in shards_)
        if not left:
            return rounds
        incoming = [[outs[i][j] for i in range(k)] for j in range(k)]


@pytest.mark.parametrize("shards", [1, 2, 3])
@pytest.mark.parametrize("zero_sum", [True, False])
def test_sharded_solve_equals_one_process(shards: int, zero_sum: bool) -> None:
    for seed in range(3):
        dag = random_dag(4, 5, 15, seed, zero_sum=zero_sum, outcomes=2)
        single = dag_baseline.solve(dag)
        expected = dag_certificate.check(dag, single)
        owner = np.random.default_rng(seed).integers(0, shards, dag.num_states)
        locals_, rank = split(dag, owner, shards)
        needs = [local.needs(shards) for local in locals_]
        subscribers = [[needs[i][k] for i in range(shards)] for k in range(shards)]
        solves = [shard_solve.ShardSolve(local, subscribers[k], "first") for k, local in enumerate(locals_)]
        run(solves, shards)
        for k, s in enumerate(solves):
            mine = np.flatnonzero(owner == k)
            gap = np.abs(s.solver.values[rank[mine]] - single.values[mine])
            assert gap.max(initial=0.0) <= 1e-9, (seed, k)
        checks = [shard_solve.ShardCheck(local, subscribers[k], s.solution())
                  for k, (local, s) in enumerate(zip(locals_, solves, strict=True))]
        run(checks, shards)
        root = solves[owner[dag.root]].solver.solved[rank[dag.root]]
        got = dag_certificate.certificate(shard_solve.combine_figures([c.figures() for c in checks]),
                                          bool(root))
        assert got["ok"] and expected["ok"]
        assert got["states_checked"] == expected["states_checked"]
        assert got["unsolved_reached"] == expected["unsolved_reached"] == 0
        assert abs(got["max_gain"] - expected["max_gain"]) <= 1e-9


def test_a_stalled_round_is_a_cycle() -> None:
    assert check_progress(-1, 5, 0) == 0
    assert check_progress(5, 5, 0) == 1
    with pytest.raises(UnsupportedGame, match="cycle"):
        check_progress(5, 5, 1)
