"""``ggp bench agent --suite``: the agent against plain ``uct`` on many corpus games.

For issue 18: the agent's brain (:class:`agent.brains.gdl.GdlBrain`) plays the server's
plain ``uct`` (:class:`solvers.search.MCTS`, default settings, tree kept) at equal
clocks: both get the same play clock and, like the players over the network, think
until the deadline minus ``min(0.5, clock / 4)``; the agent alone uses the start
clock (``uct`` has no metagame). Seats alternate, so every game gets both seats.
One match at a time, in this process (the players think one after the other).

Every finished match is appended to the results file as one JSON line (``game``,
``config``, ``match``, ``seat``, ``goals``, ``share``, ``steps``, ``late``,
``slowest`` (the longest answer time / play clock), ``slowest_move`` (the agent's
decision record of that move), ``presolve``, ``mast`` (``mastcost``'s decision)),
flushed at once; ``--resume`` skips the matches the file
already has, so a run of hours survives interruptions. The summary is read back
from the file: per game and configuration the agent's share of the points (%) with
a 95% confidence interval (Student t over the matches), the overall mean, and the
mean over the games not decided by their value (:func:`decided`: solved by the
agent on its start clock or offline, or every match ending alike by seat: there both
players find the forced line and the seat, not the player, decides).

``--ablation`` runs, after the full agent, each default enhancement switched off in
turn (and the optional ones switched on) on the same games and seeds.

``--rates`` measures playouts per second (CPU time) of plain ``uct`` and of the
agent's search, and of playouts alone (single against batched over the bit-vector
engine; batched on numpy, as before the compiled playouts of
:mod:`gdl.reasoning.playout_net`, against batched as it runs now), one game after the
other in one run.
"""

from __future__ import annotations

import gc
import json
import math
import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agent.brains.gdl import GdlBrain
from agent.brains.moves import search_move
from agent.brains.options import BrainOptions, GameSpec
from agent.search.mcts import (
    DEFAULT_ENHANCEMENTS,
    SIMULTANEOUS,
    AgentConfig,
    AgentSearch,
    parse_enhancements,
)
from agent.search.playouts import PlayoutPolicy, make_playouts
from gdl.reasoning import kernels
from gdl.reasoning.machine import load_machine
from solvers.errors import GameError
from solvers.files import read_text
from solvers.results_file import drop_torn_line, read_json_lines
from solvers.search import MCTS, SearchConfig

# Two-player corpus games (../shared/gdl-corpus): turn-based, then simultaneous.
# (Left out: games that do not compile within the grounding limit, quarto and
# chineseCheckers2, or play under 50 uniform playouts a second, dotsAndBoxes, battle.)
# The long ones last, so a run cut short still has both kinds.
SUITE = ("connectFour", "knightThrough", "breakthroughSuicideSmall", "sheepAndWolf",
         "catcha_mouse", "tictactoe_3d_small_2player", "nineBoardTicTacToe",
         "connectFourSimultaneous", "bomberman2p", "chickentictactoe", "doubletictactoe",
         "ticTicToe", "dualConnect4", "ticTacToe", "pentagoSuicide", "point_grab")
ABLATION_EXTRA = ("grave", "cutoff", "decisive", "leaf", "repeat")
# a config's settings after its policy: key -> BrainOptions field
SETTINGS = {"c": "exploration", "s": "simultaneous_exploration", "t": "mast_temperature"}
# the config that seats plain uct in the agent's chair (with --playouts only: uct at
# more playouts against uct measures what speed alone is worth)
PLAIN = "uct"
# A match still running after this many steps is cut off as a draw: dualConnect4 lets
# both roles noop for ever, and the agent and uct did (1,181 steps before it was seen)
MAX_MATCH_STEPS = 400
# Games of the suite solved offline (too big for a start clock's solve): a draw by its
# value is decided as ticTacToe is, and scores above 50 are the opponent's mistakes.
# doubletictactoe: `ggp solve doubletictactoe.kif --solver doab --max-states 15000000`
# (2026-11-25): 7,664,570 states, value 50 / 50, certificate max gain 0; the agent
# drew 47 and won 7 by 75 / 25 (one board) of its 54 matches at a 1 s clock, lost none
SOLVED_OFFLINE = {"doubletictactoe": "a draw by its value (solved offline, 7,664,570 states)"}
BATCH_PLAYOUTS = 512  # playouts at once in --rates' batched playouts alone
# two-sided 95% Student t quantiles by degrees of freedom (beyond: the normal's)
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26,
       10: 2.23, 11: 2.20, 12: 2.18, 15: 2.13, 20: 2.09, 30: 2.04}


