"""Magic-sets rewriting: make bottom-up evaluation goal-directed.

Plain bottom-up evaluation derives every fact of every relation, even when a rule
only ever asks ``(threatened white 5 1 4 4 2 3)`` with all arguments bound (corpus
``chess`` would derive millions of such facts per state). The generalised
magic-sets transformation (Bancilhon, Maier, Sagiv, Ullman, "Magic sets and other
strange ways to implement logic programs", PODS 1986; Beeri & Ramakrishnan 1991)
rewrites the rules so that only demanded facts are derived:

1. The caller chooses the rewritten relations: state-dependent ones, and static
   ones that build function terms (others are computed once per game anyway);
   the rest, and the plain rules of rewritten non-query relations, stay as they
   are. A call of relation ``p`` is *adorned* by which
   arguments are bound when it is reached (an argument is bound when all its
   variables are); the all-free call keeps the name ``p``.
2. For each adorned relation ``p^a`` and each of its rules, the body is ordered
   with :func:`gdl.prover.plan_body` starting from the variables of the bound head
   arguments (the sideways information passing strategy). The rule gets a first
   literal ``magic p^a(bound head args)`` unless ``a`` is all free.
3. Each body atom or negated atom of a rewritten relation ``q`` with adornment
   ``b`` (not all free) is renamed ``q^b`` and gets a magic rule
   ``magic q^b(bound args) <= `` the literals before it in the rewritten body,
   leaving out negations: that over-approximates the demand (still sound: ``q^b``
   holds exactly the ``q`` facts for a superset of the demanded bindings) and keeps
   negation out of the magic cycles, so the rewritten rules stay stratified.
4. The query relations (``legal``, ``next``, ``goal``, ``terminal``, ``sees``) are
   all-free calls, so their full contents are derived.

The rewritten program is stratified again by the caller; when negation through
magic relations makes it unstratifiable the caller keeps the plain rules.
"""

from __future__ import annotations

from collections.abc import Iterable

from gdl.prover import FlatLiteral, FlatRule, literal_variables, plan_body
from gdl.terms import Const, Fn, Not, Term, variables

STATE_QUERIES = ("legal", "goal", "terminal")
MOVE_QUERIES = ("next", "sees")


def _name(relation: str, adornment: str, tag: str) -> str:
    # a space never occurs in a parsed symbol, so these names cannot clash
    return f"{relation} [{adornment}] {tag}"


def _magic_name(relation: str, adornment: str, tag: str) -> str:
    return f"magic {relation} [{adornment}] {tag}"


def _adornment(args: tuple[Term, ...], bound: set[str]) -> str:
    return "".join("b" if set(variables(a)) <= bound else "f" for a in args)


def _bound_args(args: tuple[Term, ...], adornment: str) -> tuple[Term, ...]:
    return tuple(a for a, flag in zip(args, adornment, strict=True) if flag == "b")


def _atom(name: str, args: tuple[Term, ...]) -> Const | Fn:
    return Fn(name, args) if args else Const(name)


def magic_rewrite(rules: dict[str, list[FlatRule]], rewritten: set[str],
                  ) -> dict[str, list[FlatRule]]:
    """Rules by head relation after the rewriting of the relations in ``rewritten``.

    The state queries (legal, goal, terminal) and the move queries (next, sees) are
    rewritten apart, so the demand of ``next`` (which reads ``does``) never makes
    the state queries depend on ``does``.
    """
    # Other relations keep their plain rules too: ``init`` and whatever reads them
    # outside the queries still see full relations (derived only if asked for).
    out: dict[str, list[FlatRule]] = {h: list(rs) for h, rs in rules.items()
                                      if h not in STATE_QUERIES + MOVE_QUERIES
                                      or h not in rewritten}
    for tag, queries in (("state", STATE_QUERIES), ("move", MOVE_QUERIES)):
        for head, head_rules in _rewrite(rules, rewritten, queries, tag).items():
            out.setdefault(head, []).extend(head_rules)
    return out


def _rewrite(rules: dict[str, list[FlatRule]], rewritten: set[str], queries: Iterable[str],
             tag: str) -> dict[str, list[FlatRule]]:
    out: dict[str, list[FlatRule]] = {}
    seen: set[tuple[str, str]] = set()
    work: list[tuple[str, str]] = []

    def call(relation: str, adornment: str) -> str:
        if (relation, adornment) not in seen:
            seen.add((relation, adornment))
            work.append((relation, adornment))
        if relation in queries and "b" not in adornment:
            return relation
        return _name(relation, adornment, tag)

    for query in queries:
        if query in rewritten:
            arity = _arity(rules[query])
            call(query, "f" * arity)
    while work:
        relation, adornment = work.pop()
        for rule in rules[relation]:
            head_args = rule.head.args if isinstance(rule.head, Fn) else ()
            bound = set().union(*(variables(a) for a in _bound_args(head_args, adornment)))
            body: list[FlatLiteral] = []
            if "b" in adornment:
                body.append(Fn(_magic_name(relation, adornment, tag),
                               _bound_args(head_args, adornment)))
            for position in plan_body(rule.body, bound):
                literal = rule.body[position]
                atom = literal.literal if isinstance(literal, Not) else literal
                if isinstance(atom, (Const, Fn)) and atom.name in rewritten:
                    args = atom.args if isinstance(atom, Fn) else ()
                    called = _adornment(args, bound)
                    if "b" in called:
                        magic = _magic_name(atom.name, called, tag)
                        out.setdefault(magic, []).append(FlatRule(
                            Fn(magic, _bound_args(args, called)),
                            tuple(lit for lit in body if not isinstance(lit, Not)),
                            rule.source, ordered=True))
                    renamed = _atom(call(atom.name, called), args)
                    literal = Not(renamed) if isinstance(literal, Not) else renamed
                body.append(literal)
                bound |= literal_variables(literal)
            head = _atom(call(relation, adornment), head_args)
            out.setdefault(head.name, []).append(
                FlatRule(head, tuple(body), rule.source, ordered=True))
    return out


def _arity(rules: list[FlatRule]) -> int:
    head = rules[0].head
    return len(head.args) if isinstance(head, Fn) else 0
