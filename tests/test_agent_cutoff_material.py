"""``cutoff`` where ``material`` found pieces (gdl/reasoning/playout_kernels.py ``_end``,
agent/search/graph.py ``GraphSearch.material``; issue 29 item 3, "goal-distance
heuristics for cut-off playouts"): a playout cut at the step limit is worth the
logistic of role 0's pieces ahead, as ``minimax`` evaluates states, not its goals
(breakthrough's and knightThrough's say 0 to both roles until the end).

1. Compiled playouts of knightThrough cut at 8 steps score the replayed cut state's
   evaluation; those that end sooner score their goals.
2. The graph search passes the material to its playouts only under ``cutoff``.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_gdl_playout_kernels import game, reached, replay

from agent.search import material
from agent.search.graph import KERNELS, GraphSearch
from agent.search.mcts import AgentConfig, parse_enhancements
from gdl.reasoning.batch_machine import pack_ints

LIMIT = 8


@pytest.fixture(scope="module", autouse=True)
def graph_kernels():
    if KERNELS.load() is None:
        pytest.skip("numba is not available")


def _pieces(machine, n_words: int) -> material.Material:
    """knightThrough's material: each side's knights (``cell(?, ?, side)``)."""
    sets = dict(material.piece_sets(machine.facts))
    masks = [pack_ints([sum(1 << int(i) for i in sets[f"cell(?, ?, {side})"])], n_words)[0]
             for side in ("white", "black")]
    return material.Material(np.array(masks), ("white", "black"), (0.2, 0.2))


def test_a_cut_playout_scores_the_material_of_the_state_it_was_cut_in() -> None:
    machine, net = game("knightThrough")
    pieces = _pieces(machine, net.n_words)
    facts, sign = pieces.pieces()
    assert len(facts) == 128 and sign.sum() == 0   # 64 cells a side, +1 and -1
    states, _ = reached(machine, seed=5, playouts=6, steps=30)
    starts = ([s for s in states if not machine.is_terminal(s)] * 120)[:120]
    result = net.play(pack_ints(starts, net.n_words), limit=LIMIT, seed=7, record=True,
                      trace_steps=LIMIT, pieces=(facts, sign, material.PIECE_SCALE))
    cut = ended = 0
    for k, start in enumerate(starts):
        steps = int(result.steps[k])
        end, terminal = replay(machine, start, result.trace[k, :steps])
        reward = result.rewards[k]
        if terminal:
            assert reward.tolist() == [g / 100 for g in machine.goals(end)]
            ended += 1
        else:
            assert steps == LIMIT
            value = pieces.evaluate(pack_ints([end], net.n_words))[0]
            assert reward == pytest.approx([value, 1 - value])
            cut += 1
    assert cut > 20 and ended > 5   # both kinds were checked
    # the pieces ahead vary among the cut states (captures happened)
    assert len({round(r, 6) for r in result.rewards[:, 0]}) > 3


def test_the_graph_search_cuts_by_material_only_under_cutoff() -> None:
    machine, _ = game("knightThrough")
    for switches, cuts in (("default", False), ("default,cutoff", True)):
        search = GraphSearch(machine, AgentConfig(enhancements=parse_enhancements(switches)))
        search.material = _pieces(machine, search.bm.n_words)
        assert (search.playouts.pieces is not None) == cuts
        search.material = None
        assert search.playouts.pieces is None
