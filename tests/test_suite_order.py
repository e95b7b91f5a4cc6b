"""The suite runs its fast tests first and the ``slow`` ones last (issue #32, item 22),
so a failure shows within minutes; CI still runs them all."""

from __future__ import annotations

import pytest


def test_no_fast_test_comes_after_a_slow_one(request: pytest.FixtureRequest) -> None:
    slow = [item.get_closest_marker("slow") is not None for item in request.session.items]
    assert slow == sorted(slow)


@pytest.mark.slow
def test_a_slow_test_of_this_file_runs_after_the_fast_ones(request: pytest.FixtureRequest) -> None:
    items = request.session.items
    here = items.index(request.node)
    assert all(item.get_closest_marker("slow") is not None for item in items[here:])
