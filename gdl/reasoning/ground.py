"""Grounding a GDL game over its reachable domain (instantiation).

The compiled engine (:mod:`gdl.reasoning.compile`) needs the game as a propositional
program: ground atoms and ground rules whose bodies are conjunctions of ground
literals. This module computes it, following the instantiation of Kissmann and
Edelkamp ("Instantiating General Games", KI 2009) and the relaxed reachability of
Helmert's Fast Downward translator:

1. Terms become plain Python values: a constant is its name (``str``), a function
   term is a tuple ``(name, arg...)``, a variable is a ``str`` starting with
   ``?``. Bodies are put in disjunctive normal form (``or`` and negated ``or`` /
   ``distinct`` expanded), giving rules with positive atoms, negative atoms,
   ``distinct`` pairs and equality pairs.
2. Relations are split by their dependencies: *static* ones do not depend on
   ``true``/``does``; *dynamic* ones do, and those that depend on ``does`` are the
   *move-dependent* ones (``next`` and its helpers).
3. Static relations are evaluated exactly, stratum by stratum (strongly connected
   components of the dependency graph in topological order, each iterated to its
   fixpoint; negation only looks at completed lower strata).
4. The reachable domain of the dynamic relations is the least fixpoint of the
   *relaxed* program: negations of dynamic atoms are dropped, ``true(f)`` holds for
   every ``init(f)`` and ``next(f)``, ``does(r, m)`` for every ``legal(r, m)``. It is
   computed semi-naively (each round joins at least one literal against the facts
   new in the previous round); once a rule's head is ground and already known, the
   rest of its body is not enumerated (an existence cut), which keeps frame rules
   over (cell x move) cheap. Joins use hash indexes on sub-term paths and a
   greedy order by expected matches per lookup.
5. Instantiation enumerates every substitution of a rule whose positive literals
   lie in the domain (static literals exact, ``distinct`` checked). Static literals
   are folded away; a negated dynamic atom outside the domain is always true and
   is dropped. Move-dependent rules are instantiated per move: when every such
   rule is a ``next`` rule with one ``does`` literal, all moves in one join keyed
   by their ``does`` atom (:meth:`GroundGame.ground_each_move`); otherwise per
   joint move on demand, with ``does`` bound to it (:meth:`GroundGame.ground_moves`).

Every enumeration counts its steps against a :class:`gdl.budget.Budget` (its
grounding limits) and raises :class:`~solvers.errors.LimitReached` when the game does
not fit.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from gdl.budget import Budget
from gdl.reasoning.prover import strongly_connected
from gdl.reasoning.terms import Const, Distinct, Fn, Literal, Not, Or, Rule, Term, Var
from solvers.errors import LimitReached

# A ground term or atom: a constant name or (name, arg...). Variables are "?name".
Value = str | tuple
PredKey = tuple[str, int]

# Relations the state machine never asks for; their rules are skipped unless
# another rule uses them.
UNUSED_KEYWORDS = frozenset({"base", "input"})
# GDL-II percepts: grounded per joint move on demand (:meth:`GroundGame.ground_sees`),
# apart from the other rules so that they never slow down ``next``
SEES = ("sees", 2)
MAX_DNF_CONJUNCTIONS = 4096
QUERY_KEYS = (("legal", 2), ("goal", 2), ("terminal", 0), ("next", 1))


@dataclass(frozen=True, slots=True)
class IRule:
    """A rule in normal form: conjunction of positive and negative atoms and tests."""

    head: Value
    pos: tuple[Value, ...]
    neg: tuple[Value, ...]
    neq: tuple[tuple[Value, Value], ...]
    eq: tuple[tuple[Value, Value], ...]
    where: str


@dataclass(frozen=True, slots=True)
class GroundRule:
    """``head <= pos... , not neg...`` over dynamic ground atoms only."""

    head: Value
    pos: tuple[Value, ...]
    neg: tuple[Value, ...]


# ----------------------------------------------------------------------------- terms


def to_value(term: Term) -> Value:
    """A parsed term as a plain value (see step 1)."""
    if isinstance(term, Const):
        return term.name
    if isinstance(term, Var):
        return "?" + term.name
    return (term.name, *map(to_value, term.args))


def atom_value(atom: Term) -> Value:
    """An atom as a value; a 0-ary ``(p)`` is the relation ``p``."""
    if isinstance(atom, Fn) and not atom.args:
        return atom.name
    return to_value(atom)


def from_value(value: Value) -> Term:
    """Back to a parsed term (for printing with :func:`gdl.reasoning.terms.term_to_kif`)."""
    if type(value) is str:
        return Var(value[1:]) if value[0] == "?" else Const(value)
    return Fn(value[0], tuple(map(from_value, value[1:])))


def pred_key(atom: Value) -> PredKey:
    return (atom, 0) if type(atom) is str else (atom[0], len(atom) - 1)


def substitute(t: Value, b: dict[str, Value]) -> Value:
    if type(t) is str:
        return b.get(t, t) if t[0] == "?" else t
    return tuple([(b.get(x, x) if x[0] == "?" else x) if type(x) is str else substitute(x, b)
                  for x in t])


def is_ground(t: Value) -> bool:
    if type(t) is str:
        return t[0] != "?"
    return all(is_ground(x) for x in t)


def value_vars(t: Value, out: set[str]) -> set[str]:
    if type(t) is str:
        if t[0] == "?":
            out.add(t)
    else:
        for x in t:
            value_vars(x, out)
    return out


def match(p: Value, g: Value, b: dict[str, Value], trail: list[str]) -> bool:
    """Extend ``b`` so that ``p`` equals ground ``g``; new variables go on ``trail``."""
    if type(p) is str:
        if p[0] == "?":
            v = b.get(p)
            if v is None:
                b[p] = g
                trail.append(p)
                return True
            return v == g
        return p == g
    if type(g) is not tuple or len(g) != len(p):
        return False
    for pi, gi in zip(p, g, strict=True):
        if type(pi) is str:
            if pi[0] != "?":
                if pi != gi:
                    return False
                continue
            v = b.get(pi)
            if v is None:
                b[pi] = gi
                trail.append(pi)
            elif v != gi:
                return False
        elif not match(pi, gi, b, trail):
            return False
    return True


# ------------------------------------------------------------------------ normal form


def _dnf(lit: Literal, negated: bool) -> list[list[tuple]]:
    """Disjunctive normal form of one literal: a list of conjunctions of items
    ``("+", atom)``, ``("-", atom)``, ``("!=", a, b)``, ``("==", a, b)``."""
    if isinstance(lit, Not):
        return _dnf(lit.literal, not negated)
    if isinstance(lit, Distinct):
        return [[("==" if negated else "!=", to_value(lit.left), to_value(lit.right))]]
    if isinstance(lit, Or):
        parts = [_dnf_conjunction(d, negated) for d in lit.disjuncts]
        if not negated:
            return [c for part in parts for c in part]
        # not (d1 or d2) = (not d1) and (not d2)
        return _product(parts)
    return [[("-" if negated else "+", atom_value(lit))]]


def _dnf_conjunction(lits: Sequence[Literal], negated: bool) -> list[list[tuple]]:
    parts = [_dnf(lit, negated) for lit in lits]
    if not negated:
        return _product(parts)
    # not (l1 and l2) = (not l1) or (not l2)
    return [c for part in parts for c in part]


def _product(parts: list[list[list[tuple]]]) -> list[list[tuple]]:
    size = 1
    for part in parts:
        size *= len(part)
        if size > MAX_DNF_CONJUNCTIONS:
            raise LimitReached(f"a rule body expands to more than {MAX_DNF_CONJUNCTIONS} "
                               "conjunctions")
    return [[item for conj in combo for item in conj] for combo in itertools.product(*parts)]


def normalise(rules: Iterable[Rule]) -> list[IRule]:
    """Rules in normal form (step 1); unsafe rules are refused."""
    out: list[IRule] = []
    for rule in rules:
        head = atom_value(rule.head)
        where = f"line {rule.line}" if rule.line else "a rule"
        for conj in _dnf_conjunction(rule.body, False):
            pos = tuple(item[1] for item in conj if item[0] == "+")
            neg = tuple(item[1] for item in conj if item[0] == "-")
            neq = tuple((item[1], item[2]) for item in conj if item[0] == "!=")
            eq = tuple((item[1], item[2]) for item in conj if item[0] == "==")
            bound: set[str] = set()
            for atom in pos:
                value_vars(atom, bound)
            loose: set[str] = set()
            for t in (head, *neg, *(x for pair in neq + eq for x in pair)):
                value_vars(t, loose)
            if loose - bound:
                raise LimitReached(f"{where}: unsafe variables "
                                   + " ".join(sorted(loose - bound)))
            out.append(IRule(head, pos, neg, neq, eq, where))
    return out


# ----------------------------------------------------------------------------- tables


Path = tuple[int, ...]
_MISSING = object()


def _at(fact: Value, path: Path) -> object:
    """The subterm of ``fact`` at ``path``, or a marker when the shape differs."""
    for i in path:
        if type(fact) is not tuple or i >= len(fact):
            return _MISSING
        fact = fact[i]
    return fact


def key_paths(pattern: Value, bound: set[str]) -> list[tuple[Path, Value]]:
    """(path, subpattern) pairs of ``pattern`` that are ground once ``bound`` are:
    whole arguments when they are, else their functor and inner arguments, so a
    literal like ``true(cell ?x 1 ?p)`` is looked up by ``cell`` and ``1``."""
    out: list[tuple[Path, Value]] = []

    def walk(term: Value, path: Path) -> None:
        for i in range(1, len(term)):
            sub = term[i]
            if value_vars(sub, set()) <= bound:
                out.append(((*path, i), sub))
            elif type(sub) is tuple:
                out.append(((*path, i, 0), sub[0]))
                walk(sub, (*path, i))

    if type(pattern) is tuple:
        walk(pattern, ())
    return out


class Table:
    """The facts of one relation, with hash indexes on sets of subterm paths."""

    __slots__ = ("facts", "rows", "indexes")

    def __init__(self) -> None:
        self.facts: set[Value] = set()
        self.rows: list[Value] = []
        self.indexes: dict[tuple[Path, ...], dict[tuple, list[Value]]] = {}

    def add(self, fact: Value) -> bool:
        if fact in self.facts:
            return False
        self.facts.add(fact)
        self.rows.append(fact)
        for paths, index in self.indexes.items():
            index.setdefault(tuple(_at(fact, p) for p in paths), []).append(fact)
        return True

    def index(self, paths: tuple[Path, ...]) -> dict[tuple, list[Value]]:
        found = self.indexes.get(paths)
        if found is None:
            found = {}
            for fact in self.rows:
                found.setdefault(tuple(_at(fact, p) for p in paths), []).append(fact)
            self.indexes[paths] = found
        return found

    def estimate(self, paths: tuple[Path, ...]) -> float:
        """Expected facts per lookup on ``paths``."""
        if not paths or not self.rows:
            return float(len(self.rows))
        return len(self.rows) / max(1, len(self.index(paths)))


Tables = dict[PredKey, Table]
_EMPTY = Table()


def _table(tables: Tables, key: PredKey) -> Table:
    return tables.get(key, _EMPTY)


# ------------------------------------------------------------------------------ joins


class Join:
    """Enumerates the substitutions of one rule body (steps 4 and 5).

    ``tables`` give the facts of positive literals; ``exact`` tells which relations
    are exact (their negations are checked); ``delta`` restricts literal ``first``
    to a list of new facts (semi-naive evaluation).
    """

    def __init__(self, rule: IRule, tables: Tables, exact: Callable[[PredKey], bool],
                 budget: Budget) -> None:
        self.rule = rule
        self.tables = tables
        self.exact = exact
        self.budget = budget

    def _plan(self, first: int | None) -> list[tuple[int, tuple[Path, ...], tuple[Value, ...]]]:
        """Greedy join order by expected matches: (literal, key paths, key templates)."""
        rule = self.rule
        bound: set[str] = set()
        plan = []
        left = list(range(len(rule.pos)))
        if first is not None:
            plan.append((first, (), ()))
            left.remove(first)
            value_vars(rule.pos[first], bound)
        while left:
            best = None
            for i in left:
                pairs = key_paths(rule.pos[i], bound)
                paths = tuple(p for p, _ in pairs)
                cost = _table(self.tables, pred_key(rule.pos[i])).estimate(paths)
                if best is None or cost < best[0]:
                    best = (cost, i, paths, tuple(t for _, t in pairs))
            assert best is not None
            _, i, paths, templates = best
            plan.append((i, paths, templates))
            left.remove(i)
            value_vars(rule.pos[i], bound)
        return plan

    def _tests_after(self, order: list[int]) -> list[list[tuple]]:
        """For each depth, the tests whose variables are all bound by then."""
        rule = self.rule
        tests: list[tuple] = [("!=", a, b) for a, b in rule.neq]
        tests += [("==", a, b) for a, b in rule.eq]
        tests += [("-", atom) for atom in rule.neg if self.exact(pred_key(atom))]
        bound: set[str] = set()
        placed: list[list[tuple]] = [[] for _ in range(len(order) + 1)]
        pending = [(t, value_vars(t[1], set()) | (value_vars(t[2], set()) if len(t) > 2 else set()))
                   for t in tests]
        for depth in range(len(order) + 1):
            keep = []
            for test, need in pending:
                if need <= bound:
                    placed[depth].append(test)
                else:
                    keep.append((test, need))
            pending = keep
            if depth < len(order):
                value_vars(rule.pos[order[depth]], bound)
        return placed

    def run(self, emit: Callable[[dict[str, Value], list[Value]], None], first: int | None = None,
            delta: Sequence[Value] = (), cut_when_head_known: Table | None = None) -> None:
        """Call ``emit(binding, facts matched by each positive literal)`` for each
        solution; with ``cut_when_head_known``, a
        branch stops once its ground head is in that table (existence cut)."""
        self.budget.check_grounding_clock()
        plan = self._plan(first)
        tests = self._tests_after([i for i, _, _ in plan])
        rule = self.rule
        head_vars = value_vars(rule.head, set())
        b: dict[str, Value] = {}
        chosen: list[Value] = list(rule.pos)
        budget = self.budget
        tables = self.tables
        indexes = [_table(tables, pred_key(rule.pos[i])).index(paths) if paths else None
                   for i, paths, _ in plan]

        def passes(depth: int) -> bool:
            for test in tests[depth]:
                kind = test[0]
                if kind == "!=":
                    if substitute(test[1], b) == substitute(test[2], b):
                        return False
                elif kind == "==":
                    if substitute(test[1], b) != substitute(test[2], b):
                        return False
                elif substitute(test[1], b) in _table(tables, pred_key(test[1])).facts:
                    return False
            return True

        def step(depth: int) -> bool:
            """Returns True when a solution was emitted below (for the cut)."""
            if cut_when_head_known is not None and head_vars <= b.keys():
                if substitute(rule.head, b) in cut_when_head_known.facts:
                    return True
            if depth == len(plan):
                emit(b, chosen)
                return True
            i, _, templates = plan[depth]
            atom = rule.pos[i]
            index = indexes[depth]
            if depth == 0 and first is not None:
                candidates: Sequence[Value] = delta
            elif index is None:
                candidates = _table(tables, pred_key(atom)).rows
            else:
                candidates = index.get(tuple([substitute(t, b) for t in templates]), ())
            found = False
            trail: list[str] = []
            budget.spend_steps(len(candidates))
            checked = tests[depth + 1]
            for fact in candidates:
                chosen[i] = fact
                if match(atom, fact, b, trail) and (not checked or passes(depth + 1)):
                    if step(depth + 1):
                        found = True
                        if cut_when_head_known is not None and head_vars <= b.keys() - set(trail):
                            for v in trail:
                                del b[v]
                            return True
                for v in trail:
                    del b[v]
                trail.clear()
            return found

        if passes(0):
            step(0)


# ------------------------------------------------------------------------- the program


def sccs(nodes: list[PredKey], edges: dict[PredKey, set[PredKey]]) -> list[list[PredKey]]:
    """Strongly connected components, dependencies first (the prover's Tarjan)."""
    graph: dict[PredKey, set[PredKey]] = {node: set(edges.get(node, ())) for node in nodes}
    for targets in list(graph.values()):
        for target in targets:
            graph.setdefault(target, set(edges.get(target, ())))
    return strongly_connected(graph)


class GroundGame:
    """A game's static facts, reachable domain and ground state-dependent rules.

    Built by :func:`ground_game`; :meth:`ground_moves` instantiates the
    move-dependent rules for one joint move.
    """

    def __init__(self, rules: list[IRule], budget: Budget) -> None:
        self.budget = budget
        by_head: dict[PredKey, list[IRule]] = {}
        for r in rules:
            by_head.setdefault(pred_key(r.head), []).append(r)
        self.sees_rules = by_head.pop(SEES, [])
        deps: dict[PredKey, set[PredKey]] = {}
        for key, rs in by_head.items():
            deps[key] = {pred_key(a) for r in rs for a in (*r.pos, *r.neg)}
        used = {d for ds in deps.values() for d in ds}
        for key in list(by_head):
            if key[0] in UNUSED_KEYWORDS and key not in used:
                del by_head[key], deps[key]
        self.rules_by_head = by_head
        nodes = sorted(set(deps) | {d for ds in deps.values() for d in ds})
        self.order = sccs(nodes, deps)
        self.dynamic = self._closure(deps, lambda k: k[0] in ("true", "does"))
        self.move_dependent = self._closure(deps, lambda k: k[0] == "does")
        for key in self.move_dependent:
            if key[0] in ("legal", "goal", "terminal", "init"):
                raise LimitReached(f"{key[0]} depends on does (not a valid GDL game)")
        for key in self.dynamic:
            if key[0] == "init":
                raise LimitReached("init depends on true (not a valid GDL game)")
        self.tables: Tables = {}
        self._evaluate_static()
        self._relaxed_domain()

    @staticmethod
    def _closure(deps: dict[PredKey, set[PredKey]], seed: Callable[[PredKey], bool]) -> set[PredKey]:
        nodes = set(deps) | {d for ds in deps.values() for d in ds}
        marked = {k for k in nodes if seed(k)}
        changed = True
        while changed:
            changed = False
            for key, ds in deps.items():
                if key not in marked and ds & marked:
                    marked.add(key)
                    changed = True
        return marked

    def is_static(self, key: PredKey) -> bool:
        return key not in self.dynamic

    def table(self, key: PredKey) -> Table:
        table = self.tables.get(key)
        if table is None:
            table = self.tables[key] = Table()
        return table

    def _evaluate_static(self) -> None:
        """Step 3: exact stratified evaluation of the static relations."""
        for comp in self.order:
            if not self.is_static(comp[0]):
                continue
            members = set(comp)
            rules = [r for k in comp for r in self.rules_by_head.get(k, ())]
            for r in rules:
                if any(pred_key(a) in members for a in r.neg):
                    raise LimitReached(f"{r.where}: negation inside recursion (not stratified)")
            for key in comp:
                self.table(key)
            self._fixpoint(rules, members, exact=lambda k: True)

    def _fixpoint(self, rules: list[IRule], members: set[PredKey],
                  exact: Callable[[PredKey], bool]) -> None:
        """Semi-naive least fixpoint of ``rules`` whose heads are ``members``."""
        marks = {k: 0 for k in members}
        first_round = True
        while True:
            new_from = {k: (0 if first_round else marks[k]) for k in members}
            marks = {k: len(self.table(k).rows) for k in members}
            for r in rules:
                head_table = self.table(pred_key(r.head))

                def emit(b: dict[str, Value], _: list[Value], r: IRule = r,
                         t: Table = head_table) -> None:
                    t.add(substitute(r.head, b))

                join = Join(r, self.tables, exact, self.budget)
                if first_round:
                    join.run(emit, cut_when_head_known=head_table)
                    continue
                for i, atom in enumerate(r.pos):
                    key = pred_key(atom)
                    if key in members and marks[key] > new_from[key]:
                        delta = self.table(key).rows[new_from[key]:marks[key]]
                        join.run(emit, first=i, delta=delta, cut_when_head_known=head_table)
            first_round = False
            if all(len(self.table(k).rows) == marks[k] for k in members):
                return

    def _relaxed_domain(self) -> None:
        """Step 4: the reachable domain of every dynamic relation."""
        rules = [r for k in self.dynamic for r in self.rules_by_head.get(k, ())]
        # true(f) <= init(f) | next(f);  does(r, m) <= legal(r, m)
        rules += [IRule(("true", "?f"), (("init", "?f"),), (), (), (), "init"),
                  IRule(("true", "?f"), (("next", "?f"),), (), (), (), "next"),
                  IRule(("does", "?r", "?m"), (("legal", "?r", "?m"),), (), (), (), "legal")]
        members = set(self.dynamic) | {("true", 1), ("does", 2)}
        for key in members:
            self.table(key)
        self._fixpoint(rules, members, exact=self.is_static)

    # -------------------------------------------------------------- instantiation

    def instantiate(self, rules: Iterable[IRule], tables: Tables,
                    exact: Callable[[PredKey], bool],
                    folded: Callable[[PredKey], bool],
                    budget: Budget | None = None) -> list[GroundRule]:
        """Step 5: every ground instance of ``rules``; literals of ``folded`` relations
        are checked (exact) and left out of the ground bodies."""
        out: dict[GroundRule, None] = {}
        for r in rules:
            kept = [i for i, a in enumerate(r.pos) if not folded(pred_key(a))]
            negs = [(a, _table(tables, pred_key(a)).facts) for a in r.neg
                    if not folded(pred_key(a))]

            def emit(b: dict[str, Value], chosen: list[Value], r: IRule = r,
                     kept: list[int] = kept, negs: list = negs) -> None:
                neg = []
                for a, facts in negs:
                    g = substitute(a, b)
                    if g in facts:  # outside the domain it is always true: dropped
                        neg.append(g)
                out[GroundRule(substitute(r.head, b), tuple([chosen[i] for i in kept]),
                               tuple(neg))] = None

            Join(r, tables, exact, budget or self.budget).run(emit)
        return list(out)

    def move_rules(self) -> list[IRule]:
        """The rules instantiated per joint move (see :meth:`_is_move_rule`)."""
        return [r for k in self.dynamic for r in self.rules_by_head.get(k, ())
                if self._is_move_rule(r)]

    def _is_move_rule(self, r: IRule) -> bool:
        """Instantiated per joint move: rules of move-dependent helpers, and the
        ``next`` rules whose body mentions a move-dependent relation."""
        key = pred_key(r.head)
        if key not in self.move_dependent:
            return False
        if key != ("next", 1):
            return True
        return any(pred_key(a) in self.move_dependent for a in (*r.pos, *r.neg))

    @property
    def moves_act_alone(self) -> bool:
        """True when every move-dependent rule is a ``next`` rule with exactly one
        positive ``does`` literal and no negated one: then the ``next`` facts of a
        joint move are the union of those of its moves, grounded move by move."""
        if self.move_dependent - {("does", 2), ("next", 1)}:
            return False
        for r in self.rules_by_head.get(("next", 1), ()):
            if self._is_move_rule(r):
                if sum(1 for a in r.pos if pred_key(a) == ("does", 2)) != 1:
                    return False
                if any(pred_key(a) == ("does", 2) for a in r.neg):
                    return False
        return True

    def ground_each_move(self, budget: Budget) -> dict[Value, list[GroundRule]]:
        """For a game whose moves act alone: the ground move-dependent ``next`` rules
        of every reachable move at once, keyed by the ``does`` atom (removed from
        the bodies). One join is much cheaper than one per move."""
        rules = [r for r in self.rules_by_head.get(("next", 1), ()) if self._is_move_rule(r)]

        def folded(key: PredKey) -> bool:
            return self.is_static(key)

        out: dict[Value, list[GroundRule]] = {}
        for g in self.instantiate(rules, self.tables, self.is_static, folded, budget):
            (does,) = [a for a in g.pos if pred_key(a) == ("does", 2)]
            rest = tuple(a for a in g.pos if a != does)
            out.setdefault(does, []).append(GroundRule(g.head, rest, g.neg))
        return out

    def state_rules(self) -> list[GroundRule]:
        """Ground rules that do not depend on moves: views, ``legal``, ``goal``,
        ``terminal`` and the ``next`` rules without ``does``."""
        rules = [r for k in self.dynamic for r in self.rules_by_head.get(k, ())
                 if not self._is_move_rule(r)]
        ground = self.instantiate(rules, self.tables, exact=self.is_static, folded=self.is_static)
        for key in QUERY_KEYS:  # a static query relation: its facts always hold
            if self.is_static(key) and key in self.tables:
                ground += [GroundRule(fact, (), ()) for fact in self.tables[key].rows]
        return ground

    def ground_moves(self, does: Sequence[Value]) -> list[GroundRule]:
        """Ground move-dependent rules (``next`` and helpers) for one joint move.

        ``does`` are the joint move's ``(does role move)`` atoms; they are exact here,
        so ``does`` literals are folded, and the helpers' tables hold only what this
        joint move can derive.
        """
        return self._ground_moves(does)[0]

    def ground_sees(self, does: Sequence[Value]) -> list[GroundRule]:
        """Ground ``sees`` rules for one joint move, with the move-dependent rules
        they may read (as :meth:`ground_moves`)."""
        out, tables, exact = self._ground_moves(does)
        budget = Budget(max_steps=self.budget.max_steps, max_seconds=self.budget.max_seconds)
        return out + self.instantiate(self.sees_rules, tables, exact, exact, budget)

    def _ground_moves(self, does: Sequence[Value]
                      ) -> tuple[list[GroundRule], Tables, Callable[[PredKey], bool]]:
        """:meth:`ground_moves`, with the joint move's tables and exactness test."""
        tables: Tables = dict(self.tables)
        local: set[PredKey] = set(self.move_dependent)
        for key in local | {("does", 2)}:
            tables[key] = Table()
        for atom in does:
            tables[("does", 2)].add(atom)

        def exact(key: PredKey) -> bool:
            return key not in self.dynamic or key == ("does", 2)

        def folded(key: PredKey) -> bool:
            return exact(key)

        # a fresh budget: this runs during play, long after the game was compiled
        budget = Budget(max_steps=self.budget.max_steps, max_seconds=self.budget.max_seconds)
        out: list[GroundRule] = []
        for comp in self.order:
            if comp[0] not in local or comp[0] == ("does", 2):
                continue
            rules = [r for k in comp for r in self.rules_by_head.get(k, ())
                     if self._is_move_rule(r)]
            seen = -1
            while True:  # recursion among helpers: repeat until no new heads
                ground = self.instantiate(rules, tables, exact, folded, budget)
                for g in ground:
                    tables[pred_key(g.head)].add(g.head)
                size = sum(len(tables[k].rows) for k in comp)
                if size == seen:
                    break
                seen = size
            out += ground
        return out, tables, exact


def ground_game(rules: list[Rule], budget: Budget | None = None) -> GroundGame:
    """Steps 1-4 for a parsed game; raises LimitReached when it does not fit."""
    return GroundGame(normalise(rules), budget or Budget())
