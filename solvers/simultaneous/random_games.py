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

from .model import TERMINAL, SimultaneousGame

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
