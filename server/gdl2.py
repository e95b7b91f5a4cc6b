"""GDL-II matches: what the server does differently when a GDL game hides information.

A GDL match is a GDL-II match when its game hides information (the rules have
``sees``: ``hidden_information`` of the playable game); a game with a ``random`` role
and no ``sees`` stays a plain GDL match, in which every role sees the whole joint move
(nature's included), as GGP plays it.

What a seat is told is the game's own business: its observation
(:meth:`gdl.playable.GdlGame.observation`) is ``{"turn", "last_move", "percepts"}``,
its own move and the terms it sees after each step, never the other roles' moves,
nature's move or the state (``shared/protocols/ggp-ii.md``). The match then:

- sends nobody the previous joint move (GGP HTTP players get the GDL-II PLAY and STOP
  forms, ``server/players/http.py``);
- records each step's percepts of every seat, read from the seats' observations;
- does not tell the players the reason of a failure that came from the game (a rules
  error may describe the state).
"""

from __future__ import annotations

from solvers.playable import PlayableGame, State


def is_gdl2(game: PlayableGame) -> bool:
    """Whether a match of ``game`` is played as GDL-II (a GDL game that hides information)."""
    return game.format == "gdl" and game.hidden_information


def step_percepts(game: PlayableGame, state: State) -> list[list[str]]:
    """Every seat's percepts after the step that led to ``state`` (a GDL-II game's
    state after a joint move), in role order, as the record keeps them."""
    return [list(game.observation(state, seat)["percepts"]) for seat in range(len(game.roles))]
