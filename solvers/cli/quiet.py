"""``--quiet``, the same on every ``ggp solve`` front end: no progress lines on stderr."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable


def add_quiet(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def stderr_lines(args: argparse.Namespace) -> Callable[[str], None] | None:
    """Where progress lines go: stderr, or nowhere with ``--quiet`` (or ``--json``)."""
    if args.quiet or getattr(args, "json", False):
        return None
    return lambda line: print(line, file=sys.stderr, flush=True)
