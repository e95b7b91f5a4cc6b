"""An exact hash set of packed rows (uint64 vectors) numbering them in arrival order.

Used by the batched expansion for states (10^7-10^8 of them) and for legal move
sets: no Python object per row, about ``8 * n_words`` bytes per row for the rows
plus 4-8 bytes for the table.

Algorithm:

1. A row's 64-bit hash mixes its words (multiply-xorshift, splitmix64's finaliser).
2. A batch is first made unique within itself through a scratch hash table
   (:func:`unique_rows`), comparing rows in full; representatives are kept in
   order of first occurrence.
3. The table is open addressing with linear probing over int32 row numbers
   (-1 empty), at most :data:`MAX_LOAD` full. A look-up probes all rows of the
   batch at once: at an empty slot the row is absent, at a full one the stored
   row is compared in full (a hash alone is never trusted), else the next slot.
4. Absent rows get the next numbers in order of first occurrence, are appended,
   and are inserted by the same probing; rows that race for one empty slot all
   write it, one of them holds it, and the others move on. The table doubles and is
   rebuilt from the rows when the load passes :data:`MAX_LOAD`.

With the compiled kernels (:mod:`gdl.reasoning.kernels` decides) steps 2-4 are one loop,
:func:`gdl.reasoning.batch_kernels.table_add`, row after row: probe, compare in full,
append and insert a new row at once, so a row repeated later in the batch finds
it; the numbering is the same. Room for the whole batch (rows, and slots under
the load limit) is made before the loop.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from gdl.reasoning import kernels

MAX_LOAD = 0.6
GROWTH = 1.5
_MULT = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def hash_rows(rows: np.ndarray) -> np.ndarray:
    """[n] uint64 hashes of [n, w] uint64 rows (step 1)."""
    compiled = kernels.compiled(len(rows))
    if compiled is not None:
        return compiled.hash_rows(np.ascontiguousarray(rows))
    h = np.full(len(rows), 0x243F6A8885A308D3, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k in range(rows.shape[1]):
            h ^= rows[:, k]
            h *= _MULT
            h ^= h >> np.uint64(29)
        h ^= h >> np.uint64(30)
        h *= _MIX1
        h ^= h >> np.uint64(27)
        h *= _MIX2
        h ^= h >> np.uint64(31)
    return h


def unique_rows(rows: np.ndarray, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first, inverse): the first occurrence of each distinct row, in order, and
    each row's index into ``first`` (step 2; exact, no sorting).

    A scratch table of twice the batch's size is probed like the big one: rows at
    an empty slot write their index there (equal rows have equal probe sequences,
    so they arrive together and one of them claims the slot), then each row
    compares itself in full with the slot's claimant: equal means a duplicate of
    it, else the row probes on.
    """
    n = len(rows)
    slots = np.full(_power_of_two(2 * n), -1, dtype=np.int64)
    mask = len(slots) - 1
    claimant = np.empty(n, dtype=np.int64)
    active = np.arange(n)
    slot = (hashes & np.uint64(mask)).astype(np.int64)
    while len(active):
        held = slots[slot]
        empty = held < 0
        if empty.any():  # in reverse, so the first row usually wins (fixed below if not)
            slots[slot[empty][::-1]] = active[empty][::-1]
            held = slots[slot]
        same = _same(rows, held, rows, active)
        claimant[active[same]] = held[same]
        active, slot = active[~same], (slot[~same] + 1) & mask
    order = np.arange(n)
    if (claimant > order).any():  # a later row claimed for its group: take the first
        first_of = np.full(n, n, dtype=np.int64)
        np.minimum.at(first_of, claimant, order)
        claimant = first_of[claimant]
    first = np.flatnonzero(claimant == order)
    index = np.empty(n, dtype=np.int64)
    index[first] = np.arange(len(first))
    return first, index[claimant]


