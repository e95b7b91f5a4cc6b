"""Unused move arguments projected out of the batched engine's move network.

blockerParallel's moves ``(mark x1 y1 x2 y2)`` name a cell on each board and every
``next`` rule reads one board's half: grounded whole, its move network had 5.65
million rules and the game fell back to the per-state engine. Projected, the
network is small, and the batched expansion still gives the per-state graph.
"""

from __future__ import annotations

import numpy as np
from conftest import shared_path
from test_gdl_batch_expand import compare

from gdl.reasoning.batch_machine import BatchMachine, pack_ints
from gdl.reasoning.ground import Budget
from gdl.reasoning.machine import load_machine
from gdl.reasoning.move_projection import ground_move_rules, project_moves

# blockerParallel on two 2x2 boards: the crosser wins a board with a path from row 1
# to row 2; the same move and next rules as the corpus game
BOARDS = " ".join(f"(init (cell{b} {x} {y} b))" for b in (1, 2) for x in (1, 2) for y in (1, 2))
SMALL_PARALLEL = BOARDS + """
(role crosser) (role blocker)
(<= (legal ?who (mark ?x1 ?y1 ?x2 ?y2)) (role ?who) (true (cell1 ?x1 ?y1 b)) (true (cell2 ?x2 ?y2 b)))
(<= (next (cell1 ?x1 ?y1 blk)) (does blocker (mark ?x1 ?y1 ?x2 ?y2)))
(<= (next (cell1 ?xC1 ?yC1 crosser)) (does crosser (mark ?xC1 ?yC1 ?xC2 ?yC2))
    (does blocker (mark ?xB1 ?yB1 ?xB2 ?yB2)) (distinctCell ?xC1 ?yC1 ?xB1 ?yB1))
(<= (next (cell1 ?x ?y ?mark)) (true (cell1 ?x ?y ?mark)) (does blocker (mark ?xB1 ?yB1 ?xB2 ?yB2))
    (does crosser (mark ?xC1 ?yC1 ?xC2 ?yC2)) (distinctCell ?x ?y ?xB1 ?yB1) (distinctCell ?x ?y ?xC1 ?yC1))
(<= (next (cell2 ?x2 ?y2 blk)) (does blocker (mark ?x1 ?y1 ?x2 ?y2)))
(<= (next (cell2 ?xC2 ?yC2 crosser)) (does crosser (mark ?xC1 ?yC1 ?xC2 ?yC2))
    (does blocker (mark ?xB1 ?yB1 ?xB2 ?yB2)) (distinctCell ?xC2 ?yC2 ?xB2 ?yB2))
(<= (next (cell2 ?x ?y ?mark)) (true (cell2 ?x ?y ?mark)) (does blocker (mark ?xB1 ?yB1 ?xB2 ?yB2))
    (does crosser (mark ?xC1 ?yC1 ?xC2 ?yC2)) (distinctCell ?x ?y ?xB2 ?yB2) (distinctCell ?x ?y ?xC2 ?yC2))
(<= bridge1 (true (cell1 1 ?a crosser)) (cont ?a ?b) (true (cell1 2 ?b crosser)))
(<= bridge2 (true (cell2 1 ?a crosser)) (cont ?a ?b) (true (cell2 2 ?b crosser)))
(<= open1 (true (cell1 ?m ?n b)))
(<= open2 (true (cell2 ?m ?n b)))
(<= terminal bridge1) (<= terminal bridge2) (<= terminal (not open1)) (<= terminal (not open2))
(<= (goal crosser 100) bridge1) (<= (goal crosser 100) bridge2)
(<= (goal crosser 0) (not bridge1) (not bridge2))
(<= (goal blocker 0) bridge1) (<= (goal blocker 0) bridge2)
(<= (goal blocker 100) (not bridge1) (not bridge2))
(<= (distinctCell ?x1 ?y1 ?x2 ?y2) (cell ?x1 ?y1) (cell ?x2 ?y2) (distinct ?x1 ?x2))
(<= (distinctCell ?x1 ?y1 ?x2 ?y2) (cell ?x1 ?y1) (cell ?x2 ?y2) (distinct ?y1 ?y2))
(cont 1 1) (cont 2 2) (cont 1 2) (cont 2 1)
(cell 1 1) (cell 1 2) (cell 2 1) (cell 2 2)
"""

