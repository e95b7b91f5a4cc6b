"""The ``ggp`` command: one entry point that hands each subcommand to its package.

Subcommands are named here as ``module:function`` strings and imported only when
used, so ``ggp agent`` never loads the server and the layers stay apart. Every
handler takes its own argv (``list[str]``) and returns an exit status.

Errors: a :class:`solvers.errors.GameError` becomes one line on stderr and exit 1;
anything unexpected becomes one line and exit 70 (``GGP_DEBUG=1`` shows the
traceback). Never a bare traceback.
"""

from __future__ import annotations

import importlib
import os
import sys
import textwrap
import traceback
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from solvers.errors import GameError

# subcommand -> (handler, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("server.cli.demo:main", "the main job: solve simultaneous tic-tac-toe, then play a demo match"),
    "check": ("gdl.cli.check:check_main", "parse and validate a GDL game, print a summary or every problem"),
    "playout": ("gdl.cli.check:playout_main", "random playouts of a GDL game (trace, speed)"),
    "solve": ("", "solve a game file (.kif, .efg, tree-format .txt, .osposg)"),
    "random-game": ("solvers.cli.simultaneous:random_game_main", "write a random simultaneous-move game as .efg"),
    "convert": ("gdl.cli.gdl2:convert_main",
                "write a GDL-II game as an extensive-form game (.efg for Gambit, or tree text)"),
    "exploitability": ("solvers.cli.extensive:exploitability_main", "NashConv of a strategy file for an .efg/tree game"),
    "bench": ("", "benchmarks beside their peers (ggp bench --help lists them)"),
    "agent": ("agent.cli:main", "run the GGP agent (--http PORT or --ws URL)"),
    "serve": ("server.cli.commands:serve_main", "run the websocket match server"),
    "match": ("server.cli.commands:match_main", "play one match on an embedded server"),
    "tournament": ("server.cli.commands:tournament_main", "round-robin tournament with standings"),
    "client": ("server.cli.client:main",
               "create, list, watch and abort matches on a running ggp serve"),
    "matches": ("server.cli.commands:matches_main",
                "recorded matches (list, show, export), tournaments and their standings"),
    "ratings": ("server.cli.ratings:main",
                "Bradley-Terry ratings with 95% CIs over the recorded matches, head to head"),
}

# bench -> (handler, one-line help)
BENCHES: dict[str, tuple[str, str]] = {
    "gdl": ("gdl.bench.gdl:main", "GDL engines' playout speed beside the SWI-Prolog oracle"),
    "corpus": ("gdl.bench.corpus:main", "expand and solve the GDL corpus's games (--all: every kind)"),
    "thesis": ("solvers.bench.thesis:main",
               "the thesis' random-game tables: baseline and IH beside Gambit's LCP"),
    "cfr": ("solvers.bench.cfr:main", "CFR and CFR+ on Kuhn and Leduc beside OpenSpiel"),
    "server": ("server.bench.server:main", "many concurrent matches on one match server"),
    "spectators": ("server.bench.spectators:main",
                   "a tournament watched by open match pages: page delay, relay with and without"),
    "ray": ("server.bench.ray:main",
            "a tournament and a sharded solve on a local Ray cluster beside one process"),
    "agent": ("agent.bench.agent:main",
              "our agent against random or UCT opponents on a game; --opponent URL: against "
              "any GGP HTTP player through our server (the versus bench)"),
    "versus": ("server.bench.versus:main",
               "our agent against a GGP HTTP player (e.g. Sancho), each pinned to a core"),
    "gdl2": ("agent.bench.gdl2:main",
             "the agent in GDL-II games: against random, and on Kuhn poker against the equilibrium"),
    "fuzz": ("ggp_cli:fuzz_main",
             "mutated game files and protocol messages: tracebacks and hangs per format"),
    "expand": ("gdl.bench.expand:main",
               "expansion of big GDL games: batched against per-state, states/s and bytes"),
    "level": ("gdl.bench.level:main",
              "level-batched matrix games on the compact DAG against the per-node path"),
    "doab": ("gdl.bench.doab:main",
             "baseline, BIαβ and DOαβ on the same games: nodes evaluated and CPU time"),
    "solve": ("gdl.bench.solve:main",
              "Goofspiel and Oshi-Zumo solved beside OpenSpiel's value iteration"),
}

