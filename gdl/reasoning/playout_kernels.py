"""Compiled (numba) whole playouts over a grounded game's rule network.

The kernels of :class:`gdl.reasoning.playout_net.PlayoutNet` (which builds their flat
arrays and documents the network): :func:`play` runs many random playouts to the
end with no Python per step, :func:`step` answers the state machine's queries for
given (state, joint move) transitions (the tests compare it with the per-state
engine).

Layout: the network is bit-sliced over *lanes*, 64 to a ``uint64`` word; a row
(``rows[atom, :words]``) holds an atom's value in every lane, so a literal of a
rule costs one load and one AND per 64 playouts, and the decoding of the literal
is shared by the ``words`` words. A playout call runs its states in ``64 words``
lanes: a lane that finishes (terminal, at the step limit, or with a role out of
moves) takes the next waiting state at the end of the step; once none waits, the
lanes of the highest word move into free lanes below it as soon as they fit, so
the words evaluated shrink with the playouts still running.

A step: the step network's layers (terminal, legal, the move-free ``next`` facts
and what the move network reads), where a lane ends the goal network's (the rest
of the goals' cone) and the goals of those lanes, a move per
lane and role (drawn from the role's legal rows: uniform; MAST epsilon-greedy on
the caller's move values, ties at random; or Gibbs sampling on them; chance roles
always uniform), the chosen moves' ``does`` rows, the move network's layers, and
the next state's fact rows (move-free OR move-dependent ``next`` rows).

Random numbers: splitmix64 from the caller's seed (the same seed and words, the
same playouts); ``rand_below(n)`` takes the high 32 bits times ``n``.
"""

from __future__ import annotations

import math
import time

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from gdl.reasoning.literal_stream import ROW_BITS

LANES = 64
NEUTRAL = 0.5            # reward of a role whose goal is ill-defined at a cut-off state
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def _jit(function):
    return njit(cache=True, nogil=True)(function)


def _inline(function):
    """A small helper, inlined into its callers by numba (not compiled on its own)."""
    return njit(cache=True, nogil=True, inline="always")(function)


@intrinsic
def _ctz(typingctx, word):
    """The index of the lowest set bit of a nonzero ``uint64`` (LLVM's cttz)."""
    def codegen(context, builder, signature, args):
        i64, i1 = ir.IntType(64), ir.IntType(1)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(i64, [i64, i1]), "llvm.cttz.i64")
        return builder.call(function, [args[0], ir.Constant(i1, 1)])
    return types.uint64(types.uint64), codegen


@intrinsic
def _popcount(typingctx, word):
    """The number of set bits of a ``uint64`` (LLVM's ctpop)."""
    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(i64, [i64]), "llvm.ctpop.i64")
        return builder.call(function, [args[0]])
    return types.uint64(types.uint64), codegen


