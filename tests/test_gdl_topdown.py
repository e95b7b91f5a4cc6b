"""The general engine's special paths (gdl.reasoning.topdown) against the compiled engine.

The compiled engine grounds the game and evaluates it bottom-up: a separate
implementation of the same semantics. Each game below drives one path of the
top-down engine: left recursion on the same call (a worklist), a cyclic derivation
(tabling), recursion deeper than Python's default limit, static relations that build terms,
and negation stratified per constant.
"""

from __future__ import annotations

import random
import sys

import pytest

from gdl.reasoning.compile import compile_machine
from gdl.reasoning.machine import GeneralMachine, StateMachine
from gdl.reasoning.parser import parse_kif
from gdl.reasoning.validate import validate

# Tokens walk a graph whose edges the players add; reach is left-recursive on the
# same call when asked with the start bound, and `linked` is symmetric: a cycle.
GRAPH = """
(role a) (role b)
(init (edge n0 n1)) (init (token n0)) (init (control a))
(node n0) (node n1) (node n2) (node n3) (node n4)
(<= (legal ?r (add ?x ?y)) (true (control ?r)) (node ?x) (node ?y) (distinct ?x ?y)
    (not (true (edge ?x ?y))))
(<= (legal a noop) (true (control b)))
(<= (legal b noop) (true (control a)))
(<= (next (edge ?x ?y)) (true (edge ?x ?y)))
(<= (next (edge ?x ?y)) (does ?r (add ?x ?y)))
(<= (next (control b)) (true (control a)))
(<= (next (control a)) (true (control b)))
(<= (next (token ?y)) (true (token ?x)) (reach ?x ?y))
(<= (reach ?x ?y) (true (edge ?x ?y)))
(<= (reach ?x ?z) (reach ?x ?y) (true (edge ?y ?z)))
(<= (linked ?x ?y) (true (edge ?x ?y)))
(<= (linked ?x ?y) (linked ?y ?x))
(<= (linked ?x ?z) (node ?y) (linked ?x ?y) (linked ?y ?z))
(<= (goal ?r 100) (role ?r) (linked n0 n4))
(<= (goal ?r 0) (role ?r) (not (linked n0 n4)))
(<= terminal (linked n0 n4))
(<= terminal (true (token n3)))
"""

# A counter whose `below` relation recurses once per number (deeper than 1,000).
COUNT = """
(role p)
(init (at 0))
(<= (legal p (step ?y)) (true (at ?x)) (succ ?x ?y))
(<= (legal p (jump ?y)) (true (at ?x)) (succ ?x ?m) (succ ?m ?y))
(<= (next (at ?y)) (does p (step ?y)))
(<= (next (at ?y)) (does p (jump ?y)))
(<= (below ?x ?y) (succ ?x ?y))
(<= (below ?x ?z) (succ ?x ?y) (below ?y ?z))
(<= terminal (true (at ?x)) (below LIMIT ?x))
(<= terminal (true (at ?x)) (not (later ?x)))
(<= (later ?x) (succ ?x ?y))
(<= (goal p 100) (true (at ?x)) (below 0 ?x))
(<= (goal p 0) (true (at 0)))
"""


def count_game(numbers: int) -> str:
    succ = " ".join(f"(succ {i} {i + 1})" for i in range(numbers))
    return COUNT.replace("LIMIT", str(numbers - 5)) + succ

