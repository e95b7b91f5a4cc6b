"""``ggp bench thesis``: the thesis' Tables 4.1-4.3 measured again, with its numbers beside ours.

1. Table 4.1/4.2 (section 4.2.3): for ``a = 2, d = 1..4``, random games with 2..a
   actions and depth at most ``d``; our baseline on every game, and Gambit's LCP
   (pygambit ``lcp_solve`` on the same game written as ``.efg``, Definition 4.1.9) on
   the first ``--lcp-games`` of them, in a worker process with a per-game timeout
   (``--lcp-timeout``): a game past it counts as "> timeout", so medians and ratios
   involving it are lower bounds. Skipped when pygambit is not installed.
2. Table 4.3 (section 4.3.4): full games with exactly ``a`` actions, rows (2, 1..7)
   and (3, 1..5); IH and baseline on each game.
3. Every solution is certified (not timed); the targets of issue 3 are checked at
   the end: baseline >= 100x faster than LCP's median on (2,3) and (2,4); our
   baseline's and IH's means below the thesis' C++ means on every row of Table 4.3.

Times are solver CPU seconds (``time.process_time``, so other jobs on a shared
machine inflate them less than wall-clock time) on the game already in memory,
excluding generation, ``.efg`` reading and certification; the LCP timeout is wall-clock.
``--quick`` runs fewer games.
"""

from __future__ import annotations

import argparse
import json
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from statistics import mean, median

from solvers.simultaneous import baseline, certificate, interval_heuristic
from solvers.simultaneous.efg_export import efg_text, tree_size
from solvers.simultaneous.random_games import full_game, variable_game

# Table 4.1: (min SIM, min EFG, mean SIM, mean EFG, max SIM, max EFG)
THESIS_4_1 = {1: (2, 5, 4, 14, 5, 29), 2: (3, 8, 9, 33, 19, 78),
              3: (4, 9, 23, 87, 51, 203), 4: (5, 12, 44, 166, 117, 464)}
# Table 4.2: (mean BL, mean LEM, median BL, median LEM)
THESIS_4_2 = {1: (0.0001626, 0.039, 0.0000995, 0.01), 2: (0.00043396, 1.3767, 0.0002815, 0.19),
              3: (0.00105, 182.5423, 0.001, 11.93), 4: (0.002, 6180.6619, 0.002, 215.99)}
# Table 4.3: |H|, min IH, min BL, mean IH, mean BL, max IH, max BL
THESIS_4_3 = {
    (2, 1): (5, 0.000509, 0.000382, 0.0015443, 0.0013296, 0.005963, 0.008979),
    (2, 2): (21, 0.001188, 0.00199, 0.0029126, 0.00629, 0.015339, 0.013094),
    (2, 3): (85, 0.003222, 0.009599, 0.006555, 0.022944, 0.022267, 0.034232),
    (2, 4): (341, 0.01037, 0.065686, 0.014904, 0.091228, 0.032477, 0.12459),
    (2, 5): (1365, 0.036613, 0.28522, 0.04652, 0.37423, 0.078904, 0.45508),
    (2, 6): (5461, 0.074494, 0.69772, 0.11576, 1.006, 0.21397, 1.5966),
    (2, 7): (21845, 0.27043, 2.6918, 0.43457, 3.8134, 0.91563, 6.2575),
    (3, 1): (10, 0.000551, 0.000636, 0.0024934, 0.0025174, 0.010104, 0.009255),
    (3, 2): (91, 0.003562, 0.017587, 0.0078991, 0.03174, 0.018246, 0.048896),
    (3, 3): (820, 0.023331, 0.20434, 0.033523, 0.29627, 0.085498, 0.37996),
    (3, 4): (7381, 0.16045, 1.8315, 0.20789, 2.3332, 0.53461, 3.1056),
    (3, 5): (66430, 1.3939, 16.2054, 2.7884, 29.6404, 8.0111, 48.984),
}

_LCP_WORKER = """
import sys, time
import pygambit as gbt
for path in sys.argv[1:]:
    game = gbt.read_efg(path)
    start = time.process_time()
    gbt.nash.lcp_solve(game, rational=False)
    print(time.process_time() - start, flush=True)
"""


def _have_pygambit() -> bool:
    try:  # deferred: pygambit, the optional peer (compiles for minutes to install)
        import pygambit  # noqa: F401
    except ImportError:
        return False
    return True


def _pump(stream, lines: queue.Queue[str]) -> None:
    for line in stream:
        lines.put(line)


