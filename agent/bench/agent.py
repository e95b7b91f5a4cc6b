"""``ggp bench agent``: the agent's move selection against a baseline, in one process.

For tuning and for quick strength figures without sockets: the agent's GDL brain
(:class:`agent.brains.gdl.GdlBrain`, exactly what the worker process runs) plays
``--matches`` matches against ``random`` or ``uct`` (plain UCT / decoupled UCT, as
the server's built-in ``uct``: :class:`solvers.search.MCTS` with default settings,
most-visited move, tree kept between moves), alternating seats. Every player gets
the full play clock for each of its moves (they think one after the other, so
neither steals the other's CPU). Prints the agent's mean score (goals 0..100) and
its share of the points.

``--ceiling`` seats, instead of the agent, a clairvoyant player of a two-player game
solved exactly (:func:`solvers.search.solve_exact`): it is told the opponent's move
before choosing and takes the move with the best exact value against it. What it
scores is how much the opponent's mistakes are worth to a one-step best response:
against an opponent that never errs it is the game's value, and no agent that does
not read the opponent's mind can expect more from those mistakes.

``--suite`` (issue 18) plays plain ``uct`` at equal clocks on many corpus games,
resumable, with ``--ablation``; ``--rates`` compares playouts per second
(:mod:`agent.bench.suite`).

    ggp bench agent GAME.kif --opponent uct --matches 10 --playclock 1
    ggp bench agent ticTicToe.kif --opponent uct --ceiling --matches 30
    ggp bench agent --suite --results strength.jsonl --resume
    ggp bench agent --rates --games connectFour,breakthrough
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence
from pathlib import Path

from agent.bench.suite import (
    PLAIN,
    SUITE,
    Config,
    ablation_configs,
    fixed_name,
    print_rates,
    print_summary,
    read_results,
    run_suite,
)
from agent.brains.gdl import GdlBrain
from agent.brains.options import BrainOptions, GameSpec
from agent.search.mcts import SIMULTANEOUS, parse_enhancements
from gdl.reasoning.machine import load_machine
from solvers.errors import GameError
from solvers.files import read_text
from solvers.locations import CORPUS
from solvers.results_file import add_results_arguments
from solvers.search import MCTS, SearchConfig, solve_exact


class _Baseline:
    """``random`` or ``uct`` seated at ``role`` of ``machine``."""

    def __init__(self, kind: str, machine, role: int, seed: int,
                 playouts: int | None = None) -> None:
        self.kind, self.machine, self.role, self.playouts = kind, machine, role, playouts
        self.rng = random.Random(seed)
        chance = tuple(i for i, r in enumerate(machine.roles) if r == "random")
        self.search = MCTS(machine, SearchConfig(seed=seed), chance_roles=chance)

    def move(self, state, until: float):
        legal = self.machine.legal_moves(state, self.role)
        if self.kind == "random" or len(legal) == 1:
            return self.rng.choice(legal)
        if self.playouts:
            return self.search.search(state, playouts=self.playouts).best_move(self.role)
        return self.search.search(state, deadline=until).best_move(self.role)


class _Clairvoyant:
    """Seat ``role`` of a solved two-player game, told the other's move (``--ceiling``)."""

    def __init__(self, machine, role: int, seed: int, exact: dict) -> None:
        self.machine, self.role, self.exact = machine, role, exact
        self.rng = random.Random(seed)
        self.decisions = self.exploited = 0  # the opponent's choices, and its mistakes

    def value(self, state) -> float:
        known = self.exact.get(state)
        return float(self.machine.goals(state)[self.role] if known is None else known[self.role])

    def move(self, state, other: int, their_move):
        """The move with the best exact value against ``their_move`` (ties: at random)."""
        machine = self.machine

        def child(mine):
            joint = [mine if r == self.role else their_move for r in (0, 1)]
            return machine.next_state(state, joint)

        values = {m: self.value(child(m)) for m in machine.legal_moves(state, self.role)}
        best = max(values.values())
        if len(machine.legal_moves(state, other)) > 1:
            self.decisions += 1
            self.exploited += best > self.value(state) + 1e-6
        return self.rng.choice([m for m, v in values.items() if v >= best - 1e-6])


