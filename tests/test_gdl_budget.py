"""One budget type (issue 31): grounding and expansion read the same ``gdl.budget.Budget``,
each stage with its own defaults, and the state machine's engine choice imports both
engines (no circle)."""

from __future__ import annotations

import pytest
from conftest import REPO

import gdl.expansion.expand
import gdl.reasoning.ground
from gdl.budget import Budget
from gdl.reasoning.machine import load_machine
from solvers.errors import LimitReached

TTT = "games/gdl/simultaneous_tictactoe.kif"


def test_one_budget_type_for_every_stage() -> None:
    assert gdl.reasoning.ground.Budget is Budget and gdl.expansion.expand.Budget is Budget
    budget = Budget()
    # grounding: join steps decide, seconds are a safety net
    assert (budget.max_steps, budget.max_seconds, budget.steps) == (300_000, 60.0, 0)
    # expansion: states, no time limit, resident memory growth
    assert (budget.max_states, budget.time_limit, budget.memory_mb) == (2_000_000, None, 8192.0)
    assert budget.started is None and budget.sample is None


def test_each_stage_reads_its_own_limits() -> None:
    tight = Budget(max_steps=10)   # grounding stops; "auto" falls back, naming why
    machine = load_machine(REPO / TTT, budget=tight)
    assert machine.engine_name == "general" and "join steps" in machine.fallback_reason
    assert tight.steps > 10
    with pytest.raises(LimitReached, match="budget of 5 states"):
        gdl.expansion.expand.expand(load_machine(REPO / TTT), budget=Budget(max_states=5))
