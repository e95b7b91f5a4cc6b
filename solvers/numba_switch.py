"""Whether compiled (numba) kernels may be used: numba installed and ``GGP_NUMBA=0``
not set. Every kernel has a numpy twin with the same results, so this only ever
changes speed (the tests run both)."""

from __future__ import annotations

import os
from importlib.util import find_spec


def numba_allowed() -> bool:
    return os.environ.get("GGP_NUMBA", "1") != "0" and find_spec("numba") is not None
