"""``ggp solve GAME.kif --ray ADDRESS``: the scale path's expansion and baseline solve,
with the states sharded across Ray actors.

Each of ``K`` shard actors (one per node by default) compiles the game itself and owns
the states whose hash (:func:`gdl.expansion.row_table.hash_rows`, its high half) is its number:
their rows in its own :class:`~gdl.expansion.row_table.RowTable` (its part of the transposition
table), their action counts, payoffs and entries. The driver only passes object
references between the actors, so the data goes from node to node.

1. Expansion, level by level (:class:`ShardExpansion`, the batched expansion of
   :mod:`gdl.expansion.batch_expand` with step 4 replaced): each shard expands its frontier with
   the batched kernels (legal moves, goals, next states of every joint move), then
   sends each next state, deduplicated, to its owner (``expand_level``); each owner
   numbers what it receives in its table, new states forming its next frontier, and
   answers the numbers (``admit``); each shard then records its entries as (shard,
   state) pairs (``link``). The expansion ends when no shard found a new state.
2. Solve: each shard builds its local DAG (its states and ghosts of the other shards'
   states its entries lead to) and the shards run the rounds of
   :mod:`solvers.simultaneous.shard_solve`: the baseline's level kernels where all
   children are solved, values flowing back to the shards that hold them as ghosts.
3. Certificate: the same rounds with the certificate's recomputation, combined into
   one certificate (:func:`solvers.simultaneous.dag_certificate.certificate`).

Budgets apply per shard: ``--max-states`` and ``--memory-mb`` bound each actor (so a
cluster holds what no single node could), ``--time-limit`` the whole run. An error
names the shard and its node.
"""

from __future__ import annotations

import functools
import hashlib
import resource
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gdl.budget import Budget
from gdl.expansion.batch_expand import BatchedExpansion, GrowingArray
from gdl.expansion.expand import players_of
from gdl.expansion.row_table import hash_rows, unique_rows
from gdl.reasoning.batch_machine import BatchMachine
from gdl.reasoning.compile import CompiledMachine
from gdl.reasoning.machine import load_machine, read_rules
from solvers.errors import GameError, LimitReached
from solvers.files import read_text
from solvers.ray_cluster import connect, node_label, ray_module
from solvers.simultaneous.dag_baseline import check_memory
from solvers.simultaneous.dag_certificate import certificate
from solvers.simultaneous.shard_solve import (
    LocalDag,
    ShardCheck,
    ShardSolve,
    check_progress,
    combine_figures,
    local_dag,
)

#: seconds the shard actors get to start and compile the game
START_SECONDS = 600


def owners(rows: np.ndarray, shards: int) -> np.ndarray:
    """The shard of each packed state: the high half of its table hash (the low bits
    place it in its owner's table, so they must not pick the owner too)."""
    return ((hash_rows(rows) >> np.uint64(32)) % np.uint64(shards)).astype(np.int32)


class ShardExpansion(BatchedExpansion):
    """Step 1 for one shard: its frontier expanded by the batched kernels, the next
    states sent to their owners instead of numbered here."""

    def __init__(self, machine: BatchMachine, budget: Budget, shard: int, shards: int) -> None:
        super().__init__(machine, budget, None)
        self.shard, self.shards = shard, shards
        self.low = 0
        self.outgoing: list[np.ndarray] = []
        self.child_shard = GrowingArray(np.int32)
        self.child_state = GrowingArray(np.int32)
        self.sent: list[tuple[np.ndarray, np.ndarray]] = []  # per shard: positions, inverse
        root = machine.initial_state()[None, :]
        self.root_shard = int(owners(root, shards)[0])
        if self.root_shard == shard:
            self.states.add(root)

    def _admit(self, children: np.ndarray) -> int:
        self.outgoing.append(np.array(children))
        return 0

    def expand_level(self) -> list[np.ndarray]:
        """Expand the frontier; per shard, the distinct next states it owns."""
        high = self.states.n
        for start in range(self.low, high, self.bm.state_chunk):
            self._expand_chunk(start, min(high, start + self.bm.state_chunk))
        self.low = high
        rows = (np.concatenate(self.outgoing) if self.outgoing
                else np.empty((0, self.bm.n_words), dtype=np.uint64))
        self.outgoing = []
        owner = owners(rows, self.shards)
        boxes, self.sent = [], []
        for k in range(self.shards):
            positions = np.flatnonzero(owner == k)
            first, inverse = unique_rows(rows[positions], hash_rows(rows[positions]))
            boxes.append(rows[positions][first])
            self.sent.append((positions, inverse))
        self.level_entries = len(rows)
        return boxes

    def admit(self, boxes: list[np.ndarray]) -> list[np.ndarray]:
        """Number the states the shards sent (new ones: the next frontier); the numbers."""
        numbers = [self.states.add(box)[0].astype(np.int32) for box in boxes]
        self._check_states()
        self._check_budget()
        return numbers

    def link(self, replies: list[np.ndarray]) -> None:
        """Record this level's entries from the owners' numbers."""
        shard = np.empty(self.level_entries, dtype=np.int32)
        state = np.empty(self.level_entries, dtype=np.int32)
        for k, ((positions, inverse), numbers) in enumerate(zip(self.sent, replies, strict=True)):
            shard[positions] = k
            state[positions] = numbers[inverse]
        self.child_shard.extend(shard)
        self.child_state.extend(state)
        self.sent = []

    @property
    def frontier(self) -> int:
        return self.states.n - self.low

    def local(self) -> LocalDag:
        n = self.states.n
        # the root is its owner's first state; elsewhere the field is unused
        return local_dag(self.counts.data[:n], self.payoff.data[:n],
                         self.child_shard.data[:self.child_shard.n],
                         self.child_state.data[:self.child_state.n], self.shard, 0,
                         (self.bm.roles[self.players[0]], self.bm.roles[self.players[1]]))


