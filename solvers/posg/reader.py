"""Reader for one-sided POSG files (``.osposg``, ``../shared/posg/game_format.txt``).

The format has no section markers: the header's counts say how many lines each
section has, so names such as ``end`` or ``cont`` are ordinary names. Sections, in
order: header (|S| |P| |A1| |A2| |O| #transitions #rewards discount), |S| state lines
(name, partition), |A1|, |A2| and |O| name lines, |S| lines of P2's playable actions,
|P| lines of P1's playable actions, the transition lines ``s a1 a2 o s' prob``, the
reward lines ``s a1 a2 r`` (missing entries are 0) and the initial belief
``partition p_1 .. p_K``.

Names keep their spaces (a state name is every word before the partition); the
``,_`` that the pursuit-evasion files write for ``, `` reads as ``, ``
(:func:`shown_name`). Whitespace is free (spaces, tabs, CRLF, blank lines, no final newline). Every error
names its line: :class:`FormatError` for text that does not follow the format,
:class:`ValidationError` for a well-formed file describing an invalid game.
"""

from __future__ import annotations

import math

import numpy as np

from solvers.errors import FormatError, Location, ValidationError
from solvers.posg.model import PosgModel

PROB_TOLERANCE = 1e-5   # files print probabilities with 6 decimals


class _Lines:
    """The non-blank lines of a file, each with its 1-based line number."""

    def __init__(self, text: str, filename: str) -> None:
        self.filename = filename
        self.lines = [(n, line.split()) for n, line in enumerate(text.splitlines(), 1)
                      if line.strip()]
        self.pos = 0
        self.last_line = len(text.splitlines()) or 1

    def next(self, what: str) -> tuple[int, list[str]]:
        if self.pos >= len(self.lines):
            raise FormatError(f"file ends before {what}", self.at(self.last_line))
        item = self.lines[self.pos]
        self.pos += 1
        return item

    def at(self, line: int) -> Location:
        return Location(self.filename, line)

    def rest(self) -> list[tuple[int, list[str]]]:
        return self.lines[self.pos:]


def shown_name(name: str) -> str:
    """A name as programs show it: the pursuit-evasion files' generator wrote the ``, ``
    of its names (Java's ``[a, b]``, ``Action{x=1, y=2}``) as ``,_`` so that a state's
    name is one word beside its partition; a space is given back there."""
    return name.replace(",_", ", ")


def read_posg(text: str, filename: str = "<input>") -> PosgModel:
    """Parse and validate an ``.osposg`` text into a :class:`PosgModel`."""
    return _Reader(text, filename).read()


