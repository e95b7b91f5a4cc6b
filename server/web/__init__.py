"""The match server's web pages: HTML over the websocket's port, boards, static files."""
