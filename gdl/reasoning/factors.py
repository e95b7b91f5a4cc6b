"""Independent subgames (factors) of a grounded game, read off its rules.

Sancho, the 2014 champion, splits a game into *factors* on the start clock: sets of
facts and moves that never influence one another, so that each can be searched as
a game of its own (its authors' "factorisation"). connectFourSimultaneous is two
connect-four boards, each role dropping on the board the other does not: Sancho
reports two factors there (``num_factors`` 2 in its game characteristics, the facts
of each board with the drops onto it) and searches each board as a turn-based game.

The analysis here is that partition on the ground rules: a fact or move influences
what the rules that decide the next state and the legal moves read. Starting from
the ``next`` and ``legal`` atoms, every atom those rules read (positive or negative,
through views) is joined with the rule's head; a fact's ``next`` atom is joined with
its ``true`` atom and a move's ``legal`` atom with its ``does`` atom. ``terminal`` and
``goal`` are left out: they combine the factors (a line on either board ends the
game) without making one's moves depend on the other's facts. A factor is a part
with at least one fact and one move; facts that no move reaches (a step counter)
belong to none.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gdl.reasoning.batch_machine import BatchMachine, Bodies, rules_of


@dataclass(frozen=True)
class Factor:
    """One independent subgame: its facts (indices into the game's facts, as the
    packed state's bits) and its moves (the batched machine's move columns)."""

    facts: tuple[int, ...]
    moves: tuple[int, ...]


class _Parts:
    """Union-find over atom ids."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, a: int) -> int:
        root = a
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while a != root:   # path compression
            self.parent[a], a = root, self.parent.get(a, a)
        return root

    def join(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[ra] = rb


def _rules(batch: BatchMachine) -> dict[int, list[tuple[int, ...]]]:
    """Every ground rule of both networks: head -> the atoms each body reads."""
    rules: dict[int, list[tuple[int, ...]]] = {}
    for network in (batch.state_net, batch.move_net):
        bodies: dict[int, Bodies] = rules_of(network)
        for head, of_head in bodies.items():
            rules.setdefault(head, []).extend(pos + neg for pos, neg in of_head)
    return rules


def factors(batch: BatchMachine) -> list[Factor]:
    """The game's factors (see the module docstring), largest first; one factor when
    the game does not split."""
    rules = _rules(batch)
    parts = _Parts()
    true_atom = {fact: atom for atom, fact in batch.machine._true_bits.items()}
    roots = list(batch._next_atoms) + list(batch._legal_atoms)
    seen = set(roots)
    stack = list(roots)
    while stack:   # the rules the transition and the legal moves read, through views
        head = stack.pop()
        for body in rules.get(head, ()):
            for atom in body:
                parts.join(head, atom)
                if atom not in seen:
                    seen.add(atom)
                    stack.append(atom)
    for fact, atom in enumerate(batch._next_atoms):
        if fact in true_atom:
            parts.join(atom, true_atom[fact])
    for legal, does in zip(batch._legal_atoms, batch._does_atoms, strict=True):
        parts.join(legal, does)
    facts: dict[int, list[int]] = {}
    moves: dict[int, list[int]] = {}
    for fact, atom in enumerate(batch._next_atoms):
        facts.setdefault(parts.find(atom), []).append(fact)
    for move, atom in enumerate(batch._does_atoms):
        moves.setdefault(parts.find(atom), []).append(move)
    found = [Factor(tuple(facts[p]), tuple(moves[p])) for p in facts if p in moves]
    if len(found) <= 1:
        return [Factor(tuple(range(batch.n_facts)), tuple(range(batch.n_moves)))]
    return sorted(found, key=lambda f: (-len(f.facts), f.facts))


def moving_facts(batch: BatchMachine, factor: Factor) -> np.ndarray:
    """A bool per fact: what changes in ``factor``'s game, where the other factors'
    moves are passes. Its own facts, and the facts whose next value no move decides
    (whose turn it is on the other board, a step counter): those go on as in the
    game. The other facts a move decides stand still, since a pass is one of the
    passing role's real moves, whose effect the factor's game must not see."""
    moving = np.ones(batch.n_facts, dtype=np.bool_)
    moving[batch._move_next_facts] = False
    moving[list(factor.facts)] = True
    return moving


def factor_summary(batch: BatchMachine) -> dict[str, object]:
    """What the agent logs of the factors on the start clock: how many, and each
    one's facts and moves counted."""
    found = factors(batch)
    roles = np.asarray(batch.move_role)
    return {"factors": len(found),
            "factor_sizes": [{"facts": len(f.facts),
                              "moves": [int((roles[list(f.moves)] == r).sum())
                                        for r in range(len(batch.roles))]}
                             for f in found]}