def play_match(text: str, machine, ours: int, opponent: str, seed: int, startclock: float,
               playclock: float, options: BrainOptions,
               clairvoyant: dict | None = None, opponent_playouts: int | None = None,
               ) -> tuple[list[int], _Clairvoyant | None]:
    """One match on ``machine`` (the game of ``text``; the agent builds its own): the
    goal values, and the clairvoyant seat when ``clairvoyant`` (the exact table of the
    solved game on that machine's states) replaces the agent."""
    others = {r: _Baseline(opponent, machine, r, seed * 31 + r, opponent_playouts)
              for r in range(len(machine.roles)) if r != ours}
    seer, brain = None, None
    if clairvoyant is not None:
        seer = _Clairvoyant(machine, ours, seed, clairvoyant)
    else:
        brain = GdlBrain(GameSpec("gdl", text), machine.roles[ours], options)
        brain.metagame(time.monotonic() + startclock)
    state, previous = machine.initial_state(), None
    while not machine.is_terminal(state):
        joint = {r: other.move(state, time.monotonic() + playclock)
                 for r, other in others.items()}
        if seer is not None:
            joint[ours] = seer.move(state, 1 - ours, joint[1 - ours])
        else:
            brain.advance(previous)
            kif, _ = brain.select(time.monotonic() + playclock)
            joint[ours] = machine.parse_move(kif, ours)
        moves = [joint[r] for r in range(len(machine.roles))]
        previous = [machine.move_to_kif(m) for m in moves]
        state = machine.next_state(state, moves)
    return list(machine.goals(state)), seer


def solved_table(machine) -> dict:
    """Every state's exact value (``--ceiling``); GameError when the game has none."""
    if len(machine.roles) != 2:
        raise GameError("--ceiling needs a two-player game")
    table: dict = {}
    state = machine.initial_state()
    table[state] = solve_exact(machine, state, node_budget=2_000_000, table=table).exact.value
    return table


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ggp bench agent", description="The agent's "
                                     "move selection against a baseline, in one process.")
    parser.add_argument("game", nargs="?", help="GDL game file (not with --suite, --rates)")
    parser.add_argument("--suite", action="store_true",
                        help="play plain uct on the corpus games of --games, both seats, "
                        "at equal clocks (defaults: start 5 s, play 1 s, 6 matches a game)")
    parser.add_argument("--ablation", action="store_true",
                        help="with --suite: then each default enhancement off in turn, "
                        "and the optional ones on")
    parser.add_argument("--configs", metavar="LIST",
                        help="with --suite: agent configurations separated by ';', each "
                        "an --enhancements list with an optional @duct|@rm|@exp3, then "
                        "optional settings ,c=C (exploration) ,s=C (exploration at simultaneous "
                        "nodes) ,t=T (MAST temperature): "
                        "'default;default@duct,c=0.4'; with --playouts, 'uct' seats plain "
                        "uct instead of the agent")
    parser.add_argument("--rates", action="store_true",
                        help="playouts per CPU second of uct and of the agent's search "
                        "(with --enhancements, and with those and batch)")
    parser.add_argument("--games", metavar="LIST",
                        help="comma-separated corpus game names or .kif paths (default: "
                        "the suite's 16 two-player games)")
    parser.add_argument("--corpus", default=str(CORPUS), metavar="DIR",
                        help="folder of the corpus games (default ../shared/gdl-corpus/repository)")
    add_results_arguments(parser, "agent-strength.jsonl", when="--suite")
    parser.add_argument("--enhancements", default="default", metavar="LIST",
                        help="the agent's search enhancements (see ggp agent --help)")
    parser.add_argument("--opponent", choices=("random", "uct"), default="random",
                        help="the baseline player (default random)")
    parser.add_argument("--matches", type=int, default=None,
                        help="matches per game, roles alternating (default 10; --suite 6)")
    parser.add_argument("--startclock", type=float, default=None,
                        help="seconds to get ready (default 2; --suite 5)")
    parser.add_argument("--playclock", type=float, default=1.0,
                        help="seconds per move (default 1)")
    parser.add_argument("--simultaneous", choices=SIMULTANEOUS, default="duct",
                        help="the agent's search at simultaneous moves (default duct)")
    parser.add_argument("--mast", type=float, default=BrainOptions.mast_epsilon,
                        help="MAST epsilon of the agent's playouts (0: uniform)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every random choice")
    parser.add_argument("--playouts", type=int, default=None, metavar="N",
                        help="with --suite: both sides search N playouts a move, no clocks "
                        "(search quality, whatever the load; recorded as CONFIG/pN)")
    parser.add_argument("--opponent-playouts", type=int, default=None, metavar="N",
                        help="uct searches N playouts a move instead of the play clock "
                        "(with --suite --playouts: instead of --playouts; recorded as "
                        "CONFIG/pP/oN)")
    parser.add_argument("--ceiling", action="store_true",
                        help="seat a clairvoyant player of the solved game instead of the agent")
    return parser