# `ggp bench fuzz`: format -> its target (a gdl.fuzz.tally.Target), each in the package
# that reads the input; gdl.bench.fuzz runs the ones given to it (gdl imports neither
# agent nor server, so the six are composed here)
FUZZ_TARGETS: dict[str, str] = {
    "kif": "gdl.fuzz.files:KIF",
    "efg": "gdl.fuzz.files:EFG",
    "tree": "gdl.fuzz.files:TREE",
    "osposg": "gdl.fuzz.files:OSPOSG",
    "ws": "server.bench.fuzz:TARGET",
    "ggp-http": "agent.bench.fuzz:TARGET",
}

SOLVE_FLAGS = {"--json", "--quiet"}  # options of `ggp solve` that take no value


def solve_front_ends() -> list[tuple[str, str]]:
    """(title, parser factory) of every ``ggp solve`` front end: each format of
    :mod:`gdl.formats` with each model of :mod:`solvers.registry` that applies to it."""
    # deferred: the registries load the readers and solvers (scipy): `ggp solve` only
    from gdl.formats import FORMATS
    from solvers import registry

    out = []
    for fmt in FORMATS.values():
        by_module: dict[str, list[str]] = {}   # models one front end takes share a section
        for model, module in fmt.solve.items():
            by_module.setdefault(module, []).extend(registry.names(model))
        for module, names in by_module.items():
            summary = fmt.summary[:1].upper() + fmt.summary[1:]  # a heading: capitalised
            title = (f"{summary}: FILE{'|'.join(fmt.suffixes)}"
                     + (f" --solver {'|'.join(names)}" if len(names) > 1 else ""))
            out.append((title, f"{module}:solve_parser"))
    return out


def solve_help() -> str:
    """One help text for every front end of ``ggp solve``, options from their parsers."""
    intro = ("Solve a game file. The format follows from the file's suffix (else, without "
             "one, from how it begins), the solver family from --solver (else the format's first); "
             "--json prints one object whose fields are listed in docs/solve-json.md.")
    lines = ["usage: ggp solve FILE [options]", "", textwrap.fill(intro, 78), ""]
    for title, target in solve_front_ends():
        parser = _load(target)()
        formatter = parser._get_formatter()
        formatter.start_section(title)
        formatter.add_text(parser.description)
        formatter.add_arguments([a for a in parser._actions
                                 if a.option_strings and a.dest != "help"])
        formatter.end_section()
        lines.append(formatter.format_help())
    return "\n".join(lines).rstrip()


def _solve_file(argv: Sequence[str]) -> str | None:
    """The game file of a ``ggp solve`` command line (not an option's value)."""
    previous = ""
    for arg in argv:
        takes_value = previous.startswith("-") and "=" not in previous \
            and previous not in SOLVE_FLAGS
        if not arg.startswith("-") and not takes_value:
            return arg
        previous = arg
    return None


def _solve_handler(argv: Sequence[str]) -> str:
    """The ``ggp solve`` front end: the file's format (:mod:`gdl.formats`) and the model
    of ``--solver`` (:mod:`solvers.registry`; else the format's first)."""
    # deferred: the registries load the readers and solvers (scipy): `ggp solve` only
    from gdl.formats import detect_format, game_format
    from solvers import registry

    path = _solve_file(argv) or ""
    fmt = game_format(detect_format(path, _head(path)))
    if not fmt.solve:   # a format the server plays but no solver takes
        raise _UsageError(f"ggp solve: no solver takes {fmt.name} games ({fmt.summary})")
    solver = _option_value(argv, "--solver")
    model = registry.model_of(solver) if solver else None
    if model is None:   # no --solver, or an unknown one the default front end refuses
        return next(iter(fmt.solve.values())) + ":solve_main"
    if model not in fmt.solve:
        usable = ", ".join(name for m in fmt.solve for name in registry.names(m))
        raise _UsageError(f"ggp solve: --solver {solver} does not apply to {fmt.name} games "
                          f"(usable: {usable})")
    return fmt.solve[model] + ":solve_main"


def _head(path: str) -> str:
    """The first bytes of a file, to tell its format when its suffix does not."""
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read(200)
    except OSError:
        return ""   # the front end reports the missing file


