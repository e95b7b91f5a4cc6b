"""The compiled GDL engine: a grounded game turned into straight-line Python.

Hook for :func:`gdl.reasoning.machine.load_machine`: ``compile_machine(rules, name=...,
budget=None) -> CompiledMachine`` raises :class:`~solvers.errors.LimitReached` (a
``GameError``) with the reason when the game does not fit, so ``engine="auto"``
falls back to the general engine.

Algorithm:

1. Ground the game over its reachable domain (:mod:`gdl.reasoning.ground`).
2. Number the reachable ``true`` facts: a state is an ``int`` whose bit ``i`` is
   fact ``i`` (facts sorted by KIF string), so states hash and copy for free.
   Each ``(does role move)`` atom is a move, numbered in (role, KIF) order.
3. Generate one Python function per query from the ground rules, in the spirit of
   the propositional networks of Schkufza, Love and Genesereth ("Propositional
   Automata and Cell Automata", 2008) and the compiled code of Waugh ("Faster
   state manipulation in general games using generated code", 2009), but over
   machine-word bitsets: a conjunction of ``true`` literals is one mask test
   ``s & (P|N) == P``; an atom used once is inlined so ``and``/``or``
   short-circuit; atoms used more are locals in topological order; a recursive
   group of atoms is iterated to its fixpoint. ``legal`` and ``goal`` return an
   ``int`` mask of their atoms, decoded (and cached) into moves and values;
   ``terminal`` returns a truth value.
4. ``next`` = (move-free ``next`` rules, one generated function) OR (the
   move-dependent rules instantiated for the joint move, with ``does`` folded to
   constants): the latter is built on the first use of each joint move and cached.
   Its frame rules ``next(f) <= true(f)`` collapse to ``s & K``, effects without
   conditions to a constant ``C``; only the rest is generated code.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from gdl.budget import Budget
from gdl.reasoning.ground import GroundRule, Value, from_value, ground_game, sccs, to_value
from gdl.reasoning.parser import parse_term
from gdl.reasoning.state_machine import NATURE, NATURE_GOAL, StateMachine
from gdl.reasoning.terminal_delta import DeltaTerminal, bits_of, flat_terms
from gdl.reasoning.terms import Fn, Rule, Spelling, term_to_kif
from solvers.errors import GameError, GameRuntimeError, LimitReached

EACH_MOVE_STEPS = 400_000      # join steps to ground every move's effects up front
EAGER_MOVES = 4096             # moves whose next functions are compiled up front
MAX_GROUND_RULES = 200_000     # state rules generated as code
MAX_INLINE_DEPTH = 12          # nesting of inlined expressions (parser limits)
DEBUG_SOURCE: list[str] | None = None  # set to a list to collect the generated code
CHUNK = 64                     # terms per `r |= ...` line (compiler recursion)
MAX_CACHE = 1 << 17            # decoded legal/goal masks and per-joint-move functions


def kif(value: Value) -> str:
    return term_to_kif(from_value(value))


class _Emitter:
    """Writes the Python source of one query over the ground rules (step 3).

    ``rules`` maps each derived atom id to its bodies ``(pos ids, neg ids)``;
    ``bits`` maps a ``true`` atom id to its state bit.
    """

    def __init__(self, rules: Mapping[int, list[tuple[tuple[int, ...], tuple[int, ...]]]],
                 bits: dict[int, int]) -> None:
        self.rules = rules
        self.bits = bits
        self.lines: list[str] = []
        self.exprs: dict[int, tuple[str, int]] = {}   # atom -> (expression, nesting)
        self.uses: dict[int, int] = {}
        self._pure: dict[int, tuple[int, int] | None] = {}

    # -- analysis
    def _cone(self, targets: Sequence[int]) -> list[list[int]]:
        """Derived atoms needed by ``targets``, as SCCs in dependency order."""
        seen: set[int] = set()
        stack = [t for t in targets if t in self.rules]
        edges: dict[int, set[int]] = {}
        while stack:
            atom = stack.pop()
            if atom in seen:
                continue
            seen.add(atom)
            deps = {d for pos, neg in self.rules[atom] for d in (*pos, *neg) if d in self.rules}
            edges[atom] = deps
            stack.extend(deps - seen)
        for atom in targets:
            self.uses[atom] = self.uses.get(atom, 0) + 2  # a target is never inlined
        for atom in seen:
            for pos, neg in self.rules[atom]:
                for d in (*pos, *neg):
                    self.uses[d] = self.uses.get(d, 0) + 1
        return sccs(sorted(seen), edges)

    # -- expressions
    def pure(self, atom: int) -> tuple[int, int] | None:
        """(P, N) when ``atom`` holds exactly when ``s & (P|N) == P``: a single body of
        ``true`` literals and positive atoms that are themselves pure."""
        if atom in self._pure:
            return self._pure[atom]
        self._pure[atom] = None  # a cycle is not pure
        found = None
        bodies = self.rules.get(atom, ())
        if len(bodies) == 1:
            found = self._pure_body(*bodies[0])
        self._pure[atom] = found
        return found

    def _pure_body(self, pos: tuple[int, ...], neg: tuple[int, ...]) -> tuple[int, int] | None:
        p = n = 0
        for a in pos:
            if a in self.bits:
                p |= 1 << self.bits[a]
            else:
                sub = self.pure(a)
                if sub is None:
                    return None
                p |= sub[0]
                n |= sub[1]
        for a in neg:
            if a in self.bits:
                n |= 1 << self.bits[a]
            elif a in self.rules:
                return None
        return p, n

    @staticmethod
    def mask_test(p: int, n: int) -> str:
        if p & n:
            return "False"
        if not p and not n:
            return "True"
        if not n and p & (p - 1) == 0:
            return f"s & {_lit(p)}"
        return f"s & {_lit(p | n)} == {_lit(p)}"

    def _body(self, pos: tuple[int, ...], neg: tuple[int, ...]) -> tuple[str, int]:
        bits = self.bits
        p = n = 0
        parts: list[str] = []
        depth = 0
        for atom in pos:
            if atom in bits:
                p |= 1 << bits[atom]
                continue
            sub = self.pure(atom)
            if sub is not None:  # a conjunction inside a conjunction: merge the masks
                p |= sub[0]
                n |= sub[1]
                continue
            text, d = self.ref(atom)
            if text == "False":
                return "False", 0
            parts.append(text)
            depth = max(depth, d)
        for atom in neg:
            if atom in bits:
                n |= 1 << bits[atom]
            elif atom in self.rules:
                text, d = self.ref(atom)
                parts.append(f"not {text}")
                depth = max(depth, d)
        mask = self.mask_test(p, n)
        if mask == "False":
            return "False", 0
        if mask != "True":
            parts.insert(0, f"({mask})" if parts else mask)
        if not parts:
            return "True", 0
        if len(parts) == 1:
            return parts[0], depth
        return " and ".join(f"({x})" if " or " in x else x for x in parts), depth + 1

    def _disjunction(self, bodies: list[tuple[tuple[int, ...], tuple[int, ...]]]) -> tuple[str, int]:
        single = 0
        parts: list[tuple[str, int]] = []
        for pos, neg in bodies:
            if not neg and len(pos) == 1 and pos[0] in self.bits:
                single |= 1 << self.bits[pos[0]]
                continue
            text, d = self._body(pos, neg)
            if text == "True":
                return "True", 0
            if text != "False":
                parts.append((text, d))
        if single:
            parts.insert(0, (f"s & {_lit(single)}", 0))
        if not parts:
            return "False", 0
        if len(parts) == 1:
            return parts[0]
        depth = max(d for _, d in parts) + 1
        return " or ".join(f"({t})" for t, _ in parts), depth

    def ref(self, atom: int) -> tuple[str, int]:
        if atom in self.bits:
            return f"(s & {_lit(1 << self.bits[atom])})", 0
        return self.exprs.get(atom, ("False", 0))

    def _define(self, comp: list[int]) -> None:
        if len(comp) == 1 and comp[0] not in {d for pos, neg in self.rules[comp[0]]
                                              for d in (*pos, *neg)}:
            atom = comp[0]
            form = self.pure(atom)
            if form is not None:  # a mask test: cheaper to repeat than to store
                text = self.mask_test(*form)
                self.exprs[atom] = (f"({text})" if " " in text else text, 0)
                return
            text, depth = self._disjunction(self.rules[atom])
            if text in ("True", "False") or (self.uses.get(atom, 0) <= 1
                                              and depth < MAX_INLINE_DEPTH):
                self.exprs[atom] = (f"({text})" if " " in text else text, depth)
            else:
                self.lines.append(f"a{atom} = {text}")
                self.exprs[atom] = (f"a{atom}", 0)
            return
        # a recursive group: Jacobi iteration from all-false to the least fixpoint
        for atom in comp:
            self.exprs[atom] = (f"a{atom}", 0)
        self.lines.append(" = ".join(f"a{a}" for a in comp) + " = False")
        self.lines.append(f"for _ in range({len(comp) + 1}):")
        for atom in comp:
            self.lines.append(f"    n{atom} = bool({self._disjunction(self.rules[atom])[0]})")
        same = " and ".join(f"n{a} == a{a}" for a in comp)
        self.lines.append(f"    if {same}:")
        self.lines.append("        break")
        self.lines.append("    " + ", ".join(f"a{a}" for a in comp) + " = "
                          + ", ".join(f"n{a}" for a in comp))

    def prepare(self, targets: Sequence[int]) -> None:
        for comp in self._cone(targets):
            self._define(comp)

    def mask_expr(self, terms: Sequence[tuple[int, int]]) -> None:
        """Lines ``r = ...`` OR-ing bit ``b`` for each (atom, b) whose atom holds.

        Pure terms (mask tests) are grouped under the ``true`` fact most of them
        need (in turn-based games, whose turn it is): ``if s & G:`` skips the
        whole group in one test."""
        self.lines.append("r = 0")
        pieces = []
        pure: list[tuple[int, int, int]] = []
        for atom, bit in terms:
            form = self.pure(atom) if atom in self.rules else None
            if form is not None:
                pure.append((form[0], form[1], 1 << bit))
                continue
            text, _ = self.ref(atom)
            if text == "False":
                continue
            pieces.append(f"({text} and {_lit(1 << bit)})" if text != "True" else str(1 << bit))
        self._chunks(pieces, "")
        while pure:
            counts: dict[int, int] = {}
            for p, _, _ in pure:
                for b in bits_of(p):
                    counts[b] = counts.get(b, 0) + 1
            guard = max(counts, key=lambda b: (counts[b], -b)) if counts else None
            if guard is None or counts[guard] < 4:
                self._chunks([self._pure_piece(p, n, bit) for p, n, bit in pure], "")
                break
            g = 1 << guard
            inside = [(p & ~g, n, bit) for p, n, bit in pure if p & g]
            pure = [t for t in pure if not t[0] & g]
            self.lines.append(f"if s & {_lit(g)}:")
            self._chunks([self._pure_piece(p, n, bit) for p, n, bit in inside], "    ")

    def _pure_piece(self, p: int, n: int, bit: int) -> str:
        test = self.mask_test(p, n)
        return str(bit) if test == "True" else "0" if test == "False" else f"({test} and {_lit(bit)})"

    def _chunks(self, pieces: list[str], indent: str) -> None:
        const = 0
        rest = []
        for piece in pieces:
            if piece.isdigit():
                const |= int(piece)
            else:
                rest.append(piece)
        if const:
            rest.insert(0, _lit(const))
        for i in range(0, len(rest), CHUNK):
            self.lines.append(f"{indent}r |= " + " | ".join(rest[i:i + CHUNK]))

    def source(self, name: str, result: str) -> str:
        return (f"def {name}(s):\n" + "".join(f"    {line}\n" for line in self.lines)
                + f"    return {result}\n")

    def function(self, name: str, result: str) -> Callable[[int], Any]:
        return _compile_functions({name: self.source(name, result)})[name]


def _compile_functions(sources: dict[str, str]) -> dict[str, Callable[[int], Any]]:
    """Generated functions by name, compiled in one go (cheaper than one by one)."""
    source = "\n".join(sources.values())
    if DEBUG_SOURCE is not None:
        DEBUG_SOURCE.extend(sources.values())
    namespace: dict[str, Any] = {}
    try:
        exec(compile(source, f"<gdl-compiled {' '.join(list(sources)[:3])}>", "exec"), namespace)
    except (RecursionError, MemoryError, SyntaxError) as exc:
        raise LimitReached(f"generated code too large: {exc}") from None
    return {name: namespace[name] for name in sources}


class _TestCompiler:
    """What :class:`DeltaTerminal` needs to compile its tests."""

    def __init__(self, rules: Mapping, bits: dict[int, int]) -> None:
        self.rules, self.bits = rules, bits

    mask_test = staticmethod(_Emitter.mask_test)

    def atom_source(self, atom: int, name: str) -> str:
        emitter = _Emitter(self.rules, self.bits)
        emitter.prepare([atom])
        return emitter.source(name, f"bool({emitter.ref(atom)[0]})")

    compile = staticmethod(_compile_functions)


class _JointSees(NamedTuple):
    """The ``sees`` of one joint move: the mask of its atoms that hold in a state, what
    each bit means (role index, percept KIF), and percepts by mask (memo)."""

    mask: Callable[[int], int]
    atoms: list[tuple[int, str]]
    memo: dict[int, tuple[tuple[str, ...], ...]]


class CompiledMachine(StateMachine):
    """The StateMachine of a grounded game (see the module docstring)."""

    engine_name = "compiled"

    def __init__(self, rules: Sequence[Rule], name: str = "game",
                 budget: Budget | None = None) -> None:
        self.name = name
        self.fallback_reason = None
        # its gdl.reasoning.batch_machine.BatchMachine, built once (gdl.reasoning.batch_machine.batch_machine_of)
        self.batch_machine = None
        self._rules = list(rules)
        # one spelling per symbol whatever its case, as the general engine does
        self._spelling = Spelling(self._rules)
        if self._spelling.mixed:
            rules = self._spelling.rules(self._rules)
        role_terms = [r.head.args[0] for r in rules
                      if r.is_fact and isinstance(r.head, Fn) and r.head.name == "role"
                      and len(r.head.args) == 1]
        self.roles = tuple(term_to_kif(t) for t in role_terms)
        role_values = [to_value(t) for t in role_terms]
        self._role_index = {v: i for i, v in enumerate(role_values)}
        game = ground_game(list(rules), budget)
        self._game = game
        state_rules = game.state_rules()
        if len(state_rules) > MAX_GROUND_RULES:
            raise LimitReached(f"grounding has {len(state_rules)} rules "
                               f"(more than {MAX_GROUND_RULES})")

        # step 2: atoms, state bits, moves
        self._atom_ids: dict[Value, int] = {}
        facts = sorted((row[1] for row in game.tables.get(("true", 1), _NoTable()).rows), key=kif)
        self._facts = facts
        self._fact_kif = [kif(f) for f in facts]
        self._fact_bit = {f: i for i, f in enumerate(facts)}
        self._true_bits = {self._atom(("true", f)): i for i, f in enumerate(facts)}
        does = game.tables.get(("does", 2))
        move_atoms = [a for a in (does.rows if does else []) if a[1] in self._role_index]
        move_atoms.sort(key=lambda a: (self._role_index[a[1]], kif(a[2])))
        self._move_atoms: list[Value] = []
        self._move_kif: list[str] = []
        self._move_bit: dict[Value, int] = {}
        for atom in move_atoms:
            self._new_move(atom)
        self._role_moves_mask = [0] * len(self.roles)
        for atom, bit in self._move_bit.items():
            self._role_moves_mask[self._role_index[atom[1]]] |= 1 << bit

        # step 3: the state queries
        self._state_rules = self._rule_map(state_rules)
        legal_terms = [(self._atom(("legal", a[1], a[2])), bit) for bit, a in enumerate(move_atoms)]
        self._legal_fn = self._query("legal", [a for a, _ in legal_terms], legal_terms)
        goal_atoms = sorted((a for a in game.tables.get(("goal", 2), _NoTable()).rows
                             if a[1] in self._role_index),
                            key=lambda a: (self._role_index[a[1]], kif(a[2])))
        self._goal_atoms = goal_atoms
        goal_terms = [(self._atom(a), i) for i, a in enumerate(goal_atoms)]
        self._goal_fn = self._query("goals", [a for a, _ in goal_terms], goal_terms)
        terminal = self._atom("terminal")
        emitter = _Emitter(self._state_rules, self._true_bits)
        emitter.prepare([terminal])
        self._terminal_fn = emitter.function("terminal", f"bool({emitter.ref(terminal)[0]})")
        self._terminal_atom = terminal
        self._delta_terminal: DeltaTerminal | None = None   # built on first use
        self._base_next = self._next_function(self._state_rules,
                                              self._next_heads(self._state_rules), "next")
        self._init = sum(1 << self._fact_bit[row[1]]
                         for row in game.tables.get(("init", 1), _NoTable()).rows)
        self._each_move: dict[Value, list[GroundRule]] | None = None
        if game.moves_act_alone:
            try:
                self._each_move = game.ground_each_move(Budget(max_steps=EACH_MOVE_STEPS))
            except LimitReached:  # too many moves: ground each on its first use
                pass
        self._joint_next: dict[int, Callable[[int], int]] = {}
        self.has_sees = bool(game.sees_rules)
        # a joint move (OR of its bits) -> its sees function and its sees atoms by bit
        self._joint_sees: dict[int, _JointSees] = {}
        self._move_next: dict[int, Callable[[int], int] | None] = {}
        if self._each_move is not None and len(self._move_bit) <= EAGER_MOVES:
            self._compile_each_move()
        self._legal_cache: dict[int, tuple[int, ...]] = {}   # a role's legal bits -> moves
        self._byte_moves: dict[int, tuple[int, ...]] = {}
        self._goal_cache: dict[int, tuple[int, ...]] = {}
        # (state, its legal moves): one tuple, so threads never pair a state with
        # another state's moves
        self._last_legal: tuple[int | None, tuple[tuple[int, ...], ...]] = (None, ())

    # -- compilation helpers
    def _atom(self, value: Value) -> int:
        found = self._atom_ids.get(value)
        if found is None:
            found = self._atom_ids[value] = len(self._atom_ids)
        return found

    def _new_move(self, atom: Value) -> int:
        bit = len(self._move_atoms)
        self._move_atoms.append(atom)
        self._move_kif.append(kif(atom[2]))
        self._move_bit[atom] = bit
        return bit

    def _rule_map(self, rules: list[GroundRule]) -> dict[int, list[tuple[tuple[int, ...], tuple[int, ...]]]]:
        out: dict[int, list] = {}
        atom = self._atom
        for g in rules:
            body = (tuple(atom(a) for a in g.pos), tuple(atom(a) for a in g.neg))
            out.setdefault(atom(g.head), []).append(body)
        return out

    def _query(self, name: str, targets: list[int], terms: list[tuple[int, int]]) -> Callable[[int], int]:
        emitter = _Emitter(self._state_rules, self._true_bits)
        emitter.prepare(targets)
        emitter.mask_expr(terms)
        return emitter.function(name, "r")

    def _next_plan(self, rules: Mapping, heads: set[int], name: str) -> tuple[int, int, str | None]:
        """``next`` over the ``next`` atoms ``heads`` of ``rules`` as (KEEP, SET,
        source of the rest or None): frame rules ``next(f) <= true(f)`` become the
        KEEP mask, unconditional effects SET bits."""
        keep = const = 0
        general: list[tuple[int, int]] = []
        general_rules = ChainMap({}, rules)  # overrides on top, no copy
        for i, f in enumerate(self._facts):
            head = self._atom_ids.get(("next", f))
            if head not in heads:
                continue
            bodies = rules[head]
            true_id = self._atom(("true", f))
            if any(not pos and not neg for pos, neg in bodies):
                const |= 1 << i
                continue
            rest = [(pos, neg) for pos, neg in bodies if not (pos == (true_id,) and not neg)]
            if len(rest) < len(bodies):
                keep |= 1 << i
            if rest:
                general_rules[head] = rest
                general.append((head, i))
        if not general:
            return keep, const, None
        emitter = _Emitter(general_rules, self._true_bits)
        emitter.prepare([a for a, _ in general])
        emitter.mask_expr(general)
        return keep, const, emitter.source(name, f"r | (s & {_lit(keep)}) | {_lit(const)}")

    def _next_function(self, rules: Mapping, heads: set[int], name: str) -> Callable[[int], int]:
        keep, const, source = self._next_plan(rules, heads, name)
        if source is None:
            return _frame(keep, const)
        return _compile_functions({name: source})[name]

    def _next_heads(self, rules: Mapping) -> set[int]:
        ids = self._atom_ids
        return {h for f in self._facts if (h := ids.get(("next", f))) is not None and h in rules}

    def _moves_plan(self, atoms: list[Value], name: str) -> tuple[int, int, str | None] | None:
        """``next`` contributions of the move-dependent rules for these ``does`` atoms
        as a :meth:`_next_plan` (None when they have none)."""
        if self._each_move is not None:
            ground = [g for atom in atoms for g in self._each_move.get(atom, ())]
        else:
            ground = self._game.ground_moves(atoms)
        move_rules = self._rule_map(ground)
        heads = self._next_heads(move_rules)
        if not heads:
            return None
        return self._next_plan(ChainMap(move_rules, self._state_rules), heads, name)

    def _moves_function(self, atoms: list[Value]) -> Callable[[int], int] | None:
        plan = self._moves_plan(atoms, "next_moves")
        if plan is None:
            return None
        keep, const, source = plan
        return _frame(keep, const) if source is None else _compile_functions({"next_moves": source})["next_moves"]

    def _compile_each_move(self) -> None:
        """The ``next`` function of every reachable move, generated up front and
        compiled in one go, so play starts without warm-up."""
        pending: dict[int, str] = {}
        sources: dict[str, str] = {}
        for atom, bit in self._move_bit.items():
            plan = self._moves_plan([atom], f"next_move_{bit}")
            if plan is None:
                self._move_next[bit] = None
            elif plan[2] is None:
                self._move_next[bit] = _frame(plan[0], plan[1])
            else:
                pending[bit] = f"next_move_{bit}"
                sources[pending[bit]] = plan[2]
        functions = _compile_functions(sources) if sources else {}
        for bit, name in pending.items():
            self._move_next[bit] = functions[name]

    def _joint_function(self, key: int) -> Callable[[int], int]:
        """``next`` for one joint move (given as the OR of its move bits): the
        move-free rules plus the moves' own rules, built once and cached."""
        bits = bits_of(key)
        if self._game.moves_act_alone:
            parts = []
            for b in bits:
                if b not in self._move_next:
                    self._move_next[b] = self._moves_function([self._move_atoms[b]])
                if self._move_next[b] is not None:
                    parts.append(self._move_next[b])
        else:
            fn = self._moves_function([self._move_atoms[b] for b in bits])
            parts = [fn] if fn is not None else []
        fn = _union(self._base_next, *parts)
        if len(self._joint_next) < MAX_CACHE:
            self._joint_next[key] = fn
        return fn

    def _sees_function(self, key: int) -> _JointSees:
        """The ``sees`` of one joint move, built once and cached."""
        ground = self._game.ground_sees([self._move_atoms[b] for b in bits_of(key)])
        rules = ChainMap(self._rule_map(ground), self._state_rules)
        atoms = sorted({g.head for g in ground if g.head[0] == "sees"
                        and g.head[1] in self._role_index}, key=kif)
        terms = [(self._atom(a), i) for i, a in enumerate(atoms)]
        fn = _frame(0, 0)  # nothing to see
        if terms:
            emitter = _Emitter(rules, self._true_bits)
            emitter.prepare([a for a, _ in terms])
            emitter.mask_expr(terms)
            fn = emitter.function("sees", "r")
        found = _JointSees(fn, [(self._role_index[a[1]], kif(a[2])) for a in atoms], {})
        if len(self._joint_sees) < MAX_CACHE:
            self._joint_sees[key] = found
        return found

    def __reduce__(self) -> tuple:
        # generated functions do not pickle: a worker process compiles the rules again
        return (compile_machine, (self._rules,), {"name": self.name})

    def __setstate__(self, state: dict) -> None:
        self.name = state["name"]

    @property
    def facts(self) -> list:
        """The ground state facts; fact i is bit i of an int state."""
        return self._facts

    # -- the StateMachine contract
    def initial_state(self) -> int:
        return self._init

    def _legal_all(self, state: int) -> tuple[tuple[int, ...], ...]:
        last = self._last_legal
        if state == last[0]:
            return last[1]
        mask = self._legal_fn(state)
        cache = self._legal_cache
        found = []
        for role_mask in self._role_moves_mask:
            part = mask & role_mask
            moves = cache.get(part)
            if moves is None:
                moves = self._decode_moves(part)
                if len(cache) < MAX_CACHE:
                    cache[part] = moves
            found.append(moves)
        moves = tuple(found)
        self._last_legal = (state, moves)
        return moves

    def _decode_moves(self, mask: int) -> tuple[int, ...]:
        """The moves (bits) of a legal mask in bit order, a byte at a time."""
        out: list[int] = []
        table = self._byte_moves
        for k, v in enumerate(mask.to_bytes((mask.bit_length() + 7) >> 3, "little")):
            if v:
                key = k << 8 | v
                moves = table.get(key)
                if moves is None:
                    moves = table[key] = tuple(1 << (8 * k + j) for j in range(8) if v >> j & 1)
                out += moves
        return tuple(out)

    def legal_moves(self, state: int, role: int) -> tuple[int, ...]:
        moves = self._legal_all(state)[role]
        if not moves and not self._terminal_fn(state):
            raise GameRuntimeError(f"role {self.roles[role]} has no legal move in the "
                                   f"non-terminal state {self.describe(state)}")
        return moves

    def legal_joint_moves(self, state: int) -> tuple[tuple[int, ...], ...]:
        joint = self._legal_all(state)
        for role, moves in enumerate(joint):
            if not moves:
                self.legal_moves(state, role)
        return joint

    def next_state(self, state: int, joint: Sequence[int]) -> int:
        key = 0
        for move in joint:
            key |= move
        fn = self._joint_next.get(key)
        if fn is None:
            if len(joint) != len(self.roles):
                raise GameError(f"expected {len(self.roles)} moves (one per role), "
                                f"got {len(joint)}")
            fn = self._joint_function(key)
        return fn(state)

    def is_terminal(self, state: int) -> bool:
        return self._terminal_fn(state)

    def terminal_after(self, parent: int, child: int) -> bool:
        test = self._delta_terminal
        if test is None:
            test = self._delta_terminal = DeltaTerminal(
                flat_terms(self._state_rules, self._true_bits, self._terminal_atom),
                self._terminal_fn, _TestCompiler(self._state_rules, self._true_bits))
        return test(parent, child)

    def percepts(self, state: int, joint: Sequence[int]) -> tuple[tuple[str, ...], ...]:
        if not self.has_sees:
            return ((),) * len(self.roles)
        if len(joint) != len(self.roles):
            raise GameError(f"expected {len(self.roles)} moves (one per role), "
                            f"got {len(joint)}")
        key = 0
        for move in joint:
            key |= move
        sees = self._joint_sees.get(key) or self._sees_function(key)
        mask = sees.mask(state)
        found = sees.memo.get(mask)
        if found is None:
            seen: list[list[str]] = [[] for _ in self.roles]
            for b in bits_of(mask):
                role, percept = sees.atoms[b]
                seen[role].append(percept)
            found = tuple(tuple(sorted(p)) for p in seen)
            if len(sees.memo) < MAX_CACHE:
                sees.memo[mask] = found
        return found

    def goals(self, state: int) -> tuple[int, ...]:
        mask = self._goal_fn(state)
        found = self._goal_cache.get(mask)
        if found is None:
            found = self._decode_goals(mask, state)
            if len(self._goal_cache) < MAX_CACHE:
                self._goal_cache[mask] = found
        return found

    def possible_goals(self, role: int) -> tuple[str, ...]:
        """Every goal value the grounded rules can give ``role`` (KIF), in KIF order."""
        name = self.roles[role]
        return tuple(kif(a[2]) for a in self._goal_atoms if a[1] == name)

    def _decode_goals(self, mask: int, state: int) -> tuple[int, ...]:
        values: list[list[Value]] = [[] for _ in self.roles]
        for b in bits_of(mask):
            atom = self._goal_atoms[b]
            values[self._role_index[atom[1]]].append(atom[2])
        out = []
        for role, found in zip(self.roles, values, strict=True):
            if not found and role == NATURE:
                out.append(NATURE_GOAL)
                continue
            if len(found) != 1:
                shown = ", ".join(sorted(map(kif, found))) or "none"
                raise GameRuntimeError(f"role {role} has {len(found)} goal values ({shown}) "
                                       f"in state {self.describe(state)}")
            value = found[0]
            if not (isinstance(value, str) and value.isascii() and value.isdigit()
                    and len(value) <= 9):
                raise GameRuntimeError(f"role {role} has a non-numeric or huge goal value "
                                       f"{kif(value)[:40]}")
            out.append(int(value))
        return tuple(out)

    def move_to_kif(self, move: int) -> str:
        return self._move_kif[move.bit_length() - 1]

    def parse_move(self, kif_text: str, role: int) -> int:
        value = to_value(self._spelling.term(parse_term(kif_text)))
        if not _ground(value):
            raise GameError(f"expected a ground move, found {kif_text!r}")
        atom = ("does", to_value(parse_term(self.roles[role])), value)
        bit = self._move_bit.get(atom)
        if bit is None:  # outside the reachable domain: never legal, still printable
            bit = self._new_move(atom)
        return 1 << bit

    def state_to_kif(self, state: int) -> list[str]:
        return [self._fact_kif[b] for b in bits_of(state)]

    def state_from_kif(self, facts: list[str]) -> int:
        state = 0
        for text in facts:
            value = to_value(self._spelling.term(parse_term(text)))
            bit = self._fact_bit.get(value)
            if bit is None:
                raise GameError(f"fact {text} is outside the reachable domain of {self.name}")
            state |= 1 << bit
        return state



class _NoTable:
    rows: list[Value] = []


def _lit(n: int) -> str:
    """An int literal; hexadecimal for big masks (Python parses it faster)."""
    return hex(n) if n >> 32 else str(n)


def _ground(value: Value) -> bool:
    if type(value) is str:
        return value[0] != "?"
    return all(_ground(x) for x in value)


def _frame(keep: int, const: int) -> Callable[[int], int]:
    if not keep:
        return lambda s: const
    return lambda s: (s & keep) | const


def _union(*fns: Callable[[int], int]) -> Callable[[int], int]:
    if len(fns) == 1:
        return fns[0]
    if len(fns) == 2:
        f, g = fns
        return lambda s: f(s) | g(s)
    return lambda s: _or_all(fns, s)


def _or_all(fns: Sequence[Callable[[int], int]], s: int) -> int:
    out = 0
    for fn in fns:
        out |= fn(s)
    return out


def compile_machine(rules: Sequence[Rule], *, name: str = "game",
                    budget: Budget | None = None) -> CompiledMachine:
    """The compiled engine for ``rules``; LimitReached when grounding does not fit."""
    return CompiledMachine(rules, name=name, budget=budget)
