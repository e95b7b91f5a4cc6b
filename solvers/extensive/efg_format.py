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
import time
from collections import Counter
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path

from solvers.errors import FormatError, GameError, LimitReached, Location
from solvers.extensive.model import (
    CHANCE,
    PLAYER,
    TERMINAL,
    ExtensiveGame,
    NodeTable,
    build_game,
    exact_number,
)

DECIMAL_TOLERANCE = Fraction(1, 10**9)
CHUNK_CHARS = 1 << 20           # characters read at a time
MAX_STRING_CHARS = 1 << 24      # a string longer than this across line ends is an error
PROGRESS_SECONDS = 2.0

# one token per match, after whitespace and commas; a lone '"' is an unterminated string
_TOKEN = re.compile(r'[\s,]*("(?:[^"\\]|\\.)*"|[{}]'
                    r'|[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?(?:/[0-9]+)?'
                    r'|[A-Za-z_][A-Za-z0-9_]*|[^\s,])', re.DOTALL)
_NUMBER_START = frozenset("0123456789+-.")
_KINDS = {"c": CHANCE, "p": PLAYER, "t": TERMINAL}
_END = None     # the token after the last one

Progress = Callable[[str], None]


def read_efg(text_or_path: str | Path, filename: str | None = None, *,
             progress: Progress | None = None, deadline: float | None = None) -> ExtensiveGame:
    """Read a Gambit ``.efg`` game from its text or from a file.

    A ``Path``, or a one-line string naming an existing file that does not start with
    ``EFG``, is read as a file, in chunks (the text is never held whole). ``filename``
    names the source in error messages (defaults to the path). ``progress`` gets a line
    every few seconds of a long read; past ``deadline`` (``time.monotonic()``) the read
    stops with :class:`LimitReached`. Raises :class:`FormatError` (with line and column)
    for any malformed input.
    """
    if isinstance(text_or_path, str) and _looks_like_path(text_or_path):
        text_or_path = Path(text_or_path)
    if isinstance(text_or_path, Path):
        source = _Source.of_file(text_or_path, filename or str(text_or_path))
    else:
        source = _Source.of_text(text_or_path, filename)
    return _EfgReader(source, progress, deadline).read()


def _looks_like_path(text: str) -> bool:
    if "\n" in text or text.lstrip().startswith("EFG") or len(text) > 4096:
        return False
    try:
        return Path(text).is_file()
    except OSError:
        return False


class _Source:
    """The text in chunks cut at line ends, tokenised chunk by chunk.

    Tokens are plain strings; where a token is (line, column) is found only for an
    error, by reading the source again up to that token's number.
    """

    def __init__(self, open_chunks: Callable[[], Iterator[str]], filename: str | None,
                 size: int) -> None:
        self.open_chunks, self.filename, self.size = open_chunks, filename, size
        self.done = 0       # characters tokenised so far

    @classmethod
    def of_file(cls, path: Path, filename: str) -> _Source:
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise GameError(f"{filename}: cannot read: {exc.strerror or exc}") from None

        def chunks() -> Iterator[str]:
            try:
                with open(path, encoding="utf-8", errors="replace") as source:
                    while chunk := source.read(CHUNK_CHARS):
                        yield chunk
            except OSError as exc:
                raise GameError(f"{filename}: cannot read: {exc.strerror or exc}") from None
        return cls(chunks, filename, size)

    @classmethod
    def of_text(cls, text: str, filename: str | None) -> _Source:
        def chunks() -> Iterator[str]:
            for at in range(0, len(text), CHUNK_CHARS):
                yield text[at:at + CHUNK_CHARS]
        return cls(chunks, filename, len(text))

    def _parts(self) -> Iterator[str]:
        """The text in pieces ending at a line end (the last one wherever the text ends)."""
        carry = ""
        first = True
        for chunk in self.open_chunks():
            if first:
                chunk, first = chunk.removeprefix("\ufeff"), False
            carry += chunk
            cut = carry.rfind("\n") + 1
            if cut:
                yield carry[:cut]
                carry = carry[cut:]
        yield carry

    def pieces(self) -> Iterator[tuple[str, list[str]]]:
        """(text, its tokens) piece by piece. A string running past a cut shows as a lone
        '"': its piece waits for the next (up to :data:`MAX_STRING_CHARS`, then it is the
        unterminated string the parser reports)."""
        pending = ""
        for part in self._parts():
            text = pending + part
            if pending and '"' not in part and len(text) <= MAX_STRING_CHARS:
                pending = text
                continue
            tokens = _TOKEN.findall(text)
            if '"' in tokens and len(text) <= MAX_STRING_CHARS and part:
                pending = text
                continue
            pending = ""
            yield text, tokens
        if pending:
            yield pending, _TOKEN.findall(pending)

    def tokens(self) -> Iterator[list[str]]:
        """The tokens, a list per piece."""
        for text, tokens in self.pieces():
            self.done += len(text)
            yield tokens

    def locate(self, index: int) -> Location:
        """Where token ``index`` (0-based) starts; past the last token, the end."""
        line, seen, last = 1, 0, Location(self.filename, 1, 1)
        for text, tokens in self.pieces():
            if seen + len(tokens) > index:
                start = list(_TOKEN.finditer(text))[index - seen].start(1)
                line += text.count("\n", 0, start)
                return Location(self.filename, line, start - text.rfind("\n", 0, start))
            seen += len(tokens)
            line += text.count("\n")
            last = Location(self.filename, line, len(text) - text.rfind("\n"))
        return last


