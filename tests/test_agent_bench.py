"""``ggp bench agent --ceiling``: a clairvoyant seat of a solved game.

Told the opponent's move, it takes the move with the best exact value against it, so
the value it can expect never falls: every match ends at or above the game's value
(50 on simultaneous tic-tac-toe), and above it whenever the opponent errs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent.bench.agent import main
from solvers.errors import GameError

GAMES = Path(__file__).resolve().parent.parent / "games" / "gdl"


def test_the_clairvoyant_seat_never_ends_below_the_value(capsys: pytest.CaptureFixture) -> None:
    game = str(GAMES / "simultaneous_tictactoe.kif")
    assert main([game, "--opponent", "random", "--ceiling", "--matches", "6",
                 "--playclock", "0.01", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    seats = re.findall(r"seat (\d) goals \[(\d+), (\d+)\]", out)
    assert len(seats) == 6
    scores = [int(goals[int(seat)]) for seat, *goals in seats]
    assert min(scores) >= 50 and sum(scores) > 50 * 6  # random play errs
    chose, lost = map(int, re.search(r"chose (\d+) times; (\d+) of", out).groups())
    assert 0 < lost <= chose


def test_the_ceiling_needs_a_two_player_game(tmp_path: Path) -> None:
    game = tmp_path / "three.kif"
    game.write_text("(role a) (role b) (role c) (init on) (legal a go) (legal b go) "
                    "(legal c go) (<= terminal (true on)) (goal a 0) (goal b 0) (goal c 0)")
    with pytest.raises(GameError, match="two-player"):
        main([str(game), "--ceiling", "--matches", "1"])


PENNIES = ("(role a) (role b) (init s) (coin h) (coin t) "
           "(<= (legal a (play ?x)) (coin ?x)) (<= (legal b (play ?x)) (coin ?x)) "
           "(<= (next (same)) (does a (play ?x)) (does b (play ?x))) (<= (next over) (true s)) "
           "(<= terminal (true over)) (<= (goal a 100) (true (same))) "
           "(<= (goal a 0) (not (true (same)))) (<= (goal b 0) (true (same))) "
           "(<= (goal b 100) (not (true (same))))")


def _suite_files(folder: Path, name: str, rules: str) -> tuple[Path, Path]:
    """The game file of a suite run, and its results file."""
    game = folder / f"{name}.kif"
    game.write_text(rules)
    return game, folder / "results.jsonl"


def test_the_suite_appends_each_match_and_resumes(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture) -> None:
    import json

    game, results = _suite_files(tmp_path, "pennies", PENNIES)
    run = ["--suite", "--games", str(game), "--startclock", "0.3", "--playclock", "0.1",
           "--results", str(results), "--configs", "default;none,solver@exp3"]
    assert main([*run, "--matches", "2"]) == 0
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert [(r["config"], r["match"], r["seat"]) for r in rows] == [
        ("batch,mast,gibbs,solver,reuse,ponder,mastcost,vmean,graph,factor,material,explore,threats@duct", 0, 0),
        ("batch,mast,gibbs,solver,reuse,ponder,mastcost,vmean,graph,factor,material,explore,threats@duct", 1, 1),
        ("solver@exp3", 0, 0), ("solver@exp3", 1, 1)]
    assert all(r["goals"] in ([100, 0], [0, 100]) and r["steps"] == 1 for r in rows)
    with pytest.raises(GameError, match="already has 4 matches: --resume"):
        main([*run, "--matches", "3"])
    with results.open("a") as out:   # a write cut short by a kill
        out.write('{"game": "pennies", "con')
    capsys.readouterr()
    assert main([*run, "--matches", "3", "--resume"]) == 0
    out = capsys.readouterr().out
    assert out.count("match 3:") == 2 and "match 1:" not in out   # only the new ones
    assert re.search(r"pennies\.kif\s+\d+\.\d ± +\d+\.\d  \(3 matches", out)
    assert "overall mean" in out
    assert main(["--suite", "--summary", "--results", str(results)]) == 0
    summary = capsys.readouterr().out
    assert summary.count("(3 matches") == 2 and "match 1:" not in summary
    with pytest.raises(SystemExit):
        main([*run, "--configs", "default,bogus"])


# turns: take 1 or 2 of 4 coins; whoever takes the last one wins. The first player
# wins by taking 1 (3 left: whatever the second takes, the first takes the rest).
COINS = ("(role first) (role second) (init (coins 4)) (init (control first)) "
         "(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (take 1) (take 2) "
         "(<= (legal ?r (take ?n)) (true (control ?r)) (true (coins ?c)) (take ?n) (enough ?n ?c)) "
         "(<= (legal first noop) (true (control second))) "
         "(<= (legal second noop) (true (control first))) "
         "(<= (enough ?n ?c) (minus ?c ?n ?d)) "
         "(<= (minus ?c 1 ?d) (succ ?d ?c)) (<= (minus ?c 2 ?d) (succ ?d ?e) (succ ?e ?c)) "
         "(<= (next (coins ?d)) (does ?r (take ?n)) (true (coins ?c)) (minus ?c ?n ?d)) "
         "(<= (next (control second)) (true (control first))) "
         "(<= (next (control first)) (true (control second))) "
         "(<= (next (last ?r)) (does ?r (take ?n))) "
         "(<= terminal (true (coins 0))) "
         "(<= (goal ?r 100) (true (last ?r))) (<= (goal ?r 0) (role ?r) (not (true (last ?r)))) ")


def test_fixed_playout_matches_are_recorded_apart(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture) -> None:
    import json

    game, results = _suite_files(tmp_path, "coins", COINS)
    assert main(["--suite", "--games", str(game), "--playouts", "200", "--matches", "4",
                 "--results", str(results), "--configs", "default;none"]) == 0
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    names = ["batch,mast,gibbs,solver,reuse,ponder,mastcost,vmean,graph,factor,material,explore,threats@duct/p200", "@duct/p200"]
    assert [r["config"] for r in rows] == [names[0]] * 4 + [names[1]] * 4
    # both searches find the first player's win (take 1): the first seat wins every match
    assert all(r["goals"] == [100, 0] and r["playouts"] == 200 and r["late"] == 0
               for r in rows)
    assert [r["share"] for r in rows[:4]] == [1.0, 0.0, 1.0, 0.0]
    capsys.readouterr()
    assert main(["--suite", "--summary", "--results", str(results), "--playouts", "200",
                 "--configs", "none"]) == 0
    summary = capsys.readouterr().out
    assert "config @duct/p200" in summary and "50.0" in summary
    # the first seat won every match: decided by the value, no undecided mean to give
    assert "every game decided by its value" in summary and "nan" not in summary
    with pytest.raises(SystemExit):
        main(["--suite", "--playouts", "0", "--results", str(results)])


def test_plain_uct_can_take_the_agents_seat_at_other_playouts(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    import json

    game, results = _suite_files(tmp_path, "coins", COINS)
    assert main(["--suite", "--games", str(game), "--playouts", "200", "--opponent-playouts",
                 "3", "--matches", "4", "--results", str(results), "--configs", "uct"]) == 0
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert {r["config"] for r in rows} == {"uct/p200/o3"}
    assert all((r["playouts"], r["opponent_playouts"]) == (200, 3) for r in rows)
    # uct at 200 playouts finds the first seat's win (take 1) whenever it has that seat
    assert [r["goals"] for r in rows if r["seat"] == 0] == [[100, 0]] * 2
    capsys.readouterr()
    assert main(["--suite", "--summary", "--results", str(results), "--playouts", "200",
                 "--opponent-playouts", "3", "--configs", "uct"]) == 0
    assert "config uct/p200/o3" in capsys.readouterr().out
    for refused in (["--configs", "uct"], ["--opponent-playouts", "3"]):
        with pytest.raises(SystemExit):
            main(["--suite", "--results", str(results), *refused])


def test_suite_configs_name_their_settings_and_pass_them_to_the_agent() -> None:
    from agent.bench.suite import Config

    tuned = Config.of("default,no-ponder@duct,t=0.1,s=0.3,c=0.4")
    # named in a fixed order; t is the default; the c asked for turns explore off
    assert tuned.name == ("batch,mast,gibbs,solver,reuse,mastcost,vmean,graph,factor,material,threats"
                          "@duct,c=0.4,s=0.3")
    assert "explore" in Config.of("default@duct,s=0.3").name
    options = tuned.options(seed=5)
    assert (options.exploration, options.simultaneous_exploration, options.mast_temperature,
            options.seed) == (0.4, 0.3, 0.1, 5)
    assert "ponder" not in options.enhancements
    assert Config.of("none").options(0).exploration == 0.7
    for bad in ("none@duct,q=1", "none@duct,c=-1", "none@duct,c=x", "none@fast"):
        with pytest.raises(ValueError):
            Config.of(bad)


def test_a_match_that_never_ends_is_cut_off_as_a_draw(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    import agent.bench.suite as suite

    monkeypatch.setattr(suite, "MAX_MATCH_STEPS", 30)
    endless = ("(role a) (role b) (init (on)) (legal a wait) (legal b wait) "
               "(<= (next (on)) (true (on))) (<= terminal (true (off))) "
               "(goal a 100) (goal b 0)")
    game, results = _suite_files(tmp_path, "endless", endless)
    assert main(["--suite", "--games", str(game), "--playouts", "10", "--matches", "4",
                 "--results", str(results), "--configs", "none"]) == 0
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert [(r["goals"], r["share"], r["steps"]) for r in rows] == [([], 0.5, 30)] * 4
    assert all(r["unfinished"] == "no terminal state after 30 steps" for r in rows)
    summary = capsys.readouterr().out
    assert "50.0" in summary and "4 cut off at 30 steps, draws" in summary
    assert "; decided:" not in summary and "over the 1 not decided" in summary


def test_a_game_solved_offline_counts_as_decided_by_its_value() -> None:
    from agent.bench.suite import decided

    rows = [{"game": "doubletictactoe", "seat": seat, "goals": goals, "presolve": ""}
            for seat, goals in ((0, [50, 50]), (1, [75, 25]), (0, [50, 50]), (1, [50, 50]))]
    assert decided(rows) == "a draw by its value (solved offline, 7,664,570 states)"
    assert decided([{**r, "game": "connectFour"} for r in rows]) == ""