@_inline
def _random(rng: np.ndarray) -> np.uint64:
    """splitmix64: the next 64 random bits (``rng[0]`` is the state)."""
    z = rng[0] + _GOLDEN
    rng[0] = z
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@_inline
def _below(rng: np.ndarray, n: int) -> int:
    """A uniform integer in [0, n) (n < 2^32)."""
    return int(((_random(rng) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@_inline
def _uniform(rng: np.ndarray) -> float:
    """A uniform float in [0, 1)."""
    return float(_random(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


# an entry of a network's literal stream: see gdl.reasoning.literal_stream
_ROW_MASK = np.uint64((1 << ROW_BITS) - 1)
_NEGATED = np.uint64(1 << ROW_BITS)
_BODY_END = np.uint64(1 << (ROW_BITS + 1))
_HEAD_END = np.uint64(1 << (ROW_BITS + 2))
_HEAD_SHIFT = np.uint64(32)


@_jit
def _evaluate(rows: np.ndarray, words: int, stream: np.ndarray, layer_start: np.ndarray,
              recursive: np.ndarray, x: np.ndarray, acc: np.ndarray) -> None:
    """Words ``:words`` of every derived row of a network, layer by layer: layer ``l``
    is the stream ``layer_start[l]:layer_start[l + 1]``, a head's bodies one after
    the other, a body's literals one after the other (the entry's flags close them):
    each literal ANDs into the body, the end of a body ORs it into the head, the end
    of a head stores it. Up to 7 words, in passes of 4, 2 and 1 words whose bodies
    and heads stay in registers; 8 and more in one pass over arrays (``x``,
    ``acc``), which the compiler vectorises. (Measured, ns an entry and word:
    1 word 1.8-2.7; 2 words 1.0, 4 words 0.6 in registers, 2.7 and 2.3 in arrays;
    8 words 0.6. One word against a branch-free form and nested loops of per-body
    bounds: 1.3-1.8 against 1.8-2.4 and 4-6.) A recursive layer starts all-false
    and is iterated until it stops changing (its least fixpoint)."""
    for layer in range(len(layer_start) - 1):
        k0, k1 = layer_start[layer], layer_start[layer + 1]
        if recursive[layer]:
            _fixpoint(rows, words, stream, k0, k1, x, acc)
        elif words >= 8:
            _layer_words(rows, words, stream, k0, k1, x, acc)
        else:
            w = 0
            while words - w >= 4:
                _layer_4(rows, w, stream, k0, k1)
                w += 4
            if words - w >= 2:
                _layer_2(rows, w, stream, k0, k1)
                w += 2
            if words - w == 1:
                _layer_1(rows, w, stream, k0, k1)


@_inline
def _layer_1(rows: np.ndarray, w: int, stream: np.ndarray, k0: int, k1: int) -> None:
    """A layer (stream ``k0:k1``) on word ``w``."""
    x = _ALL
    acc = _ZERO
    for k in range(k0, k1):
        e = stream[k]
        x &= rows[e & _ROW_MASK, w] ^ (_ZERO - ((e >> np.uint64(ROW_BITS)) & _ONE))
        if e & _BODY_END:
            acc |= x
            x = _ALL
            if e & _HEAD_END:
                rows[e >> _HEAD_SHIFT, w] = acc
                acc = _ZERO


@_inline
def _layer_2(rows: np.ndarray, w: int, stream: np.ndarray, k0: int, k1: int) -> None:
    """A layer on words ``w, w + 1``."""
    x0 = x1 = _ALL
    a0 = a1 = _ZERO
    for k in range(k0, k1):
        e = stream[k]
        row = e & _ROW_MASK
        flip = _ZERO - ((e >> np.uint64(ROW_BITS)) & _ONE)
        x0 &= rows[row, w] ^ flip
        x1 &= rows[row, w + 1] ^ flip
        if e & _BODY_END:
            a0 |= x0
            a1 |= x1
            x0 = x1 = _ALL
            if e & _HEAD_END:
                target = e >> _HEAD_SHIFT
                rows[target, w] = a0
                rows[target, w + 1] = a1
                a0 = a1 = _ZERO


@_inline
def _layer_4(rows: np.ndarray, w: int, stream: np.ndarray, k0: int, k1: int) -> None:
    """A layer on words ``w`` to ``w + 3``."""
    x0 = x1 = x2 = x3 = _ALL
    a0 = a1 = a2 = a3 = _ZERO
    for k in range(k0, k1):
        e = stream[k]
        row = e & _ROW_MASK
        flip = _ZERO - ((e >> np.uint64(ROW_BITS)) & _ONE)
        x0 &= rows[row, w] ^ flip
        x1 &= rows[row, w + 1] ^ flip
        x2 &= rows[row, w + 2] ^ flip
        x3 &= rows[row, w + 3] ^ flip
        if e & _BODY_END:
            a0 |= x0
            a1 |= x1
            a2 |= x2
            a3 |= x3
            x0 = x1 = x2 = x3 = _ALL
            if e & _HEAD_END:
                target = e >> _HEAD_SHIFT
                rows[target, w] = a0
                rows[target, w + 1] = a1
                rows[target, w + 2] = a2
                rows[target, w + 3] = a3
                a0 = a1 = a2 = a3 = _ZERO


@_inline
def _layer_words(rows: np.ndarray, words: int, stream: np.ndarray, k0: int, k1: int,
                 x: np.ndarray, acc: np.ndarray) -> None:
    """A layer on words ``:words``, the bodies and heads in arrays."""
    for w in range(words):
        x[w] = _ALL
        acc[w] = _ZERO
    for k in range(k0, k1):
        e = stream[k]
        row = e & _ROW_MASK
        flip = _ZERO - ((e >> np.uint64(ROW_BITS)) & _ONE)
        for w in range(words):
            x[w] &= rows[row, w] ^ flip
        if e & _BODY_END:
            for w in range(words):
                acc[w] |= x[w]
                x[w] = _ALL
            if e & _HEAD_END:
                target = e >> _HEAD_SHIFT
                for w in range(words):
                    rows[target, w] = acc[w]
                    acc[w] = _ZERO


@_inline
def _fixpoint(rows: np.ndarray, words: int, stream: np.ndarray, k0: int, k1: int,
              x: np.ndarray, acc: np.ndarray) -> None:
    """A recursive layer (stream ``k0:k1``) from all-false to its least fixpoint."""
    for k in range(k0, k1):
        if stream[k] & _HEAD_END:
            for w in range(words):
                rows[stream[k] >> _HEAD_SHIFT, w] = 0
    for _ in range(k1 - k0 + 1):
        changed = False
        for w in range(words):
            x[w] = _ALL
            acc[w] = _ZERO
        for k in range(k0, k1):
            e = stream[k]
            row = e & _ROW_MASK
            flip = _ZERO - ((e >> np.uint64(ROW_BITS)) & _ONE)
            for w in range(words):
                x[w] &= rows[row, w] ^ flip
            if e & _BODY_END:
                for w in range(words):
                    acc[w] |= x[w]
                    x[w] = _ALL
                if e & _HEAD_END:
                    target = e >> _HEAD_SHIFT
                    for w in range(words):
                        if rows[target, w] != acc[w]:
                            changed = True
                            rows[target, w] = acc[w]
                        acc[w] = _ZERO
        if not changed:
            return


@_inline
def _load(rows: np.ndarray, fact_row: np.ndarray, packed: np.ndarray, state: int,
          word: int, bit: int) -> None:
    """A lane's facts (lane ``bit`` of word ``word``) from the packed state ``packed[state]``."""
    shift = np.uint64(bit)
    clear = ~(_ONE << shift)
    for f in range(len(fact_row)):   # (no branch: the facts' bits are random)
        r = fact_row[f]
        rows[r, word] = ((rows[r, word] & clear)
                         | (((packed[state, f >> 6] >> np.uint64(f & 63)) & _ONE) << shift))


@_inline
def _move_lane(rows: np.ndarray, fact_row: np.ndarray, word: int, bit: int, to_word: int,
               to_bit: int) -> None:
    """A lane's facts copied into another lane."""
    shift, to_shift = np.uint64(bit), np.uint64(to_bit)
    clear = ~(_ONE << to_shift)
    for f in range(len(fact_row)):
        r = fact_row[f]
        rows[r, to_word] = (rows[r, to_word] & clear) | (((rows[r, word] >> shift) & _ONE)
                                                         << to_shift)


@_inline
def _advance(rows: np.ndarray, words: int, move_stream: np.ndarray, move_layers: np.ndarray,
             move_recursive: np.ndarray, fact_row: np.ndarray, next_free: np.ndarray,
             next_move: np.ndarray, x: np.ndarray, acc: np.ndarray) -> None:
    """The move network (its ``does`` rows set) and the next state into the fact rows."""
    _evaluate(rows, words, move_stream, move_layers, move_recursive, x, acc)
    for f in range(len(fact_row)):
        a, b, target = next_free[f], next_move[f], fact_row[f]
        for w in range(words):
            rows[target, w] = rows[a, w] | rows[b, w]


@_inline
def _transpose(x: np.ndarray) -> None:
    """The 64 x 64 bit matrix ``x`` (64 words) transposed in place: bit j of word i
    becomes bit i of word j (six delta-swap rounds, each a loop of constant
    distance, which the compiler unrolls: 150 ns against 210 with the distance a
    variable)."""
    m = np.uint64(0x00000000FFFFFFFF)
    for i in range(32):
        t = ((x[i] >> np.uint64(32)) ^ x[i + 32]) & m
        x[i] ^= t << np.uint64(32)
        x[i + 32] ^= t
    m = np.uint64(0x0000FFFF0000FFFF)
    for b in range(0, 64, 32):
        for i in range(b, b + 16):
            t = ((x[i] >> np.uint64(16)) ^ x[i + 16]) & m
            x[i] ^= t << np.uint64(16)
            x[i + 16] ^= t
    m = np.uint64(0x00FF00FF00FF00FF)
    for b in range(0, 64, 16):
        for i in range(b, b + 8):
            t = ((x[i] >> np.uint64(8)) ^ x[i + 8]) & m
            x[i] ^= t << np.uint64(8)
            x[i + 8] ^= t
    m = np.uint64(0x0F0F0F0F0F0F0F0F)
    for b in range(0, 64, 8):
        for i in range(b, b + 4):
            t = ((x[i] >> np.uint64(4)) ^ x[i + 4]) & m
            x[i] ^= t << np.uint64(4)
            x[i + 4] ^= t
    m = np.uint64(0x3333333333333333)
    for b in range(0, 64, 4):
        for i in range(b, b + 2):
            t = ((x[i] >> np.uint64(2)) ^ x[i + 2]) & m
            x[i] ^= t << np.uint64(2)
            x[i + 2] ^= t
    m = np.uint64(0x5555555555555555)
    for i in range(0, 64, 2):
        t = ((x[i] >> np.uint64(1)) ^ x[i + 1]) & m
        x[i] ^= t << np.uint64(1)
        x[i + 1] ^= t


@_inline
def _nth_bit(word: np.uint64, n: int) -> int:
    """The index of the ``n``-th (from 0) set bit of ``word``: a binary search on
    popcounts with no branch (6 ns; clearing the low bits ``n`` times, 13 ns)."""
    position = _ZERO
    k = np.uint64(n)
    for width in (32, 16, 8, 4, 2, 1):
        w = np.uint64(width)
        low = _popcount(word & ((_ONE << w) - _ONE))
        beyond = k >= low
        k = k - low if beyond else k
        word = word >> w if beyond else word
        position = position + w if beyond else position
    return int(position)


@_jit
def _choose_valued(rng: np.ndarray, lane_bits: np.ndarray, lane: int, blocks: int,
                   offset: int, role_moves: np.ndarray, mode: int, temperature: float,
                   values: np.ndarray, weight: np.ndarray) -> int:
    """MAST's move for one lane (bit j of ``lane_bits[c, lane]``: the role's move
    ``role_moves[offset + 64 c + j]`` is legal; at least two are): mode 1 the best
    value, ties at random; mode 2 a Gibbs draw (``weight``: each move's weight, or
    when the lane's legal weights all underflowed, weights against its own best)."""
    if mode == 1:
        best = -np.inf
        ties = 0
        for c in range(blocks):
            bits = lane_bits[c, lane]
            while bits:
                v = values[role_moves[offset + 64 * c + int(_ctz(bits))]]
                bits &= bits - _ONE
                if v > best:
                    best = v
                    ties = 1
                elif v == best:
                    ties += 1
        pick = _below(rng, ties)
        for c in range(blocks):
            bits = lane_bits[c, lane]
            while bits:
                m = role_moves[offset + 64 * c + int(_ctz(bits))]
                bits &= bits - _ONE
                if values[m] == best:
                    if pick == 0:
                        return m
                    pick -= 1
        return -1
    total = 0.0
    top = -np.inf
    for c in range(blocks):
        bits = lane_bits[c, lane]
        while bits:
            m = role_moves[offset + 64 * c + int(_ctz(bits))]
            bits &= bits - _ONE
            total += weight[m]
            top = max(top, values[m])
    own = not total > 0.0
    if own:
        total = 0.0
        for c in range(blocks):
            bits = lane_bits[c, lane]
            while bits:
                m = role_moves[offset + 64 * c + int(_ctz(bits))]
                bits &= bits - _ONE
                total += np.exp((values[m] - top) / temperature)
    point = _uniform(rng) * total
    last = -1
    for c in range(blocks):
        bits = lane_bits[c, lane]
        while bits:
            m = role_moves[offset + 64 * c + int(_ctz(bits))]
            bits &= bits - _ONE
            point -= np.exp((values[m] - top) / temperature) if own else weight[m]
            last = m
            if point < 0.0:
                return m
    return last


@_inline
def _pick(rng: np.ndarray, lane_bits: np.ndarray, lane: int, blocks: int, offset: int,
          role_moves: np.ndarray, mask: np.ndarray, n: int) -> int:
    """A uniform move of a lane among its legal moves in ``mask`` (a bit per move of
    each block, as ``lane_bits``), of which there are ``n`` (at least one)."""
    pick = _below(rng, n) if n > 1 else 0
    for c in range(blocks):
        legal = lane_bits[c, lane] & mask[c]
        here = int(_popcount(legal))
        if pick < here:
            return role_moves[offset + 64 * c + _nth_bit(legal, pick)]
        pick -= here
    return -1


@_jit
def _choose(rows: np.ndarray, w: int, moving: np.uint64, role_start: np.ndarray,
            role_moves: np.ndarray, role_legal: np.ndarray, does_row: np.ndarray,
            chance: np.ndarray, mode: int, epsilon: float, temperature: float,
            values: np.ndarray, weight: np.ndarray, role_wins: np.ndarray, lane_bits: np.ndarray,
            chosen: np.ndarray, rng: np.ndarray, record: bool, defend: bool,
            mover: np.ndarray, resigned: np.ndarray, move_pos: np.ndarray,
            banned: np.ndarray) -> np.uint64:
    """Every role's move in the moving lanes of word ``w``: their ``does`` rows set,
    ``chosen[lane, role]``; returns the lanes where a role has no legal move. A lane
    where moves of the role that win by themselves are legal (bit j of
    ``role_wins[r, c]``: the role's move ``role_moves[first + 64 c + j]`` does) plays
    one of them, uniformly. With ``defend``: the moves banned in a lane (``banned[c,
    lane]``, as ``role_wins``) are not played unless all its legal moves are
    (then the lane's bit of ``resigned[w]`` is set), and ``mover[0, lane]`` and
    ``mover[1, lane]`` note the lane's one role with a choice (-2: several) and the
    position of its move among the role's moves (``move_pos``)."""
    base = w * LANES
    stuck = _ZERO
    n_roles = len(role_start) - 1
    if defend:
        bits = moving
        while bits:
            mover[0, base + int(_ctz(bits))] = -1
            bits &= bits - _ONE
    for r in range(n_roles):
        first, last = role_start[r], role_start[r + 1]
        covered = _ZERO
        legal_rows_seen = 0
        only = -1
        for j in range(first, last):   # (no branch: which rows are empty is random)
            word = rows[role_legal[j], w] & moving
            covered |= word
            seen = word != _ZERO
            legal_rows_seen += seen
            only = j if seen else only
        stuck |= moving & ~covered
        if legal_rows_seen == 0:
            continue
        if legal_rows_seen == 1 and covered == moving:   # one move, every lane
            m = role_moves[only]
            if does_row[m] >= 0:
                rows[does_row[m], w] |= moving
            if record:
                bits = moving
                while bits:
                    lane = base + int(_ctz(bits))
                    bits &= bits - _ONE
                    chosen[lane, r] = m
            continue
        blocks = (last - first + 63) // 64
        for c in range(blocks):   # the role's legal moves, lane by lane
            block = lane_bits[c]
            start = first + 64 * c
            for i in range(min(64, last - start)):
                block[i] = rows[role_legal[start + i], w] & moving
            for i in range(min(64, last - start), 64):
                block[i] = _ZERO
            _transpose(block)
        r_mode = 0 if chance[r] else mode
        wins = role_wins[r]
        any_wins = False
        for c in range(blocks):
            any_wins |= wins[c] != _ZERO
        bits = covered
        while bits:
            b = int(_ctz(bits))
            bit = bits & (_ZERO - bits)
            bits ^= bit
            lane = base + b
            n = 0
            for c in range(blocks):
                n += int(_popcount(lane_bits[c, b]))
            choice = n > 1
            if defend and choice:
                allowed = 0
                for c in range(blocks):
                    allowed += int(_popcount(lane_bits[c, b] & ~banned[c, lane]))
                if allowed == 0:   # every move loses at once: any will do
                    resigned[w] |= bit
                else:
                    for c in range(blocks):
                        lane_bits[c, b] &= ~banned[c, lane]
                    n = allowed
                mover[0, lane] = r if mover[0, lane] == -1 else -2
            n_wins = 0
            if any_wins:
                for c in range(blocks):
                    n_wins += int(_popcount(lane_bits[c, b] & wins[c]))
            if n_wins:   # a move that wins by itself is legal: play one
                m = _pick(rng, lane_bits, b, blocks, first, role_moves, wins, n_wins)
            elif n > 1 and r_mode != 0 and not (r_mode == 1 and _uniform(rng) < epsilon):
                m = _choose_valued(rng, lane_bits, b, blocks, first, role_moves, r_mode,
                                   temperature, values, weight)
            else:
                m = _pick(rng, lane_bits, b, blocks, first, role_moves, role_wins[-1], n)
            d = does_row[m]
            if d >= 0:
                rows[d, w] |= bit
            chosen[lane, r] = m
            if defend and choice:
                mover[1, lane] = move_pos[m]
    return stuck


@_inline
def _record(w: int, moving: np.uint64, chosen: np.ndarray, playout: np.ndarray,
            began: np.ndarray, step_count: int, played: np.ndarray, trace: np.ndarray) -> None:
    """The moves of word ``w``'s moving lanes into ``played`` and ``trace``."""
    bits = moving
    while bits:
        lane = w * LANES + int(_ctz(bits))
        bits &= bits - _ONE
        k = playout[lane]
        t = step_count - 1 - began[lane]
        for r in range(chosen.shape[1]):
            m = chosen[lane, r]
            if played.shape[0] > 0:
                played[k, m] = True
            if t < trace.shape[1]:
                trace[k, t, r] = m


@_inline
def _end(rows: np.ndarray, w: int, ending: np.uint64, cut: np.uint64, goal_row: np.ndarray,
         goal_role: np.ndarray, goal_scaled: np.ndarray, goal_count: np.ndarray,
         goal_sum: np.ndarray, playout: np.ndarray, began: np.ndarray, step_count: int,
         rewards: np.ndarray, steps: np.ndarray, piece_row: np.ndarray,
         piece_sign: np.ndarray, piece_scale: float) -> None:
    """The rewards and steps of the playouts ending in word ``w`` (``cut``: those at
    the step limit; where ``piece_row`` has rows, two roles' pieces, a cut one is
    worth ``1 / (1 + exp(-d / piece_scale))`` to role 0 and the rest to role 1, for
    ``d`` the sum of ``piece_sign`` over the piece rows the lane holds)."""
    base = w * LANES
    n_roles = goal_count.shape[1]
    bits = ending
    while bits:
        lane = base + int(_ctz(bits))
        bits &= bits - _ONE
        for r in range(n_roles):
            goal_count[lane, r] = 0
            goal_sum[lane, r] = 0.0
    for g in range(len(goal_row)):
        bits = rows[goal_row[g], w] & ending
        r = goal_role[g]
        while bits:
            lane = base + int(_ctz(bits))
            bits &= bits - _ONE
            goal_count[lane, r] += 1
            goal_sum[lane, r] += goal_scaled[g]
    bits = ending
    while bits:
        b = int(_ctz(bits))
        bits &= bits - _ONE
        lane = base + b
        k = playout[lane]
        is_cut = (cut >> np.uint64(b)) & _ONE
        ill = NEUTRAL if is_cut else 0.0
        for r in range(n_roles):
            rewards[k, r] = goal_sum[lane, r] if goal_count[lane, r] == 1 else ill
        if is_cut and len(piece_row):
            ahead = 0.0
            for i in range(len(piece_row)):
                if (rows[piece_row[i], w] >> np.uint64(b)) & _ONE:
                    ahead += piece_sign[i]
            rewards[k, 0] = 1.0 / (1.0 + math.exp(-ahead / piece_scale))
            rewards[k, 1] = 1.0 - rewards[k, 0]
        steps[k] = step_count - 1 - began[lane]


@_inline
def _take_back(rows: np.ndarray, live: int, moving: np.ndarray, prev_ok: np.ndarray,
               fact_row: np.ndarray, prev_row: np.ndarray, role_start: np.ndarray,
               role_legal: np.ndarray, role_wins: np.ndarray, mover: np.ndarray,
               banned: np.ndarray, began: np.ndarray) -> bool:
    """Anti-decisive moves (see :func:`play`): the moving lanes where a role can play a
    move that wins by itself, reached by another role's choice from the state kept in
    ``prev_row``, go back to that state with the choice banned; the other moving lanes'
    bans are lifted. Whether a lane went back."""
    n_roles = len(role_start) - 1
    back = False
    for w in range(live):
        redo = _ZERO
        for r in range(n_roles):
            threat = _ZERO
            for c in range(role_wins.shape[1]):
                bits = role_wins[r, c]
                while bits:
                    threat |= rows[role_legal[role_start[r] + 64 * c + int(_ctz(bits))], w]
                    bits &= bits - _ONE
            bits = threat & moving[w] & prev_ok[w]
            while bits:
                b = int(_ctz(bits))
                bits &= bits - _ONE
                chooser = mover[0, w * LANES + b]
                if chooser >= 0 and chooser != r:
                    redo |= _ONE << np.uint64(b)
        bits = moving[w] & ~redo
        while bits:
            lane = w * LANES + int(_ctz(bits))
            bits &= bits - _ONE
            for c in range(banned.shape[0]):
                banned[c, lane] = _ZERO
        if not redo:
            continue
        back = True
        for f in range(len(fact_row)):
            now, before = fact_row[f], prev_row[f]
            rows[now, w] = (rows[now, w] & ~redo) | (rows[before, w] & redo)
        bits = redo
        while bits:
            lane = w * LANES + int(_ctz(bits))
            bits &= bits - _ONE
            pos = mover[1, lane]
            banned[pos >> 6, lane] |= _ONE << np.uint64(pos & 63)
            began[lane] += 1   # (the step is played again)
    return back


@_jit
def play(n_rows: int, state_stream: np.ndarray, state_layers: np.ndarray,
         state_recursive: np.ndarray, goal_stream: np.ndarray, goal_layers: np.ndarray,
         goal_recursive: np.ndarray, move_stream: np.ndarray, move_layers: np.ndarray,
         move_recursive: np.ndarray, fact_row: np.ndarray, next_free: np.ndarray,
         next_move: np.ndarray, terminal_row: int, legal_row: np.ndarray,
         does_row: np.ndarray, does_rows: np.ndarray, role_start: np.ndarray,
         role_moves: np.ndarray, role_legal: np.ndarray, chance: np.ndarray,
         goal_row: np.ndarray, goal_role: np.ndarray, goal_scaled: np.ndarray,
         packed: np.ndarray, limit: int, mode: int, epsilon: float, temperature: float,
         values: np.ndarray, weight: np.ndarray, role_wins: np.ndarray, defend: bool,
         prev_row: np.ndarray, move_pos: np.ndarray, banned: np.ndarray, rows: np.ndarray,
         scratch: np.ndarray, lane_bits: np.ndarray, lane_ints: np.ndarray, goal_sum: np.ndarray,
         rng: np.ndarray, rewards: np.ndarray, played: np.ndarray, steps: np.ndarray,
         trace: np.ndarray, piece_row: np.ndarray, piece_sign: np.ndarray,
         piece_scale: float) -> int:
    """Playouts from each packed state ``packed[k]`` (``[K, n_words]``) to a terminal
    state or ``limit`` steps, in ``64 words`` lanes, into ``rewards[k]`` (goals / 100;
    a role without exactly one goal: 0 at a terminal state, NEUTRAL at a cut-off one;
    every role 0 when a role has no legal move in a non-terminal state),
    ``steps[k]`` (joint moves played), ``played[k, m]`` (move ``m`` was played; when
    ``played`` has rows) and ``trace[k, t, r]`` (role r's move at step t, for the
    first ``trace.shape[1]`` steps). ``mode``: 0 uniform, 1 MAST epsilon-greedy, 2
    Gibbs over ``values`` (per move; ``weight``: each move's Gibbs weight) at
    ``temperature``; chance roles (``chance[r]``) always uniform. Before any of
    these, a role plays a move that wins by itself where one is legal: ``role_wins[r,
    c]`` has bit j set when its move ``role_moves[role_start[r] + 64 c + j]`` does
    (row ``roles``: all ones). ``rng[0]``: the seed. A playout cut at ``limit`` with
    ``piece_row`` given (two roles) is worth the logistic of its pieces ahead instead
    of its goals (see :func:`_end`).

    ``defend`` (anti-decisive moves): a lane whose state lets a role play a move that
    wins by itself, reached by another role's choice, goes back to the state before
    (kept in the rows ``prev_row[f]``), that move banned (``banned[c, lane]``, bits as
    ``role_wins``; ``move_pos[m]``: move m's position among its role's moves), and
    the role chooses again, until a move escapes or all of them are banned (then
    any is played and the playout goes on). The retracted moves stay in ``played``.

    The caller allocates the work space (so the kernel compiles no allocation):
    ``rows`` ``[n_rows, words]`` zero but row 1 (all ones), ``scratch`` ``[7,
    words]``, ``lane_bits`` ``[blocks of 64 moves, 64]``, ``lane_ints`` ``[4 + 2
    roles, 64 words]``, ``banned`` ``[blocks, 64 words]`` and ``goal_sum`` ``[roles,
    64 words]``.

    A role's legal moves reach the lanes of a word through 64 x 64 bit transposes of
    its legal rows (a block of 64 moves at a time), except where one move is the
    only legal one in every moving lane of the word (the waiting role of a
    turn-based game), which is played at once. Returns the word-steps evaluated
    (the work)."""
    n_states = packed.shape[0]
    n_roles = len(role_start) - 1
    words = rows.shape[1]
    lanes = LANES * words
    x, acc, active, moving, cuts = scratch[0], scratch[1], scratch[2], scratch[3], scratch[4]
    prev_ok, resigned = scratch[5], scratch[6]   # lanes whose state before is in prev_row
    playout, began = lane_ints[0], lane_ints[1]   # began: the step a lane's playout began
    mover = lane_ints[2:4]
    chosen = lane_ints[4:4 + n_roles].T
    goal_count = lane_ints[4 + n_roles:].T
    goal_sum = goal_sum.T
    record = played.shape[0] > 0 or trace.shape[1] > 0
    waiting = 0
    for lane in range(min(lanes, n_states)):
        w, b = lane // LANES, lane % LANES
        _load(rows, fact_row, packed, waiting, w, b)
        playout[lane] = waiting
        active[w] |= _ONE << np.uint64(b)
        waiting += 1
    live = words   # the words evaluated: lanes above them are all idle
    work = 0
    step_count = 0
    while live > 0:
        step_count += 1
        work += live
        _evaluate(rows, live, state_stream, state_layers, state_recursive, x, acc)
        any_ending = False
        for w in range(live):
            base = w * LANES
            cuts[w] = _ZERO
            if step_count > limit:   # (before, no lane can have played limit steps)
                bits = active[w] & ~rows[terminal_row, w]
                while bits:
                    b = int(_ctz(bits))
                    bits &= bits - _ONE
                    if step_count - 1 - began[base + b] >= limit:
                        cuts[w] |= _ONE << np.uint64(b)
            moving[w] = active[w] & ~(rows[terminal_row, w] | cuts[w])
            any_ending |= moving[w] != active[w]
        if defend and _take_back(rows, live, moving, prev_ok, fact_row, prev_row, role_start,
                                 role_legal, role_wins, mover, banned, began):
            _evaluate(rows, live, state_stream, state_layers, state_recursive, x, acc)
        if any_ending:   # the goals, where a lane ends
            _evaluate(rows, live, goal_stream, goal_layers, goal_recursive, x, acc)
        for w in range(live):
            if active[w] & ~moving[w]:
                _end(rows, w, active[w] & ~moving[w], cuts[w], goal_row, goal_role, goal_scaled,
                     goal_count, goal_sum, playout, began, step_count, rewards, steps,
                     piece_row, piece_sign, piece_scale)
        for w in range(live):
            for i in range(len(does_rows)):
                rows[does_rows[i], w] = 0
            if not moving[w]:
                continue
            base = w * LANES
            resigned[w] = _ZERO
            stuck = _choose(rows, w, moving[w], role_start, role_moves, role_legal, does_row,
                            chance, mode, epsilon, temperature, values, weight, role_wins,
                            lane_bits, chosen, rng, record, defend, mover, resigned, move_pos,
                            banned)
            if stuck:   # a role without a legal move outside a terminal state: worth nothing
                bits = stuck
                while bits:
                    lane = base + int(_ctz(bits))
                    bits &= bits - _ONE
                    k = playout[lane]
                    for r in range(n_roles):
                        rewards[k, r] = 0.0
                    steps[k] = step_count - 1 - began[lane]
                moving[w] &= ~stuck
            if record:
                _record(w, moving[w], chosen, playout, began, step_count, played, trace)
        if defend:   # the state before the moves, for a lane that must take them back
            for f in range(len(fact_row)):
                for w in range(live):
                    rows[prev_row[f], w] = rows[fact_row[f], w]
            for w in range(live):
                prev_ok[w] = moving[w] & ~resigned[w]
        _advance(rows, live, move_stream, move_layers, move_recursive, fact_row, next_free,
                 next_move, x, acc)
        count = 0
        for w in range(live):
            freed = active[w] & ~moving[w]
            active[w] = moving[w]
            while freed and waiting < n_states:   # the next waiting states into freed lanes
                b = int(_ctz(freed))
                freed &= freed - _ONE
                _load(rows, fact_row, packed, waiting, w, b)
                playout[w * LANES + b] = waiting
                began[w * LANES + b] = step_count
                active[w] |= _ONE << np.uint64(b)
                waiting += 1
            count += int(_popcount(active[w]))
        live = _compact(rows, fact_row, prev_row, active, prev_ok, lane_ints, banned, live,
                        count)
    return work


@_inline
def _compact(rows: np.ndarray, fact_row: np.ndarray, prev_row: np.ndarray, active: np.ndarray,
             prev_ok: np.ndarray, lane_ints: np.ndarray, banned: np.ndarray, live: int,
             count: int) -> int:
    """The words still to evaluate: idle top words dropped, and the top word's lanes
    (their facts, states before, ints and bans) moved into free lanes below while they
    fit (``count``: lanes running)."""
    while live > 0 and active[live - 1] == 0:
        live -= 1
    while live > 1 and count <= LANES * (live - 1):
        top = live - 1
        bits = active[top]
        for w in range(top):
            free = ~active[w]
            while bits and free:
                b = int(_ctz(bits))
                bits &= bits - _ONE
                to = int(_ctz(free))
                free &= free - _ONE
                _move_lane(rows, fact_row, top, b, w, to)
                _move_lane(rows, prev_row, top, b, w, to)
                lane_ints[:, w * LANES + to] = lane_ints[:, top * LANES + b]
                banned[:, w * LANES + to] = banned[:, top * LANES + b]
                active[w] |= _ONE << np.uint64(to)
                prev_ok[w] |= ((prev_ok[top] >> np.uint64(b)) & _ONE) << np.uint64(to)
        active[top] = _ZERO
        live -= 1
    return live


@_jit
def step(n_rows: int, state_stream: np.ndarray, state_layers: np.ndarray,
         state_recursive: np.ndarray, goal_stream: np.ndarray, goal_layers: np.ndarray,
         goal_recursive: np.ndarray, move_stream: np.ndarray, move_layers: np.ndarray,
         move_recursive: np.ndarray, fact_row: np.ndarray, next_free: np.ndarray,
         next_move: np.ndarray, terminal_row: int, legal_row: np.ndarray,
         does_row: np.ndarray, does_rows: np.ndarray, goal_row: np.ndarray,
         packed: np.ndarray, joint: np.ndarray, words: int,
         terminal: np.ndarray, legal: np.ndarray, goal: np.ndarray,
         children: np.ndarray) -> None:
    """The transitions (``packed[t]``, ``joint[t]``: a move per role, -1 for none):
    ``terminal[t]``, ``legal[t, m]``, ``goal[t, g]`` of the state and the packed next
    state ``children[t]`` (zeroed by the caller), evaluated ``64 words`` lanes at a
    time as :func:`play` does."""
    n = packed.shape[0]
    rows = np.zeros((n_rows, words), dtype=np.uint64)
    rows[1, :] = _ALL
    x = np.empty(words, dtype=np.uint64)
    acc = np.empty(words, dtype=np.uint64)
    lanes = LANES * words
    for base in range(0, n, lanes):
        width = min(lanes, n - base)
        used = (width + LANES - 1) // LANES
        for lane in range(width):
            _load(rows, fact_row, packed, base + lane, lane // LANES, lane % LANES)
        _evaluate(rows, used, state_stream, state_layers, state_recursive, x, acc)
        _evaluate(rows, used, goal_stream, goal_layers, goal_recursive, x, acc)
        for lane in range(width):
            t, w, shift = base + lane, lane // LANES, np.uint64(lane % LANES)
            terminal[t] = (rows[terminal_row, w] >> shift) & _ONE
            for m in range(len(legal_row)):
                legal[t, m] = (rows[legal_row[m], w] >> shift) & _ONE
            for g in range(len(goal_row)):
                goal[t, g] = (rows[goal_row[g], w] >> shift) & _ONE
        for i in range(len(does_rows)):
            for w in range(used):
                rows[does_rows[i], w] = 0
        for lane in range(width):
            for r in range(joint.shape[1]):
                m = joint[base + lane, r]
                if m >= 0 and does_row[m] >= 0:
                    rows[does_row[m], lane // LANES] |= _ONE << np.uint64(lane % LANES)
        _advance(rows, used, move_stream, move_layers, move_recursive, fact_row, next_free,
                 next_move, x, acc)
        for lane in range(width):
            t, w, shift = base + lane, lane // LANES, np.uint64(lane % LANES)
            for f in range(len(fact_row)):
                if (rows[fact_row[f], w] >> shift) & _ONE:
                    children[t, f >> 6] |= _ONE << np.uint64(f & 63)


def warm_up() -> float:
    """Compile (or load from the disk cache) :func:`play` and :func:`step` on a tiny
    network, with the argument types of their real calls; the seconds it took. (A
    move's first threat search compiled :func:`step` in it: 0.25 s past its deadline.)"""
    started = time.perf_counter()
    ints = np.zeros(1, dtype=np.int64)
    none = np.zeros(0, dtype=np.int64)
    stream = np.zeros(0, dtype=np.uint64)
    flags = np.zeros(0, dtype=np.bool_)
    rows = np.zeros((5, 1), dtype=np.uint64)
    rows[1] = _ALL
    play(5, stream, ints, flags, stream, ints, flags, stream, ints, flags,
         np.array([2], dtype=np.int64), ints, ints, 0, np.array([3], dtype=np.int64),
         np.full(1, -1, dtype=np.int64), none, np.array([0, 1], dtype=np.int64), ints, ints,
         np.zeros(1, dtype=np.bool_), none, none, np.zeros(0),
         np.zeros((1, 1), dtype=np.uint64), 1, 0, 0.0, 1.0, np.zeros(1), np.zeros(1),
         np.zeros((2, 1), dtype=np.uint64), False, np.array([4], dtype=np.int64), ints,
         np.zeros((1, LANES), dtype=np.uint64), rows,
         np.zeros((7, 1), dtype=np.uint64), np.zeros((1, LANES), dtype=np.uint64),
         np.zeros((6, LANES), dtype=np.int64), np.zeros((1, LANES)),
         np.ones(1, dtype=np.uint64), np.zeros((1, 1)), np.zeros((0, 0), dtype=np.bool_),
         ints.copy(), np.zeros((1, 0, 1), dtype=np.int64), none, np.zeros(0), 4.0)
    step(5, stream, ints, flags, stream, ints, flags, stream, ints, flags,
         np.array([2], dtype=np.int64), ints, ints, 0, np.array([3], dtype=np.int64),
         np.full(1, -1, dtype=np.int64), none, ints, np.zeros((1, 1), dtype=np.uint64),
         np.full((1, 1), -1, dtype=np.int64), 1, np.zeros(1, dtype=np.bool_),
         np.zeros((1, 1), dtype=np.bool_), np.zeros((1, 1), dtype=np.bool_),
         np.zeros((1, 1), dtype=np.uint64))
    return time.perf_counter() - started
