"""The commands the docs show still work (issue 14, item 23), so the docs cannot drift.

Every ``ggp ...`` in README.md, docs/*.md and server/PROTOCOL.md, in a code block or in
inline code, must name a real command and only options its ``--help`` lists. Every
concrete command of a code block (no placeholder such as ``GAME.kif``, ``N`` or
``[--json]``) is run (a child forked from tests/ggp_zygote.py, the CLI imported once: the
same code and exit code as ``python -m ggp_cli``, without a second of imports each), in
the order the page gives, in a temporary folder: ``games``
and ``../shared`` are links to the real ones there, and the ``/tmp/`` files the docs
write go into that folder. A ``$ ggp ...`` line followed by output in its block must
print that output (times, ``1.23 s``, and float noise, ``2.84e-14``, aside). Commands that run long or never end run
as :data:`INSTEAD` says.
"""

from __future__ import annotations

import json
import os
import re
import select
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO, SHARED

from ggp_cli import BENCHES, COMMANDS
from ggp_cli import main as ggp

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "server" / "PROTOCOL.md"]

# A doc command that runs long or never ends -> what the test runs instead, and why.
INSTEAD = {
    # OpenSpiel's and our 1000 iterations on Leduc take minutes
    "ggp bench cfr": "ggp bench cfr --iterations 20 --games kuhn --no-peers",
    # 1.5-3 minutes, and several minutes: the thesis' tables
    "ggp bench thesis --quick": "ggp bench thesis --help",
    "ggp bench thesis": "ggp bench thesis --help",
    # 200 concurrent matches; four in process show the same report
    "ggp bench server": "ggp bench server --matches 4 --inproc",
    # a local Ray cluster, 1,100 matches and two solves of 129,776 states: minutes
    # (tests/test_ray.py runs the same code on a 2-node cluster)
    "ggp bench ray --matches 1000 --kill-matches 100 --solve "
    "../shared/gdl-corpus/repository/nim3.kif": "ggp bench ray --help",
    "ggp bench ray --matches 1000 --concurrency 1000 --delay 0.2 --kill-matches 100":
        "ggp bench ray --help",
    # the 123-game sweep of docs/solving-gdl.md: hours; two small games through the same
    # results file and resume
    "ggp bench corpus --two-player --solvers baseline --max-states 10000000 --time-limit 300 "
    "--solve-limit 300 --game-limit 720 --memory-mb 8000 --results "
    "docs/bench/corpus-two-player-300s.jsonl --resume":
        "ggp bench corpus --two-player --only nim1,roshambo2 --solvers baseline --max-states "
        "10000 --time-limit 30 --results /tmp/corpus.jsonl --resume",
    # the two chickentictactoe files take 40 of its 50 s (tests/test_simultaneous_doab.py
    # checks DOαβ's value on chickentictactoe): the other twelve games
    "ggp bench doab chickentictactoe chickentoetictac eotcitcit roshambo2 ticTicToe "
    "games/gdl/simultaneous_tictactoe.kif games/gdl/simultaneous_tictactoe_thesis.kif "
    "ticTacToe tictactoe2 tictactoe_orthogonal nim1 nim2 sum15 minichess":
        "ggp bench doab eotcitcit roshambo2 ticTicToe games/gdl/simultaneous_tictactoe.kif "
        "games/gdl/simultaneous_tictactoe_thesis.kif ticTacToe tictactoe2 "
        "tictactoe_orthogonal nim1 nim2 sum15 minichess",
    # one round each (the page: 2), the same players and games: 15 s where they took 21
    "ggp tournament --games ../shared/gdl-corpus/repository/ticTacToe.kif "
    "games/gdl/goofspiel_3.kif --players random first 'uct?playouts=300' solver --swap-roles "
    "--rounds 2 --startclock 10 --playclock 2 --concurrency 2 --seed 2 --quiet "
    "--db /tmp/ratings.sqlite --plot /tmp/tournament.png":
        "ggp tournament --games ../shared/gdl-corpus/repository/ticTacToe.kif "
        "games/gdl/goofspiel_3.kif --players random first 'uct?playouts=300' solver "
        "--swap-roles --rounds 1 --startclock 10 --playclock 2 --concurrency 2 --seed 2 "
        "--quiet --db /tmp/ratings.sqlite --plot /tmp/tournament.png",
    "ggp tournament --games ../shared/gdl-corpus/repository/tictactoe_3player.kif --players "
    "random first 'uct?playouts=300' --swap-roles --rounds 2 --startclock 5 --playclock 2 "
    "--concurrency 2 --seed 3 --quiet --db /tmp/ratings.sqlite":
        "ggp tournament --games ../shared/gdl-corpus/repository/tictactoe_3player.kif "
        "--players random first 'uct?playouts=300' --swap-roles --rounds 1 --startclock 5 "
        "--playclock 2 --concurrency 2 --seed 3 --quiet --db /tmp/ratings.sqlite",
    # a server runs until Ctrl-C (tests/test_server_cli.py runs it against clients)
    "ggp serve --games games ../shared/efg": "ggp serve --help",
    # shorter clocks, budgets and games, the same commands (the 7,381-node game takes
    # some 20 s per solve; the depth-2 one is solved by the same three commands)
    "ggp random-game --actions 3 --depth 4 --full --seed 1 --out /tmp/g.efg":
        "ggp random-game --actions 3 --depth 2 --full --seed 1 --out /tmp/g.efg",
    "ggp match games/gdl/simultaneous_tictactoe.kif --players uct random --playclock 1 "
    "--db /tmp/matches.sqlite":
        "ggp match games/gdl/simultaneous_tictactoe.kif --players uct random --playclock 0.2 "
        "--db /tmp/matches.sqlite",
    "ggp tournament --games games/gdl/simultaneous_tictactoe.kif "
    "../shared/efg/kuhn_from_course.efg --players random first uct --swap-roles --rounds 5 "
    "--concurrency 4 --playclock 1 --db /tmp/matches.sqlite":
        "ggp tournament --games games/gdl/simultaneous_tictactoe.kif "
        "../shared/efg/kuhn_from_course.efg --players random first uct --swap-roles "
        "--rounds 1 --concurrency 4 --playclock 0.2 --db /tmp/matches.sqlite --quiet",
    "ggp solve ../shared/tree-format/leduc5_polimi.txt --solver cfr+ --time-limit 10 "
    "--strategy /tmp/leduc5.txt":
        # (reading the file takes about 1.5 s of CPU: a loaded machine needs the margin)
        "ggp solve ../shared/tree-format/leduc5_polimi.txt --solver cfr+ --time-limit 5 "
        "--strategy /tmp/leduc5.txt",
    "ggp solve ../shared/posg/pursuit-evasion/peg03.osposg --epsilon 1 --time-limit 120":
        "ggp solve ../shared/posg/pursuit-evasion/peg03.osposg --epsilon 1 --time-limit 3",
    "ggp solve ../shared/posg/pursuit-evasion/peg03.osposg --epsilon 1 --time-limit 120 --json":
        "ggp solve ../shared/posg/pursuit-evasion/peg03.osposg --epsilon 1 --time-limit 3 --json",
}
# placeholders the test fills in from the records of the commands run before
IDS = {"MATCH_ID": ("list", "id"), "TOURNAMENT_ID": ("tournaments", "id")}
PLACEHOLDER = re.compile(r"\[|\||\.\.\.|(?<![\w/.-])[A-Z][A-Z0-9_]*(\.[a-z]+)?(?![\w/-])")
# what a transcript may print differently: times, and float noise such as 2.84e-14
VARIES = re.compile(r"\d+(\.\d+)? s\b|\d(\.\d+)?e-1\d\b")


