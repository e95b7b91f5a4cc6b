"""When the batched expansion uses its compiled kernels (:mod:`gdl.reasoning.batch_kernels`).

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

from solvers.numba_switch import LazyKernels

MIN_ITEMS = 50_000
KERNELS = LazyKernels("gdl.reasoning.batch_kernels", MIN_ITEMS)
compiled = KERNELS.when  # gdl.reasoning.batch_kernels when a batch of that many items should use it
load = KERNELS.load      # compile (or load from the disk cache) every kernel now
