"""``ggp ratings [--db DB] [--game G] [--json] [--plot FILE.png]``: Bradley-Terry ratings
of the players in a match database, per game and overall, with a head-to-head table
(:mod:`server.ratings`; ``docs/ratings.md``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from server.commandline import DEFAULT_DB
from server.plots import ratings_plot
from server.ratings import records_ratings
from server.records import Records
from solvers.errors import GameError
from solvers.files import prepare_output


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ggp ratings", description="Bradley-Terry ratings with 95% confidence "
        "intervals over the finished matches of a match database, per game and overall, "
        "and a head-to-head table.")
    parser.add_argument("--db", default=DEFAULT_DB,
                        help=f"match database (default {DEFAULT_DB})")
    parser.add_argument("--game", default=None, help="only this game's matches (its name)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--plot", metavar="FILE.png",
                        help="draw the ratings with their intervals as a PNG")
    return parser


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if not Path(args.db).is_file():
        raise GameError(f"{args.db}: no match database here (use --db FILE)")
    plot = prepare_output(args.plot, "--plot") if args.plot else None
    records = Records(args.db)
    try:
        report = records_ratings(records, args.game)
    finally:
        records.close()
    if not report["groups"]:
        raise GameError(f"{args.db}: {report['message']}")
    print(json.dumps(report) if args.json else report_text(report))
    if plot is not None:
        ratings_plot(plot, report)
    return 0


def report_text(report: dict[str, Any]) -> str:
    lines = []
    for group in report["groups"]:
        players = group["players"]
        lines.append(f"{group['game']}: {len(players)} players, {group['matches']} matches "
                     f"({group['comparisons']} comparisons)"
                     + (", regularised (one virtual draw each: someone won or lost every "
                        "comparison)" if group["regularised"] else ""))
        table = [("player", "rating", "95% CI", "score", "matches")]
        table += [(p["player"], f"{p['rating']:.0f}",
                   f"[{p['ci95'][0]:.0f}, {p['ci95'][1]:.0f}]", f"{p['score']:.3f}",
                   str(p["matches"])) for p in players]
        lines += _columns(table, right=(1, 3, 4))
        lines.append("head to head (wins-draws-losses of the row's player against the "
                     "column's):")
        names = [p["player"] for p in players]
        cells = {(h["player"], h["opponent"]): f"{h['wins']}-{h['draws']}-{h['losses']}"
                 for h in group["head_to_head"]}
        grid = [("", *names)] + [(a, *(cells.get((a, b), "-") for b in names))
                                 for a in names]
        lines += _columns(grid, right=tuple(range(1, len(names) + 1)))
        lines.append("")
    lines.append(f"{report['finished']} finished matches; left out: {report['aborted']} "
                 f"aborted, {report['running']} running")
    lines.append(f"method: {report['method']}")
    return "\n".join(lines)


def _columns(rows: list[tuple[str, ...]], right: tuple[int, ...]) -> list[str]:
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    return ["  ".join(cell.rjust(w) if k in right else cell.ljust(w)
                      for k, (cell, w) in enumerate(zip(row, widths, strict=True))).rstrip()
            for row in rows]
