"""Gambit ``.efg`` (extensive form, version 2): :func:`read_efg` and :func:`write_efg`.

The format (``../shared/seeds/001_*``): a prologue ``EFG 2 D|R "title" { "player" ... }``
with an optional comment string, then the nodes in pre-order, one entry each:

* ``c "name" INFOSET ["infoset name" { "action" prob ... }] OUTCOME [...]``
* ``p "name" PLAYER INFOSET ["infoset name" { "action" ... }] OUTCOME [...]``
* ``t "name" OUTCOME ["outcome name" { payoff ... }]``

where an outcome's description is ``"outcome name" { payoff ... }`` and outcome 0 means
none. The second and later uses of an information set or outcome may omit the
description; a repeated description must match the first exactly. Numbers are
integers, decimals or rationals (``1/3``), kept exact; payoffs may be separated by
commas. Outcomes on non-terminal nodes add up along the path. A chance node's
probabilities are non-negative and sum to 1 (exactly for integers and rationals, within
1e-9 when a decimal is among them). Strings are in double
quotes with ``\\"`` for a quote inside.

Every error is a :class:`FormatError` carrying ``file:line:col``.

Reading gives an :class:`~.model.ExtensiveGame`. Information sets are named from the
file (whitespace becomes ``_`` so names work in strategy files); an empty or repeated
name becomes ``P<player>.<number>``. Chance information sets keep their numbers for
writing back.
"""

from __future__ import annotations

import re
from collections import Counter
from fractions import Fraction
from pathlib import Path

from solvers.errors import FormatError, Location
from solvers.files import read_text

from .model import CHANCE, PLAYER, TERMINAL, ExtensiveGame, RawNode, build_game, exact_number

DECIMAL_TOLERANCE = Fraction(1, 10**9)

_TOKEN = re.compile(r'''
    (?P<ws>[\s,]+)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<brace>[{}])
  | (?P<number>[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?(?:/\d+)?)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<bad>"|.)
''', re.VERBOSE | re.DOTALL)


class _Token:
    __slots__ = ("kind", "text", "line", "column")

    def __init__(self, kind: str, text: str, line: int, column: int) -> None:
        self.kind, self.text, self.line, self.column = kind, text, line, column


class _Tokens:
    """A cursor over the tokens of a file, with errors at the current position."""

    def __init__(self, text: str, filename: str | None) -> None:
        self.filename = filename
        self.items: list[_Token] = []
        line, line_start = 1, 0
        for m in _TOKEN.finditer(text):
            kind = m.lastgroup or "bad"
            column = m.start() - line_start + 1
            if kind == "bad":
                what = "unterminated string" if m.group() == '"' else f"unexpected character {m.group()!r}"
                raise FormatError(what, Location(filename, line, column))
            if kind != "ws":
                self.items.append(_Token(kind, m.group(), line, column))
            newlines = m.group().count("\n")
            if newlines:
                line += newlines
                line_start = m.start() + m.group().rfind("\n") + 1
        self.end = Location(filename, line, len(text) - line_start + 1)
        self.pos = 0

    def location(self, token: _Token | None = None) -> Location:
        token = token if token is not None else self.peek()
        return self.end if token is None else Location(self.filename, token.line, token.column)

    def error(self, message: str, token: _Token | None = None) -> FormatError:
        return FormatError(message, self.location(token))

    def peek(self) -> _Token | None:
        return self.items[self.pos] if self.pos < len(self.items) else None

    def next(self, kind: str, what: str) -> _Token:
        token = self.peek()
        if token is None:
            raise self.error(f"expected {what}, found the end of the file")
        if token.kind != kind:
            raise self.error(f"expected {what}, found {token.text!r}")
        self.pos += 1
        return token

    def string(self, what: str) -> str:
        raw = self.next("string", what).text[1:-1]
        return re.sub(r"\\(.)", r"\1", raw) if "\\" in raw else raw

    def integer(self, what: str) -> int:
        token = self.next("number", what)
        if not re.fullmatch(r"\d+", token.text):
            raise self.error(f"{what} must be a non-negative integer, not {token.text}", token)
        return int(token.text)

    def number(self, what: str) -> Fraction:
        token = self.next("number", what)
        try:
            return exact_number(token.text)
        except ValueError:
            raise self.error(f"bad or out-of-range number {token.text!r} for {what}",
                             token) from None

    def brace(self, which: str) -> None:
        token = self.peek()
        if token is None or token.text != which:
            found = "the end of the file" if token is None else repr(token.text)
            raise self.error(f"expected {which!r}, found {found}")
        self.pos += 1

    def at(self, text: str) -> bool:
        token = self.peek()
        return token is not None and token.text == text


