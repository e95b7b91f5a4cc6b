"""Games computed in worker processes (``ggp serve --workers N``, ``server/engine.py``).

A seeded match between seeded built-ins is the same match wherever its game is
computed: the records (moves, faults, every state, GDL-II percepts, payoffs) of the
pool run equal those of the event-loop run, chance moves included (Kuhn poker deals
cards from the match's chance generator, which travels to the worker and back). A
worker process that dies aborts only the match whose step it was computing, with a
reason that says so; the other worker's match, and a later match on the replaced
worker, complete.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from conftest import GAMES, running_server

from gdl.formats import load_game
from solvers.playable import PlayableGame

CASES = [("gdl/simultaneous_tictactoe.kif", 3), ("gdl2/kuhn_poker.kif", 7),
         ("gdl2/monty_hall.kif", 11), ("gdl2/leduc_holdem.kif", 5), ("gdl2/leduc_holdem.kif", 6),
         ("gdl2/leduc_holdem.kif", 8)]


def _record(srv: Any, match_id: str) -> dict[str, Any]:
    record = srv.records.get_match(match_id)
    return {"status": record["status"], "payoffs": record["payoffs"],
            "initial": record["initial_state"],
            "steps": [(s["moves"], s["errors"], s["state"], s["percepts"])
                      for s in record["steps"]]}


async def _play(tmp_path: Path, workers: int, game: PlayableGame, seed: int) -> dict[str, Any]:
    async with running_server(tmp_path / f"w{workers}", workers=workers) as srv:
        outcome = await srv.play_match(game, ["random"] * len(game.roles), startclock=5,
                                       playclock=5, seed=seed)
        assert outcome.status == "completed", outcome.reason
        return _record(srv, outcome.match)


@pytest.mark.parametrize(("path", "seed"), CASES)
async def test_pool_match_records_equal_the_event_loop_run(tmp_path: Path, path: str,
                                                           seed: int) -> None:
    game = load_game(GAMES / path)
    (tmp_path / "w0").mkdir()
    (tmp_path / "w2").mkdir()
    inline = await _play(tmp_path, 0, game, seed)
    pooled = await _play(tmp_path, 2, game, seed)
    assert inline["steps"], "the match played no step"
    assert pooled == inline


class DyingGame:
    """A game whose worker process dies when asked for a next state (in the server's
    own process it would be an ordinary game: the death is the worker's alone)."""

    def __init__(self, game: PlayableGame) -> None:
        self.game = game
        self.home = os.getpid()

    def __getattr__(self, name: str) -> Any:
        if name == "game":  # while unpickling, before __dict__ is filled
            raise AttributeError(name)
        return getattr(self.game, name)

    def next_state(self, state: Any, moves: Any, rng: Any) -> Any:
        if os.getpid() != self.home:
            os._exit(3)
        return self.game.next_state(state, moves, rng)


async def test_a_dead_worker_aborts_only_its_match(tmp_path: Path) -> None:
    game = load_game(GAMES / "gdl/simultaneous_tictactoe.kif")
    dying = DyingGame(game)
    async with running_server(tmp_path, workers=2) as srv:
        doomed = srv.create_match(dying, ["random", "random"], playclock=5, seed=1)  # worker 1
        healthy = srv.create_match(game, ["random", "random"], playclock=5, seed=1)  # worker 2
        lost, kept = srv.tasks[doomed.id], srv.tasks[healthy.id]
        lost_outcome, kept_outcome = await lost, await kept
        assert lost_outcome.status == "aborted"
        assert lost_outcome.reason == \
            "the game worker process 1 of 2 died during this match's step"
        assert srv.records.get_match(doomed.id)["reason"] == lost_outcome.reason
        assert kept_outcome.status == "completed"
        later = await srv.play_match(game, ["random", "random"], playclock=5, seed=1)  # worker 1
        assert later.status == "completed"
        assert later.moves == kept_outcome.moves  # the same seed, the same match
