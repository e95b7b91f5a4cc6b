"""Top-down GDL reasoner: memoized, goal-directed resolution compiled to Python.

Prolog answers a query by resolution from the goal down and redoes the same
sub-goals many times; bottom-up evaluation (:mod:`gdl.reasoning.prover`) derives whole
relations and pays for every intermediate relation it builds. This engine
resolves from the goal like Prolog but *tables* every call per state (Tamaki &
Sato, "OLD resolution with tabulation", ICLP 1986), which removes the repeated
work and Prolog's loops on left recursion:

1. Normalise as :mod:`gdl.reasoning.prover` does: ``or`` expanded into one rule per
   disjunct; ground terms are Python values (``str`` constants, tuples
   ``(name, arg...)`` for function terms); a relation's facts are rows.
2. Static relations are derived once, bottom-up (:class:`gdl.reasoning.prover.Context`),
   except recursive ones, ones that build function terms (arithmetic over
   hundreds of numbers, lists: huge or unbounded), ones that grow past
   :data:`MAX_STATIC_CELLS` (a 300-argument relation over {0, 1}) and their
   dependants: those are called top-down like the others, memoized for the whole game.
3. Every other relation ``p`` is compiled, per *adornment* (which arguments a
   call binds: ``(p a ?x)`` has adornment ``bf``), into Python functions: ``all``
   returns the set of answer rows for the bound arguments; ``exists`` says whether
   there is one and stops at the first. A rule body becomes a nest of loops in
   the order :func:`gdl.reasoning.prover.plan_body` gives from the bound variables:
   ``true`` facts and static rows through hash indexes keyed by the bound
   sub-terms and by the name and arity of every function term of the pattern (so
   a hit needs no further check), derived relations by calling their functions.
   A fully bound atom, a negated atom and an atom whose free variables nothing
   later reads are ``exists`` tests. Answers of a call that binds only part of a
   function-term argument are read through an index on the bound parts.
4. Answers are memoized: per game for static relations, per state for relations
   that read ``true``, per joint move for those that read ``does``.
5. Recursion is first evaluated optimistically, as plain memoized calls: a
   well-founded derivation terminates and every memo entry is complete. A cyclic
   one (left recursion, a symmetric relation) recurses without end until Python's
   recursion limit (:data:`solvers.recursion.RECURSION_LIMIT`, set while a query runs) stops it;
   the program then switches its recursive relations for good to tabled
   evaluation (:func:`_tabled`): calls numbered depth-first as in Tarjan's SCC
   algorithm, and the leader of a cycle re-evaluates every call of the cycle
   until no new answer appears (the least fixpoint).
6. The queries ``legal``, ``goal``, ``next`` and ``sees`` are computed in full; a call of
   one of them with bound arguments reads that full table through an index.
7. One role's legal moves can also be had one at a time (:data:`LEGAL_LAZILY`: a
   generator over the ``legal`` rules' loop nests), so the first of millions come
   without the others.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Container, Sequence

from gdl.reasoning.prover import (
    Context,
    FlatLiteral,
    FlatRule,
    Program,
    Relation,
    Row,
    TermCode,
    TooLarge,
    UnboundVariables,
    builds_terms,
    dependency_graph,
    facts_and_flat_rules,
    is_recursive,
    literal_variables,
    plan_body,
    reaching,
    split_long_bodies,
    strongly_connected,
    unsafe_rule,
)
from gdl.reasoning.terms import Const, Fn, Not, Rule, Term, Var
from solvers.errors import GameError

FULL_QUERIES = ("legal", "goal", "next", "sees")  # sees: GDL-II percepts
# Rows times arity of a static relation derived bottom-up (a few hundred MB at most);
# beyond, it is called top-down (step 2). The corpus' largest: battle's, 503,060 cells.
MAX_STATIC_CELLS = 4_000_000
LEGAL_LAZILY = "legal lazily"  # the query of step 7: (frame, role) -> rows, one at a time
_ONCE = (None,)  # a one-pass loop: a failed check leaves it with `continue`
# Where a relation's answers are memoized: per game, per state, per joint move.
LEVEL_STATIC, LEVEL_STATE, LEVEL_MOVE = 0, 1, 2


# ------------------------------------------------------------------ tabling


class _Table:
    """Answers of one tabled call; ``dfn`` is 0 once the call is complete."""

    __slots__ = ("rows", "seen", "dfn", "run", "args")

    def __init__(self, dfn: int, run: Callable[..., None], args: tuple) -> None:
        self.rows: list[Row] = []
        self.seen: set[Row] = set()
        self.dfn = dfn
        self.run = run
        self.args = args

    def add(self, row: Row) -> None:
        if row not in self.seen:
            self.seen.add(row)
            self.rows.append(row)


class Tabling:
    """Depth-first numbering of the unfinished tabled calls (step 5)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.counter = 0
        self.low = 1 << 62
        self.cycle = False
        self.pending: list[_Table] = []


