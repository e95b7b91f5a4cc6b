"""Playouts of the agent's search: many at once over the bit-vector engine, or one by one.

A playout runs joint moves from a leaf state to a terminal state (or to the cutoff
depth, where the goals of the state stand in for the result: early playout
termination with a goal-based evaluation, as CadiaPlayer and Sancho do in games
whose goals grow with the position). Its result is the goal vector scaled to
[0, 1] and the set of ``(role, move)`` pairs it played (for MAST and RAVE).

Move choice (Finnsson & Björnsson, "Learning Simulation Control in General
Game-Playing Agents", AAAI 2010): uniform, or MAST over the average reward of each
move over every simulation so far (unseen moves count 0.5): epsilon-greedy (with
probability ``epsilon`` a uniform move, else the best, ties at random), or with a
``temperature`` Gibbs sampling, ``P(a) ~ exp(value(a) / temperature)``, as
CadiaPlayer first did (Finnsson & Björnsson, AAAI 2008; their temperature 10 on
goals 0-100 is 0.1 here). Chance roles (GDL's ``random``) always move uniformly.

:class:`BatchPlayouts` (a compiled engine): with the compiled kernels in
(:mod:`gdl.reasoning.kernels`), whole playouts run in compiled code
(:class:`gdl.reasoning.playout_net.PlayoutNet`: 64 playouts a machine word, no Python
per step, the moves drawn inside from a seed this class passes), for every batch
size (a single playout too: 2.8x a ScalarPlayouts playout on connectFour, 2.9x on
breakthrough). Without them (and for ``decisive``) the K leaf states are packed into
rows of :class:`gdl.reasoning.batch_machine.BatchMachine` and advanced together in
numpy: one ``evaluate_states`` (terminal, legal, goals) and one ``next_states`` per
step for all the playouts still running; moves are drawn with random keys over each
role's legal columns (MAST's greedy rows key by value), so no Python loop runs per
playout or per move. :class:`ScalarPlayouts` (any engine) plays one at a time.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from bisect import bisect_right
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import accumulate

import numpy as np

from gdl.reasoning import kernels
from gdl.reasoning.batch_machine import BatchMachine, batch_machine_of, pack_ints
from gdl.reasoning.playout_net import PlayoutNet, playout_net_of
from gdl.reasoning.win_moves import winning_moves_of
from solvers.errors import GameError

MAX_STEPS = 10_000  # a playout this long is cut off and evaluated (games that never end)
NEUTRAL = 0.5       # reward of a role whose goal is ill-defined at a cut-off state
MIN_BATCH = 32      # numpy path: fewer playouts than this run one at a time (measured: a
#                     batch of 32 ran at 0.8x, of 64 at 1.3-2.5x the rate of single playouts)
GIBBS_REFRESH = 32  # a cached Gibbs distribution is redrawn after this many learned playouts
GIBBS_CACHE = 4096  # legal-move tuples whose Gibbs distribution is kept (then cleared)
GIBBS_HITS = 0.8    # the share of hits in the first GIBBS_CACHE draws that keeps the cache
KERNEL_PLAYOUTS = 1024  # compiled playouts a call, between deadline checks

Played = set[tuple[int, Hashable]]
Outcome = tuple[list[float], Played]


@dataclass(frozen=True)
class PlayoutPolicy:
    """How playouts choose moves and when they stop."""

    mast: bool = False
    epsilon: float = 0.4      # MAST: share of uniform moves (Finnsson & Björnsson 2010)
    temperature: float = 0.0  # MAST: > 0 draws every move by Gibbs sampling instead
    cutoff: int = 0           # steps after which the goals evaluate the state (0: none)
    record: bool = False      # return the played moves (RAVE needs them)
    decisive: bool = False    # where one role chooses, a move that wins at once is played
    # batched playouts: a move that wins by itself (gdl.reasoning.win_moves) where legal
    wins: bool = False
    # compiled playouts, with wins: a choice that leaves another role such a move is
    # taken back and another tried (anti-decisive moves)
    defend: bool = False


class MastTable:
    """Average reward of each (role, move) over all simulations (MAST). With a
    temperature it keeps each move's Gibbs weight ``exp(value / temperature)`` too,
    updated as it learns: a playout reads ~10x more weights than it learns."""

    def __init__(self, temperature: float = 0.0) -> None:
        self.stats: dict[tuple[int, Hashable], list[float]] = {}
        self.scale = 1.0 / temperature if temperature > 0 else 0.0
        self.weights: dict[int, dict[Hashable, float]] = {}  # role -> move -> weight
        self.neutral_weight = math.exp(NEUTRAL * self.scale)
        self.learned = 0   # playouts learned (the age of a cached Gibbs distribution)

    def value(self, role: int, move: Hashable) -> float:
        stats = self.stats.get((role, move))
        return stats[0] / stats[1] if stats else NEUTRAL

    def spread(self, seen: int) -> float:
        """The standard deviation of the values of the moves seen ``seen`` times or
        more, less their sampling noise (0 when fewer than two are seen)."""
        return _spread([(s / n, n) for s, n in self.stats.values() if n >= seen])

    def learn(self, played: Played, reward: Sequence[float]) -> None:
        stats, weights, scale = self.stats, self.weights, self.scale
        self.learned += 1
        for key in played:
            entry = stats.get(key)
            if entry is None:
                entry = stats[key] = [reward[key[0]], 1.0]
            else:
                entry[0] += reward[key[0]]
                entry[1] += 1.0
            if scale:
                mine = weights.get(key[0])
                if mine is None:
                    mine = weights[key[0]] = {}
                mine[key[1]] = math.exp(entry[0] / entry[1] * scale)


class ArrayMast:
    """MAST over a compiled engine's move columns (a move is ``1 << column``), shared
    by the batched playouts (whole arrays at once) and the single ones."""

    def __init__(self, move_role: np.ndarray) -> None:
        self.move_role = move_role
        self.sums = np.zeros(len(move_role))
        self.counts = np.zeros(len(move_role))
        self.learned = 0

    def value(self, role: int, move: int) -> float:
        column = move.bit_length() - 1
        count = self.counts[column]
        return float(self.sums[column] / count) if count else NEUTRAL

    def values(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.counts > 0, self.sums / self.counts, NEUTRAL)

    def spread(self, seen: int) -> float:
        """As :meth:`MastTable.spread`."""
        known = self.counts >= seen
        counts = self.counts[known]
        return _spread(list(zip((self.sums[known] / counts).tolist(), counts.tolist(),
                                strict=True)))

    def weight(self, role: int, move: int, temperature: float) -> float:
        return math.exp(self.value(role, move) / temperature)

    def learn(self, played: Played, reward: Sequence[float]) -> None:
        self.learned += 1
        for _role, move in played:
            column = move.bit_length() - 1
            self.counts[column] += 1.0
            self.sums[column] += reward[int(self.move_role[column])]

    def learn_rows(self, played: np.ndarray, rewards: np.ndarray) -> None:
        """``played`` [k, columns] bool, ``rewards`` [k, roles]."""
        self.counts += played.sum(axis=0)
        self.sums += (played * rewards[:, self.move_role]).sum(axis=0)
        self.learned += len(played)


class ScalarPlayouts:
    """One playout at a time over any state machine."""

    def __init__(self, machine, policy: PlayoutPolicy, mast: MastTable | ArrayMast,
                 chance_roles: Sequence[int], rng: random.Random) -> None:
        self.machine, self.policy, self.mast, self.rng = machine, policy, mast, rng
        self.chance = set(chance_roles)
        # per role, id(legal) -> (legal, age, cumulative weights): a compiled engine
        # hands out the same tuple for the same legal moves, and in many games
        # (connectFour: 2^7 column sets) a few tuples come back all the time. The entry
        # holds the tuple, so its id is not reused while cached. Where tuples rarely
        # come back, the cache only costs, and is dropped after GIBBS_CACHE draws with
        # under GIBBS_HITS of them hits (measured: the connectFour family 94-97%, and
        # a gain of 7-16%; pentagoSuicide 50%, its rotations, and a loss of 12%).
        self._gibbs: list[dict] | None = [{} for _ in machine.roles]
        self._gibbs_draws = self._gibbs_hits = 0

    def run(self, states: Sequence[Hashable], deadline: float | None,
            live: bool = False) -> list[Outcome] | None:
        """The outcome of a playout from each state; None when the deadline passed.
        ``live``: the states are known not to be terminal (the search expanded them)."""
        out = []
        for state in states:
            outcome = self._one(state, deadline, live)
            if outcome is None:
                return None
            if self.policy.mast:
                self.mast.learn(*outcome[::-1])
            out.append(outcome)
        return out

    def learn_tree_moves(self, played: Played, reward: Sequence[float]) -> None:
        """MAST also learns from the moves of the tree part of a simulation."""
        self.mast.learn(played, reward)

    def mast_value(self, role: int, move: Hashable) -> float:
        return self.mast.value(role, move)

    def _one(self, state: Hashable, deadline: float | None, live: bool) -> Outcome | None:
        machine, rng, policy = self.machine, self.rng, self.policy
        played: Played = set()
        greedy = policy.mast
        limit = policy.cutoff or MAX_STEPS
        try:
            terminal = not live and machine.is_terminal(state)
            for step in range(limit + 1):
                if terminal:
                    return _scaled(machine.goals(state)), played
                if step == limit:
                    return _evaluated(machine, state), played
                if deadline is not None and time.monotonic() >= deadline:
                    return None   # (every step: a step of the general engine can take ms)
                joint = []
                options = machine.legal_joint_moves(state)
                winner, win = self._winning(state, options) if policy.decisive else (None, None)
                for role, legal in enumerate(options):
                    if role == winner:
                        move = win
                    elif greedy and len(legal) > 1 and role not in self.chance \
                            and (policy.temperature > 0 or rng.random() >= policy.epsilon):
                        move = self._mast_move(role, legal)
                    else:
                        move = legal[rng.randrange(len(legal))] if len(legal) > 1 else legal[0]
                    joint.append(move)
                if greedy or policy.record:
                    played.update(enumerate(joint))
                child = machine.next_state(state, joint)
                terminal = machine.terminal_after(state, child)
                state = child
        except GameError:  # an ill-defined line of play is worth nothing to anyone
            return [0.0] * len(machine.roles), played
        return None

    def _winning(self, state: Hashable, options: Sequence[Sequence[Hashable]]
                 ) -> tuple[int | None, Hashable]:
        """Decisive moves (Teytaud & Teytaud, "On the huge benefit of decisive moves in
        Monte-Carlo tree search algorithms", CIG 2010): where one role chooses, that
        role and a move of it that ends the game with its best goal (else None, None)."""
        choosers = [r for r, legal in enumerate(options) if len(legal) > 1]
        if len(choosers) != 1 or choosers[0] in self.chance:
            return None, None
        role = choosers[0]
        joint = [legal[0] for legal in options]
        for move in options[role]:
            joint[role] = move
            child = self.machine.next_state(state, joint)
            if self.machine.terminal_after(state, child) \
                    and self.machine.goals(child)[role] >= 100:
                return role, move
        return None, None

    def _mast_move(self, role: int, legal: Sequence[Hashable]) -> Hashable:
        if self.policy.temperature > 0:
            return self._gibbs_move(role, legal)
        values = [self.mast.value(role, m) for m in legal]
        best = max(values)
        ties = [m for m, v in zip(legal, values, strict=True) if v == best]
        return ties[self.rng.randrange(len(ties))]

    def _gibbs_move(self, role: int, legal: Sequence[Hashable]) -> Hashable:
        mast, caches = self.mast, self._gibbs
        if caches is None:
            cumulative = self._gibbs_weights(role, legal)
        else:
            cache = caches[role]
            entry = cache.get(id(legal))
            if entry is not None and entry[0] is legal \
                    and mast.learned - entry[1] < GIBBS_REFRESH:
                cumulative = entry[2]
                self._gibbs_hits += 1
            else:
                cumulative = self._gibbs_weights(role, legal)
                if len(cache) >= GIBBS_CACHE:
                    cache.clear()
                cache[id(legal)] = (legal, mast.learned, cumulative)
            self._gibbs_draws += 1
            if self._gibbs_draws == GIBBS_CACHE and self._gibbs_hits < GIBBS_HITS * GIBBS_CACHE:
                self._gibbs = None
        index = bisect_right(cumulative, self.rng.random() * cumulative[-1])
        return legal[min(index, len(legal) - 1)]

    def _gibbs_weights(self, role: int, legal: Sequence[Hashable]) -> list[float]:
        """The cumulative Gibbs weights of ``legal`` (a role's moves)."""
        mast = self.mast
        if isinstance(mast, MastTable):   # (the hot loop: no method call a move)
            get, neutral = mast.weights.get(role, {}).get, mast.neutral_weight
            return list(accumulate(get(m, neutral) for m in legal))
        return list(accumulate(mast.weight(role, m, self.policy.temperature) for m in legal))


def _spread(seen: list[tuple[float, float]]) -> float:
    """The standard deviation of the values ``(mean, count)``, less the part their
    sampling noise explains (a mean of n rewards in [0, 1] varies by at most
    v (1 - v) / n)."""
    if len(seen) < 2:
        return 0.0
    values = [v for v, _ in seen]
    noise = sum(v * (1.0 - v) / n for v, n in seen) / len(seen)
    return math.sqrt(max(0.0, statistics.pvariance(values) - noise))


def _scaled(goals: Sequence[float]) -> list[float]:
    return [g / 100.0 for g in goals]


def _evaluated(machine, state: Hashable) -> list[float]:
    """The goals of a non-terminal state as its value (neutral where they are not
    defined: many games define goals only at the end)."""
    try:
        return _scaled(machine.goals(state))
    except GameError:
        return [NEUTRAL] * len(machine.roles)


class BatchPlayouts:
    """Many playouts advanced together over a compiled engine's packed states."""

    def __init__(self, machine, policy: PlayoutPolicy,
                 chance_roles: Sequence[int], rng: random.Random,
                 keep: np.ndarray | None = None) -> None:
        """``keep`` (a bool per fact): play one factor's game, the other facts
        standing still (:meth:`gdl.reasoning.playout_net.PlayoutNet.frozen`); only
        :meth:`run_packed` honours it."""
        self.machine, self.policy = machine, policy
        # built once per machine; LimitReached when the move network is too big
        self.batch = batch_machine_of(machine)
        self.np_rng = np.random.default_rng(rng.randrange(1 << 62))
        n_roles = len(machine.roles)
        self.columns = [np.flatnonzero(self.batch.move_role == r) for r in range(n_roles)]
        self.chance = set(chance_roles)
        goal_role = self.batch.goal_role
        self.goal_columns = [np.flatnonzero(goal_role == r) for r in range(n_roles)]
        # each role's goal values in [0, 1] over its goal columns (NaN: not a number)
        self.goal_scaled = [np.nan_to_num(self.batch.goal_value[c]) / 100.0
                            for c in self.goal_columns]
        self.mast = ArrayMast(self.batch.move_role)
        # few playouts at once run one at a time: a batch step costs the same for
        # 1 and for ~MIN_BATCH playouts
        self.single = ScalarPlayouts(machine, policy, self.mast, chance_roles, rng)
        # whole playouts in compiled code (gdl.reasoning.playout_net), when the compiled
        # kernels are in (gdl.reasoning.kernels decides); its network is built here,
        # on the start clock, not at the first playout
        self.net = _playout_net(self.batch)
        self.keep = None if keep is None else pack_ints([_fact_bits(keep)], self.batch.n_words)[0]
        if self.net is not None and keep is not None:
            self.net = self.net.frozen(keep)
        self.wins = winning_moves_of(self.batch) if policy.wins else None
        # a cut playout's evaluation (compiled playouts, two roles): the facts of their
        # pieces, each one's sign (+1 role 0's) and the scale of the logistic of the
        # pieces ahead; None: its goals (the graph search sets it: "cutoff", "material")
        self.pieces: tuple[np.ndarray, np.ndarray, float] | None = None

    @property
    def chunk(self) -> int:
        """The most playouts one call may run."""
        return self.batch.state_chunk

    def run(self, states: Sequence[int], deadline: float | None,
            live: bool = False) -> list[Outcome] | None:
        if len(states) < MIN_BATCH and not self._compiled(len(states)):
            return self.single.run(states, deadline, live)
        done = self.run_packed(pack_ints(list(states), self.batch.n_words), deadline)
        if done is None:
            return None
        rewards, played = done
        if not self.policy.record:
            empty: Played = set()
            return [(reward, empty) for reward in rewards.tolist()]
        return [(reward, self._pairs(row)) for reward, row in zip(rewards.tolist(), played,
                                                                   strict=True)]

    def _compiled(self, size: int) -> bool:
        """Whether the compiled whole playouts take a batch of ``size`` (every size,
        once the kernels are in: one playout costs a network step per move, as 64 do)."""
        return self.net is not None and not self.policy.decisive \
            and kernels.compiled(size) is not None

    def run_packed(self, packed: np.ndarray, deadline: float | None
                   ) -> tuple[np.ndarray, np.ndarray] | None:
        """Playouts from [k, n_words] packed states, all at once: ([k, roles] rewards in
        [0, 1], [k, moves] the moves each played, when recorded), MAST learnt; None past
        the deadline."""
        if self._compiled(len(packed)):
            return self._run_compiled(packed, deadline)
        bm, policy = self.batch, self.policy
        k = len(packed)
        n_roles = len(self.columns)
        rewards = np.zeros((k, n_roles))
        played = np.zeros((k, bm.n_moves), dtype=bool)
        alive = np.arange(k)
        mast_value = self.mast.values() if policy.mast else None
        limit = policy.cutoff or MAX_STEPS
        for step in range(limit + 1):
            if step and deadline is not None and time.monotonic() >= deadline:
                return None
            batch = bm.evaluate_states(packed)
            ended = batch.terminal if step < limit else np.ones(len(alive), dtype=bool)
            stuck = np.zeros(len(alive), dtype=bool)
            picks = []
            for role, columns in enumerate(self.columns):
                legal = batch.legal[:, columns]
                stuck |= ~legal.any(axis=1) & ~ended
                picks.append(columns[self._draw(legal, columns, role, mast_value)])
            if policy.decisive:
                self._decisive(batch, ~ended & ~stuck, picks)
            if self.wins is not None:
                self._take_wins(batch.legal, picks)
            if ended.any():
                rewards[alive[ended]] = self._goals(batch, ended, terminal=step < limit)
            # a role without a legal move outside a terminal state: worth nothing
            rewards[alive[stuck]] = 0.0
            go = np.flatnonzero(~ended & ~stuck)
            if not len(go):
                break
            moves = [p[go] for p in picks]
            for move in moves:
                played[alive[go], move] = True
            after = bm.next_states(batch, go, moves)
            packed = after if self.keep is None else keep_facts(after, packed[go], self.keep)
            alive = alive[go]
        if policy.mast:
            self.mast.learn_rows(played, rewards)
        return rewards, played

    def _run_compiled(self, packed: np.ndarray, deadline: float | None
                      ) -> tuple[np.ndarray, np.ndarray] | None:
        """:meth:`run_packed` by the compiled playouts, :data:`KERNEL_PLAYOUTS` at a
        time between deadline checks."""
        policy, net = self.policy, self.net
        mode, values = 0, None
        if policy.mast:
            mode, values = (2 if policy.temperature > 0 else 1), self.mast.values()
        recording = policy.mast or policy.record
        parts = []
        for low in range(0, len(packed), KERNEL_PLAYOUTS):
            if low and deadline is not None and time.monotonic() >= deadline:
                return None
            parts.append(net.play(packed[low:low + KERNEL_PLAYOUTS], limit=policy.cutoff or MAX_STEPS,
                                  seed=int(self.np_rng.integers(1 << 62)),
                                  chance=sorted(self.chance), mode=mode,
                                  epsilon=policy.epsilon, temperature=policy.temperature,
                                  values=values, record=recording, wins=policy.wins,
                                  defend=policy.defend, pieces=self.pieces))
        rewards = np.concatenate([p.rewards for p in parts])
        played = np.concatenate([p.played for p in parts])
        if policy.mast:
            self.mast.learn_rows(played, rewards)
        return rewards, played

    def _take_wins(self, legal: np.ndarray, picks: list[np.ndarray]) -> None:
        """Where a role (not chance) has legal moves that win by themselves, one of
        them, uniformly, replaces its pick (as the compiled playouts choose)."""
        for role, columns in enumerate(self.columns):
            if role in self.chance:
                continue
            winning = legal[:, columns] & self.wins[columns]
            rows = np.flatnonzero(winning.any(axis=1))
            if not len(rows):
                continue
            keys = self.np_rng.random((len(rows), len(columns)))
            keys[~winning[rows]] = -1.0
            picks[role][rows] = columns[keys.argmax(axis=1)]

    def _decisive(self, batch, live: np.ndarray, picks: list[np.ndarray]) -> None:
        """Decisive moves, batched (see :meth:`ScalarPlayouts._winning`): in the rows
        where one role chooses, every legal move of that role is tried at once, and a
        move whose state is terminal with the role's best goal replaces its pick."""
        bm = self.batch
        choices = np.stack([batch.legal[:, c].sum(axis=1) for c in self.columns], axis=1)
        for role, columns in enumerate(self.columns):
            if role in self.chance:
                continue
            alone = live & (choices[:, role] > 1) & ((choices > 1).sum(axis=1) == 1)
            rows, which = np.nonzero(batch.legal[alone][:, columns])
            if not len(rows):
                continue
            rows = np.flatnonzero(alone)[rows]
            for low in range(0, len(rows), bm.state_chunk):
                part, tried = rows[low:low + bm.state_chunk], columns[which[low:low + bm.state_chunk]]
                moves = [tried if r == role else p[part] for r, p in enumerate(picks)]
                after = bm.evaluate_states(bm.next_states(batch, part, moves))
                wins = after.terminal & (self._goals(after, np.arange(len(part)),
                                                     terminal=True)[:, role] >= 1.0)
                picks[role][part[wins]] = tried[wins]

    def _draw(self, legal: np.ndarray, columns: np.ndarray, role: int,
              mast_value: np.ndarray | None) -> np.ndarray:
        """Per row, the index (into ``columns``) of a random legal move; MAST: the
        best-valued one for a ``1 - epsilon`` share of the rows, or with a
        temperature a Gibbs draw in every row."""
        mast = mast_value is not None and role not in self.chance
        if mast and self.policy.temperature <= 0:
            keys = self.np_rng.random(legal.shape)
            greedy = self.np_rng.random(len(legal)) >= self.policy.epsilon
            # the value decides; the scaled-down random key breaks ties at random
            keys[greedy] = mast_value[columns] + 1e-9 * keys[greedy]
            keys[~legal] = -np.inf
            return keys.argmax(axis=1)
        values = mast_value[columns] if mast else np.zeros(len(columns))
        temperature = self.policy.temperature if mast else 1.0
        # Gibbs weights (uniform: all values 0) against the best value of the role's
        # columns; 0 off the legal ones
        running = np.cumsum(legal * np.exp((values - values.max()) / temperature), axis=1)
        total = running[:, -1]
        if not total.all():
            # every legal weight of a row underflowed (a tiny temperature): weigh
            # those rows against their own best legal value
            flat = (total == 0) & legal.any(axis=1)
            rows = np.where(legal[flat], values, -np.inf)
            running[flat] = np.cumsum(np.exp((rows - rows.max(axis=1, keepdims=True))
                                             / temperature), axis=1)
            total = running[:, -1]
        # the draw: the first column whose running sum exceeds a uniform point below
        # the row's total (one uniform a row: 5x cheaper than the Gumbel-max trick's
        # two logarithms a cell). A row with no legal move (a stuck role, which the
        # caller scores) gets the last column. The point stays below the total, which a
        # product rounded up could reach
        point = np.minimum(self.np_rng.random(len(running)) * total, np.nextafter(total, 0))
        return np.minimum((running <= point[:, None]).sum(axis=1), running.shape[1] - 1)

    def _goals(self, batch, rows: np.ndarray, terminal: bool) -> np.ndarray:
        """[rows, roles] goals in [0, 1]: a role with not exactly one goal value gets
        0 at a terminal state (an ill-defined end) and NEUTRAL at a cut-off one."""
        held = batch.goal[rows]
        out = np.empty((len(held), len(self.goal_columns)))
        for role, columns in enumerate(self.goal_columns):
            mine = held[:, columns]
            one = mine.sum(axis=1) == 1
            value = mine @ self.goal_scaled[role]
            out[:, role] = np.where(one, value, 0.0 if terminal else NEUTRAL)
        return out

    def learn_tree_moves(self, played: Played, reward: Sequence[float]) -> None:
        """MAST also learns from the moves of the tree part of a simulation."""
        self.mast.learn(played, reward)

    def mast_value(self, role: int, move: int) -> float:
        return self.mast.value(role, move)

    def _pairs(self, row: np.ndarray) -> Played:
        owner = self.batch.move_role
        return {(int(owner[c]), 1 << int(c)) for c in np.flatnonzero(row)}


def keep_facts(after: np.ndarray, before: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Packed states ``after`` with the facts outside the packed mask ``keep`` as they
    were ``before`` (one factor's transition, the others standing still)."""
    return (after & keep) | (before & ~keep)


def _fact_bits(flags: np.ndarray) -> int:
    """A bool per fact as the engine's int state (bit i: fact i)."""
    return sum(1 << int(i) for i in np.flatnonzero(flags))


def _playout_net(batch: BatchMachine) -> PlayoutNet | None:
    """``batch``'s compiled playouts, unless the compiled kernels are switched off
    (GGP_NUMBA=0, or no numba) or its network does not fit them."""
    if not kernels.KERNELS.enabled:
        return None
    try:
        return playout_net_of(batch)
    except GameError:   # LimitReached: too many rows for the kernels' stream
        return None


def make_playouts(machine, policy: PlayoutPolicy, chance_roles: Sequence[int],
                  rng: random.Random, batched: bool):  # -> BatchPlayouts | ScalarPlayouts
    """Batched playouts when asked and the engine is compiled (and its move network
    grounds), else one at a time."""
    if batched and getattr(machine, "engine_name", "") == "compiled":
        try:
            return BatchPlayouts(machine, policy, chance_roles, rng)
        except GameError:  # LimitReached: the move network is too big to ground
            pass
    return ScalarPlayouts(machine, policy, MastTable(policy.temperature), chance_roles, rng)
