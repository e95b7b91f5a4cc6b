"""Where the project's own files and the shared test data live, for benches and tools.

``REPO`` is the source tree (a benchmark runs from a checkout); ``SHARED`` is the
folder of test data and peers beside it (``../shared``), which may be absent;
``GAMES`` holds the bundled game files.
"""

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
GAMES = REPO / "games"
CORPUS = SHARED / "gdl-corpus" / "repository"
