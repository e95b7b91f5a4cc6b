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
import traceback
from collections.abc import Callable, Sequence

# subcommand -> (handler, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("server.demo:main", "the main job: solve simultaneous tic-tac-toe, then play a demo match"),
    "check": ("gdl.cli:check_main", "parse and validate a GDL game, print a summary or every problem"),
    "playout": ("gdl.cli:playout_main", "random playouts of a GDL game (trace, speed)"),
    "solve": ("", "solve a game file (.kif, .efg, tree-format .txt, .osposg)"),
    "random-game": ("solvers.simultaneous.cli:random_game_main", "write a random simultaneous-move game as .efg"),
    "exploitability": ("solvers.extensive.cli:exploitability_main", "NashConv of a strategy file for an .efg/tree game"),
    "bench": ("", "benchmarks against peers: gdl, thesis, corpus, cfr, server, agent"),
    "agent": ("agent.cli:main", "run the GGP agent (--http PORT or --ws URL)"),
    "serve": ("server.cli:serve_main", "run the websocket match server"),
    "match": ("server.cli:match_main", "play one match on an embedded server"),
    "tournament": ("server.cli:tournament_main", "round-robin tournament with standings"),
    "matches": ("server.cli:matches_main", "list, show or export recorded matches"),
}

BENCHES: dict[str, str] = {
    "gdl": "gdl.bench:main",
    "corpus": "gdl.solve_bench:main",
    "solve": "gdl.scale_bench:main",
    "thesis": "solvers.simultaneous.bench:main",
    "cfr": "solvers.extensive.bench:main",
    "server": "server.bench:main",
    "agent": "agent.bench:main",
}

SIMULTANEOUS_SOLVERS = {"baseline", "ih"}


def _solve_handler(argv: Sequence[str]) -> str:
    """Pick the solver front end from the file's format (and ``--solver`` for .efg)."""
    path = next((a for a in argv if not a.startswith("-")), "")
    suffix = os.path.splitext(path)[1].lower()
    if suffix in (".kif", ".gdl"):
        return "gdl.solve_cli:main"
    if suffix == ".osposg":
        return "solvers.posg.cli:main"
    solver = _option_value(argv, "--solver")
    if suffix == ".efg" and solver in SIMULTANEOUS_SOLVERS:
        return "solvers.simultaneous.cli:solve_main"
    return "solvers.extensive.cli:solve_main"


def _option_value(argv: Sequence[str], name: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _load(target: str) -> Callable[[list[str]], int]:
    module_name, function_name = target.split(":")
    module = importlib.import_module(module_name)
    return getattr(module, function_name)


def _usage() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = ["usage: ggp COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name.ljust(width)}  {help_}" for name, (_, help_) in COMMANDS.items()]
    lines += ["", "benches: ggp bench " + "|".join(BENCHES), "'ggp COMMAND --help' for a command's options."]
    return "\n".join(lines)


def _resolve(argv: list[str]) -> tuple[str, list[str]]:
    """(handler target, handler argv) for a command line."""
    command, rest = argv[0], argv[1:]
    if command == "solve":
        return _solve_handler(rest), rest
    if command == "bench":
        if not rest or rest[0] not in BENCHES:
            raise _UsageError("usage: ggp bench " + "|".join(BENCHES) + " [options]")
        return BENCHES[rest[0]], rest[1:]
    if command not in COMMANDS:
        raise _UsageError(f"ggp: unknown command {command!r}\n\n{_usage()}")
    return COMMANDS[command][0], rest


class _UsageError(Exception):
    pass


def main(argv: Sequence[str] | None = None) -> int:
    from solvers.errors import GameError

    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0 if args else 2
    try:
        target, rest = _resolve(args)
        handler = _load(target)
        return int(handler(rest) or 0)
    except _UsageError as exc:
        print(exc, file=sys.stderr)
        return 2
    except GameError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
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