# Lists built by static rules with function terms in their heads (evaluated
# top-down with a per-game memo; corpus laikLee_hex enumerates lists of up to 23
# of 25 cells this way, far too many to derive in full).
LISTS = """
(role p)
(init (seen nil)) (init (clock 0))
(item a) (item b) (item c)
(isList nil)
(<= (isList (cons ?a nil)) (item ?a))
(<= (isList (cons ?a (cons ?b nil))) (item ?a) (item ?b))
(<= (isList (cons ?a (cons ?b (cons ?c nil)))) (item ?a) (item ?b) (item ?c))
(<= (without ?x nil nil) (item ?x))
(<= (without ?x (cons ?x ?t) ?t) (item ?x) (isList ?t))
(<= (without ?x (cons ?h ?t) (cons ?h ?r)) (item ?x) (item ?h) (distinct ?x ?h)
    (isList ?t) (isList ?r) (without ?x ?t ?r))
(<= (has ?x (cons ?x ?t)) (item ?x) (isList ?t))
(<= (has ?x (cons ?h ?t)) (item ?x) (item ?h) (isList ?t) (has ?x ?t))
(<= (legal p (add ?x)) (true (seen ?l)) (item ?x) (not (has ?x ?l))
    (isList (cons ?x ?l)))
(<= (legal p (drop ?x)) (true (seen ?l)) (has ?x ?l))
(<= (next (seen (cons ?x ?l))) (does p (add ?x)) (true (seen ?l)) (isList (cons ?x ?l)))
(<= (next (seen ?r)) (does p (drop ?x)) (true (seen ?l)) (without ?x ?l ?r))
(<= (next (clock ?y)) (true (clock ?x)) (succ ?x ?y))
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4)
(<= terminal (true (clock 4)))
(<= (goal p 100) (true (seen ?l)) (has a ?l))
(<= (goal p 0) (true (seen ?l)) (not (has a ?l)))
"""

# Negation stratified per constant only: (goal p 100) reads (not (goal p 0)).
PER_CONSTANT = """
(role p)
(init (n 0)) (init (t 0))
(<= (legal p inc) (true (n ?x)))
(<= (legal p stay) (true (n ?x)))
(<= (next (n ?y)) (true (n ?x)) (does p inc) (succ ?x ?y))
(<= (next (n ?x)) (true (n ?x)) (does p stay))
(<= (next (t ?y)) (true (t ?x)) (succ ?x ?y))
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4)
(<= terminal (true (t 4)))
(<= (goal p 0) (true (n 0)))
(<= (goal p 100) (not (goal p 0)))
"""


def machines(text: str) -> tuple[GeneralMachine, StateMachine]:
    rules = parse_kif(text)
    validate(rules)  # the test games are valid GDL
    return GeneralMachine(rules, name="g"), compile_machine(rules, name="g")


def agree(text: str, playouts: int, seed: int = 3) -> GeneralMachine:
    """Random playouts on both engines, comparing every query at every step."""
    general, compiled = machines(text)
    rng = random.Random(seed)
    for _ in range(playouts):
        ours, theirs = general.initial_state(), compiled.initial_state()
        while True:
            assert general.state_to_kif(ours) == compiled.state_to_kif(theirs)
            assert general.is_terminal(ours) == compiled.is_terminal(theirs)
            assert general.goal_values(ours) == compiled.goal_values(theirs)
            if general.is_terminal(ours):
                break
            legal = [[general.move_to_kif(m) for m in general.legal_moves(ours, r)]
                     for r in range(len(general.roles))]
            assert legal == [[compiled.move_to_kif(m) for m in compiled.legal_moves(theirs, r)]
                             for r in range(len(compiled.roles))]
            joint = [rng.choice(moves) for moves in legal]
            ours = general.next_state(ours, [general.parse_move(m, r)
                                             for r, m in enumerate(joint)])
            theirs = compiled.next_state(theirs, [compiled.parse_move(m, r)
                                                  for r, m in enumerate(joint)])
    return general


def test_left_recursion_and_a_cyclic_relation() -> None:
    general = agree(GRAPH, playouts=6)
    # `linked` is symmetric: its derivation meets itself, so tabling took over
    assert general.program.tabling_on


def test_well_founded_recursion_needs_no_tabling() -> None:
    general = agree(count_game(40), playouts=4)
    assert not general.program.tabling_on


