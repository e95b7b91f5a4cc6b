"""When the batched expansion uses its compiled kernels (:mod:`gdl.batch_kernels`).

The rule: with numba installed and ``GGP_NUMBA=0`` not set, the first batch of at
least :data:`MIN_ITEMS` items (states, transitions or rows) loads the kernels
(:func:`load`), and from then on every batch of the process takes them; before
that, and always without numba, batches take the numpy passes. The results are
the same bit for bit (the tests run both).

Why: importing numba costs about 0.3 s of CPU and loading the disk-cached kernels
about 0.4 s more (the first compile, once per installation, about 5 s); a game
whose batches stay small expands in about 0.1 s with numpy (simultaneous
tic-tac-toe), so it never pays that, while a game with a batch of 50,000
transitions runs for seconds, 3-4 times faster with the kernels. Once they are
loaded they win at every size (simultaneous tic-tac-toe: 0.017 s instead of
0.09 s), so the threshold no longer applies.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

from solvers.numba_switch import numba_allowed

ENABLED = numba_allowed()
MIN_ITEMS = 50_000
_loaded: ModuleType | None = None


def compiled(items: int) -> ModuleType | None:
    """:mod:`gdl.batch_kernels` when a batch of ``items`` should use it, else None."""
    if not ENABLED or (_loaded is None and items < MIN_ITEMS):
        return None
    return _loaded or load()


def load() -> ModuleType | None:
    """Import numba and the kernels and compile (or load from the disk cache) all
    of them now, rather than at their first batches. A numba that does not import
    (say, built for another numpy) switches the kernels off: None."""
    global _loaded, ENABLED
    try:
        batch_kernels = import_module("gdl.batch_kernels")
    except ImportError:
        ENABLED = False
        return None
    batch_kernels.warm_up()
    _loaded = batch_kernels
    return batch_kernels
