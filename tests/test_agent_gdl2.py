"""The agent in GDL-II matches: belief tracking, move choice, both protocols.

Beliefs are checked against hand-derived sets: Monty Hall (Bayes: the host's forced
door makes the car twice as likely behind the other door), Kuhn poker (a card is
seen, the other is one of the two left) and Krieg tic-tac-toe (the blind opponent's
move is any of the 9 it could try). Matches are driven by a scripted game master
that sends exactly the GDL-II messages (``../shared/protocols/ggp-ii.md``, the
websocket observation of ``server/PROTOCOL.md``) to the real agent (worker
processes), a uniformly random player in the other seats.
"""

from __future__ import annotations

import random
import time
from fractions import Fraction
from pathlib import Path

import pytest

from agent.brains.gdl2 import Gdl2Brain
from agent.brains.options import BrainOptions
from agent.gamer import Gamer
from agent.ggp_http import Play, Stop, parse_message
from agent.http_player import GgpPlayer
from agent.search.belief import Belief, observation_of
from agent.search.gdl2_endgame import BestResponse
from agent.search.ismcts import ISMCTS
from agent.ws_client import WsAgent
from gdl.reasoning.machine import load_machine
from solvers.errors import FormatError, GameError

GDL2 = Path(__file__).resolve().parent.parent / "games" / "gdl2"


def machine_of(name: str, engine: str = "general"):
    return load_machine(GDL2 / f"{name}.kif", engine=engine)


def belief_kif(belief: Belief) -> dict[frozenset[str], Fraction]:
    """The belief as {facts: probability}, probabilities rounded to small fractions."""
    return {frozenset(belief.machine.state_to_kif(s)): Fraction(p).limit_denominator(1000)
            for s, p in belief.probabilities().items()}


# -- belief tracking -------------------------------------------------------------------

@pytest.mark.parametrize("engine", ["general", "compiled"])
def test_monty_hall_belief_is_bayes(engine: str) -> None:
    machine = machine_of("monty_hall", engine)
    belief = Belief(machine, machine.roles.index("contestant"))
    belief.update("(choose 1)", [])
    assert belief_kif(belief) == {
        frozenset({f"(car {d})", "(chosen 1)", "(step open)"}): Fraction(1, 3) for d in (1, 2, 3)}
    belief.update("noop", ["(opened 3)"])
    # car 1: the host chose door 3 out of two (1/3 x 1/2); car 2: door 3 was forced (1/3)
    assert belief_kif(belief) == {
        frozenset({"(car 1)", "(chosen 1)", "(opened 3)", "(step decide)"}): Fraction(1, 3),
        frozenset({"(car 2)", "(chosen 1)", "(opened 3)", "(step decide)"}): Fraction(2, 3)}
    assert belief.exact


@pytest.mark.parametrize("engine", ["general", "compiled"])
def test_kuhn_belief_is_the_two_other_cards(engine: str) -> None:
    machine = machine_of("kuhn_poker", engine)
    second = Belief(machine, machine.roles.index("second"))
    second.update("noop", ["(your_card queen)"])
    second.update("noop", ["(did first bet)"])
    assert belief_kif(second) == {
        frozenset({f"(holds first {c})", "(holds second queen)", "(stage b)"}): Fraction(1, 2)
        for c in ("jack", "king")}
    first = Belief(machine, machine.roles.index("first"))
    first.update("noop", ["(your_card jack)"])
    first.update("check", ["(did first check)"])
    assert belief_kif(first) == {
        frozenset({"(holds first jack)", f"(holds second {c})", "(stage c)"}): Fraction(1, 2)
        for c in ("queen", "king")}


def krieg_after_x_center() -> tuple[object, Belief, set]:
    """X marked the centre, then O made its blind move: the belief and the hand-derived
    set (O marked one of the 8 other cells, or tried the centre and found it taken)."""
    machine = machine_of("krieg_tictactoe", "compiled")
    belief = Belief(machine, 0)
    belief.update("(mark 2 2)", ["(placed 2 2)"])
    belief.update("noop", [])
    cells = [(m, n) for m in (1, 2, 3) for n in (1, 2, 3)]
    base = {f"(cell {m} {n} {'x' if (m, n) == (2, 2) else 'b'})" for m, n in cells}
    expected = {frozenset(base | {"(control xplayer)", "(found oplayer 2 2)"})}
    for m, n in cells:
        if (m, n) != (2, 2):
            board = (base - {f"(cell {m} {n} b)"}) | {f"(cell {m} {n} o)"}
            expected.add(frozenset(board | {"(control xplayer)"}))
    return machine, belief, expected


