"""The playable-game interface: the one view of a game that the server and agent use.

A game file of any format (GDL ``.kif``, Gambit ``.efg``, the game-tree text format,
``.osposg``) is loaded by :func:`gdl.formats.load_game` (``gdl`` is the lowest layer that
sees every format) and returned as a :class:`PlayableGame`.

Vocabulary follows GGP: roles, the initial state, legal moves of a role, the next
state for a joint move, terminal, payoffs (goals). States are opaque, immutable and
hashable. Moves are strings (KIF terms for GDL, action names for the other formats).

Conventions every implementation keeps:

* ``roles`` are the seats players take. Nature (a GDL ``random`` role, ``.efg``/tree
  chance nodes, POSG transitions) is not a seat: the game resolves it inside
  ``initial_state``/``next_state`` from the ``rng`` it is given, so a seeded generator
  makes a match reproducible.
* A role whose ``legal_moves`` is empty is not asked for a move this step (only one
  player acts at an ``.efg`` node). In GDL every role always has at least one move
  (GGP asks every role at every step; the idle one plays ``noop``).
* ``observation(state, role)`` is everything that role may see now, as JSON-able
  data: GDL roles see the previous joint move (as in GGP), GDL-II roles (rules with
  ``sees``) only the turn, their own last move and their percepts; ``.efg``/tree roles
  see only their information-set name; POSG P1 its partition and last observation, P2
  the state.
* ``hidden_information`` says whether a role may be told less than the whole state
  (true for GDL-II, ``.efg``, tree and POSG games; false for GDL without ``sees``,
  where every role sees every joint move).
* ``search_model()`` hands a player that may see the true state (the server's
  built-in ``uct``) what to search: a :class:`SearchModel`, or None where the game has
  none (hidden information, or no state machine).
* ``state_text(state)`` is the state as the match record keeps it (GDL: the KIF list
  of its facts).
* ``payoffs(state)`` is one number per role at a terminal state (GDL goals 0..100).
* ``description()`` is what a match offer sends so a remote agent can rebuild the
  game: ``{"format": "gdl"|"efg"|"tree"|"posg", "name": str, "text": file text}``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from solvers.search.game import SearchGame

State = Hashable
# A seat's strategy as it plays: policy(role, observation, legal) -> a weight per legal
# move, from what the role is told (its observations, one call a step), or None where
# it does not know the state (the caller then plays by other means).
Policy = Callable[[int, Any, Sequence[str]], "list[float] | None"]


@dataclass(frozen=True)
class SearchModel:
    """A perfect-information game as a search sees it (:meth:`PlayableGame.search_model`).

    ``game`` is the state machine the search runs on (:class:`solvers.search.SearchGame`,
    e.g. the GDL state machine), ``chance_roles`` its roles played by nature, and
    ``seat_roles[seat]`` the role of ``game`` that seat ``seat`` (an index into the
    playable game's ``roles``) plays. ``state(s)`` is the search state of the playable
    state ``s``; ``move_text(m)`` the playable game's move string of a search move."""

    game: SearchGame
    chance_roles: tuple[int, ...]
    seat_roles: tuple[int, ...]
    state: Callable[[State], Hashable]
    move_text: Callable[[Hashable], str]


@runtime_checkable
class PlayableGame(Protocol):
    """A game as the server and the agent see it (see the module docstring)."""

    @property
    def name(self) -> str: ...

    @property
    def format(self) -> str:
        """One of ``gdl``, ``efg``, ``tree``, ``posg``."""
        ...

    @property
    def roles(self) -> Sequence[str]: ...

    def initial_state(self, rng: random.Random) -> State: ...

    def is_terminal(self, state: State) -> bool: ...

    def legal_moves(self, state: State, role: int) -> list[str]:
        """Legal moves of ``role`` (an index into ``roles``); empty if it does not act."""
        ...

    def next_state(self, state: State, moves: Sequence[str | None], rng: random.Random) -> State:
        """The state after the joint move (``None`` for roles that do not act)."""
        ...

    def payoffs(self, state: State) -> list[float]: ...

    def observation(self, state: State, role: int) -> Any: ...

    @property
    def hidden_information(self) -> bool:
        """Whether a role may be told less than the whole state (module docstring)."""
        ...

    def search_model(self) -> SearchModel | None:
        """The true-state model a perfect-information game is searched in, else None."""
        ...

    def state_text(self, state: State) -> str:
        """The state as the match record keeps it."""
        ...

    def description(self) -> dict[str, str]: ...
