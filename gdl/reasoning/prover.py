"""GDL rules normalised, and static relations derived bottom-up (semi-naively).

The shared ground of both engines: the general engine (:mod:`gdl.reasoning.topdown`) derives
its static relations here once per game, and both engines use the normal form.

1. Normalise: expand every ``or`` (also under ``not``, by De Morgan) into one rule
   per disjunct, so bodies are conjunctions of atoms, negated atoms, ``distinct``
   and its negation. Ground terms become Python values: a constant is its ``str``
   name, a function term the tuple ``(name, arg...)``; a fact of a relation is the
   tuple of its argument values. Negation stratified only per constant is split by
   that constant (:func:`split_by_constants`); bodies longer than :data:`MAX_BODY`
   are chained through auxiliary relations.
2. Stratify (Ullman, *Principles of Database and Knowledge-Base Systems* vol. 1,
   ch. 3): strongly connected components (SCCs) of the relation dependency graph
   in topological order.
3. Compile each rule to Python source: body literals ordered greedily (fully bound
   atoms first, then ones with a bound argument, else in written order; negations
   and ``distinct`` as soon as their variables are bound), one nested loop per
   atom over a hash index keyed by the bound argument positions (built lazily per
   relation), membership tests for fully bound atoms.
4. Evaluate on demand: a :class:`Context` computes an SCC only when a relation in
   it is asked for. Recursive SCCs iterate semi-naively: after a first naive round,
   each rule is re-run once per recursive body atom with that atom reading only the
   facts that were new in the previous round, until no new fact appears.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gdl.reasoning.terms import (
    Const,
    Distinct,
    Fn,
    Literal,
    Not,
    Or,
    Rule,
    Term,
    Var,
    term_to_kif,
    variables,
)
from solvers.errors import GameError, LimitReached, Location, ValidationError

Value = str | tuple
Row = tuple

MAX_EXPANDED_BODIES = 4096  # per rule, after distributing `or`


# ---------------------------------------------------------------- values


def to_value(term: Term) -> Value:
    """The Python value of a ground term."""
    if isinstance(term, Const):
        return term.name
    if isinstance(term, Fn):
        return (term.name, *map(to_value, term.args))
    raise GameError(f"expected a ground term, found variable ?{term.name}")


def value_to_kif(value: Value) -> str:
    if isinstance(value, str):
        return value
    return "(" + " ".join(map(value_to_kif, value)) + ")"


# ---------------------------------------------------------------- normalisation


@dataclass(frozen=True, slots=True)
class Eq:
    """``(not (distinct a b))``."""

    left: Term
    right: Term


FlatLiteral = Const | Fn | Not | Distinct | Eq


@dataclass(frozen=True, slots=True)
class FlatRule:
    """A rule whose body is a conjunction of flat literals (Not holds only an atom)."""

    head: Const | Fn
    body: tuple[FlatLiteral, ...]
    source: Rule
    ordered: bool = False  # body already in evaluation order (auxiliary rules)


def _alternatives(literal: Literal | Eq, rule: Rule) -> list[list[FlatLiteral]]:
    """The conjunctions, one of which must hold for ``literal`` to hold."""
    if isinstance(literal, Or):
        return [c for disjunct in literal.disjuncts for c in _dnf(disjunct, rule)]
    if isinstance(literal, Not):
        inner = literal.literal
        if isinstance(inner, Not):
            return _alternatives(inner.literal, rule)
        if isinstance(inner, Distinct):
            return [[Eq(inner.left, inner.right)]]
        if isinstance(inner, Or):
            # not (d1 or d2 ...) = (not d1) and (not d2) ...; not (l1 and l2) = (not l1) or (not l2)
            parts = [[alt for lit in disjunct for alt in _alternatives(Not(lit), rule)]
                     for disjunct in inner.disjuncts]
            return _product(parts, rule)
        return [[literal]]
    return [[literal]]


def _dnf(literals: Sequence[Literal], rule: Rule) -> list[list[FlatLiteral]]:
    return _product([_alternatives(lit, rule) for lit in literals], rule)


def _product(parts: list[list[list[FlatLiteral]]], rule: Rule) -> list[list[FlatLiteral]]:
    result: list[list[FlatLiteral]] = [[]]
    for alternatives in parts:
        if len(result) * len(alternatives) > MAX_EXPANDED_BODIES:
            raise ValidationError(
                f"rule expands to more than {MAX_EXPANDED_BODIES} bodies after distributing 'or'",
                location=Location(None, rule.line, rule.column))
        result = [prefix + alt for prefix in result for alt in alternatives]
    return result


def flatten(rule: Rule) -> list[FlatRule]:
    """One rule per disjunct combination of ``rule``."""
    return [FlatRule(rule.head, tuple(body), rule) for body in _dnf(rule.body, rule)]


def literal_relation(literal: FlatLiteral) -> tuple[str, bool] | None:
    """(relation name, negated) of an atom or negated atom; None for (in)equality."""
    if isinstance(literal, (Const, Fn)):
        return literal.name, False
    if isinstance(literal, Not):
        inner = literal.literal
        assert isinstance(inner, (Const, Fn))
        return inner.name, True
    return None


def literal_variables(literal: FlatLiteral) -> set[str]:
    if isinstance(literal, (Distinct, Eq)):
        return set(variables(literal.left)) | set(variables(literal.right))
    if isinstance(literal, Not):
        return set(variables(literal.literal))
    return set(variables(literal))


class UnboundVariables(Exception):
    def __init__(self, names: list[str]) -> None:
        super().__init__(names)
        self.names = names


def plan_body(body: Sequence[FlatLiteral], bound: set[str],
              first: int | None = None,
              cost: Callable[[Const | Fn, set[str]], float] | None = None,
              deferred: Callable[[FlatLiteral], bool] | None = None) -> list[int]:
    """Evaluation order of a body given already ``bound`` variables.

    Positive atoms: ``first`` (a delta atom) if given, then fully bound atoms, then
    the cheapest by ``cost(atom, bound)`` (expected matches) if given, else atoms
    with a bound or constant argument; ties in written order (rule authors usually
    write joins in a sensible order). Negations and (in)equalities go right after
    their variables are bound, except ``deferred`` ones (expensive tests), which
    wait until no positive atom is left.
    """
    bound = set(bound)
    positives = [i for i, lit in enumerate(body) if isinstance(lit, (Const, Fn))]
    filters = [i for i in range(len(body)) if i not in positives]
    order: list[int] = []
    names = [literal_variables(literal) for literal in body]  # (scored n^2 / 2 times)

    def place_filters() -> None:
        for i in list(filters):
            if names[i] <= bound and not (
                    positives and deferred is not None and deferred(body[i])):
                order.append(i)
                filters.remove(i)

    def score(i: int) -> tuple[int, int, float, int]:
        atom = body[i]
        assert isinstance(atom, (Const, Fn))
        if cost is not None:
            selectivity = cost(atom, bound)
        else:
            args = atom.args if isinstance(atom, Fn) else ()
            selectivity = 0 if any(not isinstance(a, Var) or a.name in bound for a in args) else 1
        return (0 if i == first else 1, 0 if names[i] <= bound else 1, selectivity, i)

    # an atom's score depends on ``bound`` only through its own variables: kept until
    # one of them is bound (a 300-atom body was scored 45,000 times, 2 s of a start clock)
    scores: dict[int, tuple[int, int, float, int]] = {}
    atoms_of: dict[str, list[int]] = {}
    for i in positives:
        for name in names[i]:
            atoms_of.setdefault(name, []).append(i)

    def kept_score(i: int) -> tuple[int, int, float, int]:
        known = scores.get(i)
        if known is None:
            known = scores[i] = score(i)
        return known

    place_filters()
    while positives:
        best = min(positives, key=kept_score)
        positives.remove(best)
        order.append(best)
        for name in names[best] - bound:
            for i in atoms_of[name]:
                scores.pop(i, None)
        bound |= names[best]
        place_filters()
    if filters:
        unbound = set().union(*(names[i] for i in filters)) - bound
        raise UnboundVariables(sorted(unbound))
    return order


# ---------------------------------------------------------------- relations


class Relation:
    """The facts of one relation: a row list, a row set and lazy hash indexes."""

    __slots__ = ("rows", "set", "indexes")

    def __init__(self, rows: Iterable[Row] = ()) -> None:
        self.set: set[Row] = set(rows)
        self.rows: list[Row] = list(self.set)
        self.indexes: dict[tuple[tuple[int, ...], ...], dict] = {}

    def add(self, rows: Iterable[Row]) -> list[Row]:
        """Add rows; return the ones that were new."""
        new = [row for row in rows if row not in self.set]
        if new:
            self.set.update(new)
            self.rows.extend(new)
            for paths, index in self.indexes.items():
                _fill_index(index, paths, new)
        return new

    def index(self, paths: tuple[tuple[int, ...], ...]) -> dict:
        """Rows keyed by their values at ``paths`` (a single value when one path)."""
        index = self.indexes.get(paths)
        if index is None:
            index = {}
            _fill_index(index, paths, self.rows)
            self.indexes[paths] = index
        return index


_FILLERS: dict[tuple[tuple[int, ...], ...], Callable[[dict, Iterable[Row]], None]] = {}


def _fill_index(index: dict, paths: tuple[tuple[int, ...], ...], rows: Iterable[Row]) -> None:
    """Add ``rows`` to ``index`` under their values at ``paths`` (generated code)."""
    fill = _FILLERS.get(paths)
    if fill is None:
        parts = ["row" + "".join(f"[{i}]" for i in path) for path in paths]
        key = parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ",)"
        # A row whose shape lacks a path cannot match the pattern: skip it. A string
        # indexed by mistake only misfiles a row the matcher rejects anyway.
        source = (f"def fill(index, rows):\n"
                  f"    get = index.get\n"
                  f"    for row in rows:\n"
                  f"        try:\n"
                  f"            key = {key}\n"
                  f"        except (IndexError, TypeError):\n"
                  f"            continue\n"
                  f"        bucket = get(key)\n"
                  f"        if bucket is None:\n"
                  f"            index[key] = [row]\n"
                  f"        else:\n"
                  f"            bucket.append(row)\n")
        namespace: dict[str, object] = {}
        exec(source, namespace)
        fill = _FILLERS[paths] = namespace["fill"]  # type: ignore[assignment]
    fill(index, rows)


# ---------------------------------------------------------------- compilation

RuleFunction = Callable[..., None]


class TermCode:
    """Python expressions for terms whose variables are held in Python locals."""

    def __init__(self) -> None:
        self.slots: dict[str, str] = {}  # variable name -> Python expression of its value

    def expr(self, term: Term) -> str:
        if isinstance(term, Const):
            return repr(term.name)
        if isinstance(term, Var):
            return self.slots[term.name]
        return "(" + ", ".join([repr(term.name), *map(self.expr, term.args)]) + ",)"

    def is_bound(self, term: Term) -> bool:
        if isinstance(term, Var):
            return term.name in self.slots
        if isinstance(term, Fn):
            return all(self.is_bound(a) for a in term.args)
        return True

    def comparison(self, literal: FlatLiteral) -> str | None:
        """The condition of a ``distinct`` or its negation; None for other literals."""
        if isinstance(literal, Distinct):
            return f"{self.expr(literal.left)} != {self.expr(literal.right)}"
        if isinstance(literal, Eq):
            return f"{self.expr(literal.left)} == {self.expr(literal.right)}"
        return None


class _Codegen(TermCode):
    """Python source for one flat rule (optionally with one atom reading a delta)."""

    def __init__(self, rule: FlatRule, delta_position: int | None) -> None:
        super().__init__()
        self.rule = rule
        self.delta_position = delta_position
        self.prelude: list[str] = []
        self.lines: list[str] = []
        self.depth = 1
        self.counter = 0

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def row_expr(self, atom: Const | Fn) -> str:
        args = atom.args if isinstance(atom, Fn) else ()
        return "(" + "".join(self.expr(a) + ", " for a in args) + ")"

    def bound_paths(self, term: Term, path: tuple[int, ...],
                    out: list[tuple[tuple[int, ...], str]]) -> None:
        if isinstance(term, Fn):
            for i, arg in enumerate(term.args, start=1):
                self.bound_paths(arg, path + (i,), out)
        elif self.is_bound(term):
            out.append((path, self.expr(term)))

    # -- matching a pattern against a value expression, binding free variables
    def match(self, term: Term, value: str) -> None:
        if isinstance(term, Const):
            self.emit(f"if {value} != {term.name!r}: continue")
        elif isinstance(term, Var):
            if term.name in self.slots:
                self.emit(f"if {value} != {self.slots[term.name]}: continue")
            else:
                local = f"v{len(self.slots)}"
                self.slots[term.name] = local
                self.emit(f"{local} = {value}")
        elif self.is_bound(term):
            self.emit(f"if {value} != {self.expr(term)}: continue")
        else:
            local = self.fresh("x")
            self.emit(f"{local} = {value}")
            self.emit(f"if type({local}) is not tuple or len({local}) != {len(term.args) + 1}"
                      f" or {local}[0] != {term.name!r}: continue")
            for i, arg in enumerate(term.args, start=1):
                self.match(arg, f"{local}[{i}]")

    # -- body literal order
    def order(self) -> list[int]:
        if self.rule.ordered:
            rest = [i for i in range(len(self.rule.body)) if i != self.delta_position]
            return rest if self.delta_position is None else [self.delta_position, *rest]
        try:
            return plan_body(self.rule.body, set(), self.delta_position)
        except UnboundVariables as exc:
            raise unsafe_rule(self.rule, exc.names) from None

    def generate(self, name: str) -> str:
        body = self.rule.body
        for position in self.order():
            literal = body[position]
            condition = self.comparison(literal)
            if condition is not None:
                self.open_if(condition)
            elif isinstance(literal, Not):
                inner = literal.literal
                assert isinstance(inner, (Const, Fn))
                store = self.relation_local(inner.name, "set")
                self.open_if(f"{self.row_expr(inner)} not in {store}")
            else:
                self.positive(literal, position)
        head_vars = literal_variables(self.rule.head) - set(self.slots)
        if head_vars:
            raise unsafe_rule(self.rule, sorted(head_vars))
        self.emit(f"add({self.row_expr(self.rule.head)})")
        signature = "get, add, delta" if self.delta_position is not None else "get, add"
        return "\n".join([f"def {name}({signature}):", *self.prelude, *self.lines,
                          "    return None"])

    def relation_local(self, relation: str, attribute: str, paths: object = None) -> str:
        local = self.fresh("r")
        if attribute == "index":
            self.prelude.append(f"    {local} = get({relation!r}).index({paths!r})")
        else:
            self.prelude.append(f"    {local} = get({relation!r}).{attribute}")
        return local

    def open_if(self, condition: str) -> None:
        self.emit(f"if {condition}:")
        self.depth += 1

    def positive(self, atom: Const | Fn, position: int) -> None:
        args = atom.args if isinstance(atom, Fn) else ()
        if position == self.delta_position:
            source = "delta"
        elif all(self.is_bound(a) for a in args):
            store = self.relation_local(atom.name, "set")
            self.open_if(f"{self.row_expr(atom)} in {store}")
            return
        else:
            keyed: list[tuple[tuple[int, ...], str]] = []
            for i, arg in enumerate(args):
                self.bound_paths(arg, (i,), keyed)
            if keyed:
                paths = tuple(p for p, _ in keyed)
                index = self.relation_local(atom.name, "index", paths)
                key = keyed[0][1] if len(keyed) == 1 else "(" + ", ".join(
                    e for _, e in keyed) + ",)"
                source = f"{index}.get({key}, ())"
            else:
                source = self.relation_local(atom.name, "rows")
        row = self.fresh("t")
        self.emit(f"for {row} in {source}:")
        self.depth += 1
        for i, arg in enumerate(args):
            self.match(arg, f"{row}[{i}]")


def unsafe_rule(rule: FlatRule, names: list[str]) -> ValidationError:
    listed = ", ".join("?" + n for n in names)
    return ValidationError(
        f"unsafe rule {term_to_kif(rule.source)}: {listed} must appear in a positive body atom",
        location=Location(None, rule.source.line, rule.source.column))


def compile_rule(rule: FlatRule, delta_position: int | None = None) -> RuleFunction:
    """A Python function ``f(get, add[, delta])`` deriving the heads of ``rule``."""
    source = _Codegen(rule, delta_position).generate("derive")
    namespace: dict[str, object] = {}
    exec(compile(source, f"<rule {rule.source.line}:{rule.source.column}>", "exec"), namespace)
    return namespace["derive"]  # type: ignore[return-value]


# ---------------------------------------------------------------- program


@dataclass
class Component:
    """One SCC of the dependency graph: its relations and rules."""

    relations: tuple[str, ...]
    recursive: bool
    rules: list[tuple[str, RuleFunction]] = field(default_factory=list)
    # (head relation, function, recursive relation the delta atom reads)
    delta_rules: list[tuple[str, RuleFunction, str]] = field(default_factory=list)


def facts_and_flat_rules(rules: Sequence[Rule],
                         ) -> tuple[dict[str, list[Row]], dict[str, list[FlatRule]]]:
    """Facts as rows and the other rules flattened, both by head relation."""
    facts: dict[str, list[Row]] = {}
    flat_rules: dict[str, list[FlatRule]] = {}
    for rule in rules:
        name = rule.head.name
        if rule.is_fact:
            head_args = rule.head.args if isinstance(rule.head, Fn) else ()
            facts.setdefault(name, []).append(tuple(map(to_value, head_args)))
        else:
            flat_rules.setdefault(name, []).extend(flatten(rule))
    return facts, flat_rules


def split_by_constants(flat_rules: dict[str, list[FlatRule]], facts: dict[str, list[Row]],
                       ) -> tuple[dict[str, list[FlatRule]], dict[str, list[Row]]] | None:
    """Locally stratified negation made stratified, or None when not needed/possible.

    Some games negate a relation inside its own definition on another constant,
    e.g. ``(<= (goal robot 100) (not (goal robot 0)))`` (corpus futoshiki5,
    queens*, hidato19, nineBoardTicTacToePie). Each relation on such a cycle is
    split by an argument position that is a constant in every occurrence:
    ``goal`` becomes ``goal [1=100]``, ``goal [1=0]``... with bridge rules
    ``goal(a, b) <= goal [1=c](a, b)``, which makes the program stratified.
    """
    graph = dependency_graph(flat_rules)
    for name in facts:
        graph.setdefault(name, set())
    negative = _negative_edges(flat_rules)
    component = {r: i for i, scc in enumerate(strongly_connected(graph)) for r in scc}
    targets = {r for h, d in negative if component[h] == component[d]
               for r in graph if component[r] == component[h]}
    if not targets:
        return None
    occurrences: dict[str, list[Const | Fn]] = {r: [] for r in targets}
    for rules in flat_rules.values():
        for rule in rules:
            for atom in (rule.head, *(lit.literal if isinstance(lit, Not) else lit
                                      for lit in rule.body)):
                if isinstance(atom, (Const, Fn)) and atom.name in occurrences:
                    occurrences[atom.name].append(atom)
    position: dict[str, int] = {}
    for relation, atoms in occurrences.items():
        arity = len(atoms[0].args) if atoms and isinstance(atoms[0], Fn) else 0
        found = [k for k in range(arity) if all(
            isinstance(a, Fn) and len(a.args) == arity and isinstance(a.args[k], Const)
            for a in atoms)]
        if not found:
            return None
        position[relation] = found[-1]

    def split_name(relation: str, value: Value) -> str:
        return f"{relation} [{position[relation]}={value_to_kif(value)}]"

    def rename(atom: FlatLiteral) -> FlatLiteral:
        if isinstance(atom, Not):
            return Not(rename(atom.literal))  # type: ignore[arg-type]
        if isinstance(atom, Fn) and atom.name in position:
            key = atom.args[position[atom.name]]
            assert isinstance(key, Const)
            return Fn(split_name(atom.name, key.name), atom.args)
        return atom

    new_rules: dict[str, list[FlatRule]] = {}
    new_facts = {r: rows for r, rows in facts.items() if r not in position}
    keys: dict[str, set[Value]] = {r: set() for r in position}
    sources: dict[str, Rule] = {}
    for relation, rows in facts.items():
        if relation in position:
            for row in rows:
                new_facts.setdefault(split_name(relation, row[position[relation]]), []).append(row)
                keys[relation].add(row[position[relation]])
    for rules in flat_rules.values():
        for rule in rules:
            head = rename(rule.head)
            assert isinstance(head, (Const, Fn))
            if rule.head.name in position:
                keys[rule.head.name].add(to_value(rule.head.args[position[rule.head.name]]))  # type: ignore[union-attr]
                sources.setdefault(rule.head.name, rule.source)
            new_rules.setdefault(head.name, []).append(
                FlatRule(head, tuple(map(rename, rule.body)), rule.source, rule.ordered))
    for relation, values in keys.items():
        arity = len(occurrences[relation][0].args)  # type: ignore[union-attr]
        args = tuple(Var(f"a{i}") for i in range(arity))
        source = sources.get(relation) or next(iter(sources.values()))
        for value in sorted(values, key=value_to_kif):
            new_rules.setdefault(relation, []).append(
                FlatRule(Fn(relation, args), (Fn(split_name(relation, value), args),), source))
    try:
        _stratify_check(dependency_graph(new_rules), _negative_edges(new_rules))
    except ValidationError:
        return None
    return new_rules, new_facts


class Program:
    """Compiled, stratified rules, ready to evaluate in a :class:`Context`."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.facts, flat_rules = facts_and_flat_rules(rules)
        split = split_by_constants(flat_rules, self.facts)
        if split is not None:
            flat_rules, self.facts = split
        self.graph, self.components = self._stratify(split_long_bodies(flat_rules))
        self.component_of = {r: c for c in self.components for r in c.relations}
        self._needs: dict[str, list[Component]] = {}

    def _stratify(self, flat_rules: dict[str, list[FlatRule]],
                  ) -> tuple[dict[str, set[str]], list[Component]]:
        graph = dependency_graph(flat_rules)
        for name in self.facts:
            graph.setdefault(name, set())
        sccs = _stratify_check(graph, _negative_edges(flat_rules))
        components: list[Component] = []
        for scc in sccs:
            members = set(scc)
            recursive = is_recursive(scc, graph)
            component = Component(tuple(sorted(scc)), recursive)
            for relation in component.relations:
                for rule in flat_rules.get(relation, ()):
                    component.rules.append((relation, compile_rule(rule)))
                    if recursive:
                        for position, literal in enumerate(rule.body):
                            if isinstance(literal, (Const, Fn)) and literal.name in members:
                                component.delta_rules.append(
                                    (relation, compile_rule(rule, position), literal.name))
            components.append(component)
        return graph, components

    def needs(self, relation: str) -> list[Component]:
        """The components to evaluate (in order) before ``relation`` is complete."""
        found = self._needs.get(relation)
        if found is None:
            seen = {relation}
            stack = [relation]
            while stack:
                for dep in self.graph.get(stack.pop(), ()):
                    if dep not in seen:
                        seen.add(dep)
                        stack.append(dep)
            wanted = {id(self.component_of[r]) for r in seen if r in self.component_of}
            found = [c for c in self.components if id(c) in wanted]
            self._needs[relation] = found
        return found


