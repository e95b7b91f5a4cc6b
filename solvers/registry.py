"""Every solver, by the model it solves: the one list that ``--solver`` choices, help
texts and lists of names read.

Models (the arrays a solver takes; docs/architecture.md):

- ``simultaneous``: two-player games with simultaneous moves, per entry
  (:class:`~solvers.simultaneous.model.SimultaneousGame`) or on the compact state DAG
  (:class:`~solvers.simultaneous.dag.StateDag`, the scale path);
- ``extensive``: extensive-form games with information sets
  (:class:`~solvers.extensive.model.ExtensiveGame`);
- ``posg``: one-sided partially observable stochastic games
  (:class:`~solvers.posg.model.PosgModel`);
- ``puzzle``: one-player games on :class:`~solvers.nplayer.dag.JointDag`;
- ``nplayer``: games of any number of players (three or more in ``ggp solve``) on the
  n-player compact DAG (:class:`~solvers.nplayer.dag.JointDag`).

A :class:`Model` names the independent check of its solutions (the certificate). A
:class:`Solver` has a name unique over all models, a one-line summary for ``--help``,
and its entry points, with the model's common signature:

- simultaneous: ``solve(game, selection, progress, time_limit, max_nodes)`` on the
  per-entry model, and ``solve_dag(dag, selection, progress, time_limit, memory_mb)``
  natively on the DAG (None: the DAG is converted to the per-entry model and back);
- extensive: ``make(game, seed, sampling)``, an iterative solver (``iterate(n)``,
  ``average_strategy()``) that :func:`solvers.extensive.solve.solve` runs within its
  budgets; None for an exact solver (the sequence-form LP);
- posg: HSVI, run by its own front end;
- puzzle: ``solve(dag, progress)`` on a one-player
  :class:`~solvers.nplayer.dag.JointDag`; the goal search runs over the GDL rules
  (:mod:`gdl.solving.puzzle_search`), so it has no entry point here;
- nplayer: ``solve_dag(dag, selection, progress, time_limit, memory_mb, where)`` ->
  :class:`~solvers.nplayer.dag.JointSolution` (``where(state)`` names a state in messages).

Adding a solver: its module, one entry in :data:`SOLVERS`, and tests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from solvers.errors import GameError
from solvers.extensive.cfr import CFR
from solvers.extensive.cfr_plus import CFRPlus
from solvers.extensive.discounted_cfr import DiscountedCFR
from solvers.extensive.exploitability import nash_conv
from solvers.extensive.mccfr import ChanceSamplingCFR, OutcomeSamplingMCCFR
from solvers.nplayer import certificate as nplayer_certificate
from solvers.nplayer import induction, puzzle, puzzle_certificate
from solvers.simultaneous import (
    baseline,
    certificate,
    dag_baseline,
    dag_certificate,
    dag_ih,
    doab,
    interval_heuristic,
)

SIMULTANEOUS = "simultaneous"
EXTENSIVE = "extensive"
POSG = "posg"
PUZZLE = "puzzle"
NPLAYER = "nplayer"


@dataclass(frozen=True)
class Model:
    """A game model the solvers take, and the check of its solutions."""

    name: str
    summary: str
    certify: Callable[..., Any] | None = None          # (game, solution) -> certificate
    certify_dag: Callable[..., Any] | None = None      # simultaneous: on the state DAG


@dataclass(frozen=True)
class Solver:
    """One solver (see the module docstring for the entry points of each model)."""

    name: str
    model: str
    summary: str
    solve: Callable[..., Any] | None = None
    solve_dag: Callable[..., Any] | None = None
    make: Callable[..., Any] | None = None


MODELS: dict[str, Model] = {m.name: m for m in (
    Model(SIMULTANEOUS, "two-player games with simultaneous moves (a joint move a step)",
          certify=certificate.check, certify_dag=dag_certificate.check),
    Model(EXTENSIVE, "extensive-form games with information sets (imperfect information)",
          certify=nash_conv),
    Model(POSG, "one-sided partially observable stochastic games (HSVI bounds)"),
    Model(PUZZLE, "one-player games (puzzles), with or without chance, on the n-player "
          "state DAG", certify=puzzle_certificate.check),
    Model(NPLAYER, "games of three or more players (a joint move a step, turn-based or "
          "simultaneous)", certify_dag=nplayer_certificate.check),
)}

SOLVERS: dict[str, Solver] = {s.name: s for s in (
    Solver("baseline", SIMULTANEOUS,
           "backward induction: a subgame-perfect equilibrium at every node (thesis Alg. 5)",
           solve=baseline.solve, solve_dag=dag_baseline.solve),
    Solver("ih", SIMULTANEOUS,
           "the interval heuristic: a partial behavioural strategy that is part of a "
           "subgame-perfect equilibrium (thesis Alg. 6-9)",
           solve=interval_heuristic.solve, solve_dag=dag_ih.solve),
    Solver("doab", SIMULTANEOUS,
           "DOαβ: double oracle with serialized alpha-beta bounds (constant-sum games)",
           solve=doab.solve),
    Solver("biab", SIMULTANEOUS,
           "BIαβ: backward induction pruned by serialized alpha-beta bounds (constant-sum)",
           solve=doab.solve_biab),
    Solver("cfr", EXTENSIVE, "counterfactual regret minimisation",
           make=lambda game, seed, sampling: CFR(game)),
    Solver("cfr+", EXTENSIVE, "CFR+ (regret floors at zero, linear averaging)",
           make=lambda game, seed, sampling: CFRPlus(game)),
    Solver("dcfr", EXTENSIVE, "discounted CFR",
           make=lambda game, seed, sampling: DiscountedCFR(game)),
    Solver("mccfr", EXTENSIVE, "Monte Carlo CFR (chance or outcome sampling)",
           make=lambda game, seed, sampling: (OutcomeSamplingMCCFR(game, seed=seed)
                                              if sampling == "outcome"
                                              else ChanceSamplingCFR(game, seed=seed))),
    Solver("lp", EXTENSIVE, "the sequence-form linear program (exact; two-player "
           "constant-sum)"),
    Solver("hsvi", POSG, "heuristic search value iteration: lower and upper value bounds"),
    Solver("plan", PUZZLE, "the whole game expanded and solved exactly: the highest goal "
           "(expected, with chance), then the fewest steps", solve=puzzle.solve),
    Solver("goal-search", PUZZLE, "depth-first search over the rules that stops at a plan "
           "reaching the highest goal the rules give (proved); for puzzles too big to "
           "expand, without chance"),
    Solver("spe", NPLAYER,
           "backward induction: a subgame-perfect equilibrium, pure where a stage game has "
           "one (tie rule --selection first|welfare), else mixed from pygambit",
           solve_dag=induction.solve),
)}


def names(model: str) -> tuple[str, ...]:
    """The solvers of ``model``, in the registry's order."""
    return tuple(name for name, solver in SOLVERS.items() if solver.model == model)


def solver(name: str, model: str | None = None) -> Solver:
    """The solver called ``name`` (of ``model``, when given); GameError naming the known ones."""
    found = SOLVERS.get(name)
    if found is None or (model is not None and found.model != model):
        known = names(model) if model is not None else tuple(SOLVERS)
        where = f" for {model} games" if model is not None else ""
        raise GameError(f"unknown solver {name!r}{where} (one of {', '.join(known)})")
    return found


def model_of(name: str) -> str | None:
    """The model the solver ``name`` takes, or None for an unknown name."""
    found = SOLVERS.get(name)
    return None if found is None else found.model


def solver_help(model: str, default: str) -> str:
    """The ``--solver`` help of ``model``'s solvers: each name with its summary."""
    return "; ".join(f"{s.name}: {s.summary}" for s in SOLVERS.values() if s.model == model) \
        + f" (default {default})"
