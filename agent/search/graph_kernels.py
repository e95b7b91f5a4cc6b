"""Compiled (numba) kernels of the MCTS graph (:mod:`agent.search.graph`).

The graph lives in flat arrays (:class:`agent.search.graph.Graph` holds them):
nodes keyed by packed state through an open-addressing table (transpositions: a
state reached by several lines is one node), each node with its legal moves per
role (*slots*: move column, visits, reward total of the role that moves it; under
``grave`` also its AMAF visits and reward total, ``slot_rave``) and a
block of child pointers, one per joint move (mixed radix over the roles, the first
role most significant; -1 while unknown; under ``serial`` also the visits and the
answering role's reward total of each joint move). Exact values (terminal goals, or proven
by the MCTS-Solver rules in :func:`prove`) are rewards in [0, 1] per role.

A round of the search is four calls: :func:`select` (descents with pending visits),
:func:`lookup` (the new edges' child states found or given node numbers),
:func:`fill` (the new nodes' moves and values, from the batched engine's
read-out), :func:`backup` (rewards, proofs, MAST statistics of the tree moves).
:func:`reachable` finds the nodes :meth:`agent.search.graph.Graph.compact` keeps when the
pool fills: those the new root reaches, within a move those with visits enough.
"""

from __future__ import annotations

import math
import time

import numpy as np
from numba import njit

from gdl.reasoning.batch_kernels import HASH_SEED, hash_final, hash_word
from solvers.matrix.simplex_kernels import GAIN_TOLERANCE, solve_one

# leaf kinds of a descent
SETTLED = 0    # ends at a node with an exact value (terminal or proven)
NEW_EDGE = 1   # ends at a joint move whose child is not known yet
PLAYOUT = 2    # ends at a known node it plays out from (a cycle, or the depth limit)

_EMPTY = np.int32(-1)
_EPS = 1e-9
_NO_RAVE = np.zeros((0, 2), dtype=np.float32)   # no AMAF statistics (``grave`` off)
_NO_AMAF = np.zeros(0, dtype=np.int64)


def _jit(function):
    return njit(cache=True, nogil=True)(function)


