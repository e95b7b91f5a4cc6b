"""Compiled (numba) kernels for the batched expansion's hot loops.

The batched expansion (:mod:`gdl.reasoning.batch_machine`, :mod:`gdl.expansion.row_table`,
:mod:`gdl.expansion.batch_expand`) is written in numpy passes, a few nanoseconds per item
each, which numpy cannot fuse. These kernels do the same work in one compiled
loop each, with the same results bit for bit:

- :func:`transpose_bits`: 64 x 64 bit-block transposes, a block held in 64
  registers-worth of words (the numpy version makes six strided passes).
- :func:`evaluate_network`: the bit-sliced rule network, layer by layer over
  blocks of :data:`BLOCK_WORDS` words, so a block's rows stay in the cache and a
  body's literals are ANDed without temporaries.
- :func:`hash_rows`, :func:`table_add`, :func:`table_insert`: the exact hash
  table; ``table_add`` probes, compares full rows, appends and inserts one row at
  a time, so in-batch duplicates and first-occurrence numbering come for free.
- :func:`chunk_transitions`: a chunk's joint moves in the per-state order,
  written straight into the move network's packed leaves.

:func:`warm_up` loads :mod:`gdl.reasoning.playout_kernels` (whole playouts) too, so the
one switch serves both.

The network stays bit-sliced rather than evaluated rule by rule per transition
on packed rows: a transition costs a network's literals / 64 word operations
sliced, against a check per body unsliced (simultaneous tic-tac-toe's move network
has 729 bodies and 2,187 literals; blocker's 48 and 128, where the two are even).

Callers reach these through :func:`gdl.reasoning.kernels.compiled`, which decides when
(numba present, not switched off, a batch big enough to amortise the compile) and
imports this module (and numba) only then; :func:`warm_up` compiles them all, or
loads them from the disk cache (``cache=True``), so only the first process after
an installation pays the compile time.
"""

from __future__ import annotations

import time

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from gdl.reasoning import playout_kernels

BLOCK_WORDS = 32          # words of a bit-sliced block (2,048 items) evaluated together
PREFETCH = 16             # table_add fetches the slot of the row this far ahead, and
#                           the stored row its slot names half as far ahead
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


def _jit(function):
    return njit(cache=True, nogil=True)(function)


# transpose_bits' delta-swap masks: the bits b with b & k == 0, for k = 32 ... 1
_SWAP_MASKS = np.array([sum(1 << b for b in range(64) if not b & k) for k in (32, 16, 8, 4, 2, 1)],
                       dtype=np.uint64)


@_jit
def transpose_bits(matrix: np.ndarray) -> np.ndarray:
    """As :func:`gdl.reasoning.batch_machine.transpose_bits`: [R, C / 64] -> [C, R / 64]; a
    block's six delta-swap rounds run on 64 words in the cache, in loops of fixed
    pair distance (which the compiler vectorises)."""
    r, w = matrix.shape
    blocks = r // 64
    out = np.empty((w * 64, blocks), dtype=np.uint64)
    x = np.empty(64, dtype=np.uint64)
    for b in range(blocks):
        for c in range(w):
            for k in range(64):
                x[k] = matrix[b * 64 + k, c]
            for level in range(6):
                j = 32 >> level
                shift = np.uint64(j)
                mask = _SWAP_MASKS[level]
                for base in range(0, 64, 2 * j):
                    for i in range(base, base + j):
                        t = ((x[i] >> shift) ^ x[i + j]) & mask
                        x[i] ^= t << shift
                        x[i + j] ^= t
            for k in range(64):
                out[c * 64 + k, b] = x[k]
    return out