class TooLarge(LimitReached):
    """A relation outgrew a :class:`Context`'s ``max_cells``; ``relation`` names it."""

    def __init__(self, relation: str, max_cells: int) -> None:
        super().__init__(f"relation {relation} exceeds {max_cells} cells")
        self.relation = relation


class Context:
    """The facts of a program's relations, each derived when first asked for.

    ``max_cells`` bounds every derived relation (rows times arity), so a relation that
    blows up (a 300-argument relation over {0, 1}) raises :class:`TooLarge` before
    it takes the memory; None: unbounded."""

    def __init__(self, program: Program, max_cells: int | None = None) -> None:
        self.program = program
        self.max_cells = max_cells
        self.relations: dict[str, Relation] = {}
        self.done: set[int] = set()
        relations = self.relations
        self.get = lambda name: relations.get(name, _EMPTY)

    def relation(self, name: str) -> Relation:
        """All facts of relation ``name`` in this context."""
        for component in self.program.needs(name):
            if id(component) not in self.done:
                self._evaluate(component)
        return self.relations.get(name, _EMPTY)

    def rows(self, name: str) -> list[Row]:
        return self.relation(name).rows

    def _evaluate(self, component: Component) -> None:
        if not component.recursive:
            (name,) = component.relations
            derived: set[Row] = set(self.program.facts.get(name, ()))
            for _head, derive in component.rules:
                derive(self.get, self._adder(name, derived))
            self.relations[name] = Relation(derived)
        else:
            self._evaluate_recursive(component)
        self.done.add(id(component))

    def _adder(self, name: str, rows: set[Row]) -> Callable[[Row], None]:
        """``rows.add``, counting cells against ``max_cells`` when there is a limit."""
        if self.max_cells is None:
            return rows.add
        limit, add = self.max_cells, rows.add

        def bounded(row: Row) -> None:
            add(row)
            if len(rows) * len(row) > limit:
                raise TooLarge(name, limit)
        return bounded

    def _evaluate_recursive(self, component: Component) -> None:
        facts = self.program.facts
        for name in component.relations:
            self.relations[name] = Relation(facts.get(name, ()))
        found: dict[str, set[Row]] = {name: set() for name in component.relations}
        for head, derive in component.rules:
            derive(self.get, self._adder(head, found[head]))
        delta = {name: self.relations[name].add(rows) for name, rows in found.items()}
        while any(delta.values()):
            found = {name: set() for name in component.relations}
            for head, derive, source in component.delta_rules:
                if delta[source]:
                    derive(self.get, self._adder(head, found[head]), delta[source])
            delta = {name: self.relations[name].add(rows) for name, rows in found.items()}
            if self.max_cells is not None:
                for name in component.relations:
                    rows = self.relations[name].rows
                    if rows and len(rows) * len(rows[0]) > self.max_cells:
                        raise TooLarge(name, self.max_cells)


