"""The batched engine's move network grounded with unused move arguments projected out.

The move network (:mod:`gdl.reasoning.batch_machine`, step 1) grounds the move-dependent rules
once with their ``does`` literals kept as atoms. A rule that reads only part of a
move still enumerates whole moves: blockerParallel's frame rule

    next(cell1 ?x ?y ?m) <= true(cell1 ?x ?y ?m),
        does(blocker, mark(?xB1, ?yB1, ?xB2, ?yB2)), does(crosser, mark(?xC1, ?yC1, ?xC2, ?yC2)),
        distinctCell(?x, ?y, ?xB1, ?yB1), distinctCell(?x, ?y, ?xC1, ?yC1)

has 48 x 256 x 256 instances (5.65 million ground rules in all, 6 million join
steps: over the 2 million step budget, so the game fell back to the per-state
engine). Projection (existential variable elimination, as in ASP grounders):

1. in each rule, a positive ``does`` literal with variables that occur nowhere else
   in the rule (head, other literals, tests) is replaced by a new atom over its
   other variables, ``p(?xB1, ?yB1)``, defined by ``p(?xB1, ?yB1) <= does(blocker,
   mark(?xB1, ?yB1, ?xB2, ?yB2))``; literals equal up to renaming share one ``p``;
2. the body holds for a binding of the remaining variables exactly when it held
   for some binding of the projected ones, so the network computes the same
   ``next`` facts; the frame rule above has 48 x 16 x 16 instances;
3. the projection rules are ground first, their heads become the tables the
   rewritten rules join against, and both go into the network (a ``p`` atom is one
   more derived atom, an OR over the moves it projects).

The names of the new relations contain a space, which no KIF symbol can.
"""

from __future__ import annotations

from gdl.budget import Budget
from gdl.reasoning.ground import (
    GroundGame,
    GroundRule,
    IRule,
    PredKey,
    Table,
    Value,
    pred_key,
    substitute,
)

DOES: PredKey = ("does", 2)


def _ordered_vars(term: Value, out: list[str]) -> list[str]:
    """The variables of ``term`` in order of first occurrence."""
    if type(term) is str:
        if term[0] == "?" and term not in out:
            out.append(term)
    else:
        for part in term:
            _ordered_vars(part, out)
    return out


def project_moves(rules: list[IRule]) -> tuple[list[IRule], list[IRule]]:
    """(projection rules, ``rules`` rewritten): step 1."""
    relations: dict[Value, str] = {}     # canonical literal -> its relation's name
    projections: list[IRule] = []
    rewritten: list[IRule] = []
    for rule in rules:
        pos = list(rule.pos)
        for i, atom in enumerate(rule.pos):
            if pred_key(atom) != DOES:
                continue
            elsewhere: list[str] = []
            for other in (rule.head, *pos[:i], *pos[i + 1:], *rule.neg,
                          *(t for pair in rule.neq + rule.eq for t in pair)):
                _ordered_vars(other, elsewhere)
            own = _ordered_vars(atom, [])
            kept = [v for v in own if v in elsewhere]
            if len(kept) == len(own):
                continue
            names = {v: f"?k{j}" for j, v in enumerate(kept)}
            names.update({v: f"?l{j}" for j, v in enumerate(v for v in own if v not in names)})
            canonical = substitute(atom, names)
            name = relations.get(canonical)
            if name is None:
                name = relations[canonical] = f"does projected {len(relations)}"
                head = (name, *(names[v] for v in kept)) if kept else name
                projections.append(IRule(head, (canonical,), (), (), (), rule.where))
            pos[i] = (name, *kept) if kept else name
        rewritten.append(rule if tuple(pos) == rule.pos else IRule(
            rule.head, tuple(pos), rule.neg, rule.neq, rule.eq, rule.where))
    return projections, rewritten


def ground_move_rules(game: GroundGame, budget: Budget) -> list[GroundRule]:
    """The move network's ground rules: the move-dependent rules of ``game`` over its
    reachable domain, ``does`` literals kept as atoms, unused move arguments
    projected out (steps 1-3)."""
    rules = game.move_rules()
    projections, rewritten = project_moves(rules)
    ground = game.instantiate(projections, game.tables, exact=game.is_static,
                              folded=game.is_static, budget=budget)
    tables = dict(game.tables)
    new = {pred_key(r.head) for r in projections}
    for key in new:
        tables[key] = Table()
    for g in ground:
        tables[pred_key(g.head)].add(g.head)

    def static(key: PredKey) -> bool:
        return key not in new and game.is_static(key)

    return ground + game.instantiate(rewritten, tables, exact=static, folded=static, budget=budget)