@dataclass(frozen=True)
class Config:
    """An agent configuration, ``ENHANCEMENTS-LIST[@duct|rm|exp3[,c=C][,s=C][,t=T]]``, named
    by its explicit list (``default,no-mast`` is recorded as ``batch,solver,reuse,timing@duct``,
    so a later change of the defaults never mixes results); ``c`` is the UCB1
    exploration constant (given, it turns ``explore`` off), ``s`` the one at simultaneous
    nodes and ``t`` MAST's Gibbs temperature, named only when they differ from the
    defaults."""

    name: str

    @classmethod
    def of(cls, text: str) -> Config:
        """ValueError for an unknown enhancement, policy or setting."""
        if text == PLAIN:
            return cls(PLAIN)
        enhancements, _, rest = text.partition("@")
        policy, *settings = rest.split(",") if rest else ["duct"]
        policy = policy or "duct"
        if policy not in SIMULTANEOUS:
            raise ValueError(f"unknown policy {policy!r} (duct, rm or exp3)")
        values = {}
        for item in settings:
            key, _, number = item.partition("=")
            try:
                value = float(number)
            except ValueError:
                value = math.nan
            if key not in SETTINGS or not 0 <= value < math.inf:
                raise ValueError(f"bad setting {item!r} (c=C, s=C or t=T, numbers >= 0)")
            values[key] = value
        named = "".join(f",{k}={values[k]:g}" for k in SETTINGS
                        if k in values and values[k] != getattr(BrainOptions, SETTINGS[k]))
        if "c" in values:   # the constant asked for is the one played: explore would replace it
            enhancements += ",no-explore"
        return cls(",".join(parse_enhancements(enhancements)) + "@" + policy + named)

    def options(self, seed: int) -> BrainOptions:
        if self.name == PLAIN:
            return BrainOptions(seed=seed)
        text, _, rest = self.name.partition("@")
        policy, *settings = rest.split(",")
        values = {SETTINGS[k]: float(v) for k, _, v in (s.partition("=") for s in settings)}
        return BrainOptions(enhancements=parse_enhancements(text or "none"), seed=seed,
                            simultaneous=policy, **values)


def ablation_configs() -> list[Config]:
    return ([Config.of("default")] + [Config.of(f"default,no-{e}") for e in DEFAULT_ENHANCEMENTS]
            + [Config.of(f"default,{e}") for e in ABLATION_EXTRA])


def think_until(received: float, clock: float) -> float:
    """When a player answering by ``received + clock`` stops thinking (the agent's
    and the ``uct`` built-in's margin rule)."""
    return received + clock - min(0.5, clock / 4)


def play_match(text: str, machine, ours: int, seed: int, startclock: float,
               playclock: float, options: BrainOptions) -> dict:
    """One match of the agent (seat ``ours``) against plain ``uct`` seats."""
    chance = tuple(i for i, r in enumerate(machine.roles) if r == "random")
    # as in the agent's worker process: no cyclic collection on a clock (a full pass
    # over a big tree takes long enough to make a move late), the young generations
    # collected between moves (a full pass over the uct player's table took 0.75 s a
    # step on dualConnect4), a full pass after the match
    gc.disable()
    try:
        return _play(text, machine, ours, seed, startclock, playclock, options, chance)
    finally:
        gc.enable()
        gc.collect()