def read_efg(text_or_path: str | Path, filename: str | None = None) -> ExtensiveGame:
    """Read a Gambit ``.efg`` game from its text or from a file.

    A ``Path``, or a one-line string naming an existing file that does not start with
    ``EFG``, is read as a file; any other string is the file's text. ``filename`` names
    the source in error messages (defaults to the path). Raises :class:`FormatError`
    (with line and column) for any malformed input.
    """
    if isinstance(text_or_path, str) and _looks_like_path(text_or_path):
        text_or_path = Path(text_or_path)
    if isinstance(text_or_path, Path):
        filename = filename or str(text_or_path)
        text = read_text(text_or_path)
    else:
        text = text_or_path
    return _EfgReader(_Tokens(text.removeprefix("\ufeff"), filename)).read()


def _looks_like_path(text: str) -> bool:
    if "\n" in text or text.lstrip().startswith("EFG") or len(text) > 4096:
        return False
    try:
        return Path(text).is_file()
    except OSError:
        return False


class _EfgReader:
    def __init__(self, tokens: _Tokens) -> None:
        self.t = tokens
        self.players: list[str] = []
        # (player or 0 for chance, number) -> (name, actions, probs)
        self.infosets: dict[tuple[int, int], tuple[str, tuple[str, ...], tuple[Fraction, ...]]] = {}
        self.outcomes: dict[int, tuple[str, tuple[Fraction, ...]]] = {}
        self.nodes: list[RawNode] = []

    def read(self) -> ExtensiveGame:
        t = self.t
        head = t.next("word", "'EFG'")
        if head.text != "EFG":
            raise t.error(f"expected 'EFG', found {head.text!r}", head)
        version = t.next("number", "the version 2")
        if version.text != "2":
            raise t.error(f"only version 2 of the .efg format exists, not {version.text}", version)
        precision = t.next("word", "'D' or 'R'")
        if precision.text not in ("D", "R"):
            raise t.error(f"expected 'D' or 'R', found {precision.text!r}", precision)
        title = t.string("the game title")
        t.brace("{")
        while not t.at("}"):
            self.players.append(t.string("a player name or '}'"))
        t.brace("}")
        if not self.players:
            raise t.error("the game has no players")
        comment = t.string("a comment") if (t.peek() is not None and t.peek().kind == "string") else ""
        if t.peek() is None:
            raise t.error("the game has no nodes")
        self._read_tree()
        return build_game(title, self.players, self.nodes, self._infoset_names(), t.filename,
                          comment)

    def _read_tree(self) -> None:
        t = self.t
        # open nodes: (node index, children still to read)
        stack: list[list[int]] = []
        while True:
            token = t.peek()
            if token is None:
                break
            if not stack and self.nodes:
                raise t.error("a node after the end of the tree (every child is already given)")
            index = len(self.nodes)
            node = self._read_node()
            self.nodes.append(node)
            if stack:
                self.nodes[stack[-1][0]].children.append(index)
                stack[-1][1] -= 1
            if node.kind != TERMINAL:
                stack.append([index, len(node.actions)])
            # a parent closes once all its children's subtrees are read
            while stack and stack[-1][1] == 0:
                stack.pop()
        if stack:
            open_node = self.nodes[stack[-1][0]]
            raise FormatError(f"node has {len(open_node.actions)} actions but only "
                              f"{len(open_node.children)} children follow", open_node.location)

    def _read_node(self) -> RawNode:
        t = self.t
        start = t.peek()
        kind_token = t.next("word", "a node type 'c', 'p' or 't'")
        location = t.location(kind_token)
        kinds = {"c": CHANCE, "p": PLAYER, "t": TERMINAL}
        if kind_token.text not in kinds:
            raise t.error(f"unknown node type {kind_token.text!r} (expected c, p or t)", start)
        kind = kinds[kind_token.text]
        name = t.string("the node name")
        node = RawNode(kind=kind, name=name, location=location)
        if kind == PLAYER:
            token = t.peek()
            number = t.integer("the player number")
            if not 1 <= number <= len(self.players):
                raise t.error(f"player {number} does not exist (players are 1..{len(self.players)})",
                              token)
            node.player = number - 1
        if kind != TERMINAL:
            self._read_infoset(node, 0 if kind == CHANCE else node.player + 1)
        self._read_outcome(node)
        return node

    def _read_infoset(self, node: RawNode, owner: int) -> None:
        t = self.t
        token = t.peek()
        number = t.integer("the information set number")
        key = (owner, number)
        declared = self.infosets.get(key)
        if t.peek() is not None and t.peek().kind == "string":
            name = t.string("the information set name")
            t.brace("{")
            actions: list[str] = []
            probs: list[Fraction] = []
            decimal = False
            while not t.at("}"):
                actions.append(t.string("an action name or '}'"))
                if owner == 0:
                    prob_token = t.peek()
                    prob = t.number("the action's probability")
                    if prob < 0:
                        raise t.error(f"{_node_label(node, len(self.nodes))}: negative chance "
                                      f"probability {prob_token.text}", prob_token)
                    decimal = decimal or not re.fullmatch(r"[+-]?\d+(?:/\d+)?", prob_token.text)
                    probs.append(prob)
            t.brace("}")
            if not actions:
                raise t.error("an information set needs at least one action", token)
            if len(set(actions)) != len(actions):
                raise t.error(f"repeated action name in {actions}", token)
            if owner == 0:
                _check_distribution(probs, decimal, _node_label(node, len(self.nodes)),
                                    t.location(token))
            description = (name, tuple(actions), tuple(probs))
            if declared is not None and declared != description:
                raise t.error(f"information set {number} was declared differently before "
                              f"({_describe(declared)} vs {_describe(description)})", token)
            self.infosets[key] = declared = description
        elif declared is None:
            who = "chance" if owner == 0 else f"player {owner}"
            raise t.error(f"information set {number} of {who} is used before its actions are given",
                          token)
        _, actions_, probs_ = declared
        node.actions = actions_
        node.infoset = key if owner else None
        if owner == 0:
            total = sum(probs_)
            node.probs = tuple(p / total for p in probs_)
            node.chance_label = f"{number}"

    def _read_outcome(self, node: RawNode) -> None:
        t = self.t
        token = t.peek()
        number = t.integer("the outcome number")
        declared = self.outcomes.get(number)
        if t.peek() is not None and t.peek().kind == "string":
            name = t.string("the outcome name")
            t.brace("{")
            payoffs: list[Fraction] = []
            while not t.at("}"):
                payoffs.append(t.number("a payoff or '}'"))
            t.brace("}")
            if len(payoffs) != len(self.players):
                raise t.error(f"outcome has {len(payoffs)} payoffs for {len(self.players)} players",
                              token)
            if number == 0:
                raise t.error("outcome 0 means 'no outcome' and cannot have payoffs", token)
            description = (name, tuple(payoffs))
            if declared is not None and declared != description:
                raise t.error(f"outcome {number} was declared differently before", token)
            self.outcomes[number] = declared = description
        elif number != 0 and declared is None:
            raise t.error(f"outcome {number} is used before its payoffs are given", token)
        if number != 0 and declared is not None:
            node.outcome_name, node.payoff = declared

    def _infoset_names(self) -> dict[tuple[int, int], str]:
        """Whitespace-free, unique display names of the personal information sets."""
        cleaned = {key: re.sub(r"\s+", "_", value[0])
                   for key, value in self.infosets.items() if key[0] > 0}
        uses = Counter(cleaned.values())
        return {key: name if name and uses[name] == 1 else f"P{key[0]}.{key[1]}"
                for key, name in cleaned.items()}