def lcp_times(paths: list[Path], timeout: float) -> list[float]:
    """Gambit LCP seconds per file; ``inf`` for a game past ``timeout`` (worker restarted)."""
    times: list[float] = []
    while len(times) < len(paths):
        rest = paths[len(times):]
        proc = subprocess.Popen([sys.executable, "-c", _LCP_WORKER, *map(str, rest)],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True).start()
        try:
            for k in range(len(rest)):
                # the first game also waits for the worker to import pygambit
                wait = timeout + (15.0 if k == 0 else 0.0)
                times.append(float(lines.get(timeout=wait)))
        except (queue.Empty, ValueError):
            times.append(float("inf"))
        finally:
            proc.kill()
            proc.wait()
    return times


def _fmt(x: float) -> str:
    return "timeout" if x == float("inf") else f"{x:.3g}"


def _stats(xs: list[float]) -> tuple[float, float, float, float]:
    return min(xs), median(xs), mean(xs), max(xs)


def _timed(solve, game):
    start = time.process_time()
    solution = solve(game)
    seconds = time.process_time() - start
    return seconds, certificate.check(game, solution)["ok"]


def table_4_2(games: int, lcp_games: int, lcp_timeout: float, seed: int, say,
              depths: tuple[int, ...] = (1, 2, 3, 4)) -> dict:
    use_gambit = lcp_games > 0 and _have_pygambit()
    say("\nTable 4.1: nodes of random games (a = 2, depth <= d), ours [thesis]")
    say(f"{'(a,d)':7} {'min SIM':>12} {'min EFG':>12} {'mean SIM':>14} {'mean EFG':>14} "
        f"{'max SIM':>12} {'max EFG':>12}")
    rows = {}
    for d in depths:
        batch = [variable_game(2, d, seed + k) for k in range(games)]
        sim = [g.num_nodes for g in batch]
        efg = [tree_size(g) for g in batch]
        t = THESIS_4_1[d]
        say(f"(2,{d})   {min(sim):>5} [{t[0]:>4}] {min(efg):>5} [{t[1]:>4}] {mean(sim):>7.1f} [{t[2]:>4}] "
            f"{mean(efg):>7.1f} [{t[3]:>4}] {max(sim):>5} [{t[4]:>4}] {max(efg):>5} [{t[5]:>4}]")
        rows[d] = batch
    say("\nTable 4.2: baseline (BL) vs Gambit's LCP (pygambit lcp_solve), seconds, ours [thesis]"
        + ("" if use_gambit else "  -- pygambit not installed: LCP skipped"))
    say(f"{'(a,d)':7} {'BL median':>20} {'BL mean':>20} {'LCP median':>20} {'LCP mean':>20} "
        f"{'LCP runs':>9} {'LCP/BL median':>14}")
    out = {}
    for d, batch in rows.items():
        timed = [_timed(baseline.solve, g) for g in batch]
        bl = [t for t, _ in timed]
        bad = sum(not ok for _, ok in timed)
        lcp: list[float] = []
        if use_gambit:
            with tempfile.TemporaryDirectory() as tmp:
                paths = []
                for k, g in enumerate(batch[:lcp_games]):
                    path = Path(tmp) / f"g{k}.efg"
                    path.write_text(efg_text(g, f"random a=2 d={d} seed={seed + k}"))
                    paths.append(path)
                lcp = lcp_times(paths, lcp_timeout)
        t = THESIS_4_2[d]
        _, bl_med, bl_mean, _ = _stats(bl)
        if lcp:
            lcp_med, lcp_mean = median(lcp), mean(lcp)
            timeouts = sum(x == float("inf") for x in lcp)
            finite = [x for x in lcp if x != float("inf")]
            mean_text = (f">={mean(finite + [lcp_timeout] * timeouts):.3g}" if timeouts else _fmt(lcp_mean))
            med_text = f">{lcp_timeout:g}" if lcp_med == float("inf") else _fmt(lcp_med)
            ratio = (lcp_timeout if lcp_med == float("inf") else lcp_med) / bl_med
            ratio_text = (">=" if timeouts else "") + f"{ratio:.0f}x"
            runs = f"{len(lcp) - timeouts}/{len(lcp)}"
        else:
            med_text = mean_text = ratio_text = runs = "-"
            ratio = None
        say(f"(2,{d})   {bl_med:>9.2e} [{t[2]:>8.2e}] {bl_mean:>9.2e} [{t[0]:>8.2e}] "
            f"{med_text:>9} [{t[3]:>8.3g}] {mean_text:>9} [{t[1]:>8.4g}] {runs:>9} {ratio_text:>14}"
            + (f"  ({bad} certificates failed)" if bad else ""))
        out[d] = {"bl_median": bl_med, "bl_mean": bl_mean, "ratio": ratio,
                  "lcp": [None if x == float("inf") else x for x in lcp],  # None: timeout
                  "certificate_failures": bad}
    return out


