"""``ggp bench fuzz`` (issue 14, "Must show"): mutants of every input format get a
clean error or are accepted; never a traceback, an internal error or a hang."""

from __future__ import annotations

import json
import random

import pytest

from gdl.fuzz.files import FileChecker, file_seeds
from gdl.fuzz.mutate import mutate_message, mutate_text
from gdl.fuzz.tally import Tally
from ggp_cli import FUZZ_TARGETS as FORMATS
from ggp_cli import fuzz_main as main
from ggp_cli import run_fuzz


def test_mutations_are_seeded_and_change_the_input() -> None:
    text = "(role a)\n(init (at 0))\n(<= terminal (true (at 0)))"
    first = [mutate_text(text, random.Random(5)) for _ in range(3)]
    assert first == [mutate_text(text, random.Random(5)) for _ in range(3)]
    mutants = {mutate_text(text, random.Random(i)) for i in range(50)}
    assert text not in mutants or len(mutants) > 40
    message = {"type": "move", "match": "m1", "step": 1, "move": "noop"}
    assert all(mutate_message(message, random.Random(i)) != json.dumps(message)
               for i in range(20))


def test_the_checker_tells_the_outcomes_apart() -> None:
    checker = FileChecker(time_limit=10)
    try:
        assert checker.check("gdl", "(role a) (init (at 0)) (<= terminal (true (at 0)))"
                                    " (goal a 0)")[0] == "accepted"
        outcome, detail = checker.check("gdl", "(role a")
        assert outcome == "error" and "fuzz:" in detail
        assert checker.check("nonsense", "x")[0] == "error"  # unknown format: a GameError
    finally:
        checker.close()


def test_a_hang_is_counted_and_the_checker_recovers(monkeypatch) -> None:
    checker = FileChecker(time_limit=0.5)
    try:
        # a deliberately endless "game" through the real pipe: the checker kills it
        monkeypatch.setattr("gdl.fuzz.files._play_through",
                            lambda fmt, text: __import__("time").sleep(60))
        assert checker.check("gdl", "(role a)")[0] == "hang"
        monkeypatch.undo()
        assert checker.check("gdl", "(role a")[0] == "error"
    finally:
        checker.close()


def test_failures_are_kept_for_the_report(tmp_path) -> None:
    tally = Tally()
    tally.add("internal", "bad input", "Traceback ...", tmp_path, "kif")
    tally.add("error", "x", "fine", tmp_path, "kif")
    assert (tally.internal, tally.errors, tally.mutants) == (1, 1, 2)
    assert (tmp_path / "kif-1-internal").read_text() == "bad input"
    assert tally.examples == ["internal: Traceback ..."]


def test_bad_options_are_one_line_errors() -> None:
    from solvers.errors import GameError

    with pytest.raises(GameError, match="unknown nope"):
        main(["--formats", "kif,nope"])
    with pytest.raises(GameError, match="positive"):
        main(["--mutants", "0"])


@pytest.mark.slow
def test_50_mutants_per_format_give_no_traceback_and_no_hang(shared) -> None:
    results = run_fuzz(FORMATS, mutants=50, seed=14, time_limit=10)
    for kind, tally in results.items():
        if tally is None:  # no seed files for it
            assert kind in ("efg", "tree", "osposg") and not file_seeds(kind)
            continue
        assert tally.mutants == 50
        assert tally.internal == 0 and tally.hangs == 0, (kind, tally.examples)
        assert tally.errors > 0  # the mutants did reach the error paths
    assert results["kif"].accepted > 0 and results["ggp-http"].accepted > 0


# Bugs the fuzzer found, each now a one-line error (they were a hang or a traceback).

def test_tree_player_numbers_are_bounded() -> None:
    """``player 18446744073709551616`` made the tree reader build 2**64-long payoff vectors."""
    from gdl.formats import load_game_text
    from solvers.errors import FormatError

    for line in ("node / player 18446744073709551616 actions a",
                 "node / player 1 actions a\nnode /P1:a/ leaf payoffs " + "9" * 5000 + "=1"):
        with pytest.raises(FormatError, match="at most 64 players"):
            load_game_text("tree", line)


def test_efg_integers_of_thousands_of_digits_are_refused() -> None:
    """int() refuses 4,300+ digits with a ValueError: the reader let it through."""
    from gdl.formats import load_game_text
    from solvers.errors import FormatError

    text = 'EFG 2 R "g" { "A" "B" }\nt "" ' + "9" * 5000 + ' "o" { 1 -1 }\n'
    with pytest.raises(FormatError, match="below 10\\*\\*18"):
        load_game_text("efg", text)


@pytest.mark.parametrize("engine", ["general", "compiled"])
@pytest.mark.parametrize("goal", ["9" * 400, "9" * 5000])
def test_gdl_huge_goal_values_are_runtime_errors(engine: str, goal: str) -> None:
    """A 400-digit goal overflowed float() in the payoffs, a 5,000-digit one int()."""
    from gdl.reasoning.machine import load_machine
    from solvers.errors import GameRuntimeError

    machine = load_machine(f"(role a) (init (at 0)) (<= terminal (true (at 0))) (goal a {goal})",
                           engine=engine)
    with pytest.raises(GameRuntimeError, match="huge goal value"):
        machine.goals(machine.initial_state())
