"""Parser: KIF as found in real files, terms, canonical KIF, located errors."""

from __future__ import annotations

import pytest
from conftest import shared_path

from gdl.reasoning.parser import MAX_DEPTH, parse_kif, parse_term, parse_terms
from gdl.reasoning.terms import Const, Distinct, Fn, Not, Or, Rule, Var, term_to_kif
from solvers.errors import FormatError

TEXT = """; a comment (with parentheses
(ROLE xplayer)   ; keyword in capitals
(init (cell 1 01 b))
(<= (legal ?P (mark ?x ?y))
    (TRUE (cell ?x ?y b))
    (not (true (control ?P)))
    (or (distinct ?x 1) (and (true open) terminal)))
(<= terminal open)
"""


def test_rules_facts_keywords_and_literals() -> None:
    rules = parse_kif(TEXT, "t.kif")
    assert rules[0] == Rule(Fn("role", (Const("xplayer"),)), (), 2, 1)
    # numbers are plain symbols: 1 and 01 differ
    assert rules[1].head == Fn("init", (Fn("cell", (Const("1"), Const("01"), Const("b"))),))
    legal = rules[2]
    assert (legal.line, legal.column) == (4, 1)
    assert legal.head == Fn("legal", (Var("P"), Fn("mark", (Var("x"), Var("y")))))
    assert legal.body[0] == Fn("true", (Fn("cell", (Var("x"), Var("y"), Const("b"))),))
    assert legal.body[1] == Not(Fn("true", (Fn("control", (Var("P"),)),)))
    assert legal.body[2] == Or(((Distinct(Var("x"), Const("1")),),
                                (Fn("true", (Const("open"),)), Const("terminal"))))
    assert rules[3] == Rule(Const("terminal"), (Const("open"),), 8, 1)


def test_canonical_kif_round_trips() -> None:
    rules = parse_kif(TEXT)
    again = parse_kif("\n".join(term_to_kif(r) for r in rules))
    assert [(r.head, r.body) for r in again] == [(r.head, r.body) for r in rules]
    assert term_to_kif(rules[1]) == "(init (cell 1 01 b))"
    assert term_to_kif(rules[3]) == "(<= terminal open)"


def test_parse_term_and_terms() -> None:
    assert parse_term(" ( mark 1  3 ) ") == Fn("mark", (Const("1"), Const("3")))
    assert parse_term("noop") == Const("noop")
    assert parse_terms("(( mark 1 3 ) noop )") == [parse_term("(mark 1 3)"), Const("noop")]
    assert term_to_kif(parse_term("(f (g ?x) Big)")) == "(f (g ?x) Big)"


@pytest.mark.parametrize("text, where, expected", [
    ("(role x)\n(init (cell 1", "2:7", "never closed"),
    ("(role x))", "1:9", "unexpected ')'"),
    ("(role x)\n  (<= )", "2:3", "expects a head"),
    ("(<= (p ?x) (not a b))", "1:12", "'not' expects 1 argument"),
    ("(<= (p ?x) (distinct ?x))", "1:12", "'distinct' expects 2"),
    ("(<= (p ?x) ?x)", "1:12", "found variable ?x"),
    ("(<= (?r a) b)", "1:6", "expected a constant"),
    ("(p ())", "1:4", "empty list"),
    ("(<= (not p) q)", "1:5", "found 'not'"),
    ("(p ? )", "1:4", "variable name"),
    ("(role x) ?y", "1:10", "found variable"),
])
def test_errors_are_located(text: str, where: str, expected: str) -> None:
    with pytest.raises(FormatError) as info:
        parse_kif(text, "bad.kif")
    assert str(info.value).startswith(f"bad.kif:{where}: ")
    assert expected in str(info.value)


def test_deep_nesting_is_a_format_error_not_recursion() -> None:
    deep = "(p " * 100_000 + "a" + ")" * 100_000
    with pytest.raises(FormatError, match=f"deeper than {MAX_DEPTH}"):
        parse_kif(deep)
    ok = "(p " * (MAX_DEPTH - 1) + "a" + ")" * (MAX_DEPTH - 1)
    assert len(parse_kif(ok)) == 1


def test_prover_tests_parse() -> None:
    folder = shared_path("gdl-corpus", "prover-tests")
    counts = {f.name: len(parse_kif(f.read_text(), str(f))) for f in sorted(folder.glob("*.kif"))}
    assert len(counts) == 24
    assert all(n > 0 for n in counts.values())


def test_rules_hash_ignores_rule_order_and_variable_names() -> None:
    from gdl.reasoning.machine import rules_hash

    a = parse_kif("(role x)\n(<= (p ?a ?b) (q ?a) (r ?b))\n(q 1)")
    b = parse_kif("(q 1)\n(ROLE x)\n(<= (p ?u ?v) (q ?u) (r ?v))")
    c = parse_kif("(role x)\n(<= (p ?a ?b) (q ?b) (r ?a))\n(q 1)")
    assert rules_hash(a) == rules_hash(b)
    assert rules_hash(a) != rules_hash(c)
    assert len(rules_hash(a)) == 64