def _node_label(node: RawNode, index: int) -> str:
    """How an error names a node: its pre-order number, and its name when it has one."""
    return f"node {index}" + (f" ({node.name!r})" if node.name else "")


def _check_distribution(probs: list[Fraction], decimal: bool, node: str, where: Location) -> None:
    """A chance node's probabilities sum to 1: exactly for integers and rationals, within
    :data:`DECIMAL_TOLERANCE` when a decimal is among them (a decimal 1/3 cannot be exact)."""
    total = sum(probs, Fraction(0))
    if total == 1 or (decimal and abs(total - 1) <= DECIMAL_TOLERANCE):
        return
    shown = str(total) if total.denominator < 10**6 else f"{float(total):.12g}"
    raise FormatError(f"{node}: chance probabilities sum to {shown}, not 1", where)


def _describe(description: tuple[str, tuple[str, ...], tuple[Fraction, ...]]) -> str:
    name, actions, probs = description
    if probs:
        return f"{name!r} " + " ".join(f"{a}={p}" for a, p in zip(actions, probs, strict=True))
    return f"{name!r} " + " ".join(actions)


# ------------------------------------------------------------------------- writing
def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _number(value: Fraction | float) -> str:
    if isinstance(value, Fraction):
        return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    return repr(float(value))


def write_efg(game: ExtensiveGame) -> str:
    """The game as ``.efg`` text (pre-order, full descriptions on first use).

    Rationals stay exact. Information sets are numbered 1.. per player in the model's
    order; chance information sets keep their numbers from an ``.efg`` source;
    outcomes get one number per node that has one.
    """
    lines = [f"EFG 2 R {_quote(game.title)} {{ " + " ".join(_quote(p) for p in game.player_names)
             + " }", _quote(game.comment), ""]
    number_in_player: dict[int, int] = {}
    per_player: dict[int, int] = {}
    for i in range(game.num_infosets):
        p = int(game.infoset_player[i])
        per_player[p] = per_player.get(p, 0) + 1
        number_in_player[i] = per_player[p]
    written: set[int] = set()
    # chance information sets keep the file's numbers; games from the tree format have
    # none, so each chance node gets a fresh number above any kept one
    kept = [int(label) for label in game.node_chance_labels if label]
    chance_number = max(kept, default=0)
    outcome_number = 0
    stack = [0]
    while stack:
        node = stack.pop()
        stack.extend(reversed(game.node_children(node).tolist()))
        kind = int(game.node_kind[node])
        name = _quote(game.node_names[node])
        if kind == CHANCE:
            label = game.node_chance_labels[node]
            if not label:
                chance_number += 1
            actions = game.chance_actions[node]
            probs = game.exact_probs[node]
            entry = f"c {name} {label or chance_number} \"\" {{ " + " ".join(
                f"{_quote(a)} {_number(p)}" for a, p in zip(actions, probs, strict=True)) + " }"
        elif kind == PLAYER:
            iset = int(game.node_infoset[node])
            entry = f"p {name} {int(game.node_player[node]) + 1} {number_in_player[iset]}"
            if iset not in written:
                written.add(iset)
                entry += f" {_quote(game.infoset_names[iset])} {{ " + " ".join(
                    _quote(a) for a in game.infoset_actions[iset]) + " }"
        else:
            entry = f"t {name}"
        payoff = game.exact_payoffs[node]
        if payoff is None:
            entry += " 0"
        else:
            outcome_number += 1
            entry += (f" {outcome_number} {_quote(game.node_outcome_names[node])} {{ "
                      + " ".join(_number(x) for x in payoff) + " }")
        lines.append(entry)
    return "\n".join(lines) + "\n"
