"""Online search for any game given as a state machine (GDL or otherwise).

The API is small on purpose (the agent and the server's built-in ``uct`` player use it):

``MCTS(game, SearchConfig(...), chance_roles=())``
    Simultaneous-move MCTS (:mod:`.mcts`): UCT where one role moves, decoupled UCT
    (``simultaneous="duct"``) or regret matching (``"rm"``) where several move at
    once, exact values backed up from terminal states (MCTS-Solver). The tree is
    kept between calls (a transposition table keyed by state).

``MCTS.search(state, deadline=..., playouts=...) -> SearchResult``
    Anytime: stops at ``deadline`` (a ``time.monotonic()`` value) or after
    ``playouts``. ``SearchResult`` has per role ``moves``, ``strategy``,
    ``best_move(role)``, ``sample_move(role, rng)``, the ``value`` estimate
    (goals 0..100), ``proven``, ``playouts``, ``elapsed`` and ``nodes``.

``solve_exact(game, state, node_budget=..., deadline=...) -> EndgameResult``
    Exhaustive backward induction of the subgame (:mod:`.exact`), raising
    ``LimitReached`` when it does not fit and ``UnsupportedGame`` when a node has no
    exact value (e.g. general-sum simultaneous moves).

``game`` is duck-typed (:class:`.game.SearchGame`): ``roles``, ``legal_moves(state,
role)``, ``next_state(state, joint)``, ``is_terminal(state)``, ``goals(state)``, as
``gdl.reasoning.machine.StateMachine`` has them.

Example (plain UCT with 1000 playouts for role 0)::

    from solvers.search import MCTS, SearchConfig
    result = MCTS(machine, SearchConfig(seed=1)).search(state, playouts=1000)
    move = result.best_move(0)
"""

from solvers.search.exact import EndgameResult, ExactValue, solve_exact
from solvers.search.game import SearchGame
from solvers.search.mcts import MCTS, SearchConfig, SearchResult

__all__ = ["MCTS", "EndgameResult", "ExactValue", "SearchConfig", "SearchGame",
           "SearchResult", "solve_exact"]
