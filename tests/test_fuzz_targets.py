"""``ggp bench fuzz`` is composed at the top (issue 31): each input is fuzzed in the
package that reads it (gdl: game files; server: websocket messages; agent: GGP HTTP),
the runner in gdl takes the targets it is given, and ``ggp_cli`` names all six."""

from __future__ import annotations

import json

import pytest

from gdl.bench.fuzz import main as gdl_fuzz_main
from gdl.fuzz.files import KIF
from gdl.fuzz.tally import Target
from ggp_cli import FUZZ_TARGETS, fuzz_targets
from solvers.errors import GameError


def test_every_target_loads_and_the_six_formats_are_listed() -> None:
    targets = fuzz_targets()
    assert list(targets) == ["kif", "efg", "tree", "osposg", "ws", "ggp-http"] == list(FUZZ_TARGETS)
    assert all(isinstance(target, Target) and target.what for target in targets.values())


def test_the_runner_fuzzes_only_the_targets_it_is_given(capsys) -> None:
    assert gdl_fuzz_main(["--mutants", "3", "--json"], {"kif": KIF}) == 0
    assert list(json.loads(capsys.readouterr().out)) == ["kif"]
    with pytest.raises(GameError, match="unknown ws"):
        gdl_fuzz_main(["--formats", "ws"], {"kif": KIF})
