"""GDL text of the scale benchmark games: Goofspiel and Oshi-Zumo (issue 13, item 5).

The files ``games/gdl/goofspiel_N.kif``, ``goofspiel_ties_N.kif`` and
``oshi_zumo_cC_sS_hH_mM.kif`` are written by this module (``python -m
gdl.bench.games games/gdl``); the tests check that the committed files are its output.

Goofspiel (N cards 1..N per role, prizes N, N-1, ..., 1 in that order). The state is
each role's unused cards, the prize on the table and the score difference p0 - p1:

- the round number is not kept: the prize is the number of cards each role still
  holds, so ``(prize P)`` is a function of the hands and splits no state;
- the difference instead of both totals: the winner only depends on the sign of
  the final difference, so states with equal differences merge (N = 8: 300,382
  states instead of 944,394);
- the difference is clamped to +-(R + 1), R the sum of the prizes still to come:
  past that bound the sign can no longer change, so the clamp is exact and merges
  every decided state of a hand pair (N = 8: 169,324 states). At the end R = 0, so
  the final difference is -1, 0 or 1.

Oshi-Zumo follows OpenSpiel's ``oshi_zumo`` (open_spiel/games/oshi_zumo/oshi_zumo.cc,
alesia false): both start with C coins; the field has positions 0..2S+2 and the
wrestler starts at S+1; each role bids min_bid..coins (all its coins when it has
fewer than min_bid); the higher bid pushes the wrestler one step towards the other
role's edge (p0 towards 2S+2), equal bids leave it; both bids are paid. The game ends
at the horizon H, when the wrestler is pushed off (position 0 or 2S+2) or when both
roles have no coins; the role on whose opponent's side the wrestler stands wins
(returns +1/-1, 0 in the middle), here goals 100 / 0 and 50 / 50. The step count is
kept only when the horizon can end the game: with min_bid >= 1 every role that has
coins pays at least one per step, so the game ends within ``coins`` steps and a
horizon of at least ``coins`` never binds; then states differing only in the step
merge (as in OpenSpiel's state strings, which leave the step out).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

# Oshi-Zumo instances written to games/gdl: (coins, size, horizon, min_bid)
OSHI_ZUMO = ((3, 1, 6, 0), (4, 1, 8, 1), (6, 2, 12, 1), (10, 3, 20, 1))
GOOFSPIEL_SIZES = range(2, 11)


def number(value: int) -> str:
    """A GDL constant for an integer: ``m3`` for -3 (a minus sign is not a KIF word)."""
    return str(value) if value >= 0 else f"m{-value}"


def goofspiel_name(n: int, ties_to_first: bool = False) -> str:
    return f"goofspiel_ties_{n}" if ties_to_first else f"goofspiel_{n}"


def oshi_zumo_name(coins: int, size: int, horizon: int, min_bid: int) -> str:
    return f"oshi_zumo_c{coins}_s{size}_h{horizon}_m{min_bid}"


def goofspiel_kif(n: int, ties_to_first: bool = False) -> str:
    """Goofspiel with N cards, prizes N..1, a tie discarding the prize (or giving it to
    p0 when ``ties_to_first``); the higher total wins (100 / 50 / 0)."""
    if not 1 <= n <= 30:
        raise ValueError(f"goofspiel: N must be 1..30, not {n}")
    prizes = ", ".join(map(str, range(n, 0, -1))) if n <= 4 else f"{n}, {n - 1}, ..., 1"
    tie = "the first role (p0) takes the prize" if ties_to_first else "the prize is discarded"
    lines = [
        f";;; Goofspiel, N = {n}: written by gdl/bench/games.py (do not edit by hand).",
        f";;; Cards 1..{n} per role, prizes {prizes} in that order. Both roles bid",
        f";;; an unused card at once; the higher bid takes the prize; on a tie {tie}.",
        ";;; The higher total wins: goals 100 / 0, 50 / 50 on equal totals.",
        ";;; State: the unused cards, the prize (= cards left per role) and the score",
        ";;; difference p0 - p1, clamped to +-(prizes to come + 1) since past that its sign",
        ";;; cannot change (exact; merges the decided states).",
        "(role p0)", "(role p1)",
        *(f"(init (hand {role} {card}))" for role in ("p0", "p1") for card in range(1, n + 1)),
        f"(init (prize {n}))", "(init (diff 0))",
        "(<= (legal ?r (bid ?c)) (true (hand ?r ?c)))",
        "(<= (next (hand ?r ?c)) (true (hand ?r ?c)) (does ?r (bid ?b)) (distinct ?c ?b))",
        "(<= (next (prize ?q)) (true (prize ?p)) (succ ?q ?p))",
        "(<= (next (diff ?e)) (true (diff ?d)) (true (prize ?p))",
        "    (does p0 (bid ?a)) (does p1 (bid ?b)) (taker ?a ?b ?w) (score ?p ?w ?d ?e))",
        "(<= terminal (true (prize 0)))",
        *_sign_goals("(true (diff {}))"),
        *(f"(succ {k} {k + 1})" for k in range(n)),
    ]
    for a in range(1, n + 1):
        for b in range(1, n + 1):
            taker = "p0" if a > b or (a == b and ties_to_first) else "p1" if b > a else "none"
            lines.append(f"(taker {a} {b} {taker})")
    for prize in range(n, 0, -1):
        # the differences that reach this round: the prizes awarded, within the clamp
        before = min(_clamp_bound(prize), sum(range(prize + 1, n + 1)))
        after = _clamp_bound(prize - 1)
        for d in range(-before, before + 1):
            for taker, gain in (("p0", prize), ("p1", -prize), ("none", 0)):
                e = max(-after, min(after, d + gain))
                lines.append(f"(score {prize} {taker} {number(d)} {number(e)})")
    lines += [f"(positive {number(d)})" for d in range(1, _clamp_bound(n) + 1)]
    lines += [f"(negative {number(-d)})" for d in range(1, _clamp_bound(n) + 1)]
    return "\n".join(lines) + "\n"


def _clamp_bound(prizes_left: int) -> int:
    """The largest |difference| kept when the prizes 1..prizes_left are still to come."""
    return prizes_left * (prizes_left + 1) // 2 + 1


def _sign_goals(literal: str) -> Iterator[str]:
    """Goals from the sign of the number in ``literal`` (a pattern with ``{}``):
    positive wins for p0, negative for p1, zero is a draw."""
    for role, win, loss in (("p0", 100, 0), ("p1", 0, 100)):
        yield f"(<= (goal {role} {win}) {literal.format('?d')} (positive ?d))"
        yield f"(<= (goal {role} 50) {literal.format(0)})"
        yield f"(<= (goal {role} {loss}) {literal.format('?d')} (negative ?d))"


def oshi_zumo_kif(coins: int, size: int, horizon: int, min_bid: int = 0) -> str:
    """OpenSpiel's ``oshi_zumo`` (alesia false) with these parameters (module docstring)."""
    if not (1 <= coins <= 50 and 1 <= size <= 10 and 1 <= horizon <= 200
            and 0 <= min_bid <= coins):
        raise ValueError("oshi_zumo: need 1 <= coins <= 50, 1 <= size <= 10, "
                         "1 <= horizon <= 200, 0 <= min_bid <= coins")
    centre, edge = size + 1, 2 * size + 2
    lines = [
        f";;; Oshi-Zumo (OpenSpiel oshi_zumo: coins={coins}, size={size}, horizon={horizon},",
        f";;; min_bid={min_bid}, alesia=false): written by gdl/bench/games.py.",
        f";;; Field 0..{edge}, wrestler at {centre}; each role bids {min_bid}..its coins (all",
        ";;; of them when it has fewer than min_bid); the higher bid pushes the wrestler one",
        ";;; step towards the other role's edge (p0 towards the high end), equal bids leave",
        ";;; it; bids are paid. Ends at the horizon, when the wrestler is off the field or",
        ";;; when both have no coins; the wrestler on p1's side (above the centre) wins for",
        ";;; p0: 100 / 0; in the middle 50 / 50 (OpenSpiel's returns +1 / -1 / 0).",
        "(role p0)", "(role p1)",
        f"(init (coins p0 {coins}))", f"(init (coins p1 {coins}))",
        f"(init (pos {centre}))",
        "(<= (legal ?r (bid ?b)) (true (coins ?r ?c)) (bid_allowed ?c ?b))",
        "(<= (next (coins ?r ?e)) (true (coins ?r ?c)) (does ?r (bid ?b)) (minus ?c ?b ?e))",
        "(<= (next (pos ?q)) (true (pos ?k)) (does p0 (bid ?a)) (does p1 (bid ?b))",
        "    (greater ?a ?b) (succ ?k ?q))",
        "(<= (next (pos ?q)) (true (pos ?k)) (does p0 (bid ?a)) (does p1 (bid ?b))",
        "    (greater ?b ?a) (succ ?q ?k))",
        "(<= (next (pos ?k)) (true (pos ?k)) (does p0 (bid ?a)) (does p1 (bid ?a)))",
        "(<= terminal (true (pos 0)))",
        f"(<= terminal (true (pos {edge})))",
        "(<= terminal (true (coins p0 0)) (true (coins p1 0)))",
        *_sign_goals("(side {})"),
        *(f"(<= (side {number(k - centre)}) (true (pos {k})))" for k in range(edge + 1)),
        *(f"(succ {k} {k + 1})" for k in range(max(horizon, edge))),
        *(f"(positive {number(d)})" for d in range(1, centre + 1)),
        *(f"(negative {number(-d)})" for d in range(1, centre + 1)),
    ]
    if min_bid == 0 or horizon < coins:
        lines += ["(init (step 0))", "(<= (next (step ?u)) (true (step ?t)) (succ ?t ?u))",
                  f"(<= terminal (true (step {horizon})))"]
    for c in range(coins + 1):
        bids = range(min_bid, c + 1) if c >= min_bid else (c,)
        lines += [f"(bid_allowed {c} {b})" for b in bids]
        lines += [f"(minus {c} {b} {c - b})" for b in bids]
    lines += [f"(greater {a} {b})" for a in range(coins + 1) for b in range(a)]
    return "\n".join(lines) + "\n"


def benchmark_files() -> Iterator[tuple[str, str]]:
    """(file name, GDL text) of every benchmark game written to games/gdl."""
    for n in GOOFSPIEL_SIZES:
        for ties in (False, True):
            yield f"{goofspiel_name(n, ties)}.kif", goofspiel_kif(n, ties)
    for params in OSHI_ZUMO:
        yield f"{oshi_zumo_name(*params)}.kif", oshi_zumo_kif(*params)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gdl.bench.games",
        description="Write the Goofspiel and Oshi-Zumo benchmark games as GDL files.")
    parser.add_argument("folder", help="where to write them (games/gdl)")
    folder = Path(parser.parse_args(list(argv)).folder)
    for name, text in benchmark_files():
        (folder / name).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
