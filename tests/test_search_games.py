"""Small pure-Python games for the search tests (the duck-typed SearchGame interface),
with checks that the games themselves behave as their GDL counterparts do."""

from __future__ import annotations

from collections.abc import Sequence

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


class TicTacToe:
    """Turn-based as in GDL: the idle role plays ``noop``. State: (cells, mover)."""

    roles = ("xplayer", "oplayer")

    def initial_state(self) -> tuple:
        return ("b",) * 9, 0

    def _winner(self, cells: tuple) -> str | None:
        for a, b, c in LINES:
            if cells[a] != "b" and cells[a] == cells[b] == cells[c]:
                return cells[a]
        return None

    def is_terminal(self, state: tuple) -> bool:
        cells, _ = state
        return self._winner(cells) is not None or "b" not in cells

    def legal_moves(self, state: tuple, role: int) -> tuple:
        cells, mover = state
        if role != mover:
            return ("noop",)
        return tuple(f"(mark {i // 3 + 1} {i % 3 + 1})" for i in range(9) if cells[i] == "b")

    def next_state(self, state: tuple, joint: Sequence[str]) -> tuple:
        cells, mover = state
        move = joint[mover]
        row, col = int(move[6]), int(move[8])
        new = list(cells)
        new[(row - 1) * 3 + col - 1] = "xo"[mover]
        return tuple(new), 1 - mover

    def goals(self, state: tuple) -> tuple[int, int]:
        winner = self._winner(state[0])
        if winner is None:
            return 50, 50
        return (100, 0) if winner == "x" else (0, 100)


class MatrixGame:
    """One simultaneous step; goals of role 0 from ``payoff``, role 1 gets 100 - it."""

    roles = ("row", "column")

    def __init__(self, payoff: Sequence[Sequence[float]]) -> None:
        self.payoff = payoff

    def initial_state(self) -> tuple:
        return ()

    def is_terminal(self, state: tuple) -> bool:
        return len(state) == 2

    def legal_moves(self, state: tuple, role: int) -> tuple:
        size = len(self.payoff) if role == 0 else len(self.payoff[0])
        return tuple(f"m{i}" for i in range(size))

    def next_state(self, state: tuple, joint: Sequence[str]) -> tuple:
        return int(joint[0][1:]), int(joint[1][1:])

    def goals(self, state: tuple) -> tuple[float, float]:
        value = self.payoff[state[0]][state[1]]
        return value, 100 - value


ROSHAMBO = [[50, 0, 100], [100, 50, 0], [0, 100, 50]]
# row mixes (2/7, 5/7); value 300/7
BIASED = [[100, 0], [20, 60]]


class Lock:
    """A 1-player puzzle: dial three digits 0..3; only the code 2 1 3 scores 100."""

    roles = ("solver",)
    CODE = (2, 1, 3)

    def initial_state(self) -> tuple:
        return ()

    def is_terminal(self, state: tuple) -> bool:
        return len(state) == 3

    def legal_moves(self, state: tuple, role: int) -> tuple:
        return tuple(f"(dial {d})" for d in range(4))

    def next_state(self, state: tuple, joint: Sequence[str]) -> tuple:
        return state + (int(joint[0][6]),)

    def goals(self, state: tuple) -> tuple[int]:
        return (100 if state == self.CODE else 10 * sum(a == b for a, b in zip(state, self.CODE, strict=True)),)


class ChanceThenChoice:
    """The guesser calls heads or tails, then nature (role ``random``) flips a fair
    coin: the guesser expects 50."""

    roles = ("random", "guesser")

    def initial_state(self) -> tuple:
        return ()

    def is_terminal(self, state: tuple) -> bool:
        return len(state) == 2

    def legal_moves(self, state: tuple, role: int) -> tuple:
        if len(state) == 0:
            return ("noop",) if role == 0 else ("heads", "tails")
        return ("heads", "tails") if role == 0 else ("noop",)

    def next_state(self, state: tuple, joint: Sequence[str]) -> tuple:
        return state + (joint[1] if len(state) == 0 else joint[0],)

    def goals(self, state: tuple) -> tuple[int, int]:
        return 0, 100 if state[0] == state[1] else 0


class ThreeTakeaway:
    """Three players in turn take 1 or 2 from a pile of 4; who takes the last loses
    (0), the others get 50. Backward induction by hand: see the test below."""

    roles = ("a", "b", "c")

    def initial_state(self) -> tuple:
        return 4, 0

    def is_terminal(self, state: tuple) -> bool:
        return state[0] == 0

    def legal_moves(self, state: tuple, role: int) -> tuple:
        pile, mover = state
        if role != mover:
            return ("noop",)
        return tuple(f"(take {k})" for k in (1, 2) if k <= pile)

    def next_state(self, state: tuple, joint: Sequence[str]) -> tuple:
        pile, mover = state
        return (pile - int(joint[mover][6]), (mover + 1) % 3)

    def goals(self, state: tuple) -> tuple[int, int, int]:
        loser = (state[1] - 1) % 3  # the player who just moved took the last one
        return tuple(0 if r == loser else 50 for r in range(3))


def test_tictactoe_rules() -> None:
    game = TicTacToe()
    state = game.initial_state()
    for move in ["(mark 1 1)", "(mark 2 1)", "(mark 1 2)", "(mark 2 2)", "(mark 1 3)"]:
        assert not game.is_terminal(state)
        mover = state[1]
        joint = ["noop", "noop"]
        joint[mover] = move
        state = game.next_state(state, joint)
    assert game.is_terminal(state) and game.goals(state) == (100, 0)


def test_three_takeaway_rules() -> None:
    game = ThreeTakeaway()
    state = game.next_state((1, 2), ["noop", "noop", "(take 1)"])
    assert game.is_terminal(state) and game.goals(state) == (50, 50, 0)