def test_krieg_belief_is_every_blind_move() -> None:
    machine, belief, expected = krieg_after_x_center()
    assert set(belief_kif(belief)) == expected
    assert set(belief_kif(belief).values()) == {Fraction(1, 9)}
    # X now finds (1 1) taken: O is there, the other eight states are ruled out
    belief.update("(mark 1 1)", ["(occupied 1 1)"])
    assert [sorted(f for f in facts if " o)" in f) for facts in belief_kif(belief)] == [
        ["(cell 1 1 o)"]]


def test_sampled_belief_keeps_only_consistent_states() -> None:
    """Over ``max_states`` the belief is a sample: every particle is consistent."""
    machine = machine_of("krieg_tictactoe", "compiled")
    exact, sampled = Belief(machine, 0), Belief(machine, 0, max_states=4, particles=5, seed=3)
    for move, seen in [("(mark 2 2)", ["(placed 2 2)"]), ("noop", []),
                       ("(mark 1 1)", ["(placed 1 1)"]), ("noop", [])]:
        exact.update(move, seen)
        sampled.update(move, seen)
    assert exact.exact and len(exact.weights) > 5
    assert not sampled.exact and 1 <= len(sampled.weights) <= 5
    assert set(sampled.weights) <= set(exact.weights)


def test_particle_refill_after_losing_the_true_state() -> None:
    machine, belief, expected = krieg_after_x_center()
    # a belief that lost the truth: only "O tried the centre"; then X finds (1 1) taken
    belief.weights = {s: w for s, w in belief.weights.items()
                      if "(found oplayer 2 2)" in machine.state_to_kif(s)}
    belief.update("(mark 1 1)", ["(occupied 1 1)"])
    assert belief.refills == 1 and not belief.exact
    assert [sorted(f for f in machine.state_to_kif(s) if " o)" in f) for s in belief.weights] \
        == [["(cell 1 1 o)"]]


def test_no_consistent_state_is_a_clear_error() -> None:
    machine = machine_of("monty_hall")
    belief = Belief(machine, 0, particles=3)
    belief.update("(choose 1)", [])
    with pytest.raises(GameError, match="no game state agrees"):
        belief.update("noop", ["(opened 1)"])  # the host never opens the chosen door


def test_observation_fields() -> None:
    assert observation_of({"turn": 0, "last_move": None, "percepts": None}).last_move is None
    seen = observation_of({"turn": 2, "last_move": "noop", "percepts": ["(b)", "(a)"]})
    assert seen.percepts == ("(a)", "(b)")
    assert observation_of({"turn": 2, "last_move": "noop", "percepts": None}).percepts == ()
    with pytest.raises(GameError, match="turn"):
        observation_of({"turn": -1, "last_move": None, "percepts": None})


# -- move choice ------------------------------------------------------------------------

def test_ismcts_switches_in_monty_hall() -> None:
    machine = machine_of("monty_hall", "compiled")
    belief = Belief(machine, 0)
    belief.update("(choose 1)", [])
    belief.update("noop", ["(opened 3)"])
    result = ISMCTS(machine, 0, seed=1).search(belief, time.monotonic() + 60, iterations=3000)
    assert machine.move_to_kif(result.best_move()) == "switch"
    means = {machine.move_to_kif(m): v for m, v in zip(result.moves, result.means, strict=True)}
    assert means["switch"] == pytest.approx(2 / 3, abs=0.05)
    assert means["stay"] == pytest.approx(1 / 3, abs=0.05)


@pytest.mark.parametrize("opponent_trees", [False, True])
def test_ismcts_root_statistics_in_krieg(opponent_trees: bool) -> None:
    """Every iteration passes our root once: visits add up to the iterations, over
    exactly our legal moves (the cells not yet known to be taken)."""
    machine, belief, _ = krieg_after_x_center()
    search = ISMCTS(machine, 0, seed=2, opponent_trees=opponent_trees)
    result = search.search(belief, time.monotonic() + 60, iterations=400)
    assert sorted(machine.move_to_kif(m) for m in result.moves) == sorted(
        f"(mark {m} {n})" for m in (1, 2, 3) for n in (1, 2, 3) if (m, n) != (2, 2))
    assert sum(result.visits) == result.iterations == 400


def test_exact_endgame_switches_in_monty_hall() -> None:
    machine = machine_of("monty_hall", "compiled")
    belief = Belief(machine, 0)
    belief.update("(choose 1)", [])
    belief.update("noop", ["(opened 3)"])
    values = BestResponse(machine, 0, time.monotonic() + 60).move_values(
        belief.probabilities())
    assert {machine.move_to_kif(m): v for m, v in values.items()} == pytest.approx(
        {"switch": 200 / 3, "stay": 100 / 3})


