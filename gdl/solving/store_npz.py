"""Pre-solved GDL games in a compact binary file (``.npz``): the scale path's ``--save``.

The JSON-lines format of :mod:`gdl.solving.store` spells every state's facts and
moves out (about 1 KB a state); at 10^6-10^8 states that is gigabytes and minutes.
This format keeps the solution's arrays instead (numpy ``.npz``, no pickles),
roughly 30 bytes per state plus the mixed states' probabilities:

* ``header``: the JSON header of the JSON-lines format (``format``, ``version``,
  ``rules_hash``, ``game``, ``roles``, ``solver``, ``values``) plus ``"encoding":
  "npz"`` and ``states``;
* ``facts`` [B] str: the KIF fact of each state bit; for a compiled machine the
  compiled engine's own bit order (its ``int`` states are the keys), else the sorted
  facts of the stored states;
* ``keys`` [S, W] uint64: the solution's support (solved non-terminal states) as
  little-endian bit vectors over ``facts``, sorted as integers (binary search);
* ``values`` [S, 2] float64; ``pure`` [S, 2] int16: each player's action where it
  plays one, -1 where it mixes;
* ``mixed_pos`` [M] int64 (sorted positions in ``keys`` of the states where a player
  mixes), ``mixed_start`` [2, M] int64 and ``mixed_prob0`` / ``mixed_prob1``: player
  ``p``'s distribution at ``mixed_pos[k]`` is ``mixed_prob{p}[mixed_start[p, k]:][:n_p]``;
* ``move_set`` [S] int32: each state's legal move set; ``set_start`` [2, L + 1]
  int64 and ``set_moves`` [2, *] int32 (player ``p``'s moves of set ``l`` are
  ``set_moves[p][set_start[p, l]:set_start[p, l + 1]]``, indices into ``moves``);
  ``moves`` [K] str: move KIF. A state's actions are its set's moves in that order.

:class:`NpzSolution` answers like :class:`gdl.solving.store.GdlSolution`
(``strategy(facts)``, ``state_values(facts)``), and, once :meth:`NpzSolution.bind`
has checked that a compiled machine numbers its state bits the same way, by the
machine's ``int`` state without spelling facts (:meth:`NpzSolution.strategy_at`).
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from gdl.expansion.batch_expand import DagExpansion
from gdl.reasoning.batch_machine import pack_ints
from gdl.reasoning.terms import Rule
from gdl.solving.store_header import FORMAT, VERSION, Strategies, hash_of
from solvers.errors import FormatError, GameError, Location
from solvers.simultaneous.dag_solution import DagSolution

ARRAYS = ("facts", "keys", "values", "pure", "mixed_pos", "mixed_start", "mixed_prob0",
          "mixed_prob1", "move_set", "set_start", "set_moves0", "set_moves1", "moves")


def machine_facts(machine: object) -> list[str] | None:
    """The KIF fact of each state bit of a compiled machine (None for other engines)."""
    facts = getattr(machine, "_fact_kif", None)
    return list(facts) if isinstance(facts, list) else None


def save_dag_solution(path: str | Path, expansion: DagExpansion, solution: DagSolution, *,
                      rules: list[Rule] | str, game: str, roles: Iterable[str], solver: str,
                      values: dict[str, float]) -> int:
    """Write the compact file (see the module docstring); returns the number of states."""
    arrays = dag_solution_arrays(expansion, solution, rules=rules, game=game, roles=roles,
                                 solver=solver, values=values)
    try:
        with open(path, "wb") as out:
            np.savez(out, **arrays)
    except OSError as exc:
        raise GameError(f"{path}: cannot write: {exc.strerror or exc}") from None
    return len(arrays["keys"])


def dag_solution_arrays(expansion: DagExpansion, solution: DagSolution, *,
                        rules: list[Rule] | str, game: str, roles: Iterable[str], solver: str,
                        values: dict[str, float]) -> dict[str, np.ndarray]:
    """The compact file's members (see the module docstring), ``header`` included."""
    dag = expansion.dag
    support = np.flatnonzero(solution.solved & ~dag.terminal)
    facts, keys = _keys(expansion, support)
    order = np.lexsort(keys.T) if keys.shape[1] else np.arange(len(support))
    support, keys = support[order], keys[order]
    rank = np.full(dag.num_states, -1, dtype=np.int64)
    rank[support] = np.arange(support.size)
    pos = rank[solution.mixed_states]
    keep = np.flatnonzero(pos >= 0)
    by_pos = keep[np.argsort(pos[keep], kind="stable")]
    move_set, tables = _move_sets(expansion, support)
    header = {"format": FORMAT, "version": VERSION, "encoding": "npz",
              "rules_hash": hash_of(rules), "game": game, "roles": list(roles),
              "solver": solver, "values": values, "states": int(support.size)}
    return {"header": np.array(json.dumps(header)), "facts": np.array(facts, dtype=str),
            "keys": keys, "values": solution.values[support],
            "pure": solution.pure[support], "mixed_pos": pos[by_pos],
            "mixed_start": solution.mixed_start[:, by_pos],
            "mixed_prob0": solution.mixed_prob[0], "mixed_prob1": solution.mixed_prob[1],
            "move_set": move_set, **tables}


