"""A GDL-II game as an extensive-form game (the model the solvers of
:mod:`solvers.extensive` take).

:func:`expand_gdl2` walks the game tree from the initial state depth-first:

1. The players are the roles other than ``random``, in role order; ``random`` is
   chance, uniform over its legal moves (GDL-II's nature).
2. At each state the roles with more than one legal move choose, one node each in
   role order; a role's node does not see the choices made before it in the same
   step, because its information set is keyed by what it knows, not by the node.
3. A player's information set is its *own history*: for every step so far, its own
   move and its percepts (:meth:`~gdl.reasoning.machine.StateMachine.percepts`), as
   :func:`infoset_name` spells it. A role that knows the same history must have the
   same legal moves (a well-formed GDL-II game); otherwise :class:`GameError`.
   Keying by the whole own history gives perfect recall.
4. A terminal state is a leaf whose payoffs are the players' goal values as they are.

The tree has no transpositions: it grows with the number of histories, so
``max_nodes`` stops it cleanly with :class:`LimitReached` (and ``deadline``, a
``time.monotonic()`` value, does the same for time).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from fractions import Fraction

from gdl.reasoning.state_machine import NATURE, Move, State, StateMachine
from solvers.errors import GameError, LimitReached
from solvers.extensive.model import CHANCE, PLAYER, TERMINAL, ExtensiveGame, NodeTable, build_game
from solvers.recursion import deep_recursion

DEFAULT_MAX_NODES = 2_000_000
PROGRESS_SECONDS = 2.0
CHECK_EVERY = 1024  # nodes between deadline checks

# one step of a role's own history: its move (KIF) and its percepts (sorted KIF)
Step = tuple[str, tuple[str, ...]]


def infoset_name(role: str, history: Sequence[Step]) -> str:
    """The information-set name of ``role`` after ``history``: the role, then per step
    ``move`` and its percepts in brackets, e.g. ``first: noop [(your_card king)] | bet
    [(did first bet)]``. Players look their strategy up by this name."""
    return f"{role}: " + " | ".join(f"{move} [{' '.join(seen)}]" for move, seen in history)


def player_roles(machine: StateMachine) -> list[int]:
    """Role indices of the players (every role but ``random``)."""
    return [i for i, role in enumerate(machine.roles) if role != NATURE]


class _Expander:
    def __init__(self, machine: StateMachine, max_nodes: int, deadline: float | None,
                 progress: Callable[[str], None] | None) -> None:
        self.machine = machine
        self.max_nodes = max_nodes
        self.deadline = deadline
        self.progress = progress
        self.nature = machine.roles.index(NATURE) if NATURE in machine.roles else None
        self.players = player_roles(machine)
        self.player_of = {r: p for p, r in enumerate(self.players)}
        self.table = NodeTable(len(self.players))
        self.infosets: dict[tuple[int, tuple[Step, ...]], int] = {}
        self.names: list[str] = []
        # (role, own history) -> legal moves, for forced moves too (step 3's check)
        self.known: dict[tuple[int, tuple[Step, ...]], tuple[str, ...]] = {}
        self.started = self.last_report = time.monotonic()

    def node(self, kind: int, parent: int, **fields: int) -> int:
        count = len(self.table)
        if count >= self.max_nodes:
            raise LimitReached(f"the GDL-II game tree of {self.machine.name} has more than "
                               f"{self.max_nodes:,} nodes (raise --max-nodes)")
        if count % CHECK_EVERY == 0:
            now = time.monotonic()
            if self.deadline is not None and now >= self.deadline:
                raise LimitReached(f"the time limit was reached while expanding "
                                   f"{self.machine.name} ({count:,} nodes)")
            if self.progress is not None and now - self.last_report >= PROGRESS_SECONDS:
                self.last_report = now
                self.progress(f"expanding: {count:,} nodes, {len(self.names):,} "
                              f"information sets, {now - self.started:.1f} s")
        return self.table.add_node(kind, parent, "", **fields)

    def state(self, state: State, parent: int, histories: tuple[tuple[Step, ...], ...]) -> None:
        machine = self.machine
        if machine.is_terminal(state):
            goals = machine.goals(state)
            outcome = self.table.add_outcome("", [float(goals[r]) for r in self.players])
            self.node(TERMINAL, parent, outcome=outcome)
            return
        legal = machine.legal_joint_moves(state)
        labels = [tuple(machine.move_to_kif(m) for m in moves) for moves in legal]
        for r in self.players:
            key = (r, histories[r])
            if self.known.setdefault(key, labels[r]) != labels[r]:
                raise GameError(
                    f"{machine.name}: role {machine.roles[r]} cannot tell apart states "
                    f"where its legal moves differ ({', '.join(self.known[key])} vs "
                    f"{', '.join(labels[r])}) after {infoset_name(machine.roles[r], key[1])}")
        choosers = [r for r in range(len(legal)) if len(legal[r]) > 1]
        self.choose(state, legal, labels, choosers, 0, [0] * len(legal), parent, histories)

    def choose(self, state: State, legal: tuple[tuple[Move, ...], ...],
               labels: list[tuple[str, ...]], choosers: list[int], k: int, picks: list[int],
               parent: int, histories: tuple[tuple[Step, ...], ...]) -> None:
        """The node of the ``k``-th choosing role and below it, one subtree per move;
        ``picks`` are the indices of the moves chosen so far (0 for the others)."""
        if k == len(choosers):
            self.step(state, legal, labels, picks, parent, histories)
            return
        r = choosers[k]
        if r == self.nature:
            count = len(labels[r])
            chance = self.table.add_chance_set(labels[r], (Fraction(1, count),) * count)
            node = self.node(CHANCE, parent, chance=chance)
        else:
            key = (r, histories[r])
            infoset = self.infosets.get(key)
            if infoset is None:
                infoset = self.infosets[key] = len(self.names)
                self.names.append(infoset_name(self.machine.roles[r], histories[r]))
                self.table.infoset_keys.append(key)
                self.table.infoset_player.append(self.player_of[r])
                self.table.infoset_actions.append(labels[r])
            node = self.node(PLAYER, parent, player=self.player_of[r], infoset=infoset)
        for i in range(len(legal[r])):
            picks[r] = i
            self.choose(state, legal, labels, choosers, k + 1, picks, node, histories)
        picks[r] = 0

    def step(self, state: State, legal: tuple[tuple[Move, ...], ...],
             labels: list[tuple[str, ...]], picks: list[int], parent: int,
             histories: tuple[tuple[Step, ...], ...]) -> None:
        joint = [moves[i] for moves, i in zip(legal, picks, strict=True)]
        seen = self.machine.percepts(state, joint)
        nature = self.nature
        after = tuple(h if r == nature else (*h, (labels[r][picks[r]], seen[r]))
                      for r, h in enumerate(histories))
        self.state(self.machine.next_state(state, joint), parent, after)


def expand_gdl2(machine: StateMachine, *, max_nodes: int = DEFAULT_MAX_NODES,
                deadline: float | None = None,
                progress: Callable[[str], None] | None = None) -> ExtensiveGame:
    """The extensive-form game of a GDL-II game (see the module docstring); raises
    :class:`LimitReached` past ``max_nodes`` nodes or ``deadline`` and
    :class:`GameError` for a game without players or with ill-formed information."""
    if max_nodes < 1:
        raise GameError("--max-nodes must be at least 1")
    expander = _Expander(machine, max_nodes, deadline, progress)
    if not expander.players:
        raise GameError(f"{machine.name} has no players besides random")
    histories: tuple[tuple[Step, ...], ...] = tuple(() for _ in machine.roles)
    with deep_recursion:
        expander.state(machine.initial_state(), -1, histories)
    names = [machine.roles[r] for r in expander.players]
    return build_game(machine.name, names, expander.table, expander.names,
                      comment=f"GDL-II game {machine.name} expanded by ggp")
