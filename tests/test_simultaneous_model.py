"""The simultaneous-move game model: builder, arrays, validation."""

from __future__ import annotations

import numpy as np
import pytest

from solvers.errors import GameError, LimitReached
from solvers.simultaneous.model import SimultaneousGame, SimultaneousGameBuilder


def bos_with_book() -> SimultaneousGame:
    """Figure 4.1: Bach or Stravinsky with a book option."""
    b = SimultaneousGameBuilder(("P0", "P1"))
    root = b.add_node(2, 1, ("R", "C"), ("0",))
    concert = b.add_node(2, 2, ("B", "S"), ("B", "S"), label="C0")
    b.set_terminal(root, 0, 0, (1, 1))
    b.set_child(root, 1, 0, concert)
    b.set_entries(concert, [[-1, -1], [-1, -1]], [[[2, 1], [0, 0]], [[0, 0], [1, 2]]])
    return b.build()


def test_builder_layout():
    g = bos_with_book()
    assert g.num_nodes == 2 and g.num_entries == 6
    assert g.height.tolist() == [1, 0]
    assert [lv.tolist() for lv in g.levels] == [[1], [0]]
    assert g.entry_row.tolist() == [0, 1, 0, 0, 1, 1]
    assert g.entry_col.tolist() == [0, 0, 0, 1, 0, 1]
    assert g.action_start.tolist() == [[0, 2, 4], [0, 1, 3]]
    assert g.histories() == ["/", "/C,0"]
    assert g.node_name(1) == "C0" and g.node_name(0) == "/"
    assert g.actions(1, 1) == ("B", "S")


def test_shared_child_dag():
    b = SimultaneousGameBuilder()
    root = b.add_node(2, 2)
    leaf = b.add_node(1, 1)
    b.set_terminal(leaf, 0, 0, (0.5, -0.5))
    b.set_entries(root, [[leaf, leaf], [leaf, -1]], [[[0, 0], [0, 0]], [[0, 0], [1, -1]]])
    g = b.build()
    assert g.children(root).tolist() == [1, 1, 1]
    assert g.height.tolist() == [1, 0]
    assert g.histories()[leaf] == "/a1,b1"


def test_chance_node():
    b = SimultaneousGameBuilder()
    c = b.add_chance([0.25, 0.75], labels=("odd", "even"))
    b.set_terminal(c, 0, 0, (1, 0))
    b.set_terminal(c, 1, 0, (0, 1))
    g = b.build()
    assert g.is_chance(c) and g.action_start[:, -1].tolist() == [0, 0]
    assert g.entry_prob.tolist() == [0.25, 0.75]


@pytest.mark.parametrize("make, message", [
    (lambda b: b.add_node(0, 2), "empty action set"),
    (lambda b: (b.add_node(1, 1), b.build()), "neither terminal nor a child"),
    (lambda b: (b.add_node(1, 1), b.set_terminal(0, 0, 0, (float("nan"), 0))), "not a finite"),
    (lambda b: (b.add_node(1, 1), b.set_child(0, 0, 0, 0), b.build()), "its own child"),
    (lambda b: (b.add_node(1, 1), b.add_node(1, 1), b.set_child(0, 0, 0, 1),
                b.set_child(1, 0, 0, 0), b.build()), "cycle"),
    (lambda b: (b.add_node(1, 1), b.set_child(0, 0, 0, 7), b.build()), "not a node"),
    (lambda b: (b.add_chance([0.5, 0.6]), b.set_terminal(0, 0, 0, (0, 0)),
                b.set_terminal(0, 1, 0, (0, 0)), b.build()), "sum to"),
    (lambda b: (b.add_node(2, 2), b.set_terminal(0, 2, 0, (0, 0))), "outside"),
])
def test_bad_input_is_a_game_error(make, message):
    with pytest.raises(GameError, match=message):
        make(SimultaneousGameBuilder())


def test_node_budget():
    b = SimultaneousGameBuilder(max_nodes=2)
    b.add_node(1, 1)
    b.add_node(1, 1)
    with pytest.raises(LimitReached):
        b.add_node(1, 1)


def test_from_arrays_matches_builder():
    g = bos_with_book()
    h = SimultaneousGame.from_arrays(g.num_actions, g.entry_child, g.entry_payoff)
    assert np.array_equal(h.height, g.height)
    with pytest.raises(GameError, match="lengths"):
        SimultaneousGame.from_arrays(g.num_actions, g.entry_child[:-1], g.entry_payoff)
