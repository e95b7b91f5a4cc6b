"""The Gambit .efg reader and writer: every shared file, the format's rules, clean errors."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from conftest import shared_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solvers.errors import FormatError
from solvers.extensive.efg_format import read_efg, write_efg
from solvers.extensive.model import CHANCE, PLAYER, TERMINAL

# (nodes, information sets, terminals) counted by hand from the files
SHARED_COUNTS = {
    "bhg1.efg": (19, 4, 12),
    "kuhn_from_course.efg": (55, 12, 30),
    "leduc_from_course.efg": (1936, 288, 1116),
    "montyhal.efg": (67, 16, 36),
    "nim.efg": (15, 7, 8),
    "openspiel_kuhn_poker.efg": (58, 12, 30),
    "perfect_info_with_chance.efg": (9, 3, 5),
    "poker.efg": (11, 3, 6),
    "rpss_from_course.efg": (13, 2, 9),
    "stripped_down_poker.efg": (11, 3, 6),
    "zerosum_efg_from_sequence_form_STOC94_paper.efg": (21, 5, 12),
}

SAMPLE = '''EFG 2 R "A \\"quoted\\" title" { "Alice" "Bob" "Carol" } "a comment"
c "root" 1 "deal" { "x" 1/4 "y" 0.75 } 1 "ante" { 1/2 -1/2 0 }
p "a" 1 1 "(1,1)" { "L" "R" } 0
t "" 2 "o2" { 1 2 3 }
p "" 3 1 "carol" { "u" "d" } 0
t "" 3 "o3" { 0.25 0 -0.25 }
t "" 2
p "b" 2 1 "bob" { "l" "r" } 0
t "" 0
p "" 1 1 "(1,1)" { "L" "R" } 0
t "" 2
t "" 2 "o2" { 1 2 3 }
'''


def test_sample_with_three_players_rationals_and_outcomes_on_inner_nodes():
    game = read_efg(SAMPLE, filename="sample.efg")
    assert game.title == 'A "quoted" title'
    assert game.player_names == ["Alice", "Bob", "Carol"]
    assert game.comment == "a comment"
    assert game.node_kind.tolist() == [CHANCE, PLAYER, TERMINAL, PLAYER, TERMINAL, TERMINAL,
                                       PLAYER, TERMINAL, PLAYER, TERMINAL, TERMINAL]
    # a rational and a decimal, both kept exact
    assert game.exact_probs[0] == (Fraction(1, 4), Fraction(3, 4))
    # the root's outcome (1/2, -1/2, 0) adds to every terminal below it
    utilities = {int(n): game.terminal_utility[i].tolist()
                 for i, n in enumerate(game.terminal_nodes)}
    assert utilities[2] == [1.5, 1.5, 3.0]
    assert utilities[4] == [0.75, -0.5, -0.25]
    assert utilities[7] == [0.5, -0.5, 0.0]
    # the repeated information set (1,1) of player 1 is one set of two nodes
    assert game.node_infoset[1] == game.node_infoset[8]
    # Alice's own history is empty at both nodes of (1,1): perfect recall holds
    assert game.perfect_recall


def test_forgetting_your_own_move_is_imperfect_recall():
    text = ('EFG 2 R "forgetful" { "A" "B" }\n'
            'p "" 1 1 "first" { "L" "R" } 0\n'
            'p "" 1 2 "second" { "l" "r" } 0\nt "" 0\nt "" 0\n'
            'p "" 1 2 0\nt "" 0\nt "" 0\n')
    game = read_efg(text)
    assert not game.perfect_recall
    assert "second" in game.recall_problem


def test_every_shared_file_reads_and_round_trips():
    folder = shared_path("efg")
    for name, (nodes, infosets, terminals) in SHARED_COUNTS.items():
        game = read_efg(folder / name)
        assert (game.num_nodes, game.num_infosets, len(game.terminal_nodes)) == \
            (nodes, infosets, terminals), name
        again = read_efg(write_efg(game), filename=name)
        assert np.array_equal(again.node_kind, game.node_kind)
        assert np.allclose(again.terminal_utility, game.terminal_utility)
        assert np.allclose(again.terminal_chance, game.terminal_chance)
        assert again.infoset_names == game.infoset_names
        assert again.exact_probs == game.exact_probs


def test_path_given_as_string_and_kuhn_details():
    path = shared_path("efg", "kuhn_from_course.efg")
    game = read_efg(str(path))
    assert game.perfect_recall and game.is_zero_sum()
    assert "/C:J?" in game.infoset_names
    assert np.isclose(game.terminal_chance.sum(), 5.0)  # 6 deals x 5 leaves / 6


@pytest.mark.parametrize("text, line, words", [
    ('EFG 2 R "g" { "a" }\np "" 1 1 "i" { "l" "r" } 0\nt "" 0\n', 2, "only 1 children"),
    ('EFG 2 R "g" { "a" }\np "" 1 1 "i" { "l" "r" } 0\nt "" 0\np "" 1 1 "i" { "l" } 0\n'
     't "" 0\n', 4, "declared differently"),
    ('EFG 2 R "g" { "a" }\nc "" 1 "" { "l" -1 "r" 2 } 0\nt "" 0\nt "" 0\n', 2, "negative"),
    ('EFG 2 R "g" { "a" }\np "" 1 1 "" { "l" "r" } 0\nt "" 0\nc "deal" 1 "" { "l" 1 "r" 3 } 0'
     '\nt "" 0\nt "" 0\n', 4, "node 2 ('deal'): chance probabilities sum to 4, not 1"),
    ('EFG 2 R "g" { "a" }\nc "" 1 "" { "l" 0 "r" 0 } 0\nt "" 0\nt "" 0\n', 2, "sum to 0"),
    ('EFG 2 R "g" { "a" }\np "" 1 1 { "l" } 0\n', 2, "used before its actions"),
    ('EFG 2 R "g" { "a" }\np "" 2 1 "i" { "l" } 0\nt "" 0\n', 2, "player 2 does not exist"),
    ('EFG 2 R "g" { "a" }\np "" 1 7 0\n', 2, "used before its actions"),
    ('EFG 2 R "g" { "a" }\nt "" 3\n', 2, "used before its payoffs"),
    ('EFG 2 R "g" { "a" "b" }\nt "" 1 "o" { 1 }\n', 2, "1 payoffs for 2 players"),
    ('EFG 2 R "g" { "a" }\nt "" 0\nt "" 0\n', 3, "after the end of the tree"),
    ('EFG 2 R "g" { "a" }\nt "" 1 "o" { 1/0 }\n', 2, "bad or out-of-range number"),
    ('EFG 2 R "g" { "a" }\nt "" 1 "o" { 1e400 }\n', 2, "out-of-range"),
    ('EFG 2 R "g" { "a" }\nt "" 1 "o" { 1e99999999999 }\n', 2, "out-of-range"),
    ('EFG 2 R "g" { "a" }\nt "oops\n', 2, "unterminated string"),
    ('EFG 3 R "g" { "a" }\nt "" 0\n', 1, "version 2"),
])
def test_errors_name_the_line(text, line, words):
    with pytest.raises(FormatError) as info:
        read_efg(text, filename="bad.efg")
    assert info.value.location.line == line
    assert info.value.location.file == "bad.efg"
    assert words in info.value.message


KUHN_DEAL = 'c "" 1 "" { "JQ" 1/6 "JK" 1/6 "QJ" 1/6 "QK" 1/6 "KJ" 1/6 "KQ" 1/6 } 0'


def test_kuhn_with_a_wrong_chance_probability_is_refused():
    """5/6 for 1/6 made the probabilities sum to 10/6; the LP then 'solved' it to 0.4467."""
    text = shared_path("efg", "kuhn_from_course.efg").read_text()
    assert KUHN_DEAL in text
    bad = text.replace(KUHN_DEAL, KUHN_DEAL.replace('"JQ" 1/6', '"JQ" 5/6'))
    line = text[:text.index(KUHN_DEAL)].count("\n") + 1
    with pytest.raises(FormatError) as info:
        read_efg(bad, filename="kuhn.efg")
    assert str(info.value).startswith(f"kuhn.efg:{line}:")
    assert "node 0: chance probabilities sum to 5/3, not 1" in info.value.message


@pytest.mark.parametrize("probs, ok", [
    ("1/3 1/3 1/3", True),
    ("0.2 0.2 0.6", True),
    ("0.3333333333 0.3333333333 0.3333333333", True),    # 1 - 1e-10: a decimal, within 1e-9
    ("1/3 0.333333333 0.333333333", True),
    ("0.33333 0.33333 0.33333", False),
    ("1/3 1/3 1/4", False),                                # rationals must be exact
    ("1 1 1", False),
    ("0.5 0.5 1e-8", False),
])
def test_chance_probabilities_sum_to_one(probs, ok):
    a, b, c = probs.split()
    text = (f'EFG 2 R "g" {{ "a" }}\nc "" 1 "" {{ "x" {a} "y" {b} "z" {c} }} 0\n'
            't "" 0\nt "" 0\nt "" 0\n')
    if ok:
        assert np.isclose(read_efg(text).edge_prob.sum(), 1.0)
    else:
        with pytest.raises(FormatError, match="chance probabilities sum to"):
            read_efg(text)


def test_write_keeps_rationals_and_escapes_quotes():
    game = read_efg(SAMPLE)
    text = write_efg(game)
    assert '"A \\"quoted\\" title"' in text
    assert "1/4" in text and "3/4" in text
    assert read_efg(text).exact_payoffs == game.exact_payoffs


def test_pygambit_reads_our_output_as_the_same_game(tmp_path: Path):
    gbt = pytest.importorskip("pygambit")
    folder = shared_path("efg")
    for name in SHARED_COUNTS:
        try:
            original = gbt.read_efg(str(folder / name))
        except ValueError:  # pygambit 16.7 refuses repeated node labels (nim.efg)
            continue
        game = read_efg(folder / name)
        out = tmp_path / name
        out.write_text(write_efg(game))
        theirs = gbt.read_efg(str(out))
        assert len(theirs.players) == len(original.players) == game.num_players
        assert len(list(theirs.nodes)) == len(list(original.nodes)) == game.num_nodes
        assert len(theirs.infosets) == len(original.infosets)
        assert _gambit_leaf_payoffs(theirs) == _gambit_leaf_payoffs(original), name


def _gambit_leaf_payoffs(game) -> list[tuple]:
    """Accumulated payoffs and chance probabilities of every leaf, in pre-order."""
    leaves: list[tuple] = []
    stack = [(game.root, (0,) * len(game.players), 1)]
    while stack:
        node, paid, prob = stack.pop()
        try:
            paid = tuple(a + node.outcome[p] for a, p in zip(paid, game.players, strict=True))
        except (KeyError, TypeError):  # pygambit 16.7 raises for "no outcome"
            pass
        if node.is_terminal:
            leaves.append((paid, prob))
            continue
        kids = list(node.children)
        if node.player.is_chance:
            probs = [a.prob for a in node.infoset.actions]
        else:
            probs = [1] * len(kids)
        stack.extend(reversed(list(zip(kids, [paid] * len(kids),
                                       [prob * q for q in probs], strict=True))))
    return leaves


EFG_ALPHABET = st.sampled_from(['EFG 2 R ', '"x" ', '{ ', '} ', 'p ', 'c ', 't ', '"" ', '0 ',
                                '1 ', '2 ', '1/2 ', '-1 ', '"a" ', '"b" ', '\n', '"', '\\', ',',
                                '1e400 ', '0.5 ', 'D ', '{ "P" } '])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(EFG_ALPHABET, max_size=40))
def test_fuzz_efg_reader_raises_only_format_errors(parts):
    text = "".join(parts)
    try:
        read_efg(text, filename="fuzz.efg")
    except FormatError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_fuzz_efg_reader_on_arbitrary_text(text):
    try:
        read_efg("EFG 2 R " + text, filename="fuzz.efg")
    except FormatError:
        pass


def test_reading_in_small_chunks_gives_the_same_games(monkeypatch):
    """The reader streams: chunk boundaries (here every 64 characters) change nothing."""
    from solvers.extensive import efg_format

    folder = shared_path("efg")
    whole = {name: read_efg(folder / name) for name in SHARED_COUNTS}
    monkeypatch.setattr(efg_format, "CHUNK_CHARS", 64)
    for name, game in whole.items():
        again = read_efg(folder / name)
        assert write_efg(again) == write_efg(game), name
        assert np.array_equal(again.terminal_utility, game.terminal_utility)


def test_a_string_across_lines_and_chunks(monkeypatch):
    from solvers.extensive import efg_format

    monkeypatch.setattr(efg_format, "CHUNK_CHARS", 8)
    text = ('EFG 2 R "a title\nover \\"three\\"\nlines" { "A" "B" }\n'
            'p "" 1 1 "i" { "l" "r" } 0\nt "" 1 "o" { 1/3 -1/3 }\nt "bad')
    with pytest.raises(FormatError) as info:
        read_efg(text, filename="x.efg")
    assert str(info.value) == "x.efg:6:3: unterminated string"
    game = read_efg(text.replace('t "bad', 't "" 0'))
    assert game.title == 'a title\nover "three"\nlines'
    assert game.exact_payoffs[1] == (Fraction(1, 3), Fraction(-1, 3))


def test_long_reads_report_progress_and_stop_at_the_deadline(monkeypatch):
    import time

    from solvers.errors import LimitReached
    from solvers.extensive import efg_format

    path = shared_path("efg", "leduc_from_course.efg")
    monkeypatch.setattr(efg_format, "PROGRESS_SECONDS", 0.0)
    lines: list[str] = []
    game = read_efg(path, progress=lines.append)
    assert game.num_nodes == 1936
    assert lines[0].startswith("reading: ") and "characters" in lines[0]
    assert lines[-1].startswith("read 1,936 nodes in ")
    with pytest.raises(LimitReached, match="time limit was reached while reading"):
        read_efg(path, deadline=time.monotonic() - 1.0)