def _tabled(tabling: Tabling, memo: dict, key: object, run: Callable[..., None],
            args: tuple) -> list[Row]:
    """The answers of a call of a recursive relation under tabling (step 5)."""
    table = memo.get(key)
    if table is not None:
        if table.dfn:  # unfinished: we are inside its cycle
            tabling.cycle = True
            if table.dfn < tabling.low:
                tabling.low = table.dfn
        return table.rows
    tabling.counter += 1
    dfn = tabling.counter
    table = memo[key] = _Table(dfn, run, args)
    start = len(tabling.pending)
    tabling.pending.append(table)
    saved_low, saved_cycle = tabling.low, tabling.cycle
    tabling.low, tabling.cycle = dfn, False
    run(table.add, args)
    if tabling.low < dfn:  # part of an unfinished caller's cycle: it completes us
        tabling.low = min(saved_low, tabling.low)
        tabling.cycle = True
        return table.rows
    if tabling.cycle:
        size = -1
        while True:
            group = tabling.pending[start:]
            now = len(group) + sum(len(t.rows) for t in group)
            if now == size:
                break
            size = now
            for member in group:
                member.run(member.add, member.args)
    for member in tabling.pending[start:]:
        member.dfn = 0
    del tabling.pending[start:]
    tabling.low, tabling.cycle = saved_low, saved_cycle
    return table.rows


# ------------------------------------------------------------------ indexes

# A key part: (path, kind). ``path`` leads from a row to a sub-term; kind "v" is
# the value there, "f" the (name, arity) of the function term there.
KeyPart = tuple[tuple[int, ...], str]
_INDEXERS: dict[tuple[KeyPart, ...], Callable[[object], dict]] = {}


def _path_expr(root: str, path: tuple[int, ...]) -> str:
    return root + "".join(f"[{i}]" for i in path)


def indexer(parts: tuple[KeyPart, ...]) -> Callable[[object], dict]:
    """A function: rows -> dict from key to the rows with that key (generated code).

    Rows lacking a function term where the key needs one are left out: no pattern
    with that key can match them.
    """
    found = _INDEXERS.get(parts)
    if found is not None:
        return found
    guards = [f"type({_path_expr('r', p)}) is tuple" for p, kind in parts if kind == "f"]
    exprs = []
    for path, kind in parts:
        if kind == "f":
            exprs += [_path_expr("r", path + (0,)), f"len({_path_expr('r', path)})"]
        else:
            exprs.append(_path_expr("r", path))
    key = exprs[0] if len(exprs) == 1 else "(" + ", ".join(exprs) + ",)"
    guard = f"        if not ({' and '.join(guards)}): continue\n" if guards else ""
    source = ("def index(rows):\n"
              "    out = {}\n"
              "    for r in rows:\n"
              "      try:\n"
              f"{guard}"
              f"        k = {key}\n"
              "      except (IndexError, TypeError):\n"
              "        continue\n"
              "      b = out.get(k)\n"
              "      if b is None:\n"
              "        out[k] = [r]\n"
              "      else:\n"
              "        b.append(r)\n"
              "    return out\n")
    namespace: dict[str, object] = {}
    exec(source, namespace)
    found = _INDEXERS[parts] = namespace["index"]  # type: ignore[assignment]
    return found


class _TrueIndexes(dict):
    """Indexes of one state's facts, built on first use (keyed by slot)."""

    __slots__ = ("state", "builders")

    def __init__(self, state: frozenset, builders: list[Callable[[object], dict]]) -> None:
        super().__init__()
        self.state = state
        self.builders = builders

    def __missing__(self, slot: int) -> dict:
        index = self[slot] = self.builders[slot](self.state)
        return index


class Frame:
    """The memo tables of one state, or of one joint move in a state (step 4)."""

    __slots__ = ("state", "does", "sm", "mm", "gm", "ti", "legal")

    def __init__(self, program: TopDownProgram, state: frozenset,
                 does: dict | None = None, parent: Frame | None = None) -> None:
        self.state = state
        self.does = does
        self.gm = program.global_memo
        if parent is None:
            self.sm = [{} for _ in range(program.state_slots)]
            self.ti = _TrueIndexes(state, program.true_indexers)
        else:
            self.sm = parent.sm
            self.ti = parent.ti
        self.mm = [{} for _ in range(program.move_slots)] if does is not None else None
        self.legal: dict | None = None  # the machine's per-role legal moves


# ------------------------------------------------------------------ program