TABLE_4_3_ROWS = [(2, d) for d in range(1, 8)] + [(3, d) for d in range(1, 6)]


def table_4_3(games: int, quick: bool, seed: int, say,
              rows: list[tuple[int, int]] = TABLE_4_3_ROWS) -> dict:
    say("\nTable 4.3: interval heuristic (IH) vs baseline (BL) on full games, seconds, ours [thesis C++]")
    say(f"{'(a,d)':7} {'|H|':>6} {'games':>5} {'min IH':>19} {'mean IH':>19} {'max IH':>19} "
        f"{'min BL':>19} {'mean BL':>19} {'max BL':>19} {'thesis/ours mean IH, BL':>24}")
    out = {}
    for a, d in rows:
        thesis = THESIS_4_3[(a, d)]
        count = games
        if quick and thesis[0] > 20_000:
            count = max(2, games // 4)
        ih, bl, bad = [], [], 0
        for k in range(count):
            g = full_game(a, d, seed + k)
            t_ih, ok_ih = _timed(interval_heuristic.solve, g)
            t_bl, ok_bl = _timed(baseline.solve, g)
            ih.append(t_ih)
            bl.append(t_bl)
            bad += (not ok_ih) + (not ok_bl)
        s_ih, s_bl = _stats(ih), _stats(bl)
        cells = [(s_ih[0], thesis[1]), (s_ih[2], thesis[3]), (s_ih[3], thesis[5]),
                 (s_bl[0], thesis[2]), (s_bl[2], thesis[4]), (s_bl[3], thesis[6])]
        text = " ".join(f"{ours:>8.2e} [{theirs:>8.2e}]" for ours, theirs in cells)
        say(f"({a},{d})   {thesis[0]:>6} {count:>5} {text} {thesis[3] / s_ih[2]:>10.1f}x {thesis[4] / s_bl[2]:>8.1f}x"
            + (f"  ({bad} certificates failed)" if bad else ""))
        out[f"{a},{d}"] = {"games": count, "ih": s_ih, "bl": s_bl, "thesis_mean_ih": thesis[3],
                           "thesis_mean_bl": thesis[4], "certificate_failures": bad}
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ggp bench thesis", description="The thesis' "
                                     "Tables 4.1-4.3 measured again, its numbers beside ours.")
    parser.add_argument("--quick", action="store_true", help="fewer games (10 per row, fewer LCP runs)")
    parser.add_argument("--games", type=int, help="games per row (default 100, quick 10)")
    parser.add_argument("--lcp-games", type=int, help="games per row given to Gambit (default 10, quick 4)")
    parser.add_argument("--lcp-timeout", type=float, help="seconds per LCP game (default 10, quick 2)")
    parser.add_argument("--seed", type=int, default=0, help="first seed (games use seed, seed+1, ...)")
    parser.add_argument("--json", metavar="OUT.json", help="also write the measurements as JSON")
    args = parser.parse_args(argv)
    games = args.games or (10 if args.quick else 100)
    lcp_games = args.lcp_games if args.lcp_games is not None else (4 if args.quick else 10)
    lcp_timeout = args.lcp_timeout or (2.0 if args.quick else 10.0)

    def say(line: str) -> None:
        print(line, flush=True)

    start = time.perf_counter()
    for a in (2, 3):  # warm up imports and caches (scipy, numpy.linalg, support pairs)
        baseline.solve(full_game(a, 2, 0))
        interval_heuristic.solve(full_game(a, 2, 0))
    t42 = table_4_2(games, lcp_games, lcp_timeout, args.seed, say)
    t43 = table_4_3(games, args.quick, args.seed, say)
    say("\nTargets (issue 3):")
    for d in (3, 4):
        ratio = t42[d]["ratio"]
        verdict = "not measured (no pygambit)" if ratio is None else ("MET" if ratio >= 100 else "NOT MET")
        say(f"  baseline >= 100x faster than LCP median on (2,{d}): "
            f"{'-' if ratio is None else f'{ratio:.0f}x'} {verdict}")
    slow = [row for row, r in t43.items()
            if r["ih"][2] >= r["thesis_mean_ih"] or r["bl"][2] >= r["thesis_mean_bl"]]
    say("  IH and baseline means below the thesis' C++ means on every row of Table 4.3: "
        + ("MET" if not slow else f"NOT MET on {', '.join(slow)}"))
    failures = sum(r["certificate_failures"] for r in t42.values()) + \
        sum(r["certificate_failures"] for r in t43.values())
    say(f"  certificates: {'all ok' if failures == 0 else f'{failures} FAILED'}")
    say(f"(total {time.perf_counter() - start:.0f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps({"table_4_2": t42, "table_4_3": t43}, default=str))
    return 0 if failures == 0 else 1
