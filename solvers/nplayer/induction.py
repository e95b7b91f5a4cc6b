"""A subgame-perfect equilibrium of an n-player game by backward induction on a JointDag.

1. Order the states by height (:func:`.dag.heights`); terminal states take their
   payoffs. For each height from 1 up, take the level's states in chunks of at most
   ``CHUNK_ENTRIES`` entries (:func:`solvers.simultaneous.dag_baseline.chunks`).
2. Group a chunk's states by shape (every player's move count and nature's outcome
   count) and build each group's stage games at once: a tensor
   ``u[G, n_0, ..., n_{R-1}, R]`` of the children's values, nature's outcomes
   averaged.
3. The pure equilibria of all the group's stage games at once: a joint move is one when
   no player gains by changing its own move, i.e. ``u[..., p]`` is the maximum along
   player ``p``'s axis for every ``p`` (within ``TOLERANCE`` of the payoff range). In
   a turn-based state (at most one player with more than one move) these are exactly
   the mover's best moves, so one rule covers both kinds of state.
4. **The tie rule** (``selection``) picks one of them, which matters because the
   other players' values differ between moves equal for the mover (and between pure
   equilibria):

   * ``first`` (default): the first in the engine's move order, i.e. row-major over
     ``(a_0, ..., a_{R-1})`` with player 0's move varying slowest. In a turn-based
     state: the mover's first best move in its legal move order.
   * ``welfare``: the one with the largest sum of all players' values; among equal
     sums, the first as above.

5. A stage game without a pure equilibrium (only simultaneous ones can lack one) gets a
   mixed equilibrium from pygambit (:mod:`.stage_mixed`, the optional extra), one state
   at a time; the state's values are the profile's expected values.

The result is a :class:`~solvers.nplayer.dag.JointSolution` whose ``notes`` say the
tie rule and count the pure, turn-based and mixed states, the mixed method and its
worst regret. ``time_limit`` stops between chunks with :class:`LimitReached`.

Public API: ``solve(dag, selection="first", progress=None, time_limit=None,
memory_mb=None) -> JointSolution``; ``progress(done, total)`` after every chunk counts
non-terminal states.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from solvers.errors import GameError, LimitReached
from solvers.nplayer.dag import JointDag, JointSolution, heights, strategy_layout
from solvers.nplayer.stage_mixed import expected_payoffs, solve_stage
from solvers.simultaneous.dag_baseline import CHUNK_ENTRIES, chunks, level_order
from solvers.simultaneous.model import concat_ranges

Progress = Callable[[int, int], None]

SELECTIONS = ("first", "welfare")
#: a move within this fraction of the payoff range of the best counts as a best move
TOLERANCE = 1e-12
#: bytes per state held besides the DAG: values 8 R, solved 1, order 4, strategy ~8 R
SOLVE_BYTES_PER_STATE_AND_PLAYER = 20

TIE_RULES = {
    "first": "among the mover's best moves (turn-based) or the pure equilibria "
             "(simultaneous), the first in the engine's move order (row-major, player 0's "
             "move slowest)",
    "welfare": "among the mover's best moves or the pure equilibria, the largest sum of "
               "all players' values, then the first in the engine's move order",
}


def check_selection(selection: str) -> str:
    if selection not in SELECTIONS:
        raise GameError(f"unknown tie rule {selection!r} for games of three or more "
                        f"players; use one of {', '.join(SELECTIONS)}")
    return selection


def check_memory(dag: JointDag, memory_mb: float | None) -> None:
    need = dag.nbytes() + SOLVE_BYTES_PER_STATE_AND_PLAYER * dag.num_players * dag.num_states
    if memory_mb is not None and need > memory_mb * 2**20:
        raise LimitReached(f"solving {dag.num_states:,} states needs about "
                           f"{need / 2**20:.0f} MB, over the budget of {memory_mb:.0f} MB")


class Induction:
    """Values, chosen moves and mixed strategies of one backward induction."""

    def __init__(self, dag: JointDag, selection: str,
                 where: Callable[[int], str] | None = None) -> None:
        self.dag = dag
        self.where = where or (lambda state: f"state {state}")
        self.selection = check_selection(selection)
        self.values = np.full((dag.num_states, dag.num_players), np.nan)
        terminal = dag.terminal
        self.values[terminal] = dag.payoff[terminal]
        self.solved = terminal.copy()
        # a pure state's joint move as a cell index (row-major); -1: mixed or terminal
        self.cell = np.full(dag.num_states, -1, dtype=np.int64)
        self.mixed: dict[int, tuple[np.ndarray, ...]] = {}
        self.methods: dict[str, int] = {}
        self.worst_regret = 0.0
        payoff = dag.payoff[terminal]
        spread = float(payoff.max() - payoff.min()) if payoff.size else 0.0
        self.tolerance = TOLERANCE * (spread if spread > 0 else 1.0)

    def solve_states(self, states: np.ndarray) -> None:
        """Steps 2-5 for ``states``, whose children are all solved."""
        dag = self.dag
        shape = np.concatenate([dag.counts[states].astype(np.int64),
                                dag.nk[states, None].astype(np.int64)], axis=1)
        order, cuts = _shape_groups(shape)
        for group in np.split(order, cuts):
            key = shape[group[0]]
            self._solve_group(states[group], tuple(int(k) for k in key[:-1]), int(key[-1]))
        self.solved[states] = True

    def _solve_group(self, group: np.ndarray, counts: tuple[int, ...], nk: int) -> None:
        dag, r = self.dag, self.dag.num_players
        cells = int(np.prod(counts))
        idx = concat_ranges(dag.entry_start[group], np.full(group.size, cells * nk))
        u = self.values[dag.entry_child[idx]].reshape(group.size, cells, nk, r).mean(axis=2)
        tensor = u.reshape(group.size, *counts, r)
        stable = np.ones((group.size, *counts), dtype=bool)
        for p in range(r):
            if counts[p] > 1:
                own = tensor[..., p]
                stable &= own >= own.max(axis=1 + p, keepdims=True) - self.tolerance
        stable = stable.reshape(group.size, cells)
        if self.selection == "welfare":
            welfare = np.where(stable, u.sum(axis=2), -np.inf)
            stable &= welfare >= welfare.max(axis=1, keepdims=True) - self.tolerance
        pure = stable.any(axis=1)
        chosen = stable.argmax(axis=1)      # the first True: the engine's order
        rows = np.flatnonzero(pure)
        self.cell[group[rows]] = chosen[rows]
        self.values[group[rows]] = u[rows, chosen[rows]]
        turn_based = sum(c > 1 for c in counts) <= 1
        kind = "turn-based" if turn_based else "pure"
        self.methods[kind] = self.methods.get(kind, 0) + int(rows.size)
        for row in np.flatnonzero(~pure).tolist():
            state = int(group[row])
            found = solve_stage(tensor[row], self.where(state))
            self.mixed[state] = found.strategies
            self.values[state] = expected_payoffs(tensor[row], found.strategies)
            self.methods["mixed " + found.method] = self.methods.get(
                "mixed " + found.method, 0) + 1
            self.worst_regret = max(self.worst_regret, found.regret)

    def result(self, solver: str) -> JointSolution:
        """The JointSolution (strategies one-hot at pure states, the profile at mixed)."""
        dag = self.dag
        start = strategy_layout(dag, self.solved)
        strategy = np.zeros(int(start[-1]))
        counts = dag.counts.astype(np.int64)
        offset = np.cumsum(counts, axis=1) - counts          # each player's first slot
        pure = np.flatnonzero(self.cell >= 0)
        rest = self.cell[pure].copy()
        for p in reversed(range(dag.num_players)):            # row-major: last player fastest
            move = rest % counts[pure, p]
            rest //= counts[pure, p]
            strategy[start[pure] + offset[pure, p] + move] = 1.0
        for state, profile in self.mixed.items():
            strategy[start[state]:start[state + 1]] = np.concatenate(profile)
        mixed = sum(v for k, v in self.methods.items() if k.startswith("mixed"))
        notes = {"tie_rule": f"{self.selection}: {TIE_RULES[self.selection]}",
                 "turn_based_states": self.methods.get("turn-based", 0),
                 "pure_states": self.methods.get("pure", 0),
                 "mixed_states": mixed}
        if mixed:
            notes["mixed_methods"] = {k[len("mixed "):]: v for k, v in self.methods.items()
                                      if k.startswith("mixed")}
            notes["mixed_max_regret"] = self.worst_regret
        return JointSolution(self.values, self.solved.copy(), start, strategy, solver,
                             notes=notes)


def _shape_groups(shape: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row order, cut points): the rows of ``shape`` sorted so equal rows are
    consecutive (one int64 code a row: a sort of ints, not ``np.unique(axis=0)``'s of
    rows, which took most of a solve)."""
    radix = shape.max(axis=0) + 1
    if float(np.prod(radix.astype(float))) >= 2.0**62:
        _, code = np.unique(shape, axis=0, return_inverse=True)
        code = code.ravel()
    else:
        code = shape @ np.concatenate([np.cumprod(radix[::-1])[::-1][1:], [1]])
    order = np.argsort(code, kind="stable")
    return order, np.flatnonzero(np.diff(code[order])) + 1


def solve(dag: JointDag, selection: str = "first", progress: Progress | None = None,
          time_limit: float | None = None, memory_mb: float | None = None,
          where: Callable[[int], str] | None = None) -> JointSolution:
    """A subgame-perfect equilibrium of ``dag`` (see the module docstring); ``where``
    names a state in messages (e.g. its GDL facts)."""
    check_memory(dag, memory_mb)
    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    order, bounds = level_order(dag, heights(dag))  # type: ignore[arg-type]
    work = Induction(dag, selection, where)
    total, done = int(np.count_nonzero(~dag.terminal)), 0
    for h in range(1, len(bounds) - 1):
        for part in chunks(dag, order[bounds[h]:bounds[h + 1]], CHUNK_ENTRIES):  # type: ignore[arg-type]
            work.solve_states(part)
            done += len(part)
            if progress is not None:
                progress(done, total)
            if deadline is not None and time.perf_counter() > deadline:
                raise LimitReached(f"time limit reached after solving {done:,} of "
                                   f"{total:,} states")
    return work.result("spe")
