"""ggp bench gdl2: the agent's strength in GDL-II games, in one process.

The agent's GDL-II brain (:class:`agent.brains.gdl2.Gdl2Brain`, what the worker
process runs) is told only what a GDL-II game master tells it: its own move and its
percepts.

* ``random`` part: ``--matches`` matches of each game against a uniformly random
  player, alternating seats (default Krieg tic-tac-toe); the agent's share of the
  points (goals add up to 100 in these games).
* ``kuhn`` part: the agent's strategy on Kuhn poker (``games/gdl2/kuhn_poker.kif``,
  solved within ``--startclock`` as in a match) against the equilibrium (the
  sequence-form LP of the same expanded game): the exact expected chips per hand in
  each seat (chips = (goal - 50) / 25) beside the game value, then ``--hands`` hands
  played by the brain against the equilibrium drawn at random, mean chips with a 95%
  confidence interval.

    ggp bench gdl2 --part random --matches 40 --playclock 0.5
    ggp bench gdl2 --part kuhn --hands 2000
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agent.brains.gdl2 import Gdl2Brain
from agent.brains.options import BrainOptions
from gdl.gdl2.solve import solve_gdl2
from gdl.reasoning.machine import StateMachine, load_machine
from solvers.extensive.exploitability import nash_conv
from solvers.locations import GAMES

GDL2_GAMES = GAMES / "gdl2"


def _observation(turn: int, move: str, seen: Sequence[str]) -> dict[str, Any]:
    return {"turn": turn, "last_move": move, "percepts": list(seen)}


def play_against(machine: StateMachine, brain: Gdl2Brain, opponent, rng: random.Random,
                 playclock: float) -> tuple[int, ...]:
    """One match: ``brain`` in its seat, ``opponent(state, role, rng)`` choosing the
    other roles' moves (``random`` included); the final goals."""
    state, observation, turn = machine.initial_state(), None, 0
    while not machine.is_terminal(state):
        brain.observe(observation, time.monotonic() + playclock)
        kif, _ = brain.select(time.monotonic() + playclock)
        joint = [opponent(state, r, rng) for r in range(len(machine.roles))]
        joint[brain.role] = machine.parse_move(kif, brain.role)
        seen = machine.percepts(state, joint)[brain.role]
        state, turn = machine.next_state(state, joint), turn + 1
        observation = _observation(turn, kif, seen)
    return machine.goals(state)


def uniform(machine: StateMachine):
    return lambda state, role, rng: rng.choice(machine.legal_moves(state, role))


def against_random(path: Path, matches: int, playclock: float, startclock: float,
                   seed: int) -> dict[str, Any]:
    machine = load_machine(path)
    players = [r for r, name in enumerate(machine.roles) if name != "random"]
    rng = random.Random(seed)
    scores: dict[str, list[int]] = {machine.roles[r]: [] for r in players}
    for k in range(matches):
        seat = players[k % len(players)]
        brain = Gdl2Brain(machine, seat, BrainOptions(seed=seed + k))
        brain.metagame(time.monotonic() + startclock)
        goals = play_against(machine, brain, uniform(machine), rng, playclock)
        scores[machine.roles[seat]].append(goals[seat])
    every = [g for s in scores.values() for g in s]
    return {"game": path.stem, "matches": matches,
            "by_seat": {r: round(statistics.fmean(s), 2) for r, s in scores.items() if s},
            "share": round(statistics.fmean(every), 2)}


def _seat_profile(game, sigma: np.ndarray, player: int, ours: np.ndarray) -> np.ndarray:
    """``sigma`` with ``player``'s actions taken from ``ours``."""
    mixed = sigma.copy()
    for i in np.flatnonzero(game.infoset_player == player):
        lo, hi = int(game.infoset_action_start[i]), int(game.infoset_action_start[i + 1])
        mixed[lo:hi] = ours[lo:hi]
    return mixed


