"""Hypothesis fuzzing of the parser, the validator and the general engine's loading
over mutated corpus files: always a clean GameError or a valid game, never another
exception, a hang or unbounded memory (deep nesting, huge arities, cyclic rules)."""

from __future__ import annotations

import re

import pytest
from conftest import shared_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gdl.reasoning.machine import GeneralMachine
from gdl.reasoning.parser import MAX_DEPTH, parse_kif
from gdl.reasoning.validate import validate
from solvers.errors import FormatError, GameError

TOKEN = re.compile(r";[^\n]*|\(|\)|[^\s();]+")
GAMES = ["ticTacToe", "blocker", "nim1", "roshambo2"]
EXTRA_TOKENS = ["(", ")", "<=", "not", "or", "distinct", "true", "does", "next", "init",
                "legal", "goal", "terminal", "role", "?x", "?y", "0", "100", ";", "?"]
CYCLES = [
    "(<= (p ?x) (q ?x)) (<= (q ?x) (p ?x)) (<= (legal xplayer (mark ?x ?x)) (p ?x))",
    "(<= p (not q)) (<= q (not p))",
    "(<= (p (f ?x)) (p ?x)) (p 0)",
    "(<= (next (cell ?x)) (true (cell ?y)) (succ ?y ?x)) (<= (succ ?x (s ?x)) (true (cell ?x)))",
]


@pytest.fixture(scope="module")
def corpus() -> dict[str, list[str]]:
    folder = shared_path("gdl-corpus", "repository")
    return {name: TOKEN.findall((folder / f"{name}.kif").read_text()) for name in GAMES}


def mutate(tokens: list[str], edits: list[tuple[int, int, int, str]]) -> str:
    tokens = list(tokens)
    for kind, i, j, extra in edits:
        if not tokens:
            break
        i, j = i % len(tokens), j % len(tokens)
        if kind == 0:
            del tokens[i]
        elif kind == 1:
            tokens.insert(i, tokens[j])
        elif kind == 2:
            tokens[i], tokens[j] = tokens[j], tokens[i]
        else:
            tokens.insert(i, extra)
    return "\n".join(tokens)


def outcome(text: str) -> str:
    """'format' / 'invalid' / 'runtime' / 'valid': anything but a GameError fails."""
    try:
        rules = parse_kif(text, "fuzz.kif")
    except FormatError as exc:
        assert exc.location is not None and exc.location.line is not None
        return "format"
    try:
        validate(rules, "fuzz.kif")
    except GameError:
        return "invalid"
    try:
        machine = GeneralMachine(rules)
        state = machine.initial_state()
        if not machine.is_terminal(state):
            machine.next_state(state, [m[0] for m in machine.legal_joint_moves(state)])
    except GameError:
        return "runtime"
    return "valid"


edit = st.tuples(st.integers(0, 3), st.integers(0, 10**6), st.integers(0, 10**6),
                 st.sampled_from(EXTRA_TOKENS))


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(GAMES), st.lists(edit, min_size=1, max_size=4))
def test_mutated_corpus_files(corpus: dict[str, list[str]], game: str,
                              edits: list[tuple[int, int, int, str]]) -> None:
    assert outcome(mutate(corpus[game], edits)) in ("format", "invalid", "runtime", "valid")


@settings(max_examples=15, deadline=None, derandomize=True)
@given(st.sampled_from(GAMES), st.sampled_from(CYCLES), st.integers(0, 10**6))
def test_cyclic_rules_are_rejected_or_evaluated(corpus: dict[str, list[str]], game: str,
                                                cycle: str, where: int) -> None:
    tokens = corpus[game]
    # insert at a top-level boundary so the file stays well-formed
    depth, cuts = 0, [0]
    for i, token in enumerate(tokens):
        depth += (token == "(") - (token == ")")
        if depth == 0:
            cuts.append(i + 1)
    cut = cuts[where % len(cuts)]
    text = "\n".join(tokens[:cut] + [cycle] + tokens[cut:])
    assert outcome(text) in ("invalid", "valid", "runtime")


@settings(max_examples=20, deadline=None, derandomize=True)
@given(st.integers(MAX_DEPTH + 1, 200_000), st.sampled_from(["(p ", "(", "(or "]))
def test_deep_nesting_is_a_format_error(depth: int, opener: str) -> None:
    text = "(role a) " + opener * depth + "x" + ")" * depth
    with pytest.raises(FormatError, match="nesting deeper"):
        parse_kif(text)


@settings(max_examples=3, deadline=None, derandomize=True)
@given(st.integers(5_000, 30_000))
def test_huge_arity_is_handled(arity: int) -> None:
    args = " ".join(str(i) for i in range(arity))
    text = f"(role a) (init (big {args})) (<= terminal (true (big {args})))\n(goal a 0)"
    assert outcome(text) == "valid"
    assert outcome(text + f"\n(<= (legal a go) (true (big {args} extra)))") == "invalid"
