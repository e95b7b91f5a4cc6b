"""Fuzzing the game file formats: kif, efg, tree and osposg.

Each mutant of a real seed (the bundled games and the test files in ``../shared``) is
loaded by the one loader (:func:`gdl.formats.load_game_text`) and, when accepted,
played for a few random steps (legal moves, observations, payoffs), in a forked child
process with a time and memory limit per input; a child past the time limit is
replaced. A format without seeds is skipped.
"""

from __future__ import annotations

import functools
import logging
import multiprocessing
import random
import re
import resource
from pathlib import Path

from gdl.formats import load_game_text
from gdl.fuzz.mutate import mutate_text
from gdl.fuzz.tally import Progress, Tally, Target, classify
from solvers.locations import REPO, SHARED

# the formats' names in ``ggp bench fuzz`` -> their names in gdl.formats
FILE_FORMATS = {"kif": "gdl", "efg": "efg", "tree": "tree", "osposg": "posg"}
MAX_SEED_BYTES = 20_000  # bigger seeds make slow mutants, not new paths
PLAY_STEPS = 30


def file_seeds(kind: str) -> list[tuple[str, str]]:
    """(name, text) of the seed files of a file format: bundled games, then ../shared."""
    if kind == "kif":
        paths = sorted((REPO / "games" / "gdl").glob("*.kif"))
        paths += [SHARED / "gdl-corpus" / "repository" / f"{g}.kif"
                  for g in ("ticTacToe", "nim1", "roshambo2", "blocker", "maze")]
    elif kind == "efg":
        paths = sorted((SHARED / "efg").glob("*.efg"))
    elif kind == "tree":
        paths = sorted((SHARED / "tree-format").glob("*.txt"))
    else:
        paths = sorted((SHARED / "posg").glob("**/*.osposg"))
    return [(p.name, p.read_text(errors="replace")) for p in paths
            if p.is_file() and p.stat().st_size <= MAX_SEED_BYTES]


def smallest_game() -> str:
    """The rules of the smallest bundled or shared GDL seed, comments dropped."""
    name, text = min(file_seeds("kif"), key=lambda seed: len(seed[1]))
    return re.sub(r";[^\n]*", "", text)


def _play_through(fmt: str, text: str) -> None:
    game = load_game_text(fmt, text, name="fuzz", filename="fuzz")
    rng = random.Random(0)
    state = game.initial_state(rng)
    for _ in range(PLAY_STEPS):
        roles = range(len(game.roles))
        for r in roles:
            game.observation(state, r)
        if game.is_terminal(state):
            game.payoffs(state)
            return
        moves = [game.legal_moves(state, r) for r in roles]
        state = game.next_state(state, [rng.choice(m) if m else None for m in moves], rng)


def _file_child(conn, memory_mb: int) -> None:
    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    logging.disable()
    while True:
        try:
            fmt, text = conn.recv()
        except EOFError:
            return
        conn.send(classify(functools.partial(_play_through, fmt, text)))


class FileChecker:
    """Checks game texts in a forked child; a child past the time limit is replaced."""

    def __init__(self, time_limit: float, memory_mb: int = 2048) -> None:
        self.time_limit, self.memory_mb = time_limit, memory_mb
        self._context = multiprocessing.get_context("fork")
        self._process = None
        self._conn = None

    def _start(self) -> None:
        ours, theirs = self._context.Pipe()
        self._process = self._context.Process(target=_file_child,
                                              args=(theirs, self.memory_mb), daemon=True)
        self._process.start()
        theirs.close()
        self._conn = ours

    def check(self, fmt: str, text: str) -> tuple[str, str]:
        if self._process is None or not self._process.is_alive():
            self._start()
        try:
            self._conn.send((fmt, text))
            if self._conn.poll(self.time_limit):
                return self._conn.recv()
            outcome = "hang", f"no outcome within {self.time_limit} s"
        except (EOFError, OSError):
            outcome = "internal", f"the checking process died ({self._process.exitcode})"
        self.close()
        return outcome

    def close(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.join()
            self._conn.close()
        self._process = None


def fuzz_files(kind: str, name: str, count: int, rng: random.Random, time_limit: float,
               save: Path | None, progress: Progress) -> Tally | None:
    """``count`` mutants of the seeds of file format ``kind`` (a key of
    :data:`FILE_FORMATS`), reported as ``name``; None when it has no seeds."""
    seeds = file_seeds(kind)
    if not seeds:
        return None
    tally = Tally(seeds=len(seeds))
    checker = FileChecker(time_limit)
    try:
        for _ in range(count):
            seed, text = rng.choice(seeds)
            mutant = mutate_text(text, rng)
            outcome, detail = checker.check(FILE_FORMATS[kind], mutant)
            tally.add(outcome, mutant, f"{seed} mutant\n{detail}", save, name)
            progress(name, tally)
    finally:
        checker.close()
    return tally


# the file formats as targets of ``ggp bench fuzz``
KIF = Target(".kif", functools.partial(fuzz_files, "kif"))
EFG = Target(".efg", functools.partial(fuzz_files, "efg"))
TREE = Target("tree .txt", functools.partial(fuzz_files, "tree"))
OSPOSG = Target(".osposg", functools.partial(fuzz_files, "osposg"))