class _Reader:
    def __init__(self, text: str, filename: str) -> None:
        self.src = _Lines(text, filename)

    def fail(self, line: int, message: str) -> FormatError:
        return FormatError(message, self.src.at(line))

    def invalid(self, line: int, message: str) -> ValidationError:
        return ValidationError(message, location=self.src.at(line))

    def integer(self, line: int, token: str, what: str, bound: int | None = None) -> int:
        try:
            value = int(token)
        except ValueError:
            raise self.fail(line, f"{what}: expected an integer, got {token!r}") from None
        if value < 0 or (bound is not None and value >= bound):
            limit = f"0..{bound - 1}" if bound is not None else ">= 0"
            raise self.invalid(line, f"{what} {value} out of range ({limit})")
        return value

    def number(self, line: int, token: str, what: str) -> float:
        try:
            value = float(token)
        except ValueError:
            raise self.fail(line, f"{what}: expected a number, got {token!r}") from None
        if not math.isfinite(value):
            raise self.invalid(line, f"{what} must be finite, got {token!r}")
        return value

    def fields(self, what: str, count: int) -> tuple[int, list[str]]:
        line, tokens = self.src.next(what)
        if len(tokens) != count:
            raise self.fail(line, f"{what}: expected {count} fields, got {len(tokens)}")
        return line, tokens

    def names(self, count: int, what: str) -> list[str]:
        return [shown_name(" ".join(self.src.next(f"{what} {i}")[1])) for i in range(count)]

    def action_list(self, bound: int, what: str) -> tuple[int, np.ndarray]:
        line, tokens = self.src.next(what)
        values = [self.integer(line, t, what, bound) for t in tokens]
        if len(set(values)) != len(values):
            raise self.invalid(line, f"{what} lists an action twice")
        return line, np.array(sorted(values), dtype=np.int64)

    def read(self) -> PosgModel:
        line, head = self.fields("the header (8 fields)", 8)
        n_s, n_p, n_a1, n_a2, n_o, n_t, n_r = (
            self.integer(line, t, w) for t, w in zip(
                head[:7], ("number of states", "number of partitions", "number of P1 actions",
                           "number of P2 actions", "number of observations",
                           "number of transitions", "number of rewards"), strict=True))
        for count, what in ((n_s, "states"), (n_p, "partitions"), (n_a1, "P1 actions"),
                            (n_a2, "P2 actions"), (n_o, "observations")):
            if count == 0:
                raise self.invalid(line, f"the game needs at least one of {what}")
        needed = 2 * n_s + n_a1 + n_a2 + n_o + n_p + n_t + n_r + 1
        available = len(self.src.rest())
        if needed > available:     # also keeps absurd counts from allocating memory
            raise self.fail(line, f"the header's counts need {needed} more lines, the file "
                                  f"has {available}")
        discount = self.number(line, head[7], "discount")
        if not 0.0 < discount < 1.0:
            raise self.invalid(line, f"discount must be strictly between 0 and 1, got {head[7]}")

        state_names: list[str] = []
        partition_of = np.zeros(n_s, dtype=np.int64)
        for s in range(n_s):
            sline, tokens = self.src.next(f"state line {s}")
            if len(tokens) < 2:
                raise self.fail(sline, f"state {s}: expected '<name> <partition>'")
            state_names.append(shown_name(" ".join(tokens[:-1])))
            partition_of[s] = self.integer(sline, tokens[-1], f"partition of state {s}", n_p)
        a1_names = self.names(n_a1, "P1 action name")
        a2_names = self.names(n_a2, "P2 action name")
        obs_names = self.names(n_o, "observation name")

        a2_lines, a2_playable = [], []
        for s in range(n_s):
            aline, acts = self.action_list(n_a2, f"playable P2 actions of state {s}")
            if len(acts) == 0:
                raise self.invalid(aline, f"state {s} has no playable P2 action")
            a2_lines.append(aline)
            a2_playable.append(acts)
        a1_playable = []
        for p in range(n_p):
            aline, acts = self.action_list(n_a1, f"playable P1 actions of partition {p}")
            if len(acts) == 0:
                raise self.invalid(aline, f"partition {p} has no playable P1 action")
            a1_playable.append(acts)

        self.partition_of, self.a1_playable, self.a2_playable = (
            partition_of, a1_playable, a2_playable)
        trans = self.transitions(n_t, n_s, n_a1, n_a2, n_o)
        rewards = self.rewards(n_r, n_s, n_a1, n_a2)
        self.check_distributions(trans, a2_lines)
        initial_partition, belief = self.initial_belief(n_p, partition_of)
        extra = self.src.rest()
        if extra:
            raise self.fail(extra[0][0], "unexpected content after the initial belief")
        t_lines, t_cols = trans
        return PosgModel(
            state_names, a1_names, a2_names, obs_names, partition_of, a1_playable,
            a2_playable, *(t_cols[:, i].astype(np.int64) for i in range(5)),
            t_cols[:, 5].astype(float), *(rewards[:, i].astype(np.int64) for i in range(3)),
            rewards[:, 3].astype(float), discount, initial_partition, belief)

    def transitions(self, count: int, n_s: int, n_a1: int, n_a2: int,
                    n_o: int) -> tuple[np.ndarray, np.ndarray]:
        lines = np.zeros(count, dtype=np.int64)
        cols = np.zeros((count, 6))
        seen: dict[tuple[int, ...], int] = {}
        for k in range(count):
            line, tok = self.fields(f"transition line {k} ('s a1 a2 o s2 prob')", 6)
            s = self.integer(line, tok[0], "state", n_s)
            a1 = self.integer(line, tok[1], "P1 action", n_a1)
            a2 = self.integer(line, tok[2], "P2 action", n_a2)
            o = self.integer(line, tok[3], "observation", n_o)
            nxt = self.integer(line, tok[4], "next state", n_s)
            prob = self.number(line, tok[5], "probability")
            if not 0.0 <= prob <= 1.0 + PROB_TOLERANCE:
                raise self.invalid(line, f"probability {tok[5]} is not in [0, 1]")
            self.check_playable(line, s, a1, a2)
            key = (s, a1, a2, o, nxt)
            if key in seen:
                raise self.invalid(line, f"transition {key} repeats line {seen[key]}")
            seen[key] = line
            lines[k] = line
            cols[k] = (s, a1, a2, o, nxt, prob)
        keep = cols[:, 5] > 0.0
        lines, cols = lines[keep], cols[keep]
        order = np.lexsort((cols[:, 2], cols[:, 1], cols[:, 0]))
        return lines[order], cols[order]

    def rewards(self, count: int, n_s: int, n_a1: int, n_a2: int) -> np.ndarray:
        rows = np.zeros((count, 4))
        seen: dict[tuple[int, int, int], int] = {}
        for k in range(count):
            line, tok = self.fields(f"reward line {k} ('s a1 a2 reward')", 4)
            key = (self.integer(line, tok[0], "state", n_s),
                   self.integer(line, tok[1], "P1 action", n_a1),
                   self.integer(line, tok[2], "P2 action", n_a2))
            self.check_playable(line, *key)
            if key in seen:
                raise self.invalid(line, f"reward of {key} repeats line {seen[key]}")
            seen[key] = line
            rows[k] = (*key, self.number(line, tok[3], "reward"))
        return rows

    def check_playable(self, line: int, s: int, a1: int, a2: int) -> None:
        p = self.partition_of[s]
        if a1 not in self.a1_playable[p]:
            raise self.invalid(line, f"P1 action {a1} is not playable in the partition {p} "
                                     f"of state {s}")
        if a2 not in self.a2_playable[s]:
            raise self.invalid(line, f"P2 action {a2} is not playable in state {s}")

    def check_distributions(self, trans: tuple[np.ndarray, np.ndarray],
                            a2_lines: list[int]) -> None:
        """Each playable (s, a1, a2) is a distribution; (partition, a1, o) fixes the next
        partition. Probabilities within the tolerance are renormalised to sum to 1."""
        lines, cols = trans
        partition_of, a1_playable = self.partition_of, self.a1_playable
        total: dict[tuple[int, int, int], float] = {}
        first: dict[tuple[int, int, int], int] = {}
        target: dict[tuple[int, int, int], tuple[int, int]] = {}
        for line, (s, a1, a2, o, nxt, prob) in zip(lines, cols.astype(object), strict=True):
            s, a1, a2, o, nxt = int(s), int(a1), int(a2), int(o), int(nxt)
            key = (s, a1, a2)
            total[key] = total.get(key, 0.0) + prob
            first.setdefault(key, int(line))
            branch = (int(partition_of[s]), a1, o)
            q = int(partition_of[nxt])
            known = target.setdefault(branch, (q, int(line)))
            if known[0] != q:
                raise self.invalid(int(line), (
                    f"partition {branch[0]}, P1 action {a1}, observation {o} leads to partition "
                    f"{q} here but to partition {known[0]} on line {known[1]}: P1 must know "
                    "its next partition"))
        for s, a2s in enumerate(self.a2_playable):
            for a1 in a1_playable[partition_of[s]]:
                for a2 in a2s:
                    key = (s, int(a1), int(a2))
                    mass = total.get(key, 0.0)
                    if abs(mass - 1.0) > PROB_TOLERANCE:
                        where = first.get(key, a2_lines[s])
                        raise self.invalid(where, (
                            f"transition probabilities of state {s}, P1 action {a1}, P2 action "
                            f"{a2} sum to {mass:.6g}, not 1"))
        if len(cols):
            keys = list(map(tuple, cols[:, :3].astype(np.int64)))
            cols[:, 5] /= np.array([total[k] for k in keys])

    def initial_belief(self, n_p: int, partition_of: np.ndarray) -> tuple[int, np.ndarray]:
        line, tok = self.src.next("the initial belief")
        p = self.integer(line, tok[0], "initial partition", n_p)
        size = int(np.count_nonzero(partition_of == p))
        if len(tok) - 1 != size:
            raise self.invalid(line, (f"the initial belief needs {size} probabilities (one per "
                                      f"state of partition {p}), got {len(tok) - 1}"))
        belief = np.array([self.number(line, t, "initial probability") for t in tok[1:]])
        if np.any(belief < 0.0):
            raise self.invalid(line, "initial probabilities must not be negative")
        if abs(belief.sum() - 1.0) > PROB_TOLERANCE:
            raise self.invalid(line, (f"the initial belief sums to {belief.sum():.6g}, "
                                      "not 1 (it is not a distribution)"))
        return p, belief / belief.sum()