def test_brain_plays_the_solved_kuhn_strategy() -> None:
    """Solved in the start clock, the strategy is looked up by our own history: the
    second player holding the king calls a bet (the equilibrium's pure choice)."""
    machine = machine_of("kuhn_poker", "compiled")
    brain = Gdl2Brain(machine, machine.roles.index("second"), BrainOptions())
    info = brain.metagame(time.monotonic() + 6)
    assert info["exact"]["values"] == pytest.approx([48.6111, 51.3889], abs=0.05)
    brain.observe({"turn": 1, "last_move": "noop", "percepts": ["(your_card king)"]})
    brain.observe({"turn": 2, "last_move": "noop", "percepts": ["(did first bet)"]})
    assert brain.legal() == ["call", "fold"]
    call, fold = brain.strategy.at(brain.role, brain.info_key, ["call", "fold"])
    assert call > 0.99 and fold < 0.01
    move, decision = brain.select(time.monotonic() + 1)
    assert decision["method"] == "exact"


def test_brain_takes_the_joint_move_of_a_gdl_game_master() -> None:
    """A manager speaking only GDL sends the joint move: the belief is then the true state."""
    machine = machine_of("monty_hall", "compiled")
    brain = Gdl2Brain(machine, 0, BrainOptions())
    brain.observe(["(choose 2)", "(hide_car 3)"])
    brain.observe(["noop", "(open_door 1)"])
    assert [machine.state_to_kif(s) for s in brain.belief.weights] == [
        ["(car 3)", "(chosen 2)", "(opened 1)", "(step decide)"]]
    assert brain.info_key == (("(choose 2)", ()), ("noop", ("(opened 1)",)))


# -- the GGP-II messages ----------------------------------------------------------------

def test_gdl2_play_and_stop_messages() -> None:
    first = parse_message("(PLAY kuhn.1 0 NIL NIL)")
    assert first == Play("kuhn.1", {"turn": 0, "last_move": None, "percepts": None})
    later = parse_message("( play kuhn.1 3 ( mark 1 2 ) ( ( placed 1 2 ) (ok) ) )")
    assert later == Play("kuhn.1", {"turn": 3, "last_move": "(mark 1 2)",
                                    "percepts": ["(ok)", "(placed 1 2)"]})
    for none in ("()", "NIL"):  # no percepts: either form
        stop = parse_message(f"(STOP kuhn.1 4 noop {none})")
        assert stop == Stop("kuhn.1", {"turn": 4, "last_move": "noop", "percepts": []})
    assert parse_message("(PLAY kuhn.1 (noop check))") == Play("kuhn.1", ("noop", "check"))
    for bad, match in [("(PLAY kuhn.1 x noop ())", "turn number"),
                       ("(PLAY kuhn.1 1 noop seen)", "percepts"),
                       ("(PLAY kuhn.1 1 noop)", "2 arguments .or 4, GDL-II.")]:
        with pytest.raises(FormatError, match=match):
            parse_message(bad)


# -- matches over both protocols ------------------------------------------------------------

class Master:
    """A scripted GDL-II game master: the true state, a random player in the other
    seats, and exactly what our seat may be told."""

    def __init__(self, name: str, seat: str, seed: int) -> None:
        self.machine = machine_of(name, "compiled")
        self.text = (GDL2 / f"{name}.kif").read_text()
        self.seat = self.machine.roles.index(seat)
        self.rng = random.Random(seed)
        self.state = self.machine.initial_state()
        self.turn = 0
        self.last: str | None = None
        self.percepts: list[str] | None = None
        self.moves: list[str] = []
        self.faults = 0

    @property
    def over(self) -> bool:
        return self.machine.is_terminal(self.state)

    def observation(self) -> dict:
        return {"turn": self.turn, "last_move": self.last, "percepts": self.percepts}

    def legal(self) -> list[str]:
        return [self.machine.move_to_kif(m)
                for m in self.machine.legal_moves(self.state, self.seat)]

    def step(self, answer: str, strict: bool = True) -> None:
        """Play our seat's ``answer``; not ``strict``, an illegal one is a fault and is
        replaced by a random legal move, which the next message tells as our move."""
        if answer not in self.legal():
            assert not strict, f"illegal move {answer!r} at turn {self.turn}"
            self.faults += 1
            answer = self.rng.choice(self.legal())
        machine = self.machine
        joint = [self.rng.choice(machine.legal_moves(self.state, r))
                 for r in range(len(machine.roles))]
        joint[self.seat] = machine.parse_move(answer, self.seat)
        self.percepts = list(machine.percepts(self.state, joint)[self.seat])
        self.state = machine.next_state(self.state, joint)
        self.last, self.turn = answer, self.turn + 1
        self.moves.append(answer)