@dataclass
class Shown:
    page: str
    line: int
    text: str                   # the command, continuation lines joined, no comment
    in_block: bool
    output: list[str] | None    # the lines after a "$ ggp" line in its block

    @property
    def concrete(self) -> bool:
        text = self.text
        for name in IDS:
            text = text.replace(name, "")
        return self.in_block and not PLACEHOLDER.search(text)


def _command(line: str) -> str:
    """The command of a doc line: without a '$ ' prompt and a '# comment'."""
    line = line.strip().removeprefix("$ ")
    return re.sub(r"\s+#.*$", "", line).strip()


def _shown(page: Path) -> list[Shown]:
    name = str(page.relative_to(REPO))
    text = page.read_text(encoding="utf-8")
    out: list[Shown] = []
    blocks = list(re.finditer(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M))
    for block in blocks:
        first_line = text.count("\n", 0, block.start(1)) + 1
        lines = block.group(1).split("\n")
        i = 0
        while i < len(lines):
            raw = lines[i].strip()
            start = i
            if raw.removeprefix("$ ").startswith("ggp "):
                while raw.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    raw = raw[:-1].rstrip() + " " + lines[i].strip()
                output = None
                if raw.startswith("$ "):
                    output = []
                    while i + 1 < len(lines) and not lines[i + 1].startswith("$ ") \
                            and lines[i + 1].strip():
                        i += 1
                        output.append(lines[i])
                out.append(Shown(name, first_line + start, _command(raw), True, output))
            i += 1
    outside = text
    for block in reversed(blocks):  # inline code outside the blocks
        outside = outside[:block.start()] + "\n" * block.group(0).count("\n") \
            + outside[block.end():]
    for span in re.finditer(r"`(ggp [^`]+)`", outside):
        line = outside.count("\n", 0, span.start()) + 1
        out.append(Shown(name, line, " ".join(span.group(1).split()), False, None))
    return out


