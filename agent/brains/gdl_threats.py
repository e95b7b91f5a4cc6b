"""``threats``: the search's move checked by a threat search before it is played.

In a game of two roles whose wins are moves that win by themselves (breakthrough,
knightThrough), :class:`agent.search.threats.ThreatSearch` proves forced wins made of
threats 7 plies deep within milliseconds, where the graph's MCTS-Solver needs every
reply of every ply expanded. So after the search, in time kept from it:

1. a forced win of ours by threats from the current state is played;
2. else the search's move, then the others, most visited first, are checked until one
   leaves the opponent no forced win by threats: that one is played (a move the proof
   refutes is not). Refutations are quick (most are wins in 3); the first move not
   refuted costs a whole search, and the time kept bounds the checks.

Where both roles choose at once, a move of ours leads to no one state: only a win of ours
in one move is looked for there. A game whose factors are searched apart (chinook) gets no
check: it serves the whole game's search.

Against Sancho the graph search played such a move in 2 of the 8 matches it lost in
these games (knightThrough, at values 6 and 20: Sancho won in 3 and 5 plies, where 2
moves had no forced loss within 7). A found win or loss is a proof; a failure proves
nothing, so where every move checked is refuted, or time runs out, the search's move
stands.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np

from agent.search.graph import GraphSearch
from agent.search.threats import ThreatSearch
from gdl.reasoning.batch_machine import pack_ints
from gdl.reasoning.win_moves import winning_moves_of

THREAT_PLIES = 7     # Sancho's local search found breakthrough's win at depth 7
THREAT_SHARE = 0.06  # of a move's think time, kept from the search for the checks


def threat_search(search: GraphSearch, roles: int, chance: tuple[int, ...]
                  ) -> ThreatSearch | None:
    """The game's threat search, where it applies: two roles, no chance, compiled
    playouts, and moves that win by themselves for both roles."""
    net = search.playouts.net
    if roles != 2 or chance or net is None:
        return None
    threats = ThreatSearch(net, winning_moves_of(search.bm))
    return threats if threats.applies else None


def threat_move(threats: ThreatSearch, machine, state: Hashable, me: int, result,
                chosen: Hashable, until: float, info: dict[str, Any]) -> Hashable:
    """The move to play at ``state`` (ours: role ``me``) after the search's ``result``
    chose ``chosen`` (module docstring); ``info["threats"]`` says what changed it."""
    n_words = threats.net.n_words
    won = threats.forced_win(pack_ints([state], n_words)[0], me, THREAT_PLIES,
                             deadline=until)
    if won is not None:
        info["threats"] = f"a forced win in {won.plies}"
        return 1 << won.move
    theirs = machine.legal_moves(state, 1 - me)
    if len(theirs) != 1:   # both choose here: a move of ours leads to no one state
        return chosen
    moves = result.moves[me]
    order = [chosen] + [moves[i] for i in np.argsort(-np.asarray(result.strategy[me]),
                                                     kind="stable") if moves[i] != chosen]
    for checked, move in enumerate(order):
        joint = [move, theirs[0]] if me == 0 else [theirs[0], move]
        child = machine.next_state(state, joint)
        if machine.is_terminal(child):   # ours if it ends the game with our best goal
            if machine.goals(child)[me] >= threats.best[me]:
                return move
            continue
        lost = threats.forced_win(pack_ints([child], n_words)[0], 1 - me, THREAT_PLIES,
                                  deadline=until)
        if lost is None:
            if checked:
                info["threats"] = f"{checked} refuted"
            return move
    return chosen