class RowTable:
    """Distinct rows of ``n_words`` uint64 words, numbered 0, 1, ... (steps 3-4)."""

    def __init__(self, n_words: int, capacity: int = 1024) -> None:
        self.n_words = n_words
        self.n = 0
        self._rows = np.empty((capacity, n_words), dtype=np.uint64)
        self._slots = np.full(_power_of_two(capacity / MAX_LOAD), -1, dtype=np.int32)

    @property
    def rows(self) -> np.ndarray:
        """[n, n_words] the rows so far (a view)."""
        return self._rows[:self.n]

    def nbytes(self) -> int:
        """Bytes allocated (rows with their spare capacity, and the slots)."""
        return self._rows.nbytes + self._slots.nbytes

    def add(self, rows: np.ndarray, out: np.ndarray | None = None) -> tuple[np.ndarray, int]:
        """(number of each row, how many were new); new rows are numbered in order
        of first occurrence after every row already held. The numbers are written
        to ``out`` when given (and it is returned)."""
        out = np.empty(len(rows), dtype=np.int64) if out is None else out
        if not len(rows):
            return out, 0
        hashes = hash_rows(rows)
        compiled = kernels.compiled(len(rows))
        if compiled is not None:
            return out, self._add_compiled(compiled, np.ascontiguousarray(rows), hashes, out)
        first, inverse = unique_rows(rows, hashes)
        distinct, distinct_hashes = rows[first], hashes[first]
        found = self._find(distinct, distinct_hashes)
        new = np.flatnonzero(found < 0)
        if len(new):
            numbers = np.arange(self.n, self.n + len(new))
            found[new] = numbers
            self._append(distinct[new])
            if self.n > MAX_LOAD * len(self._slots):
                self._rebuild()
            else:
                self._insert(numbers, distinct_hashes[new])
        out[:] = found[inverse]
        return out, len(new)

    def _add_compiled(self, compiled: ModuleType, rows: np.ndarray, hashes: np.ndarray,
                      out: np.ndarray) -> int:
        """:meth:`add` in one compiled loop, room made first for every row being new."""
        before = self.n
        self._reserve(before + len(rows))
        if before + len(rows) > MAX_LOAD * len(self._slots):
            self._rebuild(before + len(rows))
        self.n = compiled.table_add(rows, hashes, self._rows, before, self._slots, out)
        return self.n - before

    def _find(self, rows: np.ndarray, hashes: np.ndarray) -> np.ndarray:
        mask = len(self._slots) - 1
        found = np.full(len(rows), -1, dtype=np.int64)
        active = np.arange(len(rows))
        slot = (hashes & np.uint64(mask)).astype(np.int64)
        while len(active):
            held = self._slots[slot].astype(np.int64)
            full = held >= 0
            active, slot, held = active[full], slot[full], held[full]
            same = _same(self._rows, held, rows, active)
            found[active[same]] = held[same]
            active, slot = active[~same], (slot[~same] + 1) & mask
        return found

    def _insert(self, numbers: np.ndarray, hashes: np.ndarray) -> None:
        compiled = kernels.compiled(len(numbers))
        if compiled is not None:
            compiled.table_insert(numbers, hashes, self._slots)
            return
        mask = len(self._slots) - 1
        slot = (hashes & np.uint64(mask)).astype(np.int64)
        while len(numbers):  # a row whose slot is taken probes on from the next one
            free = self._slots[slot] < 0
            self._slots[slot[free]] = numbers[free]   # rows racing for a slot: one wins
            left = self._slots[slot] != numbers
            numbers, slot = numbers[left], (slot[left] + 1) & mask

    def _append(self, rows: np.ndarray) -> None:
        end = self.n + len(rows)
        self._reserve(end)
        self._rows[self.n:end] = rows
        self.n = end

    def _reserve(self, end: int) -> None:
        """Room for ``end`` rows."""
        if end > len(self._rows):
            grown = np.empty((max(end, int(len(self._rows) * GROWTH)), self.n_words),
                             dtype=np.uint64)
            grown[:self.n] = self._rows[:self.n]
            self._rows = grown

    def _rebuild(self, rows: int | None = None) -> None:
        """New slots for ``rows`` rows (default: those held) and the held rows in them."""
        rows = self.n if rows is None else rows
        self._slots = np.full(_power_of_two(rows * GROWTH / MAX_LOAD), -1, dtype=np.int32)
        step = 1 << 20
        for start in range(0, self.n, step):
            stop = min(self.n, start + step)
            self._insert(np.arange(start, stop), hash_rows(self._rows[start:stop]))

    def trimmed(self) -> np.ndarray:
        """The rows without spare capacity (the table itself is let go)."""
        self._slots = np.full(1, -1, dtype=np.int32)
        self._rows = resized(self._rows, self.n)  # in place: 3 GB are not copied
        return self._rows


def resized(array: np.ndarray, n: int) -> np.ndarray:
    """``array`` with ``n`` rows (the first ones kept, new ones zero): in place (a
    realloc, which moves pages rather than copying a large array) when the array
    owns its memory and nothing views it, else a copy."""
    if array.flags.owndata and array.base is None:
        try:
            array.resize((n,) + array.shape[1:], refcheck=False)
            return array
        except ValueError:  # not contiguous or not resizable: copy
            pass
    copy = np.zeros((n,) + array.shape[1:], dtype=array.dtype)
    kept = min(n, len(array))
    copy[:kept] = array[:kept]
    return copy


def _same(a: np.ndarray, i: np.ndarray, b: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Rows ``a[i]`` equal to rows ``b[j]``, word for word."""
    if a.shape[1] == 1:  # the common case of small games: one word, no 2-D reduction
        return a[i, 0] == b[j, 0]
    return (a[i] == b[j]).all(axis=1)


def _power_of_two(n: float) -> int:
    return 1 << max(4, int(np.ceil(np.log2(max(n, 2.0)))))
