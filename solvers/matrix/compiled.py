"""When the level solver uses the compiled simplex (:mod:`.simplex_kernels`).

The rule (as :mod:`gdl.reasoning.kernels` for the expansion): with numba installed and
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

from solvers.numba_switch import LazyKernels

MIN_GAMES = 2_000
SIMPLEX = LazyKernels("solvers.matrix.simplex_kernels", MIN_GAMES)
simplex = SIMPLEX.when  # .simplex_kernels when a call with that many LP games should use it
load = SIMPLEX.load
