"""``minimax`` (agent/search/graph_kernels.py ``_implicit``, agent/search/material.py
``Material.evaluate``): implicit minimax backups (Lanctot, Winands, Pepels & Sturtevant,
"Monte Carlo Tree Search with Heuristic Evaluations using Implicit Minimax Backups",
CIG 2014) over the material evaluation.

1. A state's evaluation is a logistic of role 0's pieces ahead.
2. A backup makes each node of the path the best of its known children's values for
   the role that chooses there; an exact node keeps its exact value.
3. Selection mixes a move's mean with its child's value by the weight.
4. In a real search (knightThrough) the root's value is the best of its children's,
   every leaf's is its evaluation, and every exact node's is its exact value.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from graph_kernel_args import backup_grave, select_grave
from test_gdl_playout_kernels import game

from agent.search import material
from agent.search.graph import KERNELS, GraphSearch
from agent.search.mcts import AgentConfig, parse_enhancements
from gdl.reasoning.batch_machine import pack_ints


@pytest.fixture(scope="module", autouse=True)
def graph_kernels():
    if KERNELS.load() is None:
        pytest.skip("numba is not available")


MASKS = np.array([[0x0F], [0xF0]], dtype=np.uint64)   # role 0's pieces bits 0-3, role 1's 4-7


def test_a_states_evaluation_is_a_logistic_of_the_pieces_ahead() -> None:
    pieces = material.Material(MASKS, ("a", "b"), (0.2, 0.2))
    values = pieces.evaluate(np.array([[0xFF], [0x7F], [0x1F], [0xF1]], dtype=np.uint64))
    ahead = [0, 1, 3, -3]   # role 0's pieces less role 1's
    assert values == pytest.approx([1 / (1 + math.exp(-a / material.PIECE_SCALE)) for a in ahead])


def _graph() -> dict[str, np.ndarray]:
    """Node 0: role 0 chooses between node 1 (role 1 chooses between leaves 3, valued
    0.8, and 4, valued 0.3) and node 2 (terminal, worth 0.6 to role 0)."""
    size = np.array([[2, 1], [1, 2], [0, 0], [1, 1], [1, 1]], dtype=np.int32)
    return dict(
        terminal=np.array([False, False, True, False, False]),
        value=np.array([[0.0, 0.0], [0.0, 0.0], [0.6, 0.4], [0.0, 0.0], [0.0, 0.0]]),
        heur=np.array([0.5, 0.5, 0.6, 0.8, 0.3]),
        size=size, slot_base=np.array([0, 3, 6, 6, 8], dtype=np.int64),
        child_base=np.array([0, 2, 4, 4, 5], dtype=np.int64),
        child=np.array([1, 2, 3, 4, -1, -1], dtype=np.int32),
        visits=np.full(10, 10.0), totals=np.full(10, 5.0), count=np.full(5, 20.0))


def _backup(g: dict[str, np.ndarray], alpha: float) -> None:
    """One descent 0 -> 1 -> 4 (role 0's first move, role 1's second), played out."""
    kern = KERNELS.loaded
    path_node = np.array([[0, 1, 0]], dtype=np.int64)
    path_joint = np.array([[0, 1, 0]], dtype=np.int64)
    chance = np.zeros(2, dtype=np.bool_)
    kern.backup(1, np.array([[1.0, 0.0]]), np.zeros(1, dtype=np.bool_), False, False, -1,
                alpha, g["heur"], chance, np.ones(2), np.array([0, 0, 1, 1], dtype=np.int64),
                path_node, path_joint, np.zeros((1, 3, 2)), np.array([2], dtype=np.int64),
                g["terminal"], np.zeros(5, dtype=np.bool_), g["value"], np.zeros((5, 2)),
                g["size"], g["slot_base"], np.array([0, 1, 0, 2, 3, 0, 0, 0, 0, 0], dtype=np.int32),
                g["totals"], g["child_base"], g["child"], np.zeros(0, dtype=np.float32),
                np.zeros(4), np.zeros(4), np.full(4, -1, dtype=np.int64), 0, *backup_grave(4))


def test_a_backup_makes_each_node_the_best_of_its_childrens_values_for_its_chooser() -> None:
    g = _graph()
    _backup(g, 0.4)
    # role 1 at node 1 takes leaf 4 (0.3 to role 0); role 0 at the root the terminal 0.6
    assert g["heur"].tolist() == pytest.approx([0.6, 0.3, 0.6, 0.8, 0.3])
    g = _graph()
    _backup(g, 0.0)   # off: nothing changes
    assert g["heur"].tolist() == [0.5, 0.5, 0.6, 0.8, 0.3]


def _select(g: dict[str, np.ndarray], root: int, alpha: float) -> int:
    """The move index a descent from ``root`` takes there (no exploration term)."""
    kern = KERNELS.loaded
    path_node, path_joint = np.zeros((1, 8), dtype=np.int64), np.zeros((1, 8), dtype=np.int64)
    leaf_kind, leaf_node = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    kern.select(root, 1, 0.0, 0.0, False, -1, alpha, g["heur"], np.array([7], dtype=np.uint64),
                np.zeros(2, dtype=np.bool_), g["terminal"], np.zeros(5, dtype=np.bool_),
                g["count"], np.zeros((5, 2)), g["size"], g["slot_base"], g["visits"],
                g["totals"], g["child_base"], g["child"], np.zeros(0, dtype=np.int32),
                np.zeros(0, dtype=np.float32), path_node, path_joint, np.zeros((1, 8, 2)),
                np.zeros(1, dtype=np.int64), leaf_kind, leaf_node,
                *select_grave(4))
    return int(path_joint[0, 0])


def test_selection_mixes_a_moves_mean_with_its_childs_value() -> None:
    g = _graph()
    g["heur"][:] = [0.5, 0.3, 0.6, 0.8, 0.3]
    g["totals"][0] = 5.5   # role 0's first move: mean 0.55 against the second's 0.5
    assert _select(g, 0, 0.0) == 0
    # mixed: 0.55 + 0.4 (0.3 - 0.55) = 0.45 against 0.5 + 0.4 (0.6 - 0.5) = 0.54
    assert _select(g, 0, 0.4) == 1
    # role 1 at node 1 (means 0.5 each) values its children 1 - 0.8 and 1 - 0.3
    assert _select(g, 1, 0.4) == 1


def _knight_through() -> tuple[GraphSearch, object, material.Material, object]:
    """A ``minimax`` search of knightThrough, its machine, the material (each side's
    pieces) and a state six plies in, where captures are in reach of both."""
    machine, _ = game("knightThrough")
    config = AgentConfig(enhancements=parse_enhancements("default,minimax"), seed=3)
    search = GraphSearch(machine, config)
    sets = dict(material.piece_sets(machine.facts))
    masks = [pack_ints([sum(1 << int(i) for i in sets[f"cell(?, ?, {side})"])],
                       search.bm.n_words)[0] for side in ("white", "black")]
    pieces = material.Material(np.array(masks), ("white", "black"), (0.2, 0.2))
    state = machine.initial_state()
    for _ in range(6):
        state = machine.next_state(state, [machine.legal_moves(state, r)[0] for r in (0, 1)])
    return search, machine, pieces, state


def test_nodes_made_before_the_material_was_found_are_evaluated_when_it_is() -> None:
    search, _, pieces, state = _knight_through()
    search.search(state, playouts=3_000)
    g, n = search.graph, search.nodes
    assert n > 500 and not g.heur[:n].any()   # off without material
    search.material = pieces
    assert np.allclose(g.heur[:n], np.where(g.terminal[:n], g.value[:n, 0],
                                            pieces.evaluate(g.state[:n])))


def test_a_real_searchs_values_are_implicit_minimax_values() -> None:
    search, machine, pieces, state = _knight_through()
    search.material = pieces
    result = search.search(state, playouts=20_000)
    g, root, n = search.graph, search.node_of(state), search.nodes
    assert result.playouts == 20_000 and root >= 0
    kids = search._child_nodes(root)
    mover = 0 if g.size[root, 0] > 1 else 1
    best = max(g.heur[k] if mover == 0 else 1 - g.heur[k] for k in kids if k >= 0)
    assert g.heur[root] == pytest.approx(best if mover == 0 else 1 - best)
    exact = g.terminal[:n] | g.proven[:n]
    assert np.allclose(g.heur[:n][exact], g.value[:n, 0][exact])
    leaves = [k for k in range(n) if not exact[k] and (search._child_nodes(k) < 0).all()]
    assert len(leaves) > 100
    evaluated = search.material.evaluate(g.state[leaves])
    assert np.allclose(g.heur[leaves], evaluated)
    assert len(set(np.round(g.heur[:n], 6))) > 3   # captures were seen and valued


def test_where_chance_moves_too_selection_reads_no_childs_value() -> None:
    # role 0 chooses while chance (role 1) draws one of two: four joint moves, so role 0's
    # move i is not child i, and no child's value may be read as its move's
    kern = KERNELS.loaded
    size = np.array([[2, 2]] + [[1, 1]] * 4, dtype=np.int32)
    heur = np.array([0.5, 1.0, 0.0, 0.0, 0.0])
    totals = np.array([5.0, 5.5, 0.0, 0.0])   # role 0's moves: means 0.5 and 0.55
    path_node, path_joint = np.zeros((1, 8), dtype=np.int64), np.zeros((1, 8), dtype=np.int64)
    kern.select(0, 1, 0.0, 0.0, False, -1, 0.4, heur, np.array([7], dtype=np.uint64),
                np.array([False, True]), np.array([False] + [True] * 4), np.zeros(5, dtype=np.bool_),
                np.full(5, 20.0), np.zeros((5, 2)), size, np.array([0, 4, 4, 4, 4]),
                np.full(4, 10.0), totals, np.array([0, 4, 4, 4, 4]),
                np.array([1, 2, 3, 4], dtype=np.int32), np.zeros(0, dtype=np.int32),
                np.zeros(0, dtype=np.float32), path_node, path_joint, np.zeros((1, 8, 2)),
                np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64),
                np.zeros(1, dtype=np.int64),
                *select_grave(4))
    assert path_joint[0, 0] // 2 == 1   # the better mean; child 1's 1.0 would have taken move 0
