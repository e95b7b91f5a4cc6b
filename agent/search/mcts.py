"""The agent's search: SM-MCTS with the GGP enhancements, each one switchable.

It extends :class:`solvers.search.MCTS` (plain UCT / decoupled UCT / regret matching
with exact backups, the server's ``uct`` player) with what the strongest GGP
players published (CadiaPlayer: Finnsson & Björnsson 2008, 2010; Sancho; Cazenave
2015), one iteration *round* at a time:

1. Select ``batch`` leaves (at most an eighth of the root's visits, so that no
   round runs long on stale statistics), one descent after another. Each descent
   counts its visits at once, at the move's mean (``vmean``, WU-UCT) or with no
   reward (a *virtual loss*), so the next descent of the round spreads to other moves. At a node where one role chooses: UCB1, or with
   ``grave`` UCB1 on a blend of the move's mean and its AMAF mean taken at the
   deepest node of the descent with at least ``grave_ref`` visits (GRAVE, Cazenave,
   "Generalized Rapid Action Value Estimation", IJCAI 2015; weight
   ``beta = a / (a + n + bias a n)`` for ``a`` AMAF and ``n`` real visits). Where
   several roles choose at once, each on its own statistics: decoupled UCB1
   (``duct``), regret matching (``rm``) or EXP3 (``exp3``), both mixed with
   ``rm_gamma`` exploration (Lanctot et al. 2013; Tak, Winands & Lanctot, "Monte
   Carlo Tree Search Variants for Simultaneous Move Games", CIG 2014).
2. Expand one node per descent (the transposition table of the base class).
3. Simulate all the round's leaves at once (:mod:`agent.search.playouts`: batched over
   the bit-vector engine when it is compiled; uniform or MAST moves; optional
   cut-off with the goals as the evaluation).
4. Back up each reward: move sums, RM regrets / EXP3 scores, AMAF statistics of
   every move played below a node (``grave``), MAST statistics of the tree moves
   too, and exact values (MCTS-Solver, ``solver``; at simultaneous nodes only
   where :func:`solvers.search.exact.exact_backup` has a sound rule: two-player
   constant-sum matrix games).
5. Stop at the deadline, at a proven root, or (``timing``) at the soft deadline
   when the root's decision is clear: the rest of the clock is kept for critical
   moves (the most visited move not the best by mean, or two moves close in
   visits and apart in value).

At a proven root where one role chooses, the move played is, of those that keep the
exact value, the most visited (in a lost position: the loss hardest to find).

Between moves the tree is kept (``reuse``: the subtree of the new state; the
base class drops the unreachable rest when the table grows); without it every
move starts from an empty table.
"""

from __future__ import annotations

import math
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from agent.search.playouts import NEUTRAL, PlayoutPolicy, make_playouts
from solvers.errors import GameError
from solvers.search import MCTS, SearchConfig, SearchResult
from solvers.search.exact import exact_backup

