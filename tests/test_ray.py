"""Tournaments and sharded solves on a Ray cluster: a local multi-node test cluster on
127.0.0.1 (ray.cluster_utils.Cluster), compared with the single-machine runs."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import GAMES, shared_path

from solvers.ray_cluster import connect, node_args, ray_module

ray = pytest.importorskip("ray")

GOOFSPIEL_4 = GAMES / "gdl" / "goofspiel_4.kif"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A head and one worker node (one CPU each), the driver connected to it."""
    ray_module(loopback=True)
    from ray.cluster_utils import Cluster

    local = Cluster(initialize_head=True, head_node_args=node_args())
    try:
        local.add_node(**node_args())
        with connect(local.address):
            local.wait_for_nodes()
            yield local
    finally:
        local.shutdown()


def _outcomes(matches: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(m["seed"], m["players"], m["status"], m["payoffs"]) for m in matches]


def _single_machine(tmp_path: Path, players: list[str], rounds: int) -> dict[str, Any]:
    from gdl.formats import load_game
    from server.app import MatchServer
    from server.records import Records
    from server.tournament import run_tournament

    async def run() -> dict[str, Any]:
        records = Records(tmp_path / "single.sqlite")
        try:
            async with MatchServer(records, port=0) as server:
                result = await run_tournament(server, [load_game(GOOFSPIEL_4)], players,
                                              rounds=rounds, seed=11, concurrency=4)
        finally:
            records.close()
        return result.to_json()

    return asyncio.run(run())


def _on_ray(db: Path, players: list[str], rounds: int, concurrency: int = 2) -> Any:
    from gdl.formats import load_game
    from server.ray_tournament import game_source, run_ray_tournament
    from server.records import Records

    records = Records(db)
    try:
        return asyncio.run(run_ray_tournament(
            records, [load_game(GOOFSPIEL_4)], [game_source(GOOFSPIEL_4)], players,
            rounds=rounds, seed=11, concurrency=concurrency))
    finally:
        records.close()


def _recorded(db: Path, tournament: str) -> tuple[list[tuple[Any, ...]], int]:
    """(per recorded match: id, status, payoffs, steps), and the steps recorded twice."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT id, status, payoffs, (SELECT COUNT(*) FROM steps s WHERE "
                            "s.match = m.id) FROM matches m WHERE tournament=? ORDER BY id",
                            (tournament,)).fetchall()
        twice = conn.execute("SELECT COUNT(*) FROM (SELECT match, step FROM steps GROUP BY "
                             "match, step HAVING COUNT(*) > 1)").fetchone()[0]
    return rows, twice


@pytest.mark.slow
def test_tournament_on_two_nodes_equals_one_machine(cluster: Any, tmp_path: Path) -> None:
    players = ["random", "first", "random"]
    single = _single_machine(tmp_path, players, rounds=2)
    result = _on_ray(tmp_path / "ray.sqlite", players, rounds=2)
    assert _outcomes(result.to_json()["matches"]) == _outcomes(single["matches"])
    assert result.to_json()["standings"] == single["standings"]
    rows, twice = _recorded(tmp_path / "ray.sqlite", result.id)
    assert len(rows) == 6 and twice == 0
    assert all(status == "completed" and steps == 4 for _, status, _, steps in rows)
    assert result.nodes == 2  # both nodes played (one CPU each, two matches at a time)


@pytest.mark.slow
def test_many_matches_at_once_share_their_nodes_match_hosts(cluster: Any,
                                                            tmp_path: Path) -> None:
    """60 matches in flight at once over the two nodes' match hosts (one a node, one
    CPU each): 30 in each host's event loop, the same results as one machine."""
    players = ["random?delay=0.2", "first", "random"]
    single = _single_machine(tmp_path, players, rounds=20)   # 3 pairings a round
    result = _on_ray(tmp_path / "many.sqlite", players, rounds=20, concurrency=60)
    assert _outcomes(result.to_json()["matches"]) == _outcomes(single["matches"])
    rows, twice = _recorded(tmp_path / "many.sqlite", result.id)
    assert len(rows) == 60 and twice == 0 and result.retried == 0
    assert result.hosts == 2 and result.nodes == 2
    assert result.most_at_once == 60 and result.busiest_host == 30


def _kill_while_it_plays(cluster: Any, doomed: Any, done: threading.Event) -> None:
    """Kills the doomed node the moment its match host reports a match running (a host
    counts a match only after the ledger heard of its start there): that match is then
    certainly lost mid-play, whatever the scheduler and the machine's load did."""
    tag = doomed.node_id[:12]
    while not done.wait(0.05):
        names = [n for n in ray.util.list_named_actors() if n.startswith("ggp-host-")
                 and f"-{tag}-" in n]
        for name in names:
            with contextlib.suppress(ValueError, ray.exceptions.RayError):
                if ray.get(ray.get_actor(name).playing.remote(), timeout=10) > 0:
                    cluster.remove_node(doomed, allow_graceful=False)
                    return


