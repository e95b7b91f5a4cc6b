"""Moves that win by themselves, read off a grounded game's rules.

A role's move *wins by itself* when playing it makes a fact true (whatever the state
and the other roles' moves) that alone ends the game with the role's best goal:
breakthrough's and knightThrough's moves onto the far row. Playouts that take such a
move whenever one is legal play the decisive moves of Teytaud & Teytaud ("On the
huge benefit of decisive moves in Monte-Carlo tree search algorithms", CIG 2010)
where they matter most, in races, without the one-step lookahead that made them cost
0.6x the playouts (agent/search/mcts.py): a lookup of the legal rows instead.

The analysis is of sufficiency on the ground rules: a leaf *implies* an atom when the
atom is true in every state where the leaf is. An atom is implied by the leaves that
imply every positive literal of one of its bodies with no negative literal (a
negative literal, or a cycle, implies nothing: the answer errs towards fewer moves,
never a wrong one). A fact is winning for a role when its ``true`` atom implies
``terminal`` and a goal atom of the role's best value; a move wins when its ``does``
atom implies the ``next`` atom of a fact winning for its role.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from gdl.reasoning.batch_machine import BatchMachine, Bodies, rules_of

Leaves = frozenset[int] | None   # the leaves implying an atom; None: every leaf (always true)


def _implying(rules: Mapping[int, Bodies]) -> Callable[[int], Leaves]:
    """``leaves(atom)``: the leaves of ``rules`` that imply ``atom`` (memoised)."""
    memo: dict[int, Leaves] = {}

    def leaves(atom: int) -> Leaves:
        if atom in memo:
            return memo[atom]
        bodies = rules.get(atom)
        if bodies is None:
            memo[atom] = frozenset((atom,))
            return memo[atom]
        memo[atom] = frozenset()   # (while it is open: a cycle implies nothing)
        found: set[int] = set()
        for pos, neg in bodies:
            if neg:
                continue
            common: Leaves = None
            for literal in pos:
                implying = leaves(literal)
                if implying is not None:
                    common = implying if common is None else common & implying
                if common is not None and not common:
                    break
            if common is None:   # a body of literals that always hold
                memo[atom] = None
                return None
            found |= common
        memo[atom] = frozenset(found)
        return memo[atom]

    return leaves


def winning_moves(batch: BatchMachine) -> np.ndarray:
    """``[n_moves]`` bool: the moves that win by themselves (see the module docstring)."""
    state = _implying(rules_of(batch.state_net))
    move = _implying(rules_of(batch.move_net))
    fact_of = batch.machine._true_bits   # a `true` atom -> its fact
    ends = state(batch._terminal_atom)
    wins = np.zeros(batch.n_moves, dtype=np.bool_)
    if ends is None:   # terminal everywhere: no move is ever played
        return wins
    move_of = {a: i for i, a in enumerate(batch._does_atoms)}
    for role in range(len(batch.roles)):
        goals = np.flatnonzero(batch.goal_role == role)
        values = batch.goal_value[goals]
        if not len(goals) or np.isnan(values).all():
            continue
        best = np.nanmax(values)
        facts: set[int] = set()
        for g in goals[values == best]:
            implying = state(batch._goal_atoms[g])
            facts |= {fact_of[a] for a in (ends if implying is None else ends & implying)
                      if a in fact_of}
        for fact in facts:
            for atom in move(batch._next_atoms[fact]) or ():
                m = move_of.get(atom)
                if m is not None and batch.move_role[m] == role:
                    wins[m] = True
    return wins


def winning_moves_of(batch: BatchMachine) -> np.ndarray:
    """``batch``'s :func:`winning_moves`, found once and kept on it."""
    wins = getattr(batch, "winning_moves", None)
    if wins is None:
        wins = batch.winning_moves = winning_moves(batch)
    return wins