def kuhn(hands: int, startclock: float, seed: int) -> dict[str, Any]:
    machine = load_machine(GDL2_GAMES / "kuhn_poker.kif")
    equilibrium = solve_gdl2(machine, solver="lp")
    game = equilibrium.game
    value = [(v - 50) / 25 for v in equilibrium.result.values]
    # the agent's strategy: what its start clock gives it, as in a match
    brain = Gdl2Brain(machine, 0, BrainOptions(seed=seed))
    info = brain.metagame(time.monotonic() + startclock)
    if brain.strategy is None:
        return {"error": f"the agent did not solve Kuhn poker: {info.get('exact')}"}
    ours = np.array([brain.strategy.solution.policy[name][action]
                     for name, actions in zip(game.infoset_names, game.infoset_actions,
                                              strict=True) for action in actions])
    exact = []
    for p in range(2):
        mixed = _seat_profile(game, equilibrium.result.strategy, p, ours)
        exact.append((nash_conv(game, mixed).values[p] - 50) / 25)
    # sampled hands: the brain (drawing from its strategy) against the LP equilibrium
    rng = random.Random(seed)
    names = machine.roles

    def opponent_for(seat: int):
        histories: dict[int, list] = {}

        def choose(state, role: int, rng: random.Random):
            legal = machine.legal_moves(state, role)
            at = equilibrium.move_probabilities(names[role], histories.get(role, ()))
            if role == seat or at is None:  # (ours is replaced; random and forced moves)
                return rng.choice(legal)
            kifs = [machine.move_to_kif(m) for m in legal]
            return legal[rng.choices(range(len(legal)), [at[k] for k in kifs])[0]]

        return choose, histories

    chips: list[float] = []
    for k in range(hands):
        seat = k % 2
        hand = Gdl2Brain(machine, seat, BrainOptions(seed=seed + k))
        hand.strategy = brain.strategy
        chips.append((_hand(machine, hand, opponent_for, rng) - 50) / 25 - value[seat])
    mean = statistics.fmean(chips)
    half = 1.96 * statistics.stdev(chips) / math.sqrt(len(chips))
    return {"value_chips": [round(v, 4) for v in value], "agent_solve": info.get("exact"),
            "exact_chips": [round(v, 4) for v in exact],
            "exact_gap": round(max(abs(e - v) for e, v in zip(exact, value, strict=True)), 4),
            "hands": hands, "sampled_gap": round(mean, 4), "ci95": round(half, 4)}


def _hand(machine: StateMachine, brain: Gdl2Brain, opponent_for, rng: random.Random) -> int:
    """One Kuhn hand; the opponent's strategy looked up by its own history."""
    choose, histories = opponent_for(brain.role)
    state, observation, turn = machine.initial_state(), None, 0
    while not machine.is_terminal(state):
        brain.observe(observation)
        kif, _ = brain.select(time.monotonic() + 1.0)
        joint = [choose(state, r, rng) for r in range(len(machine.roles))]
        joint[brain.role] = machine.parse_move(kif, brain.role)
        seen = machine.percepts(state, joint)
        for r in range(len(machine.roles)):
            histories.setdefault(r, []).append((machine.move_to_kif(joint[r]), seen[r]))
        state, turn = machine.next_state(state, joint), turn + 1
        observation = _observation(turn, kif, seen[brain.role])
    return machine.goals(state)[brain.role]


OPTIONS = (  # flag, type, default, help
    ("--matches", int, 40, "matches per game against random, seats alternating"),
    ("--playclock", float, 0.5, "seconds the agent thinks per move"),
    ("--startclock", float, 4.0, "seconds of start clock, where small games are solved"),
    ("--hands", int, 2000, "Kuhn poker hands sampled against the equilibrium"),
    ("--seed", int, 0, "random seed"),
)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ggp bench gdl2", description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=["random", "kuhn", "all"], default="all",
                        help="which figures to measure (default all)")
    parser.add_argument("games", nargs="*", default=[str(GDL2_GAMES / "krieg_tictactoe.kif")],
                        help="GDL-II games for the random part (default Krieg tic-tac-toe)")
    for flag, kind, default, text in OPTIONS:
        parser.add_argument(flag, type=kind, default=default, help=f"{text} (default {default})")
    args = parser.parse_args(argv)
    if args.matches < 1 or args.hands < 2 or args.playclock <= 0 or args.startclock <= 0:
        parser.error("--matches >= 1, --hands >= 2 and positive clocks are needed")
    print("timings on a machine shared with other work: clocks are wall time")
    if args.part in ("random", "all"):
        for game in args.games:
            row = against_random(Path(game), args.matches, args.playclock, args.startclock,
                                 args.seed)
            print(f"{row['game']}: agent vs random, {row['matches']} matches, "
                  f"{args.playclock:g} s a move: {row['share']}% of the points "
                  f"(by seat {row['by_seat']})")
    if args.part in ("kuhn", "all"):
        row = kuhn(args.hands, args.startclock, args.seed)
        if "error" in row:
            print(row["error"])
            return 1
        print(f"kuhn_poker: game value {row['value_chips']} chips per hand (first, second); "
              f"agent's solve: {row['agent_solve']}")
        print(f"  exact expectation against the LP equilibrium: {row['exact_chips']} chips, "
              f"largest gap {row['exact_gap']} chips per hand")
        print(f"  {row['hands']} sampled hands: agent minus value {row['sampled_gap']:+} "
              f"chips per hand (95% CI +-{row['ci95']})")
    return 0