_EMPTY = Relation()


MAX_BODY = 12  # literals per compiled rule: Python allows 20 nested blocks


def split_long_bodies(flat_rules: dict[str, list[FlatRule]]) -> dict[str, list[FlatRule]]:
    """Rules with more than MAX_BODY literals split into a chain of auxiliary rules
    (``aux N`` holds the variables of a prefix that the rest still needs)."""
    out: dict[str, list[FlatRule]] = {}
    numbers = itertools.count()
    for rules in flat_rules.values():
        for rule in rules:
            for part in _split(rule, next(numbers)):
                out.setdefault(part.head.name, []).append(part)
    return out


def _split(rule: FlatRule, salt: int) -> list[FlatRule]:
    if len(rule.body) <= MAX_BODY:
        return [rule]
    try:
        order = range(len(rule.body)) if rule.ordered else plan_body(rule.body, set())
    except UnboundVariables:
        return [rule]  # compiling it reports the unsafe rule
    body = [rule.body[i] for i in order]
    parts: list[FlatRule] = []
    while len(body) > MAX_BODY:
        prefix, rest = body[:MAX_BODY], body[MAX_BODY:]
        later = literal_variables(rule.head).union(*map(literal_variables, rest))
        needed = sorted(set().union(*map(literal_variables, prefix)) & later)
        name = f"aux {salt}.{len(parts)} {rule.head.name}"
        aux = Fn(name, tuple(Var(v) for v in needed)) if needed else Const(name)
        parts.append(FlatRule(aux, tuple(prefix), rule.source, ordered=True))
        body = [aux, *rest]
    parts.append(FlatRule(rule.head, tuple(body), rule.source, ordered=True))
    return parts