class _EfgReader:
    """Recursive descent over the token stream with one token of lookahead (``tok``)."""

    def __init__(self, source: _Source, progress: Progress | None,
                 deadline: float | None) -> None:
        self.source = source
        self.progress, self.deadline = progress, deadline
        self.players: list[str] = []
        self.table: NodeTable
        # player (1-based) -> number -> provisional information-set id, with its description
        self.infosets: dict[int, dict[int, tuple[int, tuple]]] = {}
        # number -> chance-set id, with its description
        self.chance_sets: dict[int, tuple[int, tuple]] = {}
        # number -> outcome id (its description is in the table: one is read per leaf)
        self.outcomes: dict[int, int] = {}
        self.set_names: list[str] = []
        # the current piece's tokens; token ``pos`` (counted over the file) is tokens[i]
        self._pieces = source.tokens()
        self._tokens: list[str] = []
        self._i = self._base = 0
        self.pos = -1
        self.tok: str | None = _END
        self.started = self.last_report = time.monotonic()
        self._advance()

    # ------------------------------------------------------------------ tokens
    def _advance(self) -> None:
        self._i += 1
        self.pos += 1
        if self._i < len(self._tokens):
            self.tok = self._tokens[self._i]
            return
        for tokens in self._pieces:
            if tokens:
                self._tokens, self._i, self._base = tokens, 0, self.pos
                self.tok = tokens[0]
                return
        self._tokens, self._i, self.tok = [], 0, _END

    def error(self, message: str, index: int | None = None) -> FormatError:
        return FormatError(message, self.source.locate(self.pos if index is None else index))

    def _found(self) -> str:
        return "the end of the file" if self.tok is _END else repr(self.tok)

    def _kind(self) -> str:
        tok = self.tok
        if tok is _END:
            return "end"
        first = tok[0]
        if first == '"':
            return "string" if len(tok) > 1 else "bad"
        if first in "{}":
            return "brace"
        if first in _NUMBER_START and (len(tok) > 1 or first.isdigit()):
            return "number"
        if first.isalpha() or first == "_":
            return "word" if first.isascii() else "bad"
        return "bad"

    def expect(self, kind: str, what: str) -> str:
        found = self._kind()
        if found != kind:
            if found == "bad":
                raise self.error("unterminated string" if self.tok == '"'
                                 else f"unexpected character {self.tok!r}")
            raise self.error(f"expected {what}, found {self._found()}")
        tok = self.tok
        self._advance()
        return tok  # type: ignore[return-value]

    def string(self, what: str) -> str:
        tok = self.tok
        if tok is not _END and tok[0] == '"' and len(tok) > 1:
            self._advance()
        else:
            tok = self.expect("string", what)
        raw = tok[1:-1]
        return re.sub(r"\\(.)", r"\1", raw, flags=re.DOTALL) if "\\" in raw else raw

    def integer(self, what: str) -> int:
        tok = self.tok
        if tok is not _END and tok.isascii() and tok.isdigit() and len(tok) <= 18:
            self._advance()
            return int(tok)     # (int() refuses 4,300+ digits: bounded first)
        at = self.pos
        token = self.expect("number", what)
        raise self.error(f"{what} must be a non-negative integer below 10**18, "
                         f"not {token[:40]}", at)

    def number(self, what: str) -> Fraction:
        at = self.pos
        token = self.expect("number", what)
        try:
            return exact_number(token)
        except ValueError:
            raise self.error(f"bad or out-of-range number {token!r} for {what}", at) from None

    def payoff(self) -> tuple[float, Fraction | None]:
        """A payoff as a float, with its exact value when the float does not give it back."""
        at, token = self.pos, self.tok
        if token is _END or token[0] not in _NUMBER_START or token in "+-.":
            self.expect("number", "a payoff or '}'")
        self._advance()
        if len(token) <= 15 and "/" not in token and "e" not in token and "E" not in token:
            return float(token), None    # <= 15 digits: repr of the float gives them back
        if "/" not in token and "e" not in token and "E" not in token \
                and repr(float(token)) == token:
            return float(token), None
        try:
            exact = exact_number(token)
        except ValueError:
            raise self.error(f"bad or out-of-range number {token!r} for a payoff", at) from None
        value = float(exact)
        return value, (None if Fraction(repr(value)) == exact else exact)

    def brace(self, which: str) -> None:
        if self.tok != which:
            if self._kind() == "bad":
                self.expect("brace", which)
            raise self.error(f"expected {which!r}, found {self._found()}")
        self._advance()

    # ------------------------------------------------------------------ grammar
    def read(self) -> ExtensiveGame:
        head = self.expect("word", "'EFG'")
        if head != "EFG":
            raise self.error(f"expected 'EFG', found {head!r}", self.pos - 1)
        version = self.expect("number", "the version 2")
        if version != "2":
            raise self.error(f"only version 2 of the .efg format exists, not {version}",
                             self.pos - 1)
        precision = self.expect("word", "'D' or 'R'")
        if precision not in ("D", "R"):
            raise self.error(f"expected 'D' or 'R', found {precision!r}", self.pos - 1)
        title = self.string("the game title")
        self.brace("{")
        while self.tok != "}":
            self.players.append(self.string("a player name or '}'"))
        self.brace("}")
        if not self.players:
            raise self.error("the game has no players")
        comment = self.string("a comment") if self._kind() == "string" else ""
        if self.tok is _END:
            raise self.error("the game has no nodes")
        self.table = NodeTable(len(self.players))
        self._read_tree()
        if self.progress is not None and time.monotonic() - self.started >= PROGRESS_SECONDS:
            self.progress(f"read {len(self.table):,} nodes in "
                          f"{time.monotonic() - self.started:.1f} s; building the game")
        self.outcomes.clear()   # one entry per leaf of a big game; the table has them
        return build_game(title, self.players, self.table, self._infoset_names(),
                          self.source.filename, comment)

    def _read_tree(self) -> None:
        # open nodes: [node index, children still to read, its first token]
        stack: list[list[int]] = []
        table = self.table
        while self.tok is not _END:
            if not stack and len(table):
                raise self.error("a node after the end of the tree (every child is already "
                                 "given)")
            start = self.pos
            index, actions = self._read_node(stack[-1][0] if stack else -1)
            if stack:
                stack[-1][1] -= 1
            if actions:
                stack.append([index, actions, start])
            # a parent closes once all its children's subtrees are read
            while stack and stack[-1][1] == 0:
                stack.pop()
            if not index & 0xFFF:    # every 4,096 nodes
                self._check_limits()
        if stack:
            index, missing, start = stack[-1]
            actions = self._actions_of(index)
            raise self.error(f"node has {actions} actions but only {actions - missing} "
                             f"children follow", start)

    def _actions_of(self, index: int) -> int:
        table = self.table
        if table.kind[index] == CHANCE:
            return len(table.chance_actions[table.chance[index]])
        return len(table.infoset_actions[table.infoset[index]])

    def _check_limits(self) -> None:
        now = time.monotonic()
        done = f"{self.source.done / max(self.source.size, 1):.0%} of {self.source.size:,} " \
               f"characters, {len(self.table):,} nodes"
        if self.deadline is not None and now >= self.deadline:
            raise LimitReached(f"the time limit was reached while reading "
                               f"{self.source.filename or 'the game'} ({done})")
        if self.progress is not None and now - self.last_report >= PROGRESS_SECONDS:
            self.last_report = now
            self.progress(f"reading: {done}, {now - self.started:.1f} s")

    def _read_node(self, parent: int) -> tuple[int, int]:
        """Reads one node; (its index, its number of actions, 0 for a terminal)."""
        if self.tok == "t":
            index = self._plain_terminal(parent)
            if index is not None:
                return index, 0
        start = self.pos
        kind_token = self.expect("word", "a node type 'c', 'p' or 't'")
        kind = _KINDS.get(kind_token)
        if kind is None:
            raise self.error(f"unknown node type {kind_token!r} (expected c, p or t)", start)
        name = self.string("the node name")
        index = len(self.table)
        label = f"node {index}" + (f" ({name!r})" if name else "")
        player = infoset = chance = -1
        actions = 0
        if kind == PLAYER:
            at = self.pos
            number = self.integer("the player number")
            if not 1 <= number <= len(self.players):
                raise self.error(f"player {number} does not exist (players are "
                                 f"1..{len(self.players)})", at)
            player = number - 1
            infoset, actions = self._player_infoset(player)
        elif kind == CHANCE:
            chance, actions = self._chance_set(label)
        outcome = self._outcome()
        self.table.add_node(kind, parent, name, player, infoset, chance, outcome)
        return index, actions

    def _plain_terminal(self, parent: int) -> int | None:
        """The common leaf, ``t "name" N ["outcome" { payoff ... }]`` with a new outcome or
        none, plain names and short decimals, read straight from the piece's tokens (most
        nodes of a big game are such leaves); None leaves anything else to the grammar."""
        tokens, i = self._tokens, self._i
        players = len(self.players)
        name, number = tokens[i + 1:i + 3] if i + 3 < len(tokens) else ("", "")
        if len(name) < 2 or name[0] != '"' or "\\" in name or not number.isdigit() \
                or not number.isascii() or len(number) > 18:
            return None
        outcome = int(number)
        after = i + 3
        if tokens[after][0] == '"':
            close = i + 5 + players
            if close + 1 >= len(tokens) or tokens[i + 4] != "{" or tokens[close] != "}" \
                    or outcome == 0 or outcome in self.outcomes:
                return None
            label = tokens[after]
            if len(label) < 2 or "\\" in label:
                return None
            values = []
            for text in tokens[i + 5:close]:
                if text[0] not in _NUMBER_START or "/" in text or "e" in text or "E" in text \
                        or (len(text) == 1 and not text.isdigit()):
                    return None
                value = float(text)
                if len(text) > 15 and repr(value) != text:   # as in payoff()
                    return None
                values.append(value)
            self.outcomes[outcome] = self.table.add_outcome(label[1:-1], values)
            outcome = self.outcomes[outcome]
            after = close + 1
        elif outcome == 0:
            outcome = -1
        elif outcome in self.outcomes:
            outcome = self.outcomes[outcome]
        else:
            return None
        index = self.table.add_node(TERMINAL, parent, name[1:-1], outcome=outcome)
        self._i, self.pos = after - 1, self.pos + after - 1 - i
        self._advance()
        return index

    def _description(self, chance: bool, label: str) -> tuple:
        """``"name" { "action" [prob] ... }`` after an information set's number."""
        at = self.pos
        name = self.string("the information set name")
        self.brace("{")
        actions: list[str] = []
        probs: list[Fraction] = []
        decimal = False
        while self.tok != "}":
            actions.append(self.string("an action name or '}'"))
            if chance:
                prob_at, prob_token = self.pos, self.tok
                prob = self.number("the action's probability")
                if prob < 0:
                    raise self.error(f"{label}: negative chance probability {prob_token}",
                                     prob_at)
                decimal = decimal or not re.fullmatch(r"[+-]?\d+(?:/\d+)?", str(prob_token))
                probs.append(prob)
        self.brace("}")
        if not actions:
            raise self.error("an information set needs at least one action", at - 1)
        if len(set(actions)) != len(actions):
            raise self.error(f"repeated action name in {actions}", at - 1)
        if chance:
            problem = _distribution_problem(probs, decimal)
            if problem is not None:
                raise self.error(f"{label}: {problem}", at - 1)
            return name, tuple(actions), tuple(probs)
        return name, tuple(actions)

    def _player_infoset(self, player: int) -> tuple[int, int]:
        def register(description: tuple, number: int) -> int:
            table = self.table
            table.infoset_keys.append((player + 1, number))
            table.infoset_player.append(player)
            table.infoset_actions.append(description[1])
            self.set_names.append(description[0])
            return len(table.infoset_keys) - 1

        return self._information_set(self.infosets.setdefault(player + 1, {}),
                                     f"player {player + 1}", "", register)

    def _chance_set(self, label: str) -> tuple[int, int]:
        def register(description: tuple, number: int) -> int:
            _, actions, probs = description
            total = sum(probs, Fraction(0))
            return self.table.add_chance_set(actions, tuple(p / total for p in probs),
                                             str(number))

        return self._information_set(self.chance_sets, "chance", label, register)

    def _information_set(self, declared_sets: dict[int, tuple[int, tuple]], owner: str,
                         label: str, register: Callable[[tuple, int], int]) -> tuple[int, int]:
        """``NUMBER ["name" { actions }]``: (the set's id, its number of actions). The first
        description registers the set; a later one must repeat it exactly."""
        at = self.pos
        number = self.integer("the information set number")
        declared = declared_sets.get(number)
        if self._kind() == "string":
            description = self._description(owner == "chance", label)
            if declared is None:
                declared_sets[number] = declared = (register(description, number), description)
            elif declared[1] != description:
                raise self.error(f"information set {number} was declared differently before "
                                 f"({_describe(declared[1])} vs {_describe(description)})", at)
        elif declared is None:
            raise self.error(f"information set {number} of {owner} is used before its actions "
                             "are given", at)
        return declared[0], len(declared[1][1])

    def _outcome(self) -> int:
        at = self.pos
        number = self.integer("the outcome number")
        declared = self.outcomes.get(number)
        if self._kind() == "string":
            name = self.string("the outcome name")
            self.brace("{")
            values: list[float] = []
            exact: list[Fraction | None] = []
            while self.tok != "}":
                value, precise = self.payoff()
                values.append(value)
                exact.append(precise)
            self.brace("}")
            if len(values) != len(self.players):
                raise self.error(f"outcome has {len(values)} payoffs for {len(self.players)} "
                                 "players", at)
            if number == 0:
                raise self.error("outcome 0 means 'no outcome' and cannot have payoffs", at)
            kept = None if not any(x is not None for x in exact) else tuple(
                Fraction(repr(v)) if x is None else x for v, x in zip(values, exact, strict=True))
            if declared is None:
                self.outcomes[number] = declared = self.table.add_outcome(name, values, kept)
            elif not self._same_outcome(declared, name, values, kept):
                raise self.error(f"outcome {number} was declared differently before", at)
        elif number != 0 and declared is None:
            raise self.error(f"outcome {number} is used before its payoffs are given", at)
        return -1 if number == 0 else declared

    def _same_outcome(self, outcome: int, name: str, values: list[float],
                      exact: tuple[Fraction, ...] | None) -> bool:
        table, n = self.table, len(self.players)
        return (table.outcome_names[outcome] == name
                and table.outcome_payoffs[outcome * n:(outcome + 1) * n].tolist() == values
                and table.outcome_exact.get(outcome) == exact)

    def _infoset_names(self) -> list[str]:
        """Unique display names of the personal information sets: the file's names
        (the strategy format's words spell their spaces, :mod:`solvers.extensive.tokens`);
        an unnamed or repeated one is ``P<player>.<number>``."""
        cleaned = [" ".join(name.split()) for name in self.set_names]
        uses = Counter(cleaned)
        keys = self.table.infoset_keys
        return [name if name and uses[name] == 1 else f"P{keys[i][0]}.{keys[i][1]}"
                for i, name in enumerate(cleaned)]


def _distribution_problem(probs: list[Fraction], decimal: bool) -> str | None:
    """Why a chance node's probabilities are no distribution, if they are not: they sum
    to 1 exactly for integers and rationals, within :data:`DECIMAL_TOLERANCE` when a
    decimal is among them (a decimal 1/3 cannot be exact)."""
    total = sum(probs, Fraction(0))
    if total == 1 or (decimal and abs(total - 1) <= DECIMAL_TOLERANCE):
        return None
    shown = str(total) if total.denominator < 10**6 else f"{float(total):.12g}"
    return f"chance probabilities sum to {shown}, not 1"


def _describe(description: tuple) -> str:
    name, actions, *probs = description
    if probs:
        return f"{name!r} " + " ".join(f"{a}={p}" for a, p in zip(actions, probs[0], strict=True))
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
