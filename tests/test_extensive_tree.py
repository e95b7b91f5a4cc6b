"""The game-tree text format reader and writer: shared files, quirks, clean errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import shared_path
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers.errors import FormatError
from solvers.extensive.efg_format import read_efg, write_efg
from solvers.extensive.tree_format import read_tree, write_tree

# (nodes, information sets, terminals)
SHARED_COUNTS = {
    "goofspiel_liteefg.txt": (1066, 546, 216),
    "kuhn_liteefg.txt": (55, 12, 30),
    "kuhn_mit.txt": (55, 12, 30),
    "kuhn_polimi.txt": (55, 12, 30),
    "leduc2_mit.txt": (1936, 288, 1116),
    "leduc3_polimi.txt": (1936, 288, 1116),
    "leduc5_polimi.txt": (9376, 780, 5500),
    "leduc_liteefg.txt": (1936, 288, 1116),
    "rpss_mit.txt": (13, 2, 9),
}

SMALL = """# a comment
node /C:y/P1:b/ terminal payoffs 1=3 2=-3
node / chance actions x=1 y=3
node /C:x player 1 actions a b
node /C:y/ player 1 actions a b
node /C:x/P1:a leaf payoffs 1=1 2=-1
node /C:x/P1:b leaf payoffs 1=0.5 2=-1/2
node /C:y/P1:a/ leaf payoffs 1=-1 2=1
infoset both nodes /C:x/ /C:y
"""


def test_leaves_before_parents_weights_and_trailing_slashes():
    game = read_tree(SMALL, filename="small.txt")
    assert game.num_nodes == 7 and game.num_infosets == 1
    assert game.infoset_names == ["both"]
    assert game.player_names == ["P1", "P2"]
    assert sorted(game.terminal_chance.tolist()) == [0.25, 0.25, 0.75, 0.75]
    assert game.terminal_utility[:, 0].tolist() == [1.0, 0.5, -1.0, 3.0]


def test_byte_order_mark_and_windows_line_ends():
    game = read_tree("\ufeff" + SMALL.replace("\n", "\r\n"))
    assert game.num_nodes == 7
    assert read_efg("\ufeffEFG 2 R \"g\" { \"a\" }\r\nt \"\" 0\r\n").num_nodes == 1


def test_every_shared_file_reads_and_round_trips():
    folder = shared_path("tree-format")
    for name, counts in SHARED_COUNTS.items():
        game = read_tree(folder / name)
        assert (game.num_nodes, game.num_infosets, len(game.terminal_nodes)) == counts, name
        assert game.perfect_recall and game.is_zero_sum(), name
        for again in (read_tree(write_tree(game)), read_efg(write_efg(game))):
            assert np.allclose(again.terminal_utility, game.terminal_utility)
            assert np.allclose(again.terminal_chance, game.terminal_chance)
            assert again.infoset_names == game.infoset_names


def test_unlisted_nodes_are_their_own_information_sets():
    game = read_tree(shared_path("tree-format", "goofspiel_liteefg.txt"))
    listed = sum(1 for name in game.infoset_names if not name.startswith("/"))
    assert listed == 57  # the file's infoset lines; the other 489 sets are single nodes


def test_efg_games_convert_to_the_tree_format():
    game = read_efg(shared_path("efg", "montyhal.efg"))
    again = read_tree(write_tree(game))
    assert np.allclose(again.terminal_utility, game.terminal_utility)
    assert again.num_infosets == game.num_infosets


BAD = [
    ("node / player 1 actions a b\nnode /P1:a leaf payoffs 1=1 2=-1\n", 1, "no child for action 'b'"),
    ("node / player 1 actions a\nnode /P1:a leaf payoffs 1=1\nnode /P1:a leaf payoffs 1=2\n", 3,
     "given twice"),
    ("node / chance actions a=-1 b=2\n", 1, "negative"),
    ("node / chance actions a=0 b=0\n", 1, "sum to 0"),
    ("node / player 1 actions a b\nnode /P1:a player 2 actions x\nnode /P1:b player 2 actions y\n"
     "node /P1:a/P2:x leaf payoffs 1=0\nnode /P1:b/P2:y leaf payoffs 1=0\n"
     "infoset I nodes /P1:a /P1:b\n", 3, "differ"),
    ("node / player 1 actions a b\nnode /P1:a leaf payoffs 1=0\nnode /P1:b leaf payoffs 1=0\n"
     "infoset I nodes /\ninfoset J nodes /\n", 5, "in two information sets"),
    ("node / player 1 actions a b\nnode /P1:a player 2 actions x\nnode /P1:b player 1 actions x\n"
     "node /P1:a/P2:x leaf payoffs 1=0\nnode /P1:b/P1:x leaf payoffs 1=0\n"
     "infoset I nodes /P1:a /P1:b\n", 3, "players 2 and 1"),
    ("node / player 1 actions a\nnode /P1:a leaf payoffs 1=0\ninfoset I nodes /P1:a\n", 3,
     "not a player node"),
    ("node / player 1 actions a\nnode /P1:a leaf payoffs 1=x\n", 2, "bad or out-of-range payoff"),
    ("node / player 1 actions a\nnode /P1:a leaf payoffs 1=1e99999999999\n", 2, "out-of-range"),
    ("node / player 1 actions a\nnode /P1:a leaf payoffs 1=0\nnode /P1:z/P2:q leaf payoffs 1=0\n",
     3, "not reachable"),
    ("node /X:a leaf payoffs 1=0\n", 1, "bad edge"),
    ("bogus line\n", 1, "starts with"),
    ("# only a comment\n", 1, "no root"),
]


@pytest.mark.parametrize("text, line, words", BAD)
def test_errors_name_the_line(text, line, words):
    with pytest.raises(FormatError) as info:
        read_tree(text, filename="bad.txt")
    assert info.value.location.file == "bad.txt"
    assert info.value.location.line == line
    assert words in info.value.message


TREE_WORDS = st.sampled_from(["node ", "infoset ", "/ ", "/P1:a ", "/P1:b ", "/C:x ", "/P2:a/ ",
                              "player ", "chance ", "leaf ", "terminal ", "payoffs ", "actions ",
                              "nodes ", "1 ", "2 ", "a ", "b ", "x=1 ", "a=0 ", "1=3 ", "2=-1/2 ",
                              "1=1e999 ", "\n", "# c\n", "I "])


@settings(max_examples=300, deadline=None)
@given(st.lists(TREE_WORDS, max_size=40))
def test_fuzz_tree_reader_raises_only_format_errors(parts):
    try:
        read_tree("".join(parts), filename="fuzz.txt")
    except FormatError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_fuzz_tree_reader_on_arbitrary_text(text):
    try:
        read_tree("node / " + text, filename="fuzz.txt")
    except FormatError:
        pass
