"""Batched expansion (gdl.expansion.batch_expand) against the per-state one (gdl.expansion.expand).

The per-state path is the reference: both must give the same state graph, state
for state in the same numbering (same states, same legal moves in the same order,
same children of every joint move, same terminal goals). Every test runs twice:
with the compiled kernels (gdl.reasoning.batch_kernels, for every batch size) and with the
numpy fallback.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest
from conftest import GAMES, shared_path
from test_gdl_solve_expand import COIN, CYCLE, NIM

import gdl.expansion.batch_expand
import gdl.expansion.expand
import gdl.expansion.row_table
import gdl.reasoning.batch_machine
import gdl.reasoning.kernels
from gdl.expansion.batch_expand import DagExpansion, expand_dag, from_graph
from gdl.expansion.expand import Budget, expand_states
from gdl.expansion.row_table import RowTable, unique_rows
from gdl.reasoning.machine import load_machine
from solvers.errors import GameError, LimitReached, UnsupportedGame

UNLIMITED = Budget(max_states=None, memory_mb=None)


@pytest.fixture(params=["numba", "numpy"], autouse=True)
def kernels(request, monkeypatch) -> str:
    """Run the test with the compiled kernels, then with the numpy passes."""
    if request.param == "numba" and not gdl.reasoning.kernels.KERNELS.enabled:
        pytest.skip("numba is not installed (or GGP_NUMBA=0)")
    monkeypatch.setattr(gdl.reasoning.kernels.KERNELS, "enabled", request.param == "numba")
    monkeypatch.setattr(gdl.reasoning.kernels.KERNELS, "min_items", 0)   # small games take the kernels too
    return request.param

# 2-player corpus games that expand completely in about a second state by state:
# turn-based, simultaneous (roshambo2, ticTicToe, gt_*, chickentictactoe) and
# misère / renamed variants.
CORPUS_GAMES = (
    "ticTacToe", "nim1", "nim2", "roshambo2", "ticTicToe", "gt_prisoner", "gt_chicken",
    "gt_coordination", "gt_tinfoil", "gt_centipede", "eotcitcit", "eotcatcit",
    "chickentictactoe", "chickentoetictac", "sum15", "ticTacToeNoVars", "tictactoe-init1",
    "tictactoe2", "tictactoe_orthogonal", "minichess",
)


def assert_same_graph(batched: DagExpansion, reference: DagExpansion) -> None:
    """The same JointDag (and for two players the same StateDag), states and moves."""
    assert batched.batched and not reference.batched
    dag, ref = batched.joint, reference.joint
    dag.validate()
    assert dag.num_states == ref.num_states
    assert [batched.state(s) for s in range(dag.num_states)] == reference.graph.states
    for field in ("counts", "nk", "entry_start", "entry_child", "payoff"):
        assert np.array_equal(getattr(dag, field), getattr(ref, field)), field
    assert dag.player_names == ref.player_names
    if dag.num_players == 2:
        batched.dag.validate()
        for field in ("n0", "n1", "nk", "entry_start", "entry_child", "payoff"):
            assert np.array_equal(getattr(batched.dag, field), getattr(reference.dag, field))
    for s in range(dag.num_states):
        assert batched.moves(s) == reference.moves(s)
    assert batched.transitions == reference.transitions


def compare(machine, root=None) -> DagExpansion:
    batched = expand_dag(machine, root, budget=UNLIMITED)
    reference = from_graph(expand_states(machine, root, budget=UNLIMITED))
    assert_same_graph(batched, reference)
    return batched


SLOW = {"chickentictactoe", "chickentoetictac", "simultaneous_tictactoe_thesis"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n
                                  for n in CORPUS_GAMES])
def test_corpus_game_same_graph_as_per_state(name: str) -> None:
    machine = load_machine(shared_path("gdl-corpus", "repository", f"{name}.kif"),
                           engine="compiled")
    compare(machine)


def _small_bundled_games() -> list:
    """games/gdl but Goofspiel from N = 7 (30,804 to 4 million states: too big for the
    per-state side of the comparison; its smaller sizes have the same rules)."""
    big = re.compile(r"goofspiel(_ties)?_([7-9]|\d\d)$")
    return [p for p in sorted((GAMES / "gdl").glob("*.kif")) if not big.match(p.stem)]


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.slow) if p.stem in SLOW
                                  else p for p in _small_bundled_games()],
                         ids=lambda p: p.stem)
def test_bundled_game_same_graph_as_per_state(path) -> None:
    result = compare(load_machine(path, engine="compiled"))
    if path.stem == "simultaneous_tictactoe":  # docs/solving-gdl.md's counts
        assert result.dag.num_states == 12_829
        assert int((~result.dag.terminal).sum()) == 7_950


def test_nature_is_a_third_slot_in_entry_order() -> None:
    # roles guesser, random, hider: entries are (guesser, hider, nature) row-major
    result = compare(load_machine(COIN, engine="compiled"))
    root_moves = result.moves(0)
    assert [len(m) for m in root_moves] == [1, 1, 2]
    assert int(result.dag.nk[0]) == 2
    heads, tails = result.dag.entry_child[0], result.dag.entry_child[1]
    assert result.state_to_kif(heads) == ["(coin heads)"]
    assert result.state_to_kif(tails) == ["(coin tails)"]


def test_subgame_from_a_root_and_turn_based_nim() -> None:
    machine = load_machine(NIM, engine="compiled")
    full = compare(machine)
    # by hand: heap 3 (first to move); heaps 2 and 1 (second to move); heap 1 (first
    # to move); heap 0 won by second (reached from two states), heap 0 won by first
    assert full.dag.num_states == 6
    assert full.level_start.tolist()[:4] == [0, 1, 3, 5]
    assert sorted(full.dag.payoff[full.dag.terminal].tolist()) == [[0, 100], [100, 0]]
    root = full.state(int(full.dag.entry_child[0]))
    sub = compare(machine, root)
    assert sub.state(0) == root


@pytest.mark.parametrize("game", ["nim", "coin", "roshambo2"])
def test_general_engine_takes_the_per_state_path(game: str) -> None:
    source = {"nim": NIM, "coin": COIN}.get(game) or shared_path(
        "gdl-corpus", "repository", f"{game}.kif")
    general = expand_dag(load_machine(source, engine="general"), budget=UNLIMITED)
    batched = expand_dag(load_machine(source, engine="compiled"), budget=UNLIMITED)
    assert not general.batched and batched.batched
    assert general.dag.num_states == batched.dag.num_states
    for s in range(general.dag.num_states):
        assert general.state_to_kif(s) == batched.state_to_kif(s)
    for field in ("n0", "n1", "nk", "entry_start", "entry_child", "payoff"):
        assert np.array_equal(getattr(general.dag, field), getattr(batched.dag, field)), field


def test_path_choice_is_explicit(monkeypatch) -> None:
    with pytest.raises(GameError, match="needs the compiled engine"):
        expand_dag(load_machine(NIM, engine="general"), batched=True)
    # move rules that do not ground within the budget: state by state, said on progress
    monkeypatch.setattr(gdl.reasoning.batch_machine, "MOVE_GROUNDING_STEPS", 1)
    lines: list[str] = []
    result = expand_dag(load_machine(NIM, engine="compiled"), progress=lines.append)
    assert not result.batched and result.dag.num_states == 6
    assert lines == ["expand: state by state (grounding exceeds 1 join steps for the batched path)"]


def test_the_batch_machine_is_built_once_within_the_time_left() -> None:
    machine = load_machine(NIM, engine="compiled")
    # a start clock's pre-solve with no time left: grounding stops at once, nothing kept
    with pytest.raises(LimitReached, match="grounding exceeds 0 s"):
        gdl.expansion.batch_expand.batch_machine_within(machine, Budget(time_limit=0.0))
    built = gdl.expansion.batch_expand.batch_machine_within(machine, Budget())
    assert gdl.expansion.batch_expand.batch_machine_within(machine, Budget(time_limit=0.0)) is built
    assert expand_dag(machine).batched and expand_dag(machine).dag.num_states == 6


def test_a_cycle_is_reported() -> None:
    with pytest.raises(UnsupportedGame, match=r"cycle.*repeated state: \{(on|off)\}"):
        expand_dag(load_machine(CYCLE, engine="compiled"))


def test_budgets_stop_with_one_line(monkeypatch) -> None:
    machine = load_machine(GAMES / "gdl" / "simultaneous_tictactoe.kif", engine="compiled")
    with pytest.raises(LimitReached, match=r"^expansion stopped: the budget of 1,000 states"):
        expand_dag(machine, budget=Budget(max_states=1_000))
    with pytest.raises(LimitReached, match="time limit of 0 s"):
        expand_dag(machine, budget=Budget(time_limit=0.0))
    used = iter(range(0, 10**6, 100))       # resident MB grows by 100 at each check
    monkeypatch.setattr(gdl.expansion.expand, "resident_mb", lambda: float(next(used)))
    with pytest.raises(LimitReached, match="memory budget of 250 MB"):
        expand_dag(machine, budget=Budget(memory_mb=250))


def test_progress_lines_give_rates_and_memory(monkeypatch) -> None:
    monkeypatch.setattr(gdl.expansion.batch_expand, "PROGRESS_SECONDS", 0.0)
    lines: list[str] = []
    expand_dag(load_machine(GAMES / "gdl" / "simultaneous_tictactoe.kif", engine="compiled"),
               progress=lines.append)
    assert lines and all("\n" not in line for line in lines)
    for word in ("12,829 states found", "states/s", "transitions/s", "MB held", "B/state"):
        assert word in lines[-1]


def test_row_table_is_exact_when_every_hash_collides(monkeypatch) -> None:
    rng = np.random.default_rng(7)
    rows = rng.integers(0, 4, size=(500, 2)).astype(np.uint64)   # many repeats
    first, inverse = unique_rows(rows, np.zeros(len(rows), dtype=np.uint64))
    expected = list(dict.fromkeys(map(tuple, rows.tolist())))
    assert [tuple(r) for r in rows[first].tolist()] == expected
    assert np.array_equal(rows[first][inverse], rows)
    monkeypatch.setattr(gdl.expansion.row_table, "hash_rows", lambda r: np.zeros(len(r), dtype=np.uint64))
    table = RowTable(2, capacity=4)
    a, new_a = table.add(rows[:300])
    b, new_b = table.add(rows[200:])
    assert new_a + new_b == len(expected) == table.n
    assert np.array_equal(table.rows[np.concatenate([a, b])], np.concatenate([rows[:300], rows[200:]]))
    assert [tuple(r) for r in table.rows.tolist()] == expected


def test_compiled_transpose_and_hash_equal_the_numpy_ones(kernels: str) -> None:
    rng = np.random.default_rng(3)
    matrix = rng.integers(0, 2**64, size=(192, 3), dtype=np.uint64)
    expected = gdl.reasoning.batch_machine._transpose_numpy(matrix)
    assert np.array_equal(gdl.reasoning.batch_machine.transpose_bits(matrix), expected)
    assert np.array_equal(gdl.reasoning.batch_machine.transpose_bits(expected), matrix)
    # a hand-made bit: row 5, column 70 -> row 70, column 5
    single = np.zeros((64, 2), dtype=np.uint64)
    single[5, 1] = np.uint64(1 << 6)
    moved = gdl.reasoning.batch_machine.transpose_bits(single)
    assert moved[70, 0] == np.uint64(1 << 5) and int(moved.astype(bool).sum()) == 1
    hashes = gdl.expansion.row_table.hash_rows(matrix)
    gdl.reasoning.kernels.KERNELS.enabled = kernels != "numba"
    assert np.array_equal(gdl.expansion.row_table.hash_rows(matrix), hashes)


def test_row_table_grows_and_keeps_numbers_under_collisions(monkeypatch) -> None:
    # a few distinct hash values only: long probe runs, slot rebuilds while adding
    monkeypatch.setattr(gdl.expansion.row_table, "hash_rows",
                        lambda r: (r[:, 0] % np.uint64(3)).astype(np.uint64))
    rng = np.random.default_rng(11)
    rows = rng.integers(0, 3000, size=(5000, 1)).astype(np.uint64)
    table = RowTable(1, capacity=2)
    numbers = np.concatenate([table.add(rows[i:i + 700])[0] for i in range(0, len(rows), 700)])
    expected = list(dict.fromkeys(rows[:, 0].tolist()))
    assert table.rows[:, 0].tolist() == expected
    assert np.array_equal(table.rows[numbers], rows)


def test_kernel_rule_threshold_switch_and_lazy_import(monkeypatch) -> None:
    monkeypatch.setattr(gdl.reasoning.kernels.KERNELS, "min_items", 50_000)
    monkeypatch.setattr(gdl.reasoning.kernels.KERNELS, "loaded", None)
    if gdl.reasoning.kernels.KERNELS.enabled:
        assert gdl.reasoning.kernels.compiled(49_999) is None
        assert gdl.reasoning.kernels.compiled(50_000).__name__ == "gdl.reasoning.batch_kernels"
        assert gdl.reasoning.kernels.compiled(1).__name__ == "gdl.reasoning.batch_kernels"   # loaded: every size
    # held (the agent's clocks): no load inside, the kernels once loaded still serve
    kernels_in = gdl.reasoning.kernels.KERNELS.loaded
    monkeypatch.setattr(gdl.reasoning.kernels.KERNELS, "loaded", None)
    with gdl.reasoning.kernels.KERNELS.held():
        assert gdl.reasoning.kernels.compiled(10**9) is None
    if kernels_in is not None:
        monkeypatch.setattr(gdl.reasoning.kernels.KERNELS, "loaded", kernels_in)
        with gdl.reasoning.kernels.KERNELS.held():
            assert gdl.reasoning.kernels.compiled(1) is kernels_in
    monkeypatch.setattr(gdl.reasoning.kernels.KERNELS, "enabled", False)
    assert gdl.reasoning.kernels.compiled(10**9) is None
    # a numba that does not import switches the kernels off instead of failing
    monkeypatch.setattr(gdl.reasoning.kernels.KERNELS, "enabled", True)
    monkeypatch.setattr(gdl.reasoning.kernels.KERNELS, "loaded", None)
    monkeypatch.setitem(sys.modules, "gdl.reasoning.batch_kernels", None)
    assert gdl.reasoning.kernels.compiled(10**9) is None and not gdl.reasoning.kernels.KERNELS.enabled
    # GGP_NUMBA=0 switches the kernels off; numba is imported only when a batch needs it
    code = ("import sys, gdl.expansion.batch_expand, gdl.reasoning.kernels; "
            "print(gdl.reasoning.kernels.KERNELS.enabled, 'numba' in sys.modules)")
    for value, enabled in (("0", "False"), ("1", str(find_spec("numba") is not None))):
        env = {**os.environ, "GGP_NUMBA": value}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=env, cwd=Path(gdl.reasoning.kernels.__file__).parents[2], check=True)
        assert out.stdout.split() == [enabled, "False"]


def test_network_with_recursion_and_negation_equals_a_hand_evaluation(kernels: str) -> None:
    # leaves 1 (edge a-b), 2 (edge b-c), 3 (start at a); derived: reach_a 10,
    # reach_b 11, reach_c 12 (recursive: reach_b <- reach_a & edge; reach_a <- reach_b & edge),
    # blocked 13 <- not reach_c; always 14 <- (empty body)
    rules = {10: [((3,), ()), ((11, 1), ())], 11: [((10, 1), ()), ((12, 2), ())],
             12: [((11, 2), ())], 13: [((), (12,))], 14: [((), ())]}
    network = gdl.reasoning.batch_machine.Network(rules, [10, 11, 12, 13, 14])
    assert any(layer.recursive for layer in network.layers)
    items = 64 * 3
    rng = np.random.default_rng(5)
    bits = rng.integers(0, 2, size=(3, items)).astype(bool)   # edge ab, edge bc, start
    leaf_rows = np.packbits(bits, axis=1, bitorder="little").view(np.uint64)
    assert network.leaves == [1, 2, 3]
    rows = network.evaluate(leaf_rows)
    got = {a: np.unpackbits(rows[network.row[a]].view(np.uint8), bitorder="little")[:items]
           for a in (10, 11, 12, 13, 14)}
    ab, bc, start = bits
    reach_a = start.copy()
    reach_b = reach_a & ab
    reach_c = reach_b & bc
    assert np.array_equal(got[10], reach_a) and np.array_equal(got[11], reach_b)
    assert np.array_equal(got[12], reach_c) and np.array_equal(got[13], ~reach_c)
    assert got[14].all()
