"""Bimatrix games (thesis chapter 2): pure equilibria, maximin LP, MIP Nash, small exact paths.

``solve_matrix(u0, u1, selection)`` and ``solve_batch`` (:mod:`.equilibrium`) are the
entry points; :mod:`.selection` documents the equilibrium-selection rules.
"""

from solvers.matrix.equilibrium import MatrixSolutions, deviation_gain, solve_batch, solve_matrix
from solvers.matrix.pure import pure_equilibria
from solvers.matrix.selection import SELECTIONS

__all__ = ["SELECTIONS", "MatrixSolutions", "deviation_gain", "pure_equilibria",
           "solve_batch", "solve_matrix"]