# The switches (``ggp agent --enhancements``). "batch": batched playouts, 2-5x the
# playouts per second. With virtual losses its rounds cost tree quality (1 s clocks,
# 12 matches each against uct: connectFour 58.3% against 70.8% one at a time); with
# "vmean" (pending visits at the move's mean, WU-UCT) it is the strongest default
# measured (docs/agent.md).
# "gibbs": MAST draws its moves by Gibbs sampling (temperature ``mast_temperature``)
# instead of epsilon-greedy; at 300 playouts a move against uct (mast,reuse, seats
# alternating): connectFourSimultaneous 58% against epsilon-greedy's 40% (24 matches
# each), connectFour 58% (32) against 50% (16), breakthrough 62% against 69% (16 each).
# "decisive": playouts take a win in one (connectFour at 300 playouts a move: 83% against
# 53%, 30 matches each), but it costs 0.6x the playouts even with terminal_after: 60.0%
# against 67.5% at a 0.5 s clock (20 each); off (docs/agent.md has the figures).
# "ponder" (agent.brains.gdl.GdlBrain): a forced move (one legal move) still searches until
# its answer is due, so turn-based games get the opponent's think time too.
# "leaf": leaf parallelism over the batched engine: a round's descents (32, with virtual
# loss) each get 4 playouts at once and back up their mean as one visit; a batched
# playout costs a sixth of a single one (connectFour), so a leaf's value is sampled 4
# times for about the price of one descent with one playout. Off: at 1 s clocks
# connectFour 66.7% and connectFourSimultaneous 45.8% against 70.8% and 58.3% without
# (12 matches each): more samples of fewer leaves are not worth more.
# "mastcost" (agent.brains.gdl.GdlBrain.metagame): on the start clock the search runs with
# and without MAST from the initial state; MAST is dropped for the match when it
# costs over a fifth of the playouts and its move values are flat (Gibbs draws over
# values that close are near uniform ones, at a higher price). pentagoSuicide: 0.73x,
# spread 0.09, off: 58.3% at 1 s clocks against 33.3% with MAST (12 matches each).
# breakthroughSuicideSmall: 0.57x but spread 0.45, on (dropped on cost alone, it
# scored 33.3% against 75.0%).
# "repeat": a descent that comes back to a state on its own path backs up a draw (0.5
# to every role), as chess programs score a repetition, instead of playing out from
# there: a role ahead then prefers the moves that make progress. dualConnect4 lets
# both roles noop for ever; both players did, in 3 of 12 matches at 1 s clocks.
# "graph" (agent.search.graph): the search over a graph of states in arrays, its
# rounds compiled (where the engine is compiled and batched, with duct at
# simultaneous nodes and none of leaf, repeat, decisive; "grave" there keeps AMAF
# statistics per move slot).
# "wins" (gdl.reasoning.win_moves): batched playouts play a move that wins by itself
# (onto breakthrough's far row) wherever one is legal: decisive moves without their
# lookahead, found from the rules on the start clock. Off: 5 of 8 against the default
# at a 3 s clock, 1 of 4 knightThrough against Sancho at 30 s / 5 s (docs/agent.md).
# "defend" (with wins): compiled playouts take back a choice that leaves the other role a
# move that wins by itself, and try another (anti-decisive moves: capture the runner).
# Off: at half the playouts a second, 4 of 8 against the default at 3 s (knightThrough 1
# of 4) and 1 of 8 against Sancho.
# "serial" (graph only): where our role and one other choose at once, the other answers
# our move by its joint moves' statistics (as Sancho orders a simultaneous move, ours
# first). Off: connectFourSimultaneous 0 of 4 against Sancho at 30 s / 5 s.
# "factor" (graph only; gdl.reasoning.factors): where the game splits into factors (the
# two boards of connectFourSimultaneous, as Sancho splits it), the move is searched in
# the game of the factor holding our legal moves, the other boards standing still.
# On (below); measured in docs/agent.md ("Against Sancho").
# "material" (graph only; agent.search.material): Sancho's piece heuristic. Where the
# final count of a board function's pieces (cell(?, ?, white)) correlates with each role's
# goal in random games on the start clock (breakthrough, knightThrough; not connectFour,
# reversi, quad), a new edge that changes the material balance starts with a few visits
# at a value moved from its reference node's by the change: captures are tried first,
# a capture left unanswered looks bad. On with "explore" since 2026-11-28 (below); alone it
# changed nothing (knightThrough 0 of 6 against Sancho at 30 s / 5 s).
# "explore" (graph only; agent.search.material): UCB1's constant where one role chooses is
# Sancho's exploration bias from the lengths of random games on the start clock (short
# games explore more), 0.7 of it where "material" found pieces (Sancho's rule). On with
# "material" since 2026-11-28: against Sancho at 30 s / 5 s knightThrough 3 of 6 (1 of 6
# without), and no game fell: reversi 6, quad 6, nineBoardTicTacToe 4, chinook 6,
# connectFourSimultaneous 2 of 6, as without (breakthrough 0 of 6 either way).
# "minimax" (graph only, where "material" found pieces): implicit minimax backups
# (Lanctot, Winands, Pepels & Sturtevant, CIG 2014): each node keeps a minimax value of
# a material evaluation (a logistic of the pieces ahead) over its known children, and
# where one role chooses a move's mean is mixed with 0.4 of its child's. Off: against
# our default at 10 s / 2 s it won 8 of 12 (knightThrough 4 of 6, breakthrough 4 of 6),
# but against Sancho at 30 s / 5 s breakthrough 0 of 6 (as without) and knightThrough
# 2 of 6 (2 and 4 of 6 without, two runs); docs/agent.md.
ENHANCEMENTS = ("batch", "mast", "gibbs", "grave", "solver", "reuse", "cutoff", "timing",
                "ponder", "decisive", "leaf", "mastcost", "repeat", "vmean", "graph", "wins",
                "defend", "serial", "factor", "material", "explore", "minimax", "threats")