@_jit
def evaluate_network(rows: np.ndarray, literal_rows: np.ndarray, negate: np.ndarray,
                     body_start: np.ndarray, head_start: np.ndarray, head_rows: np.ndarray,
                     layer_start: np.ndarray, recursive: np.ndarray) -> None:
    """Fill the derived rows of ``rows`` (leaves and row 1 set, derived rows zero).

    The flat form of :class:`gdl.reasoning.batch_machine.Network`'s layers: layer ``l`` has
    heads ``layer_start[l]:layer_start[l + 1]``, head ``h`` the bodies
    ``head_start[h]:head_start[h + 1]``, body ``b`` the literals
    ``body_start[b]:body_start[b + 1]``. A recursive layer is iterated from
    all-false until it stops changing (its least fixpoint, as the Jacobi numpy
    iteration finds).
    """
    words = rows.shape[1]
    acc = np.empty(BLOCK_WORDS, dtype=np.uint64)
    body = np.empty(BLOCK_WORDS, dtype=np.uint64)
    for w0 in range(0, words, BLOCK_WORDS):
        w1 = min(words, w0 + BLOCK_WORDS)
        width = w1 - w0
        for layer in range(len(layer_start) - 1):
            rounds = 1
            if recursive[layer]:
                rounds = layer_start[layer + 1] - layer_start[layer] + 1
            for _ in range(rounds):
                changed = False
                for h in range(layer_start[layer], layer_start[layer + 1]):
                    acc[:width] = 0
                    for b in range(head_start[h], head_start[h + 1]):
                        body[:width] = _ALL
                        for lit in range(body_start[b], body_start[b + 1]):
                            row = literal_rows[lit]
                            flip = negate[lit]
                            for w in range(width):
                                body[w] &= rows[row, w0 + w] ^ flip
                        for w in range(width):
                            acc[w] |= body[w]
                    target = head_rows[h]
                    for w in range(width):
                        if rows[target, w0 + w] != acc[w]:
                            changed = True
                            rows[target, w0 + w] = acc[w]
                if not changed:
                    break


HASH_SEED = np.uint64(0x243F6A8885A308D3)


@_jit
def hash_word(h: np.uint64, word: np.uint64) -> np.uint64:
    """One word of a row into its hash (see :func:`hash_rows`)."""
    h ^= word
    h *= np.uint64(0x9E3779B97F4A7C15)
    return h ^ (h >> np.uint64(29))


@_jit
def hash_final(h: np.uint64) -> np.uint64:
    """A row's hash from its words' (splitmix64's finaliser)."""
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31))


@_jit
def hash_rows(rows: np.ndarray) -> np.ndarray:
    """As :func:`gdl.expansion.row_table.hash_rows` (the same hash, so tables mix paths;
    the graph search's transposition table too)."""
    n, w = rows.shape
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        h = HASH_SEED
        for k in range(w):
            h = hash_word(h, rows[i, k])
        out[i] = hash_final(h)
    return out


