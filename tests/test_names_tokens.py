"""Names with spaces (issue #32, item 16): the tree and strategy formats spell them as
one word each (``%XX`` for whitespace and ``%``), and every program shows the real name;
files without ``%`` read as before."""

from __future__ import annotations

import random

import numpy as np
import pytest
from conftest import shared_path

import ggp_cli
from gdl.cli.gdl2 import load_gdl2
from gdl.formats import load_game_text
from solvers.extensive.strategy_io import read_strategy, write_strategy
from solvers.extensive.tokens import from_token, legacy_token, token
from solvers.extensive.tree_format import read_tree, write_tree
from solvers.locations import REPO
from solvers.posg.reader import read_posg

KUHN_GDL2 = REPO / "games" / "gdl2" / "kuhn_poker.kif"
JACK = "first: noop [(your_card jack)]"


@pytest.mark.parametrize("name", [JACK, "a%b", "tab\there", "new\nline", "日本 語",
                                  "pl1_0__1?/", "a\u3000b", "100%20", "_"])
def test_token_is_one_word_and_round_trips(name: str) -> None:
    word = token(name)
    assert word.split() == [word]
    assert from_token(word) == name


def test_words_without_escapes_read_as_themselves() -> None:
    for word in ("pl1_0__1?/1:k/2:b", "reveal_i1r1", "50%", "%zz", "%E6"):
        assert from_token(word) == word
    assert token(JACK) == "first:%20noop%20[(your_card%20jack)]"
    assert legacy_token(JACK) == "first:_noop_[(your_card_jack)]"


@pytest.fixture(scope="module")
def kuhn():
    game, _ = load_gdl2(str(KUHN_GDL2))
    return game


def test_a_converted_gdl2_game_keeps_its_names(kuhn) -> None:
    """``ggp convert --to tree`` then reading the file: the names of the GDL-II game,
    not ``first:_noop_[(your_card_jack)]``."""
    assert JACK in kuhn.infoset_names
    text = write_tree(kuhn)
    assert "infoset first:%20noop%20[(your_card%20jack)] nodes" in text
    back = read_tree(text)
    assert sorted(back.infoset_names) == sorted(kuhn.infoset_names)
    assert back.node_actions(0) == kuhn.node_actions(0)           # (deal jack king) ...
    assert "(deal jack king)" in back.node_actions(0)
    assert write_tree(back) == text                                # and written the same


def test_strategy_files_use_the_words_and_read_the_old_spelling(kuhn) -> None:
    sigma = np.random.default_rng(3).random(kuhn.num_actions)
    for i in range(kuhn.num_infosets):   # a distribution per information set
        lo, hi = int(kuhn.infoset_action_start[i]), int(kuhn.infoset_action_start[i + 1])
        sigma[lo:hi] /= sigma[lo:hi].sum()
    text = write_strategy(kuhn, sigma)
    assert "infoset first:%20noop%20[(your_card%20jack)] strategies" in text
    assert np.allclose(read_strategy(kuhn, text).sigma, sigma)
    old = text.replace("%20", "_")              # a file written before the rule
    assert np.allclose(read_strategy(kuhn, old).sigma, sigma)


def test_a_tree_game_in_play_shows_real_names(kuhn) -> None:
    """What the server sends to players and shows on the match page: the game's own
    names."""
    game = load_game_text("tree", write_tree(kuhn), "kuhn")
    state = game.initial_state(random.Random(0))   # chance has dealt
    seen = game.observation(state, 0)
    assert seen["infoset"].startswith("first: noop [(your_card ")
    assert game.legal_moves(state, 0) == ["bet", "check"]


def test_the_command_line_shows_real_names(tmp_path, capsys) -> None:
    tree = tmp_path / "kuhn.txt"
    assert ggp_cli.main(["convert", str(KUHN_GDL2), "--to", "tree", str(tree)]) == 0
    strategy = tmp_path / "s.txt"
    assert ggp_cli.main(["solve", str(tree), "--iterations", "5", "--quiet",
                         "--strategy", str(strategy)]) == 0
    lines = strategy.read_text().splitlines()
    strategy.write_text("\n".join(line for line in lines if "jack" not in line) + "\n")
    capsys.readouterr()
    assert ggp_cli.main(["exploitability", str(tree), "--strategy", str(strategy)]) == 0
    err = capsys.readouterr().err
    assert "played uniformly (first: first: noop [(your_card jack)])" in err


def test_existing_tree_files_read_unchanged() -> None:
    game = read_tree(shared_path("tree-format", "kuhn_liteefg.txt"))
    assert "pl1_0__1?/" in game.infoset_names


def test_pursuit_evasion_names_have_their_spaces() -> None:
    path = shared_path("posg", "pursuit-evasion", "peg03.osposg")
    model = read_posg(path.read_text(), str(path))
    assert all(",_" not in name for name in model.a1_names + model.state_names)
    assert model.a1_names[0].startswith("[PursuerAction{source=")
    assert ", target=" in model.a1_names[0]