def main(argv: Sequence[str]) -> int:
    parser = _parser()
    args = parser.parse_args(list(argv))
    try:
        enhancements = parse_enhancements(args.enhancements)
    except ValueError as exc:
        parser.error(f"--enhancements: {exc}")
    if args.suite or args.rates:
        return _suite(parser, args)
    if args.game is None:
        parser.error("give a GAME file, --suite or --rates")
    matches = 10 if args.matches is None else args.matches
    startclock = 2.0 if args.startclock is None else args.startclock
    if args.opponent_playouts is not None and args.opponent_playouts < 1:
        parser.error("--opponent-playouts must be at least 1")
    text = read_text(args.game)
    machine = load_machine(text)
    roles = len(machine.roles)
    table = solved_table(machine) if args.ceiling else None
    scores, shares, decisions, exploited = [], [], 0, 0
    for i in range(matches):
        ours = i % roles
        options = BrainOptions(simultaneous=args.simultaneous, seed=args.seed + i,
                               mast_epsilon=args.mast, enhancements=enhancements)
        goals, seer = play_match(text, machine, ours, args.opponent, args.seed + i,
                                 startclock, args.playclock, options, clairvoyant=table,
                                 opponent_playouts=args.opponent_playouts)
        if seer is not None:
            decisions, exploited = decisions + seer.decisions, exploited + seer.exploited
        scores.append(goals[ours])
        total = sum(goals)
        shares.append(goals[ours] / total if total else 1.0 / roles)
        print(f"match {i + 1}: seat {ours} goals {goals}", flush=True)
    mean = sum(scores) / len(scores)
    who = "clairvoyant" if args.ceiling else "agent"
    print(f"{who} vs {args.opponent}: mean score {mean:.1f}, share of points "
          f"{100 * sum(shares) / len(shares):.1f}% over {len(scores)} matches")
    if args.ceiling:
        print(f"the opponent chose {decisions} times; {exploited} of its choices lost "
              "value against the best reply")
    return 0


def _suite(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    games = [g for g in (args.games or ",".join(SUITE)).split(",") if g]
    corpus = Path(args.corpus)
    if args.rates:
        return print_rates(games, corpus, args.playclock, parse_enhancements(args.enhancements))
    if args.ablation and args.configs:
        parser.error("--ablation and --configs exclude each other")
    try:
        if args.configs:
            configs = [Config.of(c.strip()) for c in args.configs.split(";") if c.strip()]
        else:
            configs = (ablation_configs() if args.ablation else
                       [Config.of(f"{args.enhancements}@{args.simultaneous}")])
    except ValueError as exc:
        parser.error(f"--configs: {exc}")
    if args.playouts is not None and args.playouts < 1:
        parser.error("--playouts must be at least 1")
    if args.opponent_playouts is not None and (args.playouts is None
                                               or args.opponent_playouts < 1):
        parser.error("--opponent-playouts with --suite: at least 1, and with --playouts")
    if args.playouts is None and any(c.name == PLAIN for c in configs):
        parser.error("--configs: uct in the agent's seat needs --playouts")
    if args.summary:
        rows = read_results(Path(args.results))
        if not rows:
            raise GameError(f"{args.results}: no match recorded")
        listed = args.configs or args.ablation
        print_summary(rows, [c.name if args.playouts is None else
                             fixed_name(c, args.playouts, args.opponent_playouts)
                             for c in configs] if listed else
                      list(dict.fromkeys(r["config"] for r in rows)),
                      list(dict.fromkeys(r["game"] for r in rows)))
        return 0
    matches = 6 if args.matches is None else args.matches
    if matches < 1:
        parser.error("--matches must be at least 1")
    return run_suite(games, configs, matches, 5.0 if args.startclock is None else args.startclock,
                     args.playclock, Path(args.results), args.resume, corpus, args.seed,
                     args.playouts, args.opponent_playouts)
