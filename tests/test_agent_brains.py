"""The agent's brains behind their one interface (agent/brains/base.py): the factory
picks the brain from the game's format, the worker only observes, asks for the legal
moves, selects and asks for the goals; the GDL -> GDL-II switch is the brain's."""

from __future__ import annotations

import ast
import random
import time
from pathlib import Path

from conftest import shared_path
from test_agent_robustness import TINY

from agent.brains.factory import make_brain
from agent.brains.options import BrainOptions, GameSpec
from gdl.formats import load_game_text

AGENT = Path(__file__).resolve().parent.parent / "agent"


def test_a_gdl_brain_plays_and_scores_a_match() -> None:
    brain = make_brain(GameSpec("gdl", TINY), "p", BrainOptions(seed=1), time.monotonic() + 5)
    assert sorted(brain.legal()) == ["(go 2)", "stay"]
    brain.metagame(time.monotonic() + 0.5)
    brain.observe(None)
    move, info = brain.select(time.monotonic() + 0.5)
    assert move == "(go 2)" and info["step"] == 1
    brain.observe([move])
    assert brain.step == 1 and brain.legal() == [] and brain.goals() == [100]
    brain.stop()


def test_a_gdl_game_told_percepts_only_is_played_as_gdl2() -> None:
    """A game master may speak GDL-II for a GDL game: the brain turns into the GDL-II
    one at the first such observation, and the match goes on behind the same calls."""
    brain = make_brain(GameSpec("gdl", TINY), "P", BrainOptions(seed=1), time.monotonic() + 5)
    brain.observe({"turn": 0, "last_move": None, "percepts": None})
    assert brain.step == 0 and sorted(brain.legal()) == ["(go 2)", "stay"]
    move, info = brain.select(time.monotonic() + 0.5)
    assert move in ("(go 2)", "stay") and "belief" in info   # the GDL-II brain's record
    brain.observe({"turn": 1, "last_move": "(go 2)", "percepts": []})
    assert brain.step == 1 and brain.goals() == [100]


def test_a_playable_game_is_told_its_legal_moves() -> None:
    text = shared_path("efg", "kuhn_from_course.efg").read_text()
    game = load_game_text("efg", text, name="kuhn")
    brain = make_brain(GameSpec("efg", text, "kuhn"), "Player 1", BrainOptions(seed=2),
                       time.monotonic() + 5)
    assert brain.legal() == []   # nothing told yet
    assert brain.metagame(time.monotonic() + 5)["policy"]
    state = game.initial_state(random.Random(0))
    legal = game.legal_moves(state, 0)
    brain.observe(game.observation(state, 0), time.monotonic() + 1, legal)
    assert brain.legal() == legal
    move, info = brain.select(time.monotonic() + 1)
    assert move in legal and info == {"step": 1, "method": "equilibrium"}
    assert brain.goals() is None


def test_the_worker_knows_no_brain_by_its_kind() -> None:
    """agent/worker.py imports the interface and the factory, no brain class but the
    light fallback worker's (a kind of process, not of game)."""
    tree = ast.parse((AGENT / "worker.py").read_text())
    imported = {(node.module, alias.name) for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module
                and node.module.startswith("agent.") for alias in node.names}
    assert imported == {("agent.brains.base", "Brain"), ("agent.brains.factory", "make_brain"),
                        ("agent.brains.legal", "LegalBrain"),
                        ("agent.brains.factory", "warm_up"),
                        ("agent.brains.options", "BrainOptions"),
                        ("agent.brains.options", "GameSpec")}
    assert "isinstance" not in (AGENT / "worker.py").read_text()
