"""Certificate of the exact solver on simultaneous tic-tac-toe (thesis appendix B).

VALUES.md: 12,829 reachable states, root value 50/50. The check is separate, simple
code: each player's solved strategy (the mix at every node) is held fixed and the
other player best-responds by backward induction; the solved player must still
expect at least the value, 50, whatever the opponent does.
"""

from __future__ import annotations

import pytest
from conftest import GAMES

from solvers.search import solve_exact
from solvers.search.exact import NodeShape, exact_backup

pytest.importorskip("gdl.reasoning.machine")
from gdl.reasoning.machine import load_machine  # noqa: E402


def test_simultaneous_tictactoe_is_solved_and_certified() -> None:
    machine = load_machine(GAMES / "gdl" / "simultaneous_tictactoe.kif")
    table: dict = {}
    root = machine.initial_state()
    result = solve_exact(machine, root, node_budget=20_000, table=table)
    assert list(result.exact.value) == [50, 50]
    assert result.nodes + 1 == 12_829  # every reachable state once: transpositions merged

    def children(state):
        moves = [machine.legal_moves(state, r) for r in range(2)]
        return moves, {(i, j): machine.next_state(state, [a, b])
                       for i, a in enumerate(moves[0]) for j, b in enumerate(moves[1])}

    def strategy(state, moves, kids, role):
        shape = NodeShape.of(moves, ())
        exact = exact_backup(shape, lambda joint: table[kids[joint[0], joint[1]]])
        return exact.strategies.get(role)

    def guaranteed(state, role, memo):
        """What ``role`` playing its solved strategy gets against a best response."""
        if state in memo:
            return memo[state]
        if machine.is_terminal(state):
            return machine.goals(state)[role]
        moves, kids = children(state)
        mine = strategy(state, moves, kids, role)
        other = 1 - role
        worst = None
        for reply in range(len(moves[other])):
            expected = 0.0
            for move in range(len(moves[role])):
                p = 1.0 if mine is None else mine[move]
                if p > 0:
                    joint = (move, reply) if role == 0 else (reply, move)
                    expected += p * guaranteed(kids[joint], role, memo)
            worst = expected if worst is None else min(worst, expected)
        memo[state] = worst
        return worst

    for role in (0, 1):
        assert guaranteed(root, role, {}) >= 50 - 1e-6
