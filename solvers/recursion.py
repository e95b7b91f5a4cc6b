"""Python's recursion limit raised while deep recursive work runs.

Generated GDL code (``gdl.reasoning.topdown``) and the exact endgame solver
(``solvers.search.exact``) recurse once per derivation step or game move. In CPython
3.11+ Python-to-Python calls use no C stack, so a limit far above the default 1,000
is safe; it still stops a real cycle.
"""

from __future__ import annotations

import sys
import threading

RECURSION_LIMIT = 100_000


class DeepRecursion:
    """Python's recursion limit raised to RECURSION_LIMIT while any guarded work runs,
    in any thread (counted under a lock: one thread must not lower it under another)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active = 0
        self._saved = 0

    def __enter__(self) -> None:
        with self._lock:
            if self._active == 0:
                self._saved = sys.getrecursionlimit()
                sys.setrecursionlimit(max(self._saved, RECURSION_LIMIT))
            self._active += 1

    def __exit__(self, *_exc: object) -> None:
        with self._lock:
            self._active -= 1
            if self._active == 0:
                sys.setrecursionlimit(self._saved)


deep_recursion = DeepRecursion()