# "timing" is off: a GGP play clock is not banked, so the 15% of it a clear decision
# left unused was search lost (every move of connectFourSimultaneous against Sancho
# at a 5 s clock stopped at 3.61 of its 4.25 s)
# "graph" is on since 2026-11-28: at a 3 s clock it won 15 of 16 matches against the tree
# search (connectFour, breakthrough, knightThrough, connectFourSimultaneous, both seats;
# docs/bench/ablation-3s-graph.jsonl). Where it does not apply, the tree search plays.
# "factor" is on since 2026-11-28: against Sancho at 30 s / 5 s it won connectFourSimultaneous
# 4 of 6 (0 of 14 without) and chinook 6 of 6 (5 of 6 without); where a game does not split
# it changes nothing but 0.01-0.3 s of start-clock analysis.
DEFAULT_ENHANCEMENTS = ("batch", "mast", "gibbs", "solver", "reuse", "ponder", "mastcost", "vmean",
                        "graph", "factor", "material", "explore", "threats")
SIMULTANEOUS = ("duct", "rm", "exp3")
CLOSE = 0.02  # "timing": moves whose mean rewards differ less are equally good

Step = tuple  # (node, joint, probs, state, virtual rewards or None) of one descent


def parse_enhancements(text: str) -> tuple[str, ...]:
    """``default``, ``none``, ``all`` or names, comma-separated; ``no-NAME`` removes
    one (``default,no-mast``). ValueError names a bad item."""
    chosen: list[str] = []
    for item in (part.strip() for part in text.split(",")):
        if item in ("default", "none", "all"):
            chosen += {"default": DEFAULT_ENHANCEMENTS, "none": (), "all": ENHANCEMENTS}[item]
        elif item.startswith("no-") and item[3:] in ENHANCEMENTS:
            chosen = [e for e in chosen if e != item[3:]]
        elif item in ENHANCEMENTS:
            chosen.append(item)
        else:
            raise ValueError(f"unknown enhancement {item!r} (known: default, none, all, "
                             f"{', '.join(ENHANCEMENTS)}, no-NAME)")
    return tuple(e for e in ENHANCEMENTS if e in chosen)


@dataclass(frozen=True)
class AgentConfig:
    """The agent's search settings (see the module docstring)."""

    enhancements: tuple[str, ...] = DEFAULT_ENHANCEMENTS
    simultaneous: str = "duct"
    exploration: float = 0.7      # UCB1 constant (rewards in [0, 1]), as plain uct
    # UCB1 constant where several roles choose at once (decoupled UCT)
    simultaneous_exploration: float = 0.7
    rm_gamma: float = 0.1         # exploration mixed into RM and EXP3
    batch: int = 128              # leaves per round with batched playouts (measured: 2-3x the
    #                               playouts/s of one at a time on connectFour, breakthrough)
    leaf_round: int = 32          # "leaf": descents a round (connectFour, descents/s with
    #                               playouts each: 16 x 8 1,960, 32 x 4 3,566, 64 x 2 6,240;
    #                               one at a time 6,829)
    leaf_playouts: int = 4        # "leaf": playouts of each leaf
    mast_epsilon: float = 0.4
    mast_temperature: float = 0.1  # "gibbs" (CadiaPlayer's 10 on goals 0-100)
    grave_ref: int = 50
    grave_bias: float = 1e-4
    cutoff: int = 40              # playout steps before the goals evaluate ("cutoff")
    # "timing": clear decisions stop at this share of the think time (time is not
    # banked between GGP moves, so it only saves CPU; critical moves get it all)
    soft_share: float = 0.85
    max_nodes: int = 300_000
    # "graph": the array graph's node pool, at most (fewer where nodes as wide as the
    # root would pass agent.search.graph.GRAPH_BYTES); 300,000 filled within one 5 s
    # move at 60,000 playouts/s. A connectFour node costs about 480 bytes
    graph_nodes: int = 1_000_000
    # "minimax": the weight of a child's implicit minimax value in its move's mean
    # (Lanctot et al. 2014 found 0.3-0.5 best in Breakthrough)
    minimax_weight: float = 0.4
    seed: int = 0

    def __post_init__(self) -> None:
        if self.simultaneous not in SIMULTANEOUS:
            raise ValueError(f"simultaneous must be one of {SIMULTANEOUS}")

    def on(self, name: str) -> bool:
        return name in self.enhancements

    def playout_policy(self, record: bool = False) -> PlayoutPolicy:
        """The playouts these switches ask for (``record``: their moves, for RAVE)."""
        return PlayoutPolicy(mast=self.on("mast"), epsilon=self.mast_epsilon,
                             temperature=self.mast_temperature if self.on("gibbs") else 0.0,
                             cutoff=self.cutoff if self.on("cutoff") else 0, record=record,
                             decisive=self.on("decisive"),
                             wins=self.on("wins") or self.on("defend"),
                             defend=self.on("defend"))