ALL = [shown for page in PAGES for shown in _shown(page)]


def _help(words: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    command = words[1] if len(words) > 1 else ""
    if command.startswith("--"):
        return "--version --help"
    argv = [command, words[2], "--help"] if command == "bench" and len(words) > 2 \
        and words[2] in BENCHES else [command, "--help"]
    capsys.readouterr()
    ggp(argv)
    return capsys.readouterr().out


def test_every_shown_command_and_option_exists(capsys: pytest.CaptureFixture[str]) -> None:
    assert len(ALL) > 60  # the pages were read
    problems = []
    helps: dict[str, str] = {}
    for shown in ALL:
        words = shown.text.split()
        command = words[1] if len(words) > 1 else ""
        if command.isupper():
            continue  # "ggp COMMAND --help": any command
        if command not in COMMANDS and not command.startswith("--"):
            problems.append(f"{shown.page}:{shown.line}: no command {command!r}: {shown.text}")
            continue
        key = " ".join(words[1:3]) if command == "bench" else command
        text = helps.setdefault(key, _help(words, capsys))
        problems += [f"{shown.page}:{shown.line}: {key} has no option {flag}: {shown.text}"
                     for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", shown.text)
                     if flag != "--help" and not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text)]
    assert not problems, "\n".join(problems)


def test_no_file_is_written_into_the_repository() -> None:
    """Doc examples write under /tmp, not into the folder they are run from."""
    writes = re.compile(r"(--out|--strategy|--save|--trace|--db|>)\s+(\S+)")
    wrong = [f"{s.page}:{s.line}: {s.text}" for s in ALL if s.concrete
             for _, path in writes.findall(s.text) if not path.startswith("/tmp/")]
    assert not wrong, "\n".join(wrong)


