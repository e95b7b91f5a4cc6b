"""``python -m agent.worker_entry FD [...]``: the worker process's entry point.

:mod:`agent.worker` imports the brains' interface, the searches and numpy at module
level (about a second, more on a loaded machine); a Ctrl-C in the terminal reaches the
whole process group, so it can land inside those imports, before
:func:`agent.worker.main` could catch it. This module imports nothing heavy first:
the worker leaves quietly (exit 130) wherever the interrupt lands.
"""

from __future__ import annotations

import sys


def run(argv: list[str]) -> int:
    try:
        from agent.worker import main  # deferred: the heavy imports, under the guard

        return main(argv)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