def _keys(expansion: DagExpansion, support: np.ndarray) -> tuple[list[str], np.ndarray]:
    """(bit facts, [S, W] packed keys) of the support states."""
    facts = machine_facts(expansion.machine)
    if expansion.packed is not None and facts is not None:
        return facts, expansion.packed[support]
    if facts is not None:       # compiled machine, per-state path: its int states
        ints = [int(expansion.state(s)) for s in support.tolist()]
    else:                       # general engine: number the facts seen
        kifs = [expansion.state_to_kif(s) for s in support.tolist()]
        facts = sorted({f for state in kifs for f in state})
        bit = {f: b for b, f in enumerate(facts)}
        ints = [sum(1 << bit[f] for f in state) for state in kifs]
    return facts, pack_ints(ints, max(1, (len(facts) + 63) // 64))


def _move_sets(expansion: DagExpansion, support: np.ndarray) -> tuple[np.ndarray, dict]:
    """Each state's move set number and the sets' tables (module docstring)."""
    machine = expansion.machine
    if expansion.legal_set is not None:
        ids, first, move_set = np.unique(expansion.legal_set[support], return_index=True,
                                         return_inverse=True)
        representatives = support[first].tolist()
    else:
        seen: dict[tuple, int] = {}
        move_set = np.array([seen.setdefault(expansion.moves(s), len(seen))  # type: ignore[arg-type]
                             for s in support.tolist()], dtype=np.int64)
        firsts = {v: k for k, v in reversed(list(enumerate(move_set.tolist())))}
        representatives = [int(support[firsts[k]]) for k in range(len(seen))]
    names: dict[str, int] = {}
    starts: list[list[int]] = [[0], [0]]
    lists: list[list[int]] = [[], []]
    for s in representatives:
        moves = expansion.moves(s)
        for p in (0, 1):
            lists[p] += [names.setdefault(machine.move_to_kif(m), len(names))
                         for m in moves[p]]  # type: ignore[index]
            starts[p].append(len(lists[p]))
    return move_set.astype(np.int32), {
        "set_start": np.array(starts, dtype=np.int64),
        "set_moves0": np.array(lists[0], dtype=np.int32),
        "set_moves1": np.array(lists[1], dtype=np.int32),
        "moves": np.array(list(names), dtype=str)}


def read_header(path: Path) -> dict[str, Any]:
    """The header of a compact file (only that member is read); FormatError otherwise."""
    try:
        with np.load(path, allow_pickle=False) as data:
            header = json.loads(str(data["header"]))
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, json.JSONDecodeError):
        raise FormatError("not a compact GDL solution file (.npz with a header)",
                          Location(str(path))) from None
    return _header(header, path)


def _header(header: Any, path: Path) -> dict[str, Any]:
    """``header`` if it is a compact file's header; FormatError otherwise."""
    if (not isinstance(header, dict) or header.get("format") != FORMAT
            or header.get("version") != VERSION or header.get("encoding") != "npz"
            or not isinstance(header.get("rules_hash"), str)
            or not isinstance(header.get("roles"), list)):
        raise FormatError(f"not a {FORMAT} version {VERSION} compact file", Location(str(path)))
    return header


class NpzSolution:
    """A compact solution file, loaded (see the module docstring)."""

    def __init__(self, path: str | Path, arrays: dict[str, np.ndarray] | None = None) -> None:
        """Read the file at ``path``, or take its members ``arrays`` (with ``header``)
        already in memory, as the agent's start-clock pre-solve makes them
        (:func:`dag_solution_arrays`); ``path`` then only names it."""
        self.path = Path(path)
        header = read_header(self.path) if arrays is None else _header(
            json.loads(str(arrays["header"])), self.path)
        self.rules_hash: str = header["rules_hash"]
        self.game = str(header.get("game", ""))
        self.roles = tuple(str(r) for r in header["roles"])
        self.solver = str(header.get("solver", ""))
        self.values = dict(header.get("values") or {})
        if arrays is None:
            try:
                with np.load(self.path, allow_pickle=False) as data:
                    arrays = {name: data[name] for name in ARRAYS}
            except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
                raise FormatError(f"a compact solution file with a broken array: {exc}",
                                  Location(str(self.path))) from None
        for name in ARRAYS:
            setattr(self, "_" + name, arrays[name])
        self._check()
        self._bit = {f: b for b, f in enumerate(self._facts.tolist())}
        self.bound = False

    def _check(self) -> None:
        n = len(self._keys)
        if not (self._values.shape == (n, 2) and self._pure.shape == (n, 2)
                and len(self._move_set) == n and self._set_start.shape[0] == 2
                and self._mixed_start.shape == (2, len(self._mixed_pos))
                and (n == 0 or int(self._move_set.max()) < self._set_start.shape[1] - 1)):
            raise FormatError("a compact solution file with inconsistent arrays",
                              Location(str(self.path)))

    def __len__(self) -> int:
        return len(self._keys)

    def bind(self, machine: object) -> bool:
        """True (and :meth:`strategy_at` usable) when ``machine`` is compiled with the
        same state bits as the file: its ``int`` states are then the file's keys."""
        facts = machine_facts(machine)
        stored = self._facts.tolist()
        self.bound = facts is not None and facts[:len(stored)] == stored
        return self.bound

    def find(self, state: int) -> int | None:
        """The position of a state given as an ``int`` over the file's bits, or None:
        a binary search per word, most significant first, within the rows that agree
        on the words before (no per-state Python objects: 10^8 states load at once)."""
        keys = self._keys
        width = keys.shape[1]
        if state < 0 or state.bit_length() > 64 * width:
            return None
        words = pack_ints([state], width)[0]
        low, high = 0, len(keys)
        for w in reversed(range(width)):
            column = keys[low:high, w]
            low, high = (low + int(np.searchsorted(column, words[w], "left")),
                         low + int(np.searchsorted(column, words[w], "right")))
            if low == high:
                return None
        return low

    def position(self, facts: Iterable[str]) -> int | None:
        state = 0
        for fact in facts:
            bit = self._bit.get(fact)
            if bit is None:
                return None   # a fact no stored state has
            state |= 1 << bit
        return self.find(state)

    def strategy(self, state: Iterable[str]) -> Strategies | None:
        """``{role: {move KIF: probability}}`` at a state given as its KIF facts."""
        return self._strategies(self.position(state))

    def state_values(self, state: Iterable[str]) -> dict[str, float] | None:
        return self._state_values(self.position(state))

    def strategy_at(self, state: int) -> Strategies | None:
        """:meth:`strategy` by a bound machine's ``int`` state (:meth:`bind`)."""
        return self._strategies(self.find(state) if self.bound else None)

    def values_at(self, state: int) -> dict[str, float] | None:
        return self._state_values(self.find(state) if self.bound else None)

    def _strategies(self, k: int | None) -> Strategies | None:
        if k is None:
            return None
        result = {}
        names = self._moves
        group = int(self._move_set[k])
        for p, moves in enumerate((self._set_moves0, self._set_moves1)):
            # the set's moves, then the pure action or the mixed side table's row
            low, high = self._set_start[p, group], self._set_start[p, group + 1]
            labels = [str(names[m]) for m in moves[low:high]]
            action = int(self._pure[k, p])
            if action >= 0:
                result[self.roles[p]] = {labels[action]: 1.0}
                continue
            at = int(np.searchsorted(self._mixed_pos, k))
            if at >= len(self._mixed_pos) or self._mixed_pos[at] != k:
                raise FormatError(f"state {k} mixes but has no probabilities",
                                  Location(str(self.path)))
            probs = (self._mixed_prob0, self._mixed_prob1)[p]
            start = int(self._mixed_start[p, at])
            result[self.roles[p]] = {label: float(q) for label, q in
                                     zip(labels, probs[start:start + len(labels)].tolist(),
                                         strict=True) if q > 1e-12}
        return result

    def _state_values(self, k: int | None) -> dict[str, float] | None:
        if k is None:
            return None
        return {self.roles[p]: round(float(self._values[k, p]), 9) for p in (0, 1)}
