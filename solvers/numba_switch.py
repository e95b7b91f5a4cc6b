"""Whether compiled (numba) kernels may be used: numba installed and ``GGP_NUMBA=0``
not set. Every kernel has a numpy twin with the same results, so this only ever
changes speed (the tests run both)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import import_module
from importlib.util import find_spec
from types import ModuleType


def numba_allowed() -> bool:
    return os.environ.get("GGP_NUMBA", "1") != "0" and find_spec("numba") is not None


class LazyKernels:
    """A module of compiled kernels, loaded at the first call big enough to pay for
    numba's import and the kernels' load (``min_items``), then used by every call.

    ``enabled`` starts as :func:`numba_allowed`; a numba that does not import (say,
    built for another numpy) switches it off instead of failing. The module's
    ``warm_up()`` compiles its kernels, or loads them from the disk cache.
    """

    def __init__(self, module: str, min_items: int) -> None:
        self.module = module
        self.min_items = min_items
        self.enabled = numba_allowed()
        self.loaded: ModuleType | None = None

    def when(self, items: int) -> ModuleType | None:
        """The kernels when a call of ``items`` items should use them, else None."""
        if not self.enabled or (self.loaded is None and items < self.min_items):
            return None
        return self.loaded or self.load()

    @contextmanager
    def held(self) -> Iterator[None]:
        """No load inside (calls take the numpy passes unless the kernels are in):
        numba's import and the kernels' load are seconds on a loaded machine, and
        no time budget can stop them halfway."""
        enabled = self.enabled
        self.enabled = enabled and self.loaded is not None
        try:
            yield
        finally:
            self.enabled = enabled

    def load(self) -> ModuleType | None:
        """Import and warm the kernels now (None when numba does not import)."""
        try:
            kernels = import_module(self.module)
        except ImportError:
            self.enabled = False
            return None
        kernels.warm_up()
        self.loaded = kernels
        return kernels
