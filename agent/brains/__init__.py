"""The agent's brains: what plays one seat of one match inside the worker process.

``base`` (the one interface, :class:`~agent.brains.base.Brain`), ``options`` (what a
brain is given: ``BrainOptions``, ``GameSpec``), ``factory`` (``make_brain``: which
brain a match gets), ``gdl`` (GDL; with ``gdl_exact``, its exact table, and
``gdl_traps``, trap values), ``gdl2`` (GDL-II), ``switching`` (a GDL game whose
manager may speak GDL-II), ``playable`` (``.efg``, tree format, POSG), ``moves``
(moves from strategies and search results). Nothing is imported here: the agent
process needs ``options`` only.
"""