class TopDownProgram:
    """The compiled functions of a game's rules (see the module docstring)."""

    def __init__(self, rules: Sequence[Rule], max_static_cells: int = MAX_STATIC_CELLS) -> None:
        """``max_static_cells``: a static relation derived bottom-up larger than this
        (rows times arity) is called top-down instead (step 2)."""
        too_large: set[str] = set()
        while True:
            try:
                self._prepare(rules, too_large, max_static_cells)
                return
            except TooLarge as exc:
                name = _source_relation(exc.relation, self.component)
                if name in too_large:
                    raise
                too_large.add(name)

    def _prepare(self, rules: Sequence[Rule], too_large: set[str], max_static_cells: int) -> None:
        facts, flat = facts_and_flat_rules(rules)
        graph = dependency_graph(flat)
        for name in facts:
            graph.setdefault(name, set())
        dynamic = reaching(graph, {"true", "does"})
        move_level = reaching(graph, {"does"})
        components = strongly_connected(graph)
        self.recursive = {r for scc in components if is_recursive(scc, graph) for r in scc}
        self.component = {r: i for i, scc in enumerate(components) for r in scc}
        # Static relations are derived in full once, except recursive ones, ones
        # that build terms (arithmetic over hundreds of numbers, lists: huge or
        # unbounded) and ones found too large, and what depends on them: those are
        # called top-down too.
        lazy = reaching(graph, too_large | {h for h, rs in flat.items() if h in self.recursive
                                            or any(builds_terms(r.head) for r in rs)})
        self.lazy_static = lazy - dynamic
        derived = (dynamic | lazy) - {"true", "does"}
        self.level = {n: LEVEL_MOVE if n in move_level else
                      LEVEL_STATE if n in dynamic else LEVEL_STATIC for n in derived}
        self.derived = derived
        static_rules = [r for r in rules if r.head.name not in derived]
        self._static = Context(Program(static_rules), max_static_cells)
        self.static_extra: dict[str, Relation] = {}
        self._values: dict[str, frozenset] = {}
        self._static_indexes: dict[tuple[str, tuple[KeyPart, ...]], dict] = {}
        # a derived relation's facts: a static relation read by one more rule
        for name in sorted(derived & set(facts)):
            fact_name = f"{name} facts"  # a space never occurs in a parsed symbol
            self.static_extra[fact_name] = Relation(facts[name])
            arity = len(facts[name][0])
            args = tuple(Var(f"a{i}") for i in range(arity))
            head: Const | Fn = Fn(name, args) if arity else Const(name)
            flat.setdefault(name, []).append(FlatRule(
                head, (Fn(fact_name, args) if arity else Const(fact_name),), Rule(head)))
        self.rules = split_long_bodies({h: rs for h, rs in flat.items() if h in derived})
        for name in self.rules:  # auxiliary relations of long bodies
            if name not in self.level:
                base = name.rsplit(" ", 1)[-1]
                self.level[name] = self.level.get(base, LEVEL_MOVE)
                self.derived.add(name)
                if base in self.recursive:
                    self.recursive.add(name)
                self.component[name] = self.component[base]
        self.tabling_on = False
        self.tabling = Tabling()
        self._estimates: dict[tuple, float] = {}
        # the facts of sample states (first the initial one) and how many states
        self._sample_facts: list[Row] = self.static_rows("init") if "init" not in derived else []
        self._samples = 1
        self._build()

    def calibrate(self, states: Sequence[frozenset]) -> None:
        """Re-plan the joins with ``true`` estimates from ``states`` (say, the states of a
        short random walk) and recompile; frames made before are stale."""
        if not states:
            return
        self._sample_facts = [(fact,) for state in states for fact in state]
        self._samples = len(states)
        self._estimates.clear()
        self._build()

    def _build(self) -> None:
        """Generate and compile the functions the queries need (step 3)."""
        self.state_slots = self.move_slots = 0
        self.global_memo: list[dict] = []
        self.true_slots: dict[tuple[KeyPart, ...], int] = {}
        self.true_indexers: list[Callable[[object], dict]] = []
        self.namespace: dict[str, object] = {
            "_tabled": _tabled, "T": self.tabling, "_ONCE": _ONCE}
        self._functions: dict[tuple[str, str, str], str] = {}
        self._memo_of: dict[str, str] = {}
        self._index_modes: dict[tuple[KeyPart, ...], str] = {}
        self._pending: list[tuple[str, str, str]] = []
        self._constants: dict[int, str] = {}
        self.source_parts: list[str] = []
        queries = {query: self._query(query) for query in (*FULL_QUERIES, "terminal", "init")}
        queries[LEGAL_LAZILY] = self._lazy_legal()
        while self._pending:
            relation, adornment, mode = self._pending.pop()
            self.source_parts.append(self._generate(relation, adornment, mode))
        try:
            code = compile("\n\n".join(self.source_parts), "<gdl.reasoning.topdown>", "exec")
        except (SyntaxError, RecursionError, MemoryError) as exc:  # never for sane rules
            raise GameError(f"the general engine cannot compile these rules: "
                            f"{type(exc).__name__}: {exc}") from None
        exec(code, self.namespace)
        self.queries = {q: self.namespace[f] if isinstance(f, str) else f
                        for q, f in queries.items()}

    # -- queries
    def _query(self, relation: str) -> Callable[[Frame], object] | str:
        """A query's function name (resolved after generation) or a constant answer."""
        if relation not in self.derived:
            rows = self.static_rows(relation)
            if relation == "terminal":
                return lambda _frame: bool(rows)
            return lambda _frame: rows
        if relation == "terminal":
            return self.function(relation, "", "exists")
        return self.function(relation, "f" * self.arity(relation), "all")

    def _lazy_legal(self) -> Callable[[Frame, object], object] | str:
        """The function of step 7 (its name, resolved after generation)."""
        if "legal" not in self.derived:
            rows = self.static_rows("legal")
            return lambda _frame, role: (row for row in rows if row[0] == role)
        return self.function("legal", "bf", "iter")

    def use_tabling(self) -> None:
        """Recompile with tabled recursive relations, for good (step 5); frames made
        before are stale."""
        self.tabling_on = True
        self.tabling.reset()
        self._build()

    def forget(self) -> None:
        """Drop per-game memos and unfinished tables (after an interrupted query)."""
        for memo in self.global_memo:
            memo.clear()
        self.tabling.reset()

    # -- static data
    def static_relation(self, name: str) -> Relation:
        extra = self.static_extra.get(name)
        return extra if extra is not None else self._static.relation(name)

    def static_rows(self, name: str) -> list[Row]:
        return self.static_relation(name).rows

    def static_index(self, name: str, parts: tuple[KeyPart, ...]) -> dict:
        """A static relation's rows by ``parts`` (built once per game, whatever the
        number of call sites and recompilations)."""
        found = self._static_indexes.get((name, parts))
        if found is None:
            found = self._static_indexes[(name, parts)] = indexer(parts)(
                self.static_rows(name))
        return found

    def static_values(self, name: str) -> frozenset:
        """The values of a unary static relation (a membership test needs no tuple)."""
        found = self._values.get(name)
        if found is None:
            found = self._values[name] = frozenset(row[0] for row in self.static_rows(name))
        return found

    def arity(self, relation: str) -> int:
        rules = self.rules.get(relation)
        if rules:
            head = rules[0].head
            return len(head.args) if isinstance(head, Fn) else 0
        rows = self.static_rows(relation)
        return len(rows[0]) if rows else 0

    def constant(self, value: object) -> str:
        name = self._constants.get(id(value))
        if name is None:
            name = self._constants[id(value)] = f"K{len(self._constants)}"
            self.namespace[name] = value
        return name

    def true_slot(self, parts: tuple[KeyPart, ...]) -> int:
        slot = self.true_slots.get(parts)
        if slot is None:
            slot = self.true_slots[parts] = len(self.true_indexers)
            self.true_indexers.append(indexer(parts))
        return slot

    def index_mode(self, parts: tuple[KeyPart, ...]) -> str:
        """The mode name of answers indexed by ``parts``."""
        mode = self._index_modes.get(parts)
        if mode is None:
            mode = self._index_modes[parts] = f"index {len(self._index_modes)}"
        return mode

    # -- join order
    def cost(self, atom: Const | Fn, bound: set[str], head: str, inputs: set[str]) -> float:
        """Expected matches of a positive ``atom`` given ``bound`` variables, in a rule
        of ``head`` called with the variables ``inputs`` bound: exact for static
        relations, from sample states for ``true``, a guess for derived relations. A
        call back into the head's own recursive component that binds nothing beyond
        the inputs comes last: placed first, it would recurse without progress; so
        does a static relation called top-down with nothing bound (it may be
        unbounded, like the lists of every length)."""
        args = _args(atom)
        name = atom.name
        if name == "does":
            return 1.0
        if name in self.derived:
            if self.component.get(name) == self.component.get(head) and not any(
                    _bound_term(a, bound) and set(literal_variables(a)) - inputs
                    for a in args):
                return 1e9
            if any(_bound_term(a, bound) for a in args):
                return 10.0
            return 1e12 if name in self.lazy_static else 1000.0
        shape = (name, tuple(_shape(a, bound) for a in args))
        found = self._estimates.get(shape)
        if found is None:
            if name == "true":
                found = max(_estimate(self._sample_facts, args, bound) / self._samples, 0.5)
            else:
                found = _estimate(self.static_rows(name), args, bound)
            self._estimates[shape] = found
        return found

    def expensive_test(self, literal: FlatLiteral) -> bool:
        """A negated call of a derived relation whose rules call derived relations
        again: tested after the joins of a body, where most candidates are gone and
        repeats are memo hits (chess: `threatened` per piece that can move)."""
        if not isinstance(literal, Not) or literal.literal.name not in self.derived:
            return False
        return any(isinstance(atom, (Const, Fn)) and atom.name in self.derived
                   for rule in self.rules.get(literal.literal.name, ())
                   for lit in rule.body
                   for atom in [lit.literal if isinstance(lit, Not) else lit])

    # -- generation
    def function(self, relation: str, adornment: str, mode: str) -> str:
        """The name of the function for a call (generated before the program runs)."""
        key = (relation, adornment, mode)
        name = self._functions.get(key)
        if name is None:
            name = self._functions[key] = f"f{len(self._functions)}"
            self._memo_of[name] = self._new_memo(relation)
            self._pending.append(key)
        return name

    def _new_memo(self, relation: str) -> str:
        """An expression for a new memo dict of ``relation``'s level."""
        level = self.level[relation]
        if level == LEVEL_MOVE:
            self.move_slots += 1
            return f"c.mm[{self.move_slots - 1}]"
        if level == LEVEL_STATE:
            self.state_slots += 1
            return f"c.sm[{self.state_slots - 1}]"
        self.global_memo.append({})
        return f"c.gm[{len(self.global_memo) - 1}]"

    def call_expr(self, relation: str, adornment: str, mode: str, inputs: list[str]) -> str:
        """An expression calling a generated function; a memo hit costs no call."""
        name = self.function(relation, adornment, mode)
        if mode.startswith("index") or (self.tabling_on and relation in self.recursive) \
                or (relation in FULL_QUERIES and "b" in adornment):
            return f"{name}(" + ", ".join(["c", *inputs]) + ")"
        return (f"(_h if (_h := {self._memo_of[name]}.get(_q := {_tuple_expr(inputs)}))"
                f" is not None else {name}_m(" + ", ".join(["c", "_q", *inputs]) + "))")

    def _generate(self, relation: str, adornment: str, mode: str) -> str:
        name = self._functions[(relation, adornment, mode)]
        memo = self._memo_of[name]
        inputs = [f"a{i}" for i, flag in enumerate(adornment) if flag == "b"]
        signature = ", ".join(["c", *inputs])
        key = _tuple_expr(inputs)
        if mode == "iter":
            return self._generate_iter(name, relation, adornment, signature)
        if mode.startswith("index"):
            parts = next(p for p, m in self._index_modes.items() if m == mode)
            build = self.constant(indexer(parts))
            full = self.function(relation, adornment, "all")
            return "\n".join([
                f"def {name}({signature}):",
                f"    memo = {memo}",
                f"    r = memo.get({key})",
                "    if r is None:",
                f"        r = memo[{key}] = {build}({full}({signature}))",
                "    return r"])
        if relation in FULL_QUERIES and "b" in adornment:
            # a bound call of a full query: its full table, indexed by the bound arguments
            full = self.function(relation, "f" * len(adornment), "all")
            parts = tuple(((i,), "v") for i, flag in enumerate(adornment) if flag == "b")
            result = f"index.get({key}, ())"
            return "\n".join([
                f"def {name}({signature}):",
                f"    index = {memo}.get(None)",
                "    if index is None:",
                f"        index = {memo}[None] = {self.constant(indexer(parts))}({full}(c))",
                f"    return {'bool(' + result + ')' if mode == 'exists' else result}"])
        rules = self.rules.get(relation, [])
        recursive = relation in self.recursive
        if recursive and self.tabling_on:
            if mode == "exists":
                full = self.function(relation, adornment, "all")
                return f"def {name}({signature}):\n    return bool({full}({signature}))"
            lines = [f"def {name}_run(add, args):", f"    {signature}, = args"]
            for rule in rules:
                lines += _RuleCode(self, rule, adornment, mode).lines()
            args = _tuple_expr(["c", *inputs], always=True)
            return "\n".join([*lines, "    return None",
                              f"def {name}({signature}):",
                              f"    return _tabled(T, {memo}, {key}, {name}_run, {args})"])
        # the miss path: the rules, then the answer memoized
        lines = [f"def {name}_m(c, k{''.join(', ' + a for a in inputs)}):",
                 f"    memo = {memo}"]
        codes = [_RuleCode(self, rule, adornment, mode) for rule in rules]
        base = [code for code in codes if code.self_literal is None]
        growing = [code for code in codes if code.self_literal is not None]
        if mode == "all":
            lines += ["    r = set()", "    rows = []" if growing else "    add = r.add"]
        for code in base:
            lines += code.lines(worklist=bool(growing))
        if growing and mode == "all":
            # the rules reading this very call's answers: semi-naive, one new row at a time
            lines += ["    i = 0", "    while i < len(rows):", "        s = rows[i]",
                      "        i += 1"]
            for code in growing:
                lines += code.lines(worklist=True)
        lines += ["    memo[k] = r" if mode == "all" else "    memo[k] = False",
                  f"    return {'r' if mode == 'all' else 'False'}"]
        lines += [f"def {name}({signature}):",
                  f"    return {self.call_expr(relation, adornment, mode, inputs)}"]
        return "\n".join(lines)

    def _generate_iter(self, name: str, relation: str, adornment: str, signature: str) -> str:
        """A generator of the answers, rule by rule (step 7; repeats possible). A
        recursive relation's answers need the fixpoint: its full answers, iterated."""
        codes = [_RuleCode(self, rule, adornment, "iter") for rule in self.rules.get(relation, [])]
        if relation in self.recursive or any(code.self_literal is not None for code in codes):
            full = self.function(relation, adornment, "all")
            return f"def {name}({signature}):\n    yield from {full}({signature})"
        lines = [f"def {name}({signature}):"]
        for code in codes:
            lines += code.lines()
        return "\n".join([*lines, "    yield from ()"])


