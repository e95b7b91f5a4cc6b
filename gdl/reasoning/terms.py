"""GDL terms and rules as frozen, hashable values.

A parsed game is a list of :class:`Rule`. Terms are :class:`Const` (a symbol or a
number exactly as written), :class:`Var` (name without the ``?``) and :class:`Fn`
(a function term, or an atom with arguments). Body literals are atoms (``Const`` or
``Fn``), :class:`Not`, :class:`Distinct` and :class:`Or`.

GDL keywords are case-insensitive; the parser stores them lowercase (see
:data:`KEYWORDS`), every other symbol keeps its case.
"""

from __future__ import annotations

from dataclasses import dataclass

# Keywords of GDL (Love et al. 2008) and GDL-II (``sees``); ``random`` is an
# ordinary constant (the nature role of GDL-II), so it is not listed here.
KEYWORDS = frozenset({
    "role", "init", "true", "next", "legal", "does", "goal", "terminal",
    "distinct", "not", "or", "base", "input", "sees",
})


@dataclass(frozen=True, slots=True)
class Const:
    """A symbol or number exactly as written (``1`` and ``01`` differ)."""

    name: str


@dataclass(frozen=True, slots=True)
class Var:
    """A variable; ``name`` is written without the leading ``?``."""

    name: str


@dataclass(frozen=True, slots=True)
class Fn:
    """A function term ``(name arg...)``, also an atom with arguments."""

    name: str
    args: tuple[Term, ...]


@dataclass(frozen=True, slots=True)
class Not:
    """Negation as failure of one literal."""

    literal: Literal


@dataclass(frozen=True, slots=True)
class Distinct:
    """``(distinct a b)``: true when the two (ground) terms differ."""

    left: Term
    right: Term


@dataclass(frozen=True, slots=True)
class Or:
    """A disjunction; each disjunct is a conjunction of literals."""

    disjuncts: tuple[tuple[Literal, ...], ...]


Term = Const | Var | Fn
Atom = Const | Fn
Literal = Const | Fn | Not | Distinct | Or


@dataclass(frozen=True, slots=True)
class Rule:
    """``head <= body``; a fact has an empty body. ``line``/``column`` are 1-based."""

    head: Atom
    body: tuple[Literal, ...] = ()
    line: int = 0
    column: int = 0

    @property
    def is_fact(self) -> bool:
        return not self.body


def term_to_kif(term: Term | Literal | Rule) -> str:
    """Canonical KIF text: single spaces, variables with ``?``, e.g. ``(cell 1 1 b)``."""
    if isinstance(term, Const):
        return term.name
    if isinstance(term, Var):
        return "?" + term.name
    if isinstance(term, Fn):
        return "(" + " ".join([term.name, *map(term_to_kif, term.args)]) + ")"
    if isinstance(term, Not):
        return f"(not {term_to_kif(term.literal)})"
    if isinstance(term, Distinct):
        return f"(distinct {term_to_kif(term.left)} {term_to_kif(term.right)})"
    if isinstance(term, Or):
        return "(or " + " ".join(map(_conjunction_to_kif, term.disjuncts)) + ")"
    if isinstance(term, Rule):
        if not term.body:
            return term_to_kif(term.head)
        return "(<= " + " ".join([term_to_kif(term.head), *map(term_to_kif, term.body)]) + ")"
    raise TypeError(f"not a GDL term: {term!r}")


def _conjunction_to_kif(conjunction: tuple[Literal, ...]) -> str:
    if len(conjunction) == 1:
        return term_to_kif(conjunction[0])
    return "(and " + " ".join(map(term_to_kif, conjunction)) + ")"


def variables(term: Term | Literal, out: dict[str, None] | None = None) -> dict[str, None]:
    """The variable names of a term or literal, in order of first occurrence."""
    found: dict[str, None] = {} if out is None else out
    stack: list[Term | Literal] = [term]
    while stack:
        item = stack.pop()
        if isinstance(item, Var):
            found.setdefault(item.name)
        elif isinstance(item, Fn):
            stack.extend(reversed(item.args))
        elif isinstance(item, Not):
            stack.append(item.literal)
        elif isinstance(item, Distinct):
            stack.extend((item.right, item.left))
        elif isinstance(item, Or):
            for conjunction in reversed(item.disjuncts):
                stack.extend(reversed(conjunction))
    return found


class Spelling:
    """One spelling per symbol whatever its case, the first one written in the rules.

    KIF symbols are case-insensitive and real games mix spellings (corpus
    ``alexChess`` writes ``nextFile`` and ``nextfile``); reasoning over respelled
    rules treats them as one symbol while keeping the author's case in output.
    """

    def __init__(self, rules: list[Rule]) -> None:
        self.canonical: dict[str, str] = {}
        self.mixed = False  # some symbol is written with two spellings
        for rule in rules:
            self._collect(rule.head)
            for literal in rule.body:
                self._collect(literal)

    def _collect(self, item: Term | Literal) -> None:
        stack: list[Term | Literal] = [item]
        while stack:
            node = stack.pop()
            if isinstance(node, (Const, Fn)):
                if self.canonical.setdefault(node.name.lower(), node.name) != node.name:
                    self.mixed = True
                if isinstance(node, Fn):
                    stack.extend(reversed(node.args))
            elif isinstance(node, Not):
                stack.append(node.literal)
            elif isinstance(node, Distinct):
                stack.extend((node.right, node.left))
            elif isinstance(node, Or):
                for conjunction in reversed(node.disjuncts):
                    stack.extend(reversed(conjunction))

    def name(self, name: str) -> str:
        return self.canonical.get(name.lower(), name)

    def term(self, item: Term | Literal) -> Term | Literal:
        """``item`` with every symbol respelled and variables lower-cased."""
        if isinstance(item, Const):
            return Const(self.name(item.name))
        if isinstance(item, Var):
            return Var(item.name.lower())
        if isinstance(item, Fn):
            return Fn(self.name(item.name), tuple(self.term(a) for a in item.args))
        if isinstance(item, Not):
            return Not(self.term(item.literal))
        if isinstance(item, Distinct):
            return Distinct(self.term(item.left), self.term(item.right))
        return Or(tuple(tuple(self.term(lit) for lit in conjunction)
                        for conjunction in item.disjuncts))

    def rules(self, rules: list[Rule]) -> list[Rule]:
        return [Rule(self.term(r.head), tuple(self.term(lit) for lit in r.body),  # type: ignore[arg-type]
                     r.line, r.column) for r in rules]
