"""The websocket match server: matches, tournaments and records between agents.

``protocol`` (the websocket protocol, sans I/O; ``PROTOCOL.md``), ``ggp_http`` (the GGP
HTTP protocol a manager speaks, sans I/O), ``app`` (the server), ``match`` (one match as
a GGP manager runs it), ``players`` (built-ins, HTTP, websocket and launched agents),
``records`` (SQLite), ``tournament``, ``cli`` (``ggp serve|match|tournament|matches``),
``bench`` (``ggp bench server``). User documentation: ``docs/server.md``.
"""
