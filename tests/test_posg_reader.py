"""The .osposg reader: count-driven sections, whitespace, validation with line numbers."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import shared_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solvers.errors import FormatError, GameError, ValidationError
from solvers.posg.reader import read_posg

# two states in one partition; the names are the words the format must not treat
# as section markers
SMALL = """2 1 2 1 2 4 2 0.9
end 0
cont 0
end
cont
end
end
cont
0
0
0 1
0 0 0 0 1 1.0
0 1 0 1 0 1.0
1 0 0 0 0 1.0
1 1 0 1 1 1.0
0 0 0 1.5
1 1 0 -2
0 0.25 0.75
"""


def test_small_game_arrays() -> None:
    m = read_posg(SMALL)
    assert m.state_names == ["end", "cont"]
    assert m.a1_names == ["end", "cont"] and m.a2_names == ["end"]
    assert m.obs_names == ["end", "cont"]
    assert m.discount == 0.9 and m.initial_partition == 0
    assert np.allclose(m.initial_belief, [0.25, 0.75])
    block = m.partition_block(0)
    # rewards not listed are 0
    assert block.reward.tolist() == [[1.5, 0.0], [0.0, -2.0]]
    assert [(b.a1_index, b.observation) for b in block.branches] == [(0, 0), (1, 1)]
    assert m.next_partition(0, 1, 1) == 0 and m.next_partition(0, 0, 1) is None


def test_whitespace_robust() -> None:
    messy = SMALL.replace(" ", " \t ").replace("\n", "\r\n\n")
    m = read_posg(messy.rstrip())          # no final newline, blank lines, tabs, CRLF
    assert m.state_names == ["end", "cont"]
    assert np.allclose(m.initial_belief, [0.25, 0.75])


@pytest.mark.parametrize("name, line, words", [
    ("discount", 1, "strictly between 0 and 1"),
    ("is_not_distribution", 10, "not a distribution"),
    ("multi_partition_transition", 12, "next partition"),
])
def test_invalid_shared_files(name: str, line: int, words: str) -> None:
    path = shared_path("posg", "test", f"{name}.osposg")
    with pytest.raises(ValidationError) as err:
        read_posg(path.read_text(), str(path))
    assert err.value.location.line == line
    assert words in str(err.value) and str(path) in str(err.value)


def test_shared_files_read() -> None:
    m = read_posg(shared_path("posg", "pursuit-evasion", "peg03.osposg").read_text())
    assert (m.n_states, m.n_partitions, len(m.a1_names), len(m.a2_names)) == (143, 21, 145, 13)
    assert m.state_names[-1] == "end" and m.initial_partition == 4
    assert m.initial_belief[-1] == 1.0


def _replace_line(text: str, number: int, new: str) -> str:
    lines = text.splitlines()
    lines[number - 1] = new
    return "\n".join(lines)


@pytest.mark.parametrize("line, new, error, words", [
    (1, "2 1 2 1 2 4 2", FormatError, "expected 8 fields"),
    (1, "2 1 2 1 2 4 2 1.0", ValidationError, "strictly between"),
    (2, "end 3", ValidationError, "out of range"),
    (9, "0 5", ValidationError, "out of range"),
    (11, "", FormatError, "counts need 17 more lines"),   # blank lines do not count
    (12, "0 0 0 0 1 0.5", ValidationError, "sum to 0.5"),
    (12, "0 0 0 0 x 1.0", FormatError, "expected an integer"),
    (12, "0 0 0 7 1 1.0", ValidationError, "observation 7 out of range"),
    (13, "0 0 0 0 1 1.0", ValidationError, "repeats line 12"),
    (17, "0 1 0 nan", ValidationError, "finite"),
    (17, "1 1 1 2", ValidationError, "P2 action 1 out of range"),
    (17, "0 0 0 2", ValidationError, "repeats line 16"),
    (11, "0", ValidationError, "P1 action 1 is not playable in the partition 0"),
    (18, "0 0.5", ValidationError, "needs 2 probabilities"),
    (18, "0 -0.25 1.25", ValidationError, "negative"),
])
def test_errors_name_their_line(line: int, new: str, error: type, words: str) -> None:
    bad = _replace_line(SMALL, line, new)
    with pytest.raises(error) as err:
        read_posg(bad, "small.osposg")
    assert words in str(err.value)
    assert err.value.location.line is not None
    assert str(err.value).startswith("small.osposg:")


@pytest.mark.parametrize("extra, words", [
    ("0 0 0 1 0 0.6666667", "sum to 1.66667, not 1"),     # 1 + 2/3: two lines, each <= 1
    ("0 0 0 1 0 -0.5", "not in [0, 1]"),
])
def test_a_transition_row_must_be_a_distribution(extra: str, words: str) -> None:
    lines = SMALL.splitlines()
    lines[0] = "2 1 2 1 2 5 2 0.9"
    lines.insert(12, extra)
    with pytest.raises(ValidationError) as err:
        read_posg("\n".join(lines), "small.osposg")
    assert words in str(err.value)
    assert str(err.value).startswith("small.osposg:12:") or str(err.value).startswith(
        "small.osposg:13:")


def test_truncated_and_trailing() -> None:
    with pytest.raises(FormatError, match="counts need 17 more lines, the file has 13"):
        read_posg("\n".join(SMALL.splitlines()[:14]))
    with pytest.raises(FormatError, match="counts need"):
        read_posg(SMALL.replace("2 1 2 1 2 4 2 0.9", "2 1 2 1 2 4000000000000 2 0.9"))
    with pytest.raises(FormatError, match="after the initial belief"):
        read_posg(SMALL + "0 1\n")


def test_next_partition_spans_partitions() -> None:
    # state 1 alone in partition 1; (partition 0, a1 1, o 1) now leads there
    two = (SMALL.replace("2 1 2 1 2 4 2 0.9", "2 2 2 1 2 4 2 0.9")
           .replace("cont 0\nend\n", "cont 1\nend\n").replace("0 1\n0 0 0 0 1", "0 1\n0 1\n0 0 0 0 1"))
    two = two.replace("0 0 0 0 1 1.0", "0 0 0 0 0 1.0").replace("1 1 0 1 1 1.0", "1 1 0 1 0 1.0")
    two = two.replace("0 1 0 1 0 1.0", "0 1 0 1 1 1.0").replace("1 0 0 0 0 1.0", "1 0 0 1 1 1.0")
    m = read_posg(two.replace("0 0.25 0.75", "0 1.0"))
    assert m.next_partition(0, 1, 1) == 1 and m.next_partition(1, 0, 1) == 1


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzz_clean_errors_only(data: st.DataObject) -> None:
    tokens = SMALL.split(" ")
    mutation = data.draw(st.sampled_from(["token", "drop", "insert", "cut"]))
    if mutation == "token":
        i = data.draw(st.integers(0, len(tokens) - 1))
        tokens[i] = data.draw(st.sampled_from(
            ["-1", "0", "1", "2", "9", "0.5", "1e309", "inf", "x", "", "\n", "3\n4"]))
        text = " ".join(tokens)
    elif mutation == "drop":
        lines = SMALL.splitlines()
        del lines[data.draw(st.integers(0, len(lines) - 1))]
        text = "\n".join(lines)
    elif mutation == "insert":
        i = data.draw(st.integers(0, len(SMALL)))
        text = SMALL[:i] + data.draw(st.text(max_size=6)) + SMALL[i:]
    else:
        text = SMALL[:data.draw(st.integers(0, len(SMALL)))]
    try:
        read_posg(text, "fuzz.osposg")
    except GameError as exc:
        assert exc.location is not None and exc.location.line is not None
