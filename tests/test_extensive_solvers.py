"""CFR family, sequence-form LP and NashConv against reference values and peers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import shared_path

from solvers.errors import UnsupportedGame
from solvers.extensive.cfr import CFR
from solvers.extensive.cfr_plus import CFRPlus
from solvers.extensive.discounted_cfr import DiscountedCFR
from solvers.extensive.efg_format import read_efg, write_efg
from solvers.extensive.exploitability import nash_conv
from solvers.extensive.sequence_form_lp import solve_lp
from solvers.extensive.tree_format import read_tree

KUHN = -1 / 18
LEDUC = -0.0856064240780
# ../shared/reference/VALUES.md: value for player 1
REFERENCE = {
    ("efg", "kuhn_from_course.efg"): KUHN,
    ("efg", "openspiel_kuhn_poker.efg"): KUHN,
    ("tree-format", "kuhn_liteefg.txt"): KUHN,
    ("tree-format", "kuhn_mit.txt"): KUHN,
    ("tree-format", "kuhn_polimi.txt"): KUHN,
    ("efg", "leduc_from_course.efg"): LEDUC,
    ("tree-format", "leduc2_mit.txt"): LEDUC,
    ("tree-format", "leduc3_polimi.txt"): LEDUC,
    ("tree-format", "leduc_liteefg.txt"): LEDUC,
    ("tree-format", "leduc5_polimi.txt"): -0.1127689344810,
    ("efg", "rpss_from_course.efg"): 0.0,
    ("tree-format", "rpss_mit.txt"): 0.0,
    ("tree-format", "goofspiel_liteefg.txt"): 3.0,
}


def load(folder: str, name: str):
    path = shared_path(folder, name)
    return read_efg(path) if folder == "efg" else read_tree(Path(path))


@pytest.mark.parametrize("folder, name", sorted(REFERENCE))
def test_lp_values_match_the_reference(folder, name):
    game = load(folder, name)
    solution = solve_lp(game)
    assert solution.values[0] == pytest.approx(REFERENCE[folder, name], abs=1e-9)
    # the LP's own strategy is certified by independent best responses
    check = nash_conv(game, solution.strategy)
    assert check.nash_conv < 1e-8
    assert check.values[0] == pytest.approx(REFERENCE[folder, name], abs=1e-8)


def test_lp_agrees_with_pygambit_on_every_two_player_zero_sum_file(tmp_path):
    gbt = pytest.importorskip("pygambit")
    folder = shared_path("efg")
    checked = []
    for path in sorted(folder.glob("*.efg")):
        game = read_efg(path)
        if game.num_players != 2 or not game.is_zero_sum():
            continue
        if game.num_nodes > 1000:
            continue  # VALUES.md: pygambit's lp_solve fails or runs past 60 s on Leduc
        try:
            theirs = gbt.read_efg(str(path))
        except ValueError:
            # pygambit 16.7 refuses repeated node labels (nim.efg): give it our
            # rewrite of the same game with the node labels left out
            game.node_names = [""] * game.num_nodes
            copy = tmp_path / path.name
            copy.write_text(write_efg(game))
            theirs = gbt.read_efg(str(copy))
        profile = gbt.nash.lp_solve(theirs, rational=True).equilibria[0]
        if not _valid_profile(theirs, profile):
            # pygambit 16.7's lp_solve returns probabilities (0, 0) at nim's root;
            # its lcp_solve is right there
            profile = gbt.nash.lcp_solve(theirs, rational=True).equilibria[0]
        expected = [float(profile.payoff(p.label)) for p in theirs.players]
        assert solve_lp(game).values == pytest.approx(expected, abs=1e-9), path.name
        checked.append(path.name)
    assert len(checked) == 8 and "nim.efg" in checked


def _valid_profile(game, profile) -> bool:
    return all(sum(profile[a] for a in infoset.actions) == 1
               for player in game.players for infoset in player.infosets)


def test_lp_refuses_general_sum_games():
    with pytest.raises(UnsupportedGame):
        solve_lp(load("efg", "bhg1.efg"))


# NashConv after N iterations as OpenSpiel 2.0.2's C++ solvers report (VALUES.md and
# pyspiel runs: its numbers match ours to 1e-12 at every iteration we compared)
OPENSPIEL_NASH_CONV = [
    (CFR, "kuhn_from_course.efg", 100, 0.016451954631830412),
    (CFRPlus, "kuhn_from_course.efg", 100, 0.002388808202223369),
    (CFR, "leduc_from_course.efg", 100, 0.19143270600919524),
    (CFRPlus, "leduc_from_course.efg", 100, 0.02683198994179567),
    (CFR, "kuhn_from_course.efg", 1000, 0.00188),
    (CFR, "leduc_from_course.efg", 1000, 0.0236),
]


@pytest.mark.parametrize("solver, name, iterations, expected", OPENSPIEL_NASH_CONV)
def test_nash_conv_per_iteration_matches_openspiel(solver, name, iterations, expected):
    game = load("efg", name)
    run = solver(game)
    run.iterate(iterations)
    got = nash_conv(game, run.average_strategy()).nash_conv
    digits = len(repr(expected).split(".")[1].lstrip("0"))
    assert got == pytest.approx(expected, rel=10.0 ** (1 - min(digits, 12)) + 1e-12)


def test_live_openspiel_solvers_agree_when_installed():
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms import exploitability

    game = load("efg", "kuhn_from_course.efg")
    theirs_game = pyspiel.load_game("kuhn_poker")
    for ours, theirs in ((CFR, pyspiel.CFRSolver), (CFRPlus, pyspiel.CFRPlusSolver)):
        run, peer = ours(game), theirs(theirs_game)
        for _ in range(50):
            peer.evaluate_and_update_policy()
        run.iterate(50)
        expected = exploitability.nash_conv(theirs_game, peer.average_policy())
        assert nash_conv(game, run.average_strategy()).nash_conv == pytest.approx(expected,
                                                                                  rel=1e-9)


def test_cfr_plus_gets_below_1e3_on_leduc():
    game = load("efg", "leduc_from_course.efg")
    run = CFRPlus(game)
    run.iterate(1000)
    result = nash_conv(game, run.average_strategy())
    assert result.nash_conv < 1e-3
    assert result.values[0] == pytest.approx(LEDUC, abs=2e-3)


def test_discounted_cfr_converges_on_leduc_and_kuhn():
    for name, value in (("kuhn_from_course.efg", KUHN), ("leduc_from_course.efg", LEDUC)):
        game = load("efg", name)
        run = DiscountedCFR(game)
        run.iterate(500)
        result = nash_conv(game, run.average_strategy())
        assert result.nash_conv < 2e-3, name
        assert result.values[0] == pytest.approx(value, abs=2e-3)


def test_cfr_on_a_general_sum_and_a_three_player_game():
    # bhg1 is general-sum: CFR still runs and NashConv is computed for both players
    game = load("efg", "bhg1.efg")
    run = CFR(game)
    run.iterate(2000)
    assert nash_conv(game, run.average_strategy()).nash_conv < 1.0
    three = read_efg('EFG 2 R "3p" { "a" "b" "c" }\n'
                     'p "" 1 1 "A" { "x" "y" } 0\n'
                     'p "" 2 1 "B" { "x" "y" } 0\n'
                     't "" 1 "" { 1 0 0 }\nt "" 2 "" { 0 1 0 }\n'
                     'p "" 3 1 "C" { "x" "y" } 0\n'
                     't "" 3 "" { 0 0 1 }\nt "" 4 "" { 2 2 2 }\n')
    run = CFR(three)
    run.iterate(200)
    result = nash_conv(three, run.average_strategy())
    # player 3 plays y (2 > 1), so player 1 plays y for 2 > 1: an equilibrium of value 2
    assert result.nash_conv < 0.05
    assert result.values == pytest.approx([2, 2, 2], abs=0.05)


def test_imperfect_recall_is_refused():
    forgetful = read_efg('EFG 2 R "f" { "A" "B" }\np "" 1 1 "first" { "L" "R" } 0\n'
                         'p "" 1 2 "second" { "l" "r" } 0\nt "" 0\nt "" 0\n'
                         'p "" 1 2 0\nt "" 0\nt "" 0\n')
    with pytest.raises(UnsupportedGame, match="perfect recall"):
        CFR(forgetful)


def test_best_response_values_on_kuhn_against_uniform():
    game = load("efg", "kuhn_from_course.efg")
    result = nash_conv(game, np.full(game.num_actions, 0.5))
    # uniform Kuhn: OpenSpiel's exploitability of the uniform policy is 0.4583333 (x2)
    assert result.nash_conv == pytest.approx(0.9166666666666666)


def _openspiel_as_efg(game) -> str:
    """An OpenSpiel game's full tree as .efg text (information sets by info-state string)."""
    lines = ['EFG 2 R "from OpenSpiel" { '
             + " ".join(f'"{p}"' for p in range(game.num_players())) + " }", '""']
    sets: dict[tuple[int, str], int] = {}
    count = {"chance": 0, "outcome": 0}
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            count["outcome"] += 1
            payoffs = " ".join(repr(float(r)) for r in state.returns())
            lines.append(f't "" {count["outcome"]} "" {{ {payoffs} }}')
            continue
        if state.is_chance_node():
            count["chance"] += 1
            outcomes = state.chance_outcomes()
            labels = " ".join(f'"{state.action_to_string(a)}" {p!r}' for a, p in outcomes)
            lines.append(f'c "" {count["chance"]} "" {{ {labels} }} 0')
            actions = [a for a, _ in outcomes]
        else:
            player = state.current_player()
            key = (player, state.information_state_string(player))
            number = sets.setdefault(key, sum(1 for k in sets if k[0] == player) + 1)
            actions = state.legal_actions()
            labels = " ".join(f'"{state.action_to_string(player, a)}"' for a in actions)
            lines.append(f'p "" {player + 1} {number} "{key[1]}" {{ {labels} }} 0')
        stack.extend(state.child(a) for a in reversed(actions))
    return "\n".join(lines) + "\n"


def test_three_player_kuhn_matches_openspiel_per_iteration():
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms import exploitability

    theirs_game = pyspiel.load_game("kuhn_poker", {"players": 3})
    game = read_efg(_openspiel_as_efg(theirs_game))
    assert (game.num_players, game.num_nodes, game.num_infosets) == (3, 617, 48)
    for ours, theirs in ((CFR, pyspiel.CFRSolver), (CFRPlus, pyspiel.CFRPlusSolver)):
        run, peer = ours(game), theirs(theirs_game)
        for _ in range(30):
            peer.evaluate_and_update_policy()
        run.iterate(30)
        expected = exploitability.nash_conv(theirs_game, peer.average_policy())
        assert nash_conv(game, run.average_strategy()).nash_conv == pytest.approx(expected,
                                                                                  rel=1e-9)
