"""What uniform random games on the start clock tell the graph search, as they tell
Sancho: the game's material (enhancement ``material``: Sancho's piece heuristic, used
by :func:`agent.search.graph_kernels.seed`) and the exploration constant
(``explore``: Sancho's exploration bias, from the games' lengths; :func:`exploration`).

A *piece set* is the facts of one board function (arity 3 or 4) whose *piece
argument*, the argument with the fewest values (2 to 12; coordinates come first, so
a tie takes the last), has one value: ``cell(?, ?, white)``. Uniform random games
from the current state decide which sets are a role's material: a set whose count at
the end correlates with the role's goal (Pearson, at least ``MIN_CORRELATION``, as
Sancho's 0.06) and that stays unchanged on at least half the steps (pieces are
captured now and then, not every move: connectFour's discs change on every other
one). Each of the two roles needs some, or the game gets none.

Random games are enough here where a learnt weighting of positions was not
(docs/agent.md: a regression on fact groups valued where pieces stand, since random
playouts race): a count is one number per role, and the search, not the sample,
judges the exchanges it seeds.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from gdl.reasoning.batch_machine import BatchMachine, pack_ints, packed_to_bits

MIN_CORRELATION = 0.06   # Sancho's MIN_HEURISTIC_CORRELATION
MIN_STILL = 0.5          # a set's count stays the same on at least this share of steps
MIN_PIECES = 6           # facts a piece set has at least (Sancho's MIN_PIECES_THRESHOLD)
PIECE_VALUES = (2, 12)   # values a piece argument has (roles or piece kinds)
SAMPLE_GAMES = 1024
SAMPLE_WIDTH = 256      # games played side by side
SAMPLE_STEPS = 1000      # a sample game this long is dropped (games that never end)
REFERENCE_VISITS = 200   # a seed's reference node has more visits than this (Sancho's)
BIAS_RANGE = (0.5, 1.2)  # "explore": Sancho's exploration bias stays within these
MATERIAL_BIAS = 0.7      # "explore": and is this share of it where a game has material
# "minimax", and "cutoff" where there is material: pieces ahead worth a logistic unit
# (as ``seed``'s)
PIECE_SCALE = 4.0


@dataclass(frozen=True)
class Material:
    """Each role's piece facts (``masks[r]``: packed like a state), what they are
    called, and how their final counts correlated with the role's goal."""

    masks: np.ndarray
    names: tuple[str, ...]
    correlation: tuple[float, ...]

    def weight(self, packed: np.ndarray, role: int) -> float:
        """Sancho's seed weight at a root: 6 visits at equal material, down to 2 the
        further ``role`` is ahead or behind (then position matters more)."""
        counts = _counts(packed[None, :], self.masks)[:, 0]
        average = counts.mean()
        if average <= 0:
            return 2.0
        return float(max(2, int(6.5 - abs(counts[role] - average) * 48 / average)))

    def pieces(self) -> tuple[np.ndarray, np.ndarray]:
        """The piece facts of both roles and the sign each counts with in role 0's
        pieces ahead (+1 its own, -1 role 1's)."""
        held = packed_to_bits(self.masks, 64 * self.masks.shape[1])
        facts = [np.flatnonzero(row) for row in held]
        return (np.concatenate(facts),
                np.concatenate([np.ones(len(facts[0])), -np.ones(len(facts[1]))]))

    def evaluate(self, packed: np.ndarray) -> np.ndarray:
        """``minimax``'s evaluation of the packed states ``packed`` [rows, words]: role
        0's value in (0, 1), a logistic of its pieces ahead."""
        counts = _counts(packed, self.masks).astype(float)
        return 1.0 / (1.0 + np.exp((counts[1] - counts[0]) / PIECE_SCALE))


def piece_sets(facts: list[tuple]) -> list[tuple[str, np.ndarray]]:
    """The candidate piece sets of a game's facts: (name, fact indices)."""
    by_function: dict[tuple[str, int], list[int]] = {}
    for i, fact in enumerate(facts):
        if isinstance(fact, tuple) and 4 <= len(fact) <= 5:
            by_function.setdefault((str(fact[0]), len(fact)), []).append(i)
    out = []
    for (name, width), members in sorted(by_function.items()):
        values = [{facts[i][k] for i in members} for k in range(1, width)]
        fits = [k for k, v in enumerate(values) if PIECE_VALUES[0] <= len(v) <= PIECE_VALUES[1]]
        if not fits:
            continue
        fewest = min(len(values[k]) for k in fits)
        piece = max(k for k in fits if len(values[k]) == fewest) + 1
        for value in sorted(values[piece - 1], key=str):
            chosen = np.array([i for i in members if facts[i][piece] == value])
            if len(chosen) >= MIN_PIECES:
                args = ["?"] * (width - 1)
                args[piece - 1] = str(value)
                out.append((f"{name}({', '.join(args)})", chosen))
    return out


