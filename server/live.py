"""Live text: one readable line per step, as a match is played, followed or watched.

The same lines come from three sources, so ``ggp match``, ``ggp matches show --follow``
and ``ggp client watch`` print a match alike:

* :class:`StepPrinter`, a match listener (``server/match.py``) in the process that runs
  the match;
* :func:`follow`, which polls the SQLite records of a match another process runs;
* the spectator messages of a server (``server/cli/client.py``).

A step line names each acting role's move, its answer time and its fault, e.g.
``step 3: white (mark 1 3) 0.41 s | black noop 0.00 s [TO]``; roles that did not act
(the idle player of an ``.efg`` node) are left out.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:  # (types only: ``ggp client`` prints with this module, and must start
    # fast, without the match's engine and the game formats behind it)
    from server.match import Match, MatchListener, MatchOutcome
    from server.records import Records
    from solvers.playable import PlayableGame, State

POLL_SECONDS = 0.25  # how often a follower reads the records


def step_line(step: int, roles: Sequence[str], moves: Sequence[str | None],
              errors: Sequence[str], times: Sequence[float | None] | None = None) -> str:
    """One step: ``step N: ROLE MOVE [TIME s] [FAULT] | ...`` (times when known)."""
    times = times or [None] * len(roles)
    parts = [f"{role} {move}" + ("" if t is None else f" {t:.2f} s")
             + (f" [{fault}]" if fault else "")
             for role, move, fault, t in zip(roles, moves, errors, times, strict=True)
             if move is not None]
    return f"step {step}: " + " | ".join(parts)


def step_lines(step: int, roles: Sequence[str], moves: Sequence[str | None],
               errors: Sequence[str], times: Sequence[float | None] | None = None,
               percepts: Sequence[Sequence[str]] | None = None) -> list[str]:
    """:func:`step_line`, and in a GDL-II match the step's percepts on a line of their
    own (the organiser's view: every role's)."""
    lines = [step_line(step, roles, moves, errors, times)]
    if percepts is not None:
        lines.append("  sees: " + " | ".join(
            f"{role} {' '.join(p) or '-'}" for role, p in zip(roles, percepts, strict=True)))
    return lines


def header_lines(match: str, game: str, roles: Sequence[str],
                 players: Sequence[str]) -> list[str]:
    """The lines before the first step: the match and who sits where."""
    return [f"match {match}: {game}",
            "seats: " + ", ".join(f"{r}={p}" for r, p in zip(roles, players, strict=True))]


def result_line(roles: Sequence[str], status: str, payoffs: Sequence[float] | None,
                reason: str | None) -> str:
    """The last line: every role's payoff, or how the match ended without them."""
    if status == "completed" and payoffs is not None:
        return "result: " + " ".join(f"{r}={p:g}" for r, p in zip(roles, payoffs, strict=True)) \
            + (f" ({reason})" if reason else "")
    return f"result: {status}" + (f" ({reason})" if reason else "")


class StepPrinter:
    """A match listener that writes the header, each step and the result as they happen
    (``result``: also the result line, which ``ggp match`` prints itself)."""

    def __init__(self, out: TextIO, *, header: bool = True, result: bool = False) -> None:
        self.out = out
        self.header = header
        self.result = result

    def _write(self, line: str) -> None:
        print(line, file=self.out, flush=True)

    def begun(self, match: Match, state: State) -> None:
        if self.header:
            for line in header_lines(match.id, match.game.name, match.game.roles, match.specs):
                self._write(line)

    def turn(self, match: Match, acting: list[int]) -> None:
        pass

    def stepped(self, match: Match, state: State) -> None:
        percepts = match.outcome.percepts[-1] if match.gdl2 else None
        for line in step_lines(match.step, match.game.roles, match.outcome.moves[-1],
                               match.outcome.errors[-1], match.answer_seconds(), percepts):
            self._write(line)

    def ended(self, match: Match) -> None:
        if self.result:
            outcome = match.outcome
            self._write(result_line(match.game.roles, outcome.status, outcome.payoffs,
                                    outcome.reason))


def match_lines(roles: Sequence[str], moves: Sequence[Sequence[str | None]],
                errors: Sequence[Sequence[str]],
                percepts: Sequence[Sequence[Sequence[str]] | None] = (),
                times: Sequence[Sequence[float | None] | None] = ()) -> list[str]:
    """Every step's lines (the organiser's view: every move, and in a GDL-II match every
    role's percepts)."""
    return [line for step, (joint, faults) in enumerate(zip(moves, errors, strict=True), start=1)
            for line in step_lines(step, roles, joint, faults,
                                   times[step - 1] if step <= len(times) else None,
                                   percepts[step - 1] if step <= len(percepts) else None)]


def outcome_text(game: PlayableGame, players: Sequence[str], outcome: MatchOutcome) -> str:
    """A match just played, whole: header, steps, result (``ggp match --quiet``)."""
    lines = header_lines(outcome.match, game.name, game.roles, players)
    lines += match_lines(game.roles, outcome.moves, outcome.errors, outcome.percepts)
    lines.append(result_line(game.roles, outcome.status, outcome.payoffs, outcome.reason))
    return "\n".join(lines)


def record_text(record: dict[str, Any]) -> str:
    """A recorded match, whole, with its format, seed, clocks and tournament
    (``ggp matches show``)."""
    roles = record["roles"]
    lines = header_lines(record["id"], record["game"], roles, record["players"])
    lines[0] += (f" ({record['format']}), seed {record['seed']}, clocks "
                 f"{record['startclock']:g}/{record['playclock']:g}")
    if record["tournament"]:
        lines.append(f"tournament: {record['tournament']}")
    lines += match_lines(roles, [s["moves"] for s in record["steps"]],
                         [s["errors"] for s in record["steps"]],
                         [s.get("percepts") for s in record["steps"]],
                         [s.get("times") for s in record["steps"]])
    lines.append(result_line(roles, record["status"], record["payoffs"], record["reason"]))
    return "\n".join(lines)


class Listeners:
    """Several listeners of one match, told in order (the server's spectators, a printer)."""

    def __init__(self, *listeners: MatchListener | None) -> None:
        self.listeners = [listener for listener in listeners if listener is not None]

    def _tell(self, event: str, *args: Any) -> None:
        for listener in self.listeners:
            getattr(listener, event)(*args)

    def begun(self, match: Match, state: State) -> None:
        self._tell("begun", match, state)

    def turn(self, match: Match, acting: list[int]) -> None:
        self._tell("turn", match, acting)

    def stepped(self, match: Match, state: State) -> None:
        self._tell("stepped", match, state)

    def ended(self, match: Match) -> None:
        self._tell("ended", match)


def follow(records: Records, match: str, *, poll: float = POLL_SECONDS,
           sleep: Callable[[float], None] = time.sleep) -> Iterator[str]:
    """The lines of a recorded match, live: the header, every step as its row is
    committed, then the result once the match is no longer running (a match whose
    server died is marked aborted when the records are opened, so this ends too)."""
    record = records.get_match(match)
    roles = record["roles"]
    yield from header_lines(record["id"], record["game"], roles, record["players"])
    done = 0
    while True:
        status, payoffs, reason = records.match_status(match)  # before reading the steps:
        for step in records.steps_after(match, done):  # the last ones are in when it ended
            yield from step_lines(step["step"], roles, step["moves"], step["errors"],
                                  step["times"], step["percepts"])
            done = step["step"]
        if status != "running":
            yield result_line(roles, status, payoffs, reason)
            return
        sleep(poll)