@pytest.mark.slow
def test_a_lost_node_loses_no_match_and_records_none_twice(cluster: Any,
                                                           tmp_path: Path) -> None:
    """A third node joins, takes matches, and is killed while it plays one (every match
    has a player that waits 0.3 s a step: 1.2 s or more each, three at once); that match
    runs again on the others (Ray's task retries) and is recorded once."""
    players = ["random?delay=0.3", "first?delay=0.3", "random"]
    single = _single_machine(tmp_path, players, rounds=3)
    doomed = cluster.add_node(**node_args())
    cluster.wait_for_nodes()
    done = threading.Event()
    killer = threading.Thread(target=_kill_while_it_plays, args=(cluster, doomed, done))
    killer.start()
    try:
        result = _on_ray(tmp_path / "ray.sqlite", players, rounds=3, concurrency=3)
    finally:
        done.set()
        killer.join()
    assert doomed not in cluster.worker_nodes, "the doomed node never ran a match"
    assert _outcomes(result.to_json()["matches"]) == _outcomes(single["matches"])
    rows, twice = _recorded(tmp_path / "ray.sqlite", result.id)
    assert len(rows) == 9 and len({r[0] for r in rows}) == 9 and twice == 0
    assert all(status == "completed" and steps == 4 for _, status, _, steps in rows)
    assert result.retried >= 1


@pytest.mark.slow
def test_sharded_solve_of_a_corpus_game_equals_one_process(cluster: Any) -> None:
    """chickentictactoe (18,611 states) over two shards on two nodes: the values of every
    state and the certificate of the single-process scale path."""
    import numpy as np

    from gdl.expansion.row_table import RowTable
    from gdl.solving.ray_solve import solve_sharded
    from gdl.solving.solve import solve_game

    path = shared_path("gdl-corpus", "repository", "chickentictactoe.kif")
    single = solve_game(path, "baseline")
    shards: list[Any] = []
    result = solve_sharded(path.read_text(), str(path), 2, keep=shards)
    try:
        parts = ray.get([shard.values.remote() for shard in shards])
    finally:
        for shard in shards:
            ray.kill(shard)
    assert (result.states, result.nonterminal, result.transitions) == (
        single.states, single.figures()["nonterminal"], single.transitions) == (
        18_611, 11_093, 163_195)
    assert np.allclose(result.values, list(single.values().values()), atol=1e-9)
    assert len({p["node"] for p in result.shards}) == 2
    table = RowTable(single.expansion.packed.shape[1])
    table.add(single.expansion.packed)
    for rows, values in parts:   # every state, found by its packed facts
        index, new = table.add(rows)
        assert new == 0
        assert np.abs(values - single.solution.values[index]).max() <= 1e-9
    expected = single.certificate
    assert result.certificate["ok"] and expected["ok"]
    for field in ("states_checked", "unsolved_reached"):
        assert result.certificate[field] == expected[field]
    assert abs(result.certificate["max_gain"] - expected["max_gain"]) <= 1e-9


def test_solve_with_ray_refuses_what_it_does_not_do(tmp_path: Path) -> None:
    from gdl.cli.solve import solve_main as main
    from solvers.errors import GameError

    game = str(GAMES / "gdl" / "goofspiel_3.kif")
    for extra in (["--solver", "ih"], ["--save", str(tmp_path / "x.npz")], ["--path", "model"]):
        with pytest.raises(GameError, match="not available with"):
            main([game, "--ray", "local:1", *extra])


def test_ws_seats_are_refused_with_ray() -> None:
    from server.ray_tournament import check_ray_specs
    from solvers.errors import GameError

    with pytest.raises(GameError, match="ws: seats"):
        check_ray_specs(["random", "ws:alice"])


def test_an_unreachable_head_is_a_one_line_error() -> None:
    from solvers.errors import GameError

    with pytest.raises(GameError, match="cannot reach the Ray cluster at 127.0.0.1:1"):
        with connect("127.0.0.1:1"):
            pass


def test_bad_local_addresses_are_one_line_errors() -> None:
    from solvers.errors import GameError
    from solvers.ray_cluster import local_nodes

    assert local_nodes("local:3") == 3 and local_nodes("127.0.0.1:6379") is None
    for bad in ("local:0", "local:x", "local"):
        with pytest.raises(GameError, match="local"):
            local_nodes(bad)
