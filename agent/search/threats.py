"""Forced wins by threat sequences, searched over the compiled step.

In a turn-based game of two roles whose wins are moves that win by themselves
(:mod:`gdl.reasoning.win_moves`: breakthrough's and knightThrough's moves onto the far
row), the *attacker threatens* when its move leaves the defender replies after which the
attacker has such a move. A *parry* is a reply after which it has none (the runner taken).
A threat sequence wins when the attacker threatens at every move and, in the end, no reply
parries. Searching the attacker's threats and the defender's parries alone (threat-space
search: Allis, van den Herik & Huntjens, "Go-Moku Solved by New Search Techniques", 1996)
is narrow enough to look 7-9 plies ahead within a move, where full width is not. Sancho
looks for such wins beside its MCTS, near the last move played (its
``LocalRegionSearcher``).

Every win found is a proof: every reply of the defender is answered (a reply that is no
parry by the attacker's winning move, a parry by the rest of the sequence). A failure
proves nothing: quiet moves are never tried.

A node's transitions are evaluated in four calls of
:meth:`~gdl.reasoning.playout_net.PlayoutNet.step`, all its children and grandchildren at
once: the attacker's moves, the children's legal replies, the replies, the grandchildren's
legal moves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from gdl.reasoning.playout_net import PlayoutNet, StepResult

DEFAULT_BUDGET = 400_000   # transitions a search may evaluate


class _Spent(Exception):
    """The search's transitions or time ran out."""


@dataclass(frozen=True)
class Found:
    """A forced win: the attacker's first move (a move index) and the plies it needed
    at most (the attacker's last move included)."""

    move: int
    plies: int


