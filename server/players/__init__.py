"""The players a match seats: built-ins, GGP HTTP players, websocket agents.

Each kind implements :class:`server.players.base.Player`; :func:`server.players.spec.parse_spec`
reads the command-line player specs and :func:`server.players.factory.make_player`
builds the player for a seat.
"""
