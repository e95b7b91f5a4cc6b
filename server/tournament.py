"""Round-robin tournaments: every seating of the entrants, concurrent matches, standings.

Algorithm:

1. Schedule: for each game with R roles and each round, every R-subset of the P
   entrants in the order given (``--swap-roles``: every ordered R-tuple, so each
   entrant plays each role against each opponent set). A game with more roles than
   entrants needs a filler (``--fill SPEC``, e.g. ``random``): every entrant plays in
   each match, for every set of seats the entrants take in their order (every
   ordered one with ``--swap-roles``), and the filler takes the seats left. Match ``i`` gets the seed
   ``hash(tournament seed, i)``.
2. Run the matches on one server (a :class:`MatchRunner`), at most ``concurrency`` at a
   time, each with its :class:`~server.match.MatchOptions` (the tournament's clocks,
   the match's seed, the tournament's id); a progress bar goes to stderr. (On a Ray cluster,
   :mod:`server.ray_tournament` runs the same plan's matches as tasks through
   :func:`run_planned`.)
3. Standings per entrant, per game and overall: the mean payoff with a 95%
   confidence interval (Student's t over the matches: ``t(0.975, n-1) * s / sqrt(n)``),
   and wins/draws/losses (a win: strictly the highest payoff of the match; a draw:
   tied for the highest; otherwise a loss). Aborted matches are counted apart and
   score nothing. The overall row first scales each game's payoffs to [0, 1] by the
   game's payoff range (:mod:`server.payoff_range`, saved with the tournament's
   configuration), so games with different units average fairly; per-game rows keep
   the game's own payoffs.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import random
import secrets
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TextIO

from server.match import PLAYCLOCK, STARTCLOCK, MatchOptions, MatchOutcome
from server.payoff_range import GDL_RANGE, PayoffRange, observed_range, payoff_range
from server.records import Records
from solvers.errors import GameError
from solvers.playable import PlayableGame
from solvers.report import player_keys


def ci95_half(values: Sequence[float], bounds: tuple[float, float] | None = None
              ) -> float | None:
    """Half-width of the 95% Student t interval of the mean; None (undefined) below 2
    values, or when the interval covers the whole of ``bounds`` (with a few matches it
    can be many times wider than the payoffs' range: it then says nothing)."""
    n = len(values)
    if n < 2:
        return None
    # (deferred: scipy.stats takes half a second to import, the server's pages and
    # commands need it only for a table)
    from scipy import stats

    mean = sum(values) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in values) / (n - 1))
    half = float(stats.t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
    if bounds is not None and bounds[0] < bounds[1] \
            and mean - half <= bounds[0] and mean + half >= bounds[1]:
        return None
    return half


@dataclass(frozen=True)
class Pairing:
    game: PlayableGame
    entrants: tuple[int, ...]  # entrant index per role
    round: int
    seed: int


@dataclass
class Standing:
    entrant: str
    game: str  # a game name or "overall"
    scores: list[float] = field(default_factory=list)
    wins: int = 0
    draws: int = 0
    losses: int = 0
    aborted: int = 0
    bounds: tuple[float, float] | None = None  # the payoffs' range (overall: 0 to 1)

    @property
    def mean(self) -> float | None:
        return sum(self.scores) / len(self.scores) if self.scores else None

    @property
    def ci95(self) -> float | None:
        """:func:`ci95_half` of the scores within the payoffs' range."""
        return ci95_half(self.scores, self.bounds)

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95% confidence interval of the mean, clipped to the payoff range."""
        half, mean = self.ci95, self.mean
        if half is None or mean is None:
            return None
        low, high = mean - half, mean + half
        if self.bounds is not None:
            low, high = max(low, self.bounds[0]), min(high, self.bounds[1])
        return low, high

    def to_json(self) -> dict[str, Any]:
        return {"player": self.entrant, "game": self.game, "matches": len(self.scores),
                "mean": self.mean, "ci95": self.ci95, "wins": self.wins, "draws": self.draws,
                "losses": self.losses, "aborted": self.aborted,
                "ci95_low": interval[0] if (interval := self.interval) else None,
                "ci95_high": interval[1] if interval else None}


def entrant_names(players: Sequence[str]) -> list[str]:
    """Unique names for the entrants (``random``, ``random#2`` when a spec repeats)."""
    return player_keys(players)


def schedule(games: Sequence[PlayableGame], n_players: int, rounds: int, swap_roles: bool,
             seed: int, fill: bool = False) -> list[Pairing]:
    """The matches (module docstring, step 1); with ``fill``, entrant ``n_players`` is
    the filler."""
    pairings = []
    index = 0
    choose = itertools.permutations if swap_roles else itertools.combinations
    for game in games:
        n_roles = len(game.roles)
        if n_players >= n_roles:
            seatings = list(choose(range(n_players), n_roles))
        elif not fill:
            raise GameError(f"{game.name} has {n_roles} roles; a tournament needs at least "
                            f"{n_roles} players (got {n_players}) or --fill")
        else:
            seatings = [_filled(seats, n_roles, n_players)
                        for seats in choose(range(n_roles), n_players)]
        for seating in seatings:
            for r in range(rounds):
                pairings.append(Pairing(game, tuple(seating), r,
                                        random.Random(f"{seed}:{index}").randrange(1 << 31)))
                index += 1
    return pairings


def _filled(seats: Sequence[int], n_roles: int, fill: int) -> tuple[int, ...]:
    """Entrant ``i`` at role ``seats[i]``, the filler everywhere else."""
    seating = [fill] * n_roles
    for entrant, role in enumerate(seats):
        seating[role] = entrant
    return tuple(seating)


def game_ranges(pairings: Sequence[Pairing], outcomes: Sequence[MatchOutcome],
                known: Mapping[str, PayoffRange] | None = None) -> dict[str, PayoffRange]:
    """Each game's payoff range: ``known``, else the game's own
    (:func:`~server.payoff_range.payoff_range`), else the range its completed matches
    show."""
    ranges = dict(known or {})
    seen: dict[str, list[list[float]]] = {}
    for pairing, outcome in zip(pairings, outcomes, strict=True):
        name = pairing.game.name
        if name not in ranges and (found := payoff_range(pairing.game)) is not None:
            ranges[name] = found
        if outcome.status == "completed" and outcome.payoffs is not None:
            seen.setdefault(name, []).append(outcome.payoffs)
    for pairing in pairings:
        name = pairing.game.name
        if name not in ranges:
            ranges[name] = observed_range(seen.get(name, []))
    return ranges


def standings(pairings: Sequence[Pairing], outcomes: Sequence[MatchOutcome],
              names: Sequence[str],
              ranges: Mapping[str, PayoffRange] | None = None) -> list[Standing]:
    """The table of step 3; ``ranges`` (by game name) scale the overall row, by
    default :func:`game_ranges`."""
    scale = game_ranges(pairings, outcomes, ranges)
    table: dict[tuple[str, str], Standing] = {}

    def row(entrant: str, game: str) -> Standing:
        entry = table.get((entrant, game))
        if entry is None:
            bounds = (0.0, 1.0) if game == "overall" else (scale[game].low, scale[game].high)
            entry = table[entrant, game] = Standing(entrant, game, bounds=bounds)
        return entry

    for pairing, outcome in zip(pairings, outcomes, strict=True):
        for role, entrant in enumerate(pairing.entrants):
            for game in (pairing.game.name, "overall"):
                entry = row(names[entrant], game)
                if outcome.status != "completed" or outcome.payoffs is None:
                    entry.aborted += 1
                    continue
                payoff = outcome.payoffs[role]
                best = max(outcome.payoffs)
                entry.scores.append(payoff if game != "overall"
                                    else scale[pairing.game.name].scale(payoff))
                if payoff < best:
                    entry.losses += 1
                elif outcome.payoffs.count(best) > 1:
                    entry.draws += 1
                else:
                    entry.wins += 1
    return sorted(table.values(), key=lambda s: (s.game == "overall", s.game,
                                                 -(s.mean if s.mean is not None else -math.inf)))


UNDEFINED = "undef"  # a 95% interval that is undefined, in the standings table


def format_standings(rows: Sequence[Standing]) -> str:
    width = max([len(r.entrant) for r in rows] + [6])
    gwidth = max([len(r.game) for r in rows] + [4])
    lines = [f"{'player'.ljust(width)}  {'game'.ljust(gwidth)}  {'n':>4}  {'mean':>8}  "
             f"{'±95%':>8}  {'W':>4} {'D':>4} {'L':>4}  {'abort':>5}"]
    for r in rows:
        mean = "-" if r.mean is None else f"{r.mean:.2f}"
        # undefined: too few matches for an interval that excludes any payoff
        ci = "-" if r.mean is None else UNDEFINED if r.ci95 is None else f"{r.ci95:.2f}"
        lines.append(f"{r.entrant.ljust(width)}  {r.game.ljust(gwidth)}  {len(r.scores):>4}  "
                     f"{mean:>8}  {ci:>8}  {r.wins:>4} {r.draws:>4} {r.losses:>4}  "
                     f"{r.aborted:>5}")
    return "\n".join(lines)


class ProgressBar:
    """``[#####.....] done/total`` on stderr: redrawn in place on a terminal, else one
    line per tenth of the matches (logs stay short)."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = total
        self.done = 0
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self.live = self.stream.isatty()

    def advance(self, note: str = "") -> None:
        self.done += 1
        tenth = max(1, self.total // 10)
        if not self.live and self.done % tenth and self.done != self.total:
            return
        filled = 30 * self.done // max(1, self.total)
        elapsed = time.monotonic() - self.started
        line = (f"[{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total} matches "
                f"{elapsed:.1f}s {note[:40]}")
        if self.live:
            self.stream.write(f"\r{line:<90}" + ("\n" if self.done == self.total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


@dataclass
class TournamentResult:
    id: str
    names: list[str]
    pairings: list[Pairing]
    outcomes: list[MatchOutcome]
    table: list[Standing]
    seed: int
    ranges: dict[str, PayoffRange] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "tournament": self.id,
            "seed": self.seed,
            "players": self.names,
            "payoff_ranges": {g: r.to_json() for g, r in self.ranges.items()},
            "matches": [{"match": o.match, "game": p.game.name,
                         "players": [self.names[e] for e in p.entrants], "round": p.round,
                         "seed": p.seed, "status": o.status, "payoffs": o.payoffs,
                         "reason": o.reason}
                        for p, o in zip(self.pairings, self.outcomes, strict=True)],
            "standings": [s.to_json() for s in self.table],
        }


@dataclass
class Plan:
    """A tournament before it runs: its id, saved configuration, entrants and schedule."""

    id: str
    config: dict[str, Any]
    entrants: list[str]  # the player specs, the filler last
    names: list[str]
    pairings: list[Pairing]
    seed: int
    ranges: dict[str, PayoffRange]  # the games' payoff ranges known before any match
    clocks: MatchOptions  # every match's clocks (its seed and tournament: match_options)

    def match_options(self, pairing: Pairing) -> MatchOptions:
        """How the match of ``pairing`` is played, wherever it runs."""
        return replace(self.clocks, seed=pairing.seed, tournament=self.id)


def plan_tournament(games: Sequence[PlayableGame], players: Sequence[str], *, rounds: int = 1,
                    swap_roles: bool = False, concurrency: int = 4,
                    startclock: float = STARTCLOCK, playclock: float = PLAYCLOCK,
                    seed: int | None = None, fill: str | None = None) -> Plan:
    """Step 1 of the module docstring, the same wherever the matches then run.

    ``fill``: the player spec of the seats left when a game has more roles than
    ``players``; it is an entrant of its own in the standings."""
    if rounds < 1 or concurrency < 1:
        raise GameError("--rounds and --concurrency must be at least 1")
    seed = secrets.randbelow(1 << 31) if seed is None else seed
    known = {g.name: r for g in games if (r := payoff_range(g)) is not None}
    config = {"games": [g.name for g in games], "players": list(players), "rounds": rounds,
              "swap_roles": swap_roles, "concurrency": concurrency, "startclock": startclock,
              "playclock": playclock, "seed": seed,
              "payoff_ranges": {g: r.to_json() for g, r in known.items()}}
    entrants = list(players)
    if fill is not None:
        config["fill"] = fill
        entrants.append(fill)
    pairings = schedule(games, len(players), rounds, swap_roles, seed, fill is not None)
    tid = f"tournament.{int(time.time() * 1000)}.{secrets.token_hex(2)}"
    return Plan(tid, config, entrants, entrant_names(entrants), pairings, seed, known,
                MatchOptions(startclock, playclock))


async def run_planned(records: Records, plan: Plan,
                      play: Callable[[int, Pairing], Awaitable[MatchOutcome]]) -> TournamentResult:
    """Record the tournament, run every match with ``play(index, pairing)`` (concurrently:
    ``play`` bounds itself), then score and record the standings (step 3); a failure or
    Ctrl-C records the tournament as aborted."""
    await records.begin_tournament(plan.id, plan.config)
    try:
        outcomes = await asyncio.gather(*(play(i, p) for i, p in enumerate(plan.pairings)))
    except BaseException:
        await asyncio.shield(records.finish_tournament(plan.id, "aborted", None))
        raise
    ranges = game_ranges(plan.pairings, outcomes, plan.ranges)
    table = standings(plan.pairings, outcomes, plan.names, ranges)
    await records.finish_tournament(plan.id, "completed", [s.to_json() for s in table])
    return TournamentResult(plan.id, plan.names, plan.pairings, list(outcomes), table,
                            plan.seed, ranges)


class MatchRunner(Protocol):
    """Where a tournament's matches run (:class:`server.app.MatchServer`)."""

    @property
    def records(self) -> Records: ...

    async def run_match(self, game: PlayableGame, player_specs: Sequence[str],
                        options: MatchOptions) -> MatchOutcome: ...


async def run_tournament(server: MatchRunner, games: Sequence[PlayableGame],
                         players: Sequence[str], *, rounds: int = 1, swap_roles: bool = False,
                         concurrency: int = 4, startclock: float = STARTCLOCK,
                         playclock: float = PLAYCLOCK,
                         seed: int | None = None, fill: str | None = None,
                         on_match: Callable[[MatchOutcome], None] | None = None
                         ) -> TournamentResult:
    """Schedule, run and score a round robin on ``server`` (see the module docstring and
    :func:`plan_tournament`)."""
    plan = plan_tournament(games, players, rounds=rounds, swap_roles=swap_roles,
                           concurrency=concurrency, startclock=startclock, playclock=playclock,
                           seed=seed, fill=fill)
    gate = asyncio.Semaphore(concurrency)

    async def play(_: int, pairing: Pairing) -> MatchOutcome:
        async with gate:
            outcome = await server.run_match(
                pairing.game, [plan.entrants[e] for e in pairing.entrants],
                plan.match_options(pairing))
        if on_match is not None:
            on_match(outcome)
        return outcome

    return await run_planned(server.records, plan, play)


@dataclass(frozen=True)
class _RecordedGame:
    """What scheduling needs of a game that is only known from the records."""

    name: str
    roles: tuple[str, ...]


def recorded_pairings(tournament: dict[str, Any], matches: Sequence[dict[str, Any]]
                      ) -> tuple[list[str], list[Pairing], list[dict[str, Any] | None]]:
    """A recorded tournament's entrant names, its schedule rebuilt from the saved
    configuration (games with a recorded match only: the others' roles are unknown) and
    for each pairing its recorded match (found by its seed) or None."""
    config = tournament["config"]
    roles = {m["game"]: tuple(m["roles"]) for m in matches}
    games = [_RecordedGame(name, roles[name]) for name in config["games"] if name in roles]
    fill = config.get("fill")
    entrants = list(config["players"]) + ([fill] if fill is not None else [])
    by_seed = {m["seed"]: m for m in matches}
    pairings = schedule(games, len(config["players"]), config["rounds"],
                        config["swap_roles"], config["seed"], fill is not None)
    return entrant_names(entrants), pairings, [by_seed.get(p.seed) for p in pairings]


def recorded_standings(tournament: dict[str, Any],
                       matches: Sequence[dict[str, Any]]) -> list[Standing]:
    """The standings of a recorded tournament (``Records.get_tournament``) from its
    recorded matches, scored as when it ran (:func:`recorded_pairings`). Matches that
    never started (a tournament stopped early) are left out."""
    return recorded_table(tournament, matches)[0]


def recorded_table(tournament: dict[str, Any], matches: Sequence[dict[str, Any]]
                   ) -> tuple[list[Standing], dict[str, PayoffRange]]:
    """:func:`recorded_standings` and the payoff ranges that scaled its overall row:
    saved with the configuration, else (records written before ranges were saved) a
    GDL game's 0-100 or the range its matches show."""
    names, pairings, recorded = recorded_pairings(tournament, matches)
    played = [(p, m) for p, m in zip(pairings, recorded, strict=True) if m is not None]
    outcomes = [MatchOutcome(m["id"], m["status"], m["payoffs"], m["reason"])
                for _, m in played]
    saved = {g: PayoffRange.from_json(r)
             for g, r in tournament["config"].get("payoff_ranges", {}).items()}
    for m in matches:
        if m["format"] == "gdl":
            saved.setdefault(m["game"], GDL_RANGE)
    ranges = game_ranges([p for p, _ in played], outcomes, saved)
    return standings([p for p, _ in played], outcomes, names, ranges), ranges
