"""What a brain is given: the game as a match offers it, our role, the knobs of move
selection. Light to import: the agent process (:mod:`agent.gamer`) builds these and
sends them to the worker process, which builds the brain (:mod:`agent.brains.factory`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent.search.mcts import DEFAULT_ENHANCEMENTS, AgentConfig
from solvers.errors import GameError


@dataclass(frozen=True)
class BrainOptions:
    """Knobs of move selection (picklable: sent to the worker process)."""

    simultaneous: str = "duct"  # policy at simultaneous nodes: "duct", "rm" or "exp3"
    # the search's switches (agent.search.mcts.ENHANCEMENTS; ggp agent --enhancements)
    enhancements: tuple[str, ...] = DEFAULT_ENHANCEMENTS
    mast_epsilon: float = AgentConfig.mast_epsilon  # share of uniform moves in MAST playouts
    mast_temperature: float = AgentConfig.mast_temperature  # MAST's Gibbs sampling ("gibbs")
    cutoff: int = AgentConfig.cutoff  # playout steps before the cut-off ("cutoff")
    exploration: float = AgentConfig.exploration  # UCB1 constant
    # UCB1 constant at simultaneous nodes
    simultaneous_exploration: float = AgentConfig.simultaneous_exploration
    seed: int = 0
    max_nodes: int = 300_000  # search tree budget
    graph_nodes: int = AgentConfig.graph_nodes  # the "graph" search's node pool
    presolve_nodes: int = 400_000  # exact table budget (memory: ~1 KB a node)
    # the start clock's scale pre-solve: states (time and memory stop it first); a
    # game over presolve_nodes is kept as a compact solution (~30 B a state)
    presolve_states: int = 50_000_000
    endgame_nodes: int = 100_000  # per-move exact endgame budget
    memory_mb: int = 4096  # address-space limit of the worker (0: none)
    solutions: str | None = None  # folder of stored solutions (ggp solve --save)
    engine: str = "auto"  # GDL engine: "auto", "compiled" or "general"
    # With less start clock than this, "auto" means the general engine: it builds in
    # a fraction of a second, compiling a big game can take seconds.
    compile_seconds: float = 1.0

    def search_config(self, enhancements: tuple[str, ...] | None = None) -> AgentConfig:
        """The search settings these options give (with other ``enhancements``)."""
        return AgentConfig(
            enhancements=self.enhancements if enhancements is None else enhancements,
            simultaneous=self.simultaneous, exploration=self.exploration,
            simultaneous_exploration=self.simultaneous_exploration,
            mast_epsilon=self.mast_epsilon, mast_temperature=self.mast_temperature,
            cutoff=self.cutoff, max_nodes=self.max_nodes, graph_nodes=self.graph_nodes, seed=self.seed)


@dataclass(frozen=True)
class GameSpec:
    """A game as a match offers it: the format, the file text and a name."""

    format: str
    text: str
    name: str = "game"


def role_index(roles: Sequence[str], role: str) -> int:
    """The index of ``role``; an exact match first, then ignoring case."""
    if role in roles:
        return list(roles).index(role)
    folded = [r.lower() for r in roles]
    if role.lower() in folded:
        return folded.index(role.lower())
    raise GameError(f"role {role!r} is not in the game (roles: {', '.join(roles)})")
