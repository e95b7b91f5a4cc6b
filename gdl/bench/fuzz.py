"""``ggp bench fuzz``: mutation fuzzing of every input the project reads from others.

The runner: each target (:class:`gdl.fuzz.tally.Target`) gets ``--mutants`` mutants,
drawn from a generator seeded by ``--seed`` and the format's name, and the outcomes
are printed per format (a table, or JSON). The targets are passed in: ``ggp_cli``
composes the six of ``ggp bench fuzz`` (its ``FUZZ_TARGETS``), each in the package it
fuzzes:

- ``kif``, ``efg``, ``tree``, ``osposg``: a game file (:mod:`gdl.fuzz.files`);
- ``ws``: one JSON message to a real match server (``server.bench.fuzz``);
- ``ggp-http``: one HTTP request to a real GGP HTTP player (``agent.bench.fuzz``).

The exit status is 1 when any mutant gave an internal error or a hang.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from gdl.fuzz.tally import Progress, Tally, Target
from solvers.errors import GameError


def run_fuzz(formats: Sequence[str], mutants: int = 1000, seed: int = 0,
             time_limit: float = 10.0, save: Path | None = None,
             progress: Progress = lambda kind, tally: None, *,
             targets: Mapping[str, Target]) -> dict[str, Tally | None]:
    """Fuzz each of ``formats`` with its target in ``targets`` (None: no seeds,
    skipped); the library call of ``ggp bench fuzz``."""
    results: dict[str, Tally | None] = {}
    for kind in formats:
        rng = random.Random(f"{seed}:{kind}")
        results[kind] = targets[kind].fuzz(kind, mutants, rng, time_limit, save, progress)
    return results


def _parser(targets: Mapping[str, Target]) -> argparse.ArgumentParser:
    names = ",".join(targets)
    parser = argparse.ArgumentParser(prog="ggp bench fuzz", description=(
        f"mutation fuzzing of every input format "
        f"({', '.join(target.what for target in targets.values())}): per format, "
        "mutants, clean errors, accepted, internal errors (tracebacks) and hangs"))
    parser.add_argument("--mutants", type=int, default=1000, help="per format (default 1000)")
    parser.add_argument("--formats", default=names, help=f"comma-separated subset of {names}")
    parser.add_argument("--seed", type=int, default=0, help="seed of the mutations")
    parser.add_argument("--time-limit", type=float, default=10.0, metavar="SECONDS",
                        help="per input; longer is a hang (default 10)")
    parser.add_argument("--save", type=Path, metavar="DIR",
                        help="write every failing input to DIR")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return parser


def main(argv: Sequence[str], targets: Mapping[str, Target]) -> int:
    """``ggp bench fuzz`` over ``targets`` (format name -> target, in table order)."""
    args = _parser(targets).parse_args(list(argv))
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    unknown = [f for f in formats if f not in targets]
    if unknown:
        raise GameError(f"--formats: unknown {', '.join(unknown)} (use {', '.join(targets)})")
    if args.mutants < 1 or not args.time_limit > 0:
        raise GameError("--mutants and --time-limit must be positive")

    def progress(kind: str, tally: Tally) -> None:
        if tally.mutants % 100 == 0 and not args.json:
            print(f"\r{kind}: {tally.mutants}/{args.mutants}", end="", file=sys.stderr,
                  flush=True)

    results = run_fuzz(formats, args.mutants, args.seed, args.time_limit, args.save, progress,
                       targets=targets)
    if not args.json:
        print("\r", end="", file=sys.stderr)
    if args.json:
        print(json.dumps({k: (t.row() | {"examples": t.examples}) if t else None
                          for k, t in results.items()}))
    else:
        print(table(results))
    failed = any(t and (t.internal or t.hangs) for t in results.values())
    return 1 if failed else 0


def table(results: Mapping[str, Tally | None]) -> str:
    """The printed report: a row per format, then the first failures of each."""
    lines = [f"{'format':<10}{'seeds':>7}{'mutants':>9}{'clean errors':>14}{'accepted':>10}"
             f"{'internal':>10}{'hangs':>7}"]
    for kind, tally in results.items():
        if tally is None:
            lines.append(f"{kind:<10}  skipped: no seed files")
            continue
        row = tally.row()
        lines.append(f"{kind:<10}{row['seeds']:>7}{row['mutants']:>9}{row['clean_errors']:>14}"
                     f"{row['accepted']:>10}{row['internal_errors']:>10}{row['hangs']:>7}")
    for kind, tally in results.items():
        for example in tally.examples if tally else ():
            lines.append(f"\n{kind} {example}")
    return "\n".join(lines)
