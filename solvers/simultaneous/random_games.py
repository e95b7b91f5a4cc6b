"""Random simultaneous-move games of the thesis' experiments (sections 4.2.3 and 4.3.4).

Payoffs of terminal entries are uniform in ``[-1, 1]`` for both players, independently,
or ``u1 = -u0`` with ``zero_sum``. Every game comes from ``numpy.random.default_rng(seed)``.

* :func:`full_game` (section 4.3.4, Table 4.3): exactly ``a`` actions per player at
  every node and full depth ``d``: every entry above depth ``d`` has a child, so the
  game has ``((a^2)^(d+1) - 1) / (a^2 - 1)`` nodes (Lemma 4.1.11). Built level by level
  with whole arrays (66,430 nodes for ``a = 3, d = 5``).
* :func:`variable_game` (section 4.2.3, Tables 4.1/4.2): ``2 <= |A_h^i| <= a`` actions,
  uniform, per node and player; depth at most ``d``. The thesis does not say how the
  depth varies; we give every node above depth ``d`` a number of child entries uniform
  in ``1..|E|`` (the entries chosen uniformly), which reproduces Table 4.1's node
  counts for ``d <= 3`` (means 3.5 / 9.8 / 25 against the table's 4 / 9 / 23; minimum
  ``d + 1``, a chain). Nodes are numbered breadth first.
"""

from __future__ import annotations

import numpy as np

from solvers.errors import GameError
from solvers.simultaneous.dag import StateDag
from solvers.simultaneous.model import TERMINAL, SimultaneousGame

#: generators refuse games with more nodes than this
MAX_NODES = 50_000_000


def _payoffs(rng: np.random.Generator, count: int, zero_sum: bool) -> np.ndarray:
    u0 = rng.uniform(-1.0, 1.0, count)
    u1 = -u0 if zero_sum else rng.uniform(-1.0, 1.0, count)
    return np.stack([u0, u1], axis=1)


def _check(actions: int, depth: int, low: int) -> None:
    if actions < low or depth < 0:
        raise GameError(f"need --actions >= {low} and --depth >= 0 (got {actions}, {depth})")


def full_game(actions: int, depth: int, seed: int, zero_sum: bool = False) -> SimultaneousGame:
    """Section 4.3.4: exactly ``actions`` per player, every path of length ``depth``."""
    _check(actions, depth, 1)
    rng = np.random.default_rng(seed)
    per_node = actions * actions
    counts = [per_node ** k for k in range(depth + 1)]
    total = sum(counts)
    if total > MAX_NODES:
        raise GameError(f"a full ({actions}, {depth}) game has {total} nodes: too many "
                        f"(limit {MAX_NODES})")
    inner = total - counts[-1]  # nodes above the last level
    child = np.full(total * per_node, TERMINAL, dtype=np.int32)
    child[:inner * per_node] = np.arange(1, inner * per_node + 1, dtype=np.int32)
    payoff = np.zeros((total * per_node, 2))
    payoff[inner * per_node:] = _payoffs(rng, counts[-1] * per_node, zero_sum)
    return SimultaneousGame.from_arrays(np.full((total, 2), actions), child, payoff)


def variable_game(actions: int, depth: int, seed: int, zero_sum: bool = False) -> SimultaneousGame:
    """Section 4.2.3: 2..``actions`` actions per node and player, depth at most ``depth``."""
    _check(actions, depth, 2)
    rng = np.random.default_rng(seed)
    shapes: list[np.ndarray] = []
    children: list[np.ndarray] = []
    level_nodes, next_id = 1, 1
    for level in range(depth + 1):
        shape = rng.integers(2, actions + 1, size=(level_nodes, 2))
        shapes.append(shape)
        sizes = shape[:, 0] * shape[:, 1]
        total = int(sizes.sum())
        child = np.full(total, TERMINAL, dtype=np.int64)
        if level < depth:
            # per node: k uniform in 1..|E|, then the k entries with the smallest keys
            owner = np.repeat(np.arange(level_nodes), sizes)
            k = rng.integers(1, sizes + 1)
            order = np.lexsort((rng.random(total), owner))
            start = np.cumsum(sizes) - sizes
            rank = np.empty(total, dtype=np.int64)
            rank[order] = np.arange(total) - start[owner[order]]
            chosen = np.flatnonzero(rank < k[owner])
            child[chosen] = np.arange(next_id, next_id + chosen.size)
            next_id += chosen.size
        children.append(child)
        level_nodes = int((child >= 0).sum())
        if next_id > MAX_NODES:
            raise GameError(f"the random game grew past {MAX_NODES} nodes; use a smaller depth")
        if level_nodes == 0:
            break
    child = np.concatenate(children)
    payoff = np.zeros((len(child), 2))
    terminal = child < 0
    payoff[terminal] = _payoffs(rng, int(terminal.sum()), zero_sum)
    return SimultaneousGame.from_arrays(np.concatenate(shapes), child, payoff)


def random_game(actions: int, depth: int, seed: int, full: bool = False,
                zero_sum: bool = False) -> SimultaneousGame:
    """``full_game`` (4.3.4) or ``variable_game`` (4.2.3)."""
    make = full_game if full else variable_game
    return make(actions, depth, seed, zero_sum)


def random_dag(actions: int, depth: int, width: int, seed: int, zero_sum: bool = False,
               outcomes: int = 1) -> StateDag:
    """A random :class:`~.dag.StateDag` with shared states and nature (not from the thesis).

    ``2 * width`` terminal states with payoffs as above; ``depth`` levels of ``width``
    states (one, the root, at the top), each with ``1..actions`` actions per player
    and ``1..outcomes`` equally likely outcomes per joint move, every entry leading to
    a state of a lower level drawn uniformly (so states are shared). States are
    numbered from the root down, as an expansion numbers them.
    """
    _check(actions, depth, 1)
    rng = np.random.default_rng(seed)
    counts = [2 * width] + [width] * (depth - 1) + [1] * (depth > 0)
    total = sum(counts)
    if total > MAX_NODES:
        raise GameError(f"a random DAG of {total} states is too large (limit {MAX_NODES})")
    low = np.cumsum(counts) - counts            # first state of each level, bottom-up ids
    shape = np.zeros((total, 3), dtype=np.int64)
    kids: list[np.ndarray] = []
    for level in range(1, len(counts)):
        k = counts[level]
        shape[low[level]:low[level] + k, :2] = rng.integers(1, actions + 1, size=(k, 2))
        shape[low[level]:low[level] + k, 2] = rng.integers(1, outcomes + 1, size=k)
        size = int(shape[low[level]:low[level] + k].prod(axis=1).sum())
        kids.append(rng.integers(0, low[level], size=size))
    flip = total - 1 - np.arange(total)          # root first
    shape = shape[flip]
    child = flip[np.concatenate(kids[::-1])] if kids else np.zeros(0, dtype=np.int64)
    payoff = np.zeros((total, 2))
    payoff[flip[:counts[0]]] = _payoffs(rng, counts[0], zero_sum)
    start = np.zeros(total + 1, dtype=np.int64)
    start[1:] = np.cumsum(shape.prod(axis=1))
    dag = StateDag(n0=shape[:, 0].astype(np.uint16), n1=shape[:, 1].astype(np.uint16),
                   nk=shape[:, 2].astype(np.uint16), entry_start=start,
                   entry_child=child.astype(np.int32), payoff=payoff, root=0)
    dag.validate()
    return dag
