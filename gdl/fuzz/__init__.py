"""Mutation fuzzing of every input the project reads from others (``ggp bench fuzz``).

- :mod:`gdl.fuzz.mutate`: the one mutation core (game texts, JSON messages, HTTP
  requests);
- :mod:`gdl.fuzz.tally`: a format's outcomes (:class:`~gdl.fuzz.tally.Tally`), how one
  input is classified, and :class:`~gdl.fuzz.tally.Target`, one fuzzed input;
- :mod:`gdl.fuzz.files`: the game file formats (kif, efg, tree, osposg) through the one
  loader, :func:`gdl.formats.load_game_text`.

Each package fuzzes what it serves: the match server's websocket protocol is
``server.bench.fuzz``, the agent's GGP HTTP endpoint ``agent.bench.fuzz``. The runner,
:mod:`gdl.bench.fuzz`, takes the targets it is given; ``ggp_cli`` composes all six
(gdl imports neither package).
"""
