"""Solution files: saved, found again by rules hash, refused cleanly when broken."""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gdl.reasoning.parser import parse_kif
from gdl.solving.store import find_solution, load_solution, node_line, save_solution
from solvers.errors import FormatError, GameError

RULES = """
(role a) (role b)
(init (s 0))
(<= (legal ?r (pick ?x)) (role ?r) (side ?x))
(side 1) (side 2)
(<= (next (s 1)) (does a (pick ?x)))
(<= terminal (true (s 1)))
(<= (goal ?r 50) (role ?r))
"""
# the same game: rules reordered, variables renamed
SAME = """
(side 2) (side 1)
(<= (goal ?who 50) (role ?who))
(<= terminal (true (s 1)))
(<= (next (s 1)) (does a (pick ?y)))
(<= (legal ?p (pick ?m)) (role ?p) (side ?m))
(init (s 0))
(role a) (role b)
"""
OTHER = RULES.replace("(goal ?r 50)", "(goal ?r 40)")

LINES = [node_line(["(s 0)"], {"a": {"(pick 1)": 0.25, "(pick 2)": 0.75},
                               "b": {"(pick 1)": 1.0}}, {"a": 50.0, "b": 50.0})]


def _save(path, rules=RULES, solver="baseline", lines=LINES) -> int:
    return save_solution(path, rules=parse_kif(rules), game="pick", roles=("a", "b"),
                         solver=solver, values={"a": 50.0, "b": 50.0}, lines=lines)


@pytest.mark.parametrize("name", ["pick.jsonl", "pick.jsonl.gz"])
def test_saved_solution_is_found_by_the_same_rules(tmp_path, name) -> None:
    assert _save(tmp_path / name) == 1
    solution = find_solution(tmp_path, parse_kif(SAME))
    assert solution is not None
    assert solution.roles == ("a", "b") and solution.solver == "baseline"
    assert solution.values == {"a": 50.0, "b": 50.0}
    # a state is a set of facts: their order does not matter
    assert solution.strategy(["(s 0)"])["a"] == {"(pick 1)": 0.25, "(pick 2)": 0.75}
    assert solution.state_values(("(s 0)",)) == {"a": 50.0, "b": 50.0}
    assert solution.strategy(["(s 1)"]) is None
    assert find_solution(tmp_path, parse_kif(OTHER)) is None
    # the agent passes the game's KIF text; a hash works too
    assert find_solution(tmp_path, SAME).values == {"a": 50.0, "b": 50.0}
    assert find_solution(tmp_path, solution.rules_hash) is not None
    assert find_solution(tmp_path, OTHER) is None


def test_baseline_is_preferred_and_other_files_are_ignored(tmp_path) -> None:
    _save(tmp_path / "ih.jsonl", solver="ih")
    _save(tmp_path / "base.jsonl")
    (tmp_path / "notes.jsonl").write_text("hello\n")
    (tmp_path / "broken.jsonl.gz").write_bytes(b"not gzip")
    assert find_solution(tmp_path, parse_kif(RULES)).solver == "baseline"


def test_broken_files_give_located_errors(tmp_path) -> None:
    path = tmp_path / "bad.jsonl"
    _save(path)
    with open(path, "a") as out:
        out.write('{"node": ["(s 0)"], "strategy": 3}\n')
    with pytest.raises(FormatError, match=r"bad.jsonl:3: expected a state line"):
        load_solution(path)
    path.write_text('{"format": "something else"}\n')
    with pytest.raises(FormatError, match=r"bad.jsonl:1: not a GDL solution file"):
        load_solution(path)
    header = json.loads(json.dumps({"format": "ggp-gdl-solution", "version": 9,
                                    "rules_hash": "x", "roles": []}))
    path.write_text(json.dumps(header) + "\n")
    with pytest.raises(FormatError, match="version 9"):
        load_solution(path)
    with pytest.raises(GameError, match="cannot read"):
        load_solution(tmp_path / "missing.jsonl")
    with pytest.raises(GameError, match="not a directory"):
        find_solution(tmp_path / "missing", "x")


def test_gzip_file_is_compressed(tmp_path) -> None:
    path = tmp_path / "pick.jsonl.gz"
    _save(path)
    with gzip.open(path, "rt") as source:
        assert json.loads(source.readline())["format"] == "ggp-gdl-solution"


HEADER = ('{"format": "ggp-gdl-solution", "version": 1, "rules_hash": "h", '
          '"roles": ["a", "b"]}\n')


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
                 st.lists(st.one_of(st.text(max_size=40), st.builds(
                     json.dumps, st.recursive(st.none() | st.booleans() | st.floats()
                                              | st.text(max_size=5),
                                              lambda inner: st.lists(inner, max_size=3)
                                              | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
                                              max_leaves=8))),
                          max_size=4).map(lambda lines: HEADER + "\n".join(lines))))
def test_fuzzed_solution_files_load_or_fail_cleanly(tmp_path_factory, text) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "f.jsonl"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        solution = load_solution(path)
    except GameError:
        return
    assert solution.roles == ("a", "b")
