"""``ggp bench agent``: the agent's move selection against a baseline, in one process.

For tuning and for quick strength figures without sockets: the agent's GDL brain
(:class:`agent.worker.GdlBrain`, exactly what the worker process runs) plays
``--matches`` matches against ``random`` or ``uct`` (plain UCT / decoupled UCT, as
the server's built-in ``uct``: :class:`solvers.search.MCTS` with default settings,
most-visited move, tree kept between moves), alternating seats. Every player gets
the full play clock for each of its moves (they think one after the other, so
neither steals the other's CPU). Prints the agent's mean score (goals 0..100) and
its share of the points.

    ggp bench agent GAME.kif --opponent uct --matches 10 --playclock 1
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence

from agent.worker import BrainOptions, GameSpec, GdlBrain
from solvers.files import read_text


class _Baseline:
    """``random`` or ``uct`` seated at ``role`` of ``machine``."""

    def __init__(self, kind: str, machine, role: int, seed: int) -> None:
        from solvers.search import MCTS, SearchConfig

        self.kind, self.machine, self.role = kind, machine, role
        self.rng = random.Random(seed)
        chance = tuple(i for i, r in enumerate(machine.roles) if r == "random")
        self.search = MCTS(machine, SearchConfig(seed=seed), chance_roles=chance)

    def move(self, state, until: float):
        legal = self.machine.legal_moves(state, self.role)
        if self.kind == "random" or len(legal) == 1:
            return self.rng.choice(legal)
        return self.search.search(state, deadline=until).best_move(self.role)


def play_match(text: str, ours: int, opponent: str, seed: int, start_clock: float,
               play_clock: float, options: BrainOptions) -> list[int]:
    """One match; the goal values."""
    from gdl.machine import load_machine

    machine = load_machine(text)
    role_name = machine.roles[ours]
    brain = GdlBrain(GameSpec("gdl", text), role_name, options)
    others = {r: _Baseline(opponent, machine, r, seed * 31 + r)
              for r in range(len(machine.roles)) if r != ours}
    brain.metagame(time.monotonic() + start_clock)
    state, previous = machine.initial_state(), None
    while not machine.is_terminal(state):
        brain.advance(previous)
        kif, _ = brain.select(time.monotonic() + play_clock)
        joint = []
        for r in range(len(machine.roles)):
            if r == ours:
                joint.append(machine.parse_move(kif, r))
            else:
                joint.append(others[r].move(state, time.monotonic() + play_clock))
        previous = [machine.move_to_kif(m) for m in joint]
        state = machine.next_state(state, joint)
    return list(machine.goals(state))


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="ggp bench agent", description=__doc__.split("\n")[0])
    parser.add_argument("game", help="GDL game file")
    parser.add_argument("--opponent", choices=("random", "uct"), default="random")
    parser.add_argument("--matches", type=int, default=10)
    parser.add_argument("--startclock", type=float, default=2.0)
    parser.add_argument("--playclock", type=float, default=1.0)
    parser.add_argument("--simultaneous", choices=("duct", "rm"), default="duct")
    parser.add_argument("--mast", type=float, default=BrainOptions.mast_epsilon,
                        help="MAST epsilon of the agent's playouts (0: uniform)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(list(argv))
    text = read_text(args.game)
    from gdl.machine import load_machine

    roles = len(load_machine(text).roles)
    scores, shares = [], []
    for i in range(args.matches):
        ours = i % roles
        options = BrainOptions(simultaneous=args.simultaneous, seed=args.seed + i,
                               mast_epsilon=args.mast)
        goals = play_match(text, ours, args.opponent, args.seed + i, args.startclock,
                           args.playclock, options)
        scores.append(goals[ours])
        total = sum(goals)
        shares.append(goals[ours] / total if total else 1.0 / roles)
        print(f"match {i + 1}: seat {ours} goals {goals}", flush=True)
    mean = sum(scores) / len(scores)
    print(f"agent vs {args.opponent}: mean score {mean:.1f}, share of points "
          f"{100 * sum(shares) / len(shares):.1f}% over {len(scores)} matches")
    return 0