def _option_value(argv: Sequence[str], name: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def fuzz_targets() -> dict[str, Any]:
    """:data:`FUZZ_TARGETS`, loaded."""
    return {name: _load(target) for name, target in FUZZ_TARGETS.items()}


def fuzz_main(argv: list[str]) -> int:
    """``ggp bench fuzz``: :func:`gdl.bench.fuzz.main` over every target."""
    return _load("gdl.bench.fuzz:main")(argv, fuzz_targets())


def run_fuzz(formats: Sequence[str] = tuple(FUZZ_TARGETS), *args: Any, **options: Any
             ) -> dict[str, Any]:
    """:func:`gdl.bench.fuzz.run_fuzz` (the library call of ``ggp bench fuzz``) over
    every target."""
    return _load("gdl.bench.fuzz:run_fuzz")(formats, *args, targets=fuzz_targets(), **options)


def _load(target: str) -> Any:
    """The attribute a ``module:attribute`` string names, its module imported now."""
    module_name, attribute = target.split(":")
    # (this module itself, also when it runs as __main__: not imported a second time)
    module = sys.modules[__name__] if module_name == "ggp_cli" else \
        importlib.import_module(module_name)
    return getattr(module, attribute)


def _usage() -> str:
    lines = ["usage: ggp [--version] COMMAND [ARGS...]", "", "commands:"]
    lines += _table(COMMANDS)
    lines += ["", "benches (ggp bench NAME [options]):"] + _table(BENCHES)
    lines += ["", "'ggp COMMAND --help' for a command's options."]
    return "\n".join(lines)


def _bench_usage() -> str:
    lines = ["usage: ggp bench NAME [options]", "", "benches:"] + _table(BENCHES)
    lines += ["", "'ggp bench NAME --help' for a bench's options."]
    return "\n".join(lines)


def _table(entries: dict[str, tuple[str, str]]) -> list[str]:
    width = max(len(name) for name in entries)
    return [f"  {name.ljust(width)}  {help_}" for name, (_, help_) in entries.items()]


def _version() -> str:
    try:
        return f"ggp {version('ggp-solve')}"
    except PackageNotFoundError:  # run from a source tree that is not installed
        return "ggp (version unknown: not installed)"


def _resolve(argv: list[str]) -> tuple[str, list[str]]:
    """(handler target, handler argv) for a command line."""
    command, rest = argv[0], argv[1:]
    if command == "solve":
        if "-h" in rest or "--help" in rest:
            raise _Help(solve_help())
        if _solve_file(rest) is None:
            raise _UsageError("ggp solve: no game file given\n\n" + solve_help())
        return _solve_handler(rest), rest
    if command == "bench":
        if rest[:1] in (["-h"], ["--help"]):
            raise _Help(_bench_usage())
        if not rest or rest[0] not in BENCHES:
            unknown = f"ggp bench: unknown bench {rest[0]!r}\n\n" if rest else ""
            raise _UsageError(unknown + _bench_usage())
        opponent = _option_value(rest, "--opponent") or ""
        if rest[0] == "agent" and opponent.startswith(("http://", "https://")):
            return BENCHES["versus"][0], rest[1:]   # a GGP HTTP player: the versus bench
        return BENCHES[rest[0]][0], rest[1:]
    if command not in COMMANDS:
        raise _UsageError(f"ggp: unknown command {command!r}\n\n{_usage()}")
    return COMMANDS[command][0], rest


class _UsageError(Exception):
    pass


class _Help(Exception):
    """A help text asked for (printed on stdout, exit 0)."""


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    except BrokenPipeError:  # the reader went away (`ggp --help | head`): output ends here
        _silence_stdout()
        return 0


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush into the closed pipe
    raises nothing either."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # no file behind stdout (captured in tests)
        pass


def _main(args: list[str]) -> int:
    if not args or args[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0 if args else 2
    if args[0] in ("--version", "-V", "version"):
        print(_version())
        return 0
    try:
        target, rest = _resolve(args)
        handler = _load(target)
        return int(handler(rest) or 0)
    except _Help as exc:
        print(exc)
        return 0
    except _UsageError as exc:
        print(exc, file=sys.stderr)
        return 2
    except GameError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except SystemExit as exc:  # argparse exits; keep its status
        return exc.code if isinstance(exc.code, int) else 1
    except Exception as exc:  # never a bare traceback at the command line
        if os.environ.get("GGP_DEBUG"):
            traceback.print_exc()
        print(f"internal error: {type(exc).__name__}: {exc} (set GGP_DEBUG=1 for details)",
              file=sys.stderr)
        return 70


if __name__ == "__main__":
    sys.exit(main())