def _counts(packed: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """[sets, rows] how many facts of each mask each packed state holds."""
    held = packed[None, :, :] & masks[:, None, :]
    return np.unpackbits(held.view(np.uint8), axis=2).sum(axis=2)


@dataclass(frozen=True)
class Sample:
    """Uniform random games from one state: the candidate piece sets (``masks[set]``
    packed like a state), each set's count at each
    game's end (``final[set, game]``), the goals there (``result[game, role]``, in
    [0, 1]), the games' lengths in steps, and on how many of all their steps each
    set's count stayed the same (``still[set]`` of ``steps``)."""

    sets: list[tuple[str, np.ndarray]]
    masks: np.ndarray
    final: np.ndarray
    result: np.ndarray
    lengths: np.ndarray
    still: np.ndarray
    steps: int


def sample(bm: BatchMachine, facts: list[tuple], goals, start: np.ndarray,
           deadline: float, rng: np.random.Generator) -> Sample | None:
    """Uniform random games from the packed state ``start`` until ``deadline`` (at most
    ``SAMPLE_GAMES``; those still going then are dropped); ``goals(batch, rows)``:
    [rows, roles] goals in [0, 1] at terminal batch rows. None when none ended."""
    sets = piece_sets(facts)
    masks = pack_ints([sum(1 << int(i) for i in ix) for _, ix in sets], bm.n_words)
    columns = [np.flatnonzero(bm.move_role == r) for r in range(len(bm.roles))]
    every_move = np.concatenate(columns)
    finals, results, lengths = [], [], []
    still, steps, games = np.zeros(len(sets)), 0, 0
    width = max(64, min(SAMPLE_WIDTH, bm.state_chunk))
    while games < SAMPLE_GAMES and time.monotonic() < deadline:
        packed = np.repeat(start[None, :], width, axis=0)
        before = _counts(packed, masks)
        for step in range(SAMPLE_STEPS):
            if time.monotonic() >= deadline or not len(packed):
                break
            batch = bm.evaluate_states(packed)
            ended = np.flatnonzero(batch.terminal)
            if len(ended):
                finals.append(before[:, ended])
                results.append(goals(batch, ended))
                lengths.append(np.full(len(ended), step))
                games += len(ended)
            picks = []
            for cols in columns:
                legal = batch.legal[:, cols]
                keys = np.where(legal, rng.random(legal.shape), -1.0)
                picks.append(cols[keys.argmax(axis=1)])
            go = np.flatnonzero(~batch.terminal & batch.legal[:, every_move].any(axis=1))
            if not len(go):
                break
            packed = bm.next_states(batch, go, [p[go] for p in picks])
            after = _counts(packed, masks)
            still += (after == before[:, go]).sum(axis=1)
            steps += len(go)
            before = after
    if not finals:
        return None
    return Sample(sets, masks, np.concatenate(finals, axis=1), np.concatenate(results),
                  np.concatenate(lengths), still, steps)


def learn(found: Sample, bm: BatchMachine) -> tuple[Material | None, str]:
    """The game's material from the random games ``found`` (see the module docstring);
    (None, why) where there is none."""
    n_roles = len(bm.roles)
    if n_roles != 2:
        return None, "off: not two roles"
    if not found.sets:
        return None, "off: no board function with a piece argument"
    games = len(found.lengths)
    chosen: list[list[int]] = [[] for _ in range(n_roles)]
    best = [0.0] * n_roles
    for k in range(len(found.sets)):
        if found.steps and found.still[k] / found.steps < MIN_STILL:
            continue
        for r in range(n_roles):
            c = _correlation(found.final[k], found.result[:, r])
            if c >= MIN_CORRELATION:
                chosen[r].append(k)
                best[r] = max(best[r], c)
    if not all(chosen):
        return None, f"off: no piece set correlates with each role's goal ({games} games)"
    masks = [np.bitwise_or.reduce(found.masks[c], axis=0) for c in chosen]
    out = Material(np.array(masks), tuple(" + ".join(found.sets[k][0] for k in c)
                                          for c in chosen), tuple(best))
    described = "; ".join(f"{bm.roles[r]}: {out.names[r]} (r = {best[r]:.2f})"
                          for r in range(n_roles))
    return out, f"on: {described}; {games} games"


def exploration(found: Sample, material: bool) -> tuple[float, str]:
    """``explore``: Sancho's exploration bias from the random games' lengths (short
    games explore more), 0.7 of it where the game has material, as the UCB1 constant
    of rewards in [0, 1] at the variance of a fair coin: ``c = bias * sqrt(0.5)``.
    Sancho's term is ``bias * sqrt(min(0.5, V) * 2 ln N / n)`` with ``V = variance +
    sqrt(2 ln N / n)``, so at that variance this ``c`` is its value for much visited
    arms; an arm with fewer than about ``32 ln N`` visits gets up to ``bias`` (our
    constant follows neither the variance nor the visits)."""
    lengths = found.lengths.astype(float)
    mean, spread = lengths.mean(), lengths.std()
    middle = (lengths.max() + lengths.min()) / 2
    bias = 15 / max(1.0, mean + (middle - mean) * spread / max(mean, 1.0)) + 0.4
    bias = min(BIAS_RANGE[1], max(BIAS_RANGE[0], bias))
    if material:
        bias *= MATERIAL_BIAS
    c = float(bias * math.sqrt(0.5))
    return c, (f"c = {c:.2f}: random games of {mean:.1f} steps (sd {spread:.1f}, "
               f"{lengths.min():.0f}-{lengths.max():.0f}){', material' if material else ''}")


def _correlation(x: np.ndarray, y: np.ndarray) -> float:
    if x.std() == 0 or y.std() == 0:
        return 0.0
    return float(np.corrcoef(x, y)[0, 1])