class ThreatSearch:
    """Forced wins within a number of plies, by threat sequences (module docstring)."""

    def __init__(self, net: PlayoutNet, wins: np.ndarray, *,
                 budget: int = DEFAULT_BUDGET) -> None:
        """``wins``: ``[n_moves]`` bool, the moves that win by themselves
        (:func:`gdl.reasoning.win_moves.winning_moves_of`)."""
        if len(net.roles) != 2:
            raise ValueError("threat search needs a game of two roles")
        self.net = net
        self.budget = budget
        batch = net.batch
        role_of = np.asarray(batch.move_role, dtype=np.int64)
        self.moves_of = [role_of == r for r in (0, 1)]   # each role's moves
        self.win_of = [np.asarray(wins, dtype=np.bool_) & mine for mine in self.moves_of]
        values = np.nan_to_num(np.asarray(batch.goal_value, dtype=np.float64), nan=-1.0)
        goal_role = np.asarray(batch.goal_role, dtype=np.int64)
        # a goal atom's value for each role (-1: not the role's), and each role's best
        self.goal_values = [np.where(goal_role == r, values, -1.0) for r in (0, 1)]
        self.best = [float(self.goal_values[r].max(initial=-1.0)) for r in (0, 1)]
        self.transitions = 0
        self._deadline: float | None = None
        self._memo: dict[tuple[bytes, int, int], int | None] = {}

    @property
    def applies(self) -> bool:
        """Whether both roles have moves that win by themselves."""
        return bool(self.win_of[0].any() and self.win_of[1].any())

    def info(self, packed: np.ndarray) -> StepResult:
        """``packed`` states' terminal flags, legal moves and goals (no move played)."""
        return self._step(packed, np.full((len(packed), 2), -1, dtype=np.int64))

    def forced_win(self, packed: np.ndarray, attacker: int, plies: int, *,
                   deadline: float | None = None) -> Found | None:
        """The ``attacker``'s forced win from the packed state ``packed`` (``[n_words]``,
        the attacker to move) within ``plies`` plies, by threats; None when none is
        found within the plies, the budget or ``deadline`` (``time.monotonic()``)."""
        self.transitions = 0
        self._deadline = deadline
        self._memo.clear()
        state = np.ascontiguousarray(packed, dtype=np.uint64).reshape(1, -1)
        try:
            info = self.info(state)
            if info.terminal[0]:
                return None
            for depth in range(1, plies + 1, 2):   # the shortest first
                move = self._attack(state[0], info.legal[0], attacker, depth)
                if move is not None:
                    return Found(move, depth)
        except _Spent:
            pass
        return None

    # -- the search -----------------------------------------------------------------

    def _step(self, packed: np.ndarray, joint: np.ndarray) -> StepResult:
        self.transitions += len(packed)
        if self.transitions > self.budget or (
                self._deadline is not None and time.monotonic() >= self._deadline):
            raise _Spent
        return self.net.step(packed, joint)

    def _turn(self, legal: np.ndarray) -> tuple[int, np.ndarray, np.ndarray] | None:
        """Who moves where ``legal`` holds: (the mover, its moves, a joint move for each),
        the other role's one legal move beside it; None where both choose."""
        moves = [np.flatnonzero(legal & mine) for mine in self.moves_of]
        if min(len(m) for m in moves) != 1:   # a role without moves, or both choose
            return None
        mover = 1 if len(moves[1]) > 1 else 0
        joint = np.empty((len(moves[mover]), 2), dtype=np.int64)
        joint[:, mover] = moves[mover]
        joint[:, 1 - mover] = moves[1 - mover][0]
        return mover, moves[mover], joint

    def _ended_won(self, step: StepResult, role: int) -> np.ndarray:
        """Where each state of ``step`` is terminal with ``role``'s best goal."""
        value = np.where(step.goal, self.goal_values[role], -1.0).max(axis=1, initial=-1.0)
        return step.terminal & (value >= self.best[role])

    def _attack(self, state: np.ndarray, legal: np.ndarray, attacker: int,
                plies: int) -> int | None:
        """The attacker's first move of a forced win within ``plies`` from ``state``
        (non-terminal, ``legal`` its legal moves), or None."""
        wins = np.flatnonzero(legal & self.win_of[attacker])
        if len(wins):
            return int(wins[0])
        if plies < 3:
            return None
        key = (state.tobytes(), attacker, plies)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = found = self._threats(state, legal, attacker, plies)
        return found

    def _threats(self, state: np.ndarray, legal: np.ndarray, attacker: int,
                 plies: int) -> int | None:
        turn = self._turn(legal)
        if turn is None or turn[0] != attacker:
            return None
        _, moves, joint = turn
        defender = 1 - attacker
        children = self._step(np.repeat(state[None], len(moves), axis=0), joint).children
        child = self.info(children)
        won = self._ended_won(child, attacker)
        if won.any():
            return int(moves[np.argmax(won)])
        own = child.legal & self.moves_of[attacker]
        theirs = child.legal & self.moves_of[defender]
        # the children where the defender alone chooses, with no winning move of its own
        # (which would refute the attacker's)
        open_ = (~child.terminal & (own.sum(axis=1) == 1) & theirs.any(axis=1)
                 & ~(child.legal & self.win_of[defender]).any(axis=1))
        at, reply = np.nonzero(theirs & open_[:, None])   # (child, reply) rows
        if not len(at):
            return None
        replies = np.empty((len(at), 2), dtype=np.int64)
        replies[:, defender] = reply
        replies[:, attacker] = own[at].argmax(axis=1)
        grand = self._step(children[at], replies).children
        after = self.info(grand)
        ends = after.terminal
        won = self._ended_won(after, attacker) | (
            ~ends & (after.legal & self.win_of[attacker]).any(axis=1))
        lost = ends & ~won   # a reply that ends the game, not in the attacker's favour
        candidates = []
        for i in np.unique(at):
            mine = np.flatnonzero(at == i)
            if lost[mine].any():
                continue
            parries = mine[~won[mine]]
            if not len(parries):
                return int(moves[i])   # no reply parries: a win in 3
            if len(parries) < len(mine):   # a threat: some replies do not parry it
                candidates.append((len(parries), int(i), parries))
        if plies < 5:
            return None
        for _, i, parries in sorted(candidates, key=lambda c: c[:2]):
            if all(self._attack(grand[j], after.legal[j], attacker, plies - 2) is not None
                   for j in parries):
                return int(moves[i])
        return None