def _source_relation(name: str, relations: Container[str]) -> str:
    """The game's relation behind a relation of the bottom-up program: an auxiliary
    relation of a long body (``aux N.M head``) or a relation split by a constant
    (``name [k=value]``) stands for its rule's head."""
    if name in relations:
        return name
    head = name.rsplit(" ", 1)[-1]
    return head if head in relations else name.split(" ", 1)[0]


def _tuple_expr(items: list[str], always: bool = False) -> str:
    if len(items) == 1 and not always:
        return items[0]
    return "(" + "".join(f"{item}, " for item in items) + ")"


class _RuleCode(TermCode):
    """The loop nest of one rule for one adornment of its head (step 3)."""

    def __init__(self, program: TopDownProgram, rule: FlatRule, adornment: str,
                 mode: str) -> None:
        super().__init__()
        self.program = program
        self.rule = rule
        self.adornment = adornment
        self.mode = mode
        # function terms already matched whole: reuse the value (no new tuple)
        self.matched: dict[Fn, str] = {}
        self.out: list[str] = []
        self.depth = 1
        self.loops = 0  # enclosing loops: a failed check `continue`s the innermost
        self.names = itertools.count()
        self.self_literal = None if program.tabling_on else self._find_self_literal()

    def _find_self_literal(self) -> int | None:
        """The body atom that calls this rule's own relation with the same bound
        arguments, i.e. reads the answers of this very call (left recursion)."""
        head = self.rule.head
        inputs = self._input_variables()

        def same_key(arg: Term, head_arg: Term, flag: str) -> bool:
            known = set(literal_variables(arg)) <= inputs
            return known and arg == head_arg if flag == "b" else not known

        for position, literal in enumerate(self.rule.body):
            if isinstance(literal, Fn) and literal.name == head.name and all(
                    same_key(arg, head_arg, flag) for arg, head_arg, flag
                    in zip(literal.args, _args(head), self.adornment, strict=True)):
                return position
        return None

    def _input_variables(self) -> set[str]:
        """Variables that stand for a whole bound argument of the call (a variable
        taken from inside one is a smaller term: recursion on it makes progress)."""
        return {a.name for a, flag in zip(_args(self.rule.head), self.adornment, strict=True)
                if flag == "b" and isinstance(a, Var)}

    def fresh(self, prefix: str) -> str:
        return f"{prefix}{next(self.names)}"

    def emit(self, line: str) -> None:
        self.out.append("    " * self.depth + line)

    def open_if(self, condition: str) -> None:
        self.emit(f"if {condition}:")
        self.depth += 1

    def open_for(self, source: str) -> str:
        row = self.fresh("t")
        self.emit(f"for {row} in {source}:")
        self.depth += 1
        self.loops += 1
        return row

    def reject(self, condition: str) -> None:
        """Give up this candidate binding when ``condition`` holds. Outside any loop
        the rule opens a one-pass loop first: nested ifs would soon exceed Python's
        100 levels of indentation (a head with 150 constants)."""
        if not self.loops:
            self.open_for("_ONCE")
        self.emit(f"if {condition}: continue")

    # -- terms
    def expr(self, term: Term) -> str:
        found = self.matched.get(term) if isinstance(term, Fn) else None
        return found if found is not None else super().expr(term)

    def key_parts(self, term: Term, path: tuple[int, ...],
                  out: list[tuple[KeyPart, str | None]]) -> None:
        """Index key parts of a pattern: (part, expression or None for a structure)."""
        if isinstance(term, Fn):
            out.append(((path, "f"), None))
            for i, arg in enumerate(term.args, start=1):
                self.key_parts(arg, path + (i,), out)
        elif self.is_bound(term):
            out.append(((path, "v"), self.expr(term)))

    def key_expr(self, term_parts: list[tuple[KeyPart, str | None]],
                 patterns: dict[tuple[int, ...], Fn]) -> str:
        exprs: list[str] = []
        for (path, kind), value in term_parts:
            if kind == "f":
                fn = patterns[path]
                exprs += [repr(fn.name), str(len(fn.args) + 1)]
            else:
                assert value is not None
                exprs.append(value)
        return _tuple_expr(exprs)

    def match(self, term: Term, value: str, path: tuple[int, ...],
              known: set[tuple[int, ...]]) -> None:
        """Check ``value`` against ``term`` and bind its free variables; sub-terms at
        ``known`` paths are already known to match (from an index key)."""
        if isinstance(term, Var):
            if term.name not in self.slots:
                local = self.fresh("v")
                self.slots[term.name] = local
                self.emit(f"{local} = {value}")
            elif path not in known:
                self.reject(f"{value} != {self.slots[term.name]}")
        elif isinstance(term, Const):
            if path not in known:
                self.reject(f"{value} != {term.name!r}")
        elif path not in known and self.is_bound(term):
            self.reject(f"{value} != {self.expr(term)}")
        else:
            if path not in known:
                self.reject(f"type({value}) is not tuple or len({value}) != "
                            f"{len(term.args) + 1} or {value}[0] != {term.name!r}")
            local = value
            if any(not self.is_bound(a) or path + (i,) not in known
                   for i, a in enumerate(term.args, start=1)):
                if "[" in value:
                    local = self.fresh("x")
                    self.emit(f"{local} = {value}")
                for i, arg in enumerate(term.args, start=1):
                    self.match(arg, f"{local}[{i}]", path + (i,), known)
            self.matched[term] = local

    # -- the rule
    def lines(self, worklist: bool = False) -> list[str]:
        """The rule's code. ``worklist``: answers go to ``r`` and the list ``rows``; a
        rule with a self literal reads one answer ``s`` of that list (the caller
        loops over new answers) and exists-mode skips it: this call's first answer
        always comes from another rule."""
        rule = self.rule
        if self.self_literal is not None:
            if self.mode == "exists":
                return []
            self.depth += 1
        head_args = _args(rule.head)
        for i, (arg, flag) in enumerate(zip(head_args, self.adornment, strict=True)):
            if flag == "b":
                if isinstance(arg, Var) and arg.name not in self.slots:
                    self.slots[arg.name] = f"a{i}"
                else:
                    self.match(arg, f"a{i}", (), set())
        inputs = self._input_variables()
        body = list(rule.body)
        if self.self_literal is not None:
            own = body.pop(self.self_literal)
            row = self.open_for("(s,)")
            for i, (arg, flag) in enumerate(zip(_args(own), self.adornment, strict=True)):
                if flag == "f":
                    self.match(arg, f"{row}[{i}]", (i,), set())
        head_name = rule.head.name
        try:
            order = plan_body(body, set(self.slots), cost=lambda atom, bound: self.program.cost(
                atom, bound, head_name, inputs), deferred=self.program.expensive_test)
        except UnboundVariables as exc:
            raise unsafe_rule(rule, exc.names) from None
        head_vars = set(literal_variables(rule.head)) if self.mode != "exists" else set()
        for k, position in enumerate(order):
            later = head_vars.union(*(literal_variables(body[j]) for j in order[k + 1:]))
            self.literal(body[position], later)
        if self.mode == "exists":  # head variables need no value: only existence counts
            self.emit("memo[k] = True")
            self.emit("return True")
            return self.out
        unbound = set(literal_variables(rule.head)) - set(self.slots)
        if unbound:
            raise unsafe_rule(rule, sorted(unbound))
        answer = _tuple_expr([self.expr(a) for a in head_args], always=True)
        if self.mode == "iter":
            self.emit(f"yield {answer}")
        elif worklist:
            self.emit(f"x = {answer}")
            self.emit("if x not in r:")
            self.emit("    r.add(x)")
            self.emit("    rows.append(x)")
        else:
            self.emit(f"add({answer})")
        return self.out

    def literal(self, literal: FlatLiteral, later: set[str]) -> None:
        condition = self.comparison(literal)
        if condition is not None:
            self.open_if(condition)
        elif isinstance(literal, Not):
            inner = literal.literal
            assert isinstance(inner, (Const, Fn))
            self.open_if("not " + self.holds(inner))
        elif all(self.is_bound(a) for a in _args(literal)):
            self.open_if(self.holds(literal))
        else:
            self.positive(literal, self._projected(literal, later))

    def _projected(self, atom: Const | Fn, later: set[str]) -> bool:
        """Whether only the existence of a match matters: its free variables occur
        once each, as whole arguments or sub-terms, and nothing later reads them."""
        seen: set[str] = set()
        for name in _variable_occurrences(atom):
            if name in self.slots:
                continue
            if name in seen or name in later:
                return False
            seen.add(name)
        return True

    def holds(self, atom: Const | Fn) -> str:
        """An expression: whether the fully bound ``atom`` holds."""
        args = _args(atom)
        program = self.program
        if atom.name == "true":
            return f"{self.expr(args[0])} in c.state"
        if atom.name == "does":
            return f"c.does.get({self.expr(args[0])}) == {self.expr(args[1])}"
        if atom.name in program.derived:
            return program.call_expr(atom.name, "b" * len(args), "exists",
                                     [self.expr(a) for a in args])
        if len(args) == 1:
            return f"{self.expr(args[0])} in {program.constant(program.static_values(atom.name))}"
        rows = program.static_relation(atom.name).set
        return _tuple_expr([self.expr(a) for a in args], always=True) + \
            f" in {program.constant(rows)}"

    def positive(self, atom: Const | Fn, projected: bool) -> None:
        args = _args(atom)
        name = atom.name
        if name == "does":
            self.does(args)
        elif name == "true":
            self.indexed(args[0], (), projected, self.true_source)
        elif name in self.program.derived:
            self.call(atom, args, projected)
        else:
            program = self.program

            def static_source(parts: tuple[KeyPart, ...]) -> str:
                if not parts:
                    return program.constant(program.static_rows(name))
                return program.constant(program.static_index(name, parts))
            self.indexed(Fn(name, args), None, projected, static_source)

    def true_source(self, parts: tuple[KeyPart, ...]) -> str:
        if not parts:
            return "c.state"
        return f"c.ti[{self.program.true_slot(parts)}]"

    def indexed(self, pattern: Term, root: tuple[int, ...] | None, projected: bool,
                source: Callable[[tuple[KeyPart, ...]], str]) -> None:
        """Rows matching ``pattern`` from a store indexed by ``source(parts)``.

        ``root`` is () when a row is the pattern itself (``true`` facts), None when a
        row is the tuple of the pattern's arguments (relation rows).
        """
        found: list[tuple[KeyPart, str | None]] = []
        patterns: dict[tuple[int, ...], Fn] = {}
        if root is None:
            assert isinstance(pattern, Fn)
            for i, arg in enumerate(pattern.args):
                self.key_parts(arg, (i,), found)
            _collect_patterns(pattern, (), patterns, top=False)
        else:
            self.key_parts(pattern, root, found)
            _collect_patterns(pattern, root, patterns, top=True)
        parts = tuple(part for part, _ in found)
        store = source(parts)
        if projected:
            if parts:
                self.open_if(f"{store}.get({self.key_expr(found, patterns)})")
            else:
                self.open_if(store)
            return
        known = {path for (path, _kind), _ in found}
        if parts:
            row = self.open_for(f"{store}.get({self.key_expr(found, patterns)}, ())")
        else:
            row = self.open_for(store)
        if root is None:
            assert isinstance(pattern, Fn)
            for i, arg in enumerate(pattern.args):
                self.match(arg, f"{row}[{i}]", (i,), known)
        else:
            self.match(pattern, row, (), known)

    def does(self, args: tuple[Term, ...]) -> None:
        if self.is_bound(args[0]):
            move = self.fresh("m")
            self.emit(f"{move} = c.does.get({self.expr(args[0])})")
            self.open_if(f"{move} is not None")
            self.match(args[1], move, (), set())
            return
        row = self.open_for("c.does.items()")
        for i, arg in enumerate(args):
            self.match(arg, f"{row}[{i}]", (i,), set())

    def call(self, atom: Const | Fn, args: tuple[Term, ...], projected: bool) -> None:
        """A call of a derived relation: loop over its answers, or test existence."""
        adornment = "".join("b" if self.is_bound(a) else "f" for a in args)
        inputs = [self.expr(a) for a, flag in zip(args, adornment, strict=True) if flag == "b"]
        program = self.program
        free_args = all(isinstance(a, Var) for a, f in zip(args, adornment, strict=True)
                        if f == "f")
        if projected and free_args:
            self.open_if(program.call_expr(atom.name, adornment, "exists", inputs))
            return
        # bound parts inside free function-term arguments select answers by index
        inner: list[tuple[KeyPart, str | None]] = []
        patterns: dict[tuple[int, ...], Fn] = {}
        for i, (arg, flag) in enumerate(zip(args, adornment, strict=True)):
            if flag == "f" and isinstance(arg, Fn):
                self.key_parts(arg, (i,), inner)
                _collect_patterns(arg, (i,), patterns, top=True)
        known = {(i,) for i, flag in enumerate(adornment) if flag == "b"}
        if any(kind == "v" for (_path, kind), _ in inner):
            mode = program.index_mode(tuple(part for part, _ in inner))
            answers = program.call_expr(atom.name, adornment, mode, inputs)
            key = self.key_expr(inner, patterns)
            if projected:
                self.open_if(f"{answers}.get({key})")
                return
            row = self.open_for(f"{answers}.get({key}, ())")
            known |= {path for (path, _kind), _ in inner}
        else:
            row = self.open_for(program.call_expr(atom.name, adornment, "all", inputs))
        for i, (arg, flag) in enumerate(zip(args, adornment, strict=True)):
            if flag == "f":
                self.match(arg, f"{row}[{i}]", (i,), known)


