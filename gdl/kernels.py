"""When the batched expansion uses its compiled kernels (:mod:`gdl.batch_kernels`).

The rule: a batch of at least :data:`MIN_ITEMS` items (states, transitions or
rows) goes through the numba kernels when numba is installed and the environment
does not set ``GGP_NUMBA=0``; smaller batches, and every batch without numba, take
the numpy passes. The results are the same bit for bit (the tests run both).

Why a threshold: importing numba costs about 0.5 s and loading the cached
kernels about 0.4-1 s more (a first compile, once per installation, about 10 s);
a game whose batches stay small expands in well under a second with numpy
(simultaneous tic-tac-toe: 0.1 s), so it never pays that. A game with batches of
50,000 transitions runs for seconds, and the kernels are 2.5-3.5 times faster.
"""

from __future__ import annotations

import os
from importlib.util import find_spec
from types import ModuleType

ENABLED = (os.environ.get("GGP_NUMBA", "1") != "0"
           and find_spec("numba") is not None)
MIN_ITEMS = 50_000


def compiled(items: int) -> ModuleType | None:
    """:mod:`gdl.batch_kernels` when a batch of ``items`` should use it, else None."""
    if not ENABLED or items < MIN_ITEMS:
        return None
    from gdl import batch_kernels
    return batch_kernels