def _play(text: str, machine, ours: int, seed: int, startclock: float,
          playclock: float, options: BrainOptions, chance: tuple[int, ...]) -> dict:
    others = {r: MCTS(machine, SearchConfig(seed=seed * 31 + r), chance_roles=chance)
              for r in range(len(machine.roles)) if r != ours}
    brain = GdlBrain(GameSpec("gdl", text), machine.roles[ours], options,
                     until=time.monotonic() + startclock)
    info = brain.metagame(think_until(time.monotonic(), startclock))
    state, previous, steps, late, slowest = machine.initial_state(), None, 0, 0, 0.0
    slowest_move: dict = {}
    rng = random.Random(seed)
    while not machine.is_terminal(state) and steps < MAX_MATCH_STEPS:
        joint = {}
        for r, search in others.items():
            legal = machine.legal_moves(state, r)
            received = time.monotonic()
            joint[r] = (rng.choice(legal) if len(legal) == 1 or r in chance else search.search(
                state, deadline=think_until(received, playclock)).best_move(r))
        received = time.monotonic()
        brain.advance(previous)
        kif, decision = brain.select(think_until(received, playclock))
        took = time.monotonic() - received
        if took / playclock > slowest:
            slowest, slowest_move = took / playclock, decision
        late += took > playclock
        joint[ours] = machine.parse_move(kif, ours)
        moves = [joint[r] for r in range(len(machine.roles))]
        previous = [machine.move_to_kif(m) for m in moves]
        state = machine.next_state(state, moves)
        steps += 1
        gc.collect(1)
    return {**_outcome(machine, state, ours, steps), "late": late,
            "slowest": round(slowest, 3), "slowest_move": slowest_move,
            "presolve": info.get("presolve", ""), "mast": info.get("mast", "")}


def _outcome(machine, state, ours: int, steps: int) -> dict:
    """A match's goals and the agent's share; a match cut off at ``MAX_MATCH_STEPS``
    has no goals, counts as a draw (0.5) and says so (``unfinished``)."""
    if not machine.is_terminal(state):
        return {"seat": ours, "goals": [], "share": 0.5, "steps": steps,
                "unfinished": f"no terminal state after {steps} steps"}
    goals = list(machine.goals(state))
    total = sum(goals)
    return {"seat": ours, "goals": goals, "share": goals[ours] / total if total else 0.5,
            "steps": steps}


def play_fixed(machine, ours: int, seed: int, config: Config, playouts: int,
               opponent_playouts: int) -> dict:
    """One match at a fixed playout count a move (``--playouts``, and
    ``--opponent-playouts`` for uct): the agent's search (:class:`AgentSearch` with
    the config's options; its move rule as in a match), or plain ``uct`` for the
    ``uct`` config, against plain ``uct``, in this process, no clocks. It measures
    search quality a playout, whatever the machine's load; the switches of the match
    loop around the search (``timing``, ``ponder``, the start clock's solves) do
    nothing."""
    chance = tuple(i for i, r in enumerate(machine.roles) if r == "random")
    options = config.options(seed)
    agent = (None if config.name == PLAIN else
             AgentSearch(machine, options.search_config(), chance_roles=chance))
    plain = (MCTS(machine, SearchConfig(seed=seed * 31 + ours), chance_roles=chance)
             if agent is None else None)
    others = {r: MCTS(machine, SearchConfig(seed=seed * 31 + r), chance_roles=chance)
              for r in range(len(machine.roles)) if r != ours}
    rng = random.Random(seed)
    state, steps = machine.initial_state(), 0
    while not machine.is_terminal(state) and steps < MAX_MATCH_STEPS:
        moves = []
        for r in range(len(machine.roles)):
            legal = machine.legal_moves(state, r)
            if len(legal) == 1 or r in chance:
                moves.append(rng.choice(legal))
            elif r == ours and agent is None:
                moves.append(plain.search(state, playouts=playouts).best_move(r))
            elif r == ours:
                moves.append(search_move(agent.search(state, playouts=playouts), r, chance,
                                         options.simultaneous, agent.config.rm_gamma, rng))
            else:
                moves.append(others[r].search(state, playouts=opponent_playouts).best_move(r))
        state = machine.next_state(state, moves)
        steps += 1
    return {**_outcome(machine, state, ours, steps), "late": 0, "slowest": 0.0,
            "slowest_move": {}, "presolve": "", "playouts": playouts,
            "opponent_playouts": opponent_playouts}


def read_results(path: Path) -> list[dict]:
    """The recorded matches (a torn last line, from a kill mid-write, is skipped)."""
    return read_json_lines(path, ("game", "config", "match", "share"),
                           "a match record of this bench")


