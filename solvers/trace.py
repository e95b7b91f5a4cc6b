"""Convergence traces of the solvers: recorded while they run, written as CSV (``--trace``)
and drawn as PNG (``--plot``).

Three kinds, one per solver family (columns in this order, ``docs/solve-json.md``):

* ``nash_conv`` (CFR family): ``iteration, seconds, nash_conv``; drawn log-log,
  NashConv against iterations;
* ``bounds`` (HSVI): ``seconds, iteration, lower, upper, gap``; lower and upper bound
  of the value at the initial belief against time;
* ``states`` (GDL expansion): ``seconds, states``; distinct states found against time.

A sample that repeats the previous one in every column but ``seconds`` (a budget check
that found no new state) adds no row, unless it is the run's last (its end). A trace holds at most :data:`MAX_ROWS` rows (plus the last) whatever the run's length:
when full it keeps every other row and from then on records every other sample (the
first and the last samples are always kept), so its size does not grow with the run.
"""

from __future__ import annotations

import argparse
import csv
from dataclasses import dataclass
from pathlib import Path

from solvers.errors import GameError
from solvers.files import prepare_output, read_text
from solvers.plotting import Line, line_figure

MAX_ROWS = 1000


@dataclass(frozen=True)
class TraceKind:
    columns: tuple[str, ...]
    x: str
    ys: tuple[str, ...]
    xlabel: str
    ylabel: str
    log: bool = False           # log-log axes
    band: bool = False          # shade between the two y series


KINDS = {
    "nash_conv": TraceKind(("iteration", "seconds", "nash_conv"), "iteration", ("nash_conv",),
                           "iterations", "NashConv of the average strategy", log=True),
    "bounds": TraceKind(("seconds", "iteration", "lower", "upper", "gap"), "seconds",
                        ("lower", "upper"), "seconds", "value at the initial belief",
                        band=True),
    "states": TraceKind(("seconds", "states"), "seconds", ("states",), "seconds",
                        "states expanded"),
}


class Trace:
    """The rows of one run (see the module docstring)."""

    def __init__(self, kind: str, title: str, max_rows: int = MAX_ROWS) -> None:
        self.kind = KINDS[kind]
        self.kind_name = kind
        self.title = title
        self.max_rows = max(2, max_rows)
        self.rows: list[tuple[float, ...]] = []
        self._stride = 1
        self._samples = 0
        self._latest: tuple[float, ...] | None = None   # the last sample, if skipped

    def add(self, *values: float) -> None:
        """One sample, in column order."""
        if len(values) != len(self.kind.columns):
            raise ValueError(f"a {self.kind_name} row has {len(self.kind.columns)} values")
        row = tuple(float(v) for v in values)
        if self._repeats(row):
            self._latest = row      # a row only if the run ends on it (its end time)
            return
        due = self._samples % self._stride == 0
        self._samples += 1
        self._latest = None if due else row
        if not due:
            return
        self.rows.append(row)
        if len(self.rows) > self.max_rows:
            final = self.rows[-1]
            self.rows = self.rows[:-1:2] + [final]
            self._stride *= 2

    def _repeats(self, row: tuple[float, ...]) -> bool:
        """``row`` equals the previous sample but for its time."""
        previous = self._latest or (self.rows[-1] if self.rows else None)
        if previous is None:
            return False
        timeless = [i for i, name in enumerate(self.kind.columns) if name != "seconds"]
        return all(row[i] == previous[i] for i in timeless)

    def finish(self) -> None:
        """Keep the latest sample (the run's end) if the stride skipped it."""
        if self._latest is not None:
            self.rows.append(self._latest)
            self._latest = None

    def column(self, name: str) -> list[float]:
        i = self.kind.columns.index(name)
        return [row[i] for row in self.rows]

    def write_csv(self, path: str | Path) -> None:
        try:
            with open(path, "w", encoding="utf-8", newline="") as out:
                writer = csv.writer(out)
                writer.writerow(self.kind.columns)
                # repr: the shortest text that reads back as the same float
                writer.writerows([[_number_text(v) for v in row] for row in self.rows])
        except OSError as exc:
            raise GameError(f"{path}: cannot write the trace: {exc.strerror or exc}") from None

    def plot(self, path: str | Path) -> list[Line]:
        """The PNG of the trace; returns the lines drawn (see :func:`line_figure`)."""
        kind = self.kind
        xs = self.column(kind.x)
        lines = [Line(name, xs, self.column(name)) for name in kind.ys]
        return line_figure(path, lines, title=self.title, xlabel=kind.xlabel,
                           ylabel=kind.ylabel, log_x=kind.log, log_y=kind.log,
                           band=kind.ys if kind.band else None)

    def save(self, trace_path: str | Path | None, plot_path: str | Path | None) -> None:
        """Write whichever of the CSV and the PNG was asked for (the run has ended)."""
        self.finish()
        if trace_path is not None:
            self.write_csv(trace_path)
        if plot_path is not None:
            self.plot(plot_path)


def _number_text(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


def read_trace(path: str | Path, title: str = "") -> Trace:
    """A trace written by :meth:`Trace.write_csv` (its kind follows from the header)."""
    rows = list(csv.reader(read_text(path).splitlines()))
    header = tuple(rows[0]) if rows else ()
    kind = next((name for name, k in KINDS.items() if k.columns == header), None)
    if kind is None:
        raise GameError(f"{path}:1: not a trace (header {', '.join(header) or 'missing'})")
    trace = Trace(kind, title, max_rows=len(rows) + 1)
    for number, row in enumerate(rows[1:], start=2):
        try:
            trace.rows.append(tuple(float(v) for v in row))
        except ValueError:
            raise GameError(f"{path}:{number}: not a row of numbers") from None
    return trace


@dataclass
class TraceOptions:
    """Where ``--trace`` and ``--plot`` write (each may be absent)."""

    trace: Path | None = None
    plot: Path | None = None

    @property
    def wanted(self) -> bool:
        return self.trace is not None or self.plot is not None


def trace_options(trace: str | None, plot: str | None) -> TraceOptions:
    """Check both output places before the work (:func:`solvers.files.prepare_output`)."""
    return TraceOptions(prepare_output(trace, "--trace") if trace else None,
                        prepare_output(plot, "--plot") if plot else None)


def add_trace_arguments(parser: argparse.ArgumentParser, series: str) -> None:
    """``--trace FILE.csv`` and ``--plot FILE.png`` of a solve command; ``series``
    says what they record."""
    parser.add_argument("--trace", metavar="FILE.csv",
                        help=f"write {series} as CSV (columns in docs/solve-json.md)")
    parser.add_argument("--plot", metavar="FILE.png", help=f"draw {series} as a PNG")
