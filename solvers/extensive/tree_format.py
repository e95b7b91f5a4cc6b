"""The node/infoset game-tree text format (``../shared/seeds/000_*``): read and write.

Lines, in any order (real files list leaves before their parents):

* ``node HISTORY player X actions A1 ... An``
* ``node HISTORY chance actions A1=P1 ... An=Pn`` (weights, normalised on reading)
* ``node HISTORY leaf|terminal payoffs 1=Q1 2=Q2 ...``
* ``infoset NAME nodes H1 ... Hn``
* ``# comment`` and blank lines

A history is ``/`` for the root, else ``/E1/E2/.../En`` with an optional trailing
``/``; each edge is ``P<k>:<action>`` (player k) or ``C:<action>`` / ``c:<action>``
(chance). A player node that no infoset line names is its own information set, named
by its history (LiteEFG's files leave such lines out). Actions and information-set
names are single words: whitespace and ``%`` are written ``%XX`` and read back
(:mod:`solvers.extensive.tokens`), so a name with spaces round-trips.

Errors (:class:`FormatError` with file, line and column): a node whose child is
missing, a node listed twice or in two information sets, actions that differ inside an
information set, chance weights that are negative or sum to 0, edges that do not match
the parent, unreadable numbers.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

from solvers.errors import FormatError, Location
from solvers.extensive.model import (
    CHANCE,
    PLAYER,
    TERMINAL,
    ExtensiveGame,
    NodeTable,
    RawNode,
    build_game,
    exact_number,
)
from solvers.extensive.tokens import from_token, token
from solvers.files import read_text

# players are numbered, not listed: a number bounds the payoff vectors (2**64 hung the reader)
MAX_PLAYERS = 64


class _Line:
    """One node line, parsed (locations point at the line's words)."""

    __slots__ = ("kind", "player", "actions", "weights", "payoffs", "location", "edges")

    def __init__(self, kind: int, location: Location, edges: tuple[str, ...]) -> None:
        self.kind = kind
        self.player = -1
        self.actions: tuple[str, ...] = ()
        self.weights: tuple[Fraction, ...] = ()
        self.payoffs: dict[int, Fraction] = {}
        self.location = location
        self.edges = edges


def read_tree(text_or_path: str | Path, filename: str | None = None) -> ExtensiveGame:
    """Read a game-tree text file (text, or a file when given a ``Path``)."""
    if isinstance(text_or_path, Path):
        filename = filename or str(text_or_path)
        text = read_text(text_or_path)
    else:
        text = text_or_path
    return _TreeReader(filename).read(text.removeprefix("\ufeff"))


def _history_edges(history: str, where: Location) -> tuple[str, ...]:
    if not history.startswith("/"):
        raise FormatError(f"a history starts with '/', not {history!r}", where)
    edges = tuple(e for e in history.split("/") if e)
    for edge in edges:
        actor, sep, action = edge.partition(":")
        if not sep or not action or not _actor_ok(actor):
            raise FormatError(f"bad edge {edge!r} in history {history!r} (expected P<k>:<action> "
                              "or C:<action>)", where)
    return edges


def _actor_ok(actor: str) -> bool:
    return actor in ("C", "c") or bool(re.fullmatch(r"P[1-9]\d*", actor))


class _TreeReader:
    def __init__(self, filename: str | None) -> None:
        self.filename = filename
        self.nodes: dict[tuple[str, ...], _Line] = {}
        # infoset name -> (histories, location)
        self.infosets: dict[str, tuple[list[tuple[str, ...]], Location]] = {}
        self.num_players = 0

    def where(self, line: int, column: int = 1) -> Location:
        return Location(self.filename, line, column)

    def read(self, text: str) -> ExtensiveGame:
        for number, raw in enumerate(text.splitlines(), start=1):
            words = raw.split()
            if not words or words[0].startswith("#"):
                continue
            column = raw.index(words[0]) + 1
            if words[0] == "node":
                self._node_line(words, number, column)
            elif words[0] == "infoset":
                self._infoset_line(words, number, column)
            else:
                raise FormatError(f"a line starts with 'node', 'infoset' or '#', not {words[0]!r}",
                                  self.where(number, column))
        if () not in self.nodes:
            raise FormatError("the tree has no root node ('node / ...')", self.where(1))
        return self._build()

    def _node_line(self, words: list[str], number: int, column: int) -> None:
        where = self.where(number, column)
        if len(words) < 3:
            raise FormatError("a node line needs a history and a node type", where)
        edges = _history_edges(words[1], where)
        if edges in self.nodes:
            first = self.nodes[edges].location
            raise FormatError(f"node {words[1]} is given twice (first on line {first.line})", where)
        rest = words[2:]
        if rest[0] == "player":
            if len(rest) < 4 or rest[2] != "actions" or not re.fullmatch(r"[1-9]\d*", rest[1]):
                raise FormatError("expected 'player <X> actions <A1> ... <An>'", where)
            line = _Line(PLAYER, where, edges)
            line.player = _player_number(rest[1], where) - 1
            self.num_players = max(self.num_players, line.player + 1)
            line.actions = tuple(rest[3:])
        elif rest[0] == "chance":
            if len(rest) < 3 or rest[1] != "actions":
                raise FormatError("expected 'chance actions <A1>=<P1> ...'", where)
            line = _Line(CHANCE, where, edges)
            pairs = [self._pair(w, where, "chance weight") for w in rest[2:]]
            line.actions = tuple(a for a, _ in pairs)
            # the format's weights are non-normalised by definition (seed 000: "normalizing
            # each Pi by P1 + ... + Pn"), so only their signs and total can be wrong
            if any(p < 0 for _, p in pairs):
                raise FormatError(f"node {words[1]}: a chance weight is negative", where)
            total = sum(p for _, p in pairs)
            if total <= 0:
                raise FormatError(f"node {words[1]}: chance weights sum to 0", where)
            line.weights = tuple(p / total for _, p in pairs)
        elif rest[0] in ("leaf", "terminal"):
            if len(rest) < 2 or rest[1] != "payoffs":
                raise FormatError(f"expected '{rest[0]} payoffs 1=<Q1> 2=<Q2> ...'", where)
            line = _Line(TERMINAL, where, edges)
            for word in rest[2:]:
                key, value = self._pair(word, where, "payoff")
                if not re.fullmatch(r"[1-9]\d*", key):
                    raise FormatError(f"payoff key must be a player number, not {key!r}", where)
                if _player_number(key, where) in line.payoffs:
                    raise FormatError(f"payoff of player {key} given twice", where)
                line.payoffs[int(key)] = value
                self.num_players = max(self.num_players, int(key))
        else:
            raise FormatError(f"unknown node type {rest[0]!r} (player, chance, leaf or terminal)",
                              where)
        if line.kind != TERMINAL:
            if not line.actions:
                raise FormatError("a node needs at least one action", where)
            if len(set(line.actions)) != len(line.actions):
                raise FormatError("an action name is repeated", where)
        self.nodes[edges] = line

    @staticmethod
    def _pair(word: str, where: Location, what: str) -> tuple[str, Fraction]:
        key, sep, value = word.rpartition("=")
        if not sep or not key:
            raise FormatError(f"expected <name>=<{what}>, not {word!r}", where)
        try:
            number = exact_number(value)
        except ValueError:
            raise FormatError(f"bad or out-of-range {what} {value!r}", where) from None
        return key, number

    def _infoset_line(self, words: list[str], number: int, column: int) -> None:
        where = self.where(number, column)
        if len(words) < 4 or words[2] != "nodes":
            raise FormatError("expected 'infoset <NAME> nodes <H1> ... <Hn>'", where)
        name = words[1]
        if name in self.infosets:
            raise FormatError(f"information set {name!r} is given twice", where)
        self.infosets[name] = ([_history_edges(h, where) for h in words[3:]], where)

    def _build(self) -> ExtensiveGame:
        node_set: dict[tuple[str, ...], str] = {}
        for name, (histories, where) in self.infosets.items():
            for edges in histories:
                line = self.nodes.get(edges)
                history = "/" + "/".join(edges)
                if line is None:
                    raise FormatError(f"information set {name!r} names node {history}, which is "
                                      "not in the tree", where)
                if line.kind != PLAYER:
                    raise FormatError(f"information set {name!r} names node {history}, which is "
                                      f"not a player node", where)
                if edges in node_set:
                    raise FormatError(f"node {history} is in two information sets, "
                                      f"{node_set[edges]!r} and {name!r}", where)
                node_set[edges] = name
        players = self.num_players or 1
        raws: list[RawNode] = []
        index: dict[tuple[str, ...], int] = {}
        stack = [()]
        while stack:
            edges = stack.pop()
            line = self.nodes[edges]
            index[edges] = len(raws)
            raw = RawNode(kind=line.kind, location=line.location,
                          actions=tuple(map(from_token, line.actions)))
            if line.kind == PLAYER:
                raw.player = line.player
                history = "/" + "/".join(edges)
                # listed nodes share their set's key; an unlisted node is its own set
                named = node_set.get(edges)
                raw.infoset = ("set", named) if named is not None else ("node", history)
            elif line.kind == CHANCE:
                raw.probs = line.weights
            else:
                bad = [k for k in line.payoffs if k > players]
                if bad:
                    raise FormatError(f"payoff for player {bad[0]} of a {players}-player game",
                                      line.location)
                raw.payoff = tuple(line.payoffs.get(p + 1, Fraction(0)) for p in range(players))
            if edges:
                raws[index[edges[:-1]]].children.append(len(raws))
            raws.append(raw)
            if line.kind != TERMINAL:
                actor = "C" if line.kind == CHANCE else f"P{line.player + 1}"
                kids = []
                for action in line.actions:
                    child = self._child(edges, actor, action, line)
                    kids.append(child)
                stack.extend(reversed(kids))
        if len(raws) != len(self.nodes):
            orphan = next(e for e in self.nodes if e not in index)
            raise FormatError(f"node /{'/'.join(orphan)} is not reachable from the root",
                              self.nodes[orphan].location)
        names = {raw.infoset: from_token(raw.infoset[1]) if raw.infoset[0] == "set"
                 else raw.infoset[1] for raw in raws if raw.kind == PLAYER}
        table = NodeTable.from_raw(raws, players, names, self.filename)
        return build_game("", [f"P{p + 1}" for p in range(players)], table,
                          [names[key] for key in table.infoset_keys], self.filename)

    def _child(self, edges: tuple[str, ...], actor: str, action: str,
               line: _Line) -> tuple[str, ...]:
        """The child history for ``action``, accepting either case of the chance tag."""
        for tag in ((actor,) if actor != "C" else ("C", "c")):
            child = (*edges, f"{tag}:{action}")
            if child in self.nodes:
                return child
        raise FormatError(f"node /{'/'.join(edges)} has no child for action {action!r} "
                          f"(missing node /{'/'.join((*edges, f'{actor}:{action}'))})",
                          line.location)


def write_tree(game: ExtensiveGame) -> str:
    """The game in the tree text format (histories with ``P<k>:``/``C:`` edges)."""
    lines: list[str] = []
    histories = [""] * game.num_nodes
    members: dict[int, list[str]] = {}
    stack = [0]
    while stack:
        node = stack.pop()
        history = histories[node] or "/"
        kind = int(game.node_kind[node])
        if kind == TERMINAL:
            util = game.node_utility[node]
            lines.append(f"node {history} leaf payoffs " + " ".join(
                f"{p + 1}={_num(u)}" for p, u in enumerate(util)))
            continue
        actions = game.node_actions(node)
        kids = game.node_children(node).tolist()
        if kind == CHANCE:
            tag = "C"
            lines.append(f"node {history} chance actions " + " ".join(
                f"{token(a)}={_num(p)}"
                for a, p in zip(actions, game.exact_probs[node], strict=True)))
        else:
            tag = f"P{int(game.node_player[node]) + 1}"
            lines.append(f"node {history} player {int(game.node_player[node]) + 1} actions "
                         + " ".join(map(token, actions)))
            members.setdefault(int(game.node_infoset[node]), []).append(history)
        for kid, action in zip(kids, actions, strict=True):
            histories[kid] = f"{histories[node]}/{tag}:{token(action)}"
        stack.extend(reversed(kids))
    for iset, nodes in sorted(members.items()):
        lines.append(f"infoset {token(game.infoset_names[iset])} nodes " + " ".join(nodes))
    return "\n".join(lines) + "\n"


def _num(value: Fraction | float) -> str:
    if isinstance(value, Fraction):
        return str(value.numerator) if value.denominator == 1 else repr(float(value))
    return repr(float(value))


def _player_number(text: str, where: Location) -> int:
    if len(text) > 3 or int(text) > MAX_PLAYERS:  # (int() refuses 4,300+ digits)
        raise FormatError(f"player {text[:20]}: at most {MAX_PLAYERS} players", where)
    return int(text)