def run_suite(games: Sequence[str], configs: Sequence[Config], matches: int,
              startclock: float, playclock: float, results: Path, resume: bool,
              corpus: Path, seed: int, playouts: int | None = None,
              opponent_playouts: int | None = None) -> int:
    """Every config on every game, ``matches`` each; with ``playouts``, at that fixed
    count a move (:func:`play_fixed`; recorded as :func:`fixed_name`, apart from the
    clocked matches), uct at ``opponent_playouts`` (default: the same)."""
    kernels.compiled(kernels.MIN_ITEMS)  # as the agent's idle worker does, off the clock
    done = {(r["game"], r["config"], r["match"]) for r in read_results(results)}
    if done and not resume:
        raise GameError(f"{results} already has {len(done)} matches: --resume to continue "
                        "them, or another --results file")
    paths = {g: _game_path(corpus, g) for g in games}
    drop_torn_line(results)
    total = len(games) * len(configs) * matches
    names = [c.name if playouts is None else fixed_name(c, playouts, opponent_playouts)
             for c in configs]
    # the progress counts this run's matches (the file may hold other configs' too)
    count = sum((g, n, i) in done for g in games for n in names for i in range(matches))
    with results.open("a") as out:
        for config, name in zip(configs, names, strict=True):
            for game in games:
                todo = [i for i in range(matches) if (game, name, i) not in done]
                if not todo:
                    continue
                text = read_text(str(paths[game]))
                machine = load_machine(text)
                if len(machine.roles) != 2:
                    raise GameError(f"{game}: the suite needs two-player games")
                for i in todo:
                    row = (play_match(text, machine, i % 2, seed + i, startclock, playclock,
                                      config.options(seed + i)) if playouts is None else
                           play_fixed(machine, i % 2, seed + i, config, playouts,
                                      opponent_playouts or playouts))
                    row = {"game": game, "config": name, "match": i, **row}
                    out.write(json.dumps(row) + "\n")
                    out.flush()
                    count += 1
                    print(f"[{count}/{total}] {name} {game} match {i + 1}: seat "
                          f"{row['seat']} goals {row['goals']} late {row['late']}", flush=True)
    print_summary(read_results(results), names, games)
    return 0


def fixed_name(config: Config, playouts: int, opponent_playouts: int | None) -> str:
    """A config's record name at fixed playouts: ``CONFIG/pN``, ``CONFIG/pN/oM`` when
    uct searches M."""
    other = "" if opponent_playouts in (None, playouts) else f"/o{opponent_playouts}"
    return f"{config.name}/p{playouts}{other}"


def _game_path(corpus: Path, game: str) -> Path:
    path = Path(game) if game.endswith(".kif") else corpus / f"{game}.kif"
    if not path.is_file():
        raise GameError(f"{path}: no such game file (--corpus DIR names the folder)")
    return path


def interval(shares: Sequence[float]) -> tuple[float, float]:
    """Mean and 95% half-width (Student t) of the shares, in percent."""
    mean = 100 * statistics.fmean(shares)
    if len(shares) < 2:
        return mean, math.inf
    df = len(shares) - 1
    t = T95.get(df) or next((v for k, v in sorted(T95.items()) if k >= df), 1.96)
    return mean, t * 100 * statistics.stdev(shares) / math.sqrt(len(shares))


def decided(rows: Sequence[dict]) -> str:
    """Why the game's value, not the players, decides the game ('' if nothing says
    so): the agent solved it on its start clock, or it was solved offline
    (``SOLVED_OFFLINE``), or every match (at least 4, both seats) ended with the same
    goals by seat: whoever sat there, the seat won (or drew) as the value says, both
    players finding the forced line."""
    if rows and rows[0]["game"] in SOLVED_OFFLINE:
        return SOLVED_OFFLINE[rows[0]["game"]]
    if any("solved:" in r.get("presolve", "") or "baseline: solved" in r.get("presolve", "")
           for r in rows):
        return "solved on the start clock"
    outcomes = {tuple(r["goals"]) for r in rows}
    if (len(rows) >= 4 and len(outcomes) == 1 and len({r["seat"] for r in rows}) > 1
            and all(r["goals"] for r in rows)):
        return f"every match ended {list(outcomes.pop())} by seat"
    return ""