def _returns(items: list[Any]) -> Any:
    """An actor method's ``len(items)`` return values (Ray's ``num_returns``)."""
    return items[0] if len(items) == 1 else tuple(items)


def _refs(ref: Any, n: int) -> list[Any]:
    """The object references of a call made with ``num_returns=n``."""
    return [ref] if n == 1 else list(ref)


def _named(method: Callable[..., Any]) -> Callable[..., Any]:
    """A shard's error as one line naming the shard and its node."""
    @functools.wraps(method)
    def wrapper(self: Shard, *args: Any) -> Any:
        try:
            return method(self, *args)
        except GameError as exc:
            raise type(exc)(f"shard {self.shard} on {node_label()}: {exc}") from None
    return wrapper


class Shard:
    """One shard's actor: its part of the expansion, the solve and the certificate."""

    def __init__(self, kif: str, filename: str, shard: int, shards: int, budget: Budget,
                 selection: str) -> None:
        self.shard, self.shards, self.selection = shard, shards, selection
        self.memory_mb = budget.memory_mb
        self.started = time.perf_counter()
        try:
            rules, name = read_rules(kif)
            machine = load_machine(rules, engine="compiled", name=name, filename=filename)
            if not isinstance(machine, CompiledMachine):
                raise GameError("the sharded solve needs the compiled engine")
            self.expansion = ShardExpansion(BatchMachine(machine), budget, shard, shards)
        except GameError as exc:
            self.error: str | None = f"shard {shard} on {node_label()}: {exc}"
        else:
            self.error = None
        self.solve: ShardSolve | None = None
        self.check: ShardCheck | None = None

    def ready(self) -> tuple[str | None, str]:
        """(an error loading the game, or None; the engine's fingerprint: every shard
        must number facts and moves alike)."""
        if self.error is not None:
            return self.error, ""
        bm = self.expansion.bm
        text = repr((bm.n_words, bm.initial_state().tolist(), bm.roles,
                     bm.machine._move_atoms))
        return None, hashlib.sha256(text.encode()).hexdigest()

    @_named
    def expand_level(self) -> Any:
        """Per shard, the next states it owns (``shards`` returns)."""
        return _returns(self.expansion.expand_level())

    @_named
    def admit(self, *boxes: np.ndarray) -> Any:
        """Per shard, the numbers of what it sent; then the new frontier's size."""
        return _returns([*self.expansion.admit(list(boxes)), self.expansion.frontier])

    def link(self, *replies: np.ndarray) -> None:
        self.expansion.link(list(replies))

    def prepare(self) -> Any:
        """Step 2's start: the local DAG; per shard, the states it must send here."""
        self.local = self.expansion.local()
        return _returns(self.local.needs(self.shards))

    @_named
    def subscribe(self, *needs: np.ndarray) -> int:
        """Who needs which of this shard's values; the solve's start (within the memory
        budget: the local DAG and the solve's arrays); the states to solve."""
        check_memory(self.local.dag, self.memory_mb)
        self.subscribers = list(needs)
        self.solve = ShardSolve(self.local, self.subscribers, self.selection)
        return self.solve.left

    @_named
    def solve_round(self, *incoming: tuple[np.ndarray, np.ndarray]) -> Any:
        """Per shard, the values it receives next round; then the states left here."""
        assert self.solve is not None
        return _returns([*self.solve.step(list(incoming)), self.solve.left])

    def start_check(self) -> int:
        assert self.solve is not None
        self.check = ShardCheck(self.local, self.subscribers, self.solve.solution())
        return self.check.left

    def check_round(self, *incoming: tuple[np.ndarray, np.ndarray]) -> Any:
        """As :meth:`solve_round` for the certificate."""
        assert self.check is not None
        return _returns([*self.check.step(list(incoming)), self.check.left])

    def summary(self) -> dict[str, Any]:
        """This shard's figures: states, entries, certificate part, root values if it
        owns the root, peak memory, node."""
        assert self.solve is not None and self.check is not None
        local, exp = self.local, self.expansion
        own = local.own
        root = self.expansion.root_shard == self.shard
        return {"shard": self.shard, "node": node_label(), "states": own,
                "nonterminal": int(np.count_nonzero(~local.dag.terminal[:own])),
                "entries": int(local.dag.num_entries), "ghosts": local.dag.num_states - own,
                "transitions": exp.transitions,
                "root_values": self.solve.solver.values[local.dag.root].tolist() if root else None,
                "root_solved": bool(self.solve.solver.solved[local.dag.root]) if root else None,
                "figures": self.check.figures(), "rounds": self.solve.rounds,
                "solve_seconds": self.solve.seconds, "check_seconds": self.check.seconds,
                "seconds": time.perf_counter() - self.started,
                "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}

    def values(self) -> tuple[np.ndarray, np.ndarray]:
        """(packed rows, solver values) of this shard's own states (for comparisons)."""
        assert self.solve is not None
        own = self.local.own
        return self.expansion.states.rows[:own].copy(), self.solve.solver.values[:own].copy()


@dataclass
class RaySolveResult:
    """A sharded solve's figures (``to_json``), root values and certificate."""

    game: str
    roles: tuple[str, str]
    values: list[float]
    states: int
    nonterminal: int
    transitions: int
    levels: int
    rounds: int
    certificate: dict
    seconds: dict[str, float]
    shards: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> str:
        values = ", ".join(f"{role} {value:g}" for role, value in
                           zip(self.roles, (round(v, 9) for v in self.values), strict=True))
        check = self.certificate
        lines = [f"game {self.game}: {self.states:,} states ({self.nonterminal:,} non-terminal), "
                 f"{self.transitions:,} transitions, {len(self.shards)} shards, {self.levels} "
                 f"levels, {self.rounds} rounds",
                 f"baseline: values {values} in {self.seconds['total']:.2f} s (expand "
                 f"{self.seconds['expand']:.2f} s, solve {self.seconds['solve']:.2f} s, check "
                 f"{self.seconds['check']:.2f} s)"]
        lines += [f"shard {p['shard']} on {p['node']}: {p['states']:,} states, {p['ghosts']:,} "
                  f"ghosts, peak {p['peak_mb']:,.0f} MB" for p in self.shards]
        lines.append(f"certificate: max gain {check['max_gain']:.3g}"
                     + ("" if check["ok"] else " (NOT an equilibrium within tolerance)"))
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {"game": self.game, "solver": "baseline", "path": "ray",
                "values": dict(zip(self.roles, self.values, strict=True)),
                "states": self.states, "nonterminal": self.nonterminal,
                "transitions": self.transitions, "levels": self.levels, "rounds": self.rounds,
                "certificate": self.certificate, "seconds": self.seconds,
                "shards": self.shards}


def solve_sharded(kif: str, filename: str, shards: int, *, budget: Budget | None = None,
                  selection: str = "first", progress: Callable[[str], None] | None = None,
                  keep: list[Any] | None = None) -> RaySolveResult:
    """Steps 1-3 on the connected cluster with ``shards`` actors (spread over the nodes);
    ``keep``, when given, receives the actor handles (callers that compare values)."""
    ray = ray_module()
    budget = budget or Budget()
    say = progress or (lambda _: None)
    start = time.perf_counter()
    # a CPU each when the cluster has as many, else none reserved (spread all the same):
    # more shards than CPUs must not wait forever for room
    cpus = 1 if shards <= ray.cluster_resources().get("CPU", 0) else 0
    actor = ray.remote(num_cpus=cpus, max_restarts=0)(Shard)
    run = secrets.token_hex(3)  # names unique per solve: two may share a cluster
    actors = [actor.options(name=f"ggp-shard-{k}-of-{shards}-{run}", scheduling_strategy="SPREAD")
              .remote(kif, filename, k, shards, budget, selection) for k in range(shards)]
    if keep is not None:
        keep.extend(actors)
    try:
        try:
            loaded = ray.get([a.ready.remote() for a in actors], timeout=START_SECONDS)
        except ray.exceptions.GetTimeoutError:
            raise GameError(f"the {shards} shards did not start within {START_SECONDS} s "
                            "(is the cluster's memory or CPU taken?)") from None
        errors = [e for e, _ in loaded if e is not None]
        if errors:
            raise GameError(errors[0])
        if len({fingerprint for _, fingerprint in loaded}) > 1:
            raise GameError("the shards compiled the game differently (different Ray or "
                            "ggp versions on the nodes?)")
        levels = _expand(ray, actors, say, budget, start)
        expanded = time.perf_counter()
        needs = [_refs(a.prepare.options(num_returns=shards).remote(), shards) for a in actors]
        ray.get([a.subscribe.remote(*[needs[i][k] for i in range(shards)])
                 for k, a in enumerate(actors)])
        rounds = _rounds(ray, actors, "solve_round", say, budget, start)
        solved = time.perf_counter()
        ray.get([a.start_check.remote() for a in actors])
        _rounds(ray, actors, "check_round", say, budget, start)
        parts = ray.get([a.summary.remote() for a in actors])
    except ray.exceptions.RayError as exc:
        raise _one_line(exc) from None
    finally:
        if keep is None:
            for a in actors:
                ray.kill(a)
    owner = next(p for p in parts if p["root_values"] is not None)
    check = certificate(combine_figures([p["figures"] for p in parts]), owner["root_solved"])
    values = list(owner["root_values"])
    for p in parts:
        del p["figures"], p["root_values"], p["root_solved"]
    done = time.perf_counter()
    name = filename.rsplit("/", 1)[-1].removesuffix(".kif")
    return RaySolveResult(name, _roles(kif), values,
                          sum(p["states"] for p in parts),
                          sum(p["nonterminal"] for p in parts),
                          sum(p["transitions"] for p in parts), levels, rounds, check,
                          {"expand": expanded - start, "solve": solved - expanded,
                           "check": done - solved, "total": done - start}, parts)


def _roles(kif: str) -> tuple[str, str]:
    rules, name = read_rules(kif)
    machine = load_machine(rules, engine="compiled", name=name)
    players, _ = players_of(machine.roles)
    return machine.roles[players[0]], machine.roles[players[1]]


def _expand(ray: Any, actors: list[Any], say: Callable[[str], None], budget: Budget,
            start: float) -> int:
    """Step 1's levels; how many there were. Only references pass through here."""
    k = len(actors)
    level = 0
    while True:
        boxes = [_refs(a.expand_level.options(num_returns=k).remote(), k) for a in actors]
        answers = [_refs(a.admit.options(num_returns=k + 1).remote(
            *[boxes[i][j] for i in range(k)]), k + 1) for j, a in enumerate(actors)]
        ray.get([a.link.remote(*[answers[j][i] for j in range(k)])
                 for i, a in enumerate(actors)])
        frontier = ray.get([answer[k] for answer in answers])
        level += 1
        say(f"ray expand: level {level}, {sum(frontier):,} new states "
            f"({' / '.join(f'{n:,}' for n in frontier)} per shard), "
            f"{time.perf_counter() - start:.1f} s")
        _check_time(budget, start)
        if not any(frontier):
            return level


def _rounds(ray: Any, actors: list[Any], method: str, say: Callable[[str], None],
            budget: Budget, start: float) -> int:
    """Steps 2-3's rounds until every shard is done; how many there were."""
    k = len(actors)
    nothing = (np.empty(0, np.int64), np.empty((0, 4)))
    incoming: list[list[Any]] = [[nothing] * k for _ in actors]
    left, quiet, rounds = -1, 0, 0
    while True:
        answers = [_refs(getattr(a, method).options(num_returns=k + 1).remote(*incoming[i]),
                         k + 1) for i, a in enumerate(actors)]
        counts = ray.get([answer[k] for answer in answers])
        rounds += 1
        quiet = check_progress(left, sum(counts), quiet)
        left = sum(counts)
        say(f"ray {method.split('_')[0]}: round {rounds}, {left:,} states left, "
            f"{time.perf_counter() - start:.1f} s")
        _check_time(budget, start)
        if not left:
            return rounds
        incoming = [[answers[i][j] for i in range(k)] for j in range(k)]


def _check_time(budget: Budget, start: float) -> None:
    if budget.time_limit is not None and time.perf_counter() - start > budget.time_limit:
        raise LimitReached(f"time limit of {budget.time_limit:g} s reached on the cluster")


def _one_line(exc: Exception) -> GameError:
    cause = getattr(exc, "cause", None)
    if isinstance(cause, GameError):
        return type(cause)(str(cause))
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return GameError(f"a shard failed: {lines[-1] if lines else type(exc).__name__}")


def solve_on_ray(path: str, address: str, shards: int | None, *, budget: Budget | None = None,
                 selection: str = "first",
                 progress: Callable[[str], None] | None = None) -> RaySolveResult:
    """``ggp solve --ray``: connect, solve with ``shards`` actors (default: one per node)."""
    kif = read_text(path)
    with connect(address) as cluster:
        count = shards or len(cluster.nodes())
        if progress is not None:
            progress(f"ray: {len(cluster.nodes())} nodes at {address}, {count} shards")
        return solve_sharded(kif, path, count, budget=budget, selection=selection,
                             progress=progress)
