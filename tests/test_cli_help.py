"""Help texts of every ``ggp`` command (issue 14, items 12, 17, 18): every option has a
help string free of reST markup and thesis numbering; ``ggp solve --help`` covers the
four families; ``ggp --version`` and ``ggp bench --help``."""

from __future__ import annotations

import argparse
import re

import pytest

import ggp_cli
from ggp_cli import BENCHES, COMMANDS, _load, solve_front_ends
from ggp_cli import main as ggp

MARKUP = re.compile(r"``|:class:|:func:|:mod:|:meth:|Definition \d")


class _Captured(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


def _parser_of(target: str, monkeypatch: pytest.MonkeyPatch) -> argparse.ArgumentParser:
    """The parser a handler builds, caught at its first parse (no work is done)."""
    def capture(self: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        raise _Captured(self)

    for name in ("parse_args", "parse_known_args", "parse_intermixed_args",
                 "parse_known_intermixed_args"):
        monkeypatch.setattr(argparse.ArgumentParser, name, capture)
    try:
        _load(target)([])
    except _Captured as caught:
        return caught.parser
    raise AssertionError(f"{target} parsed no arguments")


def _targets() -> list[tuple[str, str]]:
    """(command, handler or, for the families of ggp solve, parser factory)."""
    out = [(f"ggp {name}", target) for name, (target, _) in COMMANDS.items() if target]
    out += [(f"ggp bench {name}", target) for name, (target, _) in BENCHES.items()]
    out += [(f"ggp solve ({title})", target) for title, target in solve_front_ends()]
    return out


@pytest.mark.parametrize(("command", "target"), _targets(), ids=[c for c, _ in _targets()])
def test_every_option_has_plain_help(command: str, target: str,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    factory = command.startswith("ggp solve (")
    parser = _load(target)() if factory else _parser_of(target, monkeypatch)
    problems = []
    texts = [parser.description or ""]
    for action in parser._actions:
        if action.help == argparse.SUPPRESS:
            continue  # an internal option, hidden on purpose
        if not action.help:
            problems.append(f"{'/'.join(action.option_strings) or action.dest} has no help")
        texts.append(action.help or "")
    problems += [f"markup or jargon in {text!r}" for text in texts if MARKUP.search(text)]
    assert not problems, f"{command}: " + "; ".join(problems)


def test_solve_help_covers_the_four_families(capsys: pytest.CaptureFixture[str]) -> None:
    assert ggp(["solve", "--help"]) == 0
    text = capsys.readouterr().out
    for needle in (".kif", "--solver baseline|ih", "cfr|cfr+|dcfr|mccfr|lp", ".osposg",
                   "--max-states", "--iterations", "--max-nodes", "--epsilon"):
        assert needle in text, needle
    assert not MARKUP.search(text)
    assert ggp(["solve"]) == 2  # no file: the same text, on stderr
    err = capsys.readouterr().err
    assert "no game file given" in err and ".osposg" in err and "--epsilon" in err


def test_solve_finds_the_file_after_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert ggp_cli._solve_file(["--solver", "cfr", "--json", "kuhn.efg"]) == "kuhn.efg"
    assert ggp_cli._solve_file(["--time-limit=3", "g.osposg"]) == "g.osposg"
    assert ggp_cli._solve_file(["--solver", "ih"]) is None


def test_solve_flags_are_the_options_without_a_value() -> None:
    flags = {option for _, target in solve_front_ends() for action in _load(target)()._actions
             if action.nargs == 0 for option in action.option_strings}
    assert flags - {"-h", "--help"} == ggp_cli.SOLVE_FLAGS


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    assert ggp(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"ggp {version('ggp-solve')}"


def test_bench_help_lists_each_bench(capsys: pytest.CaptureFixture[str]) -> None:
    assert ggp(["bench", "--help"]) == 0
    out = capsys.readouterr().out
    for name, (_, help_) in BENCHES.items():
        assert re.search(rf"^  {re.escape(name)} +{re.escape(help_)}$", out, re.M), name
    assert ggp(["bench", "nosuch"]) == 2
    assert "unknown bench 'nosuch'" in capsys.readouterr().err


def test_top_level_usage_is_plain(capsys: pytest.CaptureFixture[str]) -> None:
    assert ggp(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: ggp [--version] COMMAND") and not MARKUP.search(out)
    assert all(f"  {name} " in out for name in [*COMMANDS, *BENCHES])


@pytest.mark.parametrize("args", [["--help"], ["bench", "--help"], ["solve", "--help"]])
def test_help_into_a_closed_pipe_ends_quietly(args: list[str]) -> None:
    """`ggp --help | head -1`: the reader has closed the pipe; exit 0, no traceback."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-m", "ggp_cli", *args], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()   # before the child writes, as a `head` that is already done
    assert child.wait(timeout=60) == 0
    assert b"Traceback" not in child.stderr.read()