def print_summary(rows: list[dict], configs: Sequence[str], games: Sequence[str]) -> None:
    for config in configs:
        mine = [r for r in rows if r["config"] == config]
        if not mine:
            continue
        print(f"\nconfig {config}: agent's share of the points (%) against uct, 95% CI")
        means, open_means, late = [], [], 0
        for game in games:
            played = [r for r in mine if r["game"] == game]
            if not played:
                continue
            mean, half = interval([r["share"] for r in played])
            why = decided(played)
            late += sum(r["late"] for r in played)
            unfinished = sum("unfinished" in r for r in played)
            cut = f"; {unfinished} cut off at {MAX_MATCH_STEPS} steps, draws" if unfinished else ""
            means.append(mean)
            if not why:
                open_means.append(mean)
            print(f"  {game:28s} {mean:5.1f} ± {half:5.1f}  ({len(played)} matches{cut}"
                  f"{'; decided: ' + why if why else ''})")
        if means:
            undecided = (f"{statistics.fmean(open_means):.1f}% over the {len(open_means)} not "
                         "decided by the value" if open_means else "every game decided by its value")
            print(f"  overall mean {statistics.fmean(means):.1f}% over {len(means)} games; "
                  f"{undecided}; late moves {late}")


def print_rates(games: Sequence[str], corpus: Path, seconds: float,
                enhancements: Sequence[str] = DEFAULT_ENHANCEMENTS) -> int:
    """Playouts per CPU second, one game after the other in one run: the searches
    from the initial state (plain ``uct``; the agent with ``enhancements``, one
    playout at a time; the same with ``batch``; each with the cyclic collector off,
    as in a match), and playouts alone (uniform, from the initial
    state: the engine one at a time, as ``uct`` plays them, against rounds of
    ``BATCH_PLAYOUTS`` over the bit-vector engine)."""
    kernels.compiled(kernels.MIN_ITEMS)
    print(f"playouts per CPU second, about {seconds:g} s each (searches from the initial "
          f"state; playouts alone, uniform, single or {BATCH_PLAYOUTS} at once)")
    for game in games:
        machine = load_machine(read_text(str(_game_path(corpus, game))))
        state = machine.initial_state()
        rates = {}
        single = tuple(e for e in enhancements if e != "batch")
        numpy_search = AgentSearch(machine, AgentConfig(enhancements=(*single, "batch")))
        if hasattr(numpy_search.playouts, "net"):   # batched on numpy (before the compiled playouts)
            numpy_search.playouts.net = None
        for name, search in (
                ("uct", MCTS(machine, SearchConfig())),
                ("agent", AgentSearch(machine, AgentConfig(enhancements=single))),
                ("numpy", numpy_search),
                ("batched", AgentSearch(machine, AgentConfig(enhancements=(*single, "batch"))))):
            search.search(state, playouts=100)   # warm the engine's caches
            gc.disable()   # as in a match (play_match): no cyclic collection on a clock
            try:
                cpu = time.process_time()
                result = search.search(state, deadline=time.monotonic() + seconds)
                rates[name] = result.playouts / max(1e-9, time.process_time() - cpu)
            finally:
                gc.enable()
                gc.collect()
        for name, batched in (("single", False), ("batch numpy", True), ("batch", True)):
            playouts = make_playouts(machine, PlayoutPolicy(), (), random.Random(0), batched)
            if name == "batch numpy" and hasattr(playouts, "net"):
                playouts.net = None
            size = BATCH_PLAYOUTS if batched else 1
            done, cpu, wall = 0, time.process_time(), time.monotonic() + seconds
            while time.monotonic() < wall:
                done += len(playouts.run([state] * size, None) or ())
            rates[name] = done / max(1e-9, time.process_time() - cpu)
        print(f"  {game:24s} {machine.engine_name:8s} search: uct {rates['uct']:6.0f}  agent "
              f"one at a time {rates['agent']:6.0f} ({rates['agent'] / rates['uct']:.2f}x)  "
              f"batched numpy {rates['numpy']:6.0f}  "
              f"batched {rates['batched']:6.0f} ({rates['batched'] / rates['uct']:.2f}x)"
              f"   playouts alone: single {rates['single']:6.0f}  batched numpy "
              f"{rates['batch numpy']:6.0f}  batched {rates['batch']:6.0f}  "
              f"({rates['batch'] / rates['single']:.2f}x single, "
              f"{rates['batch'] / rates['batch numpy']:.2f}x numpy)", flush=True)
    return 0
