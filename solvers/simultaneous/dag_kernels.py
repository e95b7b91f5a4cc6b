"""Compiled (numba) kernel for :func:`~.dag.heights` on deep DAGs.

Relaxation costs one pass over every entry per height, so a game 500 moves deep
reads its entries 500 times; this depth-first walk reads them twice (once to
descend, once to take the maximum), whatever the depth. Imported only when a
DAG turns out deep (see :func:`~.dag.heights`), so shallow games never pay
numba's import.
"""

from __future__ import annotations

import numpy as np
from numba import njit

UNSEEN, OPEN, DONE = 0, 1, 2


@njit(cache=True)
def heights_dfs(entry_start: np.ndarray, entry_child: np.ndarray,
                terminal: np.ndarray, height: np.ndarray) -> bool:
    """Fill ``height`` (int32 [S]) with each state's longest path to a terminal
    state; False when the states form a cycle."""
    s_count = len(terminal)
    status = np.zeros(s_count, dtype=np.uint8)
    stack = np.empty(s_count, dtype=np.int64)   # each state is open at most once
    cursor = np.empty(s_count, dtype=np.int64)  # the next entry to look at
    for root in range(s_count):
        if status[root] != UNSEEN:
            continue
        depth = 0
        stack[0] = root
        cursor[0] = entry_start[root]
        status[root] = OPEN
        while depth >= 0:
            state = stack[depth]
            end = entry_start[state + 1]
            pos = cursor[depth]
            descended = False
            while pos < end:
                child = entry_child[pos]
                pos += 1
                if status[child] == UNSEEN:
                    cursor[depth] = pos
                    depth += 1
                    stack[depth] = child
                    cursor[depth] = entry_start[child]
                    status[child] = OPEN
                    descended = True
                    break
                if status[child] == OPEN:
                    return False
            if descended:
                continue
            best = -1
            if not terminal[state]:
                for e in range(entry_start[state], end):
                    h = height[entry_child[e]]
                    if h > best:
                        best = h
            height[state] = best + 1
            status[state] = DONE
            depth -= 1
    return True