class AgentSearch(MCTS):
    """:class:`solvers.search.MCTS` with the enhancements of :class:`AgentConfig`."""

    def __init__(self, machine, config: AgentConfig, *, chance_roles: Sequence[int] = ()) -> None:
        base = SearchConfig(simultaneous="rm" if config.simultaneous == "rm" else "duct",
                            exploration=config.exploration, rm_gamma=config.rm_gamma,
                            solver=config.on("solver"), max_nodes=config.max_nodes,
                            seed=config.seed)
        super().__init__(machine, base, chance_roles=chance_roles)
        self.agent = config
        self.grave = config.on("grave")
        self.exp3 = config.simultaneous == "exp3"
        self.playouts = make_playouts(machine, config.playout_policy(record=self.grave),
                                      self.chance_roles, self._rng,
                                      batched=config.on("batch") or config.on("leaf"))
        chunk = getattr(self.playouts, "chunk", None)
        self.leaf = config.leaf_playouts if config.on("leaf") and chunk else 1
        self.round_size = (1 if chunk is None else
                           min(config.leaf_round, chunk // self.leaf) if self.leaf > 1 else
                           min(config.batch, chunk))
        # "vmean": a round's pending visits count at the move's mean (else as losses)
        self.vmean = config.on("vmean") and self.round_size > 1
        # AMAF statistics per state: (role, move) -> [reward sum, count]
        self._amaf: dict[Hashable, dict[tuple[int, Hashable], list[float]]] = {}
        self._repetition = [NEUTRAL] * self._n_roles if config.on("repeat") else None
        self._last_root: Hashable | None = None

    @property
    def batched(self) -> bool:
        return self.round_size > 1

    def search(self, state: Hashable, *, deadline: float | None = None,
               playouts: int | None = None, soft_deadline: float | None = None
               ) -> SearchResult:
        """As :meth:`MCTS.search`; with ``timing``, a clear decision stops at
        ``soft_deadline``."""
        if deadline is None and playouts is None:
            raise ValueError("search needs a deadline or a playout count")
        started = time.monotonic()
        if not self.agent.on("reuse") and state != self._last_root:
            self._table.clear()
            self._amaf.clear()
        self._last_root = state
        if len(self._table) > self.config.max_nodes // 2:
            self._keep_reachable(state)
            self._amaf = {s: a for s, a in self._amaf.items() if s in self._table}
        root = self._table.get(state) or self._expand(state, force=True)
        if root.terminal:
            raise GameError("search from a terminal state: there is no move to choose")
        soft = soft_deadline if self.agent.on("timing") else None
        done = 0
        while root.exact is None and (playouts is None or done < playouts):
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                break
            if soft is not None and now >= soft and not self.critical(root):
                break
            # a round is at most an eighth of the root's visits: its descents all
            # see the statistics of its start (with virtual losses only)
            size = max(1, min(self.round_size, root.count // 8))
            if playouts is not None:
                size = min(size, playouts - done)
            done += self._round(state, root, size, deadline)
        return self._result(root, done, time.monotonic() - started)

    def critical(self, root) -> bool:
        """The decision may still change and matters: for a chooser of the root, a
        move is untried, the most visited move is not the best by mean, or the two
        most visited are within 20% in visits and ``CLOSE`` apart in mean reward."""
        for r in root.shape.choosers:
            visits, totals = root.visits[r], root.totals[r]
            if 0 in visits:   # a move not even tried once
                return True
            means = [t / v if v else -1.0 for t, v in zip(totals, visits, strict=True)]
            order = sorted(range(len(visits)), key=visits.__getitem__, reverse=True)
            first, second = order[0], order[1]
            if means[second] > means[first]:
                return True
            if visits[second] >= 0.8 * visits[first] and means[first] - means[second] > CLOSE:
                return True
        return False

    def _root_strategy(self, root, role: int) -> np.ndarray:
        """At a proven root where ``role`` alone chooses: of the moves that keep the
        exact value, the one the search visited most. (The exact backup keeps the
        first it finds: in a lost position, where every move loses, that is the first
        legal move; the most visited one is where the search found the opponent's
        win hardest to see, the best chance against a fallible opponent.)"""
        strategy = super()._root_strategy(root, role)
        shape = root.shape
        if root.exact is None or shape.choosers != (role,) or shape.chance:
            return strategy
        target = root.exact.value[role] - 1e-9
        keep = []
        for move in range(shape.sizes[role]):
            value = self._child_exact(root, shape.joint({role: move}))
            if value is not None and value[role] >= target:
                keep.append(move)
        if not keep:
            return strategy
        visits = root.visits[role]
        best = max(keep, key=lambda m: (visits[m], strategy[m]))
        chosen = np.zeros(shape.sizes[role])
        chosen[best] = 1.0
        return chosen

    # -- one round ----------------------------------------------------------------

    def _round(self, state: Hashable, root, size: int, deadline: float | None) -> int:
        """``size`` descents, their playouts at once, the backups; the playouts done."""
        descents = [self._descend(state, root) for _ in range(size)]
        leaves = [d for d in descents if d[2] is None]
        # a leaf in the table was expanded: not terminal (terminal nodes are exact)
        table, k = self._table, self.leaf
        outcomes = self.playouts.run([d[1] for d in leaves for _ in range(k)], deadline,
                                     all(d[1] in table for d in leaves)) if leaves else []
        if outcomes is None:   # out of time: take the virtual losses back
            for path, _, _ in descents:
                self._undo(path)
            return 0
        results = iter(outcomes if k == 1 else _means(outcomes, k))
        for path, _, settled in descents:
            if settled is not None:
                self._back(path, settled, set(), True)
            else:
                reward, played = next(results)
                self._back(path, reward, played, False)
        return size - len(leaves) + k * len(leaves)

    def _descend(self, state: Hashable, node) -> tuple[list[Step], Hashable, list | None]:
        """One descent with virtual loss: the path, the leaf state and, when the
        leaf's value is known (terminal or proven), that value in [0, 1]."""
        path: list[Step] = []
        on_path = {state}
        reference = None   # GRAVE: the AMAF table of the deepest well-visited node
        while True:
            if node.exact is not None:
                return path, state, (node.exact.value / 100.0).tolist()
            if self.grave and node.count >= self.agent.grave_ref:
                reference = self._amaf.get(state)
            joint, probs = self._choose(node, reference)
            path.append((node, joint, probs, state, self._pending(node, joint)))
            parent, state = state, self._child_state(state, node, joint)
            if self._repetition is not None and state in on_path:
                return path, state, self._repetition
            child = self._enter(state, on_path, parent)
            if child is None:
                return path, state, None
            on_path.add(state)
            node = child

    def _pending(self, node, joint: tuple[int, ...]) -> list[float] | None:
        """Counts a descent's visit at once, so that the round's later descents spread
        to other moves: as a loss (no reward yet), or with ``vmean`` at the move's
        current mean (the node's mean for a first visit), which only the exploration
        term feels (WU-UCT: Liu et al., "Watch the Unobserved", ICLR 2020). The
        virtual rewards per role, taken back at the backup."""
        virtual = [0.0] * len(joint) if self.vmean else None
        for r in node.shape.choosers:
            i = joint[r]
            if virtual is not None:
                v = node.visits[r][i]
                virtual[r] = mean = (node.totals[r][i] / v if v else
                                     node.reward_sum[r] / node.count if node.count else NEUTRAL)
                node.totals[r][i] += mean
            node.visits[r][i] += 1
        node.count += 1
        return virtual

    def _choose(self, node, reference) -> tuple[tuple[int, ...], dict[int, float]]:
        shape = node.shape
        joint = [0] * len(shape.sizes)
        probs: dict[int, float] = {}
        simultaneous = len(shape.choosers) > 1
        for r in shape.choosers:
            if simultaneous and self.exp3:
                joint[r], probs[r] = self._select_exp3(node, r)
            elif simultaneous and self.config.simultaneous == "rm":
                joint[r], probs[r] = self._select_rm(node, r)
            else:
                joint[r] = self._select_ucb(node, r, reference)
        for r in shape.chance:
            joint[r] = self._rng.randrange(shape.sizes[r])
        return tuple(joint), probs

    def _select_ucb(self, node, role: int, amaf: dict | None = None) -> int:
        """UCB1, on the GRAVE blend when ``amaf`` is given; ties at random (the
        base class takes the first: at a simultaneous node two roles then pick
        alike in lockstep, and some joint moves are never tried)."""
        visits = node.visits[role]
        if 0 in visits:
            unvisited = [i for i, v in enumerate(visits) if v == 0]
            return unvisited[self._rng.randrange(len(unvisited))]
        totals, moves = node.totals[role], node.moves[role]
        c = (self.agent.simultaneous_exploration if len(node.shape.choosers) > 1
             else self.config.exploration)
        log_n, bias = math.log(node.count), self.agent.grave_bias
        best: list[int] = []
        best_score = -math.inf
        for i, v in enumerate(visits):
            mean = totals[i] / v
            stats = amaf.get((role, moves[i])) if amaf is not None else None
            if stats is not None:
                a = stats[1]
                beta = a / (a + v + bias * a * v)
                mean = (1.0 - beta) * mean + beta * stats[0] / a
            score = mean + c * math.sqrt(log_n / v)
            if score > best_score + 1e-12:
                best, best_score = [i], score
            elif score >= best_score - 1e-12:
                best.append(i)
        return best[0] if len(best) == 1 else best[self._rng.randrange(len(best))]

    def _select_exp3(self, node, role: int) -> tuple[int, float]:
        """EXP3 (Auer et al. 2002): ``p = (1 - g) softmax(eta X) + g / K`` with
        ``eta = g / K`` over the importance-weighted reward sums ``X``."""
        size = node.shape.sizes[role]
        scores = node.regrets.get(role)
        if scores is None:
            scores = node.regrets[role] = [0.0] * size
            node.strategy_sum[role] = [0.0] * size
        gamma = self.config.rm_gamma
        eta = gamma / size
        top = max(scores)
        weights = [math.exp(eta * (s - top)) for s in scores]
        total = sum(weights)
        sigma = [(1.0 - gamma) * w / total + gamma / size for w in weights]
        node.strategy_sum[role] = [a + b for a, b in zip(node.strategy_sum[role], sigma,
                                                         strict=True)]
        move = self._rng.choices(range(size), weights=sigma)[0]
        return move, sigma[move]

    # -- back-up --------------------------------------------------------------------

    def _back(self, path: list[Step], reward: list[float], played: set, settled: bool) -> None:
        """Rewards (visits were counted on the way down), AMAF, MAST and exact values."""
        below = set(played)
        tree_moves = set()
        for node, joint, probs, state, virtual in reversed(path):
            sums = node.reward_sum
            for r, value in enumerate(reward):
                sums[r] += value
            for r in node.shape.choosers:
                move, value = joint[r], reward[r]
                node.totals[r][move] += value if virtual is None else value - virtual[r]
                if r in probs:
                    scores = node.regrets[r]
                    if self.exp3:
                        scores[move] += value / probs[r]
                    else:  # regret matching, importance-sampled reward estimate
                        for i in range(len(scores)):
                            scores[i] -= value
                        scores[move] += value / probs[r]
                tree_moves.add((r, node.moves[r][move]))
            if self.grave:
                below.update((r, node.moves[r][joint[r]]) for r in node.shape.choosers)
                self._update_amaf(state, below, reward)
            if settled and self.config.solver:
                node.exact = exact_backup(node.shape, lambda j, n=node: self._child_exact(n, j))
                settled = node.exact is not None
        if self.agent.on("mast"):
            self.playouts.learn_tree_moves(tree_moves, reward)

    def _update_amaf(self, state: Hashable, below: set, reward: list[float]) -> None:
        table = self._amaf.get(state)
        if table is None:
            table = self._amaf[state] = {}
        for key in below:
            stats = table.get(key)
            if stats is None:
                table[key] = [reward[key[0]], 1.0]
            else:
                stats[0] += reward[key[0]]
                stats[1] += 1.0

    def _undo(self, path: list[Step]) -> None:
        for node, joint, _, _, virtual in path:
            node.count -= 1
            for r in node.shape.choosers:
                node.visits[r][joint[r]] -= 1
                if virtual is not None:
                    node.totals[r][joint[r]] -= virtual[r]


def _means(outcomes: list, k: int) -> list:
    """``leaf``: each run of ``k`` outcomes (one leaf's playouts) as one, the mean
    reward and the moves any of them played."""
    merged = []
    for i in range(0, len(outcomes), k):
        group = outcomes[i:i + k]
        reward = [sum(r[j] for r, _ in group) / k for j in range(len(group[0][0]))]
        merged.append((reward, set().union(*(played for _, played in group))))
    return merged