@intrinsic
def _prefetch(typingctx, array, index):
    """Ask the CPU to fetch ``array[index]`` (a 1-D array) into the cache: the
    table's probes are random reads of a large array, and a fetch started a few
    rows ahead overlaps their memory latency."""
    def codegen(context, builder, signature, args):
        kind = signature.args[0]
        pointer = cgutils.get_item_pointer(context, builder, kind,
                                           context.make_array(kind)(context, builder, args[0]),
                                           [args[1]], wraparound=False)
        byte_pointer = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32]),
            "llvm.prefetch.p0i8")
        # read, high locality, data cache
        builder.call(function, [builder.bitcast(pointer, byte_pointer), ir.Constant(i32, 0),
                                ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()
    return types.void(array, index), codegen


@_jit
def table_add(batch: np.ndarray, hashes: np.ndarray, rows: np.ndarray, n: int,
              slots: np.ndarray, numbers: np.ndarray) -> int:
    """Look up / add each row of ``batch`` in order; ``numbers[i]`` gets row i's
    number. New rows are appended at ``rows[n]``, ``rows[n + 1]``, ... (the caller
    reserved room for all of them and keeps the slots under their load limit).
    Returns the new row count."""
    mask = np.uint64(len(slots) - 1)
    w = batch.shape[1]
    flat = rows.reshape(rows.size)
    for i in range(len(batch)):
        if i + PREFETCH < len(batch):
            _prefetch(slots, hashes[i + PREFETCH] & mask)
        if i + PREFETCH // 2 < len(batch):
            ahead = slots[hashes[i + PREFETCH // 2] & mask]
            if ahead >= 0:
                _prefetch(flat, ahead * w)
        s = hashes[i] & mask
        while True:
            held = slots[s]
            if held < 0:
                rows[n, :] = batch[i, :]
                slots[s] = n
                numbers[i] = n
                n += 1
                break
            same = True
            for k in range(w):
                if rows[held, k] != batch[i, k]:
                    same = False
                    break
            if same:
                numbers[i] = held
                break
            s = (s + np.uint64(1)) & mask
    return n


@_jit
def table_insert(numbers: np.ndarray, hashes: np.ndarray, slots: np.ndarray) -> None:
    """Insert distinct row numbers (a rebuild)."""
    mask = np.uint64(len(slots) - 1)
    for i in range(len(numbers)):
        s = hashes[i] & mask
        while slots[s] >= 0:
            s = (s + np.uint64(1)) & mask
        slots[s] = numbers[i]


@_jit
def chunk_transitions(counts: np.ndarray, low: int, high: int, legal: np.ndarray,
                      start: np.ndarray, outer: np.ndarray, next_free: np.ndarray,
                      does_word: np.ndarray, does_mask: np.ndarray, leaves: np.ndarray,
                      children: np.ndarray) -> None:
    """The joint moves of chunk rows ``low:high`` in the per-state order (state by
    state, then row-major over the slots: player 0's move, player 1's, ...,
    nature's; slot k's move count at row s is ``counts[s, k]`` and its legal moves
    ``legal[start[k, s]:]``), written as transitions: row t of ``leaves`` gets its
    state's outer words OR its moves' does bits (the move network's packed leaves),
    row t of ``children`` its state's move-free next facts (both are reused
    buffers: every word of those rows is written)."""
    slots = start.shape[0]
    width, outer_width = leaves.shape[1], outer.shape[1]
    # The last two slots are two nested loops (the two-player loops, as fast; a
    # single slot is the inner loop, the outer one making one pass that ORs no move);
    # the slots before them turn an odometer, whose every joint move makes a template
    # row: the state's outer words OR those moves' does bits.
    first_slot = max(slots - 2, 0)
    digit = np.zeros(slots, dtype=np.int64)
    template = np.empty(width, dtype=np.uint64)
    t = 0
    for s in range(low, high):
        prefixes = 1
        for k in range(first_slot):
            prefixes *= counts[s, k]
        outer_count = counts[s, first_slot] if slots > 1 else 1
        inner_count = counts[s, slots - 1]
        digit[:] = 0
        for _ in range(prefixes):
            for k in range(outer_width):
                template[k] = outer[s, k]
            for k in range(outer_width, width):
                template[k] = 0
            for k in range(first_slot):
                move = legal[start[k, s] + digit[k]]
                template[does_word[move]] |= does_mask[move]
            for i in range(outer_count):
                first = legal[start[first_slot, s] + i] if slots > 1 else 0
                for j in range(inner_count):
                    second = legal[start[slots - 1, s] + j]
                    for k in range(width):
                        leaves[t, k] = template[k]
                    for k in range(next_free.shape[1]):
                        children[t, k] = next_free[s, k]
                    if slots > 1:
                        leaves[t, does_word[first]] |= does_mask[first]
                    leaves[t, does_word[second]] |= does_mask[second]
                    t += 1
            k = first_slot - 1
            while k >= 0:
                digit[k] += 1
                if digit[k] < counts[s, k]:
                    break
                digit[k] = 0
                k -= 1


def warm_up() -> float:
    """Compile (or load from the disk cache) every kernel on tiny inputs; the
    seconds it took. Without it the first batch pays this."""
    start = time.perf_counter()
    rows = np.zeros((64, 1), dtype=np.uint64)
    word = np.zeros(1, dtype=np.uint64)
    transpose_bits(rows)
    ints = np.zeros(1, dtype=np.int64)
    evaluate_network(rows, ints, word, np.zeros(2, dtype=np.int64), ints, ints,
                     np.zeros(2, dtype=np.int64), np.zeros(1, dtype=np.bool_))
    hashes = hash_rows(rows[:1].copy())
    slots = np.full(16, -1, dtype=np.int32)
    for out in (np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int32)):
        table_add(rows[:1].copy(), hashes, rows, 0, slots.copy(), out)
    table_insert(ints, hashes, slots)
    counts = np.ones((1, 3), dtype=np.int64)
    chunk_transitions(counts, 0, 1, ints, np.zeros((2, 1), dtype=np.int64), rows, rows, ints,
                      word, rows.copy(), rows.copy())
    playout_kernels.warm_up()   # the agent's compiled playouts, loaded with these
    return time.perf_counter() - start