@_jit
def _random(rng: np.ndarray) -> float:
    """xorshift64* in [0, 1) (``rng[0]``: the state, never 0)."""
    x = rng[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng[0] = x
    return float((x * np.uint64(0x2545F4914F6CDD1D)) >> np.uint64(11)) / 9007199254740992.0


@_jit
def hash_row(row: np.ndarray) -> np.uint64:
    """The hash of one packed state (as :func:`gdl.reasoning.batch_kernels.hash_rows`)."""
    h = HASH_SEED
    for k in range(len(row)):
        h = hash_word(h, row[k])
    return hash_final(h)


@_jit
def find(table: np.ndarray, state: np.ndarray, row: np.ndarray) -> int:
    """The node of packed state ``row`` (-1: none)."""
    mask = np.uint64(len(table) - 1)
    s = hash_row(row) & mask
    w = len(row)
    while True:
        held = table[s]
        if held < 0:
            return -1
        same = True
        for k in range(w):
            if state[held, k] != row[k]:
                same = False
                break
        if same:
            return held
        s = (s + np.uint64(1)) & mask


@_jit
def _insert(table: np.ndarray, row: np.ndarray, node: int) -> None:
    mask = np.uint64(len(table) - 1)
    s = hash_row(row) & mask
    while table[s] >= 0:
        s = (s + np.uint64(1)) & mask
    table[s] = node


@_jit
def _slot_of(node: int, role: int, index: int, size: np.ndarray, slot_base: np.ndarray) -> int:
    s = slot_base[node]
    for r in range(role):
        s += size[node, r]
    return s + index


@_jit
def _decode(node: int, joint: int, size: np.ndarray, out: np.ndarray) -> None:
    """The per-role move indices of joint move ``joint`` at ``node``."""
    for r in range(size.shape[1] - 1, -1, -1):
        n = size[node, r]
        out[r] = joint % n
        joint //= n


@_jit
def _settled(node: int, terminal: np.ndarray, proven: np.ndarray) -> bool:
    return terminal[node] or proven[node]


@_jit
def _sole_chooser(node: int, size: np.ndarray, chance: np.ndarray) -> int:
    """The role that alone has more than one move at ``node``, not chance: its move
    index is then the joint move's (-1: none, several, or chance moves too)."""
    chooser = -1
    for r in range(size.shape[1]):
        if size[node, r] > 1:
            if chance[r] or chooser >= 0:
                return -1
            chooser = r
    return chooser


@_jit
def _choose(node: int, role: int, size: np.ndarray, slot_base: np.ndarray,
            slot_visits: np.ndarray, slot_total: np.ndarray, count: np.ndarray,
            c: float, rng: np.ndarray, alpha: float, heur: np.ndarray, child: np.ndarray,
            kids: int, slot_move: np.ndarray, rave: np.ndarray, ref: int, where: np.ndarray,
            amaf: np.ndarray, bias: float) -> int:
    """UCB1 over ``role``'s moves at ``node``; unvisited moves first, ties at random.
    ``kids`` >= 0 (the first child pointer, where ``role`` alone moves): each known
    child's implicit minimax value (``minimax``) weighs ``alpha`` in its move's mean.
    ``rave`` kept (``grave``): each move's mean is blended with its AMAF mean at node
    ``ref`` (the deepest well-visited node of the descent where ``role`` chooses)."""
    first = _slot_of(node, role, 0, size, slot_base)
    n = size[node, role]
    if len(rave):
        _amaf_slots(node, first, n, ref, role, size, slot_base, slot_move, where, amaf)
    return _ucb(slot_visits, slot_total, first, 1, n, count[node], c, rng, alpha, heur,
                child, kids, role == 1, rave, amaf, len(rave) > 0, bias)


@_jit
def _amaf_slots(node: int, first: int, n: int, ref: int, role: int, size: np.ndarray,
                slot_base: np.ndarray, slot_move: np.ndarray, where: np.ndarray,
                amaf: np.ndarray) -> None:
    """``amaf[i]``: the slot of node ``ref`` that holds the move of ``node``'s slot
    ``first + i`` (-1: none; ``where`` [moves] is -1 before and after)."""
    if ref == node:
        for i in range(n):
            amaf[i] = first + i
        return
    ref_first = _slot_of(ref, role, 0, size, slot_base)
    for k in range(size[ref, role]):
        where[slot_move[ref_first + k]] = ref_first + k
    for i in range(n):
        amaf[i] = where[slot_move[first + i]]
    for k in range(size[ref, role]):
        where[slot_move[ref_first + k]] = -1


@_jit
def _ucb(visits: np.ndarray, total: np.ndarray, first: int, stride: int, n: int,
         parent: float, c: float, rng: np.ndarray, alpha: float, heur: np.ndarray,
         child: np.ndarray, kids: int, flip: bool, rave: np.ndarray, amaf: np.ndarray,
         blend: bool, bias: float) -> int:
    """UCB1 over the ``n`` arms ``first + i * stride`` of ``visits``/``total`` with
    ``parent`` visits in all; unvisited arms first, ties at random. Where ``kids`` >= 0,
    arm i's mean is mixed with ``alpha`` of its child's ``heur`` (``child[kids + i]``,
    for role 1 ``flip``ped: ``heur`` is role 0's) when that child is known. With
    ``blend`` (GRAVE), arm i's AMAF statistics are ``rave[amaf[i]]`` (visits, reward
    total; none where -1): its mean becomes ``(1 - b) mean + b amaf_mean`` with
    ``b = a / (a + v + bias a v)`` (``a`` AMAF visits, ``v`` its own), and the unvisited
    arm with the best AMAF mean (0.5 unknown) goes first."""
    unvisited = 0
    for i in range(n):
        if visits[first + i * stride] == 0:
            unvisited += 1
    if unvisited and not blend:
        pick = int(_random(rng) * unvisited)
        for i in range(n):
            if visits[first + i * stride] == 0:
                if pick == 0:
                    return i
                pick -= 1
    log_n = math.log(max(parent, 1.0))
    best, best_score, ties = 0, -1e300, 0
    for i in range(n):
        v = visits[first + i * stride]
        if unvisited:   # (with ``blend``) the unvisited arms by their AMAF means alone
            if v > 0:
                continue
            score = _amaf_mean(rave, amaf[i], 0.0, 0.0, bias)
        else:
            score = _amaf_mean(rave, amaf[i] if blend else -1,
                               total[first + i * stride] / v, v, bias)
            if kids >= 0 and child[kids + i] >= 0:
                h = heur[child[kids + i]]
                score += alpha * ((1.0 - h if flip else h) - score)
            score += c * math.sqrt(log_n / v)
        if score > best_score + 1e-12:
            best, best_score, ties = i, score, 1
        elif score >= best_score - 1e-12:
            ties += 1
            if _random(rng) * ties < 1.0:   # reservoir: each tie equally likely
                best = i
    return best


@_jit
def _amaf_mean(rave: np.ndarray, s: int, mean: float, v: float, bias: float) -> float:
    """``mean`` of ``v`` visits blended with the AMAF mean of slot ``s`` of ``rave``
    (GRAVE's weight); an unvisited arm's (``v`` 0) is its AMAF mean, 0.5 unknown."""
    a = float(rave[s, 0]) if s >= 0 else 0.0
    if a <= 0.0:
        return mean if v > 0 else 0.5
    beta = a / (a + v + bias * a * v)
    return (1.0 - beta) * mean + beta * float(rave[s, 1]) / a


@_jit
def _follower(node: int, lead: int, size: np.ndarray, chance: np.ndarray) -> int:
    """``serial``: the role that answers ``lead`` at ``node``, where the two of them and
    no other role choose; -1 elsewhere (and when ``lead`` is -1: the switch is off)."""
    if lead < 0 or size[node, lead] <= 1 or chance[lead]:
        return -1
    other = -1
    for r in range(size.shape[1]):
        if r != lead and size[node, r] > 1 and not chance[r]:
            if other >= 0:
                return -1
            other = r
    return other


@_jit
def _joint(node: int, index: np.ndarray, size: np.ndarray) -> int:
    """The joint move of the per-role move indices ``index`` at ``node``."""
    joint = 0
    for r in range(size.shape[1]):
        joint = joint * size[node, r] + index[r]
    return joint


@_jit
def _answer(node: int, follower: int, index: np.ndarray, size: np.ndarray,
            child_base: np.ndarray, child: np.ndarray, joint_visits: np.ndarray,
            joint_total: np.ndarray, heur: np.ndarray, parent: float, c: float,
            rng: np.ndarray) -> int:
    """``serial``: UCB1 over the follower's moves knowing the other roles' ``index``
    (the lead's move among them), each reply's statistics those of its joint move."""
    index[follower] = 0
    stride = 1
    for r in range(follower + 1, size.shape[1]):
        stride *= size[node, r]
    return _ucb(joint_visits, joint_total, child_base[node] + _joint(node, index, size),
                stride, size[node, follower], parent, c, rng, 0.0, heur, child, -1,
                False, _NO_RAVE, _NO_AMAF, False, 0.0)


@_jit
def select(root: int, descents: int, c_turn: float, c_simultaneous: float, vmean: bool,
           lead: int, alpha: float, heur: np.ndarray, rng: np.ndarray, chance: np.ndarray,
           terminal: np.ndarray, proven: np.ndarray, count: np.ndarray, rsum: np.ndarray,
           size: np.ndarray, slot_base: np.ndarray, slot_visits: np.ndarray,
           slot_total: np.ndarray, child_base: np.ndarray, child: np.ndarray,
           joint_visits: np.ndarray, joint_total: np.ndarray,
           path_node: np.ndarray, path_joint: np.ndarray, path_virtual: np.ndarray,
           path_len: np.ndarray, leaf_kind: np.ndarray, leaf_node: np.ndarray,
           slot_move: np.ndarray, rave: np.ndarray, grave_ref: float, bias: float,
           ref: np.ndarray, where: np.ndarray, amaf: np.ndarray) -> None:
    """``descents`` descents from ``root``, each counting its visits at once (with
    ``vmean`` at the move's current mean, else as a loss), so later descents of the
    round spread out. Per descent: the path (node, joint move, virtual rewards), the
    leaf kind and node (for NEW_EDGE: the path's last node and joint move). Where
    ``lead`` (-1: none) and one other role choose at once, ``serial``: the other
    answers the lead's move by its joint moves' statistics (``joint_visits``,
    ``joint_total``, its rewards), as if it saw the move. ``alpha`` > 0 (``minimax``):
    where one role chooses, a move's mean is mixed with its child's ``heur``. ``rave``
    kept (``grave``): a role's moves are blended with their AMAF statistics at the
    deepest node of the descent so far where it chooses with ``grave_ref`` visits
    (``ref`` [roles], else the node itself; ``where``, ``amaf``: scratch)."""
    roles = size.shape[1]
    depth_limit = path_node.shape[1]
    index = np.zeros(roles, dtype=np.int64)
    for d in range(descents):
        node = root
        depth = 0
        ref[:] = -1
        while True:
            if _settled(node, terminal, proven):
                leaf_kind[d], leaf_node[d] = SETTLED, node
                break
            if depth == depth_limit:
                leaf_kind[d], leaf_node[d] = PLAYOUT, node
                break
            choosers = 0
            for r in range(roles):
                if size[node, r] > 1 and not chance[r]:
                    choosers += 1
            c = c_simultaneous if choosers > 1 else c_turn
            # "minimax": where one role alone moves, its move i leads to child i
            kids = (child_base[node] if alpha > 0.0 and _sole_chooser(node, size, chance) >= 0
                    else -1)
            follower = _follower(node, lead, size, chance)
            for r in range(roles):
                n = size[node, r]
                if n <= 1 or r == follower:
                    index[r] = 0
                elif chance[r]:
                    index[r] = min(int(_random(rng) * n), n - 1)
                else:
                    if count[node] >= grave_ref:
                        ref[r] = node
                    index[r] = _choose(node, r, size, slot_base, slot_visits, slot_total,
                                       count, c, rng, alpha, heur, child, kids, slot_move,
                                       rave, ref[r] if ref[r] >= 0 else node, where, amaf,
                                       bias)
            if follower >= 0:
                index[follower] = _answer(
                    node, follower, index, size, child_base, child, joint_visits, joint_total,
                    heur, slot_visits[_slot_of(node, lead, index[lead], size, slot_base)], c,
                    rng)
            joint = _joint(node, index, size)
            # the pending visit
            for r in range(roles):
                path_virtual[d, depth, r] = 0.0
                if size[node, r] <= 1 or chance[r]:
                    continue
                s = _slot_of(node, r, index[r], size, slot_base)
                if vmean:
                    v = slot_visits[s]
                    if v > 0:
                        mean = slot_total[s] / v
                    elif count[node] > 0:
                        mean = rsum[node, r] / count[node]
                    else:
                        mean = 0.5
                    path_virtual[d, depth, r] = mean
                    slot_total[s] += mean
                slot_visits[s] += 1
            if follower >= 0:
                e = child_base[node] + joint
                joint_visits[e] += 1
                if vmean:
                    joint_total[e] += path_virtual[d, depth, follower]
            count[node] += 1
            path_node[d, depth] = node
            path_joint[d, depth] = joint
            depth += 1
            nxt = child[child_base[node] + joint]
            if nxt < 0:
                leaf_kind[d], leaf_node[d] = NEW_EDGE, node
                break
            cycle = False
            for k in range(depth):
                if path_node[d, k] == nxt:
                    cycle = True
                    break
            if cycle and not _settled(nxt, terminal, proven):
                leaf_kind[d], leaf_node[d] = PLAYOUT, nxt
                break
            node = nxt
        path_len[d] = depth


@_jit
def lookup(rows: np.ndarray, parents: np.ndarray, joints: np.ndarray, meta: np.ndarray,
           table: np.ndarray, state: np.ndarray, child_base: np.ndarray, child: np.ndarray,
           out: np.ndarray, new: np.ndarray) -> int:
    """The node of each child state ``rows[i]`` (the joint move ``joints[i]`` at node
    ``parents[i]``): an existing one (a transposition), or a new node number (its
    state and table entry written, ``new[i]`` set; its moves come with :func:`fill`),
    or -1 when the pool is full. Links each parent's child pointer; returns the
    number of new nodes."""
    capacity = state.shape[0]
    made = 0
    for i in range(len(rows)):
        node = find(table, state, rows[i])
        new[i] = False
        if node < 0 and meta[0] < capacity:
            node = meta[0]
            meta[0] += 1
            state[node, :] = rows[i, :]
            _insert(table, rows[i], node)
            new[i] = True
            made += 1
        out[i] = node
        if node >= 0 and parents[i] >= 0:
            child[child_base[parents[i]] + joints[i]] = node
    return made


@_jit
def fill(nodes: np.ndarray, is_terminal: np.ndarray, legal: np.ndarray, goals: np.ndarray,
         move_role: np.ndarray, meta: np.ndarray, terminal: np.ndarray, proven: np.ndarray,
         value: np.ndarray, count: np.ndarray, rsum: np.ndarray, size: np.ndarray,
         slot_base: np.ndarray, slot_move: np.ndarray, slot_visits: np.ndarray,
         slot_total: np.ndarray, child_base: np.ndarray, child: np.ndarray,
         joint_visits: np.ndarray, joint_total: np.ndarray, rave: np.ndarray) -> bool:
    """Write new nodes from the engine's read-out of their states: terminal flags,
    legal move columns ``legal[i]`` (bool per move), ``goals[i]`` (rewards per role,
    used at terminal states). A non-terminal state where a role has no legal move is
    a dead end worth 0 to everyone. False (nothing written) when the slot or child
    pools lack room: the caller grows them and calls again."""
    roles = size.shape[1]
    slots_needed, children_needed = 0, 0
    for i in range(len(nodes)):
        if is_terminal[i]:
            continue
        joint = 1
        for m in range(legal.shape[1]):
            if legal[i, m]:
                slots_needed += 1
        for r in range(roles):
            n = 0
            for m in range(legal.shape[1]):
                if legal[i, m] and move_role[m] == r:
                    n += 1
            joint *= n
        children_needed += joint
    if meta[1] + slots_needed > len(slot_move) or meta[2] + children_needed > len(child):
        return False
    for i in range(len(nodes)):
        node = nodes[i]
        count[node] = 0.0
        proven[node] = False
        for r in range(roles):
            rsum[node, r] = 0.0
            size[node, r] = 0
        slot_base[node] = meta[1]
        child_base[node] = meta[2]
        terminal[node] = is_terminal[i]
        if is_terminal[i]:
            for r in range(roles):
                value[node, r] = goals[i, r]
            continue
        joint = 1
        for r in range(roles):
            for m in range(legal.shape[1]):
                if legal[i, m] and move_role[m] == r:
                    s = meta[1]
                    slot_move[s] = m
                    slot_visits[s] = 0.0
                    slot_total[s] = 0.0
                    if len(rave):   # kept under ``grave`` only
                        rave[s, 0] = 0.0
                        rave[s, 1] = 0.0
                    meta[1] += 1
                    size[node, r] += 1
            joint *= size[node, r]
        if joint == 0:    # a role without a legal move: a dead end
            terminal[node] = True
            for r in range(roles):
                value[node, r] = 0.0
                size[node, r] = 0
            continue
        for j in range(joint):
            child[meta[2] + j] = _EMPTY
        if len(joint_visits):   # kept under ``serial`` only
            for j in range(joint):
                joint_visits[meta[2] + j] = 0
                joint_total[meta[2] + j] = 0.0
        meta[2] += joint
    return True


@_jit
def prove(node: int, chance: np.ndarray, role_max: np.ndarray, terminal: np.ndarray,
          proven: np.ndarray, value: np.ndarray, size: np.ndarray, child_base: np.ndarray,
          child: np.ndarray) -> bool:
    """MCTS-Solver: ``node`` becomes proven when its children's exact values decide it.

    One role choosing (others forced, no chance): a child with the role's best goal
    proves it at once; else, when every child is exact, the best child (first of
    equals). Nature choosing (with at most one role): the expectation over nature's
    uniform moves of the best move, when every child is exact. Two roles choosing in
    a constant-sum game: when every child is exact, the matrix game's value (a pure
    saddle point, else the compiled simplex of :mod:`solvers.matrix.simplex_kernels`).
    Otherwise (general-sum, three or more choosers) it stays unproven.
    """
    roles = size.shape[1]
    chooser, choosers, nature = -1, 0, 0
    joints = 1
    for r in range(roles):
        n = size[node, r]
        joints *= n
        if n > 1:
            if chance[r]:
                nature += 1
            else:
                choosers += 1
                chooser = r
    base = child_base[node]
    for j in range(joints):
        c = child[base + j]
        if c >= 0 and (terminal[c] or proven[c]) and choosers == 1 and nature == 0 \
                and value[c, chooser] >= role_max[chooser] - _EPS:
            value[node, :] = value[c, :]
            proven[node] = True
            return True
    for j in range(joints):
        c = child[base + j]
        if c < 0 or not (terminal[c] or proven[c]):
            return False
    if choosers <= 1:
        # expectation over nature's joint moves for each move of the chooser
        moves = size[node, chooser] if choosers == 1 else 1
        best = -1.0
        stride = 1
        if choosers == 1:
            for r in range(chooser + 1, roles):
                stride *= size[node, r]
        group = joints // moves
        best_move = 0
        for a in range(moves):
            total = 0.0
            for j in range(joints):
                if choosers == 1 and (j // stride) % moves != a:
                    continue
                total += value[child[base + j], chooser if choosers == 1 else 0]
            mean = total / group
            if mean > best + _EPS:
                best, best_move = mean, a
        for r in range(roles):
            total = 0.0
            for j in range(joints):
                if choosers == 1 and (j // stride) % moves != best_move:
                    continue
                total += value[child[base + j], r]
            value[node, r] = total / group
        proven[node] = True
        return True
    if choosers != 2 or nature != 0 or roles != 2:
        return False
    rows, cols = size[node, 0], size[node, 1]
    total = value[child[base], 0] + value[child[base], 1]
    for j in range(joints):
        c = child[base + j]
        if abs(value[c, 0] + value[c, 1] - total) > 1e-6:
            return False   # not constant-sum: no unique value
    for i in range(rows):
        for j in range(cols):
            v = value[child[base + i * cols + j], 0]
            saddle = True
            for k in range(rows):   # the row player cannot gain
                if value[child[base + k * cols + j], 0] > v + _EPS:
                    saddle = False
                    break
            if saddle:
                for k in range(cols):   # nor the column player
                    if value[child[base + i * cols + k], 0] < v - _EPS:
                        saddle = False
                        break
            if saddle:
                value[node, :] = value[child[base + i * cols + j], :]
                proven[node] = True
                return True
    # a mixed equilibrium: the zero-sum game of the row player's rewards
    a = np.empty((rows, cols))
    for i in range(rows):
        for j in range(cols):
            a[i, j] = value[child[base + i * cols + j], 0]
    x, y = np.empty(rows), np.empty(cols)
    gain = solve_one(a, np.empty((rows + 1, cols + rows + 1)), np.empty(rows, np.int64), x, y)
    if not gain <= GAIN_TOLERANCE:
        return False
    v = 0.0
    for i in range(rows):
        for j in range(cols):
            v += x[i] * a[i, j] * y[j]
    value[node, 0] = v
    value[node, 1] = total - v
    proven[node] = True
    return True


@_jit
def backup(descents: int, rewards: np.ndarray, settled: np.ndarray, vmean: bool,
           solver: bool, lead: int, alpha: float, heur: np.ndarray, chance: np.ndarray,
           role_max: np.ndarray,
           move_role: np.ndarray,
           path_node: np.ndarray, path_joint: np.ndarray, path_virtual: np.ndarray,
           path_len: np.ndarray, terminal: np.ndarray, proven: np.ndarray, value: np.ndarray,
           rsum: np.ndarray, size: np.ndarray, slot_base: np.ndarray, slot_move: np.ndarray,
           slot_total: np.ndarray, child_base: np.ndarray, child: np.ndarray,
           joint_total: np.ndarray, mast_sums: np.ndarray, mast_counts: np.ndarray,
           mark: np.ndarray, stamp: int, rave: np.ndarray, played: np.ndarray,
           seen: np.ndarray) -> None:
    """Back up each descent's reward along its path (visits were counted on the way
    down; the pending rewards are taken back), try the MCTS-Solver proofs bottom-up
    from a settled leaf, and add the tree's moves to the MAST statistics (each move
    once a descent: ``mark`` [moves] holds the last descent's number, ``stamp + d``,
    which the caller keeps growing from round to round). ``alpha`` > 0 (``minimax``):
    the path's implicit minimax values (:func:`_implicit`) are brought up to date.
    ``rave`` kept (``grave``): every move slot of a node on the path whose move its
    role played there or later (in the tree, or in the playout: ``played`` [descents,
    moves]) gets the AMAF visit and reward (``seen``: scratch [moves])."""
    roles = size.shape[1]
    index = np.zeros(roles, dtype=np.int64)
    for d in range(descents):
        proving = solver and settled[d]
        if len(rave):
            seen[:] = played[d]
        for depth in range(path_len[d] - 1, -1, -1):
            node = path_node[d, depth]
            _decode(node, path_joint[d, depth], size, index)
            if len(rave):
                _amaf_backup(node, index, rewards[d], chance, size, slot_base, slot_move,
                             rave, seen)
            follower = _follower(node, lead, size, chance)
            if follower >= 0:
                joint_total[child_base[node] + path_joint[d, depth]] += rewards[d, follower] - (
                    path_virtual[d, depth, follower] if vmean else 0.0)
            for r in range(roles):
                rsum[node, r] += rewards[d, r]
                if size[node, r] <= 1 or chance[r]:
                    continue
                s = _slot_of(node, r, index[r], size, slot_base)
                slot_total[s] += rewards[d, r] - (path_virtual[d, depth, r] if vmean else 0.0)
                m = slot_move[s]
                if mark[m] != stamp + d:
                    mark[m] = stamp + d
                    mast_counts[m] += 1.0
                    mast_sums[m] += rewards[d, move_role[m]]
            if proving and not proven[node]:
                proving = prove(node, chance, role_max, terminal, proven, value, size,
                                child_base, child)
            if alpha > 0.0:
                _implicit(node, chance, terminal, proven, value, heur, size, child_base, child)


@_jit
def _amaf_backup(node: int, index: np.ndarray, reward: np.ndarray, chance: np.ndarray,
                 size: np.ndarray, slot_base: np.ndarray, slot_move: np.ndarray,
                 rave: np.ndarray, seen: np.ndarray) -> None:
    """``grave``: the moves played at ``node`` (``index``) join ``seen``, then each
    chooser's slot there whose move is in ``seen`` counts the descent's ``reward``."""
    for r in range(size.shape[1]):
        if size[node, r] > 1 and not chance[r]:
            seen[slot_move[_slot_of(node, r, index[r], size, slot_base)]] = True
    for r in range(size.shape[1]):
        if size[node, r] <= 1 or chance[r]:
            continue
        first = _slot_of(node, r, 0, size, slot_base)
        for s in range(first, first + size[node, r]):
            if seen[slot_move[s]]:
                rave[s, 0] += 1.0
                rave[s, 1] += reward[r]


@_jit
def _implicit(node: int, chance: np.ndarray, terminal: np.ndarray, proven: np.ndarray,
              value: np.ndarray, heur: np.ndarray, size: np.ndarray, child_base: np.ndarray,
              child: np.ndarray) -> None:
    """``minimax`` (implicit minimax backups, Lanctot et al. 2014): ``heur[node]``, role
    0's value, becomes the best of its known children's for the role that alone
    moves there (an exact node: its value); elsewhere it keeps its evaluation."""
    if terminal[node] or proven[node]:
        heur[node] = value[node, 0]
        return
    chooser = _sole_chooser(node, size, chance)
    if chooser < 0:
        return
    best = -1.0
    for i in range(size[node, chooser]):
        c = child[child_base[node] + i]
        if c >= 0:
            best = max(best, heur[c] if chooser == 0 else 1.0 - heur[c])
    if best >= 0.0:
        heur[node] = best if chooser == 0 else 1.0 - best


@_jit
def undo(descents: int, vmean: bool, lead: int, chance: np.ndarray, path_node: np.ndarray,
         path_joint: np.ndarray, path_virtual: np.ndarray, path_len: np.ndarray,
         count: np.ndarray, size: np.ndarray, slot_base: np.ndarray,
         slot_visits: np.ndarray, slot_total: np.ndarray, child_base: np.ndarray,
         joint_visits: np.ndarray, joint_total: np.ndarray) -> None:
    """Take back the pending visits of descents that were not played out."""
    roles = size.shape[1]
    index = np.zeros(roles, dtype=np.int64)
    for d in range(descents):
        for depth in range(path_len[d]):
            node = path_node[d, depth]
            count[node] -= 1
            _decode(node, path_joint[d, depth], size, index)
            follower = _follower(node, lead, size, chance)
            if follower >= 0:
                e = child_base[node] + path_joint[d, depth]
                joint_visits[e] -= 1
                if vmean:
                    joint_total[e] -= path_virtual[d, depth, follower]
            for r in range(roles):
                if size[node, r] <= 1 or chance[r]:
                    continue
                s = _slot_of(node, r, index[r], size, slot_base)
                slot_visits[s] -= 1
                if vmean:
                    slot_total[s] -= path_virtual[d, depth, r]


@_jit
def _pieces(row: np.ndarray, mask: np.ndarray) -> int:
    """How many facts of ``mask`` the packed state ``row`` holds."""
    n = 0
    for k in range(len(row)):
        word = row[k] & mask[k]
        while word:
            word &= word - np.uint64(1)
            n += 1
    return n


@_jit
def _balance(row: np.ndarray, masks: np.ndarray, role: int) -> tuple[float, float]:
    """``material``: (``role``'s pieces less the other role's) over all pieces, and
    all pieces, at the packed state ``row`` (two roles; ``masks[r]``: role r's pieces)."""
    mine = _pieces(row, masks[role]) + 1e-6
    theirs = _pieces(row, masks[1 - role]) + 1e-6
    return (mine - theirs) / (mine + theirs), mine + theirs


@_jit
def seed(descents: np.ndarray, rows: np.ndarray, nodes: np.ndarray, masks: np.ndarray,
         weight: float, reference_visits: float, chance: np.ndarray, state: np.ndarray,
         count: np.ndarray, rsum: np.ndarray, size: np.ndarray, slot_base: np.ndarray,
         slot_visits: np.ndarray, slot_total: np.ndarray, path_node: np.ndarray,
         path_joint: np.ndarray, path_len: np.ndarray) -> int:
    """``material`` (Sancho's piece heuristic): each new edge ``descents[i]`` ended on
    (child state ``rows[i]``, linked to node ``nodes[i]``) where one role chooses and
    the material balance differs from the reference's, its move slot gets ``weight``
    visits at a value: the reference's mean (shrunk to 0.5 while it has few visits)
    moved toward 1 or 0 by a sigmoid of the balance's change. The reference is the
    deepest node of the descent with ``reference_visits`` visits whose move along
    it leaves the balance alone (not in the middle of an exchange), else the root.
    A slot is seeded once. The number of slots seeded."""
    index = np.zeros(size.shape[1], dtype=np.int64)
    seeded = 0
    for i in range(len(descents)):
        d = descents[i]
        last = path_len[d] - 1
        if nodes[i] < 0 or last < 0:
            continue
        parent = path_node[d, last]
        role = -1
        choosers = 0
        for r in range(size.shape[1]):
            if size[parent, r] > 1 and not chance[r]:
                role = r
                choosers += 1
        if choosers != 1:
            continue
        after, pieces = _balance(rows[i], masks, role)
        reference = path_node[d, 0]
        below = after
        for k in range(last, -1, -1):
            q = path_node[d, k]
            here = _balance(state[q], masks, role)[0]
            if count[q] > reference_visits and abs(here - below) < 1e-9:
                reference = q
                break
            below = here
        before = _balance(state[reference], masks, role)[0]
        if abs(after - before) < 1e-9:
            continue
        h = 1.0 / (1.0 + math.exp(-pieces / 4.0 * (after - before)))
        mean = rsum[reference, role] / count[reference] if count[reference] > 0 else 0.5
        trust = count[reference] / 50.0
        mean = (mean * trust + 0.5) / (trust + 1.0)
        if h > 0.5:
            value = mean + (1.0 - mean) * (h - 0.5) / 0.5
        else:
            value = mean - mean * (0.5 - h) / 0.5
        _decode(parent, path_joint[d, last], size, index)
        s = _slot_of(parent, role, index[role], size, slot_base)
        if slot_visits[s] >= weight + 1.0:
            continue   # seeded already: an edge re-made after recycling, or twice in a round
        slot_visits[s] += weight
        slot_total[s] += weight * value
        seeded += 1
    return seeded


@_jit
def reachable(root: int, n_nodes: int, terminal: np.ndarray, proven: np.ndarray,
              count: np.ndarray, min_count: float, size: np.ndarray, child_base: np.ndarray,
              child: np.ndarray) -> np.ndarray:
    """The nodes reachable from ``root`` (a bool per node) through nodes with at least
    ``min_count`` visits; exact children (terminal or proven) are kept whatever their
    visits (the solver's proofs need them), and below a proven node only they are."""
    keep = np.zeros(n_nodes, dtype=np.bool_)
    stack = np.empty(n_nodes, dtype=np.int64)
    stack[0] = root
    top = 1
    keep[root] = True
    roles = size.shape[1]
    while top:
        top -= 1
        node = stack[top]
        if terminal[node]:
            continue
        joints = 1
        for r in range(roles):
            joints *= size[node, r]
        for j in range(joints):
            c = child[child_base[node] + j]
            if c < 0 or keep[c]:
                continue
            exact = terminal[c] or proven[c]
            if exact or (not proven[node] and count[c] >= min_count):
                keep[c] = True
                stack[top] = c
                top += 1
    return keep


@_jit
def compact(number: np.ndarray, meta: np.ndarray, state: np.ndarray,
            outer: np.ndarray, free: np.ndarray, terminal: np.ndarray, proven: np.ndarray,
            value: np.ndarray, heur: np.ndarray, count: np.ndarray, rsum: np.ndarray,
            size: np.ndarray, slot_base: np.ndarray, slot_move: np.ndarray, slot_visits: np.ndarray,
            slot_total: np.ndarray, child_base: np.ndarray, child: np.ndarray,
            joint_visits: np.ndarray, joint_total: np.ndarray, rave: np.ndarray) -> None:
    """Move the nodes kept to their numbers ``number`` (in order, -1 where dropped),
    their move slots and children with them, in place: nodes, slots and children lie
    in creation order, so each goes to where it is or before. A pointer to a dropped
    child becomes -1. ``meta``: the nodes, slots and children left."""
    roles = size.shape[1]
    kept, slots, joints = 0, 0, 0
    for old in range(meta[0]):
        new = number[old]
        if new < 0:
            continue
        kept += 1
        state[new, :] = state[old, :]
        outer[new, :] = outer[old, :]
        free[new, :] = free[old, :]
        terminal[new] = terminal[old]
        proven[new] = proven[old]
        count[new] = count[old]
        heur[new] = heur[old]
        n_slots, n_joints = 0, 1
        for r in range(roles):
            value[new, r] = value[old, r]
            rsum[new, r] = rsum[old, r]
            size[new, r] = size[old, r]
            n_slots += size[old, r]
            n_joints *= size[old, r]
        if terminal[old]:
            n_joints = 0
        first = slot_base[old]
        for k in range(n_slots):
            slot_move[slots + k] = slot_move[first + k]
            slot_visits[slots + k] = slot_visits[first + k]
            slot_total[slots + k] = slot_total[first + k]
            if len(rave):
                rave[slots + k, 0] = rave[first + k, 0]
                rave[slots + k, 1] = rave[first + k, 1]
        first = child_base[old]
        for k in range(n_joints):
            c = child[first + k]
            child[joints + k] = number[c] if c >= 0 else _EMPTY
            if len(joint_visits):
                joint_visits[joints + k] = joint_visits[first + k]
                joint_total[joints + k] = joint_total[first + k]
        slot_base[new] = slots
        child_base[new] = joints
        slots += n_slots
        joints += n_joints
    meta[0], meta[1], meta[2] = kept, slots, joints


@_jit
def rebuild_table(table: np.ndarray, state: np.ndarray, n_nodes: int) -> None:
    """Enter nodes ``0 .. n_nodes - 1`` in an emptied table."""
    for node in range(n_nodes):
        _insert(table, state[node], node)


def warm_up() -> float:
    """Compile (or load from the disk cache) every kernel, on a two-node graph with
    the arrays' real types; the seconds it took (the agent's spare worker pays them
    while idle, never a clock)."""
    started = time.perf_counter()
    i4, i8, b1, u8 = np.int32, np.int64, np.bool_, np.uint64
    roles, nodes, moves = 2, 4, 2
    state = np.zeros((nodes, 1), dtype=u8)
    table = np.full(16, -1, dtype=i4)
    meta = np.zeros(4, dtype=i8)
    terminal, proven = np.zeros(nodes, dtype=b1), np.zeros(nodes, dtype=b1)
    value, count, rsum = np.zeros((nodes, roles)), np.zeros(nodes), np.zeros((nodes, roles))
    size = np.zeros((nodes, roles), dtype=i4)
    slot_base, child_base = np.zeros(nodes, dtype=i8), np.zeros(nodes, dtype=i8)
    slot_move, slot_visits, slot_total = np.zeros(8, dtype=i4), np.zeros(8), np.zeros(8)
    child = np.full(8, -1, dtype=i4)
    joint_visits, joint_total = np.zeros(8, dtype=i4), np.zeros(8, dtype=np.float32)
    rave = np.zeros((8, 2), dtype=np.float32)
    chance, role_max = np.zeros(roles, dtype=b1), np.ones(roles)
    move_role = np.array([0, 1], dtype=i8)
    rows = np.array([[1], [2]], dtype=u8)
    out, new = np.zeros(2, dtype=i8), np.zeros(2, dtype=b1)
    lookup(rows[:1], np.array([-1], dtype=i8), np.zeros(1, dtype=i8), meta, table, state,
           child_base, child, out[:1], new[:1])
    legal = np.array([[True, True]])
    fill(out[:1], np.zeros(1, dtype=b1), legal, np.zeros((1, roles)), move_role, meta,
         terminal, proven, value, count, rsum, size, slot_base, slot_move, slot_visits,
         slot_total, child_base, child, joint_visits, joint_total, rave)
    paths = (np.zeros((1, 4), dtype=i8), np.zeros((1, 4), dtype=i8), np.zeros((1, 4, roles)),
             np.zeros(1, dtype=i8), np.zeros(1, dtype=i8), np.zeros(1, dtype=i8))
    rng = np.array([1], dtype=u8)
    heur = np.full(nodes, 0.5)
    select(0, 1, 0.7, 0.7, True, 0, 0.4, heur, rng, chance, terminal, proven, count, rsum, size,
           slot_base, slot_visits, slot_total, child_base, child, joint_visits, joint_total,
           *paths, slot_move, rave, 1.0, 1e-4, np.full(roles, -1, dtype=i8),
           np.full(moves, -1, dtype=i8), np.zeros(moves, dtype=i8))
    lookup(rows[1:], np.zeros(1, dtype=i8), np.zeros(1, dtype=i8), meta, table, state,
           child_base, child, out[1:], new[1:])
    fill(out[1:], np.ones(1, dtype=b1), legal, np.ones((1, roles)), move_role, meta,
         terminal, proven, value, count, rsum, size, slot_base, slot_move, slot_visits,
         slot_total, child_base, child, joint_visits, joint_total, rave)
    backup(1, np.ones((1, roles)), np.ones(1, dtype=b1), True, True, 0, 0.4, heur, chance,
           role_max,
           move_role, paths[0], paths[1], paths[2], paths[3], terminal, proven, value, rsum,
           size, slot_base, slot_move, slot_total, child_base, child, joint_total,
           np.zeros(moves), np.zeros(moves), np.full(moves, -1, dtype=i8), 0, rave,
           np.zeros((1, moves), dtype=b1), np.zeros(moves, dtype=b1))
    undo(0, True, 0, chance, paths[0], paths[1], paths[2], paths[3], count, size, slot_base,
         slot_visits, slot_total, child_base, joint_visits, joint_total)
    prove(0, chance, role_max, terminal, proven, value, size, child_base, child)
    masks = np.array([[1], [2]], dtype=u8)
    seed(np.zeros(1, dtype=i8), rows[1:], out[1:], masks, 6.0, 200.0, chance, state, count,
         rsum, size, slot_base, slot_visits, slot_total, paths[0], paths[1], paths[3])
    keep = reachable(0, int(meta[0]), terminal, proven, count, 0.0, size, child_base, child)
    compact(np.cumsum(keep) - 1, meta, state, state.copy(), state.copy(), terminal,
            proven, value, heur, count, rsum, size, slot_base, slot_move, slot_visits,
            slot_total, child_base, child, joint_visits, joint_total, rave)
    rebuild_table(table, state, int(meta[0]))
    find(table, state, rows[0])
    return time.perf_counter() - started
