"""GDL validation: the restrictions of the GDL specification, every problem located.

Checks (Love, Hinrichs, Haley, Schkufza, Genesereth, "General Game Playing: Game
Description Language Specification", Stanford LG-2006-01, 2008, sections 3-4;
GDL-II's ``sees`` and ``random`` accepted):

1. Arity consistency: each relation and each function symbol is used with one
   arity; keywords with their fixed arity (``legal/2``, ``terminal/0``...).
2. Keyword placement: ``true``/``does`` never in a head; ``init``, ``next``,
   ``base``, ``input`` never in a body; ``role`` only in ground facts; at least one
   role, no role twice.
3. Dependency restrictions: ``init``, ``base``, ``input`` do not depend on
   ``true``, ``does``, ``legal``, ``goal``, ``terminal``; ``legal``, ``goal``,
   ``terminal`` do not depend on ``does``.
4. Safety: every variable of a rule (head, negation, ``distinct``) appears in a
   positive atom of the body (checked per disjunct after distributing ``or``);
   facts are ground.
5. Stratified negation: no dependency cycle goes through a negation, unless
   splitting the relations on it by a constant argument removes the cycle
   (``(goal r 100) <= (not (goal r 0))``: stratified on the ground level, and
   played as such by every GGP engine; see :func:`gdl.reasoning.prover.split_by_constants`).
6. The recursion restriction (Definition 11 of the specification): in a rule
   whose head relation is in a cycle with a body atom's relation, each argument of
   that atom is ground, or an argument of the head, or has all its variables in
   a positive body atom whose relation is not in that cycle.

Every problem is a :class:`GameError` at ``file:line:col`` of its rule;
:func:`validate` raises one :class:`ValidationError` holding all of them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from gdl.reasoning.prover import (
    facts_and_flat_rules,
    flatten,
    literal_variables,
    split_by_constants,
    strongly_connected,
)
from gdl.reasoning.terms import Const, Distinct, Fn, Literal, Not, Or, Rule, Term, term_to_kif
from solvers.errors import GameError, Location, ValidationError

KEYWORD_ARITY = {"role": 1, "init": 1, "true": 1, "next": 1, "legal": 2, "does": 2,
                 "goal": 2, "terminal": 0, "base": 1, "input": 2, "sees": 2}
NEVER_IN_HEAD = ("true", "does")
NEVER_IN_BODY = ("init", "next", "base", "input")
STATIC_RELATIONS = ("init", "base", "input")
MOVE_FREE_RELATIONS = ("legal", "goal", "terminal")


def body_atoms(body: Sequence[Literal], negated: bool = False) -> Iterator[tuple[Const | Fn, bool]]:
    """Every atom of a body (inside ``or``/``not`` too) with whether it is negated."""
    for literal in body:
        if isinstance(literal, Not):
            yield from body_atoms((literal.literal,), not negated)
        elif isinstance(literal, Or):
            for disjunct in literal.disjuncts:
                yield from body_atoms(disjunct, negated)
        elif isinstance(literal, (Const, Fn)):
            yield literal, negated


def _body_terms(body: Sequence[Literal]) -> Iterator[Term]:
    """Every argument term of every literal of a body (to check function arities)."""
    for literal in body:
        if isinstance(literal, Not):
            yield from _body_terms((literal.literal,))
        elif isinstance(literal, Or):
            for disjunct in literal.disjuncts:
                yield from _body_terms(disjunct)
        elif isinstance(literal, Distinct):
            yield literal.left
            yield literal.right
        elif isinstance(literal, Fn):
            yield from literal.args


def _functions(term: Term) -> Iterator[Fn]:
    stack = [term]
    while stack:
        item = stack.pop()
        if isinstance(item, Fn):
            yield item
            stack.extend(item.args)


def _arity(atom: Const | Fn) -> int:
    return len(atom.args) if isinstance(atom, Fn) else 0


class _Checker:
    def __init__(self, rules: Sequence[Rule], filename: str | None) -> None:
        self.rules = rules
        self.filename = filename
        self.problems: list[GameError] = []

    def problem(self, rule: Rule | None, message: str) -> None:
        location = Location(self.filename, rule.line, rule.column) if rule else Location(
            self.filename)
        self.problems.append(GameError(message, location))

    # 1
    def arities(self) -> None:
        relations: dict[str, tuple[int, Rule]] = {}
        functions: dict[str, tuple[int, Rule]] = {}
        for rule in self.rules:
            atoms = [rule.head, *(a for a, _ in body_atoms(rule.body))]
            for atom in atoms:
                self.same_arity(relations, atom.name, _arity(atom), rule, "relation")
            head_terms = rule.head.args if isinstance(rule.head, Fn) else ()
            for term in [*head_terms, *_body_terms(rule.body)]:
                for fn in _functions(term):
                    self.same_arity(functions, fn.name, len(fn.args), rule, "function")

    def same_arity(self, seen: dict[str, tuple[int, Rule]], name: str, arity: int, rule: Rule,
                   kind: str) -> None:
        if kind == "relation" and name in KEYWORD_ARITY and KEYWORD_ARITY[name] != arity:
            self.problem(rule, f"'{name}' has arity {KEYWORD_ARITY[name]}, used with {arity}")
            return
        first = seen.setdefault(name, (arity, rule))
        if first[0] != arity:
            self.problem(rule, f"{kind} '{name}' used with arity {arity} here but "
                               f"{first[0]} at line {first[1].line}")
            seen[name] = (arity, rule)  # report each change once, not every later use

    # 2
    def placement(self) -> None:
        roles: dict[str, Rule] = {}
        for rule in self.rules:
            head = rule.head.name
            if head in NEVER_IN_HEAD:
                self.problem(rule, f"'{head}' may not appear in a rule head")
            if head == "role":
                if rule.body or literal_variables(rule.head):
                    self.problem(rule, "'role' may only appear in ground facts")
                elif isinstance(rule.head, Fn) and rule.head.args:
                    name = term_to_kif(rule.head.args[0])
                    if name in roles:
                        self.problem(rule, f"role {name} declared twice")
                    roles[name] = rule
            for atom, _ in body_atoms(rule.body):
                if atom.name in NEVER_IN_BODY:
                    self.problem(rule, f"'{atom.name}' may not appear in a rule body")
        if not roles:
            self.problem(None, "the game declares no role")

    def graph(self) -> tuple[dict[str, set[str]], set[tuple[str, str]], dict[str, Rule]]:
        graph: dict[str, set[str]] = {}
        negative: set[tuple[str, str]] = set()
        first_rule: dict[str, Rule] = {}
        for rule in self.rules:
            head = rule.head.name
            graph.setdefault(head, set())
            first_rule.setdefault(head, rule)
            for atom, negated in body_atoms(rule.body):
                graph[head].add(atom.name)
                graph.setdefault(atom.name, set())
                if negated:
                    negative.add((head, atom.name))
        return graph, negative, first_rule

    # 3, 5, 6
    def dependencies(self) -> None:
        graph, negative, first_rule = self.graph()
        reach: dict[str, set[str]] = {}

        def reachable(name: str) -> set[str]:
            if name not in reach:
                seen, stack = set(), [name]
                while stack:
                    for dep in graph.get(stack.pop(), ()):
                        if dep not in seen:
                            seen.add(dep)
                            stack.append(dep)
                reach[name] = seen
            return reach[name]

        forbidden = {**{r: {"true", "does", "legal", "goal", "terminal"} for r in STATIC_RELATIONS},
                     **{r: {"does"} for r in MOVE_FREE_RELATIONS}}
        for rule in self.rules:
            banned = forbidden.get(rule.head.name)
            if banned is None:
                continue
            reached = set().union(*({atom.name} | reachable(atom.name)
                                    for atom, _ in body_atoms(rule.body)))
            if reached & banned:
                listed = ", ".join(f"'{r}'" for r in sorted(reached & banned))
                self.problem(rule, f"'{rule.head.name}' may not depend on {listed}")
        component: dict[str, int] = {}
        cyclic: set[str] = set()
        for number, scc in enumerate(strongly_connected(graph)):
            for name in scc:
                component[name] = number
                if len(scc) > 1 or name in graph[name]:
                    cyclic.add(name)
        unstratified = [(h, d) for h, d in sorted(negative)
                        if component[h] == component[d] and h in cyclic]
        if unstratified and _locally_stratified(self.rules):
            unstratified = []
        for head, dep in unstratified:
            self.problem(first_rule[head], f"negation is not stratified: '{head}' depends "
                                           f"on 'not {dep}' in a recursive cycle")
        for rule in self.rules:
            self.recursion_restriction(rule, component, cyclic)

    def recursion_restriction(self, rule: Rule, component: dict[str, int],
                              cyclic: set[str]) -> None:
        head = rule.head.name
        if head not in cyclic:
            return
        head_args = set(rule.head.args) if isinstance(rule.head, Fn) else set()
        for flat in _flat_bodies(rule):
            outside: set[str] = set()
            for literal in flat:
                if isinstance(literal, (Const, Fn)) and component[literal.name] != component[head]:
                    outside |= literal_variables(literal)
            for literal in flat:
                if (not isinstance(literal, Fn) or literal.name not in component
                        or component[literal.name] != component[head]):
                    continue
                for arg in literal.args:
                    variables = literal_variables(arg) if not isinstance(arg, Const) else set()
                    if variables and arg not in head_args and not variables <= outside:
                        self.problem(rule, f"recursion restriction: argument {term_to_kif(arg)}"
                                           f" of recursive {term_to_kif(literal)} is not ground, "
                                           "not a head argument, and not bound by a "
                                           "non-recursive positive atom")
                        return

    # 4
    def safety(self) -> None:
        for rule in self.rules:
            if not rule.body:
                if literal_variables(rule.head):
                    self.problem(rule, f"fact {term_to_kif(rule)} has variables")
                continue
            for flat in _flat_bodies(rule):
                positive: set[str] = set()
                for literal in flat:
                    if isinstance(literal, (Const, Fn)):
                        positive |= literal_variables(literal)
                needed = literal_variables(rule.head).union(
                    *(literal_variables(lit) for lit in flat))
                unsafe = needed - positive
                if unsafe:
                    listed = ", ".join("?" + v for v in sorted(unsafe))
                    self.problem(rule, f"unsafe rule: {listed} must appear in a positive "
                                       f"atom of the body of {term_to_kif(rule)}")
                    break


def _locally_stratified(rules: Sequence[Rule]) -> bool:
    """Whether splitting relations by a constant argument stratifies the negation
    (see :func:`gdl.reasoning.prover.split_by_constants`)."""
    try:
        return split_by_constants(*reversed(facts_and_flat_rules(rules))) is not None
    except GameError:
        return False


def _flat_bodies(rule: Rule) -> list[tuple]:
    try:
        return [flat.body for flat in flatten(rule)]
    except ValidationError:
        return []  # too many disjunct combinations: reported once by problems_of


def validate(rules: Sequence[Rule], filename: str | None = None) -> None:
    """Raise :class:`ValidationError` with every problem of ``rules`` (none: valid)."""
    problems = problems_of(rules, filename)
    if problems:
        shown = "; ".join(str(p) for p in problems[:3])
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise ValidationError(f"invalid GDL: {shown}{more}", problems)


def problems_of(rules: Sequence[Rule], filename: str | None = None) -> list[GameError]:
    """Every problem of ``rules`` in file order."""
    checker = _Checker(rules, filename)
    for rule in rules:
        try:
            flatten(rule)
        except ValidationError as exc:
            checker.problem(rule, exc.message)
    checker.arities()
    checker.placement()
    checker.safety()
    checker.dependencies()
    return sorted(checker.problems,
                  key=lambda p: (p.location.line or 0, p.location.column or 0)
                  if p.location else (0, 0))
