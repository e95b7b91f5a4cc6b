"""Imperfect-information (extensive-form) games: readers, array model, CFR family, LP.

Read a game with :func:`solvers.extensive.efg_format.read_efg` (Gambit ``.efg``) or
:func:`solvers.extensive.tree_format.read_tree` (the node/infoset text format); both
return a :class:`solvers.extensive.model.ExtensiveGame`. See ``docs/extensive.md``.
"""
