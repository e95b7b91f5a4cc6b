"""The general engine replays SWI-Prolog oracle traces step by step.

For every prover edge case of ``../shared/gdl-corpus/prover-tests`` and a
representative set of corpus games, the oracle (``../shared/oracle``) writes random
playouts; the general engine must agree on the legal moves of every role, the next
state, the terminal flag and the goal values at every step. The edge cases that
break the GDL specification must instead be rejected by the validator.
Skips cleanly without ``../shared`` or SWI-Prolog.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import shared_path

from gdl.bench.corpus_check import oracle_trace
from gdl.reasoning.machine import GeneralMachine, load_machine, read_rules
from gdl.reasoning.trace import replay
from gdl.reasoning.validate import validate
from solvers.errors import ValidationError

PROVER_TESTS = [
    "connectFour", "simpleMutex", "test_case_1a", "test_case_1b", "test_case_2a",
    "test_case_2b", "test_case_2c", "test_case_3a", "test_case_3b", "test_case_3c",
    "test_case_3d", "test_case_3e", "test_case_3f", "test_case_4a", "test_case_5a",
    "test_case_5b", "test_case_5c", "test_case_5d", "test_case_5e", "test_clean_not_distinct",
    "test_distinct_beginning_rule", "test_invalid_function_arities_differ",
    "test_invalid_sentence_arities_differ", "ticTacToe",
]
# edge cases that break the specification, and the problem the validator must name
INVALID = {
    "test_case_3b": "unsafe rule: ?m, ?n, ?x, ?y",     # variables only in distinct
    "test_case_3e": "unsafe rule: ?p",                 # head variable bound nowhere
    "test_case_3f": "unsafe rule: ?p",
    "test_invalid_function_arities_differ": "function 'a' used with arity 2",
    "test_invalid_sentence_arities_differ": "relation 'foo' used with arity 2",
}
# corpus games: (name, playouts) covering 2-player turn-taking, 3 players, 1 player,
# simultaneous moves, recursion, deep function terms, chess-size rules, static
# arithmetic over 400 numbers (gt_two_thirds_4p) and lists of up to 23 cells built by
# static rules (laikLee_hex), both evaluated top-down
CORPUS = [
    ("ticTacToe", 3), ("connectFour", 3), ("breakthrough", 2), ("ticTicToe", 3),
    ("tictactoe_3player", 2), ("3pConnectFour", 1), ("hanoi", 2), ("eightPuzzle", 1),
    ("blocker", 3), ("connectFourSimultaneous", 2), ("roshambo2", 3), ("nim1", 3),
    ("checkers", 1), ("chess", 1), ("pancakes6", 2), ("gt_two_thirds_4p", 1),
    ("laikLee_hex", 1),
]


@pytest.fixture(scope="module")
def trace_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("swipl") is None:
        pytest.skip("SWI-Prolog (swipl) is not installed")
    shared_path("oracle")
    return tmp_path_factory.mktemp("oracle-traces")


def oracle_records(game: Path, playouts: int, folder: Path) -> list[dict]:
    records, reason = oracle_trace(game, playouts, 7, folder / f"{game.stem}.jsonl")
    if records is None:  # left recursion: the oracle needs SWI tabling
        records, reason = oracle_trace(game, playouts, 7, folder / f"{game.stem}-t.jsonl",
                                       table=True)
    assert records is not None, reason
    return records


def test_prover_tests_are_all_listed() -> None:
    folder = shared_path("gdl-corpus", "prover-tests")
    assert sorted(p.stem for p in folder.glob("*.kif")) == sorted(PROVER_TESTS)


@pytest.mark.parametrize("name", PROVER_TESTS)
def test_prover_edge_case(name: str, trace_dir: Path) -> None:
    game = shared_path("gdl-corpus", "prover-tests", f"{name}.kif")
    rules, _ = read_rules(game)
    if name in INVALID:
        with pytest.raises(ValidationError) as info:
            validate(rules, str(game))
        assert INVALID[name] in str(info.value)
        assert f"{game}:" in str(info.value.problems[0])  # file:line:col
        return
    validate(rules, str(game))
    checked, problems = replay(GeneralMachine(rules, name=name),
                               oracle_records(game, 2, trace_dir))
    assert problems == []
    assert checked >= 2


@pytest.mark.parametrize("name, playouts", CORPUS)
def test_corpus_game(name: str, playouts: int, trace_dir: Path) -> None:
    game = shared_path("gdl-corpus", "repository", f"{name}.kif")
    machine = load_machine(game, engine="general")
    records = oracle_records(game, playouts, trace_dir)
    checked, problems = replay(machine, records)
    assert problems == []
    assert checked == len(records)
    assert sum(1 for r in records if r["terminal"]) == playouts


def test_edge_case_5e_has_the_seven_documented_moves() -> None:
    game = shared_path("gdl-corpus", "prover-tests", "test_case_5e.kif")
    machine = load_machine(game)
    moves = machine.legal_moves(machine.initial_state(), 0)
    assert len(moves) == 7  # the file's comment: "The robot role should have seven legal moves"


def test_game_with_a_random_role(trace_dir: Path) -> None:
    # no corpus game has a GDL-II `random` role: the one of the playable tests
    from test_gdl_playable import COIN

    game = trace_dir / "coin.kif"
    game.write_text(COIN)
    machine = load_machine(game, engine="general")
    assert machine.roles == ("random", "guesser")
    records = oracle_records(game, 6, trace_dir)
    assert replay(machine, records) == (len(records), [])
