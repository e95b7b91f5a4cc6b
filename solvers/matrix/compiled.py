"""When the level solver uses the compiled simplex (:mod:`.simplex_kernels`).

The rule (as :mod:`gdl.kernels` for the expansion): with numba installed and
``GGP_NUMBA=0`` not set, the first call with at least :data:`MIN_GAMES`
constant-sum games for the LP loads the kernel (:func:`load`), and from then on
every call takes it; before that, and always without numba, the games take the
block LP (HiGHS). Both give the unique value of each game, exact to rounding (the
tests run both); the optimal strategies kept may differ.

Why: importing numba and loading the disk-cached kernel cost about 1 s of CPU
(measured here), about what HiGHS spends on 20,000 games in block LPs (about
50 us a game); the kernel then takes about 1 us a game.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

from solvers.numba_switch import numba_allowed

ENABLED = numba_allowed()
MIN_GAMES = 2_000
_loaded: ModuleType | None = None


def simplex(games: int) -> ModuleType | None:
    """:mod:`.simplex_kernels` when a call with ``games`` LP games should use it."""
    if not ENABLED or (_loaded is None and games < MIN_GAMES):
        return None
    return _loaded or load()


def load() -> ModuleType | None:
    """Import numba and the kernel now (None when numba does not import)."""
    global _loaded, ENABLED
    try:
        kernels = import_module("solvers.matrix.simplex_kernels")
    except ImportError:
        ENABLED = False
        return None
    kernels.warm_up()
    _loaded = kernels
    return kernels