def test_readme_lists_every_command_and_pages_are_finished(
        capsys: pytest.CaptureFixture[str]) -> None:
    readme = [s.text for s in ALL if s.page == "README.md"]
    missing = [name for name in COMMANDS if not any(t.startswith(f"ggp {name}") for t in readme)]
    benches = next(t for t in readme if t.startswith("ggp bench "))
    missing += [f"bench {name}" for name in BENCHES
                if name not in benches.split()[2].replace("\\", "").split("|")]
    assert not missing, f"README.md's table lacks {missing}"
    ggp(["serve", "--help"])
    port = re.search(r"default (\d+)", capsys.readouterr().out.split("--port", 1)[1]).group(1)
    clash = [f"{s.page}:{s.line}: {s.text}" for s in ALL
             if re.search(rf"--http {port}\b|http://127\.0\.0\.1:{port}\b", s.text)]
    assert not clash, f"an HTTP agent on ggp serve's default port {port}: {clash}"
    notes = [str(page) for page in PAGES
             if re.search(r"^#+ For the README", page.read_text(encoding="utf-8"), re.M)]
    assert not notes, f"notes for another page left in {notes}"


class Zygote:
    """``ggp`` commands forked from a process that imported the CLI once
    (tests/ggp_zygote.py): the commands and their exit codes, without each command's
    second or so of imports."""

    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, str(REPO / "tests" / "ggp_zygote.py")],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        cwd=REPO, bufsize=0)
        self.unread = b""

    def run(self, argv: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
        assert self.process.stdin is not None
        with tempfile.TemporaryDirectory() as tmp:
            out, err = Path(tmp, "out"), Path(tmp, "err")
            request = {"argv": argv, "cwd": str(cwd), "out": str(out), "err": str(err)}
            self.process.stdin.write(json.dumps(request).encode() + b"\n")
            pid = self._answer(30)["pid"]
            try:
                code = self._answer(timeout)["rc"]
            except TimeoutError:
                os.kill(pid, signal.SIGKILL)
                self._answer(30)
                raise subprocess.TimeoutExpired(argv, timeout) from None
            return subprocess.CompletedProcess(argv, code, out.read_text(errors="replace"),
                                               err.read_text(errors="replace"))

    def _answer(self, timeout: float) -> dict[str, int]:
        assert self.process.stdout is not None
        fd, deadline = self.process.stdout.fileno(), time.monotonic() + timeout
        while b"\n" not in self.unread:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise AssertionError("the ggp zygote ended")
            self.unread += chunk
        line, _, self.unread = self.unread.partition(b"\n")
        return json.loads(line)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(30)


@pytest.fixture(scope="module")
def zygote() -> Iterator[Zygote]:
    forks = Zygote()
    try:
        yield forks
    finally:
        forks.close()


def _run(text: str, folder: Path, zygote: Zygote) -> subprocess.CompletedProcess[str]:
    text = INSTEAD.get(text, text).replace("/tmp/", f"{folder}/")
    for name, (action, field) in IDS.items():
        if name in text:
            listed = _run(f"ggp matches {action} --json --db /tmp/matches.sqlite", folder,
                          zygote)
            text = text.replace(name, json.loads(listed.stdout)[0][field])
    words = shlex.split(text)
    redirect = words.index(">") if ">" in words else len(words)
    result = zygote.run(words[1:redirect], folder / "repo", timeout=300)
    if redirect < len(words):
        Path(words[redirect + 1]).write_text(result.stdout)
    return result


def _pages_with_runs() -> list[str]:
    return sorted({s.page for s in ALL if s.concrete})


@pytest.mark.slow
@pytest.mark.parametrize("page", _pages_with_runs())
def test_the_commands_of_a_page_run(page: str, tmp_path: Path, zygote: Zygote) -> None:
    if not SHARED.is_dir():
        pytest.skip("../shared is absent")
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "games").symlink_to(REPO / "games")
    (tmp_path / "shared").symlink_to(SHARED)
    for shown in (s for s in ALL if s.page == page and s.concrete):
        result = _run(shown.text, tmp_path, zygote)
        where = f"{shown.page}:{shown.line}: {shown.text}"
        assert result.returncode == 0, f"{where}\n{result.stderr[-2000:]}"
        if shown.output is not None:
            printed = [VARIES.sub("_", line) for line in result.stdout.splitlines()]
            assert printed == [VARIES.sub("_", line) for line in shown.output], where