def dependency_graph(flat_rules: dict[str, list[FlatRule]]) -> dict[str, set[str]]:
    """Relation -> relations its rules read (every mentioned relation is a node)."""
    graph: dict[str, set[str]] = {name: set() for name in flat_rules}
    for head, rules in flat_rules.items():
        for rule in rules:
            for literal in rule.body:
                dep = literal_relation(literal)
                if dep is not None:
                    graph[head].add(dep[0])
                    graph.setdefault(dep[0], set())
    return graph


def _negative_edges(flat_rules: dict[str, list[FlatRule]]) -> set[tuple[str, str]]:
    return {(head, dep[0]) for head, rules in flat_rules.items() for rule in rules
            for dep in map(literal_relation, rule.body) if dep is not None and dep[1]}


def builds_terms(head: Const | Fn) -> bool:
    """Whether a rule head has a function-term argument containing a variable."""
    return isinstance(head, Fn) and any(
        isinstance(a, Fn) and variables(a) for a in head.args)


def is_recursive(scc: Sequence[str], graph: dict[str, set[str]]) -> bool:
    """Whether a strongly connected component is a cycle (or a relation reading itself)."""
    return len(scc) > 1 or scc[0] in graph[scc[0]]


def _stratify_check(graph: dict[str, set[str]],
                    negative: set[tuple[str, str]]) -> list[list[str]]:
    """The SCCs in dependency order; ValidationError if a negation is inside one."""
    sccs = strongly_connected(graph)
    for scc in sccs:
        members = set(scc)
        for head, dep in negative:
            if head in members and dep in members:
                raise ValidationError(f"negation is not stratified: {head} depends "
                                      f"negatively on {dep} within a recursive cycle")
    return sccs


def reaching(graph: dict[str, set[str]], targets: set[str]) -> set[str]:
    """The relations that depend (transitively) on one of ``targets``."""
    reverse: dict[str, set[str]] = {}
    for head, deps in graph.items():
        for dep in deps:
            reverse.setdefault(dep, set()).add(head)
    found = set(targets)
    stack = list(targets)
    while stack:
        for head in reverse.get(stack.pop(), ()):
            if head not in found:
                found.add(head)
                stack.append(head)
    return found


def strongly_connected(graph: dict[Any, set[Any]]) -> list[list[Any]]:
    """Tarjan's SCCs (iterative), dependencies before dependants."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                scc = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    scc.append(member)
                    if member == node:
                        break
                result.append(scc)
    return result
