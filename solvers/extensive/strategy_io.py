"""Strategy files in the ``../shared/seeds/000_*`` output form.

One line per information set::

    infoset <NAME> strategies <A1>=<S1> ... <An>=<Sn>

Names and actions are written as single words (the format splits on whitespace):
whitespace and ``%`` as ``%XX`` (``.efg`` actions such as ``"DOOR A"`` become
``DOOR%20A``, :mod:`solvers.extensive.tokens`); reading takes that spelling and the
older one with ``_`` for whitespace (``DOOR_A``). Reading checks every name, action and probability and reports
``file:line:col``; an information set with no line is played uniformly (the reader
reports which ones, so callers can say so). ``#`` comments and blank lines are
ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solvers.errors import FormatError, Location
from solvers.extensive.model import CHANCE, ExtensiveGame, exact_number
from solvers.extensive.tokens import from_token, token, token_index
from solvers.report import mixed, player_keys


def root_strategy(game: ExtensiveGame, sigma: np.ndarray) -> dict[str, dict[str, float]]:
    """``{player: {action: probability}}`` at each player's first information set, for
    the players who have exactly one (an opening move, as in rock-paper-scissors); a
    player whose first move depends on what it was dealt or saw (Kuhn's card) has
    several and is left out: the strategy file has them all."""
    keys = player_keys(game.player_names)
    out = {}
    for player in range(game.num_players):
        first = np.flatnonzero((game.infoset_player == player)
                               & (game.infoset_parent_seq == player))  # empty sequence
        if len(first) == 1:
            j = int(first[0])
            lo, hi = int(game.infoset_action_start[j]), int(game.infoset_action_start[j + 1])
            out[keys[player]] = mixed(game.infoset_actions[j], sigma[lo:hi].tolist())
    return out


def root_strategy_note(game: ExtensiveGame, strategy: dict[str, dict[str, float]]) -> str:
    """Why :func:`root_strategy` leaves players out, for the text line ('' when none is):
    a ``-`` alone reads like a missing result."""
    left_out = [name for name in player_keys(game.player_names) if name not in strategy]
    if not left_out:
        return ""
    if len(left_out) < game.num_players:
        return (f"({', '.join(left_out)}: the first move depends on what was dealt or seen; "
                "--strategy writes them all)")
    first = "nature moves first: " if game.num_nodes and game.node_kind[0] == CHANCE else ""
    return (f"({first}each player's first move depends on what it was dealt or saw; "
            "--strategy writes them all)")


def write_strategy(game: ExtensiveGame, sigma: np.ndarray) -> str:
    """Strategy lines for every information set of ``sigma`` (per global action)."""
    lines = []
    for i, (name, actions) in enumerate(zip(game.infoset_names, game.infoset_actions,
                                            strict=True)):
        lo = int(game.infoset_action_start[i])
        lines.append(f"infoset {token(name)} strategies " + " ".join(
            f"{token(a)}={float(sigma[lo + k]):.12g}" for k, a in enumerate(actions)))
    return "\n".join(lines) + ("\n" if lines else "")


def strategy_dict(game: ExtensiveGame, sigma: np.ndarray) -> dict[str, dict[str, float]]:
    """``{infoset name: {action: probability}}`` with the game's own names."""
    out: dict[str, dict[str, float]] = {}
    for i, (name, actions) in enumerate(zip(game.infoset_names, game.infoset_actions,
                                            strict=True)):
        lo = int(game.infoset_action_start[i])
        out[name] = {a: float(sigma[lo + k]) for k, a in enumerate(actions)}
    return out


@dataclass(frozen=True)
class ReadStrategy:
    sigma: np.ndarray
    missing: list[str]


def read_strategy(game: ExtensiveGame, text: str, filename: str | None = None,
                  tolerance: float = 1e-6) -> ReadStrategy:
    """Parse strategy lines for ``game`` into a behavioural strategy per global action.

    Probabilities must be non-negative and add up to 1 within ``tolerance`` (they are
    then normalised exactly).
    """
    by_name = token_index(game.infoset_names)
    sigma = game.uniform_strategy().astype(float) if game.num_actions else np.zeros(0)
    seen: dict[int, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        words = raw.split()
        if not words or words[0].startswith("#"):
            continue
        where = Location(filename, number, raw.index(words[0]) + 1)
        if words[0] != "infoset" or len(words) < 3 or words[2] != "strategies":
            raise FormatError("expected 'infoset <NAME> strategies <A1>=<S1> ...'", where)
        infoset = by_name.get(words[1])
        if infoset is None:
            raise FormatError(f"the game has no information set {from_token(words[1])!r}", where)
        name = game.infoset_names[infoset]
        if infoset in seen:
            raise FormatError(f"information set {name!r} already given on line "
                              f"{seen[infoset]}", where)
        seen[infoset] = number
        actions = game.infoset_actions[infoset]
        by_action = token_index(actions)
        probs = [0.0] * len(actions)
        given: set[int] = set()
        for word in words[3:]:
            action, sep, value = word.rpartition("=")
            k = by_action.get(action) if sep else None
            if k is None:
                raise FormatError(f"{word!r}: expected <action>=<probability> with an action of "
                                  f"{name} ({', '.join(actions)})", where)
            if k in given:
                raise FormatError(f"action {actions[k]!r} given twice", where)
            given.add(k)
            try:
                prob = float(exact_number(value))
            except ValueError:
                raise FormatError(f"bad probability {value!r}", where) from None
            if prob < 0:
                raise FormatError(f"probability {value!r} is negative", where)
            probs[k] = prob
        total = sum(probs)
        if abs(total - 1.0) > tolerance:
            raise FormatError(f"probabilities of {name} add up to {total:.9g}, not 1", where)
        lo = int(game.infoset_action_start[infoset])
        sigma[lo:lo + len(probs)] = np.array(probs) / total
    missing = [game.infoset_names[i] for i in range(game.num_infosets) if i not in seen]
    return ReadStrategy(sigma, missing)
