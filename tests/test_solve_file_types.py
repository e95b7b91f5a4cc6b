"""Item 18 of issue 32: a file of an unknown type is refused with one clear line, not
read as a tree-format game."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import shared_path

from gdl.formats import detect_format
from ggp_cli import main, solve_help
from solvers.errors import FormatError


def test_a_readme_is_not_read_as_a_tree_game() -> None:
    with pytest.raises(FormatError, match=r"README.md: \.md is no game format's suffix"):
        detect_format("README.md", "# The project\n\nnode x\n")


def test_a_file_without_a_suffix_is_told_by_its_first_words() -> None:
    assert detect_format("game", "# a tree\nnode / terminal 1\n") == "tree"
    assert detect_format("game.kif", "") == "gdl"


def test_ggp_solve_refuses_a_readme(tmp_path, capsys) -> None:
    path = tmp_path / "README.md"
    path.write_text("# The project\n\nnode x\n")
    assert main(["solve", str(path)]) == 1
    err = capsys.readouterr().err
    assert "no game format's suffix" in err and "node line" not in err


def test_binary_junk_is_refused_as_undecodable(tmp_path, capsys) -> None:
    path = tmp_path / "junk.kif"
    path.write_bytes(bytes(range(256)) * 4)
    assert main(["check", str(path)]) == 1
    assert "not a text file" in capsys.readouterr().err
    latin = tmp_path / "latin.kif"  # a stray Latin-1 byte in a comment still reads
    latin.write_bytes(b"; caf\xe9\n(role p) (init (s 0)) (legal p go) (<= terminal (true (s 0)))"
                      b" (goal p 100)\n")
    assert main(["check", str(latin)]) == 0


def test_an_empty_kif_declares_no_role(tmp_path, capsys) -> None:
    path = tmp_path / "empty.kif"
    path.write_text("")
    assert main(["solve", str(path)]) == 1
    err = capsys.readouterr().err
    assert "the game declares no role" in err and "0 players" not in err


@pytest.mark.parametrize("parts, extra", [
    (("efg", "kuhn_from_course.efg"), []),
    (("tree-format", "kuhn_mit.txt"), []),
    (("posg", "test", "rewards.osposg"), ["--time-limit", "5"]),
    (("efg", "rpss_from_course.efg"), ["--solver", "baseline"]),
])
def test_quiet_for_every_solve_format(parts, extra, capsys) -> None:
    """Item 17: --quiet is accepted by every `ggp solve` format and hushes progress."""
    assert main(["solve", str(shared_path(*parts)), *extra, "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert out and err == ""


def test_solve_help_describes_every_solver_and_gives_defaults(capsys) -> None:
    """Item 21: every solver in the front ends' descriptions, defaults, capitals."""
    text = solve_help()
    assert text.count("DOαβ or BIαβ") >= 2 and "solve a simultaneous" not in text
    assert "(default 1.0)" in text.split("--epsilon", 1)[1].split("--time-limit", 1)[0]
    headings = [line for line in text.splitlines()[1:]
                if ": FILE" in line and not line.startswith(" ")]
    assert len(headings) >= 5 and all(h[0].isupper() for h in headings), headings
    descriptions = [text.split(h, 1)[1].lstrip("\n ")[:1] for h in headings]
    assert all(d.isupper() for d in descriptions), descriptions


@pytest.mark.parametrize("command", ["demo", "playout"])
def test_readme_rows_name_every_option(command, capsys) -> None:
    """Item 21's docs drift: the README's row of a command names each of its options."""
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith(f"| `ggp {command} "))
    main([command, "--help"])
    shown = capsys.readouterr()
    options = set(re.findall(r"--[a-z][a-z-]*", shown.out + shown.err)) - {"--help"}
    assert options and all(o in row for o in options), (options, row)