# a move read in part by one rule and not at all by another (a 0-ary projection)
SAY = """
(role a) (role b)
(init (round 0))
(succ 0 1) (succ 1 2)
(side heads) (side tails)
(<= (legal ?r (say ?x ?n)) (role ?r) (side ?x) (true (round ?n)))
(<= (next spoke) (does a (say ?x ?n)))
(<= (next (round ?m)) (true (round ?n)) (succ ?n ?m))
(<= (next (match ?n)) (does a (say ?x ?n)) (does b (say ?x ?k)))
(<= (next (won ?n)) (true (match ?n)))
(<= (next (won ?n)) (true (won ?n)))
(<= terminal (true (round 2)))
(<= (goal a 100) (true (won 0)) (true (won 1)))
(<= (goal a 50) (true (won 0)) (not (true (won 1))))
(<= (goal a 50) (true (won 1)) (not (true (won 0))))
(<= (goal a 0) (not (true (won 0))) (not (true (won 1))))
(<= (goal b 0) (true (won 0)) (true (won 1)))
(<= (goal b 50) (true (won 0)) (not (true (won 1))))
(<= (goal b 50) (true (won 1)) (not (true (won 0))))
(<= (goal b 100) (not (true (won 0))) (not (true (won 1))))
"""


def move_rules(machine):
    game = machine._game
    return game, [r for k in game.dynamic for r in game.rules_by_head.get(k, ()) if game._is_move_rule(r)]


def test_projection_rewrites_only_unused_move_arguments() -> None:
    game, rules = move_rules(load_machine(SMALL_PARALLEL, engine="compiled"))
    projections, rewritten = project_moves(rules)
    # one relation per (role, board) half of a move, shared by the rules reading it
    assert sorted(p.pos[0] for p in projections) == sorted(
        ("does", role, ("mark", *args)) for role in ("blocker", "crosser")
        for args in (("?k0", "?k1", "?l0", "?l1"), ("?l0", "?l1", "?k0", "?k1")))
    assert all(len(p.head) == 3 for p in projections)
    assert not any(a[0] == "does" for r in rewritten for a in r.pos)
    # the whole moves' instances: 256 joint moves for each of the 12 (cell, mark)
    # pairs a frame rule can keep; projected: 4 x 4 cell pairs instead
    whole = game.instantiate(rules, game.tables, exact=game.is_static, folded=game.is_static)
    projected = ground_move_rules(game, Budget())
    assert len(projected) < len(whole) / 4


def test_partial_and_whole_projections() -> None:
    machine = load_machine(SAY, engine="compiled")
    projections, rewritten = project_moves(move_rules(machine)[1])
    assert {(p.head, p.pos) for p in projections} == {
        ("does projected 0", (("does", "a", ("say", "?l0", "?l1")),)),
        (("does projected 1", "?k0"), (("does", "b", ("say", "?k0", "?l0")),))}
    assert {r.pos for r in rewritten} == {
        ("does projected 0",), (("does", "a", ("say", "?x", "?n")), ("does projected 1", "?x"))}
    dag = compare(machine).dag
    # the root; after round 0 the sides matched or not; after round 1 likewise from each
    assert dag.num_states == 7


def test_projected_network_expands_the_per_state_graph() -> None:
    dag = compare(load_machine(SMALL_PARALLEL, engine="compiled")).dag
    # the root's 16 x 16 joint moves lead to 16 x 16 states: 16 boards each (a
    # blocker cell, and another crosser cell or none)
    root = dag.entry_child[dag.entry_start[0]:dag.entry_start[1]]
    assert len(root) == 256 and len(set(root.tolist())) == 256


def test_blocker_parallel_takes_the_batched_engine() -> None:
    machine = load_machine(shared_path("gdl-corpus", "repository", "blockerParallel.kif"),
                           engine="compiled")
    batch = BatchMachine(machine)   # declined before: its move network did not ground
    root = machine.initial_state()
    evaluated = batch.evaluate_states(batch.initial_state()[None])
    moves = [machine.legal_moves(root, r) for r in range(2)]   # the engine's moves: one bit each
    assert [len(m) for m in moves] == [256, 256]
    rng = np.random.default_rng(0)
    picks = [[m[i] for i in rng.choice(len(m), 40)] for m in moves]
    bits = [np.array([move.bit_length() - 1 for move in pick]) for pick in picks]
    children = batch.next_states(evaluated, np.zeros(40, dtype=np.int64), bits)
    expected = pack_ints([machine.next_state(root, joint) for joint in zip(*picks, strict=True)],
                         batch.n_words)
    assert np.array_equal(children, expected)