def ii_fields(master: Master) -> str:
    if master.percepts is None:
        return f"{master.turn} NIL NIL"
    return f"{master.turn} {master.last} ({' '.join(master.percepts)})"


MATCHES = [("monty_hall", "contestant"), ("kuhn_poker", "first"), ("kuhn_poker", "second"),
           ("krieg_tictactoe", "xplayer"), ("krieg_tictactoe", "oplayer")]


async def http_match(master: Master, gamer: Gamer, strict: bool = True,
                     playclock: float = 0.6) -> GgpPlayer:
    """One match of ``master``'s game over GGP-II messages, our seat played by ``gamer``."""
    player = GgpPlayer("ours", gamer, margin=0.2)
    role = master.machine.roles[master.seat]
    start = f"(START m1 {role} ({master.text}) 5 {playclock})"
    assert await player.respond(parse_message(start), time.monotonic()) == "ready"
    while not master.over:
        message = parse_message(f"(PLAY m1 {ii_fields(master)})")
        master.step(await player.respond(message, time.monotonic()), strict)
    stop = parse_message(f"(STOP m1 {ii_fields(master)})")
    assert await player.respond(stop, time.monotonic()) == "done"
    return player


@pytest.mark.slow
@pytest.mark.parametrize(("game", "seat"), MATCHES)
async def test_agent_plays_gdl2_over_ggp_http(game: str, seat: str) -> None:
    master = Master(game, seat, seed=len(seat))
    gamer = Gamer(BrainOptions(seed=1))
    try:
        player = await http_match(master, gamer)
    finally:
        gamer.close()
    assert player.results["m1"] is not None  # the belief ended in terminal states
    # every move was legal (Master.step); on a loaded machine one may be a fallback
    assert [d for d in gamer.decisions if d["method"] != "fallback"]


@pytest.mark.slow
@pytest.mark.parametrize(("game", "seat"), MATCHES[::2])
async def test_agent_plays_gdl2_over_websocket(game: str, seat: str) -> None:
    master = Master(game, seat, seed=7)
    gamer = Gamer(BrainOptions(seed=2))
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    agent = WsAgent(gamer, send, margin=0.2)
    try:
        await agent.handle({"type": "offer", "match": "w1", "role": seat,
                            "roles": list(master.machine.roles), "startclock": 5,
                            "playclock": 0.6, "game": {"format": "gdl", "name": game,
                                                       "text": master.text}},
                           time.monotonic())
        assert sent[-1] == {"type": "ready", "match": "w1"}
        step = 0
        while not master.over:
            step += 1
            await agent.handle({"type": "request", "match": "w1", "step": step, "role": seat,
                                "observation": master.observation(), "legal": master.legal(),
                                "deadline": 0.6}, time.monotonic())
            assert sent[-1]["step"] == step
            master.step(sent[-1]["move"])
        await agent.handle({"type": "end", "match": "w1", "status": "completed",
                            "payoffs": list(master.machine.goals(master.state)),
                            "payoff": 0, "observation": master.observation()},
                           time.monotonic())
    finally:
        gamer.close()
    assert agent.results["w1"]["status"] == "completed"
    # every move was legal (Master.step); on a loaded machine one may be a fallback
    assert [d for d in gamer.decisions if d["method"] != "fallback"]


@pytest.mark.slow
async def test_a_crashed_worker_is_replaced_and_replays_the_percepts() -> None:
    """The worker dies in step 2: a fallback move, then a new worker replays the GDL-II
    observations so far and the later steps are chosen from the belief again. (A cold
    worker may miss the next clock: its fallback, from the last legal list known, can
    be illegal over GGP HTTP; the master then plays a legal move for us and says so.)"""
    master = Master("krieg_tictactoe", "xplayer", seed=5)
    gamer = Gamer(BrainOptions(seed=3), crash_at_step=2)
    try:
        await http_match(master, gamer, strict=False, playclock=2.0)
    finally:
        gamer.close()
    methods = [d["method"] for d in gamer.decisions]
    assert methods[1] == "fallback"
    # answered by the new worker, its belief replayed (noop steps are "forced" answers)
    assert {"ismcts", "endgame", "forced"} & set(methods[2:])
    assert not [d for d in gamer.decisions if "agrees" in d.get("reason", "")]
