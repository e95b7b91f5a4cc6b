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
  data: GDL roles see the previous joint move (as in GGP); ``.efg``/tree roles see
  only their information-set name; POSG P1 its partition and last observation, P2
  the state.
* ``payoffs(state)`` is one number per role at a terminal state (GDL goals 0..100).
* ``description()`` is what a match offer sends so a remote agent can rebuild the
  game: ``{"format": "gdl"|"efg"|"tree"|"posg", "name": str, "text": file text}``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Protocol, runtime_checkable

State = Hashable
# A seat's strategy as it plays: policy(role, observation, legal) -> a weight per legal
# move, from what the role is told (its observations, one call a step), or None where
# it does not know the state (the caller then plays by other means).
Policy = Callable[[int, Any, Sequence[str]], "list[float] | None"]


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

    def description(self) -> dict[str, str]: ...
