"""The trailing GRAVE arguments of the graph kernels' ``select`` and ``backup``, for
tests that call those kernels on hand-made graphs (agent/search/graph_kernels.py)."""

from __future__ import annotations

import math

import numpy as np


def select_grave(moves: int, slot_move: np.ndarray | None = None,
                 rave: np.ndarray | None = None, grave_ref: float = math.inf,
                 bias: float = 1e-4) -> tuple:
    """``select``'s: the slots' moves, the AMAF statistics (none: ``grave`` off), the
    reference's visits, GRAVE's bias and the scratch arrays for ``moves`` moves."""
    return (np.zeros(1, dtype=np.int32) if slot_move is None else slot_move,
            np.zeros((0, 2), dtype=np.float32) if rave is None else rave, grave_ref, bias,
            np.full(4, -1, dtype=np.int64), np.full(moves, -1, dtype=np.int64),
            np.zeros(moves, dtype=np.int64))


def backup_grave(moves: int, rave: np.ndarray | None = None,
                 played: np.ndarray | None = None) -> tuple:
    """``backup``'s: the AMAF statistics (none: off), the playouts' moves per descent
    and the scratch array."""
    return (np.zeros((0, 2), dtype=np.float32) if rave is None else rave,
            np.zeros((1, moves), dtype=np.bool_) if played is None else played,
            np.zeros(moves, dtype=np.bool_))
