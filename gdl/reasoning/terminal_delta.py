"""``terminal`` of a successor state, testing only what the move changed.

A playout asks ``terminal`` of every state it reaches, and the compiled test of a
board game walks every line of the board (connectFour: 138 mask tests, 6 µs, five
times a ``next``). When ``terminal`` is false in the parent, it can only be true in
the child through a conjunction that reads a bit the move changed. So the ground
rules of ``terminal`` are flattened once into conjunctions of state-bit literals
and negated derived atoms (kept whole where their negation would multiply out,
as ``not boardOpen``), the conjunctions are indexed by the bits they read, and a
child is tested against the conjunctions of its changed bits only (connectFour:
about 15 tests). Which of the two tests is faster depends on the game (a
``terminal`` that is one step counter is cheaper whole), so the first calls time
both on the same states and keep the faster.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Protocol

Bodies = Mapping[int, list[tuple[tuple[int, ...], tuple[int, ...]]]]
# (P, N, O): holds in s when s & (P | N) == P and no derived atom of O holds
Term = tuple[int, int, tuple[int, ...]]

MAX_TERMS = 20_000              # flattening gives up beyond this many conjunctions
MAX_NEGATION = 64               # a negation multiplying out beyond this stays whole
MAX_CHANGED_BITS = 16           # a child that differs in more bits gets the full test
CALIBRATION = 256               # (parent, child) pairs timed before choosing a test


class _TooBig(Exception):
    pass


class Compiler(Protocol):
    def mask_test(self, p: int, n: int) -> str: ...
    def atom_source(self, atom: int, name: str) -> str: ...
    def compile(self, sources: dict[str, str]) -> dict[str, Callable[[int], bool]]: ...


class _Flattener:
    """Derived atoms as disjunctions of :data:`Term` over state bits."""

    def __init__(self, rules: Bodies, bits: Mapping[int, int]) -> None:
        self.rules, self.bits = rules, bits
        self.memo: dict[int, list[Term]] = {}
        self.open: set[int] = set()
        self.supports: dict[int, int] = {}

    def dnf(self, atom: int) -> list[Term]:
        if atom in self.bits:
            return [(1 << self.bits[atom], 0, ())]
        if atom not in self.rules:
            return []                        # nothing derives it: false
        if atom in self.memo:
            return self.memo[atom]
        if atom in self.open:
            raise _TooBig                    # recursive: no finite form this way
        self.open.add(atom)
        terms: list[Term] = []
        try:
            for pos, neg in self.rules[atom]:
                body: list[Term] = [(0, 0, ())]
                for a in pos:
                    body = _and(body, self.dnf(a))
                for a in neg:
                    body = _and(body, self.negated(a))
                terms.extend(body)
                if len(terms) > MAX_TERMS:
                    raise _TooBig
        finally:
            self.open.discard(atom)
        found = self.memo[atom] = _unique(terms)
        return found

    def negated(self, atom: int) -> list[Term]:
        if atom in self.bits:
            return [(0, 1 << self.bits[atom], ())]
        out: list[Term] = [(0, 0, ())]
        try:
            for p, n, o in self.dnf(atom):   # not (C1 or C2 ...) = not C1 and not C2 ...
                if o:
                    raise _TooBig
                out = _and(out, [(0, 1 << b, ()) for b in bits_of(p)]
                           + [(1 << b, 0, ()) for b in bits_of(n)], MAX_NEGATION)
        except _TooBig:
            if atom in self.open:
                raise
            self.supports[atom] = self.support(atom)
            return [(0, 0, (atom,))]
        return out

    def support(self, atom: int) -> int:
        """The state bits that ``atom`` reads, through every rule it depends on."""
        mask, seen, stack = 0, set(), [atom]
        while stack:
            a = stack.pop()
            if a in seen:
                continue
            seen.add(a)
            if a in self.bits:
                mask |= 1 << self.bits[a]
            for pos, neg in self.rules.get(a, ()):
                stack.extend(pos)
                stack.extend(neg)
        return mask


def _and(left: list[Term], right: list[Term], limit: int = MAX_TERMS) -> list[Term]:
    if len(left) * len(right) > limit:
        raise _TooBig
    return _unique([(p | q, n | m, tuple(sorted({*o, *u})))
                    for p, n, o in left for q, m, u in right if not (p | q) & (n | m)])


def _unique(terms: list[Term]) -> list[Term]:
    return list(dict.fromkeys(terms))


def bits_of(mask: int) -> list[int]:
    """Indices of the set bits of ``mask``, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def flat_terms(rules: Bodies, bits: Mapping[int, int], target: int
               ) -> tuple[list[Term], dict[int, int]] | None:
    """``target`` as conjunctions over state bits, with the support (bits read) of
    each derived atom they negate whole; None where ``target`` is recursive or its
    form is larger than MAX_TERMS."""
    flattener = _Flattener(rules, bits)
    try:
        return flattener.dnf(target), flattener.supports
    except (_TooBig, RecursionError):
        return None


