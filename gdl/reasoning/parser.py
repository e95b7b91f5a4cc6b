"""KIF parser for GDL, built on pyparsing.

Steps:

1. pyparsing splits the text into tokens (``(``, ``)``, symbols), skipping ``;``
   comments; each token keeps its offset.
2. An explicit stack assembles the tokens into S-expressions (symbols and lists).
   An unbalanced ``(``/``)`` or nesting deeper than :data:`MAX_DEPTH` is a
   :class:`FormatError` at its line and column; the depth bound also keeps the
   recursive conversion below far from Python's recursion limit.
3. Each top-level S-expression becomes a :class:`~gdl.reasoning.terms.Rule`: ``(<= head
   body...)`` or a fact. Body literals: ``(not l)``, ``(distinct a b)``, ``(or d...)``
   (a disjunct may be ``(and l...)``) and atoms. Symbols starting with ``?`` are
   variables; GDL keywords are matched case-insensitively and stored lowercase.

Errors carry ``file:line:col`` and say what was expected.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

import pyparsing as pp

from gdl.reasoning.terms import KEYWORDS, Const, Distinct, Fn, Literal, Not, Or, Rule, Term, Var
from solvers.errors import FormatError, Location

MAX_DEPTH = 60  # deepest parenthesis nesting accepted; real games stay below 15


@dataclass(frozen=True, slots=True)
class _Sym:
    text: str
    offset: int


@dataclass(frozen=True, slots=True)
class _List:
    items: tuple[_Sym | _List, ...]
    offset: int


_SExpr = _Sym | _List


def _tokenizer() -> pp.ParserElement:
    # One token per match; the S-expression structure is built with an explicit
    # stack in _read, so deep nesting never recurses.
    token = pp.Regex(r"[()]|[^\s();]+").set_name("token")
    token.ignore(pp.Regex(r";[^\n]*"))
    token.parse_with_tabs()  # offsets must index the original text
    return token


_TOKEN = _tokenizer()


class _Source:
    """Text plus the offsets of its line starts, for offset -> line:col."""

    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.filename = filename
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_col(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def error(self, message: str, offset: int) -> FormatError:
        line, column = self.line_col(offset)
        return FormatError(message, Location(self.filename, line, column))


def _read(text: str, filename: str) -> tuple[_Source, list[_SExpr]]:
    """The top-level S-expressions of ``text``."""
    source = _Source(text, filename)
    top: list[_SExpr] = []
    stack: list[tuple[int, list[_SExpr]]] = []  # (offset of '(', items so far)
    items = top
    for tokens, start, _end in _TOKEN.scan_string(text):
        token = tokens[0]
        if token == "(":
            if len(stack) >= MAX_DEPTH:
                raise source.error(f"nesting deeper than {MAX_DEPTH} levels", start)
            stack.append((start, items))
            items = []
        elif token == ")":
            if not stack:
                raise source.error("unexpected ')': expected a term or end of text", start)
            opened, outer = stack.pop()
            outer.append(_List(tuple(items), opened))
            items = outer
        else:
            items.append(_Sym(token, start))
    if stack:
        raise source.error("'(' is never closed: expected ')' before end of text",
                           stack[-1][0])
    return source, top


class _Converter:
    """S-expressions -> terms, literals and rules, with errors located in ``source``."""

    def __init__(self, source: _Source) -> None:
        self.source = source

    def symbol_name(self, sym: _Sym) -> str:
        lower = sym.text.lower()
        return lower if lower in KEYWORDS else sym.text

    def term(self, node: _SExpr) -> Term:
        if isinstance(node, _Sym):
            if node.text.startswith("?"):
                if len(node.text) == 1:
                    raise self.source.error("expected a variable name after '?'", node.offset)
                return Var(node.text[1:])
            return Const(self.symbol_name(node))
        return Fn(self.functor(node), tuple(self.term(item) for item in node.items[1:]))

    def functor(self, node: _List) -> str:
        if not node.items:
            raise self.source.error("empty list '()': expected a name and arguments",
                                    node.offset)
        head = node.items[0]
        if isinstance(head, _List) or head.text.startswith("?"):
            raise self.source.error("expected a constant as the name of a function term",
                                    head.offset)
        return self.symbol_name(head)

    def atom(self, node: _SExpr, what: str) -> Const | Fn:
        if isinstance(node, _Sym) and node.text.startswith("?"):
            raise self.source.error(f"expected {what}, found variable {node.text}", node.offset)
        atom = self.term(node)
        assert isinstance(atom, (Const, Fn))
        if atom.name in ("not", "or", "distinct", "<="):
            raise self.source.error(f"expected {what}, found '{atom.name}'", node.offset)
        return atom

    def literal(self, node: _SExpr) -> Literal:
        if isinstance(node, _List) and node.items:
            name = self.functor(node)
            args = node.items[1:]
            if name == "not":
                self.expect_arity(node, name, args, 1)
                return Not(self.literal(args[0]))
            if name == "distinct":
                self.expect_arity(node, name, args, 2)
                return Distinct(self.term(args[0]), self.term(args[1]))
            if name == "or":
                if not args:
                    raise self.source.error("'or' expects at least one disjunct", node.offset)
                return Or(tuple(self.conjunction(arg) for arg in args))
        return self.atom(node, "a literal")

    def conjunction(self, node: _SExpr) -> tuple[Literal, ...]:
        if (isinstance(node, _List) and node.items and isinstance(node.items[0], _Sym)
                and node.items[0].text.lower() == "and"):
            return tuple(self.literal(item) for item in node.items[1:])
        return (self.literal(node),)

    def expect_arity(self, node: _List, name: str, args: tuple[_SExpr, ...], n: int) -> None:
        if len(args) != n:
            raise self.source.error(
                f"'{name}' expects {n} argument{'s' if n > 1 else ''}, found {len(args)}",
                node.offset)

    def rule(self, node: _SExpr) -> Rule:
        line, column = self.source.line_col(node.offset)
        if (isinstance(node, _List) and node.items and isinstance(node.items[0], _Sym)
                and node.items[0].text == "<="):
            if len(node.items) < 2:
                raise self.source.error("'<=' expects a head", node.offset)
            head = self.atom(node.items[1], "a rule head (an atom)")
            body = tuple(self.literal(item) for item in node.items[2:])
            return Rule(head, body, line, column)
        return Rule(self.atom(node, "a fact or a rule (<= head body...)"), (), line, column)


def parse_kif(text: str, filename: str = "<input>") -> list[Rule]:
    """The rules and facts of a KIF text, in file order."""
    source, nodes = _read(text, filename)
    converter = _Converter(source)
    return [converter.rule(node) for node in nodes]


def parse_terms(text: str) -> list[Term]:
    """The elements of one KIF list, e.g. a joint move ``((mark 1 3) noop)``."""
    source, nodes = _read(text, "<input>")
    if len(nodes) != 1 or not isinstance(nodes[0], _List):
        raise source.error("expected one parenthesised list of terms",
                           nodes[1].offset if len(nodes) > 1 else 0)
    converter = _Converter(source)
    return [converter.term(item) for item in nodes[0].items]


def parse_term(text: str) -> Term:
    """One KIF term, e.g. a move ``(mark 1 3)`` or a fact ``(cell 1 1 b)``."""
    source, nodes = _read(text, "<input>")
    if len(nodes) != 1:
        raise source.error(f"expected exactly one term, found {len(nodes)}",
                           nodes[1].offset if len(nodes) > 1 else 0)
    return _Converter(source).term(nodes[0])