def test_recursion_deeper_than_pythons_default_limit() -> None:
    rules = parse_kif(count_game(3_000))
    validate(rules)
    general = GeneralMachine(rules, name="count")  # (grounding `below` is 4.5M facts)
    limit = sys.getrecursionlimit()
    near = general.state_from_kif(["(at 2990)"])
    assert not general.is_terminal(near)
    assert [general.move_to_kif(m) for m in general.legal_moves(near, 0)] == [
        "(jump 2992)", "(step 2991)"]
    far = general.state_from_kif(["(at 2999)"])  # `below 0 2999` recurses 2,999 deep
    assert general.is_terminal(far) and general.goals(far) == (100,)
    assert not general.program.tabling_on
    assert sys.getrecursionlimit() == limit  # raised only while a query runs


def test_term_building_static_relations() -> None:
    agree(LISTS, playouts=8)


def test_negation_stratified_per_constant() -> None:
    agree(PER_CONSTANT, playouts=6)


def test_interrupted_query_leaves_no_stale_memo() -> None:
    """A query interrupted half-way (Ctrl-C, out of memory) must not leave
    unfinished tables behind: the next queries are right. (GRAPH runs tabled:
    `linked` is cyclic; its tables exist before their answers do.)"""
    general, compiled = machines(GRAPH)
    program = general.program
    assert program.tabling_on
    name = next(f for (relation, _, mode), f in program._functions.items()
                if relation == "linked" and mode == "all") + "_run"
    real = program.namespace[name]
    calls = 0

    def interrupted(*args):  # noqa: ANN002, ANN202
        nonlocal calls
        calls += 1
        if calls == 1:
            raise KeyboardInterrupt
        return real(*args)

    program.namespace[name] = interrupted
    # n4 -> n1 -> n0: linked both ways only through the symmetric rule
    state = general.state_from_kif(["(control a)", "(edge n1 n0)", "(edge n4 n1)",
                                    "(token n0)"])
    with pytest.raises(KeyboardInterrupt):
        general.is_terminal(state)
    theirs = compiled.state_from_kif(general.state_to_kif(state))
    assert general.is_terminal(state) and compiled.is_terminal(theirs)
    assert general.goals(state) == compiled.goals(theirs) == (100, 100)


def test_a_head_with_150_constants_compiles() -> None:
    """Checks outside any loop do not nest: Python allows 100 levels of indentation."""
    constants = " ".join(f"c{i}" for i in range(150))
    game = f"""
    (role p) (init s) (init (n 0)) (succ 0 1) (succ 1 2)
    (<= (big {constants}) (true s))
    (<= (legal p go) (true s) (big {constants}))
    (<= (next s) (true s))
    (<= (next (n ?y)) (true (n ?x)) (succ ?x ?y))
    (<= terminal (not (big {constants})))
    (<= terminal (true (n 2)))
    (<= (goal p 100) (true s))
    """
    agree(game, playouts=1)


def test_threads_sharing_one_machine_get_right_answers() -> None:
    """The server's built-in players search the match's machine in a thread while
    the match loop asks it too. Queries on one machine are serialised by a lock
    (this test did not fail without it: the interleavings that would corrupt the
    shared tabling state are rare; it checks that concurrent use stays right)."""
    import threading

    general, compiled = machines(GRAPH)
    records: list[tuple[list[str], bool, tuple, list]] = []

    def walk(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(3):
            state = general.initial_state()
            while not general.is_terminal(state):
                legal = [[general.move_to_kif(m) for m in general.legal_moves(state, r)]
                         for r in range(2)]
                records.append((general.state_to_kif(state), False,
                                general.goal_values(state), legal))
                state = general.next_state(state, [general.parse_move(rng.choice(m), r)
                                                   for r, m in enumerate(legal)])
            records.append((general.state_to_kif(state), True, general.goal_values(state), []))

    threads = [threading.Thread(target=walk, args=(seed,)) for seed in range(4)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads inside queries, not between them
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert len(records) > 20
    for facts, terminal, goals, legal in records:
        theirs = compiled.state_from_kif(facts)
        assert compiled.is_terminal(theirs) == terminal
        assert compiled.goal_values(theirs) == goals
        if not terminal:
            assert legal == [[compiled.move_to_kif(m) for m in compiled.legal_moves(theirs, r)]
                             for r in range(2)]
