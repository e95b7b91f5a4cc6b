"""A zygote for tests that run many ``ggp`` commands: it imports the CLI once, then forks
one child per command, so a command costs its own work, not the second or so of imports
``python -m ggp_cli`` spends before it (tests/test_docs_commands.py runs 50-odd).

Each request is a JSON line on stdin, ``{"argv": [...], "cwd": DIR, "out": FILE, "err":
FILE}``; the zygote answers ``{"pid": N}`` when the child runs and ``{"rc": CODE}`` when
it ended (``python -m ggp_cli``'s exit code; -SIGNAL if it was killed). The zygote
itself runs no threads, so forking it is safe.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import traceback
from typing import Any, NoReturn

import ggp_cli

# what the commands import on their own (each about a second: numpy, scipy, the engines)
PRELOAD = ["gdl.formats", "server.app", "server.cli.commands", "gdl.bench.corpus",
           "server.plots"]
WRITE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None or isinstance(exc.code, int):
        return exc.code or 0
    print(exc.code, file=sys.stderr)  # what the interpreter prints for sys.exit("...")
    return 1


def _child(request: dict[str, Any]) -> NoReturn:
    code = 1
    try:
        os.chdir(request["cwd"])
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, request["out"], WRITE),
                                (2, request["err"], WRITE)):
            opened = os.open(path, flags, 0o600)
            os.dup2(opened, fd)
            os.close(opened)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the process's own streams
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        sys.argv = ["ggp", *request["argv"]]
        try:
            code = ggp_cli.main(request["argv"])
        except SystemExit as exc:
            code = _exit_code(exc)
    except BaseException:  # what python -m ggp_cli would print, and its exit code
        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - nothing left to tell it to
                pass
        os._exit(code if isinstance(code, int) else 1)


def _answer(message: dict[str, int]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    for name in PRELOAD:
        importlib.import_module(name)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        _answer({"pid": pid})
        _, status = os.waitpid(pid, 0)
        _answer({"rc": os.waitstatus_to_exitcode(status)})


if __name__ == "__main__":  # a child process a command spawns may import this file
    main()