ESTIMATE_SAMPLE = 5000  # rows looked at to estimate a static relation's selectivity


def _estimate(rows: Sequence[Row], args: tuple[Term, ...], bound: set[str]) -> float:
    """Average number of ``rows`` matching ``args`` once the ``bound`` variables have
    values (rows grouped by the values at the bound variables)."""
    sample = rows[:ESTIMATE_SAMPLE]
    groups: set[tuple] = set()
    matches = 0
    for row in sample:
        key: list = []
        if all(_fits(a, v, bound, key) for a, v in zip(args, row, strict=False)):
            matches += 1
            groups.add(tuple(key))
    if not matches:
        return 0.0
    return matches / len(groups) * (len(rows) / len(sample))


def _fits(term: Term, value: object, bound: set[str], key: list) -> bool:
    """Whether ``value`` can match ``term``; values at bound variables go to ``key``."""
    if isinstance(term, Const):
        return value == term.name
    if isinstance(term, Var):
        if term.name in bound:
            key.append(value)
        return True
    return (type(value) is tuple and len(value) == len(term.args) + 1
            and value[0] == term.name
            and all(_fits(a, v, bound, key) for a, v in zip(term.args, value[1:], strict=True)))


def _shape(term: Term, bound: set[str]) -> object:
    """What of a term matters to :func:`_estimate`: constants, bound or free slots."""
    if isinstance(term, Const):
        return term.name
    if isinstance(term, Var):
        return "?b" if term.name in bound else "?f"
    return (term.name, *(_shape(a, bound) for a in term.args))


def _bound_term(term: Term, bound: set[str]) -> bool:
    """Whether some part of ``term`` is known (a constant or a bound variable)."""
    if isinstance(term, Var):
        return term.name in bound
    if isinstance(term, Fn):
        return any(_bound_term(a, bound) for a in term.args)
    return True


def _args(atom: Const | Fn) -> tuple[Term, ...]:
    return atom.args if isinstance(atom, Fn) else ()


def _variable_occurrences(term: Term) -> list[str]:
    if isinstance(term, Var):
        return [term.name]
    if isinstance(term, Fn):
        return [name for arg in term.args for name in _variable_occurrences(arg)]
    return []


def _collect_patterns(term: Term, path: tuple[int, ...], out: dict[tuple[int, ...], Fn],
                      top: bool) -> None:
    """Function-term patterns of ``term`` by path (``top``: the term itself counts)."""
    if isinstance(term, Fn):
        if top:
            out[path] = term
        for i, arg in enumerate(term.args, start=1 if top else 0):
            _collect_patterns(arg, path + (i,), out, top=True)