class DeltaTerminal:
    """``terminal(child)`` for a child of a state where ``terminal`` is false; the
    full test when there is no flat form."""

    def __init__(self, flat: tuple[list[Term], dict[int, int]] | None,
                 full: Callable[[int], bool], compiler: Compiler) -> None:
        self.full = full
        self.tests: list[Callable[[int], bool] | None] = []
        self.use_full = True                 # until calibrated, or for good:
        self.samples: list[tuple[int, int]] | None = None
        if flat is None or any(term == (0, 0, ()) for term in flat[0]):
            return                           # no flat form (or true everywhere)
        self.samples = []
        terms, supports = flat
        by_bit: dict[int, list[Term]] = {}
        for p, n, o in terms:
            read = p | n
            for atom in o:
                read |= supports[atom]
            for b in bits_of(read):
                by_bit.setdefault(b, []).append((p, n, o))
        sources = {f"h{atom}": compiler.atom_source(atom, f"h{atom}") for atom in supports}
        for b, found in by_bit.items():
            sources[f"t{b}"] = (f"def t{b}(s):\n    return "
                                + " or ".join(_term_text(compiler, t) for t in found) + "\n")
        compiled = compiler.compile(sources) if by_bit else {}
        self.tests = [None] * (max(by_bit, default=-1) + 1)
        for b in by_bit:
            self.tests[b] = compiled[f"t{b}"]

    def __call__(self, parent: int, child: int) -> bool:
        if self.samples is not None:
            return self._calibrating(parent, child)
        if self.use_full:
            return self.full(child)
        return self._delta(parent, child)

    def _delta(self, parent: int, child: int) -> bool:
        changed = parent ^ child
        if changed.bit_count() > MAX_CHANGED_BITS:
            return self.full(child)
        tests, size = self.tests, len(self.tests)
        while changed:
            low = changed & -changed
            bit = low.bit_length() - 1
            if bit < size:
                test = tests[bit]
                if test is not None and test(child):
                    return True
            changed ^= low
        return False

    def _calibrating(self, parent: int, child: int) -> bool:
        samples = self.samples
        assert samples is not None
        samples.append((parent, child))
        if len(samples) >= CALIBRATION:
            self.samples = None
            self.use_full = _seconds(lambda: [self.full(c) for _, c in samples]) \
                <= _seconds(lambda: [self._delta(p, c) for p, c in samples])
        return self.full(child)


def _term_text(compiler: Compiler, term: Term) -> str:
    p, n, o = term
    parts = [] if not p | n else [f"({compiler.mask_test(p, n)})"]
    parts.extend(f"not h{atom}(s)" for atom in o)
    return "(" + " and ".join(parts) + ")"


def _seconds(work: Callable[[], object]) -> float:
    """The best of three timings of ``work``."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best
